// Independent checks of chapter 4: the book's formulas written out with raw numbers (not through the
// library's config accounting), bisection for crossovers, and flash attention with other block sizes.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "registry.hpp"
#include "search.hpp"
#include "scaling/sim/attention.hpp"

namespace {
// LLaMA-3 70B's shape, typed in: D, F, L, N, K, H, V.
constexpr double D70 = 8192, F70 = 28672, L70 = 80, N70 = 64, K70 = 8, H70 = 128, V70 = 128256;
constexpr double kChip = 1.97e14 / 8.2e11;
}  // namespace

INDEPENDENT("ch4.layer-flops.norm_params", "two RMSNorm scales of D = 8192", 1e-12) { return 2 * D70; }
INDEPENDENT("ch4.attention-fraction.crossover_d4608_square",
            "bisection on per-token forward FLOPs: 2·2·T·N·H against 2·(3DF + 4D·N·H), N·H = D = 4608, F = 4D", 1e-9) {
  const double D = 4608, F = 4 * D, NH = D;
  return testing::bisect(1, 1e7, [&](double T) { return 2 * 2 * T * NH < 2 * (3 * D * F + 4 * D * NH); });
}
INDEPENDENT("ch4.attention-fraction.crossover_gemma2_27b", "bisection on 4NHT = 6DF + 4D(N + K)H", 1e-9) {
  const double D = 4608, F = 36864, N = 32, K = 16, H = 128;
  return testing::bisect(1, 1e7, [&](double T) { return 4 * N * H * T < 6 * D * F + 4 * D * (N + K) * H; });
}
INDEPENDENT("ch4.remat-memory.saved_big_matmuls", "2 bytes × 7 × 4e6 × 8192 × 64", 1e-12) { return 2 * 7 * 4e6 * 8192 * 64; }
INDEPENDENT("ch4.summary-table.six_n_over_exact_t4096", "LLaMA-3 70B written out by hand", 1e-12) {
  const double per_layer_params = 3 * D70 * F70 + 2 * D70 * (N70 + K70) * H70 + 2 * D70;
  const double rule = 6 * (L70 * per_layer_params + D70 + V70 * D70);  // all but the input embedding
  const double exact = 3 * (2 * L70 * (3 * D70 * F70 + 2 * D70 * (N70 + K70) * H70) + 4 * L70 * N70 * H70 * 4096 +
                            2 * V70 * D70);
  return rule / exact;
}
INDEPENDENT("ch4.summary-table.kv_bytes_per_token", "2 · 80 · 8 · 128 · 2 bytes", 1e-12) { return 2 * L70 * K70 * H70 * 2; }
INDEPENDENT("ex4.1.params", "L·(3DF + 4DNH + D) + 2DV with exact D and F", 1e-12) {
  const double D = 4096, F = 16384, L = 64, V = 32000;
  return L * (3 * D * F + 4 * D * D + D) + 2 * D * V;
}
INDEPENDENT("ex4.1.attention_params", "64 · 4 · 4096²", 1e-12) { return 64 * 4 * 4096.0 * 4096; }
INDEPENDENT("ex4.1.attention_fraction_of_total", "64·4·4096² over the total above", 1e-12) {
  const double D = 4096, F = 16384, L = 64, V = 32000;
  return L * 4 * D * D / (L * (3 * D * F + 4 * D * D + D) + 2 * D * V);
}
INDEPENDENT("ex4.4.prefill_critical_t_mha", "bisection on the MHA prefill intensity T²/(2T) against 240.2", 1e-9) {
  return testing::bisect(1, 1e6, [](double T) { return 4 * T * T * 64 * 128 / (2 * (2 * T * 64 * 128 + 2 * T * 64 * 128)) < kChip; });
}
INDEPENDENT("ex4.4.prefill_critical_t_llama3_70b", "bisection on the GQA prefill intensity", 1e-9) {
  return testing::bisect(1, 1e6, [](double T) {
    return 4 * T * T * N70 * H70 / (2 * (2 * T * N70 * H70 + 2 * T * K70 * H70)) < kChip;
  });
}
INDEPENDENT("ex4.4.prefill_intensity_t4096_llama3_70b", "T·G/(G + 1) at T = 4096, G = 8", 1e-12) { return 4096.0 * 8 / 9; }
INDEPENDENT("ex4.5.t_llama3_70b", "bisection on 4NHT = 4DH(N + K)", 1e-9) {
  return testing::bisect(1, 1e6, [](double T) { return 4 * N70 * H70 * T < 4 * D70 * H70 * (N70 + K70); });
}
INDEPENDENT("ex4.6.extra_flops_per_layer", "QKᵀ and PV rerun: 2 × 2·T·S·N·H", 1e-12) {
  return 2 * 2 * 8192.0 * 8192 * N70 * H70;
}
INDEPENDENT("ex4.6.extra_fraction_of_step", "attention forward over the training step, by hand", 1e-12) {
  const double attn = L70 * 4 * N70 * H70 * 8192;
  const double forward = 2 * L70 * (3 * D70 * F70 + 2 * D70 * (N70 + K70) * H70) + attn + 2 * V70 * D70;
  return attn / (3 * forward);
}
INDEPENDENT("ex4.7.utilization", "6·37e9·14.8e12 / (2.79e6·3600·3026e12/2)", 1e-12) {
  return 6 * 37e9 * 14.8e12 / (2.79e6 * 3600 * 3026e12 / 2);
}
INDEPENDENT("ex4.8.deepseek_tokens_exact", "bisection on one expert matmul's two times, × 256/8", 1e-9) {
  const double D = 7168, F = 2048, c = 1.97e14, w = 8.2e11;
  return 32 * testing::bisect(1, 1e6, [&](double B) { return 2 * B * D * F / c < (2 * B * D + D * F + 2 * B * F) / w; });
}
namespace {
// Attention from its definition, written here: query t (the last T of S positions) of head n sees keys
// s ≤ t + S − T; head n reads KV head ⌊n / (N/K)⌋; out = Σ_s softmax_s(q·k_s / √H) v_s. Layouts
// q[T][N][H], k and v [S][K][H].
std::vector<double> reference_attention(int T, int S, int N, int K, int H, bool causal, const std::vector<double>& q,
                                        const std::vector<double>& k, const std::vector<double>& v) {
  std::vector<double> out(static_cast<size_t>(T) * N * H, 0.0);
  for (int t = 0; t < T; ++t)
    for (int n = 0; n < N; ++n) {
      const int g = n / (N / K);
      std::vector<double> logits;
      for (int s = 0; s < S && (!causal || s <= t + S - T); ++s) {
        double dot = 0;
        for (int h = 0; h < H; ++h) dot += q[static_cast<size_t>((t * N + n) * H + h)] * k[static_cast<size_t>((s * K + g) * H + h)];
        logits.push_back(dot / std::sqrt(double(H)));
      }
      const double top = *std::max_element(logits.begin(), logits.end());
      double z = 0;
      for (double& l : logits) z += (l = std::exp(l - top));
      for (size_t s = 0; s < logits.size(); ++s)
        for (int h = 0; h < H; ++h)
          out[static_cast<size_t>((t * N + n) * H + h)] += logits[s] / z * v[(s * static_cast<size_t>(K) + static_cast<size_t>(g)) * static_cast<size_t>(H) + static_cast<size_t>(h)];
    }
  return out;
}
}  // namespace

INDEPENDENT_WITHIN("ch4.flash-attention.max_abs_difference",
                   "flash (16×32 blocks) and naive attention each against a reference written from the definition",
                   1e-12) {
  std::mt19937 rng(2024);
  std::normal_distribution<double> g(0, 1);
  auto random = [&](size_t n) {
    std::vector<double> v(n);
    for (auto& x : v) x = g(rng);
    return v;
  };
  const scaling::AttentionShape s{96, 128, 8, 2, 16, true};
  const auto q = random(96 * 8 * 16), k = random(128 * 2 * 16), v = random(128 * 2 * 16);
  const auto ref = reference_attention(96, 128, 8, 2, 16, true, q, k, v);
  const auto flash = scaling::flash_attention(s, q, k, v, 16, 32), naive = scaling::naive_attention(s, q, k, v);
  double diff = 0;
  for (size_t i = 0; i < ref.size(); ++i) diff = std::max({diff, std::fabs(flash[i] - ref[i]), std::fabs(naive[i] - ref[i])});
  return diff;
}

TEST_CASE("attention: flash and naive match a reference from the definition on several shapes") {
  std::mt19937 rng(11);
  std::normal_distribution<double> g(0, 1);
  auto random = [&](size_t n) {
    std::vector<double> v(n);
    for (auto& x : v) x = g(rng);
    return v;
  };
  struct Case { int T, S, N, K, H; bool causal; int br, bc; };
  for (const Case c : {Case{5, 9, 4, 2, 3, true, 2, 4}, Case{7, 7, 3, 1, 5, true, 3, 2}, Case{6, 11, 6, 3, 4, false, 4, 5},
                       Case{1, 13, 2, 2, 8, true, 1, 3}}) {
    const scaling::AttentionShape s{c.T, c.S, c.N, c.K, c.H, c.causal};
    const auto q = random(static_cast<size_t>(c.T * c.N * c.H)), k = random(static_cast<size_t>(c.S * c.K * c.H)),
               v = random(static_cast<size_t>(c.S * c.K * c.H));
    const auto ref = reference_attention(c.T, c.S, c.N, c.K, c.H, c.causal, q, k, v);
    const auto flash = scaling::flash_attention(s, q, k, v, c.br, c.bc), naive = scaling::naive_attention(s, q, k, v);
    REQUIRE(flash.size() == ref.size());
    REQUIRE(naive.size() == ref.size());
    for (size_t i = 0; i < ref.size(); ++i) {
      CHECK(flash[i] == doctest::Approx(ref[i]).epsilon(1e-12));
      CHECK(naive[i] == doctest::Approx(ref[i]).epsilon(1e-12));
    }
  }
}
namespace {
constexpr double kExpert = 3 * 7168.0 * 2048;  // weights of one DeepSeek-V3 expert, 1 byte each
constexpr double kHidden = 2 * 1000 * 7168.0 * 2;
}  // namespace
INDEPENDENT("notes.deepseek-moe.flops_token_by_token", "(8 + 1)·3·7168·2048·1000·2", 1e-12) { return 9 * kExpert * 1000 * 2; }
INDEPENDENT("notes.deepseek-moe.weight_bytes_token_by_token", "(1 + 8·1000)·3·7168·2048", 1e-12) { return 8001 * kExpert; }
INDEPENDENT("notes.deepseek-moe.intensity_token_by_token", "FLOPs over weight and hidden-state bytes", 1e-12) {
  return 9 * kExpert * 2000 / (8001 * kExpert + kHidden);
}
INDEPENDENT("notes.deepseek-moe.flops_dense", "257·3·7168·2048·1000·2", 1e-12) { return 257 * kExpert * 2000; }
INDEPENDENT("notes.deepseek-moe.weight_bytes_dense", "257·3·7168·2048", 1e-12) { return 257 * kExpert; }
INDEPENDENT("notes.deepseek-moe.intensity_dense", "FLOPs over weight and hidden-state bytes", 1e-12) {
  return 257 * kExpert * 2000 / (257 * kExpert + kHidden);
}
INDEPENDENT("notes.deepseek-moe.intensity_routed", "9 experts' FLOPs over all 257 experts' bytes", 1e-12) {
  return 9 * kExpert * 2000 / (257 * kExpert + kHidden);
}

INDEPENDENT("ex4.4.prefill_equal_cost_context", "both compute-bound: 4T²NH = 6TDF, so T = 6DF/(4NH)", 1e-9) {
  return 6 * D70 * F70 / (4 * N70 * H70);
}
INDEPENDENT("ex4.4.decode_equal_cost_context", "both bandwidth-bound: 2NH + 2SKH = 3DF + 2D + F", 1e-9) {
  return (3 * D70 * F70 + 2 * D70 + F70 - 2 * N70 * H70) / (2 * K70 * H70);
}

// Formula and claim errata: the exact value at the book's point, by hand.
INDEPENDENT("ch4.summary-table.vocab_training_flops", "unembedding X[T, D]·W[D, V]: forward, dX and dW, 2TDV each", 1e-12) {
  const double T = 4096, D = 8192, V = 128256;
  const double forward = 2 * T * D * V, d_x = 2 * T * V * D, d_w = 2 * D * T * V;
  return forward + d_x + d_w;  // the input embedding is a row lookup: no FLOPs
}
INDEPENDENT("ex4.5.qkvo_training_flops", "four [D, N·H] projections, 2 FLOPs per weight per token, × 3 for training", 1e-12) {
  const double T = 8192, D = 4096, N = 32, H = 128;
  double per_token = 0;
  for (int matrix = 0; matrix < 4; ++matrix) per_token += 2 * D * N * H;  // W_Q, W_K, W_V, W_O (N = K)
  return 3 * per_token * T;
}
// Not an erratum since the re-audit (the book's "512kB" is 512·1024 bytes), but its count stays checked:
INDEPENDENT("ex4.1.kv_512kb", "K and V, 64 layers × 32 heads × 128 values × 1 byte (int8)", 1e-12) {
  double bytes = 0;
  for (int kv = 0; kv < 2; ++kv)
    for (int layer = 0; layer < 64; ++layer) bytes += 32 * 128 * 1;
  return bytes;
}

#include "scaling/model/presets.hpp"
#include "scaling/model/transformer.hpp"

// Published parameter counts (Hugging Face model cards / safetensors metadata), not the library's
// formula: a wrong dimension, vocabulary, tie flag or norm count in a preset changes the total.
TEST_CASE("model presets reproduce the published parameter counts") {
  // meta-llama/Llama-2-7b-hf: 6,738,415,616 parameters (untied embeddings, two RMSNorms per layer).
  CHECK(scaling::param_counts(scaling::model("llama2-7b")).total == 6738415616.0);
  // google/gemma-2-27b: 27,227,128,320 parameters (tied embeddings, four norms per layer).
  CHECK(scaling::param_counts(scaling::model("gemma2-27b")).total == 27227128320.0);
}

// ch4.layer-flops: one layer of LLaMA-3 70B at T = 4096, matrix by matrix. A matmul [T, a]·[a, b] costs
// 2·T·a·b forward and twice that backward (the gradients of both operands).
namespace {
double train_matmul(double T, double a, double b) { return 3 * 2 * T * a * b; }
constexpr double kT = 4096;
}  // namespace
INDEPENDENT("ch4.layer-flops.mlp_flops", "W_in1, W_in2 [D, F] and W_out [F, D], each 3·2·T·D·F", 1e-12) {
  return train_matmul(kT, D70, F70) + train_matmul(kT, D70, F70) + train_matmul(kT, F70, D70);
}
INDEPENDENT("ch4.layer-flops.mlp_params", "three D×F matrices, counted as shapes", 1e-12) {
  const double shapes[3][2] = {{D70, F70}, {D70, F70}, {F70, D70}};
  double n = 0;
  for (const auto& s : shapes) n += s[0] * s[1];
  return n;
}
INDEPENDENT("ch4.layer-flops.qkvo_flops", "W_Q [D, N·H], W_K and W_V [D, K·H], W_O [N·H, D]", 1e-12) {
  return train_matmul(kT, D70, N70 * H70) + 2 * train_matmul(kT, D70, K70 * H70) + train_matmul(kT, N70 * H70, D70);
}
INDEPENDENT("ch4.layer-flops.qkvo_params", "W_Q, W_K, W_V, W_O counted as shapes", 1e-12) {
  return D70 * N70 * H70 + D70 * K70 * H70 + D70 * K70 * H70 + N70 * H70 * D70;
}
INDEPENDENT("ch4.layer-flops.attention_flops", "per head QKᵀ [T, H]·[H, T] and P·V [T, T]·[T, H], × 3", 1e-12) {
  double per_head = train_matmul(kT, H70, kT) + train_matmul(kT, kT, H70);
  return N70 * per_head;
}
INDEPENDENT("ch4.layer-flops.unembedding_flops", "[T, D]·[D, V], × 3", 1e-12) { return train_matmul(kT, D70, V70); }

INDEPENDENT("ch4.dot-flops.matmul_data", "counting the elements of A[1024, 4096] and B[4096, 2048] one by one", 0) {
  double elements = 0;
  for (int n = 0; n < 1024; ++n)
    for (int p = 0; p < 4096; ++p) elements += 1;
  for (int p = 0; p < 4096; ++p)
    for (int m = 0; m < 2048; ++m) elements += 1;
  return elements;
}
INDEPENDENT("ex4.3.sum_of_axes", "a multiply-add per (I, J, K, L, M, N, O) index, counted in loops", 0) {
  double flops = 0;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k)
        for (int l = 0; l < 5; ++l)
          for (int m = 0; m < 6; ++m)
            for (int n = 0; n < 7; ++n)
              for (int o = 0; o < 8; ++o) flops += 2;
  return flops;
}
