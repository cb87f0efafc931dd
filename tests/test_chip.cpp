// The hardware description: chip files in the `scaling chips --json` format, overrides of single figures,
// and the CLI options that carry them to every chip-taking subcommand.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "cli_run.hpp"
#include "scaling/cost/collectives.hpp"
#include "scaling/hardware/chip_file.hpp"
#include "scaling/hardware/system.hpp"
#include "scaling/hardware/topology.hpp"

using namespace scaling;

TEST_CASE("chip files: every preset's JSON reads back to the same chip") {
  for (const auto& preset : chips()) {
    INFO(preset.name);
    const Chip c = chip_from_json(chip_to_json(preset));
    CHECK(c.name == preset.name);
    CHECK(c.display == preset.display);
    CHECK(c.pod_shape == preset.pod_shape);
    CHECK(c.host_shape == preset.host_shape);
    CHECK(c.tensorcores_per_chip == preset.tensorcores_per_chip);
    CHECK(c.hbm_bytes == preset.hbm_bytes);
    CHECK(c.hbm_bytes_per_s == preset.hbm_bytes_per_s);
    CHECK(c.bf16_flops_per_s == preset.bf16_flops_per_s);
    CHECK(c.int8_flops_per_s == preset.int8_flops_per_s);
    CHECK(c.ici_oneway_bytes_per_s == preset.ici_oneway_bytes_per_s);
    CHECK(c.ici_bidi_bytes_per_s == preset.ici_bidi_bytes_per_s);
    CHECK(c.ici_hop_latency_s == preset.ici_hop_latency_s);
    CHECK(c.pcie_bytes_per_s == preset.pcie_bytes_per_s);
    CHECK(c.dcn_bytes_per_s_per_host == preset.dcn_bytes_per_s_per_host);
    CHECK(c.wrap_rule == preset.wrap_rule);
    CHECK(chip_to_json(c) == chip_to_json(preset));
  }
}

TEST_CASE("chip files: the wrap rule travels with the chip, not its name") {
  auto j = nlohmann::json::parse(chip_to_json(chip("tpu-v5p")));
  j["name"] = "my-cube-chip";
  const Chip mine = chip_from_json(j.dump());
  CHECK(make_slice(mine, {4, 4, 4}).wraps == std::vector<bool>{true, true, true});
  j["wraparound"] = "none";
  CHECK(make_slice(chip_from_json(j.dump()), {4, 4, 4}).wraps == std::vector<bool>{false, false, false});
}

TEST_CASE("chip files: every rejection names the field, one line") {
  const std::string ok = chip_to_json(chip("tpu-v5e"), -1);
  auto with = [&](const std::string& key, const nlohmann::json& value) {
    auto j = nlohmann::json::parse(ok);
    if (value.is_discarded()) j.erase(key);
    else j[key] = value;
    return j.dump();
  };
  const nlohmann::json erase(nlohmann::json::value_t::discarded);
  const std::vector<std::pair<std::string, std::string>> cases{
      {"{ not json", "not JSON"},
      {"[1]", "expected a JSON object"},
      {with("name", erase), "'name'"},
      {with("hbm_bytes", erase), "'hbm_bytes'"},
      {with("hbm_bytes", 0), "'hbm_bytes' = 0"},
      {with("hbm_bytes_per_s", -8.1e11), "'hbm_bytes_per_s'"},
      {with("bf16_flops_per_s", "fast"), "'bf16_flops_per_s': expected a number"},
      {with("int8_flops_per_s", 0), "'int8_flops_per_s'"},
      {with("pod_shape", nlohmann::json::array({16, 0})), "'pod_shape'"},
      {with("wraparound", "sometimes"), "'wraparound'"},
      {with("hbm_bandwidth", 1), "unknown field 'hbm_bandwidth'"},
      {with("ici_oneway_bytes_per_s", nullptr), "'ici_oneway_bytes_per_s'"},  // a TPU pod needs ICI
  };
  for (const auto& [text, named] : cases) {
    INFO(text);
    try {
      chip_from_json(text, "my.json");
      FAIL("accepted");
    } catch (const std::invalid_argument& e) {
      const std::string msg = e.what();
      CHECK(msg.find(named) != std::string::npos);
      CHECK(msg.find("my.json") == 0);
      CHECK(msg.find('\n') == std::string::npos);
    }
  }
  CHECK_THROWS_WITH_AS(load_chip_file("/nonexistent/chip.json"), doctest::Contains("no such file"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(load_chip_file("/dev/zero"), doctest::Contains("not a regular file"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(load_chip_file("/tmp"), doctest::Contains("not a regular file"), std::invalid_argument);
}

TEST_CASE("ICI: one figure in two units, so the cost model's link and the simulator's are one") {
  // Every TPU preset: the one-way figure the §2.3 table prints (typed into the preset on its own) is what
  // both the chip's link (ici_link, the cost model) and its System's axes (axis_link, the simulator) derive
  // from the bidirectional figure.
  int tpus = 0;
  for (const auto& c : chips()) {
    INFO(c.name);
    CHECK_NOTHROW(check_ici_figures(c));
    if (c.ici_oneway_bytes_per_s == 0) continue;
    ++tpus;
    const Link from_chip = ici_link(c);
    const System s = tpu_pods(c, {4, 4}, 1);
    for (int axis = 0; axis < 2; ++axis) {
      const Link from_system = axis_link(s, axis);
      CHECK(from_system.oneway_bytes_per_s == c.ici_oneway_bytes_per_s);
      CHECK(from_system.bidi_bytes_per_s == from_chip.bidi_bytes_per_s);
      CHECK(from_system.hop_latency_s == from_chip.hop_latency_s);
    }
    CHECK(from_chip.oneway_bytes_per_s == c.ici_oneway_bytes_per_s);
  }
  CHECK(tpus == 5);
  // A chip file that gives only the one-way figure gets the two-way one by the rule; one whose two figures
  // disagree (1.9e11 is not 2 × 9e10) is refused, naming the field, its value and the rule.
  auto j = nlohmann::json::parse(chip_to_json(chip("tpu-v5p"), -1));
  j.erase("ici_bidi_bytes_per_s");
  CHECK(chip_from_json(j.dump()).ici_bidi_bytes_per_s == 1.8e11);
  j["ici_bidi_bytes_per_s"] = 1.9e11;
  CHECK_THROWS_WITH_AS(chip_from_json(j.dump(), "odd.json"),
                       "odd.json: ici_bidi_bytes_per_s = 190,000,000,000: must be twice ici_oneway_bytes_per_s = "
                       "90,000,000,000, i.e. 180,000,000,000 (a link carries the same rate each way, §2.3)",
                       std::invalid_argument);
  // A hand-built Chip that breaks the rule reaches neither model.
  Chip odd = chip("tpu-v5e");
  odd.ici_bidi_bytes_per_s = 3 * odd.ici_oneway_bytes_per_s;
  CHECK_THROWS_WITH_AS(ici_link(odd), doctest::Contains("ici_bidi_bytes_per_s"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(tpu_pods(odd, {2, 2}, 1), doctest::Contains("ici_bidi_bytes_per_s"), std::invalid_argument);
  odd.ici_oneway_bytes_per_s = 0;
  CHECK_THROWS_WITH_AS(ici_link(odd), doctest::Contains("ici_oneway_bytes_per_s"), std::invalid_argument);
}

TEST_CASE("overrides replace single figures and say so") {
  ChipOverrides o;
  o.hbm_bytes_per_s = 8.2e11;
  o.ici_oneway_bytes_per_s = 5e10;
  const Chip c = with_overrides(chip("tpu-v5e"), o);
  CHECK(c.hbm_bytes_per_s == 8.2e11);
  CHECK(c.ici_oneway_bytes_per_s == 5e10);
  CHECK(c.ici_bidi_bytes_per_s == 1e11);
  CHECK(c.bf16_flops_per_s == chip("tpu-v5e").bf16_flops_per_s);
  CHECK(c.display.find("hbm_bytes_per_s") != std::string::npos);
  ChipOverrides bad;
  bad.bf16_flops_per_s = -1;
  CHECK_THROWS_WITH_AS(with_overrides(chip("tpu-v5e"), bad), doctest::Contains("bf16_flops_per_s"), std::invalid_argument);
}

TEST_CASE("scaling: --chip-file and overrides on a subcommand") {
  using namespace testing;
  const auto path = std::filesystem::temp_directory_path() / ("chip_" + std::to_string(::getpid()) + ".json");
  {
    auto j = nlohmann::json::parse(chip_to_json(chip("tpu-v5e")));
    j["name"] = "v5e-at-8.2e11";
    j["hbm_bytes_per_s"] = 8.2e11;
    std::ofstream(path) << j.dump();
  }
  // §1.1's v5e figure, two ways: a chip file and an override; the intensity is 1.97e14 / 8.2e11.
  for (const std::string& chip_args : {"--chip-file '" + path.string() + "'", std::string("--chip tpu-v5e --hbm-bw 8.2e11")}) {
    INFO(chip_args);
    const auto r = run("matmul " + chip_args + " --B 256 --D 8192 --F 8192 --json");
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    CHECK(nlohmann::json::parse(r.out)["chip_intensity"].get<double>() == 1.97e14 / 8.2e11);
  }
  std::filesystem::remove(path);
  expect_rejected({{"matmul --chip tpu-v5e --hbm-bw -1 --B 1 --D 1 --F 1", "--hbm-bw"},
                   {"matmul --chip tpu-v5e --flops zero --B 1 --D 1 --F 1", "--flops"},
                   {"matmul --chip-file /nonexistent.json --B 1 --D 1 --F 1", "/nonexistent.json"}});
  const auto neither = run("matmul --B 1 --D 1 --F 1");
  CHECK(neither.exit_code == 2);
  CHECK(neither.err.find("--chip") != std::string::npos);
  const auto listed = run("chips --json");
  REQUIRE(listed.exit_code == 0);
  CHECK(nlohmann::json::parse(listed.out).size() == chips().size());
}
