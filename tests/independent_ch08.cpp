// Independent checks of chapter 8, written from the book's raw figures: LLaMA-3's shapes typed in and
// counted by hand, the v5e's numbers typed in, the step time written out term by term, the largest
// batch found by counting up until the next sequence no longer fits, the best serving slice of ex8.3
// by trying every batch on every slice, and the Pareto set by comparing every pair of points.
// Nothing here calls the inference library.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "registry.hpp"

namespace {

struct Shape {
  double D, F, L, N, K, H, V;
};
constexpr Shape k70{8192, 28672, 80, 64, 8, 128, 128256};
constexpr Shape k8{4096, 14336, 32, 32, 8, 128, 128256};
constexpr Shape k405{16384, 53248, 126, 128, 8, 128, 128256};

// Gated MLP (3 matrices), Q/K/V/O, two RMSNorms a layer, untied embedding and unembedding, a final norm.
double params(const Shape& s) {
  return s.L * (3 * s.D * s.F + 2 * s.D * (s.N + s.K) * s.H + 2 * s.D) + 2 * s.V * s.D + s.D;
}
// 2 FLOPs per weight of every matmul a token goes through: the layers and the unembedding.
double matmul_flops(const Shape& s) { return 2 * (s.L * (3 * s.D * s.F + 2 * s.D * (s.N + s.K) * s.H) + s.V * s.D); }
double kv_per_token(const Shape& s, double bytes) { return 2 * s.L * s.K * s.H * bytes; }

// TPU v5e (§2.3): 16e9 B of HBM, 1.97e14 bf16 FLOPs/s, 9e10 B/s bidirectional ICI.
constexpr double kHbm = 16e9, kC = 1.97e14, kIci = 9e10;

struct Config {
  Shape s;
  double weight_bytes, kv_bytes, chips, W, C;
};
double step(const Config& c, double B, double T) {
  const double NW = c.chips * c.W;
  const double kv = B * T * kv_per_token(c.s, c.kv_bytes) / NW;
  const double weights = params(c.s) * c.weight_bytes / NW;
  const double flops = B * matmul_flops(c.s) / (c.chips * c.C);
  return kv + std::max(weights, flops);
}
// Count up while one more sequence still fits in the slice's HBM.
double biggest_batch(const Config& c, double T) {
  double B = 0;
  const double weights = params(c.s) * c.weight_bytes, seq = T * kv_per_token(c.s, c.kv_bytes);
  while (weights + (B + 1) * seq <= c.chips * kHbm) B += 1;
  return B;
}
Config v5e70(double chips, double bytes, double W) { return {k70, bytes, bytes, chips, W, kC}; }
double qps_full(double chips, double bytes) {
  const auto c = v5e70(chips, bytes, 8.2e11);
  const double B = biggest_batch(c, 8192);
  return B / (step(c, B, 8192) * 512 * chips);
}

}  // namespace

// §8.1: FLOPs per dollar.
INDEPENDENT("ch8.hw-cost.flops_per_usd_v5e", "1.97e14 FLOPs/s · 3600 s / $1.20", 1e-12) { return 1.97e14 * 3600 / 1.2; }

// KV per token and the 32k sequence.
INDEPENDENT("ch8.kv-per-token.seq_32k_bytes", "2·80·8·128 B · 32768", 1e-12) { return 2 * 80 * 8 * 128 * 32768.0; }
INDEPENDENT("ch8.kv-per-token.chips_batch240", "⌈(params + 240·32768·163840)/16e9⌉, params counted by hand", 1e-12) {
  return std::ceil((params(k70) + 240 * 32768 * kv_per_token(k70, 1)) / kHbm);
}

// Batch 32 at 8k in int8.
INDEPENDENT("ch8.bs32-memory.kv_bytes", "163840 · 8192 · 32", 1e-12) { return 163840.0 * 8192 * 32; }
INDEPENDENT("ch8.bs32-memory.total_bytes", "hand-counted params + 163840·8192·32", 1e-12) {
  return params(k70) + 163840.0 * 8192 * 32;
}
INDEPENDENT("ch8.bs32-latency.step_4x2_s", "step written out on 8 chips at 8.1e11", 1e-12) {
  return step(v5e70(8, 1, 8.1e11), 32, 8192);
}
INDEPENDENT("ch8.bs32-latency.t_flops_4x2_s", "32 · 2·(matmul weights) / (8 · 1.97e14)", 1e-12) {
  return 32 * matmul_flops(k70) / (8 * kC);
}
INDEPENDENT("ch8.bs32-latency.tokens_per_s", "32 / step", 1e-12) { return 32 / step(v5e70(8, 1, 8.1e11), 32, 8192); }
INDEPENDENT("ch8.bs32-latency.tokens_per_s_per_chip", "32 / (step · 8)", 1e-12) {
  return 32 / (8 * step(v5e70(8, 1, 8.1e11), 32, 8192));
}
INDEPENDENT("ch8.bs32-latency.step_4x4_s", "step written out on 16 chips", 1e-12) {
  return step(v5e70(16, 1, 8.1e11), 32, 8192);
}
INDEPENDENT("ch8.bs32-latency.ici_limit_y", "2 · 28672 / (1.97e14/9e10)", 1e-12) { return 2 * 28672 / (kC / kIci); }

// The minimum-topology table, row by row.
INDEPENDENT("ch8.min-topology.param_bytes_int4", "hand-counted params · 0.5 B", 1e-12) { return params(k70) * 0.5; }
INDEPENDENT("ch8.min-topology.kv_per_token_bf16", "2·80·8·128·2", 1e-12) { return 2 * 80 * 8 * 128 * 2.0; }
INDEPENDENT("ch8.min-topology.kv_per_token_int8", "2·80·8·128·1", 1e-12) { return 2 * 80 * 8 * 128 * 1.0; }
INDEPENDENT("ch8.min-topology.kv_per_token_int4", "2·80·8·128·0.5", 1e-12) { return 2 * 80 * 8 * 128 * 0.5; }
INDEPENDENT("ch8.min-topology.min_chips_bf16", "2·params / 16e9", 1e-12) { return 2 * params(k70) / kHbm; }
INDEPENDENT("ch8.min-topology.min_chips_int8", "params / 16e9", 1e-12) { return params(k70) / kHbm; }
INDEPENDENT("ch8.min-topology.min_chips_int4", "params / 2 / 16e9", 1e-12) { return params(k70) / 2 / kHbm; }
INDEPENDENT("ch8.min-topology.free_hbm_bf16", "16·16e9 − 2·params", 1e-12) { return 16 * kHbm - 2 * params(k70); }
INDEPENDENT("ch8.min-topology.free_hbm_int8", "8·16e9 − params", 1e-12) { return 8 * kHbm - params(k70); }
INDEPENDENT("ch8.min-topology.free_hbm_int4", "4·16e9 − params/2", 1e-12) { return 4 * kHbm - params(k70) / 2; }
INDEPENDENT("ch8.min-topology.kv_caches_bf16", "count 8k bf16 caches into a 4x4 until the next overflows", 1e-12) {
  return biggest_batch(v5e70(16, 2, 8.2e11), 8192);
}
INDEPENDENT("ch8.min-topology.kv_caches_int8", "count 8k int8 caches into a 4x2", 1e-12) {
  return biggest_batch(v5e70(8, 1, 8.2e11), 8192);
}
INDEPENDENT("ch8.min-topology.kv_caches_int4", "count 8k int4 caches into a 2x2", 1e-12) {
  return biggest_batch(v5e70(4, 0.5, 8.2e11), 8192);
}

// Full-HBM step and queries per second.
INDEPENDENT("ch8.max-batch-latency.decode_512_s", "512 × the step of the fullest bf16 4x4", 1e-12) {
  const auto c = v5e70(16, 2, 8.2e11);
  return 512 * step(c, biggest_batch(c, 8192), 8192);
}
INDEPENDENT("ch8.qps-per-chip.qps_bf16", "B/(step·512·16) at the counted batch", 1e-12) { return qps_full(16, 2); }
INDEPENDENT("ch8.qps-per-chip.qps_int8", "B/(step·512·8)", 1e-12) { return qps_full(8, 1); }
INDEPENDENT("ch8.qps-per-chip.qps_int4", "B/(step·512·4)", 1e-12) { return qps_full(4, 0.5); }
INDEPENDENT("ch8.double-topology.qps_bf16", "B/(step·512·32) on a 4x8", 1e-12) { return qps_full(32, 2); }
INDEPENDENT("ch8.double-topology.qps_int8", "B/(step·512·16) on a 4x4", 1e-12) { return qps_full(16, 1); }
INDEPENDENT("ch8.double-topology.qps_int4", "B/(step·512·8) on a 2x4", 1e-12) { return qps_full(8, 0.5); }
INDEPENDENT("ch8.double-topology.free_hbm_bf16", "32·16e9 − 2·params", 1e-12) { return 32 * kHbm - 2 * params(k70); }
INDEPENDENT("ch8.double-topology.batch_bf16", "count 8k bf16 caches into a 4x8", 1e-12) {
  return biggest_batch(v5e70(32, 2, 8.2e11), 8192);
}

// Sharding on a 4x8.
INDEPENDENT("ch8.sharding-4x8.y_ici", "2 · 28672 · 9e10 / 1.97e14", 1e-12) { return 2 * 28672 * kIci / kC; }
INDEPENDENT("ch8.sharding-4x8.y_memory", "28672 / (64 · 8.1e11/9e10)", 1e-12) { return 28672 / (64 * 8.1e11 / kIci); }
INDEPENDENT("ch8.sharding-4x8.t_ici_s", "2·64·8192 / 9e10", 1e-12) { return 2 * 64 * 8192 / kIci; }
INDEPENDENT("ch8.sharding-4x8.t_math_s", "2·64·8192·28672 / (32·1.97e14)", 1e-12) {
  return 2 * 64 * 8192.0 * 28672 / (32 * kC);
}

// Prefill and disaggregation: attention summed key by key.
namespace {
double prefill_s(double P, double chips, double mfu) {
  double attention = 0;
  for (double i = 1; i <= P; ++i) attention += 4 * k70.L * k70.N * k70.H * i;  // token i attends to i keys
  return (P * matmul_flops(k70) + attention) / (chips * kC * mfu);
}
}  // namespace
INDEPENDENT("ch8.prefill-time.prefill_s", "matmuls + attention summed over the 8192 positions", 1e-9) {
  return prefill_s(8192, 16, 0.4);
}
INDEPENDENT("ch8.prefill-time.prefill", "the prefill summed position by position, at the book's 8k point", 1e-9) {
  return prefill_s(8192, 16, 0.4);
}
INDEPENDENT("ch8.prefill-time.prefill_matmul_only_s", "8192 · 2·(matmul weights) / (16·1.97e14·0.4)", 1e-12) {
  return 8192 * matmul_flops(k70) / (16 * kC * 0.4);
}
INDEPENDENT("ch8.disagg-ratio.prefill_per_decode_server", "prefills per second a decode server needs × prefill time",
            1e-9) {
  const auto c = v5e70(16, 2, 8.2e11);
  const double B = biggest_batch(c, 8192);
  const double requests_per_s = B / (step(c, B, 8192) * 512);
  return requests_per_s * prefill_s(8192, 16, 0.4);
}

// §8.2: the critical batch by bisection, and the Pareto set by pairwise comparison.
INDEPENDENT("ch8.pareto.critical_batch", "bisection on t_flops − t_params (int8 weights, bf16 FLOPs)", 1e-9) {
  const auto c = v5e70(16, 1, 8.2e11);
  double lo = 1, hi = 1e4;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    (mid * matmul_flops(k70) / (16 * kC) < params(k70) / (16 * c.W) ? lo : hi) = mid;
  }
  return lo;
}
INDEPENDENT("ch8.pareto.pareto_points", "every (dtype, batch) on a 4x4 at 8k against every other", 1e-12) {
  struct P {
    double t, q;
  };
  std::vector<P> pts;
  for (double bytes : {2.0, 1.0, 0.5}) {
    const auto c = v5e70(16, bytes, 8.2e11);
    for (double B = 1; B <= biggest_batch(c, 8192); ++B) {
      const double t = step(c, B, 8192);
      pts.push_back({t, B / (t * 16)});
    }
  }
  constexpr double kEq = 1e-12;
  double kept = 0;
  for (const auto& a : pts) {
    bool dominated = false;
    for (const auto& b : pts)
      // Equal within rounding counts as equal: on the compute-bound plateau every batch has the same
      // tokens/s per chip in exact arithmetic, and only the fastest of them is on the frontier.
      if (b.t <= a.t * (1 + kEq) && b.q >= a.q * (1 - kEq) && (b.t < a.t * (1 - kEq) || b.q > a.q * (1 + kEq)))
        dominated = true;
    kept += dominated ? 0 : 1;
  }
  return kept;
}

// Exercise 8.1: LLaMA-3 405B.
INDEPENDENT("ex8.1.flops_per_token", "2 × (126 layers of matmul weights + unembedding), by hand", 1e-12) {
  return matmul_flops(k405);
}
INDEPENDENT("ex8.1.t_flops_one_chip_s", "FLOPs per token / 1.97e14", 1e-12) { return matmul_flops(k405) / kC; }
INDEPENDENT("ex8.1.t_params_one_chip_s", "2 B × params / 8.1e11", 1e-12) { return 2 * params(k405) / 8.1e11; }

// Exercise 8.2: LLaMA-3 8B at batch 240.
INDEPENDENT("ex8.2.param_bytes", "LLaMA-3 8B counted by hand, 1 B each", 1e-12) { return params(k8); }
INDEPENDENT("ex8.2.kv_bytes", "240 · 8192 · 2·32·8·128", 1e-12) { return 240 * 8192 * kv_per_token(k8, 1); }
INDEPENDENT("ex8.2.activation_bytes", "240 · 128256 · 4", 1e-12) { return 240 * 128256 * 4.0; }
INDEPENDENT("ex8.2.slice_chips", "first v5e topology (1, 4, 8, 16, 32, …) whose HBM holds it all", 1e-12) {
  const double total = params(k8) + 240 * 8192 * kv_per_token(k8, 1) + 240 * 128256 * 4.0;
  for (double n : {1.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0})
    if (n * kHbm >= total) return n;
  return 0;
}

// Exercise 8.3: every batch on every v5e topology, int8 weights and KV, bf16 FLOPs, 8k, at most 15 ms.
namespace {
struct Best {
  double chips = 0, batch = 0, tput = 0, step = 0;
};
Best best_405b() {
  Best best;
  for (double n : {1.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0}) {
    const Config c{k405, 1, 1, n, 8.1e11, kC};
    const double cap = biggest_batch(c, 8192);
    for (double B = 1; B <= cap; ++B) {
      const double t = step(c, B, 8192);
      if (t > 15e-3) break;
      const double tput = B / (t * n);
      if (tput > best.tput * (1 + 1e-9)) best = {n, B, tput, t};  // a tie keeps the fewer chips
    }
  }
  return best;
}
}  // namespace
INDEPENDENT("ex8.3.best_chips", "every batch on every slice", 1e-12) { return best_405b().chips; }
INDEPENDENT("ex8.3.best_batch", "every batch on every slice", 1e-12) { return best_405b().batch; }
INDEPENDENT("ex8.3.best_tokens_per_s_per_chip", "every batch on every slice", 1e-12) { return best_405b().tput; }
INDEPENDENT("ex8.3.best_step_s", "every batch on every slice", 1e-12) { return best_405b().step; }
INDEPENDENT("ex8.3.min_step_s", "batch 1 on the 256 chips of a v5e pod", 1e-12) {
  return step({k405, 1, 1, 256, 8.1e11, kC}, 1, 8192);
}
INDEPENDENT("ex8.3.y_ici_2axes", "2 · 53248 · 9e10 / 1.97e14", 1e-12) { return 2 * 53248 * kIci / kC; }
