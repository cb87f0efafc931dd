// Independent checks of chapter 12's collectives and rooflines (parts B and C). Two directions, never the
// same code twice: where the chapter executed a collective on the switched tree (sim/switched_tree.hpp),
// the check counts the bytes by hand, block by block, from the GPU numbering; where the chapter used the
// closed forms of cost/collectives.hpp or cost/gpu_rooflines.hpp, the check executes the collective on the
// simulator, enumerates outcomes, or finds the crossing of T_math and T_comms by bisection on the two terms
// written out from the raw figures (990e12 FLOPs/s, 450e9 and 400e9 B/s).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>
#include <vector>

#include "registry.hpp"
#include "scaling/sim/switched_tree.hpp"

namespace {

constexpr double kC = 990e12, kWgpu = 450e9, kWnode = 400e9;

// The busiest link's bytes per byte of array on a tree of `degrees`: for an AllGather by multicast, the
// bytes entering a child of span S (GPUs 0..S−1) are the shards of every GPU outside it, counted one by one.
double gather_in_fraction(long span, long gpus, long y = 1) {
  // Y inner: GPU g belongs to X-group g mod Y; child = GPUs [0, span). A GPU in the child needs the
  // shards of its group's members outside the child; the child takes each such shard in once.
  std::set<long> groups_inside;
  for (long g = 0; g < span; ++g) groups_inside.insert(g % y);
  double shards = 0;
  for (long g = span; g < gpus; ++g)
    if (groups_inside.count(g % y)) shards += 1;
  return shards / gpus;  // each shard is 1/N of the whole array
}

// Time per byte of array for a multicast AllGather over the tree, from the hand counts above.
double gather_time_per_byte(const std::vector<long>& degrees, const std::vector<double>& w, long y = 1) {
  long gpus = 1;
  for (long d : degrees) gpus *= d;
  double t = 0;
  long span = 1;
  for (size_t l = 0; l < degrees.size(); ++l) {
    t = std::max(t, gather_in_fraction(span, gpus, y) / w[l]);
    span *= degrees[l];
  }
  return t;
}

// Executes the sharded AllGather on the simulator and returns its time per byte.
double sim_sharded_per_byte(int y) {
  const auto r = scaling::sim::run_tree({{8, 32}}, {scaling::sim::TreeOp::sharded_all_gather, 256, y});
  REQUIRE(r.correct);
  return scaling::sim::tree_time_s(r, 1.0 / 256, {kWgpu, kWnode});
}

// Bisection for the x where f changes sign (f increasing in x).
double crossing(const std::function<double(double)>& f, double lo, double hi) {
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (f(mid) > 0 ? hi : lo) = mid;
  }
  return 0.5 * (lo + hi);
}

// Expected distinct remote shards hit by k uniform picks among z (shard 0 local), by a Markov chain over
// the number of distinct shards seen so far.
double expected_remote_share(int k, int z) {
  std::vector<double> p(static_cast<size_t>(z) + 1, 0.0);  // p[d]: d distinct shards seen
  p[0] = 1;
  for (int t = 0; t < k; ++t) {
    std::vector<double> q(p.size(), 0.0);
    for (int d = 0; d <= z; ++d) {
      if (p[static_cast<size_t>(d)] == 0) continue;
      q[static_cast<size_t>(d)] += p[static_cast<size_t>(d)] * d / z;
      if (d < z) q[static_cast<size_t>(d) + 1] += p[static_cast<size_t>(d)] * (z - d) / double(z);
    }
    p = q;
  }
  double distinct = 0;
  for (int d = 0; d <= z; ++d) distinct += d * p[static_cast<size_t>(d)];
  // Each shard is equally likely to be among the distinct ones; the local one is not sent. Each sent
  // piece is 1/z of a token's dense traffic unit.
  return distinct * (z - 1) / z / z;
}

}  // namespace

// ---- Part B: collectives -------------------------------------------------------------------------

INDEPENDENT("ch12.intranode-alltoall.t_per_gb_h100_s", "blocks of 1/64 GB counted out of GPU 0 to its 7 peers", 1e-12) {
  double out = 0;
  for (int j = 1; j < 8; ++j) out += 1e9 / 64;
  return out / kWgpu;
}
INDEPENDENT("ch12.popquiz2-alltoall.t_dense_per_gb_s", "executed AllToAll on an 8-GPU switch", 1e-12) {
  const auto r = scaling::sim::run_tree({{8}}, {scaling::sim::TreeOp::all_to_all, 64});
  REQUIRE(r.correct);
  return 1e9 * scaling::sim::tree_time_s(r, 1.0 / 64, {kWgpu});
}
INDEPENDENT("ch12.popquiz2-alltoall.t_ragged_per_gb_s", "executed AllToAll, 4 of 8 blocks per row kept", 1e-12) {
  const auto r = scaling::sim::run_tree({{8}}, {scaling::sim::TreeOp::all_to_all, 64});
  return 1e9 * scaling::sim::tree_time_s(r, 1.0 / 64, {kWgpu}) * 4 / 8;
}
INDEPENDENT("ch12.popquiz2-alltoall.expected_factor_k4_z8", "all 8^4 outcomes of 4 picks enumerated", 1e-12) {
  double sum = 0;
  for (int a = 0; a < 8; ++a)
    for (int b = 0; b < 8; ++b)
      for (int c = 0; c < 8; ++c)
        for (int d = 0; d < 8; ++d) {
          std::set<int> remote{a, b, c, d};
          remote.erase(0);
          sum += remote.size() / 8.0;  // one 1/8 piece per distinct remote shard
        }
  return sum / 4096;
}
INDEPENDENT("ch12.ar-empirical.bus_bytes_per_s_model", "ring of 8: 14 steps of B/8 at 450e9, bus = 2·7/8·B/t", 1e-12) {
  const double b = 1e9, t = 14 * (b / 8) / kWgpu;
  return 2.0 * 7 / 8 * b / t;
}
INDEPENDENT("ch12.ar-empirical.bus_bytes_per_s_model_58mb", "the same ring at 58.7 MB", 1e-12) {
  const double b = 2 * 8192.0 * 3584, t = 14 * (b / 8) / kWgpu;
  return 2.0 * 7 / 8 * b / t;
}
INDEPENDENT("ch12.crossnode-ag.t_per_gb_su_exact_s", "shards from outside a node / GPU counted, 32 nodes of 8", 1e-12) {
  return 1e9 * gather_time_per_byte({8, 32}, {kWgpu, kWnode});
}
INDEPENDENT("ch12.tree-ag-bandwidth.pod_bytes_per_s", "shards from outside a GPU / node / unit counted, 1024 GPUs",
            1e-12) {
  return 1 / gather_time_per_byte({8, 32, 4}, {kWgpu, kWnode, 32 * kWnode});
}
INDEPENDENT("ch12.crossnode-alltoall.degradation_exact", "blocks counted: 7 of B/64 per GPU vs 64 of B/256 per node", 1e-12) {
  const double one = 7 * (1.0 / 64) / kWgpu;
  double node_out = 0, gpu_out = 0;
  for (int i = 0; i < 8; ++i)
    for (int j = 8; j < 16; ++j) node_out += 1.0 / 256;
  for (int j = 1; j < 16; ++j) gpu_out += 1.0 / 256;
  return std::max(node_out / kWnode, gpu_out / kWgpu) / one;
}
INDEPENDENT("ch12.sharded-reduction.t_y1_per_gb_s", "executed sharded AllGather, Y = 1, one unit", 1e-12) { return 1e9 * sim_sharded_per_byte(1); }
INDEPENDENT("ch12.sharded-reduction.t_y8_per_gb_s", "executed sharded AllGather, Y = 8, one unit", 1e-12) { return 1e9 * sim_sharded_per_byte(8); }
INDEPENDENT("ch12.sharded-reduction.t_y16_per_gb_s", "executed sharded AllGather, Y = 16, one unit", 1e-12) { return 1e9 * sim_sharded_per_byte(16); }
INDEPENDENT("ch12.sharded-reduction.t_y64_per_gb_s", "executed sharded AllGather, Y = 64, one unit", 1e-12) { return 1e9 * sim_sharded_per_byte(64); }
INDEPENDENT("ch12.sharded-reduction.t_precise", "shards of its X-groups counted into a GPU and a node, Y = 16, one unit",
            1e-12) {
  return 1e9 * std::max(gather_in_fraction(1, 256, 16) / kWgpu, gather_in_fraction(8, 256, 16) / kWnode);
}
INDEPENDENT("ch12.popquiz3-sharded-ag.t_y1_s", "executed, × 2DF", 1e-12) { return 2 * 8192.0 * 32768 * sim_sharded_per_byte(1); }
INDEPENDENT("ch12.popquiz3-sharded-ag.t_y8_s", "executed, × 2DF", 1e-12) { return 2 * 8192.0 * 32768 * sim_sharded_per_byte(8); }
INDEPENDENT("ch12.popquiz3-sharded-ag.t_y16_s", "executed, × 2DF", 1e-12) { return 2 * 8192.0 * 32768 * sim_sharded_per_byte(16); }
INDEPENDENT("ch12.popquiz3-sharded-ag.t_y64_s", "executed, × 2DF", 1e-12) { return 2 * 8192.0 * 32768 * sim_sharded_per_byte(64); }
INDEPENDENT("ex12.17.node_level_bytes_per_s_tree", "shards from the 15 other GPUs of 2 nodes into one GPU port", 1e-12) {
  return 1 / (gather_in_fraction(1, 16) / kWgpu);
}
INDEPENDENT("ch12.ragged-alltoall-approx.expected_z3", "all 3^4 outcomes enumerated", 1e-12) {
  double sum = 0;
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b)
      for (int c = 0; c < 3; ++c)
        for (int d = 0; d < 3; ++d) {
          std::set<int> remote{a, b, c, d};
          remote.erase(0);
          sum += remote.size() / 3.0;
        }
  return sum / 81;
}
INDEPENDENT("ch12.ragged-alltoall-approx.gap_z127", "approximation less the Markov-chain expectation", 1e-9) {
  return 4.0 / 127 * 126 / 127 - expected_remote_share(4, 127);
}

// ---- Part C: rooflines ---------------------------------------------------------------------------

INDEPENDENT("ch12.tp-roofline.y_max_in_node", "bisection on 4BDF/(YC) = 4BD/W_GPU", 1e-9) {
  const double b = 1e5, d = 8192, f = 28000;
  return crossing([&](double y) { return 4 * b * d / kWgpu - 4 * b * d * f / (y * kC); }, 1, 1000);
}
INDEPENDENT("ex12.19.tp_limit", "bisection on 4BDF/(YC) = 4BD/W_GPU at F = 28672", 1e-9) {
  const double b = 1e5, d = 8192, f = 28672;
  return crossing([&](double y) { return 4 * b * d / kWgpu - 4 * b * d * f / (y * kC); }, 1, 1000);
}
INDEPENDENT("ex12.18.flops_ratio", "B200 datasheet 2.25e15 over the chapter's 990e12", 1e-12) { return 2.25e15 / 990e12; }

namespace {
// Expert parallelism over z GPUs, k experts per token: the F where the two terms meet, by bisection.
double ep_crossing(double z, double k) {
  const double b = 1e6, d = 7168;
  auto gap = [&](double f) {
    const double math = 4 * b * k * d * f / (z * kC);
    const double comms = 4 * b * d * (z - 8) / (kWnode * z) * std::min(8 * k / z, 1.0);
    return math - comms;
  };
  return crossing(gap, 1, 1e7);
}
}  // namespace
INDEPENDENT("ch12.ep-roofline.min_f_z64_k8", "bisection on the EP terms, Z = 64, k = 8", 1e-9) { return ep_crossing(64, 8); }
INDEPENDENT("ch12.ep-roofline.min_f_z1024_k8", "bisection on the EP terms, Z = 1024, k = 8", 1e-9) { return ep_crossing(1024, 8); }
INDEPENDENT("ch12.ep-roofline.threshold_8_alpha", "bisection on the EP terms at Z = 1e7 (Z ≫ k)", 1e-5) { return ep_crossing(1e7, 8); }
INDEPENDENT("ch12.tldr.ep_threshold_f", "bisection on the EP terms at Z = 1e7", 1e-5) { return ep_crossing(1e7, 8); }

namespace {
// A GPipe-style forward schedule: at slot t stage s works on microbatch t − s and hands it to s + 1. The
// slots in which some hand-off happens, over the microbatch count.
double handoff_slots_over_mb(int mb, int stages) {
  std::set<int> slots;
  for (int s = 0; s + 1 < stages; ++s)
    for (int m = 0; m < mb; ++m) slots.insert(s + m);
  return double(slots.size()) / mb;
}
}  // namespace
INDEPENDENT("ch12.pp-comms.hop_factor_16_16", "hand-off slots of a 16 × 16 schedule counted", 1e-12) {
  return handoff_slots_over_mb(16, 16);
}
INDEPENDENT("ch12.pp-comms.stages_for_factor_1_5_at_16_mb", "smallest stage count whose schedule has 1.5 × 16 slots",
            1e-12) {
  for (int s = 2; s < 100; ++s)
    if (handoff_slots_over_mb(16, s) >= 1.5) return s;
  return -1;
}

INDEPENDENT("ch12.deepseek-v3-example.dp_critical_tokens_per_gpu",
            "bisection: 8kBDF/(2048·C) against a 2-node AllReduce of a node's 8/1024 of 2·2·E·D·F bytes", 1e-9) {
  const double e = 256, k = 8, d = 7168, f = 2048;
  const double node_bytes = 2 * 2 * e * d * f * 8 / 1024;
  const double comms = 2 * (2 - 1) / 2.0 * node_bytes / kWnode;
  return crossing([&](double per_gpu) { return 8 * k * per_gpu * 2048 * d * f / (2048 * kC) - comms; }, 1, 1e6);
}
INDEPENDENT("ch12.llama3-example.dp_critical_tokens_per_gpu",
            "bisection: 8BDF/(N·C) against an AllReduce of a node's 8/128 of 2·2·D·F bytes", 1e-9) {
  const double d = 16384, f = 53248, n = 16384;
  const double node_bytes = 2 * 2 * d * f * 8 / 128;
  const double comms = 2 * node_bytes / kWnode;  // many replicas: (X − 1)/X → 1
  return crossing([&](double per_gpu) { return 8 * per_gpu * n * d * f / (n * kC) - comms; }, 1, 1e6);
}
