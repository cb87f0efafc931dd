// Independent checks of chapter 7: the book's raw figures put through the §7.1.5 equations written out here
// by hand (not through cost/inference or the tensor inventory), parameter counts summed matrix by matrix,
// and brute-force searches (the largest batch, the fewest chips) by stepping until memory runs out.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "registry.hpp"

namespace {
// LLaMA-2 13B, typed in: D, F, L, N = K, H, V.
constexpr double D13 = 5120, F13 = 13824, L13 = 40, N13 = 40, H13 = 128, V13 = 32000;
// Weights matrix by matrix: W_Q, W_K, W_V, W_O (D·N·H each), three MLP matrices, two norms per layer; the
// final norm; input and output embeddings.
constexpr double kParams13 = L13 * (4 * D13 * N13 * H13 + 3 * D13 * F13 + 2 * D13) + D13 + 2 * V13 * D13;
// Weights a token multiplies by (no input embedding lookup, no norms).
constexpr double kMatmul13 = L13 * (4 * D13 * N13 * H13 + 3 * D13 * F13) + V13 * D13;
constexpr double kV5eHbm = 8.1e11, kV5eHbm82 = 8.2e11, kV5eBf16 = 1.97e14, kV5eInt8 = 3.94e14, kV5eBytes = 16e9;

// The largest batch whose weights plus KV fit, by counting up.
double count_up_batch(double hbm, double weights, double kv_per_sequence) {
  if (kv_per_sequence <= 0) return -1;  // a broken input must not loop forever
  double b = 0;
  while (weights + (b + 1) * kv_per_sequence <= hbm) ++b;
  return b;
}

// §7.5's model by hand: L = 64, D = 4096, F = 16384, N = 32, K, H = 256, V = 32128, tied embeddings; an MoE
// variant with E experts (k active) and a router of D·E per layer.
struct Model75 {
  double total, active_matmul;
};
Model75 model75(double K, double E = 1, double k = 1) {
  const double L = 64, D = 4096, F = 16384, N = 32, H = 256, V = 32128;
  const double attention = D * N * H + 2 * D * K * H + N * H * D;
  const double router = E > 1 ? D * E : 0;
  return {L * (attention + E * 3 * D * F + router + 2 * D) + D + V * D,
          L * (attention + k * 3 * D * F + router) + V * D};
}
}  // namespace

INDEPENDENT("ch7.bcrit-linear.llama2_13b_whole_model", "2·params bytes · C / (2·matmul weights · W), by hand", 1e-12) {
  return 2 * kParams13 * kV5eBf16 / (2 * kMatmul13 * kV5eHbm82);
}

INDEPENDENT("ch7.quiz-30b.step_b4", "(4·100e3·8192 + 30e9) / (16·8.1e11), memory-bound by hand", 1e-12) {
  return (4 * 100e3 * 8192 + 30e9) / (16 * 8.1e11);
}
INDEPENDENT("ch7.quiz-30b.t_kv_b256", "256·100e3·8192 / (16·8.1e11)", 1e-12) { return 256 * 100e3 * 8192 / (16 * 8.1e11); }
INDEPENDENT("ch7.quiz-30b.t_flops_b256", "2·256·30e9 / (16·1.97e14)", 1e-12) { return 2 * 256 * 30e9 / (16 * 1.97e14); }

INDEPENDENT("ch7.llama2-params.attention_formula", "40 layers × 4 matrices of 5120 × 5120", 1e-12) {
  return 40 * 4 * 5120.0 * 5120;
}
INDEPENDENT("ch7.llama2-memory.param_count", "LLaMA-2 13B summed matrix by matrix", 1e-12) { return kParams13; }

// §7.1.7, every exact cell of both tables: 8 v5e at 8.2e11 B/s, bf16 weights, 8192-token caches; the step is
// B·T·kv/W + max(2·B·matmul/C, bytes/W) on the whole slice.
static const std::vector<testing::RegisterCheck> kTableChecks = [] {
  std::vector<testing::RegisterCheck> out;
  out.reserve(48);
  for (const auto& [exercise, kv_heads] : {std::pair{"ch7.llama2-table-mha", 40.0}, {"ch7.llama2-table-gqa", 8.0}}) {
    for (double B : {1, 8, 16, 32, 64, 240}) {
      const double kv = B * 8192 * 2 * L13 * kv_heads * H13 * 2, weights = 2 * kParams13;
      const double W = 8 * kV5eHbm82, C = 8 * kV5eBf16;
      const double step = kv / W + std::max(2 * B * kMatmul13 / C, weights / W);
      const std::string b = std::to_string(static_cast<int>(B)), id = std::string(exercise) + ".";
      const double gib = std::pow(2.0, 30);
      out.emplace_back(id + "kv_b" + b, "B·8192·2·L·K·H·2 bytes, in GiB", 1e-12, [=] { return kv / gib; });
      out.emplace_back(id + "total_b" + b, "weights summed by hand plus the KV, in GiB", 1e-12,
                       [=] { return (kv + weights) / gib; });
      out.emplace_back(id + "step_b" + b, "equation (4) written out, in ms", 1e-12, [step] { return step * 1e3; });
      out.emplace_back(id + "tokens_b" + b, "B over equation (4)", 1e-12, [=] { return B / step; });
    }
    const double kv_seq = 8192 * 2 * L13 * kv_heads * H13 * 2;
    out.emplace_back(std::string(exercise) + ".max_batch", "counting up until 8 × 16 GB is full", 0,
                     [kv_seq] { return count_up_batch(8 * kV5eBytes, 2 * kParams13, kv_seq); });
  }
  return out;
}();

INDEPENDENT("ch7.llama2-table-mha.bandwidth_tib", "8 × 8.2e11 / 2^40", 1e-12) { return 8 * 8.2e11 / std::pow(2.0, 40); }
INDEPENDENT("ch7.llama2-table-mha.oom_beyond_16", "counting up in 8 × 2^34 bytes (§2.1's 16 GiB per chip)", 0) {
  return count_up_batch(8 * std::pow(2.0, 34), 2 * kParams13, 8192 * 2 * L13 * N13 * H13 * 2);
}

INDEPENDENT("ch7.gen-mp-limit.y_max_v5e", "16384 / (32 · 8.1e11/9e10)", 1e-12) { return 16384 / (32 * (8.1e11 / 9e10)); }
INDEPENDENT("ch7.gen-mp-limit.beta_v5e", "§2.3: 8.1e11 / 9e10", 1e-12) { return 8.1e11 / 9e10; }
INDEPENDENT("ch7.gen-mp-limit.beta_v6e", "§2.3: 1.6e12 / 1.8e11", 1e-12) { return 1.6e12 / 1.8e11; }

// Prefix cache: FLOPs of the new tokens (matmuls, and attention to every earlier key) over the full prefill's.
namespace {
double prefix_fraction(double P, double cached) {
  const double per_key = 4 * L13 * N13 * H13;
  double full = 0, rest = 0;
  for (double i = 1; i <= P; ++i) {  // token i attends to i keys
    const double f = 2 * kMatmul13 + per_key * i;
    full += f;
    if (i > cached) rest += f;
  }
  return rest / full;
}
}  // namespace
INDEPENDENT("ch7.prefix-reuse.flops_fraction_llama2", "token-by-token sum of matmul and attention FLOPs", 1e-12) {
  return prefix_fraction(3, 2);
}
INDEPENDENT("ch7.prefix-reuse.flops_fraction_long_prompt", "token-by-token sum over 32768 tokens", 1e-9) {
  return prefix_fraction(32768, 24576);
}

INDEPENDENT("ex7.1.kv_bytes_per_token_bf16", "2 · 64 · 8 · 256 · 2", 1e-12) { return 2 * 64 * 8 * 256 * 2.0; }
INDEPENDENT("ex7.1.kv_bytes_per_token_int8", "2 · 64 · 8 · 256 · 1", 1e-12) { return 2 * 64 * 8 * 256 * 1.0; }

INDEPENDENT("ex7.2.max_batch_k8", "counting up on 16 × 16 GB, int8", 0) {
  return count_up_batch(16 * kV5eBytes, model75(8).total, 8192.0 * 2 * 64 * 8 * 256);
}
INDEPENDENT("ex7.2.max_batch_k1", "counting up with one KV head", 0) {
  return count_up_batch(16 * kV5eBytes, model75(1).total, 8192.0 * 2 * 64 * 1 * 256);
}
INDEPENDENT("ex7.2.kv_per_sequence_k8", "8192 · 2 · 64 · 8 · 256", 1e-12) { return 8192 * 2 * 64 * 8 * 256.0; }

INDEPENDENT("ex7.3.t_params_4x4_int8", "int8 weights by hand / (16 · 8.1e11)", 1e-12) {
  return model75(8).total / (16 * kV5eHbm);
}
INDEPENDENT("ex7.3.t_params_4x4_bf16", "bf16 weights by hand / (16 · 8.1e11)", 1e-12) {
  return 2 * model75(8).total / (16 * kV5eHbm);
}

namespace {
double ex74_batch() { return count_up_batch(16 * kV5eBytes, model75(8).total, 8192.0 * 2 * 64 * 8 * 256); }
double ex74_step(double B) {
  const double kv = B * 8192 * 2 * 64 * 8 * 256, W = 16 * kV5eHbm, C = 16 * kV5eInt8;
  return kv / W + std::max(2 * B * model75(8).active_matmul / C, model75(8).total / W);
}
}  // namespace
INDEPENDENT("ex7.4.y_limit_at_max_batch", "F · W_ici / (B · W_hbm) at the counted batch", 1e-12) {
  return 16384 * 9e10 / (ex74_batch() * kV5eHbm);
}
INDEPENDENT("ex7.4.step_at_max_batch", "equation (4) at the counted batch, int8 everything", 1e-12) {
  return ex74_step(ex74_batch());
}
INDEPENDENT("ex7.4.step_b1", "equation (4) at batch 1", 1e-12) { return ex74_step(1); }

INDEPENDENT("ex7.5.params", "16 experts of 3·D·F per layer, router D·16, summed by hand", 1e-12) {
  return model75(8, 16, 2).total;
}
INDEPENDENT("ex7.5.active_params", "2 experts per token, the embedding counted once", 1e-12) {
  const auto m = model75(8, 16, 2);
  return m.active_matmul + 2 * 64 * 4096 + 4096;  // the norms a token also uses
}
INDEPENDENT("ex7.5.critical_batch", "bytes·C / (2·active matmul·W)", 1e-12) {
  const auto m = model75(8, 16, 2);
  return 2 * m.total * kV5eBf16 / (2 * m.active_matmul * kV5eHbm82);
}
INDEPENDENT("ex7.5.critical_batch_mlp_only", "1.97e14 / 8.2e11 · 16 / 2", 1e-12) { return kV5eBf16 / kV5eHbm82 * 8; }
INDEPENDENT("ex7.5.kv_bytes_per_token", "2 · 64 · 8 · 256 · 2", 1e-12) { return 2 * 64 * 8 * 256 * 2.0; }
INDEPENDENT("ex7.5.forward_flops_t8192", "2·T·active + 4·L·N·H·T(T+1)/2", 1e-12) {
  const double T = 8192;
  return 2 * T * model75(8, 16, 2).active_matmul + 4 * 64 * 32 * 256 * T * (T + 1) / 2;
}

INDEPENDENT("ex7.6.t_weight_load", "bf16 MoE bytes / (128 · 8.1e11)", 1e-12) {
  return 2 * model75(8, 16, 2).total / (128 * kV5eHbm);
}
INDEPENDENT("ex7.6.free_hbm_per_chip", "16e9 − bf16 bytes / 128", 1e-12) {
  return kV5eBytes - 2 * model75(8, 16, 2).total / 128;
}
INDEPENDENT("ex7.6.min_chips", "adding chips until the bf16 weights fit", 0) {
  double n = 1;
  while (n * kV5eBytes < 2 * model75(8, 16, 2).total) ++n;
  return n;
}
INDEPENDENT("ex7.6.smallest_slice_chips", "the first v5e topology (1, 4, 8, 16, 32, …) at or above it", 0) {
  double n = 1;
  while (n * kV5eBytes < 2 * model75(8, 16, 2).total) ++n;
  for (double s : {1, 4, 8, 16, 32, 64, 128, 256})
    if (s >= n) return s;
  return 0;
}

INDEPENDENT("ex7.7.crossover_chips", "bisection on sqrt(128/N) = 4/3 (F = 4D)", 1e-9) {
  double lo = 1, hi = 1e4;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    (std::sqrt(128 / mid) > 4.0 / 3 ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

INDEPENDENT("ch7.batch240-empirical.layer_params", "2 · 8192 · 32768", 1e-12) { return 2 * 8192 * 32768.0; }
INDEPENDENT("ch7.batch240-empirical.min_latency", "2 bytes · 2·8192·32768 / (4 · 8.2e11)", 1e-12) {
  return 2 * 2 * 8192 * 32768.0 / (4 * 8.2e11);
}
INDEPENDENT("ch7.batch240-empirical.critical_batch", "bisection on 2B·P/C = 2P/W per chip", 1e-9) {
  double lo = 1, hi = 1e4;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    (2 * mid / kV5eBf16 < 2 / kV5eHbm82 ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

INDEPENDENT("ch7.llama2-memory.training_bytes", "(2 + 4 + 4) bytes × LLaMA-2 13B by hand", 1e-12) { return 10 * kParams13; }
INDEPENDENT("ch7.llama2-table-mha.hbm_in_gib", "128e9 / 1024³", 1e-12) { return 128e9 / (1024.0 * 1024 * 1024); }
INDEPENDENT("ch7.llama2-table-mha.bandwidth_in_tib", "6.56e12 / 1024⁴", 1e-12) { return 6.56e12 / std::pow(1024.0, 4); }
INDEPENDENT("ch7.llama2-table-mha.memory_over_hbm_b240", "(2·params + 240·8192·2·40·40·128·2) / 128e9", 1e-12) {
  return (2 * kParams13 + 240 * 8192 * 2 * L13 * N13 * H13 * 2) / 128e9;
}
INDEPENDENT("ch7.gen-mp-limit.beta_v5e_table", "§2.3: 8.1e11 / 9e10", 1e-12) { return 8.1e11 / 9e10; }
INDEPENDENT("ch7.gen-mp-limit.beta_v6e_table", "§2.3: 1.6e12 / 1.8e11", 1e-12) { return 1.6e12 / 1.8e11; }
INDEPENDENT("ch7.batch240-empirical.layer_param_count", "8192 · 32768 · 2", 1e-12) { return 8192 * 32768 * 2.0; }
INDEPENDENT("ch7.latency-bound-comms.fraction_of_threshold", "131072 / (8 · 45000)", 1e-12) { return 131072 / (8 * 45000.0); }

