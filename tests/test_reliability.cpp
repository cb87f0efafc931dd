// Issue 11's contract, input class by input class: every hostile input either answers (finite, quickly,
// in bounded memory) or is refused with one line naming the option and value, exit 1. Each case is one
// the issue reports; speed is measured in bench/mesh_sim_bench.cpp, not asserted here.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_run.hpp"
#include "scaling/base/format.hpp"
#include "scaling/model/presets.hpp"
#include "scaling/notation/sharding.hpp"
#include "scaling/sim/mesh_sim.hpp"

using namespace testing;

namespace {
nlohmann::json json_of(const std::string& args) {
  const auto r = run(args + " --json");
  REQUIRE_MESSAGE(r.exit_code == 0, args << ": " << r.err);
  return nlohmann::json::parse(r.out);
}

// The longest run of digits in a text: a number printed in full has hundreds.
size_t longest_digit_run(const std::string& text) {
  size_t longest = 0, run = 0;
  for (const char c : text) {
    run = (c >= '0' && c <= '9') ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  return longest;
}

std::filesystem::path temp_file(const std::string& name, const std::string& text) {
  const auto p = std::filesystem::temp_directory_path() / (name + "_" + std::to_string(::getpid()));
  std::ofstream(p, std::ios::binary) << text;
  return p;
}
}  // namespace

TEST_CASE("count-only simulation of large rings answers, with the closed-form counts") {
  // AllGather on an even bidirectional ring of n: ⌊n/2⌋ steps; every directed link carries (n − 1)/2
  // shards (the antipode's shard arrives half from each side).
  for (const double n : {20000.0, 30000.0, 100000.0}) {
    const auto j = json_of("simulate --op all-gather --devices " + scaling::format_whole(n) + " --direction bi --elements " +
                           scaling::format_whole(2 * n) + " --count-only");
    CHECK(j["steps"] == n / 2);
    CHECK(j["max_link_elements"].get<double>() == (n - 1) / 2 * 2);
    CHECK(j["total_link_elements"].get<double>() == n * (n - 1) * 2);  // every shard reaches n − 1 devices
  }
  // AllToAll on a bidirectional ring of n = 1000 with blocks of b = 4: a link carries, one way, the
  // blocks of every pair at forward distance f < n/2 whose path crosses it (f pairs for each f), plus
  // the first halves of the n/2 antipodal pairs crossing it.
  const double n = 1000, b = 4;
  const auto a = json_of("simulate --op all-to-all --devices 1000 --direction bi --elements 4e6 --count-only");
  double shorter = 0;
  for (double f = 1; f < n / 2; ++f) shorter += f;
  CHECK(a["max_link_elements"].get<double>() == shorter * b + n / 2 * b / 2);
  CHECK(a["steps"] == n / 2);
}

TEST_CASE("data mode refuses sizes it cannot hold before building anything") {
  expect_rejected({{"simulate --op all-reduce --devices 7000 --direction bi --elements 7000", "count-only"},
                   {"simulate --op all-gather --devices 20000 --direction bi --elements 20000", "count-only"},
                   {"simulate --op all-to-all --devices 2000 --direction bi --elements 4e6", "count-only"},
                   {"simulate --op all-gather --devices 2000000 --direction bi --elements 2e6 --count-only", "--devices"}});
  CHECK_THROWS_WITH_AS(scaling::sim::simulate(scaling::sim::Topology{std::vector<int>(9, 2), std::vector<bool>(9, true)},
                                              {scaling::Collective::all_gather, {0}, 2}),
                       doctest::Contains("at most 8"), std::invalid_argument);
  // Axis sizes whose product overflows an int are refused, not wrapped around.
  CHECK_THROWS_WITH_AS(scaling::sim::simulate(scaling::sim::Topology{{100000, 100000}, {true, true}},
                                              {scaling::Collective::all_gather, {0}, 1e5, true}),
                       doctest::Contains("at most"), std::invalid_argument);
}

TEST_CASE("config files: not regular, too large, numbers beyond a double, sizes whose products overflow") {
  const auto dir = std::filesystem::temp_directory_path();
  const auto big = temp_file("config_big.json", std::string(2 << 20, ' '));
  const auto huge = temp_file("config_huge.json", R"({"model_type": "llama", "hidden_size": 1e300, "intermediate_size": 8,
      "num_hidden_layers": 1, "num_attention_heads": 1, "vocab_size": 8})");
  const auto beyond = temp_file("config_beyond.json", R"({"model_type": "llama", "hidden_size": 1e400})");
  const auto product = temp_file("config_product.json", R"({"model_type": "llama", "hidden_size": 1e15,
      "intermediate_size": 1e15, "num_hidden_layers": 1000, "num_attention_heads": 1, "vocab_size": 1e15})");
  const auto bad_type = temp_file("config_type.json", "{\"model_type\": \"lla\\nma\"}");
  expect_rejected({{"params --config /dev/zero", "not a regular file"},
                   {"params --config " + dir.string(), "not a regular file"},
                   {"params --config " + big.string(), "larger than"},
                   {"params --config " + huge.string(), "hidden_size"},
                   {"params --config " + beyond.string(), "beyond the range of a double"},
                   {"params --config " + product.string(), "parameters"},
                   {"params --config " + bad_type.string(), "lla\\nma"}});
  for (const auto& p : {big, huge, beyond, product, bad_type}) std::filesystem::remove(p);
  CHECK_THROWS_AS(scaling::from_hf_config(R"({"model_type": "llama", "hidden_size": -1e400})"), std::invalid_argument);
}

TEST_CASE("overflowing products are refused naming the options and values") {
  // Every dimension is bounded by 2^53 and every hardware figure lies within [1e-12, 1e30] where it is
  // read (cli/limits.hpp), so a tiny figure is refused by its own option before any product is formed.
  expect_rejected({{"collective --chip tpu-v5e --slice 4x4 --op all-reduce --axes 0 --bytes 9e15 --ici-bw 1e-300",
                    "--ici-bw '1e-300': must be within [1e-12, 1e30]"},
                   {"shard --mesh X=2,Y=8 'A[I_X, J]' --shape 1e300,1e300", "--shape '1e300': must be at most"},
                   {"matmul --chip tpu-v5e --B 1e300 --D 1e300 --F 1", "--B '1e300': must be at most 9,007,199,254,740,991"},
                   {"matmul --chip tpu-v5e --B 9e15 --D 9e15 --F 9e15 --hbm-bw 1e-300",
                    "--hbm-bw '1e-300': must be within [1e-12, 1e30]"},
                   {"matmul --chip tpu-v5e --B 1 --D 1 --F 1 --hbm-bw 1e-320", "--hbm-bw '1e-320'"}});
  // At the edges of both ranges the products stay finite: the largest sizes over the smallest figure.
  for (const auto* edge : {"collective --chip tpu-v5e --slice 4x4 --op all-reduce --axes 0 --bytes 9e15 --ici-bw 1e-12 --json",
                           "matmul --chip tpu-v5e --B 9e15 --D 9e15 --F 9e15 --hbm-bw 1e-12 --flops 1e-12 --json",
                           "matmul --chip tpu-v5e --B 1 --D 1 --F 1 --hbm-bw 1e30 --flops 1e-12 --json"}) {
    const auto e = run(edge);
    CHECK_MESSAGE(e.exit_code == 0, edge);
    const auto doc = nlohmann::json::parse(e.out);
    for (const auto& [key, value] : doc.items())
      if (value.is_number()) CHECK_MESSAGE(std::isfinite(value.get<double>()), key);
  }
  // A large but finite answer prints in scientific form, never as hundreds of digits.
  const auto r = run("matmul --chip tpu-v5e --B 9e15 --D 1 --F 1");
  REQUIRE(r.exit_code == 0);
  CHECK(longest_digit_run(r.out) < 20);
  CHECK(r.out.find("bf16[9e15, 1]") != std::string::npos);
  const auto s = run("shard --mesh X=2 'A[I_X]' --shape 9e15");
  REQUIRE(s.exit_code == 0);
  CHECK(longest_digit_run(s.out) < 20);
  CHECK(scaling::format_quantity(1.6666e297, "s") == "1.67e297 s");
}

TEST_CASE("messages: out of range is said as such, empty values are named, control characters escaped") {
  expect_rejected({{"matmul --chip tpu-v5e --B 1e309 --D 1 --F 1", "--B '1e309': out of range"},
                   {"matmul --chip tpu-v5e --B 1e-400 --D 1 --F 1", "--B '1e-400': out of range"},
                   {"params --model ''", "--model '': empty value"},
                   {"matmul --chip '' --B 1 --D 1 --F 1", "--chip '': empty value"},
                   {"shard --mesh 'X=2\nY=4' 'A[I_X]' --shape 4", "X=2\\nY=4"},
                   {"shard --mesh X=2 'A[I_X,\tJ]' --shape 4,4", "\\t"},
                   {"matmul --chip 'tpu\nv5e' --B 1 --D 1 --F 1", "tpu\\nv5e"},
                   {"matmul --chip tpu-v5e --B '4\n4' --D 1 --F 1", "--B '4\\n4'"},
                   {"collective --chip tpu-v5e --slice 4x4 --op 'all\ngather' --axes 0 --bytes 1", "all\\ngather"}});
  const auto r = run("matmul --chip tpu-v5e --B 1 --D 1 --F 1 '--bo\ngus'");
  CHECK(r.exit_code == 2);
  CHECK(lines(r.err) == 1);
  // A value of 300 digits is quoted cut short.
  const auto long_value = run("matmul --chip tpu-v5e --B " + std::string(300, '9') + "x --D 1 --F 1");
  CHECK(long_value.exit_code == 1);
  CHECK(long_value.err.size() < 200);
}

TEST_CASE("a sharding with thousands of axes and dimensions is refused at once") {
  std::string mesh, dims;
  for (int i = 0; i < 5000; ++i) {
    if (i) {
      mesh += ',';
      dims += ',';
    }
    mesh.append("A").append(std::to_string(i)).append("=1");
    dims.append("D").append(std::to_string(i));
  }
  CHECK_THROWS_WITH_AS(scaling::parse_mesh(mesh), doctest::Contains("more than 16 axes"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(scaling::parse_sharding("A[" + dims + "]", scaling::parse_mesh("X=2")),
                       doctest::Contains("more than 64 dimensions"), std::invalid_argument);
}
