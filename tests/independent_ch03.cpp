// Independent checks of chapter 3. Exact collective times in the chapter come from the closed-form
// model; here they are re-derived by running the collective on the virtual mesh (link counts), and
// the book-rule and FLOP values by hand arithmetic from the raw figures.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "registry.hpp"
#include "scaling/cost/collectives.hpp"
#include "scaling/sim/mesh_sim.hpp"

using namespace scaling;

namespace {
const Link kV5e = ici_link(chip("tpu-v5e"));
const Link kV4p = ici_link(chip("tpu-v4p"));
const Link kV5p = ici_link(chip("tpu-v5p"));

// Simulated time of a bf16 collective (count-only: it is the link counts that are being checked).
double sim_time(const sim::Topology& t, sim::Op op, std::vector<int> axes, double elements, const Link& link) {
  return sim::to_time(sim::simulate(t, {op, std::move(axes), elements, 1, true}), 2, link).t_s;
}
const sim::Topology kCube{{4, 4, 4}, {true, true, true}, sim::Links::bi};
const sim::Topology kOpen4x4{{4, 4}, {false, false}, sim::Links::bi};
const sim::Topology kOpen2x2{{2, 2}, {false, false}, sim::Links::bi};
}  // namespace

INDEPENDENT("ch3.jax-local-shapes.plan_case", "classifying by hand: J is sharded (over Y) in A only", 0) {
  const std::string a_contracting_axes = "Y", b_contracting_axes = "";
  return a_contracting_axes == b_contracting_axes ? (a_contracting_axes.empty() ? 1 : 3) : 2;
}
INDEPENDENT("ch3.allgather-cost.t_book_rule", "2^30 / 9e10", 1e-12) { return std::pow(2.0, 30) / 9e10; }
INDEPENDENT("ch3.allgather-cost.t_exact", "virtual mesh: AllGather on a bidirectional ring of 16", 1e-12) {
  return sim_time(sim::ring(16, sim::Links::bi), sim::Op::all_gather, {0}, std::pow(2.0, 29), kV5e);
}
INDEPENDENT("ch3.allgather-cost.t_exact_two_axes", "virtual mesh: AllGather over both axes of a 16x16 torus", 1e-12) {
  return sim_time({{16, 16}, {true, true}, sim::Links::bi}, sim::Op::all_gather, {0, 1}, std::pow(2.0, 29), kV5e);
}
INDEPENDENT("ch3.latency-threshold.shard_bytes_ring16", "bisection on the virtual mesh's two time terms", 1e-6) {
  // Smallest shard whose simulated AllGather is bandwidth-bound: simulate shards of 2048 elements once,
  // then vary the bytes per element so that a shard holds `mid` bytes.
  const auto r = sim::simulate(sim::ring(16, sim::Links::bi), {sim::Op::all_gather, {0}, 16.0 * 2048, 1, true});
  double lo = 1, hi = 1e7;
  for (int i = 0; i < 100; ++i) {
    const double mid = 0.5 * (lo + hi);
    const auto t = sim::to_time(r, mid / 2048, kV5e);
    (t.t_bandwidth_s < t.t_latency_s ? lo : hi) = mid;
  }
  return hi;
}
INDEPENDENT("ch3.quiz-allgather.t_if_wrapped_book_rule", "2048·8192·2 / 9e10", 1e-12) { return 2048.0 * 8192 * 2 / 9e10; }
INDEPENDENT("ch3.quiz-allgather.fraction_of_measured", "virtual mesh: open line of 4, then / 680 µs", 1e-12) {
  return sim_time(sim::line(4), sim::Op::all_gather, {0}, 2048.0 * 8192, kV5e) / 680e-6;
}
INDEPENDENT("ch3.alltoall-cost.ratio_n8", "virtual mesh: AllToAll over AllGather, ring of 8", 1e-12) {
  const auto ring = sim::ring(8, sim::Links::bi);
  return sim::simulate(ring, {sim::Op::all_to_all, {0}, 64 * 64}).max_link_elements /
         sim::simulate(ring, {sim::Op::all_gather, {0}, 64 * 64}).max_link_elements;
}
INDEPENDENT("ch3.alltoall-cost.fully_connected_gain_n8", "counting bytes per link on a complete graph of 8", 1e-12) {
  const int n = 8;
  const double v = 1;
  double ag_max = 0, a2a_max = 0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      if (i == j) continue;
      ag_max = std::max(ag_max, v / n);         // link i->j carries i's whole shard
      a2a_max = std::max(a2a_max, v / (n * n));  // and only the block i owes j
    }
  return ag_max / a2a_max;
}
INDEPENDENT("ex3.2.ag_x_exact", "virtual mesh: AllGather over one axis of a 4x4x4 torus", 1e-12) {
  return sim_time(kCube, sim::Op::all_gather, {0}, 1024.0 * 4096 / 4, kV4p);
}
INDEPENDENT("ex3.2.ag_xy_exact", "virtual mesh: AllGather over two axes of a 4x4x4 torus", 1e-12) {
  return sim_time(kCube, sim::Op::all_gather, {0, 1}, 1024.0 * 4096, kV4p);
}
INDEPENDENT("ex3.2.ar_z_exact", "virtual mesh: AllReduce over the third axis", 1e-12) {
  return sim_time(kCube, sim::Op::all_reduce, {2}, 1024.0 * 4096 / 16, kV4p);
}
INDEPENDENT("ex3.3.hop_time_bandwidth", "64 / 4.5e10", 1e-12) { return 64 / 4.5e10; }
INDEPENDENT("ex3.4.t_strategy1_example", "full FLOPs by hand; gather of Y on the virtual mesh", 1e-12) {
  const double B = 1024, D = 8192, F = 32768;
  return std::max(2 * B * D * F / 4.59e14, sim_time(sim::ring(4, sim::Links::bi), sim::Op::all_gather, {0}, D * F, kV5p));
}
INDEPENDENT("ex3.4.t_strategy2_example", "a quarter of the FLOPs by hand; AllReduce of Z on the virtual mesh", 1e-12) {
  const double B = 1024, D = 8192, F = 32768;
  return std::max(2 * B * D * F / 4 / 4.59e14,
                  sim_time(sim::ring(4, sim::Links::bi), sim::Op::all_reduce, {0}, B * F, kV5p));
}
INDEPENDENT("ex3.4.s2_cheaper_comms_below_batch", "search over B on the virtual mesh's link counts", 1e-12) {
  // Smallest B (a multiple of 4) whose AllReduce of Z[B, F] moves at least as much as gathering Y[D, F].
  const double D = 8192, F = 64;  // F cancels; a small F keeps the search quick
  const auto ring = sim::ring(4, sim::Links::bi);
  const double gather = sim::simulate(ring, {sim::Op::all_gather, {0}, D * F, 1, true}).max_link_elements;
  for (double B = 4;; B += 4)
    if (sim::simulate(ring, {sim::Op::all_reduce, {0}, B * F, 1, true}).max_link_elements >= gather) return B;
}
namespace {
// The AllGather time per byte over all three axes of a v5p 4x4x4, from the virtual mesh.
double v5p_cube_gather_per_byte() {
  const double elements = 64.0 * 3 * 1024;
  return sim::to_time(sim::simulate(kCube, {sim::Op::all_gather, {0, 1, 2}, elements, 1, true}), 2, kV5p).t_bandwidth_s /
         (elements * 2);
}
}  // namespace
INDEPENDENT("ex3.5.d_crossover", "64 · 4.59e14 · (simulated AllGather time per byte)", 1e-9) {
  return 64 * 4.59e14 * v5p_cube_gather_per_byte();
}
INDEPENDENT("ex3.5.d_replication_pays", "4.59e14 · (simulated AllGather time per byte)", 1e-9) {
  return 4.59e14 * v5p_cube_gather_per_byte();
}
INDEPENDENT("ex3.6.base_comms", "virtual mesh: AllReduce of C[I_X, K] over the open Y axis", 1e-12) {
  return sim_time(kOpen4x4, sim::Op::all_reduce, {1}, 8192.0 * 8192 / 4, kV5e);
}
INDEPENDENT("ex3.6.training_comms", "virtual mesh: AllGather of B[J, K_Y] over the open X axis", 1e-12) {
  return sim_time(kOpen4x4, sim::Op::all_gather, {0}, 8192.0 * 8192 / 4, kV5e);
}
INDEPENDENT("ex3.6.inference_comms", "no communication: J is sharded in neither input", 0) { return 0; }
INDEPENDENT("ex3.6.base_compute", "2·8192³ / 16 / 1.97e14", 1e-12) { return 2 * std::pow(8192.0, 3) / 16 / 1.97e14; }
INDEPENDENT("ex3.6.training_compute", "2·8192³ / 16 / 1.97e14", 1e-12) { return 2 * std::pow(8192.0, 3) / 16 / 1.97e14; }
INDEPENDENT("ex3.6.inference_compute", "2·8192³ / 16 / 1.97e14", 1e-12) { return 2 * std::pow(8192.0, 3) / 16 / 1.97e14; }
INDEPENDENT("ex3.7.weight_bytes_per_chip", "2 matrices × 8192·32768·2 bytes / 4 chips", 1e-12) {
  return 2 * 8192.0 * 32768 * 2 / 4;
}
INDEPENDENT("ex3.7.free_after_weights", "300e6 − 2 × 8192·32768·2 / 4", 1e-12) { return 300e6 - 2 * 8192.0 * 32768 * 2 / 4; }
INDEPENDENT("ex3.7.t_compute", "2 matmuls × 2·128·8192·32768 / 4 chips / 1.97e14", 1e-12) {
  return 2 * 2 * 128.0 * 8192 * 32768 / 4 / 1.97e14;
}
INDEPENDENT("ex3.7.t_comms", "virtual mesh: AllReduce of out[B, D] over both axes of an open 2x2", 1e-12) {
  return sim_time(kOpen2x2, sim::Op::all_reduce, {0, 1}, 128.0 * 8192, kV5e);
}
INDEPENDENT("ex3.7.compute_bound", "hand comparison of the two times", 0) {
  return 2 * 2 * 128.0 * 8192 * 32768 / 4 / 1.97e14 > sim_time(kOpen2x2, sim::Op::all_reduce, {0, 1}, 128.0 * 8192, kV5e);
}
namespace {
double model_time(Collective op, double bytes) { return collective_cost(op, {{16, true}}, bytes, kV5e).t_s; }
const double k512MiB = 512.0 * 1024 * 1024;
}  // namespace
INDEPENDENT("ex3.8.all_gather_512mib", "closed-form cost model", 1e-12) { return model_time(Collective::all_gather, k512MiB); }
INDEPENDENT("ex3.8.reduce_scatter_512mib", "closed-form cost model", 1e-12) {
  return model_time(Collective::reduce_scatter, k512MiB);
}
INDEPENDENT("ex3.8.all_reduce_512mib", "closed-form cost model", 1e-12) { return model_time(Collective::all_reduce, k512MiB); }
INDEPENDENT("ex3.8.all_to_all_512mib", "closed-form cost model", 1e-12) { return model_time(Collective::all_to_all, k512MiB); }
INDEPENDENT("ex3.8.all_gather_crossover", "hand arithmetic: 8 hops × 1 µs = (15/16)·V / 9e10 B/s, solved for V", 1e-9) {
  return 8 * 1e-6 * 9e10 * 16 / 15;
}
INDEPENDENT("ex3.8.all_gather_bandwidth_bound_from", "the cost model over the same sweep", 0) {
  for (double v = 8192;; v *= 4)
    if (!collective_cost(Collective::all_gather, {{16, true}}, v, kV5e).latency_bound) return v;
}
namespace {
// An AllReduce or ReduceScatter of random real partial sums on the virtual ring against plain sums.
double max_error(sim::Op op) {
  const int devices = 4, e = 96;
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<std::vector<double>> data(devices, std::vector<double>(e));
  for (auto& d : data)
    for (auto& x : d) x = u(rng);
  auto out = data;
  sim::run_on(sim::ring(devices, sim::Links::bi), {op, {0}, double(e)}, out);
  double err = 0;
  for (int x = 0; x < e; ++x) {
    double sum = 0;
    for (const auto& d : data) sum += d[static_cast<size_t>(x)];
    for (int d = 0; d < devices; ++d)
      if (op == sim::Op::all_reduce || x / (e / devices) == d) err = std::max(err, std::fabs(out[static_cast<size_t>(d)][static_cast<size_t>(x)] - sum));
  }
  return err;
}
}  // namespace
// Absolute checks: the chapter's integer matrices give exactly 0; real-valued data gives rounding only.
INDEPENDENT("ex3.9.max_error_all_reduce", "the same collective on random real data, against plain sums", 0) {
  return max_error(sim::Op::all_reduce) < 1e-12 ? 0 : 1;
}
INDEPENDENT("ex3.9.max_error_reduce_scatter", "the same collective on random real data, against plain sums", 0) {
  return max_error(sim::Op::reduce_scatter) < 1e-12 ? 0 : 1;
}
INDEPENDENT("ex3.10.a2a_gain_bi_d8", "closed form (D − 1)·D / ⌊D²/4⌋ at D = 8", 1e-12) { return 7.0 * 8 / 16; }
INDEPENDENT("ex3.10.ag_over_a2a_bi_d8", "closed form ((D − 1)/(2D)) / (⌊D²/4⌋/(2D²)) at D = 8", 1e-12) {
  return (7.0 / 16) / (16.0 / 128);
}
