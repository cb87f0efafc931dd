// The attention core's published rates (attention_rates.hpp) and how the calibrated model uses them. The
// printed figures are written here as read off the bars of the source images, not taken from the table in
// lib/src/cost/attention_rates.cpp:
//   A100 80GB SXM4, forward + backward, causal: Dao-AILab/flash-attention 4f285b354796fb17df8636485b9a04df3ebbb7dc,
//     assets/flash2_a100_fwd_bwd_benchmark.png, panel (d) head dim 128: FlashAttention-2 99 (512), 133 (1k),
//     155 (2k), 173 (4k), 182 (8k), 189 (16k); FlashAttention 55, 62, 69, 76, 80, 83. Panel (c) head dim 64:
//     FlashAttention 58, 70, 77, 87, 92, 97 TFLOP/s.
//   H100 80GB SXM5, same commit, assets/flash2_h100_fwd_bwd_benchmark.png, panel (d): FlashAttention-2 8k 308.
//   H100, forward only: flash-attention 7ef24848cf2f855077cef88fe122775b727dcd74, assets/flash3_fp16_fwd.png,
//     panel (d) (causal, head dim 128), FlashAttention-2 8k 333 TFLOP/s.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "scaling/cost/attention_rates.hpp"
#include "scaling/cost/calibrated.hpp"
#include "scaling/cost/planner.hpp"

using namespace scaling;

namespace {

constexpr double T = 1e12;

// A dense model with one layer, so the attention term is one layer's.
TransformerConfig one_layer(double head_dim, double heads) {
  TransformerConfig c;
  c.name = "one-layer";
  c.layers = 1, c.head_dim = head_dim, c.q_heads = heads, c.kv_heads = heads, c.d_model = head_dim * heads;
  c.d_ff = 4 * c.d_model, c.vocab = 32000, c.gated_mlp = false;
  return c;
}

// t_attention_s of one microbatch of one sequence of s tokens on one chip (no parallelism).
Terms one_sequence(const TransformerConfig& c, const System& sys, double s, AttentionKernel k, const char* saved = "all") {
  Layout l;
  l.fast.assign(sys.fast.size(), AxisRoles{});
  l.zero = 0;
  l.saved = saved_rule(saved);
  l.attention = k;
  return step_terms(c, sys, l, {s, s}, CostModel::calibrated);
}

// The model's forward FLOPs of one causal sequence (calibrated.hpp): 4H FLOPs per (query, key) pair of the
// lower triangle, diagonal included: Σ_{i=1..s} i = s(s + 1)/2 pairs per head.
double causal_forward_flops(double s, double head_dim, double heads) { return 4 * head_dim * heads * s * (s + 1) / 2; }

}  // namespace

TEST_CASE("attention rates: a printed point is read as printed, the model's time from it by hand") {
  // A100, FlashAttention-2, head dim 128, 4k tokens: 173 TFLOP/s forward + backward, no forward-only figure.
  const auto r = attention_rates("a100", AttentionKernel::flash, 128, 4096, 271.2 * T);
  CHECK(r.published);
  CHECK_FALSE(r.forward_published);
  CHECK(r.fwd_bwd_flops_per_s == doctest::Approx(173 * T).epsilon(1e-12));
  CHECK(r.fwd_flops_per_s == doctest::Approx(173 * T).epsilon(1e-12));
  // The step: one layer of 16 heads, one 4096-token sequence: 3.5 forward FLOPs over the printed rate.
  const auto c = one_layer(128, 16);
  const Terms t = one_sequence(c, gpu_cluster(chip("a100"), 1, 1), 4096, AttentionKernel::flash);
  CHECK(t.calibrated.t_attention_s == doctest::Approx(3.5 * causal_forward_flops(4096, 128, 16) / (173 * T)).epsilon(1e-12));
  // FlashAttention-1 on the same shape: 76 TFLOP/s.
  const Terms t1 = one_sequence(c, gpu_cluster(chip("a100"), 1, 1), 4096, AttentionKernel::flash1);
  CHECK(t1.calibrated.t_attention_s == doctest::Approx(3.5 * causal_forward_flops(4096, 128, 16) / (76 * T)).epsilon(1e-12));
}

TEST_CASE("attention rates: linear in log2(s) between two printed points") {
  // At the geometric mean of two printed lengths the rate is the arithmetic mean of their bars: A100
  // FlashAttention-2 head dim 128 between 2k (155) and 4k (173): 164 at sqrt(2048·4096).
  const double mid = std::sqrt(2048.0 * 4096.0);
  CHECK(attention_rates("a100", AttentionKernel::flash, 128, mid, 1).fwd_bwd_flops_per_s == doctest::Approx(164 * T).epsilon(1e-12));
  // A quarter of the way in log2 from 8k (80) to 16k (83), FlashAttention-1: 80 + 3/4 = 80.75.
  const double quarter = 8192 * std::pow(2.0, 0.25);
  CHECK(attention_rates("a100", AttentionKernel::flash1, 128, quarter, 1).fwd_bwd_flops_per_s ==
        doctest::Approx(80.75 * T).epsilon(1e-12));
  // Monotone between printed points where the bars rise: 1.5k lies between the 1k and 2k bars (62, 69).
  const double r = attention_rates("a100", AttentionKernel::flash1, 128, 1536, 1).fwd_bwd_flops_per_s;
  CHECK(r > 62 * T);
  CHECK(r < 69 * T);
}

TEST_CASE("attention rates: below 512 the 512 bar, above 16k the 16k bar held and flagged") {
  const auto low = attention_rates("a100", AttentionKernel::flash, 128, 128, 1);
  CHECK(low.fwd_bwd_flops_per_s == doctest::Approx(99 * T).epsilon(1e-12));
  CHECK_FALSE(low.beyond_printed);
  const auto high = attention_rates("a100", AttentionKernel::flash, 128, 65536, 1);
  CHECK(high.fwd_bwd_flops_per_s == doctest::Approx(189 * T).epsilon(1e-12));
  CHECK(high.beyond_printed);
  CHECK_FALSE(attention_rates("a100", AttentionKernel::flash, 128, 16384, 1).beyond_printed);
}

TEST_CASE("attention rates: a head size between the printed ones is read at the nearest in log2") {
  // 80 is nearer 64 (log2 ratio 0.32) than 128 (0.68): FlashAttention-1's head-dim-64 bar at 8k, 92.
  CHECK(attention_rates("a100", AttentionKernel::flash1, 80, 8192, 1).fwd_bwd_flops_per_s == doctest::Approx(92 * T).epsilon(1e-12));
  CHECK(attention_rates("a100", AttentionKernel::flash1, 80, 8192, 1).head_dim_read == 64);
  // 96 is nearer 128 (0.415) than 64 (0.585); 256 reads 128, the largest printed.
  CHECK(attention_rates("a100", AttentionKernel::flash1, 96, 8192, 1).fwd_bwd_flops_per_s == doctest::Approx(80 * T).epsilon(1e-12));
  CHECK(attention_rates("a100", AttentionKernel::flash1, 256, 8192, 1).head_dim_read == 128);
}

TEST_CASE("attention rates: a forward-only figure prices the forward, the pair keeps the combined rate") {
  // H100, FlashAttention-2, head dim 128, 8k: forward + backward 308, forward alone 333 TFLOP/s.
  const auto c = one_layer(128, 16);
  const System h100 = gpu_cluster(chip("h100"), 1, 1);
  const double F = causal_forward_flops(8192, 128, 16);
  const Terms none = one_sequence(c, h100, 8192, AttentionKernel::flash, "all");
  CHECK(none.calibrated.t_attention_s == doctest::Approx(3.5 * F / (308 * T)).epsilon(1e-12));
  // Selective recompute reruns the attention core's forward: at the forward's own rate.
  const Terms sel = one_sequence(c, h100, 8192, AttentionKernel::flash, "matmuls");
  CHECK(sel.calibrated.t_recompute_s == doctest::Approx(F / (333 * T)).epsilon(1e-12));
  CHECK(sel.calibrated.t_attention_s == doctest::Approx(none.calibrated.t_attention_s).epsilon(1e-12));
  // Where no forward-only figure is printed (A100) the rerun is at the combined rate.
  const Terms a100 = one_sequence(c, gpu_cluster(chip("a100"), 1, 1), 8192, AttentionKernel::flash, "matmuls");
  CHECK(a100.calibrated.t_recompute_s == doctest::Approx(F / (182 * T)).epsilon(1e-12));
}

TEST_CASE("attention rates: a chip or kernel without a published figure keeps the matmul ceiling") {
  const auto c = one_layer(128, 16);
  for (const char* name : {"tpu-v5e", "tpu-v5p"}) {
    CAPTURE(name);
    const Chip ch = chip(name);
    const System sys = ch.gpus_per_node > 0 ? gpu_cluster(ch, 1, 1) : tpu_pods(ch, {1}, 1);
    const ChipCalibration cal = chip_calibration(ch);
    CHECK(cal.attention_source.find("no published causal rate for this chip: the matmul ceiling") != std::string::npos);
    for (AttentionKernel k : {AttentionKernel::flash, AttentionKernel::flash1}) {
      const auto r = attention_rates(name, k, 128, 4096, cal.matmul_ceiling_flops_per_s);
      CHECK_FALSE(r.published);
      CHECK(r.fwd_bwd_flops_per_s == cal.matmul_ceiling_flops_per_s);
      const Terms t = one_sequence(c, sys, 4096, k);
      CHECK(t.calibrated.t_attention_s ==
            doctest::Approx(3.5 * causal_forward_flops(4096, 128, 16) / cal.matmul_ceiling_flops_per_s).epsilon(1e-12));
    }
  }
  // A what-if that moves a chip's ceiling (validation's sensitivity variants) moves its attention with it
  // where no figure is published, and not where one is.
  for (const char* name : {"tpu-v5e", "a100"}) {
    CAPTURE(name);
    const Chip ch = chip(name);
    const System sys = ch.gpus_per_node > 0 ? gpu_cluster(ch, 1, 1) : tpu_pods(ch, {1}, 1);
    auto ctx = calibrated_context(c, sys, 4096, 4096, {});
    const double before = flash_attention_times(ctx, AttentionKernel::flash, 4096, 16).fwd_s;
    ctx.cal.matmul_ceiling_flops_per_s /= 2;
    const double after = flash_attention_times(ctx, AttentionKernel::flash, 4096, 16).fwd_s;
    CHECK(after == doctest::Approx(std::string(name) == "a100" ? before : 2 * before).epsilon(1e-12));
  }
  // The materialized kernel is never read from a flash figure.
  CHECK_FALSE(attention_rates("a100", AttentionKernel::materialized, 128, 4096, 1).published);
  // A chip with figures names them.
  const auto a100 = chip_calibration(chip("a100")).attention_source;
  CHECK(a100.find("flash2_a100_fwd_bwd_benchmark.png") != std::string::npos);
  CHECK(a100.find("4f285b354796fb17df8636485b9a04df3ebbb7dc") != std::string::npos);
}

TEST_CASE("attention rates: the H200 takes the H100's figures, as a proxy said in its source") {
  // The premise the proxy rests on: both datasheets print the same dense bf16 peak (989.5 TFLOP/s; the H100
  // preset rounds it to 989), the H200 with more HBM bandwidth (4.8 against 3.35 TB/s).
  const Chip h100 = chip("h100"), h200 = chip("h200");
  CHECK(h200.bf16_flops_per_s == doctest::Approx(h100.bf16_flops_per_s).epsilon(1e-3));
  CHECK(h200.hbm_bytes_per_s > h100.hbm_bytes_per_s);
  // FlashAttention-2 at 8k tokens, head dim 128, forward + backward on the H100: 308 TFLOP/s (header).
  const auto r = attention_rates("h200", AttentionKernel::flash, 128, 8192, 1);
  CHECK(r.published);
  CHECK(r.fwd_bwd_flops_per_s == doctest::Approx(308e12).epsilon(1e-12));
  const std::string src = chip_calibration(h200).attention_source;
  CHECK(src.find("flash2_h100_fwd_bwd_benchmark.png") != std::string::npos);
  CHECK(src.find("measured on the h100 and taken for the h200 as a proxy") != std::string::npos);
  // The H100 names no proxy.
  CHECK(chip_calibration(h100).attention_source.find("proxy:") == std::string::npos);
}

TEST_CASE("attention rates: the published data are consistent with what they claim") {
  // Every curve: positive, at most the chip's datasheet bf16 peak; FlashAttention-2 faster than
  // FlashAttention-1 at every printed length; a forward-only curve leaves a positive backward.
  for (const auto& c : published_attention_curves()) {
    CAPTURE(c.chip);
    CAPTURE(c.head_dim);
    for (double r : c.flops_per_s) {
      CHECK(r > 0);
      CHECK(r < chip(c.chip).bf16_flops_per_s);
    }
  }
  for (const char* name : {"a100", "h100"})
    for (double d : {64.0, 128.0})
      for (double s : kAttentionCurveSeqLens) {
        const auto fa2 = attention_rates(name, AttentionKernel::flash, d, s, 1);
        const auto fa1 = attention_rates(name, AttentionKernel::flash1, d, s, 1);
        CHECK(fa2.fwd_bwd_flops_per_s > fa1.fwd_bwd_flops_per_s);
        // The backward the two figures imply: 2.5 F over (3.5 F / R_fb − F / R_f) > 0.
        CHECK(3.5 / fa2.fwd_bwd_flops_per_s - 1 / fa2.fwd_flops_per_s > 0);
      }
}

TEST_CASE("attention kernel: one vocabulary, a bad name refused with the names") {
  for (AttentionKernel k : {AttentionKernel::flash, AttentionKernel::flash1, AttentionKernel::materialized})
    CHECK(parse_attention_kernel(to_string(k)) == k);
  try {
    parse_attention_kernel("flash2");
    FAIL("accepted flash2");
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()) == "'flash2': expected flash, flash1 or materialized");
  }
}
