// Independent checks of the second reading for slips (issue 18): chapters/ch05/second_reading.cpp,
// chapters/ch07/second_reading.cpp and chapters/ch08/second_reading.cpp. Nothing here calls the library:
// times come from the §5 per-axis expressions with X found by search, gradients from finite differences,
// byte counts written out operand by operand, and the §8.2 code's facts recounted another way.
#include <algorithm>
#include <cmath>
#include <iterator>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "registry.hpp"

namespace {

// §5.1.4 on a v5p: C = 4.59e14 FLOPs/s, W = 1.8e11 B/s per link both ways, N = 64, F = 32,768, M_X = 2, M_Y = 1.
constexpr double kC = 4.59e14, kW = 1.8e11, kN = 64, kF = 32768, kD = 8192, kMX = 2, kMY = 1;

// T_math / (T_FSDP + T_MP) with X chosen by a ternary search on log X (not by the closed form X_opt).
double ratio_searched(double B) {
  auto comms = [&](double X) {
    const double Y = kN / X;
    return 2 * 2 * kD * kF / (Y * kW * kMX) + 2 * 2 * B * kD / (X * kW * kMY);
  };
  double lo = 0, hi = std::log(kN);
  for (int i = 0; i < 200; ++i) {
    const double a = lo + (hi - lo) / 3, b = hi - (hi - lo) / 3;
    if (comms(std::exp(a)) < comms(std::exp(b)))
      hi = b;
    else
      lo = a;
  }
  const double t_math = 2 * 2 * B * kD * kF / (kN * kC);
  return t_math / comms(std::exp((lo + hi) / 2));
}

}  // namespace

INDEPENDENT("ch5.ratio-exponent.ratio_b64k", "§5.1.4's per-axis times with X found by ternary search on log X", 1e-9) {
  return ratio_searched(65536);
}
INDEPENDENT("ch5.ratio-exponent.ratio_b256k", "the same search at B = 262,144", 1e-9) { return ratio_searched(262144); }
INDEPENDENT("ch5.ratio-exponent.ratio_exponent", "slope of log ratio against log B over B = 1e4 … 1e6 (X_opt ≤ 64 there), searched X", 1e-6) {
  // Least-squares slope over a wide range of batches, not the two points the chapter uses.
  std::vector<double> xs, ys;
  for (double B = 1e4; B <= 1e6; B *= 1.5) xs.push_back(std::log(B)), ys.push_back(std::log(ratio_searched(B)));
  double mx = 0, my = 0;
  for (size_t i = 0; i < xs.size(); ++i) mx += xs[i], my += ys[i];
  mx /= double(xs.size()), my /= double(ys.size());
  double sxy = 0, sxx = 0;
  for (size_t i = 0; i < xs.size(); ++i) sxy += (xs[i] - mx) * (ys[i] - my), sxx += (xs[i] - mx) * (xs[i] - mx);
  return sxy / sxx;
}
INDEPENDENT("ch5.ratio-exponent.caption_sqrt_b", "the same least-squares slope, read against Figure 15's √B", 1e-6) {
  std::vector<double> xs, ys;
  // From 16,384 to 1,048,576 tokens: beyond that X_opt would exceed the 64 chips (X = sqrt(B / 256)).
  for (double B = 16384; B <= 1048576; B *= 2) xs.push_back(std::log(B)), ys.push_back(std::log(ratio_searched(B)));
  return (ys.back() - ys.front()) / (xs.back() - xs.front());
}

INDEPENDENT_WITHIN("ch5.appendix-b-dwin.dwin_error",
                   "the true dW_in by finite differences of L = Σ G∘Out (linear in W_in, so a unit step is exact)", 0) {
  // The chapter's example (B = 4, D = F = 3, entries (seed + 3r + 5c + rc) mod 7 − 3), rebuilt here.
  const int B = 4, D = 3, F = 3;
  auto entry = [](int seed, int r, int c) { return double((seed + 3 * r + 5 * c + r * c) % 7 - 3); };
  std::vector<std::vector<double>> in(B, std::vector<double>(D)), w_in(D, std::vector<double>(F)),
      w_out(F, std::vector<double>(D)), g(B, std::vector<double>(D));
  for (int r = 0; r < B; ++r)
    for (int c = 0; c < D; ++c) in[r][c] = entry(1, r, c), g[r][c] = entry(4, r, c);
  for (int r = 0; r < D; ++r)
    for (int c = 0; c < F; ++c) w_in[r][c] = entry(2, r, c);
  for (int r = 0; r < F; ++r)
    for (int c = 0; c < D; ++c) w_out[r][c] = entry(3, r, c);
  auto tmp_of = [&](const std::vector<std::vector<double>>& w) {
    std::vector<std::vector<double>> t(B, std::vector<double>(F, 0));
    for (int b = 0; b < B; ++b)
      for (int f = 0; f < F; ++f)
        for (int d = 0; d < D; ++d) t[b][f] += in[b][d] * w[d][f];
    return t;
  };
  auto loss = [&](const std::vector<std::vector<double>>& w) {
    const auto t = tmp_of(w);
    double l = 0;
    for (int b = 0; b < B; ++b)
      for (int d = 0; d < D; ++d) {
        double out = 0;
        for (int f = 0; f < F; ++f) out += t[b][f] * w_out[f][d];
        l += g[b][d] * out;
      }
    return l;
  };
  const auto tmp = tmp_of(w_in);
  std::vector<std::vector<double>> d_tmp(B, std::vector<double>(F, 0));  // G · W_outᵀ
  for (int b = 0; b < B; ++b)
    for (int f = 0; f < F; ++f)
      for (int d = 0; d < D; ++d) d_tmp[b][f] += g[b][d] * w_out[f][d];
  double worst = 0;
  for (int i = 0; i < D; ++i)
    for (int f = 0; f < F; ++f) {
      auto w = w_in;
      w[i][f] += 1;
      const double grad = loss(w) - loss(w_in);  // exact: L is linear in W_in
      double printed = 0;                        // Σ_b Tmp[b][i]·dTmp[b][f], the printed contraction
      for (int b = 0; b < B; ++b) printed += tmp[b][i] * d_tmp[b][f];
      worst = std::max(worst, std::fabs(printed - grad));
    }
  return worst;
}

INDEPENDENT("ch5.solution52-batch.batch_tokens",
            "the batch Solution 5.2's own 4.2e13 implies: 4.2e13 / (2 · 40 · 5,120 · 6.4), to its 2 printed digits",
            0.05 / 4.2) {
  return 4.2e13 / (2 * 40 * 5120 * (1 + 2 * 2.7));
}

INDEPENDENT("ch7.intensity-denominator.restated_intensity",
            "FLOPs over bytes counted operand by operand at B = 240, D = 8192, F = 32768", 1e-12) {
  const double B = 240, D = 8192, F = 32768, bytes_per = 2;
  const double read_x = bytes_per * B * D, read_w = bytes_per * D * F, write_out = bytes_per * B * F;
  return 2 * B * D * F / (read_x + read_w + write_out);
}

namespace {
// §8.2's code: the largest batch that fits, solved in closed form from its memory rule (16 chips of 16e9
// bytes once rounded to a power of two; 163,840 bytes of int8 KV per token at 8,192 tokens; 70e9 bytes).
double largest_fitting_batch() { return std::floor((16 * 16e9 - 70e9) / (8192 * 2.0 * 8 * 128 * 80)); }
double max_idx_closed_form() { return std::floor((largest_fitting_batch() - 1) / 4); }  // candidates 1 + 4k
}  // namespace

INDEPENDENT("ch8.roofline-code.max_idx", "the largest whole batch that fits, then its position among 1 + 4k", 0) {
  return max_idx_closed_form();
}
INDEPENDENT("ch8.roofline-code.largest_fitting_candidate", "1 + 4 · max_idx, from the closed form", 0) {
  return 1 + 4 * max_idx_closed_form();
}
INDEPENDENT("ch8.roofline-code.largest_plotted_batch",
            "the first max_idx entries of 1, 2, 3, … end at max_idx (closed form)", 0) {
  return max_idx_closed_form();
}
INDEPENDENT("ch8.roofline-code.undefined_names",
            "set difference: names the code reads anywhere minus names it assigns anywhere (order ignored)", 0) {
  const std::set<std::string> assigned = {"num_chips", "param_size", "sequence_length", "hbm_bandwidth", "flops",
                                          "kv_cache_size", "min_topology", "get_max_batch_size", "max_idx",
                                          "batch_sizes", "kv_sizes", "kv_comms_time", "param_comms_time",
                                          "flops_time", "mlp_time", "attn_time", "latency", "throughput"};
  const std::set<std::string> read = {"bytes_per_param", "param_count", "num_chips", "sequence_length",
                                      "param_size", "hbm_bandwidth", "flops", "kv_cache_size", "min_topology",
                                      "get_max_batch_size", "max_idx", "batch_sizes", "kv_sizes", "kv_comms_time",
                                      "param_comms_time", "flops_time", "mlp_time", "attn_time", "latency"};
  std::vector<std::string> missing;
  std::set_difference(read.begin(), read.end(), assigned.begin(), assigned.end(), std::back_inserter(missing));
  return double(missing.size());
}

namespace {
// A stand-in with get_max_batch_size's signature: one parameter (max_num_chips, default 16).
double one_parameter(int max_num_chips) { return max_num_chips; }
template <class... Args>
constexpr bool accepts = std::is_invocable_v<decltype(&one_parameter), Args...>;
}  // namespace

INDEPENDENT("ch8.roofline-code.surplus_arguments",
            "a one-parameter C++ stand-in: how many of the call's 3 arguments it cannot accept", 0) {
  static_assert(accepts<int> && !accepts<int, int> && !accepts<int, int, double>);
  const int passed = 3;  // chip count, sequence length, parameter size
  int accepted = 0;
  if (accepts<int>) accepted = 1;
  if (accepts<int, int>) accepted = 2;
  if (accepts<int, int, double>) accepted = 3;
  return double(passed - accepted);
}
