// hardware/fat_tree.hpp and the GPU anatomy / node arithmetic of hardware/chip.hpp: hand-worked cases,
// invariants (full bisection at every size, ports within the radix), and refused input.
#include <doctest/doctest.h>

#include <stdexcept>

#include "scaling/hardware/chip.hpp"
#include "scaling/hardware/fat_tree.hpp"

using namespace scaling;

TEST_CASE("GPU anatomy: counts and rates by hand") {
  const auto& h100 = chip("h100");
  CHECK(cuda_cores(h100.anatomy) == 132 * 128);
  CHECK(tensor_cores(h100.anatomy) == 528);
  CHECK(register_bytes(h100.anatomy) == 132.0 * 256 * 1024);
  CHECK(cuda_core_flops_per_s(h100.anatomy, 1e9, 1) == 16896e9);
  CHECK(flops_per_tensor_core_cycle(528e9 * 1024, h100.anatomy, 1e9) == doctest::Approx(1024).epsilon(1e-12));
  // The preset's per-GPU NVLink figure is its links × per-link bandwidth, for every GPU preset.
  for (const char* name : {"a100", "h100", "h200", "b200"}) {
    const auto& c = chip(name);
    INFO(name);
    CHECK(c.node.links_per_gpu * c.node.link_bytes_per_s == c.nvlink_bytes_per_s);
    CHECK(c.anatomy.sms > 0);
    CHECK(!c.anatomy.source.empty());
    CHECK(!c.node.source.empty());
    // The switches have the ports for every GPU's links.
    CHECK(c.node.switches_per_node * c.node.ports_per_switch >= c.gpus_per_node * c.node.links_per_gpu);
  }
  CHECK(node_bisection_bytes_per_s(h100) == 8 * 450e9);
  CHECK(node_egress_bytes_per_s(h100) == 400e9);
  CHECK(node_egress_bytes_per_s(chip("b200"), 72) == 3.6e12);
}

TEST_CASE("GPU anatomy: a TPU has none, and bad rates are refused") {
  const auto& v5e = chip("tpu-v5e");
  CHECK_THROWS_WITH_AS(cuda_cores(v5e.anatomy), doctest::Contains("not a GPU"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(node_switch_bytes_per_s(v5e), doctest::Contains("tpu-v5e"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(node_egress_bytes_per_s(v5e), doctest::Contains("tpu-v5e"), std::invalid_argument);
  CHECK_THROWS_AS(cuda_core_flops_per_s(chip("h100").anatomy, 0, 1), std::invalid_argument);
  CHECK_THROWS_AS(flops_per_tensor_core_cycle(-1, chip("h100").anatomy, 1e9), std::invalid_argument);
}

TEST_CASE("fat tree: the reference 1024-GPU SuperPod") {
  const auto pod = dgx_superpod(chip("h100"), 4);
  REQUIRE(pod.levels.size() == 2);
  CHECK(gpus(pod) == 1024);
  CHECK(pod.levels[0].switches == 32);
  CHECK(pod.levels[1].switches == 16);
  CHECK(pod.cables_per_leaf_spine == 2);
  CHECK(all_switches(pod) == 560);
  CHECK(switch_bytes_per_s(pod, 1) == 16 * 64 * 50e9);
  CHECK(fat_tree_bytes_per_node(pod) == 400e9);
  CHECK(bisection_bytes_per_s(pod) == 128 * 400e9);
}

TEST_CASE("fat tree: full bisection and ports within the radix at every size") {
  for (int sus = 1; sus <= 16; ++sus) {
    INFO(sus);
    const auto t = dgx_superpod(chip("h100"), sus);
    CHECK(fat_tree_bytes_per_node(t) == node_egress_bytes_per_s(t));
    for (size_t i = 0; i < t.levels.size(); ++i) {
      CHECK(ports_used(t, i) <= t.radix);
      if (t.levels[i].up_ports > 0) CHECK(up_cable_bytes_per_s(t, i) == down_cable_bytes_per_s(t, i));
    }
    // Every NIC lands on a leaf port.
    CHECK(t.levels[0].switches * t.levels[0].down_ports == gpus(t));
  }
}

TEST_CASE("fat tree: refused input names the value") {
  CHECK_THROWS_WITH_AS(dgx_superpod(chip("h100"), 0), doctest::Contains("scalable units = 0"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(dgx_superpod(chip("tpu-v5p"), 4), doctest::Contains("tpu-v5p"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(dgx_superpod(chip("h100"), 4, 32, 63), doctest::Contains("radix = 63"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(dgx_superpod(chip("h100"), 4, 3), doctest::Contains("evenly"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(dgx_superpod(chip("h100"), 1000), doctest::Contains("three-level"), std::invalid_argument);
  CHECK_THROWS_AS(dgx_superpod(chip("h100"), 4, 32, 64, 0), std::invalid_argument);
  const auto pod = dgx_superpod(chip("h100"), 4);
  CHECK_THROWS_WITH_AS(switch_bytes_per_s(pod, 2), doctest::Contains("level 2"), std::invalid_argument);
}

#include <string>

#include "cli_run.hpp"

TEST_CASE("scaling chips: GPU rows show the anatomy, the node and the reference SuperPod") {
  const auto r = testing::run("chips");
  REQUIRE(r.exit_code == 0);
  // H100: 132 SMs, 16896 lanes, 528 Tensor Cores, 18 links of 25 GB/s, 4 switches, 3.6 TB/s bisection,
  // 400 GB/s of node egress; a 1024-GPU pod of 560 switches at 400 GB/s per node.
  const auto line = r.out.substr(r.out.rfind("\nh100 "), 200);
  for (const char* want : {" 132 ", " 16896 ", " 528 ", "18 × 25 GB/s", " 3.6 TB/s", " 400 GB/s", " 1024 ", " 560 "})
    CHECK_MESSAGE(line.find(want) != std::string::npos, want << " not in: " << line);
}

#include <nlohmann/json.hpp>

#include "scaling/hardware/chip_file.hpp"

TEST_CASE("chip files: a GPU's anatomy and NVLink node travel with it") {
  for (const char* name : {"a100", "h100", "b200", "tpu-v5e"}) {
    INFO(name);
    const auto& preset = chip(name);
    const Chip c = chip_from_json(chip_to_json(preset));
    CHECK(c.anatomy.sms == preset.anatomy.sms);
    CHECK(c.anatomy.fp32_cores_per_sm == preset.anatomy.fp32_cores_per_sm);
    CHECK(c.anatomy.boost_clock_hz == preset.anatomy.boost_clock_hz);
    CHECK(c.anatomy.l2_bytes == preset.anatomy.l2_bytes);
    CHECK(c.anatomy.source == preset.anatomy.source);
    CHECK(c.node.links_per_gpu == preset.node.links_per_gpu);
    CHECK(c.node.ports_per_switch == preset.node.ports_per_switch);
    CHECK(c.node.port_bytes_per_s == preset.node.port_bytes_per_s);
  }
  // A user's GPU file drives the SuperPod sizing like a preset.
  const Chip mine = chip_from_json(chip_to_json(chip("h100")));
  CHECK(all_switches(dgx_superpod(mine, 4)) == 560);
}

TEST_CASE("chip files: bad GPU figures are refused with the field named") {
  auto j = nlohmann::json::parse(chip_to_json(chip("h100")));
  auto bad = [&](const std::string& path, nlohmann::json value, const char* message) {
    auto k = j;
    const auto dot = path.find('.');
    k[path.substr(0, dot)][path.substr(dot + 1)] = value;
    CHECK_THROWS_WITH_AS(chip_from_json(k.dump()), doctest::Contains(message), std::invalid_argument);
  };
  bad("anatomy.sms", 132.5, "anatomy.sms");
  bad("anatomy.l2_bytes", -1, "l2_bytes");
  bad("anatomy.warp_size", 32, "unknown field 'anatomy.warp_size'");
  bad("nvlink_node.links_per_gpu", 1e9, "nvlink_node.links_per_gpu");
  bad("nvlink_node.port_bytes_per_s", "fast", "expected a number");
  auto k = j;
  k["anatomy"] = "H100";
  CHECK_THROWS_WITH_AS(chip_from_json(k.dump()), doctest::Contains("'anatomy': expected an object"),
                       std::invalid_argument);
  k = j;
  k["anatomy"].erase("sms");
  CHECK_THROWS_WITH_AS(chip_from_json(k.dump()), doctest::Contains("anatomy.sms"), std::invalid_argument);
}
