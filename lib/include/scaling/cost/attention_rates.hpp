#pragma once
// What the attention core of a flash kernel achieves on a chip, as published: causal attention, TFLOP/s by
// kernel generation, head size and sequence length. The calibrated model (calibrated.hpp) times the
// attention core at these rates; a chip or kernel without a published figure keeps the matmul ceiling.
//
// FLOP count. The benchmarks that printed these figures count a causal forward as
// 4·batch·s²·heads·H / 2 FLOPs (QKᵀ and PV, 2H FLOPs each per (query, key) pair, half the pairs kept), the
// backward as 2.5× the forward and forward + backward as 3.5× (Dao-AILab/flash-attention
// benchmarks/benchmark_flash_attention.py at 60499abcfda1fabd48e1b97341f4f888c66991a3, flops(); the
// FlashAttention-3 script hopper/benchmark_attn.py at dfe1a59e4bcd932248f1e72b7c39cb2f80c18d2e the same),
// rate = FLOPs / measured time. The calibrated model counts, per microbatch of b tokens, heads n and head
// size H: forward F = 4H·b·n·(s + 1)/2 (each query's (s + 1)/2 keys of the lower triangle, the diagonal
// included), backward 2.5·F. The same convention up to (s + 1)/s, at most 0.2 % for s ≥ 512 (the bars are
// printed to ±0.5 TFLOP/s, ±0.9 % of the smallest used), so a printed rate R is used as the model's rate:
//   t_fwd + t_bwd = 3.5·F / R_fb            (R_fb: the published forward + backward rate)
//   t_fwd = F / R_f, t_bwd = 3.5·F / R_fb − F / R_f
// with R_f the published forward-only rate where one is printed for that chip and kernel, else R_fb (then
// t_bwd = 2.5·F / R_fb). The forward's own rate matters for what reruns it: full and selective recompute.
//
// Reading a curve: the figures print s = 512, 1k, 2k, 4k, 8k, 16k (batch 16k / s, model width 2048, so
// 32 heads at H = 64 and 16 at H = 128, fp16). Between two printed lengths the rate is interpolated
// linearly in log2(s); below 512 the 512 value is used, above 16k the 16k value is held (nothing longer is
// published: an assumption, said in the source text and flagged in beyond_printed). A head size other than a printed one (64, 128) is
// read at the nearest printed one in log2 (a tie goes to the larger). Rates were published in fp16 (the
// captions say FP16/BF16): used for bf16 at the same tensor-core peak.
#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "scaling/cost/layout.hpp"

namespace scaling {

// The sequence lengths every published curve prints, ascending.
inline constexpr std::array<double, 6> kAttentionCurveSeqLens = {512, 1024, 2048, 4096, 8192, 16384};

enum class AttentionPass { forward_backward, forward };

// One published curve: the causal rate of `kernel` on `chip` at head size `head_dim`, FLOPs/s at each of
// kAttentionCurveSeqLens, in the FLOP count above.
struct AttentionRateCurve {
  const char* chip;  // the chip preset (hardware/chip.hpp) the figure was measured on
  AttentionKernel kernel;
  double head_dim;
  AttentionPass pass;
  std::array<double, 6> flops_per_s;
  const char* source;  // repository, commit, asset path, panel
};
std::vector<AttentionRateCurve> published_attention_curves();

// The curve's rate at `seq_len` by the rule above (log2 interpolation, clamped to the printed range).
double curve_flops_per_s(const AttentionRateCurve& c, double seq_len);

// A chip with no published curve of its own that takes another chip's curves, and why that stands.
struct AttentionProxy {
  const char* chip;         // the chip preset timed by the other's curves
  const char* measured_on;  // the chip preset the curves were measured on
  const char* why;
};
std::vector<AttentionProxy> attention_proxies();

// The rates a calibrated step times the attention core at.
struct AttentionRates {
  double fwd_bwd_flops_per_s = 0;  // R_fb
  double fwd_flops_per_s = 0;      // R_f (R_fb where no forward-only figure is published)
  bool published = false;          // false: the matmul ceiling, no published figure for this chip and kernel
  bool forward_published = false;  // R_f read from a forward-only curve
  double head_dim_read = 0;        // the printed head size the curves were read at (0: none)
  bool beyond_printed = false;     // seq_len above the longest printed length: its value held
};
// For the flash kernels: the published curves of `chip` (preset name, or the chip it is a proxy of:
// attention_proxies) and `kernel`, read at the nearest printed head size; without one (every TPU,
// materialized) both rates are `ceiling_flops_per_s`.
AttentionRates attention_rates(std::string_view chip, AttentionKernel kernel, double head_dim, double seq_len,
                               double ceiling_flops_per_s);

// One line per flash kernel saying where `chip`'s attention rates come from (or that none is published and
// the matmul ceiling stands in).
std::string attention_source(std::string_view chip);

}  // namespace scaling
