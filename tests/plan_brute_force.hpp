#pragma once
// A brute-force planner written from the cost model that lib/include/scaling/cost/planner.hpp documents,
// sharing no code with the library: every way to cut each fast axis into data × tensor × pipeline factors,
// every data × pipeline split of the slow axis, every ZeRO stage (within the slice, or across it), rule
// and microbatch count, each layout costed from the model's raw sizes (parameter counts worked out by hand
// for a gated, untied Transformer with two norms per layer and a final one), and the fastest that fits
// picked by a plain scan. Used by the planner's test and by chapter 6's independent checks.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <vector>

namespace testing::brute {

struct Model {
  double D, F, L, N, K, H, V;
};

struct Machine {
  std::vector<int> axes;
  std::vector<double> bw;  // bidirectional per chip per axis
  int groups;              // slices (pods, nodes) over the slow network
  double slow_bw, C, hbm, hbm_bw;
};

struct Best {
  double step = std::numeric_limits<double>::infinity(), bytes = 0;
  double fsdp = 0, tp = 0, pp = 0;
  unsigned long long evaluated = 0, fit = 0;
};

// Every parameter of the model, and of one layer.
inline double layer_params(const Model& m) {
  return 2 * m.D * m.N * m.H + 2 * m.D * m.K * m.H + 3 * m.D * m.F + 2 * m.D;  // Q, O; K, V; MLP; 2 norms
}
inline double all_params(const Model& m) { return m.L * layer_params(m) + 2 * m.V * m.D + m.D; }

inline std::vector<int> divisors(int n) {
  std::vector<int> d;
  for (int i = 1; i <= n; ++i)
    if (n % i == 0) d.push_back(i);
  return d;
}

// B tokens per step, context T, microbatch counts 1, 2, 4, … up to max_m, pipeline degrees up to max_pp
// (0: any).
inline Best plan(const Model& md, const Machine& mc, double B, double T, double max_m, double max_pp = 0) {
  const double D = md.D, F = md.F, L = md.L, N = md.N, K = md.K, H = md.H;
  const double layer = layer_params(md);
  const double other = 2 * md.V * D + D;                       // untied vocabulary matrices, final norm
  const double six_n = 6 * all_params(md);                     // 6 × every parameter (dense)
  const double attention_fwd = 4 * N * H * T * L;              // QKᵀ and PV per token
  const double layers_fwd = 2 * L * (layer - 2 * D) + attention_fwd;  // the layers' forward (norms: no FLOPs)
  struct Rule {
    double elements, flops, reruns;
  };
  // Input only (the forward rerun); the outputs of the big matmuls — O and W_out (D each), the two MLP
  // up-projections (F each), Q (N·H), K and V (K·H each) — with attention rerun; everything the backward
  // reads: the two norms' inputs and outputs (D each), Q and the attention output (N·H each), K and V, the
  // two up-projections and their gated product (F each).
  const double big_matmuls = 2 * D + 2 * F + N * H + 2 * K * H;
  const double everything = 4 * D + 3 * F + 2 * N * H + 2 * K * H;
  const std::vector<Rule> rules{{1 * D, six_n + layers_fwd, 1}, {big_matmuls, six_n + attention_fwd, 0}, {everything, six_n, 0}};
  Best best;
  const int A = static_cast<int>(mc.axes.size());
  std::vector<std::vector<std::array<int, 3>>> options(static_cast<size_t>(A));
  for (int i = 0; i < A; ++i)
    for (int d : divisors(mc.axes[static_cast<size_t>(i)]))
      for (int t : divisors(mc.axes[static_cast<size_t>(i)] / d))
        options[static_cast<size_t>(i)].push_back({d, t, mc.axes[static_cast<size_t>(i)] / d / t});
  std::vector<size_t> pick(static_cast<size_t>(A), 0);
  while (true) {
    for (int ds : divisors(mc.groups)) {
      const int ps = mc.groups / ds;
      double Xf = 1, Y = 1, Sf = 1, wd = 0, wt = 0, wp = 0;
      for (int i = 0; i < A; ++i) {
        const auto& o = options[static_cast<size_t>(i)][pick[static_cast<size_t>(i)]];
        const int used = (o[0] > 1) + (o[1] > 1) + (o[2] > 1);
        const double w = used ? mc.bw[static_cast<size_t>(i)] / used : 0;
        Xf *= o[0], Y *= o[1], Sf *= o[2];
        if (o[0] > 1) wd += w;
        if (o[1] > 1) wt += w;
        if (o[2] > 1) wp = wp == 0 ? w / 2 : std::min(wp, w / 2);
      }
      const double X = Xf * ds, S = Sf * ps, chips = X * Y * S;
      if (std::fmod(N, Y) != 0 || S > L || X > B || (max_pp > 0 && S > max_pp)) continue;
      const double lps = std::ceil(L / S), stage = lps * layer + other;
      for (int zero = 0; zero <= 3; ++zero)
        for (int all = 0; all < 2; ++all) {
          if (all && (zero == 0 || ds == 1)) continue;  // the same layout as all = 0
          const double Z = all ? X : Xf;                // ZeRO's group
          for (const auto& rule : rules)
            for (double m = 1; m <= max_m && X * m <= B; m *= 2) {
              if (std::fmod(B, m) != 0) continue;  // whole microbatches
              ++best.evaluated;
              const double b = B / (X * m);
              const double w_bytes = 2 * stage / Y, g_bytes = 2 * stage / Y, o_bytes = 8 * stage / Y;
              const double bytes = w_bytes / (zero == 3 ? Z : 1) + g_bytes / (zero >= 2 ? Z : 1) +
                                   o_bytes / (zero >= 1 ? Z : 1) +
                                   rule.elements * 2 * lps * b / Y * (S > 1 ? std::min(m, S) : 1);
              if (bytes > mc.hbm) continue;
              ++best.fit;
              const double math = rule.flops * B * (S * lps / L) / (chips * mc.C);
              const double hbm = m * (3 + rule.reruns) * w_bytes / mc.hbm_bw;
              const double busy = std::max(math, hbm) * (1 + (S - 1) / m);  // f/(1 − f) = (S − 1)/m
              double data = 0;
              if (Xf > 1) {
                const double one = (Xf - 1) / Xf * w_bytes / wd;  // one AllGather or ReduceScatter of the stage
                data = zero == 3 ? 3 * m * one : zero == 2 ? (m + 1) * one : 2 * one;
              }
              // Two TP blocks per layer, each an AllGather and a ReduceScatter of [B/X, D] forward and
              // backward, the forward pair again when the forward is rerun.
              const double tensor = Y > 1 ? lps * (8 + 4 * rule.reruns) * (Y - 1) / Y * 2 * (B / X) * D / wt : 0;
              const double pipe = 2 * 2 * (B / X) * D / Y;
              const double ici = std::max({data, tensor, Sf > 1 ? pipe / wp : 0.0});
              double dcn = ps > 1 ? pipe / mc.slow_bw : 0;
              if (ds > 1) {
                const double one = (ds - 1.0) / ds * (w_bytes / Xf) / mc.slow_bw;  // a chip's share, once
                dcn += !all ? 2 * one : zero == 3 ? 3 * m * one : zero == 2 ? (m + 1) * one : 2 * one;
              }
              const double step = std::max({busy, ici, dcn});
              if (step < best.step || (step == best.step && bytes < best.bytes)) {
                best.step = step, best.bytes = bytes;
                best.fsdp = X, best.tp = Y, best.pp = S;
              }
            }
        }
    }
    int i = 0;
    for (; i < A; ++i) {
      if (++pick[static_cast<size_t>(i)] < options[static_cast<size_t>(i)].size()) break;
      pick[static_cast<size_t>(i)] = 0;
    }
    if (i == A) break;
  }
  return best;
}

// A TPU v5p slice of `shape`, `pods` of them over DCN (§2.3: 4.59e14 FLOPs/s, 96 GB at 2.8e12 B/s,
// 1.8e11 B/s per link both ways; 2.5e10 B/s of DCN per host of 4 chips).
inline Machine v5p(std::vector<int> shape, int pods) {
  return {shape, std::vector<double>(shape.size(), 1.8e11), pods, 2.5e10 / 4, 4.59e14, 96e9, 2.8e12};
}

}  // namespace testing::brute
