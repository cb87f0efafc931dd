#include "scaling/sim/mlp_stack.hpp"

#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

namespace scaling::sim {

namespace {

// splitmix64: a fixed, portable stream of 64-bit values.
struct Rng {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  double uniform() { return (static_cast<double>(next() >> 11) + 0.5) / 9007199254740992.0; }  // in (0, 1)
  long long integer(long long lo, long long hi) {  // in [lo, hi]
    return lo + static_cast<long long>(next() % static_cast<std::uint64_t>(hi - lo + 1));
  }
  double normal() {  // Box–Muller, one value per pair of uniforms
    const double r = std::sqrt(-2.0 * std::log(uniform()));
    return r * std::cos(2.0 * std::numbers::pi * uniform());
  }
};

Block filled(long long rows, long long cols, Rng& rng, InitKind kind, long long int_range, double stddev) {
  Block b = zeros(rows, cols);
  for (double& v : b.values)
    v = kind == InitKind::integers ? static_cast<double>(rng.integer(-int_range, int_range)) : stddev * rng.normal();
  return b;
}

void require_values(const Block& b, const char* what) {
  if (!b.has_values()) throw std::invalid_argument(std::string(what) + ": the block holds no values");
}

}  // namespace

void validate(const MlpShape& s) {
  if (s.layers < 1 || s.batch < 1 || s.d_model < 1 || s.d_ff < 1)
    throw std::invalid_argument("MLP stack: layers, batch, d_model and d_ff must be at least 1");
  const double values = static_cast<double>(s.layers) * 2.0 * static_cast<double>(s.d_model) * static_cast<double>(s.d_ff) +
                        static_cast<double>(s.layers + 1) * static_cast<double>(s.batch) *
                            (2.0 * static_cast<double>(s.d_model) + static_cast<double>(s.d_ff));
  if (values > static_cast<double>(kMaxMlpValues))
    throw std::invalid_argument("MLP stack: " + std::to_string(static_cast<long long>(values)) +
                                " values to hold; at most " + std::to_string(kMaxMlpValues));
}

MlpProblem example_problem(const MlpShape& s, InitKind kind, std::uint64_t seed) {
  validate(s);
  Rng rng{seed};
  MlpProblem p;
  p.shape = s;
  p.x = filled(s.batch, s.d_model, rng, kind, 2, 1.0);
  p.target = filled(s.batch, s.d_model, rng, kind, 2, 1.0);
  for (int l = 0; l < s.layers; ++l) {
    p.weights.w_in.push_back(filled(s.d_model, s.d_ff, rng, kind, 1, 1.0 / std::sqrt(static_cast<double>(s.d_model))));
    p.weights.w_out.push_back(filled(s.d_ff, s.d_model, rng, kind, 1, 1.0 / std::sqrt(static_cast<double>(s.d_ff))));
  }
  return p;
}


double updated_weight(double w, double g, const Optimizer& opt) {
  if (opt.kind == OptimizerKind::sgd) return w - opt.lr * g;
  const double m = (1 - opt.beta1) * g, v = (1 - opt.beta2) * g * g;
  const double m_hat = m / (1 - opt.beta1), v_hat = v / (1 - opt.beta2);
  return w - opt.lr * m_hat / (std::sqrt(v_hat) + opt.eps);
}

void apply_update(Block& w, const Block& g, const Optimizer& opt) {
  if (w.rows != g.rows || w.cols != g.cols) throw std::invalid_argument("apply_update: weight and gradient shapes differ");
  require_values(w, "apply_update");
  require_values(g, "apply_update");
  for (size_t i = 0; i < w.values.size(); ++i) w.values[i] = updated_weight(w.values[i], g.values[i], opt);
}

Block matmul(const Block& a, const Block& b) {
  Block c = zeros(a.rows, b.cols);
  multiply_add(a, b, c);  // i-k-j: each c[i][j] sums over k in order
  return c;
}

Block matmul_tn(const Block& a, const Block& b) {
  if (a.rows != b.rows) throw std::invalid_argument("matmul_tn: the two operands have different row counts");
  require_values(a, "matmul_tn");
  require_values(b, "matmul_tn");
  Block c = zeros(a.cols, b.cols);
  for (long long n = 0; n < a.rows; ++n)  // the contraction outermost: each c[p][q] sums over n in order
    for (long long p = 0; p < a.cols; ++p) {
      const double x = a.at(n, p);
      double* out = c.values.data() + p * c.cols;
      const double* row = b.values.data() + n * b.cols;
      for (long long q = 0; q < b.cols; ++q) out[q] += x * row[q];
    }
  return c;
}

Block matmul_nt(const Block& a, const Block& b) {
  if (a.cols != b.cols) throw std::invalid_argument("matmul_nt: the two operands have different column counts");
  require_values(a, "matmul_nt");
  require_values(b, "matmul_nt");
  Block c = zeros(a.rows, b.rows);
  for (long long i = 0; i < a.rows; ++i)
    for (long long j = 0; j < b.rows; ++j) {
      double s = 0;
      for (long long k = 0; k < a.cols; ++k) s += a.at(i, k) * b.at(j, k);
      c.at(i, j) = s;
    }
  return c;
}

Block relu_backward(const Block& d_h, const Block& tmp) {
  if (d_h.rows != tmp.rows || d_h.cols != tmp.cols) throw std::invalid_argument("relu_backward: shapes differ");
  Block d = d_h;
  for (size_t i = 0; i < d.values.size(); ++i)
    if (!(tmp.values[i] > 0)) d.values[i] = 0;
  return d;
}

LayerForward layer_forward(const Block& in, const Block& w_in, const Block& w_out) {
  LayerForward f;
  f.tmp = matmul(in, w_in);
  f.h = f.tmp;
  relu(f.h);
  f.out = matmul(f.h, w_out);
  return f;
}

LayerBackward layer_backward(const Block& in, const LayerForward& fwd, const Block& w_in, const Block& w_out,
                             const Block& d_out) {
  LayerBackward b;
  b.d_w_out = matmul_tn(fwd.h, d_out);                      // dW_out[F, D] = H ·_B dOut
  const Block d_tmp = relu_backward(matmul_nt(d_out, w_out), fwd.tmp);  // dTmp = (dOut ·_D W_out) ⊙ [Tmp > 0]
  b.d_w_in = matmul_tn(in, d_tmp);                          // dW_in[D, F] = In ·_B dTmp
  b.d_in = matmul_nt(d_tmp, w_in);                          // dIn[B, D] = dTmp ·_F W_in
  return b;
}

double half_squared_error(const Block& out, const Block& target) {
  if (out.rows != target.rows || out.cols != target.cols) throw std::invalid_argument("loss: shapes differ");
  double s = 0;
  for (size_t i = 0; i < out.values.size(); ++i) {
    const double e = out.values[i] - target.values[i];
    s += e * e;
  }
  return s / 2;
}

Block loss_gradient(const Block& out, const Block& target) {
  if (out.rows != target.rows || out.cols != target.cols) throw std::invalid_argument("loss: shapes differ");
  Block g = out;
  for (size_t i = 0; i < g.values.size(); ++i) g.values[i] -= target.values[i];
  return g;
}

StepOutput reference_step(const MlpProblem& p, const Optimizer& opt) {
  validate(p.shape);
  const int L = p.shape.layers;
  std::vector<Block> inputs{p.x};
  std::vector<LayerForward> saved;
  for (int l = 0; l < L; ++l) {
    saved.push_back(layer_forward(inputs.back(), p.weights.w_in[static_cast<size_t>(l)], p.weights.w_out[static_cast<size_t>(l)]));
    inputs.push_back(saved.back().out);
  }
  StepOutput s;
  s.loss = half_squared_error(inputs.back(), p.target);
  s.grads.w_in.resize(static_cast<size_t>(L));
  s.grads.w_out.resize(static_cast<size_t>(L));
  Block d = loss_gradient(inputs.back(), p.target);
  for (int l = L - 1; l >= 0; --l) {
    const auto i = static_cast<size_t>(l);
    auto b = layer_backward(inputs[i], saved[i], p.weights.w_in[i], p.weights.w_out[i], d);
    s.grads.w_in[i] = std::move(b.d_w_in);
    s.grads.w_out[i] = std::move(b.d_w_out);
    d = std::move(b.d_in);
  }
  s.updated = p.weights;
  for (size_t i = 0; i < static_cast<size_t>(L); ++i) {
    apply_update(s.updated.w_in[i], s.grads.w_in[i], opt);
    apply_update(s.updated.w_out[i], s.grads.w_out[i], opt);
  }
  return s;
}

double max_abs_difference(const MlpWeights& a, const MlpWeights& b) {
  if (a.w_in.size() != b.w_in.size() || a.w_out.size() != b.w_out.size())
    throw std::invalid_argument("max_abs_difference: different layer counts");
  double m = 0;
  auto over = [&](const std::vector<Block>& x, const std::vector<Block>& y) {
    for (size_t l = 0; l < x.size(); ++l) {
      if (x[l].rows != y[l].rows || x[l].cols != y[l].cols) throw std::invalid_argument("max_abs_difference: shapes differ");
      for (size_t i = 0; i < x[l].values.size(); ++i) m = std::max(m, std::fabs(x[l].values[i] - y[l].values[i]));
    }
  };
  over(a.w_in, b.w_in);
  over(a.w_out, b.w_out);
  return m;
}

}  // namespace scaling::sim
