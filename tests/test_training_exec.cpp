// §5: one training step executed on the virtual mesh (sim/training_step.hpp) and as the naive pipeline
// of §5.1.5 (sim/pipeline.hpp), checked three ways against code written here from the definitions:
//  1. Exactly. On whole-number data (weights in {−1, 0, 1}, inputs in {−2, …, 2}) the step is recomputed
//     here in 128-bit integers: forward, ½·Σ(out − target)², backward, W' = W − g/64. Every intermediate is
//     checked to stay below 2^53 in magnitude, so every double-precision sum the library takes is exact
//     whatever its order, and the updated weights of every strategy must equal the integer ones bit for
//     bit (bound 0). Adam's update, written out here, must match bit for bit too.
//  2. Within a bound. On Gaussian data, DP, FSDP and the pipeline compute every per-row value exactly as
//     the unsharded step does (the same products in the same order); only a weight gradient's sum over
//     the batch is split into partial sums that are added in another order. Any two orders of summing the
//     same n terms differ by at most 2·γ_{n−1}·Σ|term| (γ_k = k·u/(1 − k·u), u = 2^−53; Higham, Accuracy
//     and Stability of Numerical Algorithms, §4.2). With lr a power of two, lr·g is exact and the
//     subtraction rounds once each: |W'₁ − W'₂| ≤ lr·2γ_{B−1}·Σ_b|p_b| + u/(1 − u)·(|W'₁| + |W'₂|).
//     Σ_b|p_b| is computed here from a forward/backward pass of our own.
//  3. Bytes. The elements each device sent in each layer's forward and backward pass equal §5's table of
//     communication per layer (§5.2), written out below from the book's table: there the bytes of bf16
//     arrays (2 per element) in the large-mesh limit; on a ring of n devices an AllGather or ReduceScatter
//     sends (n − 1)/n of the array from each device, an AllReduce twice that.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "exact_mlp_step.hpp"
#include "scaling/sim/pipeline.hpp"
#include "scaling/sim/training_step.hpp"

using namespace scaling::sim;

namespace {

// ---- The exact step in integers (exact_mlp_step.hpp), on the library's example data ----
using I = exact_mlp::Int;
using IMat = exact_mlp::Mat;
using IntStep = exact_mlp::Step;

IMat to_int(const Block& b) {
  IMat m(static_cast<size_t>(b.rows), std::vector<I>(static_cast<size_t>(b.cols)));
  for (long long i = 0; i < b.rows; ++i)
    for (long long j = 0; j < b.cols; ++j) {
      const double v = b.at(i, j);
      REQUIRE(v == std::floor(v));
      m[static_cast<size_t>(i)][static_cast<size_t>(j)] = static_cast<I>(v);
    }
  return m;
}

exact_mlp::Problem to_int(const MlpProblem& p) {
  exact_mlp::Problem q{p.shape.layers, p.shape.batch, p.shape.d_model, p.shape.d_ff, to_int(p.x), to_int(p.target), {}, {}};
  for (size_t l = 0; l < p.weights.w_in.size(); ++l) {
    q.w_in.push_back(to_int(p.weights.w_in[l]));
    q.w_out.push_back(to_int(p.weights.w_out[l]));
  }
  return q;
}

IntStep integer_step(const MlpProblem& p) {
  auto s = exact_mlp::step(to_int(p));
  REQUIRE(static_cast<double>(s.largest) < exact_mlp::two_to_53());
  return s;
}

constexpr double kLr = 1.0 / 64;

// Every updated weight equals W − g/64 exactly: 64·W' = 64·W − g in integers.
void check_exact_sgd(const MlpWeights& updated, const MlpProblem& p, const IntStep& s) {
  for (size_t l = 0; l < updated.w_in.size(); ++l)
    for (int which = 0; which < 2; ++which) {
      const Block& w = which == 0 ? p.weights.w_in[l] : p.weights.w_out[l];
      const Block& u = which == 0 ? updated.w_in[l] : updated.w_out[l];
      const IMat& g = which == 0 ? s.grad_in[l] : s.grad_out[l];
      for (long long i = 0; i < w.rows; ++i)
        for (long long j = 0; j < w.cols; ++j) {
          const I expect = static_cast<I>(w.at(i, j)) * 64 - g[static_cast<size_t>(i)][static_cast<size_t>(j)];
          REQUIRE(u.at(i, j) * 64 == static_cast<double>(expect));
        }
    }
}

// Adam's first step, from its definition (Kingma & Ba, Algorithm 1, t = 1, zero moments).
double adam_first_step(double w, double g, const Optimizer& o) {
  const double m = (1 - o.beta1) * g, v = (1 - o.beta2) * g * g;
  return w - o.lr * (m / (1 - o.beta1)) / (std::sqrt(v / (1 - o.beta2)) + o.eps);
}

void check_exact_adam(const MlpWeights& updated, const MlpProblem& p, const IntStep& s, const Optimizer& o) {
  for (size_t l = 0; l < updated.w_in.size(); ++l)
    for (int which = 0; which < 2; ++which) {
      const Block& w = which == 0 ? p.weights.w_in[l] : p.weights.w_out[l];
      const Block& u = which == 0 ? updated.w_in[l] : updated.w_out[l];
      const IMat& g = which == 0 ? s.grad_in[l] : s.grad_out[l];
      for (long long i = 0; i < w.rows; ++i)
        for (long long j = 0; j < w.cols; ++j)
          REQUIRE(u.at(i, j) == adam_first_step(w.at(i, j), static_cast<double>(g[static_cast<size_t>(i)][static_cast<size_t>(j)]), o));
    }
}

Topology torus(std::vector<int> shape) { return {shape, std::vector<bool>(shape.size(), true), Direction::bi}; }

MlpShape small_shape() { return {3, 16, 8, 16}; }

// ---- §5's table of communication per layer (§5.2), bytes of bf16, forward and backward ----
// DP: 0 + 8DF;  FSDP: 4DF + 8DF;  MP: 4BD + 4BD;  FSDP+MP: (4BD/X + 4DF/Y) + (8BD/X + 8DF/Y).
// Each term is a collective's array bytes: 2DF a weight, 2BD/X an activation shard of one Y group. On a
// ring of n devices each device sends (n − 1)/n of it, so the executed bytes per device are each term
// times (n − 1)/n of the axis its collective runs over: X for the weights, Y for the activations.
struct PerLayerBytes {
  double forward, backward;
};

PerLayerBytes table_bytes_per_device(Strategy s, double B, double D, double F, double X, double Y) {
  const double on_x = (X - 1) / X, on_y = (Y - 1) / Y;
  switch (s) {
    case Strategy::dp: return {0, 8 * D * F * on_x};
    case Strategy::fsdp: return {4 * D * F * on_x, 8 * D * F * on_x};
    case Strategy::tp: return {4 * B * D * on_y, 4 * B * D * on_y};
    case Strategy::fsdp_tp:
      // The table prints 8BD/X for the backward activations; the §5.1.4 algorithm it summarises moves
      // AllGather_Y(dOut) and ReduceScatter_Y(dIn) (In is shared with the forward pass): 4BD/X, the same
      // 4BD as the MP row when X = 1. The executed step follows the algorithm; see the test below.
      return {4 * B * D / X * on_y + 4 * D * F / Y * on_x, 4 * B * D / X * on_y + 8 * D * F / Y * on_x};
  }
  return {};
}

// ---- A forward/backward pass of our own in double, for the magnitudes Σ_b |p_b| of each gradient sum ----
using Mat = std::vector<std::vector<double>>;
Mat to_mat(const Block& b) {
  Mat m(static_cast<size_t>(b.rows), std::vector<double>(static_cast<size_t>(b.cols)));
  for (long long i = 0; i < b.rows; ++i)
    for (long long j = 0; j < b.cols; ++j) m[static_cast<size_t>(i)][static_cast<size_t>(j)] = b.at(i, j);
  return m;
}
Mat mul(const Mat& a, bool ta, const Mat& b, bool tb, bool absolute) {
  const size_t m = ta ? a[0].size() : a.size(), k = ta ? a.size() : a[0].size(), n = tb ? b.size() : b[0].size();
  Mat c(m, std::vector<double>(n));
  for (size_t i = 0; i < m; ++i)
    for (size_t j = 0; j < n; ++j)
      for (size_t q = 0; q < k; ++q) {
        const double t = (ta ? a[q][i] : a[i][q]) * (tb ? b[j][q] : b[q][j]);
        c[i][j] += absolute ? std::fabs(t) : t;
      }
  return c;
}

// Per layer: Σ_b |H[b][f]·dOut[b][d]| (for W_out) and Σ_b |In[b][d]·dTmp[b][f]| (for W_in).
struct Magnitudes {
  std::vector<Mat> w_in, w_out;
};
Magnitudes gradient_magnitudes(const MlpProblem& p) {
  const size_t L = static_cast<size_t>(p.shape.layers);
  std::vector<Mat> ins{to_mat(p.x)}, tmps, hs;
  for (size_t l = 0; l < L; ++l) {
    tmps.push_back(mul(ins.back(), false, to_mat(p.weights.w_in[l]), false, false));
    Mat h = tmps.back();
    for (auto& r : h)
      for (auto& v : r) v = std::max(v, 0.0);
    hs.push_back(h);
    ins.push_back(mul(h, false, to_mat(p.weights.w_out[l]), false, false));
  }
  Mat d = ins.back();
  const Mat t = to_mat(p.target);
  for (size_t i = 0; i < d.size(); ++i)
    for (size_t j = 0; j < d[i].size(); ++j) d[i][j] -= t[i][j];
  Magnitudes m;
  m.w_in.resize(L);
  m.w_out.resize(L);
  for (size_t l = L; l-- > 0;) {
    m.w_out[l] = mul(hs[l], true, d, false, true);
    Mat dt = mul(d, false, to_mat(p.weights.w_out[l]), true, false);
    for (size_t i = 0; i < dt.size(); ++i)
      for (size_t j = 0; j < dt[i].size(); ++j)
        if (!(tmps[l][i][j] > 0)) dt[i][j] = 0;
    m.w_in[l] = mul(ins[l], true, dt, false, true);
    d = mul(dt, false, to_mat(p.weights.w_in[l]), true, false);
  }
  return m;
}

// Largest ratio |W'₁ − W'₂| / bound over all weights (≤ 1 means within the bound).
double worst_against_bound(const MlpWeights& a, const MlpWeights& b, const Magnitudes& mag, long long batch) {
  const double u = std::ldexp(1.0, -53);
  const double n = static_cast<double>(batch - 1);
  const double gamma = n * u / (1 - n * u);
  double worst = 0;
  for (size_t l = 0; l < a.w_in.size(); ++l)
    for (int which = 0; which < 2; ++which) {
      const Block& x = which == 0 ? a.w_in[l] : a.w_out[l];
      const Block& y = which == 0 ? b.w_in[l] : b.w_out[l];
      const Mat& s = which == 0 ? mag.w_in[l] : mag.w_out[l];
      for (long long i = 0; i < x.rows; ++i)
        for (long long j = 0; j < x.cols; ++j) {
          const double bound = kLr * 2 * gamma * s[static_cast<size_t>(i)][static_cast<size_t>(j)] * (1 + 1e-9) +
                               u / (1 - u) * (std::fabs(x.at(i, j)) + std::fabs(y.at(i, j)));
          const double diff = std::fabs(x.at(i, j) - y.at(i, j));
          if (diff > 0) worst = std::max(worst, diff / bound);
        }
    }
  return worst;
}

}  // namespace

TEST_CASE("training step: the integer example keeps every intermediate exact in double precision") {
  for (auto shape : {small_shape(), MlpShape{4, 16, 8, 16}, MlpShape{3, 32, 8, 16}}) {
    const auto step = exact_mlp::step(to_int(example_problem(shape, InitKind::integers, 7)));
    CHECK(static_cast<double>(step.largest) < exact_mlp::two_to_53());
    CHECK(static_cast<double>(step.largest) > 1);  // the data is not trivial
  }
}

TEST_CASE("training step: the example data follows its documented recipe") {
  const auto p = example_problem(MlpShape{2, 4, 3, 5}, InitKind::integers, 99);
  const auto q = exact_mlp::integer_example(2, 4, 3, 5, 99);
  const auto r = to_int(p);
  CHECK(r.x == q.x);
  CHECK(r.target == q.target);
  CHECK(r.w_in == q.w_in);
  CHECK(r.w_out == q.w_out);
}

TEST_CASE("training step: the unsharded reference equals the integer step, SGD and Adam") {
  const auto p = example_problem(small_shape(), InitKind::integers, 7);
  const auto exact = integer_step(p);
  const auto sgd = reference_step(p, Optimizer{OptimizerKind::sgd, kLr});
  CHECK(sgd.loss * 2 == static_cast<double>(exact.loss_times_2));
  check_exact_sgd(sgd.updated, p, exact);
  const Optimizer adam{OptimizerKind::adam, 1e-3};
  check_exact_adam(reference_step(p, adam).updated, p, exact, adam);
}

TEST_CASE("training step: DP, FSDP, TP and FSDP+TP give the unsharded step's weights bit for bit") {
  const auto p = example_problem(small_shape(), InitKind::integers, 7);
  const auto exact = integer_step(p);
  const Optimizer adam{OptimizerKind::adam, 1e-3};
  for (const auto& mesh : {torus({2, 4}), torus({4, 2}), torus({2, 2, 2})})
    for (Strategy s : {Strategy::dp, Strategy::fsdp, Strategy::tp, Strategy::fsdp_tp}) {
      CAPTURE(to_string(s));
      CAPTURE(mesh.shape.size());
      CAPTURE(mesh.shape[0]);
      const auto layout = layout_for(s, mesh);
      const auto run = sharded_step(mesh, layout, p, Optimizer{OptimizerKind::sgd, kLr});
      CHECK(run.replicas_agree);
      CHECK(run.loss * 2 == static_cast<double>(exact.loss_times_2));
      check_exact_sgd(run.updated, p, exact);
      const auto run_adam = sharded_step(mesh, layout, p, adam);
      CHECK(run_adam.replicas_agree);
      check_exact_adam(run_adam.updated, p, exact, adam);
    }
}

TEST_CASE("training step: the mesh counts what each device sends, forwarded elements included") {
  // A line of 3, AllGather of 3 elements (one each): the ends send their own element inward once; the
  // middle sends its own both ways and forwards each end's element to the other end.
  std::vector<std::vector<double>> data(3, std::vector<double>(3, 0.0));
  for (int d = 0; d < 3; ++d) data[static_cast<size_t>(d)][static_cast<size_t>(d)] = 10 + d;
  const auto r = run_on(Topology{{3}, {false}, Direction::bi}, Request{scaling::Collective::all_gather, {0}, 3}, data);
  REQUIRE(r.sent_elements.size() == 3);
  CHECK(r.sent_elements[0] == 1);
  CHECK(r.sent_elements[1] == 4);
  CHECK(r.sent_elements[2] == 1);
  CHECK(r.total_link_elements == 6);
  for (const auto& v : data) CHECK(v == std::vector<double>{10, 11, 12});
}

TEST_CASE("training step: bytes each device sends per layer equal §5's table, (n−1)/n exact") {
  const auto shape = small_shape();
  const auto p = example_problem(shape, InitKind::integers, 3);
  const double B = static_cast<double>(shape.batch), D = static_cast<double>(shape.d_model), F = static_cast<double>(shape.d_ff);
  for (const auto& mesh : {torus({2, 4}), torus({4, 2}), torus({2, 2, 2})})
    for (Strategy s : {Strategy::dp, Strategy::fsdp, Strategy::tp, Strategy::fsdp_tp}) {
      CAPTURE(to_string(s));
      CAPTURE(mesh.shape[0]);
      const auto layout = layout_for(s, mesh);
      // X and Y as the book names them: the devices along the batch/FSDP axes and along the model axes.
      double X = 1, Y = 1;
      for (int a : layout.x_axes) X *= mesh.shape[static_cast<size_t>(a)];
      for (int a : layout.y_axes) Y *= mesh.shape[static_cast<size_t>(a)];
      const auto want = table_bytes_per_device(s, B, D, F, X, Y);
      const auto run = sharded_step(mesh, layout, p, Optimizer{});
      for (int l = 0; l < shape.layers; ++l) {
        const auto fwd = sent_elements(run, l, Pass::forward), bwd = sent_elements(run, l, Pass::backward);
        REQUIRE(fwd.size() == 8);
        for (size_t d = 0; d < fwd.size(); ++d) {
          CHECK(2 * fwd[d] == want.forward);  // bf16: 2 bytes per element
          CHECK(2 * bwd[d] == want.backward);
          // The table's compute column: 4BDF/N forward, 8BDF/N backward, N = X·Y devices.
          CHECK(run.flops_forward[static_cast<size_t>(l)][d] == 4 * B * D * F / (X * Y));
          CHECK(run.flops_backward[static_cast<size_t>(l)][d] == 8 * B * D * F / (X * Y));
        }
      }
    }
}

TEST_CASE("training step: DP with TP (weights replicated over X) exact, and its bytes") {
  // Not a row of the table: DP's AllReduce of the Y-sharded gradients (2·2DF/Y each) plus TP's activations.
  const auto shape = small_shape();
  const auto p = example_problem(shape, InitKind::integers, 7);
  const auto exact = integer_step(p);
  const auto mesh = torus({2, 4});
  const auto run = sharded_step(mesh, MeshLayout{{0}, {1}, false}, p, Optimizer{OptimizerKind::sgd, kLr});
  CHECK(run.replicas_agree);
  check_exact_sgd(run.updated, p, exact);
  const double B = 16, D = 8, F = 16, X = 2, Y = 4;
  for (double sent : sent_elements(run, 1, Pass::forward)) CHECK(2 * sent == 4 * B * D / X * (Y - 1) / Y);
  for (double sent : sent_elements(run, 1, Pass::backward))
    CHECK(2 * sent == 4 * B * D / X * (Y - 1) / Y + 2 * 2 * (2 * D * F / Y) * (X - 1) / X);
}

TEST_CASE("training step: the table's FSDP+MP backward 8BD/X is twice what the algorithm moves") {
  // X = 2 batch devices, Y = 4 model devices; the DF terms are isolated by the TP run's activation bytes.
  const auto shape = small_shape();
  const auto p = example_problem(shape, InitKind::integers, 3);
  const auto mesh = torus({2, 4});
  const auto run = sharded_step(mesh, layout_for(Strategy::fsdp_tp, mesh), p, Optimizer{});
  double activation_elements = 0;
  for (const auto& c : run.collectives)
    if (c.layer == 0 && c.pass == Pass::backward && (c.tensor == "dOut" || c.tensor == "dIn")) activation_elements += c.sent_elements[0];
  const double B = 16, D = 8, X = 2, Y = 4;
  CHECK(2 * activation_elements == 4 * B * D / X * (Y - 1) / Y);
  CHECK(2 * activation_elements * 2 == 8 * B * D / X * (Y - 1) / Y);
}

TEST_CASE("training step: Gaussian data, DP and FSDP within the reduction-order bound") {
  const MlpShape shape{3, 32, 16, 32};
  const auto p = example_problem(shape, InitKind::gaussian, 11);
  const auto ref = reference_step(p, Optimizer{OptimizerKind::sgd, kLr});
  const auto mag = gradient_magnitudes(p);
  for (Strategy s : {Strategy::dp, Strategy::fsdp}) {
    const auto mesh = torus({2, 4});
    const auto run = sharded_step(mesh, layout_for(s, mesh), p, Optimizer{OptimizerKind::sgd, kLr});
    CHECK(run.replicas_agree);
    CHECK(worst_against_bound(run.updated, ref.updated, mag, shape.batch) <= 1);
    CHECK(max_abs_difference(run.updated, ref.updated) < 1e-12);  // and it is rounding, not a slip
  }
}

TEST_CASE("training step: a layout that does not fit the mesh or the shapes is rejected") {
  const auto p = example_problem(small_shape(), InitKind::integers, 1);
  const auto mesh = torus({2, 4});
  CHECK_THROWS_AS(sharded_step(mesh, MeshLayout{{0}, {}, false}, p, Optimizer{}), std::invalid_argument);      // axis 1 unused
  CHECK_THROWS_AS(sharded_step(mesh, MeshLayout{{0, 1}, {1}, false}, p, Optimizer{}), std::invalid_argument);  // axis 1 twice
  CHECK_THROWS_AS(sharded_step(mesh, MeshLayout{{0, 2}, {1}, false}, p, Optimizer{}), std::invalid_argument);  // no axis 2
  const auto odd = example_problem(MlpShape{2, 12, 8, 16}, InitKind::integers, 1);  // 12 rows over 8 devices
  CHECK_THROWS_AS(sharded_step(mesh, layout_for(Strategy::dp, mesh), odd, Optimizer{}), std::invalid_argument);
  CHECK_THROWS_AS(layout_for(Strategy::fsdp_tp, torus({8})), std::invalid_argument);
  CHECK_THROWS_AS(example_problem(MlpShape{0, 4, 4, 4}, InitKind::integers, 1), std::invalid_argument);
  CHECK_THROWS_AS(example_problem(MlpShape{1, 1LL << 30, 1 << 20, 4}, InitKind::integers, 1), std::invalid_argument);
}

// ---- The pipeline (§5.1.5) ----

TEST_CASE("training pipeline: the corrected schedule gives the unsharded step bit for bit") {
  const MlpShape shape{4, 16, 8, 16};
  const auto p = example_problem(shape, InitKind::integers, 5);
  const auto exact = integer_step(p);
  for (int S : {1, 2, 4})
    for (int M : {1, 2, 4, 8, 16}) {
      CAPTURE(S);
      CAPTURE(M);
      for (const auto& topo : {Topology{{S}, {false}, Direction::bi}, Topology{{S}, {true}, Direction::bi}}) {
        const auto run = pipeline_step(topo, p, Optimizer{OptimizerKind::sgd, kLr}, PipelineOptions{M});
        CHECK(run.loss * 2 == static_cast<double>(exact.loss_times_2));
        check_exact_sgd(run.updated, p, exact);
        // Every boundary carries each row's activations forward and its gradient back, one hop each.
        const double bd = static_cast<double>(shape.batch * shape.d_model);
        for (int s = 0; s < S; ++s)
          CHECK(run.sent_elements[static_cast<size_t>(s)] == (s + 1 < S ? bd : 0) + (s > 0 ? bd : 0));
        CHECK(run.transfers == 2 * (S - 1) * M);
      }
    }
}

TEST_CASE("training pipeline: the bubble is (S − 1)/(M + S − 1)") {
  const MlpShape shape{8, 32, 8, 16};
  const auto p = example_problem(shape, InitKind::integers, 5);
  for (int S : {1, 2, 4, 8})
    for (int M : {1, 2, 4, 8, 32}) {
      const auto run = pipeline_step(Topology{{S}, {false}, Direction::bi}, p, Optimizer{}, PipelineOptions{M});
      // Fill and drain: M + S − 1 forward slots of 1 and as many backward slots of 2 (backward FLOPs are
      // twice the forward's), of which each stage is busy M of each.
      CHECK(run.makespan == doctest::Approx(3.0 * (M + S - 1)).epsilon(1e-15));
      CHECK(run.bubble_fraction == doctest::Approx(static_cast<double>(S - 1) / (M + S - 1)).epsilon(1e-12));
    }
}

TEST_CASE("training pipeline: Gaussian data with microbatches within the reduction-order bound, one microbatch exact") {
  const MlpShape shape{4, 32, 16, 64};
  const auto p = example_problem(shape, InitKind::gaussian, 13);
  const auto ref = reference_step(p, Optimizer{OptimizerKind::sgd, kLr});
  const auto mag = gradient_magnitudes(p);
  const Topology line{{4}, {false}, Direction::bi};
  CHECK(max_abs_difference(pipeline_step(line, p, Optimizer{OptimizerKind::sgd, kLr}, PipelineOptions{1}).updated, ref.updated) == 0);
  for (int M : {2, 4, 8}) {
    const auto run = pipeline_step(line, p, Optimizer{OptimizerKind::sgd, kLr}, PipelineOptions{M});
    CHECK(worst_against_bound(run.updated, ref.updated, mag, shape.batch) <= 1);
  }
}

TEST_CASE("training pipeline: the book's code as printed updates nothing, and with its loop fixed gets other weights") {
  const MlpShape shape{4, 16, 8, 16};
  const auto p = example_problem(shape, InitKind::integers, 5);
  const Topology line{{4}, {false}, Direction::bi};
  // range(0, num_layers, -1) is empty: no backward, no update, no gradient sent back.
  PipelineOptions as_printed{1, false, true};
  const auto printed = pipeline_step(line, p, Optimizer{OptimizerKind::sgd, kLr}, as_printed);
  CHECK(max_abs_difference(printed.updated, p.weights) == 0);
  CHECK(printed.transfers == 3);
  // The loop fixed but the vjp still taken at the layer's output: exactly the integer step linearised at each
  // layer's output, and far from the exact step.
  PipelineOptions loop_fixed{1, true, true};
  const auto wrong = pipeline_step(line, p, Optimizer{OptimizerKind::sgd, kLr}, loop_fixed);
  const auto at_output = exact_mlp::step(to_int(p), true);
  REQUIRE(static_cast<double>(at_output.largest) < exact_mlp::two_to_53());
  check_exact_sgd(wrong.updated, p, at_output);
  CHECK(max_abs_difference(wrong.updated, reference_step(p, Optimizer{OptimizerKind::sgd, kLr}).updated) > 1);
}

TEST_CASE("training pipeline: bad stage, layer or microbatch counts are rejected") {
  const auto p = example_problem(MlpShape{4, 16, 8, 16}, InitKind::integers, 5);
  CHECK_THROWS_AS(pipeline_step(Topology{{3}, {false}, Direction::bi}, p, Optimizer{}, PipelineOptions{1}), std::invalid_argument);
  CHECK_THROWS_AS(pipeline_step(Topology{{2}, {false}, Direction::bi}, p, Optimizer{}, PipelineOptions{3}), std::invalid_argument);
  CHECK_THROWS_AS(pipeline_step(Topology{{2}, {false}, Direction::bi}, p, Optimizer{}, PipelineOptions{0}), std::invalid_argument);
  CHECK_THROWS_AS(pipeline_step(Topology{{2, 2}, {false, false}, Direction::bi}, p, Optimizer{}, PipelineOptions{1}), std::invalid_argument);
  CHECK_THROWS_AS(pipeline_step(Topology{{4}, {true}, Direction::uni}, p, Optimizer{}, PipelineOptions{1}), std::invalid_argument);
}
