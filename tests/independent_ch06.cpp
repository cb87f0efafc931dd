// Independent checks of chapter 6 and the CS336 items. Nothing here calls the library: parameter counts
// are written out from the configs (gated MLP, untied embeddings, two RMSNorms per layer and a final one),
// memory and time from bytes per element and the book's raw figures, the §5.1.4 bounds from their
// algebra, and the planner's answers from the brute-force enumeration of plan_brute_force.hpp.
#include <algorithm>
#include <cmath>

#include "plan_brute_force.hpp"
#include "registry.hpp"

namespace {

constexpr double kC = 4.59e14, kW = 1.8e11, kHbm = 96e9, kPod = 8960, kDay = 86400, kYear = 365 * kDay;
constexpr double kBatch = 4194304, kTokens = 15e12;

// LLaMA-3 70B and LLaMA-3.1 405B (their HuggingFace configs).
constexpr testing::brute::Model k70{8192, 28672, 80, 64, 8, 128, 128256};
constexpr testing::brute::Model k405{16384, 53248, 126, 128, 8, 128, 128256};

double params(const testing::brute::Model& m) { return testing::brute::all_params(m); }

// §5.1.4 in units of 4D/W: the forward pass of X × Y FSDP × TP on N chips, comms over FLOPs, with the
// book's axis counts on a 3-axis slice (pure FSDP or pure TP: all 3 axes; both: 2 for X, 1 for Y).
double book_ratio(double B, double F, double X, double Y, double alpha) {
  const double N = X * Y;
  const double mx = Y == 1 ? 3 : 2, my = X == 1 ? 3 : 1;
  const double comms = (X > 1 ? F / (Y * mx) : 0) + (Y > 1 ? B / (X * my) : 0);
  return comms / (B * F / (N * alpha));
}
// The least ratio over whole layouts X·Y = N with Y dividing the heads (and N).
double best_book_ratio(double B, double F, double N, double heads) {
  double best = INFINITY;
  for (double y = 1; y <= N; ++y)
    if (std::fmod(N, y) == 0 && std::fmod(heads, y) == 0) best = std::min(best, book_ratio(B, F, N / y, y, kC / kW));
  return best;
}

const testing::brute::Best& four_pods() {
  static const auto b = testing::brute::plan(k70, testing::brute::v5p({16, 20, 28}, 4), kBatch, 4096, 256);
  return b;
}
const testing::brute::Best& eight_pods() {
  static const auto b =
      testing::brute::plan(k405, testing::brute::v5p({16, 20, 28}, 8), 16.0 * 1024 * 1024, 4096, 256);
  return b;
}

// CS336's XXL: 126 blocks of W_in[16384, 53248] and W_out[53248, 16384].
constexpr double kXD = 16384, kXF = 53248, kXL = 126, kXC = 4.6e14, kXW = 1.8e11;
constexpr double kXParams = kXL * 2 * kXD * kXF;
constexpr double kXAct = kXL * (kXD + kXF) * 2;  // bf16 input and hidden of every block, per token
double xxl_device(double n, double b) { return 16 * kXParams / n + kXAct * b / 2 + kXAct * b / 2 / n; }
double xxl_fewest(double b) {
  // (16P + a·b/2) / (95e9 − a·b/2) ≤ N, solved for the least whole N.
  return std::ceil((16 * kXParams + kXAct * b / 2) / (95e9 - kXAct * b / 2));
}
// FSDP 16 × TP 4 forward pass, in units of 4D/W: F/(Y·M_X)·r_x + B/(X·M_Y)·r_y against B·F/(N·α).
double xxl_batch(bool exact, bool summed) {
  const double X = 16, Y = 4, N = 64, alpha = kXC / kXW;
  const double rx = exact ? 15.0 / 16 : 1, ry = exact ? 3.0 / 4 : 1;
  const double fsdp = kXF / (Y * 2) * rx, per_token_tp = ry / (X * 1), per_token_math = kXF / (N * alpha);
  return summed ? fsdp / (per_token_math - per_token_tp) : fsdp / per_token_math;
}

}  // namespace

// ---- §6.2 -----------------------------------------------------------------------------------------
INDEPENDENT("ch6.params.ffw_params", "3·D·F·L", 1e-12) { return 3.0 * 8192 * 28672 * 80; }
INDEPENDENT("ch6.params.total_params", "all tensors of the HF config written out", 1e-12) { return params(k70); }
INDEPENDENT("ch6.params.mlp_fraction", "3·D·F·L over the total", 1e-12) { return 3.0 * 8192 * 28672 * 80 / params(k70); }
INDEPENDENT("ch6.flops-per-token.exact_over_six_n", "forward matmuls + 4·N·H·T·L attention, tripled, over 6N", 1e-12) {
  const double D = 8192, F = 28672, L = 80, N = 64, K = 8, H = 128, V = 128256, T = 4096;
  const double fwd = 2 * L * (3 * D * F + 2 * D * N * H + 2 * D * K * H) + 4 * N * H * T * L + 2 * V * D;
  return 3 * fwd / (6 * params(k70));
}
INDEPENDENT("ch6.flops-per-token.s_per_token", "6N / 4.59e14", 1e-12) { return 6 * params(k70) / kC; }
INDEPENDENT("ch6.total-flops.years_one_chip", "6N·15e12 / 4.59e14 in 365-day years", 1e-12) {
  return 6 * params(k70) * kTokens / kC / kYear;
}
INDEPENDENT("ch6.pod-train-time.time_s", "6N·15e12 / (8960 · 4.59e14 · 0.4)", 1e-12) {
  return 6 * params(k70) * kTokens / (kPod * kC * 0.4);
}
INDEPENDENT("ch6.pod-train-time.days", "the same in days", 1e-12) {
  return 6 * params(k70) * kTokens / (kPod * kC * 0.4) / kDay;
}
INDEPENDENT("ch6.min-chips.checkpoint_bytes", "2 bytes · 8192 · 4e6 · 4 · 80", 1e-12) { return 2.0 * 8192 * 4e6 * 4 * 80; }
INDEPENDENT("ch6.min-chips.total_bytes", "2N + 8N + checkpoints", 1e-12) {
  return 10 * params(k70) + 2.0 * 8192 * 4e6 * 4 * 80;
}
INDEPENDENT("ch6.min-chips.min_chips", "ceil(total / 96e9)", 1e-12) {
  return std::ceil((10 * params(k70) + 2.0 * 8192 * 4e6 * 4 * 80) / kHbm);
}
INDEPENDENT("ch6.min-chips.days_on_min_chips", "6N·15e12 / (226 · 4.59e14 · 0.4)", 1e-12) {
  return 6 * params(k70) * kTokens / (226 * kC * 0.4) / kDay;
}
INDEPENDENT("ch6.min-chips.nearly_four_years", "6N·15e12 / (226 · C · 0.4) in 365-day years", 1e-12) {
  return 6 * params(k70) * kTokens / (226 * kC * 0.4) / kYear;
}
INDEPENDENT("ch6.min-chips.total_with_grads", "12 bytes per parameter + checkpoints", 1e-12) {
  return 12 * params(k70) + 2.0 * 8192 * 4e6 * 4 * 80;
}
INDEPENDENT("ch6.per-chip-memory.per_chip_12_checkpoints", "(10N + 2·8192·4e6·12·80) / 8960", 1e-12) {
  return (10 * params(k70) + 2.0 * 8192 * 4e6 * 12 * 80) / kPod;
}
INDEPENDENT("ch6.per-chip-memory.hbm_fraction", "per chip over 96e9", 1e-12) {
  return (10 * params(k70) + 2.0 * 8192 * 4e6 * 4 * 80) / kPod / kHbm;
}

// ---- §6.3 -----------------------------------------------------------------------------------------
INDEPENDENT("ch6.fsdp-seq.comms_over_math", "(α/3) / (B/N)", 1e-12) { return (kC / kW / 3) / (kBatch / kPod); }
INDEPENDENT("ch6.mixed-fsdp-tp.mixed_min_batch", "2·α²/F", 1e-12) { return 2 * std::pow(kC / kW, 2) / 28672; }
INDEPENDENT("ch6.mixed-fsdp-tp.mixed_min_batch_concurrent", "at X_opt each axis takes sqrt(BF/(2N)): α²/(2F)", 1e-12) {
  return std::pow(kC / kW, 2) / (2 * 28672);
}
namespace {
// The compute-equals-comms X by bisection on the upper branch (X between X_opt and N), M_X = 2, M_Y = 1.
double bisect_root(double B, double F, double N, double alpha) {
  auto excess = [&](double X) { return F * X / (N * 2) + B / X - B * F / (N * alpha); };  // comms − FLOPs
  double lo = std::sqrt(B * 2 * N / F), hi = N;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (excess(mid) < 0 ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}
}  // namespace
INDEPENDENT("ch6.mixed-fsdp-tp.x_fsdp", "bisection of comms = FLOPs, B = 4.19e6", 1e-9) {
  return bisect_root(4.19e6, 28672, kPod, 2550);
}
INDEPENDENT("ch6.mixed-fsdp-tp.root_term", "the bisected root minus B/α", 1e-8) {
  return bisect_root(4.19e6, 28672, kPod, 2550) - 4.19e6 / 2550;
}
INDEPENDENT("ch6.mixed-fsdp-tp.x_fsdp_exact_batch", "bisection, B = 4·2^20", 1e-9) {
  return bisect_root(kBatch, 28672, kPod, kC / kW);
}
INDEPENDENT("ch6.mixed-fsdp-tp.x_opt", "scan of the comms over X for its minimum (ternary search)", 1e-6) {
  auto comms = [](double X) { return 28672 * X / (kPod * 2) + kBatch / X; };
  double lo = 1, hi = kPod;
  for (int i = 0; i < 300; ++i) {
    const double a = lo + (hi - lo) / 3, b = hi - (hi - lo) / 3;
    (comms(a) < comms(b) ? hi : lo) = comms(a) < comms(b) ? b : a;
  }
  return 0.5 * (lo + hi);
}
INDEPENDENT("ch6.mixed-fsdp-tp.pod_best_comms_over_math", "every whole X·Y = 8960, Y | 64, by §5.1.4", 1e-12) {
  return best_book_ratio(kBatch, 28672, kPod, 64);
}
INDEPENDENT("ch6.mixed-fsdp-tp.pod_compute_bound", "the same least ratio", 1e-12) {
  return best_book_ratio(kBatch, 28672, kPod, 64);
}
INDEPENDENT("ch6.mixed-fsdp-tp.takeaway_comms_over_math", "§5.1.4 for X = 2048, Y = 4, N = 8192", 1e-12) {
  return (28672 / (4 * 2.0) + kBatch / 2048.0) / (kBatch * 28672 / (8192 * kC / kW));
}
INDEPENDENT("ch6.mixed-fsdp-tp.x_root", "bisection at the second point", 1e-9) {
  return bisect_root(16.0 * 1024 * 1024, 53248, 16384, 2000);
}

// ---- Exercise 6.1 ---------------------------------------------------------------------------------
INDEPENDENT("ex6.1.per_chip_batch", "B over 4·8960", 1e-12) { return kBatch / (4 * kPod); }
INDEPENDENT("ex6.1.dcn_min_batch_per_pod", "8960·C over 2240 hosts · 2.5e10", 1e-12) {
  return kPod * kC / (kPod / 4 * 2.5e10);
}
INDEPENDENT("ex6.1.per_pod_batch", "B / 4", 1e-12) { return kBatch / 4; }
INDEPENDENT("ex6.1.per_chip_over_mixed_bound", "(B/35840) / (2α²/F)", 1e-12) {
  return kBatch / (4 * kPod) / (2 * std::pow(kC / kW, 2) / 28672);
}
INDEPENDENT("ex6.1.book_comms_over_math", "every whole layout of a pod at B/4, by §5.1.4", 1e-12) {
  return best_book_ratio(kBatch / 4, 28672, kPod, 64);
}
INDEPENDENT("ex6.1.book_days", "6N·15e12 / (35840·C·0.4) × the ratio", 1e-12) {
  return 6 * params(k70) * kTokens / (4 * kPod * kC * 0.4) * best_book_ratio(kBatch / 4, 28672, kPod, 64) / kDay;
}
INDEPENDENT("ex6.1.plan_configs", "brute-force enumeration", 0) { return static_cast<double>(four_pods().evaluated); }
INDEPENDENT("ex6.1.plan_step_s", "brute-force enumeration", 1e-12) { return four_pods().step; }
INDEPENDENT("ex6.1.plan_mfu", "6N·B over chips·C·step of the brute force", 1e-12) {
  return 6 * params(k70) * kBatch / (4 * kPod * kC * four_pods().step);
}
INDEPENDENT("ex6.1.plan_days", "15e12/B steps of the brute force's best", 1e-12) {
  return kTokens / kBatch * four_pods().step / kDay;
}

// ---- Exercise 6.2 ---------------------------------------------------------------------------------
INDEPENDENT("ex6.2.total_params", "all tensors of the HF config written out", 1e-12) { return params(k405); }
INDEPENDENT("ex6.2.mlp_params", "3·D·F·L", 1e-12) { return 3.0 * 16384 * 53248 * 126; }
INDEPENDENT("ex6.2.flops_per_token", "6N", 1e-12) { return 6 * params(k405); }
INDEPENDENT("ex6.2.total_flops", "6N · 15e12", 1e-12) { return 6 * params(k405) * kTokens; }
INDEPENDENT("ex6.2.per_chip_batch", "16·2^20 / 71,680", 1e-12) { return 16.0 * 1024 * 1024 / (8 * kPod); }
INDEPENDENT("ex6.2.mixed_min_batch", "2α²/F", 1e-12) { return 2 * std::pow(kC / kW, 2) / 53248; }
INDEPENDENT("ex6.2.days_at_40_mfu", "6N·15e12 / (71680·C·0.4)", 1e-12) {
  return 6 * params(k405) * kTokens / (8 * kPod * kC * 0.4) / kDay;
}
INDEPENDENT("ex6.2.plan_configs", "brute-force enumeration", 0) { return static_cast<double>(eight_pods().evaluated); }
INDEPENDENT("ex6.2.plan_step_s", "brute-force enumeration", 1e-12) { return eight_pods().step; }
INDEPENDENT("ex6.2.plan_mfu", "6N·B over chips·C·step of the brute force", 1e-12) {
  return 6 * params(k405) * 16.0 * 1024 * 1024 / (8 * kPod * kC * eight_pods().step);
}
INDEPENDENT("ex6.2.plan_days", "15e12/B steps of the brute force's best", 1e-12) {
  return kTokens / (16.0 * 1024 * 1024) * eight_pods().step / kDay;
}

// ---- CS336 ----------------------------------------------------------------------------------------
INDEPENDENT("cs336.a.master_bytes", "4 bytes · 126 · 2 · D · F", 1e-12) { return 4 * kXParams; }
INDEPENDENT("cs336.a.grads_bytes", "4 bytes per parameter", 1e-12) { return 4 * kXParams; }
INDEPENDENT("cs336.a.optimizer_bytes", "2 moments × 4 bytes", 1e-12) { return 8 * kXParams; }
INDEPENDENT("cs336.a.state_bytes", "16 bytes per parameter", 1e-12) { return 16 * kXParams; }
INDEPENDENT("cs336.a.activation_bytes_per_token", "2 bytes · 126 · (D + F)", 1e-12) { return kXAct; }
INDEPENDENT("cs336.a.h100s_for_state", "16P / 80e9", 1e-12) { return 16 * kXParams / 80e9; }
INDEPENDENT("cs336.a.h100s_per_token", "activations per token / 80e9", 1e-12) { return kXAct / 80e9; }
INDEPENDENT("cs336.b.devices_state_only", "ceil(16P / 95e9)", 0) { return xxl_fewest(0); }
INDEPENDENT("cs336.b.devices_4096_tokens", "the inequality solved for N", 0) { return xxl_fewest(4096); }
INDEPENDENT("cs336.b.max_tokens_per_device", "a·b/2 = 95e9", 1e-12) { return 2 * 95e9 / kXAct; }
INDEPENDENT("cs336.b.bytes_per_device_n64_b2048", "16P/64 + a·2048·(1/2 + 1/128)", 1e-12) {
  return xxl_device(64, 2048);
}
INDEPENDENT("cs336.c.alpha", "4.6e14 / 1.8e11", 1e-12) { return kXC / kXW; }
INDEPENDENT("cs336.c.global_batch", "§5.1.4's inequality solved for B", 1e-12) { return xxl_batch(false, true); }
INDEPENDENT("cs336.c.per_device_batch", "that over 64", 1e-12) { return xxl_batch(false, true) / 64; }
INDEPENDENT("cs336.c.per_replica_batch", "that over 16", 1e-12) { return xxl_batch(false, true) / 16; }
INDEPENDENT("cs336.c.global_batch_concurrent", "the FSDP term alone against the FLOPs", 1e-12) {
  return xxl_batch(false, false);
}
INDEPENDENT("cs336.c.global_batch_exact_ring", "with the ring factors 15/16 and 3/4", 1e-12) {
  return xxl_batch(true, true);
}
INDEPENDENT("cs336.d.batch_at_x_opt", "bisection over B: least comms at the best X equals FLOPs", 1e-9) {
  const double N = 64, F = kXF, alpha = kXC / kXW;
  auto least_ratio = [&](double B) {  // minimum over continuous X of (F·X/(2N) + B/X) / (B·F/(N·α))
    const double X = std::sqrt(B * 2 * N / F);
    return (F * X / (2 * N) + B / X) / (B * F / (N * alpha));
  };
  double lo = 1, hi = 1e9;
  for (int i = 0; i < 300; ++i) {
    const double mid = std::sqrt(lo * hi);
    (least_ratio(mid) > 1 ? lo : hi) = mid;
  }
  return hi;
}
INDEPENDENT("cs336.d.batch_at_x_opt_overlapped", "bisection with max instead of sum", 1e-9) {
  const double N = 64, F = kXF, alpha = kXC / kXW;
  auto least_ratio = [&](double B) {
    const double X = std::sqrt(B * 2 * N / F);
    return std::max(F * X / (2 * N), B / X) / (B * F / (N * alpha));
  };
  double lo = 1, hi = 1e9;
  for (int i = 0; i < 300; ++i) {
    const double mid = std::sqrt(lo * hi);
    (least_ratio(mid) > 1 ? lo : hi) = mid;
  }
  return hi;
}
INDEPENDENT("cs336.d.tp64_comms_over_math", "4BD/(W·3) over 4BDF/(64·C)", 1e-12) {
  return (1.0 / (kXW * 3)) / (kXF / (64 * kXC));
}
INDEPENDENT("cs336.d.hbm_floor_tokens", "4.6e14 / 2.8e12", 1e-12) { return kXC / 2.8e12; }
INDEPENDENT("cs336.d.planner_min_batch", "brute force over powers of two", 0) {
  auto m = testing::brute::v5p({4, 4, 4}, 1);
  m.C = kXC;
  for (double B = 16; B <= 1 << 20; B *= 2) {
    const auto best = testing::brute::plan(k405, m, B, 4096, 256);
    // compute-bound: the step is the FLOPs time (no network, HBM or bubble term above it)
    const double math = 6 * params(k405) * B / (64 * kXC);
    if (best.step <= math * (1 + 1e-12)) return B;
  }
  return 0;
}
