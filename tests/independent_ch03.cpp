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
// The chips' link figures as the simulator takes them: one-axis Systems (every axis of a slice has the same
// link; the topologies below say which way each mesh is wired).
const System kV5eChip = tpu_pods(chip("tpu-v5e"), {1}, 1);
const System kV4pChip = tpu_pods(chip("tpu-v4p"), {1}, 1);
const System kV5pChip = tpu_pods(chip("tpu-v5p"), {1}, 1);

// Simulated time of a bf16 collective (count-only: it is the link counts that are being checked).
double sim_time(const sim::Topology& t, sim::Op op, std::vector<int> axes, double elements, const System& s) {
  return sim::to_time(sim::simulate(t, {op, std::move(axes), elements, true}), 2, s).t_s;
}
const sim::Topology kCube{{4, 4, 4}, {true, true, true}, sim::Direction::bi};
const sim::Topology kOpen4x4{{4, 4}, {false, false}, sim::Direction::bi};
const sim::Topology kOpen2x2{{2, 2}, {false, false}, sim::Direction::bi};
}  // namespace

namespace {
// Which J indices device (x, y) of a 4x2 mesh holds of an array whose J dimension is split over `axis`
// ('X', 'Y' or 0 for unsplit), J = 8 (any size divisible by 8 gives the same picture).
std::vector<bool> j_held(char axis, int x, int y) {
  const int J = 8;
  std::vector<bool> held(J, axis == 0);
  if (axis == 'X')
    for (int j = x * J / 4; j < (x + 1) * J / 4; ++j) held[static_cast<size_t>(j)] = true;
  if (axis == 'Y')
    for (int j = y * J / 2; j < (y + 1) * J / 2; ++j) held[static_cast<size_t>(j)] = true;
  return held;
}
// §3.2's cases decided by looking at every device's blocks: 1 if every device holds all of J in both
// operands, 3 if on every device both hold the same proper subset (partial sums to reduce), else 2.
int classify(char a_axis, char b_axis) {
  bool all_full = true, all_matching = true;
  for (int x = 0; x < 4; ++x)
    for (int y = 0; y < 2; ++y) {
      const auto a = j_held(a_axis, x, y), b = j_held(b_axis, x, y);
      all_full = all_full && std::all_of(a.begin(), a.end(), [](bool h) { return h; }) &&
                 std::all_of(b.begin(), b.end(), [](bool h) { return h; });
      all_matching = all_matching && a == b;
    }
  return all_full ? 1 : all_matching ? 3 : 2;
}
}  // namespace
INDEPENDENT("ch3.jax-local-shapes.plan_case", "the J blocks each of the 8 devices holds of A[I_X, J_Y] and B[J, K_Y]", 0) {
  CHECK(classify(0, 0) == 1);      // the classifier itself tells the three cases apart
  CHECK(classify('Y', 'Y') == 3);
  CHECK(classify('X', 'Y') == 2);
  return classify('Y', 0);
}
INDEPENDENT("ch3.allgather-cost.t_book_rule", "2^30 / 9e10", 1e-12) { return std::pow(2.0, 30) / 9e10; }
INDEPENDENT("ch3.allgather-cost.t_exact", "virtual mesh: AllGather on a bidirectional ring of 16", 1e-12) {
  return sim_time(sim::ring(16, sim::Direction::bi), Collective::all_gather, {0}, std::pow(2.0, 29), kV5eChip);
}
INDEPENDENT("ch3.allgather-cost.t_exact_two_axes", "virtual mesh: AllGather over both axes of a 16x16 torus", 1e-12) {
  return sim_time({{16, 16}, {true, true}, sim::Direction::bi}, Collective::all_gather, {0, 1}, std::pow(2.0, 29), kV5eChip);
}
INDEPENDENT("ch3.latency-threshold.shard_bytes_ring16", "bisection on the virtual mesh's two time terms", 1e-6) {
  // Smallest shard whose simulated AllGather is bandwidth-bound: simulate shards of 2048 elements once,
  // then vary the bytes per element so that a shard holds `mid` bytes.
  const auto r = sim::simulate(sim::ring(16, sim::Direction::bi), {Collective::all_gather, {0}, 16.0 * 2048, true});
  double lo = 1, hi = 1e7;
  for (int i = 0; i < 100; ++i) {
    const double mid = 0.5 * (lo + hi);
    const auto t = sim::to_time(r, mid / 2048, kV5eChip);
    (t.t_bandwidth_s < t.t_latency_s ? lo : hi) = mid;
  }
  return hi;
}
INDEPENDENT("ch3.quiz-allgather.t_if_wrapped_book_rule", "2048·8192·2 / 9e10", 1e-12) { return 2048.0 * 8192 * 2 / 9e10; }
INDEPENDENT("ch3.quiz-allgather.fraction_of_measured", "virtual mesh: open line of 4, then / 680 µs", 1e-12) {
  return sim_time(sim::line(4), Collective::all_gather, {0}, 2048.0 * 8192, kV5eChip) / 680e-6;
}
INDEPENDENT("ch3.alltoall-cost.ratio_n8", "virtual mesh: AllToAll over AllGather, ring of 8", 1e-12) {
  const auto ring = sim::ring(8, sim::Direction::bi);
  return sim::simulate(ring, {Collective::all_to_all, {0}, 64 * 64}).max_link_elements /
         sim::simulate(ring, {Collective::all_gather, {0}, 64 * 64}).max_link_elements;
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
  return sim_time(kCube, Collective::all_gather, {0}, 1024.0 * 4096 / 4, kV4pChip);
}
INDEPENDENT("ex3.2.ag_xy_exact", "virtual mesh: AllGather over two axes of a 4x4x4 torus", 1e-12) {
  return sim_time(kCube, Collective::all_gather, {0, 1}, 1024.0 * 4096, kV4pChip);
}
INDEPENDENT("ex3.2.ar_z_exact", "virtual mesh: AllReduce over the third axis", 1e-12) {
  return sim_time(kCube, Collective::all_reduce, {2}, 1024.0 * 4096 / 16, kV4pChip);
}
INDEPENDENT("ex3.3.hop_time_bandwidth", "64 / 4.5e10", 1e-12) { return 64 / 4.5e10; }
INDEPENDENT("ex3.4.t_strategy1_example", "full FLOPs by hand; gather of Y on the virtual mesh", 1e-12) {
  const double B = 1024, D = 8192, F = 32768;
  return std::max(2 * B * D * F / 4.59e14, sim_time(sim::ring(4, sim::Direction::bi), Collective::all_gather, {0}, D * F, kV5pChip));
}
INDEPENDENT("ex3.4.t_strategy2_example", "a quarter of the FLOPs by hand; AllReduce of Z on the virtual mesh", 1e-12) {
  const double B = 1024, D = 8192, F = 32768;
  return std::max(2 * B * D * F / 4 / 4.59e14,
                  sim_time(sim::ring(4, sim::Direction::bi), Collective::all_reduce, {0}, B * F, kV5pChip));
}
INDEPENDENT("ex3.4.s2_cheaper_comms_below_batch", "search over B on the virtual mesh's link counts", 1e-12) {
  // Smallest B (a multiple of 4) whose AllReduce of Z[B, F] moves at least as much as gathering Y[D, F].
  const double D = 8192, F = 64;  // F cancels; a small F keeps the search quick
  const auto ring = sim::ring(4, sim::Direction::bi);
  const double gather = sim::simulate(ring, {Collective::all_gather, {0}, D * F, true}).max_link_elements;
  for (double B = 4;; B += 4)
    if (sim::simulate(ring, {Collective::all_reduce, {0}, B * F, true}).max_link_elements >= gather) return B;
}
namespace {
// The AllGather time per byte over all three axes of a v5p 4x4x4, from the virtual mesh.
double v5p_cube_gather_per_byte() {
  const double elements = 64.0 * 3 * 1024;
  return sim::to_time(sim::simulate(kCube, {Collective::all_gather, {0, 1, 2}, elements, true}), 2, kV5pChip).t_bandwidth_s /
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
  return sim_time(kOpen4x4, Collective::all_reduce, {1}, 8192.0 * 8192 / 4, kV5eChip);
}
INDEPENDENT("ex3.6.training_comms", "virtual mesh: AllGather of B[J, K_Y] over the open X axis", 1e-12) {
  return sim_time(kOpen4x4, Collective::all_gather, {0}, 8192.0 * 8192 / 4, kV5eChip);
}
INDEPENDENT("ex3.6.inference_comms", "elements each device lacks for its C[I_X, K_Y] block, counted", 0) {
  // A[I_X, J] and B[J, K_Y] on a 4x4 mesh, I = J = K = 16. Ownership as the shardings say it; the output
  // block C[I_X, K_Y] of device (x, y) needs A's rows of block x for every j and B's columns of block y.
  const int I = 16, J = 16, K = 16;
  auto holds_a = [&](int x, int /*y*/, int i, int /*j*/) { return i / (I / 4) == x; };
  auto holds_b = [&](int /*x*/, int y, int /*j*/, int k) { return k / (K / 4) == y; };
  double missing = 0;
  for (int x = 0; x < 4; ++x)
    for (int y = 0; y < 4; ++y)
      for (int i = 0; i < I; ++i)
        for (int k = 0; k < K; ++k) {
          if (i / (I / 4) != x || k / (K / 4) != y) continue;  // not this device's output element
          for (int j = 0; j < J; ++j) missing += (holds_a(x, y, i, j) ? 0 : 1) + (holds_b(x, y, j, k) ? 0 : 1);
        }
  CHECK(holds_a(0, 0, 5, 0) == false);  // the count can be non-zero: device 0 lacks row 5
  return missing * 2 / 4.5e10;  // bf16 bytes over one link: 0 when nothing is missing
}
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
  return sim_time(kOpen2x2, Collective::all_reduce, {0, 1}, 128.0 * 8192, kV5eChip);
}
INDEPENDENT("ex3.7.compute_bound", "hand comparison of the two times", 0) {
  return 2 * 2 * 128.0 * 8192 * 32768 / 4 / 1.97e14 > sim_time(kOpen2x2, Collective::all_reduce, {0, 1}, 128.0 * 8192, kV5eChip);
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
double max_error(Collective op) {
  const int devices = 4, e = 96;
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<std::vector<double>> data(devices, std::vector<double>(e));
  for (auto& d : data)
    for (auto& x : d) x = u(rng);
  auto out = data;
  sim::run_on(sim::ring(devices, sim::Direction::bi), {op, {0}, double(e)}, out);
  double err = 0;
  for (int x = 0; x < e; ++x) {
    double sum = 0;
    for (const auto& d : data) sum += d[static_cast<size_t>(x)];
    for (int d = 0; d < devices; ++d)
      if (op == Collective::all_reduce || x / (e / devices) == d) err = std::max(err, std::fabs(out[static_cast<size_t>(d)][static_cast<size_t>(x)] - sum));
  }
  return err;
}
}  // namespace
namespace {
// A ring ReduceScatter and AllGather written here from the textbook algorithm (no simulator code): in
// step s device d sends its running sum of chunk (d − s) mod n to device d + 1, which adds it in.
std::vector<std::vector<double>> ring_all_reduce(std::vector<std::vector<double>> data, bool gather) {
  const int n = static_cast<int>(data.size());
  const size_t chunk = data[0].size() / static_cast<size_t>(n);
  auto at = [&](int dev, int c, size_t i) -> double& { return data[static_cast<size_t>(dev)][static_cast<size_t>(c) * chunk + i]; };
  for (int s = 0; s < n - 1; ++s) {
    std::vector<std::vector<double>> sent(static_cast<size_t>(n));
    for (int d = 0; d < n; ++d) {
      const int c = ((d - s) % n + n) % n;
      for (size_t i = 0; i < chunk; ++i) sent[static_cast<size_t>(d)].push_back(at(d, c, i));
    }
    for (int d = 0; d < n; ++d) {
      const int from = (d - 1 + n) % n, c = ((from - s) % n + n) % n;
      for (size_t i = 0; i < chunk; ++i) at(d, c, i) += sent[static_cast<size_t>(from)][i];
    }
  }
  // Device d now holds the full sum of chunk (d + 1) mod n. AllGather: pass finished chunks around.
  if (gather)
    for (int s = 0; s < n - 1; ++s) {
      auto before = data;
      for (int d = 0; d < n; ++d) {
        const int from = (d - 1 + n) % n, c = ((from + 1 - s) % n + n) % n;
        for (size_t i = 0; i < chunk; ++i)
          data[static_cast<size_t>(d)][static_cast<size_t>(c) * chunk + i] = before[static_cast<size_t>(from)][static_cast<size_t>(c) * chunk + i];
      }
    }
  return data;
}
// The chapter's exercise rebuilt here: integer A[8, 16] split over 4 devices along M, B[16, 12].
double ex39_error(bool all_reduce) {
  const int N = 8, M = 16, K = 12, devices = 4;
  auto a = [](int i, int j) { return double((3 * i + 5 * j) % 7) - 3; };
  auto b = [](int i, int j) { return double((2 * i + 7 * j) % 5) - 2; };
  std::vector<std::vector<double>> partial(devices, std::vector<double>(N * K, 0.0));
  for (int d = 0; d < devices; ++d)
    for (int n = 0; n < N; ++n)
      for (int k = 0; k < K; ++k)
        for (int m = d * M / devices; m < (d + 1) * M / devices; ++m) partial[static_cast<size_t>(d)][static_cast<size_t>(n * K + k)] += a(n, m) * b(m, k);
  const auto out = ring_all_reduce(partial, all_reduce);
  double err = 0;
  for (int n = 0; n < N; ++n)
    for (int k = 0; k < K; ++k) {
      double full = 0;
      for (int m = 0; m < M; ++m) full += a(n, m) * b(m, k);
      const int chunk = (n * K + k) / (N * K / devices);
      for (int d = 0; d < devices; ++d)
        if (all_reduce || (chunk + devices - 1) % devices == d)  // our ring leaves chunk c complete on device c − 1
          err = std::max(err, std::fabs(out[static_cast<size_t>(d)][static_cast<size_t>(n * K + k)] - full));
    }
  return err;
}
}  // namespace
// Absolute checks: integer data makes every partial sum exact, so a correct collective gives 0.
INDEPENDENT_WITHIN("ex3.9.max_error_all_reduce", "a ring AllReduce written in the test, on the same matrices", 1e-12) {
  CHECK(max_error(Collective::all_reduce) < 1e-12);  // and the simulator on random real data
  return ex39_error(true);
}
INDEPENDENT_WITHIN("ex3.9.max_error_reduce_scatter", "a ring ReduceScatter written in the test, on the same matrices", 1e-12) {
  CHECK(max_error(Collective::reduce_scatter) < 1e-12);
  return ex39_error(false);
}
INDEPENDENT("ex3.10.a2a_gain_bi_d8", "closed form (D − 1)·D / ⌊D²/4⌋ at D = 8", 1e-12) { return 7.0 * 8 / 16; }
INDEPENDENT("ex3.10.ag_over_a2a_bi_d8", "closed form ((D − 1)/(2D)) / (⌊D²/4⌋/(2D²)) at D = 8", 1e-12) {
  return (7.0 / 16) / (16.0 / 128);
}

namespace {
// Scalars on the busiest link of a one-way ring of d devices, N×N matrix, by routing every block:
// AllGather sends each device's strip (N/d·N) to all others; AllToAll sends block (s -> t) of N²/d²
// scalars (t − s) mod d hops. Each block adds its size to every link s -> s + 1 it crosses.
double uni_ring_busiest(bool all_to_all, int d, double n) {
  std::vector<double> link(static_cast<size_t>(d), 0.0);
  for (int s = 0; s < d; ++s)
    for (int t = 0; t < d; ++t) {
      if (s == t) continue;
      const double size = all_to_all ? n * n / (double(d) * d) : 0;
      for (int at = s; at != t; at = (at + 1) % d) link[static_cast<size_t>(at)] += size;
    }
  if (!all_to_all)  // a strip travels on to the farthest receiver once, crossing d − 1 links
    for (int s = 0; s < d; ++s)
      for (int hop = 0; hop < d - 1; ++hop) link[static_cast<size_t>((s + hop) % d)] += n / d * n;
  return *std::max_element(link.begin(), link.end());
}
}  // namespace
INDEPENDENT("ex3.10.ag_uni_link_scalars", "routing every strip around a one-way ring of 8, N = 64", 1e-12) {
  return uni_ring_busiest(false, 8, 64);
}
INDEPENDENT("ex3.10.a2a_uni_link_scalars", "routing every block around a one-way ring of 8, N = 64", 1e-12) {
  return uni_ring_busiest(true, 8, 64);
}

// ex3.2's book-rule times from the raw figures: v4p ICI 4.5e10 B/s one way, 9e10 both ways per axis.
INDEPENDENT("ex3.2.ag_xy_book_rule", "bf16[1024, 4096] = 8 MiB over two axes: V / (2 · 9e10)", 1e-12) {
  return 1024.0 * 4096 * 2 / (2 * 9e10);
}
INDEPENDENT("ex3.2.ar_z_book_rule", "bf16[1024/4, 4096/4] = 512 KiB, AllReduce 2V / 9e10", 1e-12) {
  return 2 * (1024.0 / 4 * 4096 / 4 * 2) / 9e10;
}

#include <stdexcept>

#include "scaling/notation/sharding.hpp"

TEST_CASE("§3.1 notation: only a complete {U_...} may follow the brackets") {
  const Mesh mesh = parse_mesh("X=4,Y=2");
  CHECK_NOTHROW(parse_sharding("A[I_X, J]{U_Y}", mesh));
  CHECK_THROWS_WITH_AS(parse_sharding("A[I_X, J]{U_Y", mesh), doctest::Contains("unexpected"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_sharding("A[I_X, J] U_Y}", mesh), doctest::Contains("unexpected"), std::invalid_argument);
}

TEST_CASE("virtual mesh: a request above 1e15 elements is refused, 1e15 itself is not") {
  const auto ring = sim::ring(4, sim::Direction::bi);
  CHECK_THROWS_AS(sim::simulate(ring, {Collective::all_gather, {0}, 1.5e15, true}), std::invalid_argument);
  CHECK_NOTHROW(sim::simulate(ring, {Collective::all_gather, {0}, 1e15, true}));
}

// §3.2 footnote 3: the farthest device on a bidirectional ring of 7, by walking both ways from device 0.
INDEPENDENT("ch3.allgather-cost.hops_bidir", "shortest walk to every device of a 7-ring, the largest", 0) {
  int farthest = 0;
  for (int k = 0; k < 7; ++k) {
    int right = 0, left = 0;
    for (int at = 0; at != k; at = (at + 1) % 7) ++right;
    for (int at = 0; at != k; at = (at + 6) % 7) ++left;
    farthest = std::max(farthest, std::min(right, left));
  }
  return farthest;
}

// Exercise 3.4's strategy 2: §3.2's case list applied by hand to the two operands' subscripts.
INDEPENDENT("ex3.4.strategy2_case_label", "§3.2's four cases applied to the subscripts X[B, D_X], Y[D_X, F]", 0) {
  struct Dim {
    char name;
    char axis;  // 0: not sharded
  };
  const std::vector<Dim> lhs{{'B', 0}, {'D', 'X'}}, rhs{{'D', 'X'}, {'F', 0}};
  const char contracting = 'D';
  auto axis_of = [](const std::vector<Dim>& t, char name) {
    for (const auto& d : t)
      if (d.name == name) return d.axis;
    return char(0);
  };
  const char a = axis_of(lhs, contracting), b = axis_of(rhs, contracting);
  bool shared_free_axis = false;  // case 4: a non-contracting dimension of each on the same axis
  for (const auto& l : lhs)
    for (const auto& r : rhs)
      if (l.name != contracting && r.name != contracting && l.axis && l.axis == r.axis) shared_free_axis = true;
  if (shared_free_axis) return 4.0;
  if (a && a == b) return 3.0;
  if (a || b) return 2.0;
  return 1.0;
}

// Solution 3.10 part 5 on a ring of 7: device 0's block for device k goes the shorter way round, by walking.
INDEPENDENT("ex3.10.a2a_bi_max_distance", "walk both ways from device 0 to each other device of a 7-ring", 0) {
  int farthest = 0;
  for (int k = 1; k < 7; ++k) {
    int steps_right = 0, steps_left = 0;
    for (int at = 0; at != k; at = (at + 1) % 7) ++steps_right;
    for (int at = 0; at != k; at = (at + 6) % 7) ++steps_left;
    farthest = std::max(farthest, std::min(steps_right, steps_left));
  }
  return farthest;
}
