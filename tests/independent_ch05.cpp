// Independent checks of chapter 5, written from the book's raw figures: model shapes typed in, parameter
// and byte counts multiplied out by hand, collectives counted step by step from the §5.1 algorithms, and
// bounds found by brute-force search over layouts and batch sizes rather than by the closed forms the
// library uses. Nothing here calls libscaling.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "registry.hpp"
#include "search.hpp"

namespace {
// TPU v5p (§2.3): bf16 and int8 FLOPs/s, one ICI link both ways, DCN per host, chips per host, HBM.
constexpr double kC = 4.59e14, kW = 2 * 9e10, kDcnHost = 2.5e10, kChipsPerHost = 4, kHbm = 96e9;
constexpr double kAlpha = kC / kW;
constexpr double kPod = 16 * 20 * 28;  // 8,960
constexpr double kCube = 16 * 16 * 16;

// LLaMA-2 13B (§5.3's table): L, D, F = 2.7·D, N = K, H, V. Every weight: per layer 3 MLP matrices,
// Q/K/V/O, two RMSNorm scales; untied vocabulary; a final norm.
constexpr double L13 = 40, D13 = 5120, F13 = 13824, N13 = 40, H13 = 128, V13 = 32000;
constexpr double kParams13 = L13 * (3 * D13 * F13 + 4 * D13 * N13 * H13 + 2 * D13) + 2 * V13 * D13 + D13;
// LLaMA-3 70B (§6.1's table), the same way with GQA (K = 8).
constexpr double L70 = 80, D70 = 8192, F70 = 28672, N70 = 64, K70 = 8, H70 = 128, V70 = 128256;
constexpr double kParams70 = L70 * (3 * D70 * F70 + 2 * D70 * (N70 + K70) * H70 + 2 * D70) + 2 * V70 * D70 + D70;

// Minimise f over X in [lo, hi] on a geometric grid, refined around the best point three times.
template <class Fn>
double argmin_grid(double lo, double hi, Fn f) {
  for (int round = 0; round < 6; ++round) {
    double best = lo, best_v = f(lo);
    const int n = 2000;
    for (int i = 0; i <= n; ++i) {
      const double x = lo * std::pow(hi / lo, double(i) / n);
      if (f(x) < best_v) best_v = f(x), best = x;
    }
    const double step = std::pow(hi / lo, 1.0 / n);
    lo = std::max(lo, best / step), hi = std::min(hi, best * step);
  }
  return std::sqrt(lo * hi);
}

// §5.1.4's forward-pass comms of FSDP + TP on N chips, in units of 4D/W: F·X/(N·M_X) + B/(X·M_Y),
// the two terms summed or the larger taken.
double mixed_comms(double B, double F, double N, double X, double M_X, double M_Y, bool summed) {
  const double fsdp = F * X / (N * M_X), tp = B / (X * M_Y);
  return summed ? fsdp + tp : std::max(fsdp, tp);
}
// The smallest B/N for which some (continuous) X makes the forward pass compute-bound: math B·F/(N·α)
// in the same units. Bisection on B, grid search on X.
double min_batch_per_chip_search(double F, double N, double M_X, double M_Y, bool summed) {
  auto comms_bound = [&](double per_chip) {
    const double B = per_chip * N;
    const double X = argmin_grid(1e-3, N, [&](double x) { return mixed_comms(B, F, N, x, M_X, M_Y, summed); });
    return mixed_comms(B, F, N, X, M_X, M_Y, summed) > B * F / (N * kAlpha);
  };
  return testing::bisect(1e-3, 1e5, comms_bound);
}

// The 16x16x16 split into X·Y with Y = 2^k: which axes each spans, counted by hand. Y up to 16 is a
// sub-ring of the first axis (X keeps the rest of it and the other two axes); up to 256 it takes the first
// axis and part of the second; beyond, part of the third. A group of one chip counts as one axis.
struct Split {
  double X, Y, m_x, m_y;
};
Split cube_split(double Y) {
  const double X = kCube / Y;
  double m_x = 0, m_y = 0;
  if (Y <= 1) {
    m_x = 3;
  } else if (Y <= 16) {
    m_y = 1, m_x = Y < 16 ? 3 : 2;
  } else if (Y <= 256) {
    m_y = 2, m_x = Y < 256 ? 2 : 1;
  } else {
    m_y = 3, m_x = Y < 4096 ? 1 : 0;
  }
  return {X, Y, std::max(1.0, m_x), std::max(1.0, m_y)};
}
// One §5 layer (In·W_in·W_out, bf16) under FSDP + TP, walked through the §5.1.4 algorithm: forward gathers
// W_in, W_out over X and In over Y, reduce-scatters Out over Y; backward gathers dOut over Y, W_out and
// W_in over X again, reduce-scatters both weight gradients over X and dIn over Y (In kept from the
// forward pass). A gathered or scattered array of V bytes costs V / (W · axes).
struct PassTimes {
  double math, x, y;
};
PassTimes pass_times(bool backward, double B, double D, double F, const Split& s) {
  const double weight = 2 * D * F / s.Y, act = 2 * B * D / s.X;
  const double weight_ops = backward ? 4 : 2;  // AG W_in, AG W_out (+ RS dW_in, RS dW_out)
  const double act_ops = 2;                    // AG In, RS Out / AG dOut, RS dIn
  const double matmuls = backward ? 4 : 2;
  return {matmuls * 2 * B * D * F / (kCube * kC), weight_ops * weight / (kW * s.m_x), act_ops * act / (kW * s.m_y)};
}
struct Best {
  double X, Y, t;
  bool compute_bound;
};
Best best_split(double B, double D, double F, bool summed) {
  Best best{0, 0, INFINITY, false};
  for (double Y = 1; Y <= kCube; Y *= 2) {
    const Split s = cube_split(Y);
    double t = 0;
    bool cb = true;
    for (bool bwd : {false, true}) {
      const auto p = pass_times(bwd, B, D, F, s);
      const double comms = summed ? p.x + p.y : std::max(p.x, p.y);
      t += std::max(p.math, comms);
      cb = cb && p.math >= comms;
    }
    if (t < best.t * (1 - 1e-12)) best = {s.X, s.Y, t, cb};
  }
  return best;
}
// FSDP over all three axes of the cube: weights gathered (2 forward, 4 backward ops) at 3 links' bandwidth.
bool fsdp_cube_compute_bound(double B, double D, double F) {
  for (double ops : {2.0, 4.0}) {
    const double math = ops * 2 * B * D * F / (kCube * kC);  // 2 or 4 matmuls
    if (math < ops * 2 * D * F / (3 * kW)) return false;
  }
  return true;
}
// Exercise 5.2's setup on LLaMA-2 13B: (2 + 4 + 4) bytes per weight, 2 · L · B · (D + 2F) of checkpoints,
// spread over the 4,096 chips.
double ex52_bytes_per_chip(double B) { return (10 * kParams13 + 2 * L13 * B * (D13 + 2 * F13)) / kCube; }
double roofline_step_s(double B) { return 6 * kParams13 * B / (kCube * kC); }
}  // namespace

// ---- memory and parameters ----
INDEPENDENT("ch5.dp-max-model.max_params_v5p", "96 GB / (2 + 4 + 4) bytes", 1e-12) { return kHbm / (2 + 4 + 4); }
INDEPENDENT("ex5.1.total_params", "LLaMA-2 13B's weights written out", 1e-12) { return kParams13; }
INDEPENDENT("ex5.2.total_with_grads", "(2 + 2 + 8) bytes × params + 2 · L · B · (D + 2F)", 1e-12) {
  return 12 * kParams13 + 2 * L13 * 16e6 * (D13 + 2 * F13);
}

// ---- FSDP and training time ----
INDEPENDENT("ch5.fsdp-llama.total_flops_with_attention", "3 × (2 × matmul weights + 4·L·N·H·8192) × 15e12", 1e-12) {
  const double matmul_weights = L70 * (3 * D70 * F70 + 2 * D70 * (N70 + K70) * H70) + V70 * D70;  // no embedding lookup
  return 3 * (2 * matmul_weights + 4 * L70 * N70 * H70 * 8192) * 15e12;
}
INDEPENDENT("ch5.multi-pod.days", "6 · params · 15e12 over 89,600 chips at 50% of 4.59e14, in days", 1e-12) {
  return 6 * kParams70 * 15e12 / (10 * kPod * kC * 0.5) / 86400;
}
INDEPENDENT("ch5.multi-pod.days_full_mfu", "the same at 100%", 1e-12) {
  return 6 * kParams70 * 15e12 / (10 * kPod * kC) / 86400;
}

// ---- tensor parallelism ----
INDEPENDENT("ch5.tp-limit.llama3_70b_max_y_from_times", "bisection on Y: 4BDF/(YC) = 4BD/W", 1e-9) {
  const double B = 1e5;
  return testing::bisect(1, 1e4, [&](double Y) { return 4 * B * D70 * F70 / (Y * kC) > 4 * B * D70 / kW; });
}
INDEPENDENT("ch5.tp-limit.gemma_7b_limit", "bisection on Y with Gemma 7B's d_ff = 24,576 (its config)", 1e-9) {
  return testing::bisect(1, 1e4, [&](double Y) { return 4 * 24576 / (Y * kC) > 4 / kW; });
}
INDEPENDENT("ch5.tp-limit.gemma_7b_max_y_gated", "bisection on Y: three [3072, 24576] matmuls vs the same 4BD", 1e-9) {
  const double D = 3072, F = 24576, B = 1e4;
  return testing::bisect(1, 1e4, [&](double Y) { return 3 * 2 * B * D * F / (Y * kC) > 4 * B * D / kW; });
}

// ---- mixed FSDP + TP ----
INDEPENDENT("ch5.xopt.x_opt", "grid search for the X minimising F·X/(N·M_X) + B/(X·M_Y), M_X = 2", 1e-6) {
  return argmin_grid(1, 64, [](double X) { return mixed_comms(48000, 32768, 64, X, 2, 1, true); });
}
INDEPENDENT("ch5.xopt.x_opt_one_axis_each", "grid search as above with M_X = M_Y = 1", 1e-6) {
  return argmin_grid(1, 64, [](double X) { return mixed_comms(48000, 32768, 64, X, 1, 1, true); });
}
INDEPENDENT("ch5.xopt.x_opt_formula", "grid search at B = 1e6, N = 4096, F = 14336, M_X = 1, M_Y = 2", 1e-6) {
  return argmin_grid(1, 4096, [](double X) { return mixed_comms(1e6, 14336, 4096, X, 1, 2, true); });
}
INDEPENDENT("ch5.mixed-bcrit.min_batch_per_chip_concurrent", "bisection on B/N, grid over X, axes concurrent", 1e-5) {
  return min_batch_per_chip_search(32768, 64, 2, 1, false);
}
INDEPENDENT("ch5.llama-pod-recipe.mixed_bound_real_f", "bisection on B/N, grid over X, summed, F = 28,672", 1e-5) {
  return min_batch_per_chip_search(F70, 8192, 2, 1, true);
}
INDEPENDENT("ch5.llama-pod-recipe.mixed_bound_f30k", "bisection on B/N, grid over X, summed, F = 30,000", 1e-5) {
  return min_batch_per_chip_search(30000, 8192, 2, 1, true);
}
INDEPENDENT("ch5.llama-pod-recipe.x_opt_3p5m", "grid search at B = 3.5M, N = 8,192, F = 30,000, M_X = M_Y = 1", 1e-6) {
  return argmin_grid(1, 8192, [](double X) { return mixed_comms(3.5e6, 30000, 8192, X, 1, 1, true); });
}
INDEPENDENT("ch5.llama-pod-recipe.min_batch_pod_summed", "8,192 × the searched summed bound", 1e-5) {
  return 8192 * min_batch_per_chip_search(30000, 8192, 2, 1, true);
}
INDEPENDENT("ch5.llama-pod-recipe.min_batch_pod_concurrent", "8,192 × the searched concurrent bound, M_X = M_Y = 1",
            1e-5) {
  return 8192 * min_batch_per_chip_search(30000, 8192, 1, 1, false);
}
INDEPENDENT("ch5.llama-pod-recipe.min_batch_recipe_split",
            "bisection on B at X = 1,024, Y = 8 on 8,192 chips: max(T_FSDP, T_MP) vs T_math in seconds", 1e-9) {
  const double D = 8192, F = 30000, N = 8192, X = 1024, Y = 8, M_X = 2, M_Y = 1;
  return testing::bisect(1, 1e9, [&](double B) {
    const double t_math = 4 * B * D * F / (N * kC);
    const double t_fsdp = 4 * D * F / (Y * kW * M_X), t_mp = 4 * B * D / (X * kW * M_Y);
    return std::max(t_fsdp, t_mp) > t_math;
  });
}
INDEPENDENT("ch5.llama-pod-recipe.bs_1p5m_compute_bound",
            "closed form at X = 1,024, Y = 8: F/(Y·M_X) + B/(X·M_Y) = B·F/(N·α) solved for B (axes summed)", 1e-9) {
  const double F = 30000, N = 8192, X = 1024, Y = 8, M_X = 2, M_Y = 1;
  return (F / (Y * M_X)) / (F / (N * kAlpha) - 1 / (X * M_Y));
}
INDEPENDENT("ch5.llama-pod-recipe.pod_is_8k", "16 × 20 × 28", 1e-12) { return kPod; }

// ---- Figure 16 ----
INDEPENDENT("ch5.fig16-threshold.threshold_expression", "4096 × the searched summed bound at F = 32,768", 1e-5) {
  return 4096 * min_batch_per_chip_search(32768, 4096, 2, 1, true);
}
INDEPENDENT("ch5.fig16-threshold.threshold_summed", "bisection on B: some power-of-two split compute-bound", 1e-6) {
  return testing::bisect(1e3, 1e9, [](double B) { return !best_split(B, 8192, 32768, true).compute_bound; });
}
INDEPENDENT("ch5.fig16-threshold.threshold_concurrent", "the same, axes concurrent", 1e-6) {
  return testing::bisect(1e3, 1e9, [](double B) { return !best_split(B, 8192, 32768, false).compute_bound; });
}
INDEPENDENT("ch5.fig16-threshold.fsdp_crossover_summed", "bisection: 4DF/(3W) against 4DF/(8·2W) + 4BD/(512W)", 1e-9) {
  const double D = 8192, F = 32768;
  return testing::bisect(1e3, 1e9, [&](double B) { return 4 * D * F / (3 * kW) > 4 * D * F / (16 * kW) + 4 * B * D / (512 * kW); });
}

INDEPENDENT("ch5.fig16-threshold.fsdp_best_above_6m", "closed form: F/3 = F/16 + B/512 solved for B, 512·F·(1/3 − 1/16)",
            1e-9) {
  return 512 * 32768 * (1.0 / 3 - 1.0 / 16);
}

// ---- DCN ----
INDEPENDENT("ch5.dcn-bound.pod_dcn_bw", "8,960 / 4 hosts × 2.5e10", 1e-12) { return kPod / kChipsPerHost * kDcnHost; }
INDEPENDENT("ch5.dcn-bound.pod_flops", "8,960 × 4.59e14", 1e-12) { return kPod * kC; }
INDEPENDENT("ch5.dcn-bound.min_batch_per_pod", "bisection on the per-pod batch: 8BDF/C_pod = 8DF/W_pod", 1e-9) {
  const double C_pod = kPod * kC, W_pod = kPod / kChipsPerHost * kDcnHost, D = 8192, F = 28672;
  return testing::bisect(1, 1e9, [&](double B) { return 8 * B * D * F / C_pod < 8 * D * F / W_pod; });
}
INDEPENDENT("ch5.dcn-bound.min_batch_per_v5e_pod", "8 v5e chips per host: 8 × 1.97e14 / 2.5e10", 1e-12) {
  return 8 * 1.97e14 / kDcnHost;
}
INDEPENDENT("ch5.summary-table.dcn_bound", "4 chips × 4.59e14 / 2.5e10 per host", 1e-12) {
  return kChipsPerHost * kC / kDcnHost;
}

// ---- the summary table's FSDP + MP backward row ----
INDEPENDENT("ch5.summary-table.mixed_comms_bwd", "the §5.1.4 backward collectives counted one by one", 1e-12) {
  const double B = 4e6, D = 8192, F = 28672, X = 512, Y = 8;
  const double ag_dout = 2 * B * D / X, rs_dw_out = 2 * D * F / Y, ag_w_out = 2 * D * F / Y;
  const double rs_dw_in = 2 * D * F / Y, ag_w_in = 2 * D * F / Y, rs_din = 2 * B * D / X;  // In kept from forward
  return ag_dout + rs_dw_out + ag_w_out + rs_dw_in + ag_w_in + rs_din;
}

// ---- exercises 5.3 and 5.4 ----
INDEPENDENT("ex5.3.sequences", "3e6 / 32,768", 1e-12) { return 3e6 / 32768; }
INDEPENDENT("ex5.3.fsdp_bytes_per_chip", "(10 · params + 2·L·B·(D + 2F)) / 4096", 1e-12) { return ex52_bytes_per_chip(3e6); }
INDEPENDENT("ex5.3.mixed_bound_concurrent", "bisection on B/N, grid over X, concurrent, F = 13,824", 1e-5) {
  return min_batch_per_chip_search(F13, 4096, 2, 1, false);
}
// The same six checks for each batch of exercises 5.3 and 5.4.
static const bool kLayoutChecks = [] {
  struct Case {
    const char* id;
    const char* suffix;
    double B;
  };
  for (const Case c : {Case{"ex5.3", "", 3e6}, Case{"ex5.4", "_1m", 1e6}, Case{"ex5.4", "_10m", 10e6}}) {
    const std::string p = std::string(c.id) + ".", s = c.suffix;
    const double B = c.B;
    testing::RegisterCheck(p + "fsdp_compute_bound" + s, "FSDP's gathers against 2 and 4 matmuls", 0,
                           [B] { return fsdp_cube_compute_bound(B, D13, F13) ? 1.0 : 0.0; });
    testing::RegisterCheck(p + "mixed_x" + s, "every power-of-two split, collectives counted by hand", 0,
                           [B] { return best_split(B, D13, F13, false).X; });
    testing::RegisterCheck(p + "mixed_y" + s, "every power-of-two split, collectives counted by hand", 0,
                           [B] { return best_split(B, D13, F13, false).Y; });
    testing::RegisterCheck(p + "mixed_compute_bound" + s, "that split's passes, math against the larger comms", 0,
                           [B] { return best_split(B, D13, F13, false).compute_bound ? 1.0 : 0.0; });
    testing::RegisterCheck(p + "bytes_per_chip" + s, "(10 · params + 2·L·B·(D + 2F)) / 4096", 1e-12,
                           [B] { return ex52_bytes_per_chip(B); });
    testing::RegisterCheck(p + "step_s" + s, "6 · params · B / (4096 · 4.59e14)", 1e-12,
                           [B] { return roofline_step_s(B); });
  }
  return true;
}();

// ---- ZeRO (the ZeRO paper's figure: Ψ = 7.5B, N_d = 64, K = 12) ----
INDEPENDENT("ch5.zero-memory.k", "fp32 moments (8) + fp32 master (4)", 1e-12) { return 4 + 4 + 4; }
INDEPENDENT("ch5.zero-memory.stage0_bytes", "(2 + 2 + 12) · 7.5e9", 1e-12) { return 16 * 7.5e9; }
INDEPENDENT("ch5.zero-memory.stage1_bytes", "(2 + 2) · Ψ + 12 · Ψ / 64", 1e-12) { return 4 * 7.5e9 + 12 * 7.5e9 / 64; }
INDEPENDENT("ch5.zero-memory.stage2_bytes", "2 · Ψ + (2 + 12) · Ψ / 64", 1e-12) { return 2 * 7.5e9 + 14 * 7.5e9 / 64; }
INDEPENDENT("ch5.zero-memory.stage3_bytes", "(2 + 2 + 12) · Ψ / 64", 1e-12) { return 16 * 7.5e9 / 64; }
INDEPENDENT("ch5.zero-memory.llama3_70b_zero3_per_chip", "(16 · params + 2·L·4e6·(D + 2F)) / 8,960", 1e-12) {
  return (16 * kParams70 + 2 * L70 * 4e6 * (D70 + 2 * F70)) / kPod;
}
