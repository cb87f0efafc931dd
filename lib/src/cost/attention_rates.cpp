#include "scaling/cost/attention_rates.hpp"

#include <cmath>

#include <fmt/format.h>

#include "scaling/base/interpolate.hpp"

namespace scaling {

std::vector<AttentionRateCurve> published_attention_curves() {
  // The FlashAttention-2 release's benchmark figures (the README's "Performance" section shows them): bar
  // charts of forward + backward TFLOP/s on one GPU, panels (a)/(b) without and (c)/(d) with the causal mask
  // at head size 64 / 128; each bar is labelled with its value. The bars named "FlashAttention" are the
  // FlashAttention-1 CUDA kernel, "FlashAttention-2" the new one. The A100 figure also has xformers and a
  // "FlashAttention Triton" bar, which the benchmark script published days later imports as OpenAI Triton's
  // fused-attention op: not the kernel llm-foundry copied (flash-attention's own flash_attn_triton.py), which
  // the model times at FlashAttention-1's figures as a stated proxy; those Triton bars (78–80 TFLOP/s at
  // 8k–16k, head dim 128) would be an alternative proxy of the same class.
  constexpr const char* kA100 =
      "Dao-AILab/flash-attention 4f285b354796fb17df8636485b9a04df3ebbb7dc ('FlashAttention-2 release', 2023-07-17), "
      "assets/flash2_a100_fwd_bwd_benchmark.png: forward + backward on A100 80GB SXM4, causal panels (c) head dim "
      "64 and (d) head dim 128";
  constexpr const char* kH100 =
      "Dao-AILab/flash-attention 4f285b354796fb17df8636485b9a04df3ebbb7dc ('FlashAttention-2 release', 2023-07-17), "
      "assets/flash2_h100_fwd_bwd_benchmark.png: forward + backward on H100 80GB SXM5, causal panels (c) head dim "
      "64 and (d) head dim 128";
  // FlashAttention-3's forward figure (FP16, H100 80GB SXM5), which prints FlashAttention-2's forward beside
  // it: the only forward-only causal figure read here for a kernel we time (the FlashAttention-2 paper,
  // arXiv 2307.08691, prints A100 forward-only and backward-only figures with FlashAttention-1 and Triton
  // bars, its Figures 5 and 6, not available here). Measured a year after the combined figure with a later
  // flash-attn 2.x, so the backward it implies (3.5/R_fb − 1/R_f) mixes two dates.
  constexpr const char* kH100Fwd =
      "Dao-AILab/flash-attention 7ef24848cf2f855077cef88fe122775b727dcd74 ('Add FA3 image', 2024-07-11), "
      "assets/flash3_fp16_fwd.png: forward only on H100 80GB SXM5, FlashAttention-2 bars of the causal panels "
      "(b) head dim 64 and (d) head dim 128";
  constexpr double T = 1e12;
  using K = AttentionKernel;
  using P = AttentionPass;
  return {
      {"a100", K::flash1, 64, P::forward_backward, {58 * T, 70 * T, 77 * T, 87 * T, 92 * T, 97 * T}, kA100},
      {"a100", K::flash1, 128, P::forward_backward, {55 * T, 62 * T, 69 * T, 76 * T, 80 * T, 83 * T}, kA100},
      {"a100", K::flash, 64, P::forward_backward, {88 * T, 119 * T, 140 * T, 156 * T, 165 * T, 171 * T}, kA100},
      {"a100", K::flash, 128, P::forward_backward, {99 * T, 133 * T, 155 * T, 173 * T, 182 * T, 189 * T}, kA100},
      {"h100", K::flash1, 64, P::forward_backward, {104 * T, 123 * T, 136 * T, 138 * T, 149 * T, 156 * T}, kH100},
      {"h100", K::flash1, 128, P::forward_backward, {98 * T, 109 * T, 108 * T, 126 * T, 135 * T, 137 * T}, kH100},
      {"h100", K::flash, 64, P::forward_backward, {141 * T, 192 * T, 232 * T, 257 * T, 273 * T, 284 * T}, kH100},
      {"h100", K::flash, 128, P::forward_backward, {163 * T, 221 * T, 265 * T, 294 * T, 308 * T, 328 * T}, kH100},
      {"h100", K::flash, 64, P::forward, {180 * T, 229 * T, 262 * T, 284 * T, 295 * T, 299 * T}, kH100Fwd},
      {"h100", K::flash, 128, P::forward, {191 * T, 260 * T, 298 * T, 319 * T, 333 * T, 335 * T}, kH100Fwd},
  };
}

double curve_flops_per_s(const AttentionRateCurve& c, double seq_len) {
  return interpolate_in_log_x(kAttentionCurveSeqLens, c.flops_per_s, seq_len);
}

namespace {

const std::vector<AttentionRateCurve>& curves() {
  static const auto all = published_attention_curves();
  return all;
}

const AttentionProxy* proxy_of(std::string_view chip) {
  static const auto all = attention_proxies();
  for (const auto& p : all)
    if (chip == p.chip) return &p;
  return nullptr;
}

// The chip whose curves time `chip`: itself, or the chip it is a proxy of.
std::string_view curve_chip(std::string_view chip) {
  const auto* p = proxy_of(chip);
  return p ? std::string_view(p->measured_on) : chip;
}

// The curve of chip, kernel and pass printed at the head size nearest `head_dim` in log2 (ties: the larger).
const AttentionRateCurve* nearest_curve(std::string_view chip, AttentionKernel kernel, AttentionPass pass,
                                        double head_dim) {
  chip = curve_chip(chip);
  const AttentionRateCurve* best = nullptr;
  double best_d = 0;
  for (const auto& c : curves()) {
    if (chip != c.chip || c.kernel != kernel || c.pass != pass) continue;
    const double d = std::abs(std::log2(c.head_dim / head_dim));
    if (!best || d < best_d || (d == best_d && c.head_dim > best->head_dim)) best = &c, best_d = d;
  }
  return best;
}

const char* kernel_meaning(AttentionKernel k) {
  switch (k) {
    case AttentionKernel::flash: return "FlashAttention-2";
    case AttentionKernel::flash1: return "FlashAttention-1 (and Triton ports of it, as a proxy)";
    case AttentionKernel::materialized: return "materialized scores";
  }
  return "";
}

}  // namespace

std::vector<AttentionProxy> attention_proxies() {
  // The H200 is the H100 SXM's GH100 die with the same tensor cores at the same clocks (989.5 TFLOP/s dense
  // bf16 on both datasheets: hardware/chip.cpp) and faster, larger HBM. A flash kernel reads Q, K and V and
  // writes O once per block of queries: at s tokens and head size H it does about s/4 FLOPs per byte of
  // HBM traffic, past the H100's ridge (295 FLOPs/byte) from about 1.2k tokens, so from there faster HBM
  // buys it little. The H100's rates stand for the H200's: an approximation, said in attention_source.
  return {{"h200", "h100",
           "the H200 has the H100 SXM's tensor cores at its clocks (the same 989.5 TFLOP/s dense bf16 peak) and "
           "faster HBM, which a flash kernel past about 1.2k tokens (s/4 FLOPs per byte, above the H100's ridge of "
           "295) barely uses; no H200 figure is published"}};
}

AttentionRates attention_rates(std::string_view chip, AttentionKernel kernel, double head_dim, double seq_len,
                               double ceiling_flops_per_s) {
  AttentionRates r;
  r.fwd_bwd_flops_per_s = r.fwd_flops_per_s = ceiling_flops_per_s;
  if (kernel == AttentionKernel::materialized) return r;
  const auto* fb = nearest_curve(chip, kernel, AttentionPass::forward_backward, head_dim);
  if (!fb) return r;
  r.published = true;
  r.head_dim_read = fb->head_dim;
  r.beyond_printed = seq_len > kAttentionCurveSeqLens.back();
  r.fwd_bwd_flops_per_s = r.fwd_flops_per_s = curve_flops_per_s(*fb, seq_len);
  if (const auto* f = nearest_curve(chip, kernel, AttentionPass::forward, head_dim)) {
    r.fwd_flops_per_s = curve_flops_per_s(*f, seq_len);
    r.forward_published = true;
  }
  return r;
}

std::string attention_source(std::string_view chip) {
  std::string out;
  bool any_found = false;
  for (AttentionKernel k : {AttentionKernel::flash, AttentionKernel::flash1}) {
    std::string line = fmt::format("{} ({}): ", to_string(k), kernel_meaning(k));
    std::string found;
    for (AttentionPass p : {AttentionPass::forward_backward, AttentionPass::forward}) {
      const char* src = nullptr;
      for (const auto& c : curves())
        if (curve_chip(chip) == c.chip && c.kernel == k && c.pass == p) src = c.source;
      if (!src) continue;
      any_found = true;
      if (!found.empty()) found += "; ";
      found += fmt::format("{}: {}", p == AttentionPass::forward ? "forward" : "forward + backward", src);
    }
    // What was searched and not found: the flash-attention figures cover A100 and H100 only, and no
    // throughput of JAX's Pallas flash or splash attention kernels on a TPU was found published.
    line += found.empty() ? "no published causal rate for this chip: the matmul ceiling (the FlashAttention "
                            "figures cover the A100 and H100 only; no published throughput of the Pallas flash or "
                            "splash attention kernels on TPU v5e or v5p was found)"
                          : found;
    if (!out.empty()) out += "\n";
    out += line;
  }
  if (const auto* p = proxy_of(chip); p && any_found)
    out += fmt::format("\nmeasured on the {} and taken for the {} as a proxy: {}", p->measured_on, chip, p->why);
  if (any_found)
    out += "\nread linearly in log2(s) between the printed 512-16k tokens, the 512 value below, the 16k value held "
           "above (nothing longer published), at the nearest printed head size (64 or 128) in log2";
  return out;
}

}  // namespace scaling
