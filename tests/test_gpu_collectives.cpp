// Collectives on GPU clusters (§12): gpu_collective_cost and `scaling collective --chip h100 --nodes N`.
// The expected values are counted here another way: every block a GPU receives is enumerated pair by
// pair (which GPU sends what to whom over which tier), or taken from the book's worked answers and its
// node-egress form B / W_node — never by calling the model.
#include <doctest/doctest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "cli_run.hpp"
#include "scaling/cost/collectives.hpp"
#include "scaling/hardware/chip.hpp"
#include "scaling/hardware/system.hpp"

using namespace scaling;
using doctest::Approx;
using testing::run;

namespace {

// Bytes GPU 0 receives over NVLink and over InfiniBand in a ring / hierarchical stage, enumerated by
// ring steps: in a ring of k members each step hands every member one shard of size `shard`.
struct Received {
  double nvlink = 0, ib = 0;
  int nv_steps = 0, ib_steps = 0;
};

Received hierarchical(Collective op, int m, int g, double v) {
  Received r;
  const int passes = op == Collective::all_reduce ? 2 : 1;
  for (int pass = 0; pass < passes; ++pass) {
    // inside the node: a ring of g GPUs over the whole V, shards of V/g
    for (int step = 1; step < g; ++step) r.nvlink += v / g, ++r.nv_steps;
    // across nodes: GPU 0's ring with the GPU 0 of every other node over its V/g, shards of V/(g·m)
    for (int step = 1; step < m; ++step) r.ib += v / g / m, ++r.ib_steps;
  }
  return r;
}

// AllToAll: GPU 0 holds V/N and sends V/N² to every other GPU; count by destination (what GPU 0
// receives is the same by symmetry).
Received all_to_all(int m, int g, double v) {
  Received r;
  const double n = double(m) * g;
  for (int node = 0; node < m; ++node)
    for (int gpu = 0; gpu < g; ++gpu) {
      if (node == 0 && gpu == 0) continue;
      (node == 0 ? r.nvlink : r.ib) += v / (n * n);
    }
  return r;
}

nlohmann::json json(const std::string& args) {
  const auto r = run("collective " + args + " --json");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  return nlohmann::json::parse(r.out);
}

}  // namespace

TEST_CASE("gpu_collective_cost: ring in a node, hierarchical across nodes, by enumeration") {
  const Chip& h100 = chip("h100");
  const double w_nv = 450e9, w_ib = 50e9;  // §12: 18 NVLinks × 25 GB/s; 400 Gb/s NDR per GPU
  for (int m : {1, 2, 3, 16})
    for (int g : {1, 4, 8}) {
      const System s = gpu_cluster(h100, m, g);
      for (auto op : {Collective::all_gather, Collective::reduce_scatter, Collective::all_reduce}) {
        INFO("m = " << m << ", g = " << g << ", " << name(op));
        const double v = 3e9;
        const auto want = hierarchical(op, m, g, v);
        const auto got = gpu_collective_cost(op, s, v);
        CHECK(got.nvlink.bytes_per_gpu == Approx(want.nvlink));
        CHECK(got.infiniband.bytes_per_gpu == Approx(want.ib));
        CHECK(got.nvlink.steps == want.nv_steps);
        CHECK(got.infiniband.steps == want.ib_steps);
        CHECK(got.time_s == Approx(want.nvlink / w_nv + want.ib / w_ib));
        CHECK(got.infiniband.t_latency_s == 0);  // the presets carry no latency figure
      }
      INFO("all-to-all, m = " << m << ", g = " << g);
      const auto want = all_to_all(m, g, 3e9);
      const auto got = gpu_collective_cost(Collective::all_to_all, s, 3e9);
      CHECK(got.nvlink.bytes_per_gpu == Approx(want.nvlink));
      CHECK(got.infiniband.bytes_per_gpu == Approx(want.ib));
      CHECK(got.time_s == Approx(std::max(want.nvlink / w_nv, want.ib / w_ib)));
    }
}

TEST_CASE("gpu_collective_cost: the book's §12 answers and node-egress forms") {
  const System node = gpu_cluster(chip("h100"), 1);
  // §12 Pop Quiz 1: AllGather of bf16[1024, 16384] in an 8×H100 node, "more precisely 65us".
  CHECK(gpu_collective_cost(Collective::all_gather, node, 2.0 * 1024 * 16384).time_s == Approx(65e-6).epsilon(0.01));
  // §12 Quiz 2's node AllGather: 536e6 B in 1.04 ms.
  CHECK(gpu_collective_cost(Collective::all_gather, node, 536e6).time_s == Approx(1.04e-3).epsilon(0.01));
  // Across M nodes, the InfiniBand stage of an AllReduce is the book's B / W_node per pass with the ring's
  // (M − 1)/M, W_node = 400e9 (8 × 400 Gb/s per node).
  const int m = 32;
  const auto ar = gpu_collective_cost(Collective::all_reduce, gpu_cluster(chip("h100"), m), 1e9);
  CHECK(ar.infiniband.t_bandwidth_s == Approx(2 * 1e9 * (m - 1) / (m * 400e9)));
  // AllToAll over 2 nodes: §12's (M − 1) B / (M² W_node). (The book's "more than 4x" worse than one node
  // compares the rounded B / (M W_node) with B / (8 W_GPU); with the (M − 1)/M factors kept it is 2.6×.)
  const auto a2a = gpu_collective_cost(Collective::all_to_all, gpu_cluster(chip("h100"), 2), 1e9);
  CHECK(a2a.time_s == Approx(1e9 * 1 / (4 * 400e9)));
  CHECK(a2a.time_s / gpu_collective_cost(Collective::all_to_all, node, 1e9).time_s == Approx(2.57).epsilon(0.01));
}

TEST_CASE("gpu_collective_cost: latency per tier from the System, tree across nodes") {
  System s = gpu_cluster(chip("b200"), 16);
  s.fast[0].hop_latency_s = 1e-6;
  s.slow.latency_s = 5e-6;
  const double v = 1e5;  // small: latency-bound
  const auto ring = gpu_collective_cost(Collective::all_reduce, s, v, CollectiveAlgorithm::ring);
  const auto tree = gpu_collective_cost(Collective::all_reduce, s, v, CollectiveAlgorithm::tree);
  CHECK(ring.nvlink.t_latency_s == Approx(2 * 7 * 1e-6));
  CHECK(ring.infiniband.t_latency_s == Approx(2 * 15 * 5e-6));
  CHECK(tree.infiniband.t_latency_s == Approx(4 * 5e-6));  // log2 16 steps
  CHECK(tree.infiniband.t_bandwidth_s == Approx(ring.infiniband.t_bandwidth_s));  // §12: same bytes
  CHECK(ring.latency_bound);
  CHECK(tree.time_s == Approx(2 * 7 * 1e-6 + 4 * 5e-6));
  // 5 nodes: ⌈log2 5⌉ = 3 steps
  System five = gpu_cluster(chip("b200"), 5);
  five.slow.latency_s = 1e-5;
  CHECK(gpu_collective_cost(Collective::all_reduce, five, v, CollectiveAlgorithm::tree).infiniband.steps == 3);
  CHECK_THROWS_AS(gpu_collective_cost(Collective::all_gather, s, v, CollectiveAlgorithm::tree), std::invalid_argument);
  CHECK_THROWS_AS(gpu_collective_cost(Collective::all_reduce, gpu_cluster(chip("b200"), 1), v,
                                      CollectiveAlgorithm::tree),
                  std::invalid_argument);
  CHECK_THROWS_AS(gpu_collective_cost(Collective::all_reduce, tpu_pods(chip("tpu-v5e"), {4, 4}, 1), v),
                  std::invalid_argument);
  CHECK_THROWS_AS(gpu_collective_cost(Collective::all_reduce, s, 0), std::invalid_argument);
}

TEST_CASE("scaling collective on a GPU cluster: values") {
  // 4 H100 nodes, AllReduce of 1 GB: 2 · 7/8 · V over NVLink at 450e9, 2 · 3/4 · V/8 over InfiniBand at 50e9
  const auto a = json("--chip h100 --nodes 4 --op all-reduce --bytes 1e9");
  const double nv = 2 * 7.0 / 8 * 1e9 / 450e9, ib = 2 * 3.0 / 4 * 1e9 / 400e9;
  CHECK(a["time_s"].get<double>() == Approx(nv + ib));
  CHECK(a["nvlink_t_bandwidth_s"].get<double>() == Approx(nv));
  CHECK(a["infiniband_t_bandwidth_s"].get<double>() == Approx(ib));
  CHECK(a["gpus"] == 32);
  CHECK(a["nvlink_steps"] == 14);
  CHECK(a["infiniband_steps"] == 6);
  CHECK(a["algorithm"] == "ring");
  // --gpus-per-node 4 and overrides: ReduceScatter of 8e8 on 2 nodes of 4 at 1e11 / 1e10
  const auto b = json("--chip a100 --nodes 2 --gpus-per-node 4 --nvlink-bw 1e11 --ib-bw 1e10 "
                      "--op reduce-scatter --bytes 8e8");
  CHECK(b["time_s"].get<double>() == Approx(3.0 / 4 * 8e8 / 1e11 + 1.0 / 2 * 2e8 / 1e10));
  // tree across 8 nodes with a given InfiniBand latency: 3 steps instead of 14
  const auto t = json("--chip h100 --nodes 8 --op all-reduce --bytes 1e3 --algorithm tree --ib-latency 1e-5");
  CHECK(t["infiniband_steps"] == 3);
  CHECK(t["infiniband_t_latency_s"].get<double>() == Approx(3e-5));
  CHECK(t["latency_bound"] == true);
  CHECK(json("--chip h100 --nodes 8 --op all-reduce --bytes 1e3 --ib-latency 1e-5")["infiniband_steps"] == 14);
  // the table names the tiers by what they are
  const auto text = run("collective --chip h200 --nodes 2 --op all-gather --bytes 1e9");
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("NVLink") != std::string::npos);
  CHECK(text.out.find("InfiniBand") != std::string::npos);
  CHECK(text.out.find("ICI") == std::string::npos);
  CHECK(text.out.find("DCN") == std::string::npos);
}

TEST_CASE("scaling collective: GPU and TPU options refused by name") {
  testing::expect_rejected({
      {"collective --chip tpu-v5e --slice 4x4 --axes 0 --op all-gather --bytes 100 --nodes 2", "--nodes '2'"},
      {"collective --chip tpu-v5e --slice 4x4 --axes 0 --op all-gather --bytes 100 --gpus-per-node 4",
       "--gpus-per-node '4'"},
      {"collective --chip tpu-v5p --slice 4x4x4 --axes 0 --op all-reduce --bytes 100 --algorithm tree",
       "--algorithm 'tree'"},
      {"collective --chip tpu-v5e --slice 4x4 --axes 0 --op all-gather --bytes 100 --ib-latency 1e-5",
       "--ib-latency"},
      {"collective --chip h100 --nodes 2 --slice 4x4 --op all-gather --bytes 100", "--slice '4x4'"},
      {"collective --chip h100 --nodes 2 --axes 0 --op all-gather --bytes 100", "--axes '0'"},
      {"collective --chip h100 --nodes 2 --wrap yes --op all-gather --bytes 100", "--wrap 'yes'"},
      {"collective --chip h100 --nodes 2 --op all-gather --bytes 100 --algorithm tree", "--algorithm 'tree'"},
      {"collective --chip h100 --nodes 2 --op reduce-scatter --bytes 100 --algorithm tree", "--algorithm 'tree'"},
      {"collective --chip h100 --nodes 2 --op all-to-all --bytes 100 --algorithm tree", "--algorithm 'tree'"},
      {"collective --chip h100 --nodes 1 --op all-reduce --bytes 100 --algorithm tree", "--nodes 2 or more"},
      {"collective --chip h100 --nodes 2 --op all-reduce --bytes 100 --algorithm star", "--algorithm"},
      {"collective --chip h100 --nodes 0 --op all-reduce --bytes 100", "--nodes '0'"},
      {"collective --chip h100 --nodes 2 --gpus-per-node 0 --op all-reduce --bytes 100", "--gpus-per-node '0'"},
      {"collective --chip h100 --nodes 2 --op all-reduce --bytes 0", "--bytes '0'"},
      {"collective --chip h100 --nodes 2 --op all-reduce --bytes 100 --nvlink-latency -1", "--nvlink-latency"},
      {"collective --chip h100 --nodes 2 --op all-reduce --bytes 100 --ib-bw 0", "--ib-bw '0'"},
  });
  const auto missing = run("collective --chip h100 --op all-reduce --bytes 100");  // no --nodes
  CHECK(missing.exit_code == 2);
  CHECK(missing.err.find("--nodes") != std::string::npos);
  const auto no_slice = run("collective --chip tpu-v5e --axes 0 --op all-reduce --bytes 100");
  CHECK(no_slice.exit_code == 2);
  CHECK(no_slice.err.find("--slice") != std::string::npos);
}

TEST_CASE("scaling collective --sharp: in-network AllReduce, V / W in a node, plus V / W_node across nodes") {
  // §12.4.1: a SHARP AllReduce sends and receives the array once per GPU: 1 GB over 450e9 B/s; across 4
  // nodes each GPU's NIC also carries its node-reduced eighth once: 1 GB / (8 × 50e9).
  const auto one = json("--chip h100 --nodes 1 --op all-reduce --bytes 1e9 --sharp");
  CHECK(one["time_s"].get<double>() == Approx(1e9 / 450e9));
  CHECK(one["algorithm"] == "sharp");
  CHECK(one["algo_bytes_per_s"].get<double>() == Approx(450e9));
  const auto ring = json("--chip h100 --nodes 1 --op all-reduce --bytes 1e9");
  // The predicted gain of §12.4.1: 2·(8 − 1)/8 − 1 = 75%.
  CHECK(ring["time_s"].get<double>() / one["time_s"].get<double>() - 1 == Approx(0.75));
  const auto four = json("--chip h100 --nodes 4 --op all-reduce --bytes 1e9 --sharp");
  CHECK(four["time_s"].get<double>() == Approx(1e9 / 450e9 + 1e9 / 400e9));
  CHECK(four["infiniband_bytes_per_gpu"].get<double>() == Approx(1e9 / 8));
  for (const auto& [args, names] : std::vector<std::pair<std::string, std::string>>{
           {"collective --chip h100 --nodes 2 --op all-gather --bytes 100 --sharp", "--sharp"},
           {"collective --chip h100 --nodes 2 --op all-reduce --bytes 100 --sharp --algorithm tree", "--sharp"},
           {"collective --chip tpu-v5e --slice 4x4 --axes 0 --op all-reduce --bytes 100 --sharp", "--sharp"}}) {
    const auto r = run(args);
    INFO(args);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find(names) != std::string::npos);
  }
}

TEST_CASE("axis_link: one direction of one link from a System's per-axis figure") {
  // §2.3's table: a v5e ICI link carries 4.5e10 B/s each way, 9e10 both ways; a v5p 9e10 and 1.8e11.
  const auto v5e = axis_link(tpu_pods(chip("tpu-v5e"), {2, 4}, 1), 1);
  CHECK(v5e.oneway_bytes_per_s == Approx(4.5e10));
  CHECK(v5e.bidi_bytes_per_s == Approx(9e10));
  CHECK(v5e.hop_latency_s == Approx(1e-6));
  const auto v5p = axis_link(tpu_pods(chip("tpu-v5p"), {4, 4, 4}, 2), 2);
  CHECK(v5p.oneway_bytes_per_s == Approx(9e10));
  // An H100 node: each GPU's one port into the NVSwitch, 450 GB/s each way (NVIDIA's H100 SXM datasheet,
  // 900 GB/s total NVLink), is already a one-way figure.
  const auto nv = axis_link(gpu_cluster(chip("h100"), 2), 0);
  CHECK(nv.oneway_bytes_per_s == Approx(4.5e11));
  CHECK(nv.bidi_bytes_per_s == Approx(4.5e11));
  // An override moves the link with it: no second copy of the figure.
  auto s = tpu_pods(chip("tpu-v5e"), {4, 4}, 1);
  s.fast[0].bytes_per_s = 1e11;
  CHECK(axis_link(s, 0).oneway_bytes_per_s == Approx(5e10));
  CHECK_THROWS_AS(axis_link(s, 2), std::invalid_argument);
  CHECK_THROWS_AS(axis_link(s, -1), std::invalid_argument);
}
