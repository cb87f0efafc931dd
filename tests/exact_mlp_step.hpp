#pragma once
// For the executed checks of chapter 5: §5's MLP stack and one SGD step in 128-bit integers, written from
// the definitions and sharing no code with the library.
//   layer: Tmp = In·W_in, H = max(Tmp, 0), Out = H·W_out; loss ½·Σ(Out − Target)², so dOut = Out − Target;
//   backward: dW_out = Hᵀ·dOut, dTmp = (dOut·W_outᵀ) where Tmp > 0 else 0, dW_in = Inᵀ·dTmp, dIn = dTmp·W_inᵀ.
// The whole-number example data is regenerated here from its documented recipe (sim/mlp_stack.hpp):
// splitmix64 from the seed; each value is lo + (next() mod (hi − lo + 1)), drawn row by row for x and the
// target ([B, D], from −2 to 2), then for each layer W_in ([D, F]) and W_out ([F, D]), from −1 to 1.
#include <algorithm>
#include <cstdint>
#include <vector>

namespace exact_mlp {

__extension__ typedef __int128 Int;  // products of two values below 2^53 fit
using Mat = std::vector<std::vector<Int>>;

struct Problem {
  int layers = 0;
  long long batch = 0, d_model = 0, d_ff = 0;
  Mat x, target;
  std::vector<Mat> w_in, w_out;
};

inline Problem integer_example(int layers, long long batch, long long d_model, long long d_ff, std::uint64_t seed) {
  std::uint64_t state = seed;
  auto next = [&state] {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  };
  auto draw = [&](long long rows, long long cols, long long range) {
    Mat m(static_cast<size_t>(rows), std::vector<Int>(static_cast<size_t>(cols)));
    for (auto& r : m)
      for (auto& v : r) v = -range + static_cast<Int>(next() % static_cast<std::uint64_t>(2 * range + 1));
    return m;
  };
  Problem p{layers, batch, d_model, d_ff, {}, {}, {}, {}};
  p.x = draw(batch, d_model, 2);
  p.target = draw(batch, d_model, 2);
  for (int l = 0; l < layers; ++l) {
    p.w_in.push_back(draw(d_model, d_ff, 1));
    p.w_out.push_back(draw(d_ff, d_model, 1));
  }
  return p;
}

struct Step {
  std::vector<Mat> grad_in, grad_out;  // per layer, summed over the batch
  Int loss_times_2 = 0;
  Int largest = 0;  // the largest magnitude of any sum formed: below 2^53 means doubles hold it exactly
};

// c = a·b with a and/or b read transposed; records the largest magnitude.
inline Mat product(const Mat& a, bool ta, const Mat& b, bool tb, Int& largest) {
  const size_t m = ta ? a[0].size() : a.size(), k = ta ? a.size() : a[0].size(), n = tb ? b.size() : b[0].size();
  Mat c(m, std::vector<Int>(n));
  for (size_t i = 0; i < m; ++i)
    for (size_t j = 0; j < n; ++j) {
      Int s = 0;
      for (size_t q = 0; q < k; ++q) s += (ta ? a[q][i] : a[i][q]) * (tb ? b[j][q] : b[q][j]);
      largest = std::max(largest, s < 0 ? -s : s);
      c[i][j] = s;
    }
  return c;
}

// One step. `linearize_at_output`: the backward pass of layer i re-runs the layer from its output instead of
// its input and differentiates there (what §5.1.5's printed jax.vjp call does).
inline Step step(const Problem& p, bool linearize_at_output = false) {
  const size_t L = static_cast<size_t>(p.layers);
  Step s;
  auto forward = [&](const Mat& in, size_t l, Mat& tmp, Mat& h) {
    tmp = product(in, false, p.w_in[l], false, s.largest);
    h = tmp;
    for (auto& r : h)
      for (auto& v : r) v = v > 0 ? v : 0;
    return product(h, false, p.w_out[l], false, s.largest);
  };
  std::vector<Mat> ins{p.x}, tmps(L), hs(L);
  for (size_t l = 0; l < L; ++l) ins.push_back(forward(ins[l], l, tmps[l], hs[l]));
  Mat d = ins.back();
  for (size_t i = 0; i < d.size(); ++i)
    for (size_t j = 0; j < d[i].size(); ++j) {
      d[i][j] -= p.target[i][j];
      s.loss_times_2 += d[i][j] * d[i][j];
    }
  s.grad_in.resize(L);
  s.grad_out.resize(L);
  for (size_t l = L; l-- > 0;) {
    Mat in = ins[l], tmp = tmps[l], h = hs[l];
    if (linearize_at_output) {
      in = ins[l + 1];
      forward(in, l, tmp, h);
    }
    s.grad_out[l] = product(h, true, d, false, s.largest);
    Mat dt = product(d, false, p.w_out[l], true, s.largest);
    for (size_t i = 0; i < dt.size(); ++i)
      for (size_t j = 0; j < dt[i].size(); ++j)
        if (tmp[i][j] <= 0) dt[i][j] = 0;
    s.grad_in[l] = product(in, true, dt, false, s.largest);
    d = product(dt, false, p.w_in[l], true, s.largest);
  }
  return s;
}

inline double two_to_53() { return 9007199254740992.0; }

}  // namespace exact_mlp
