// Chapter 7's library (cost/inference, cost/frontier, cost/inference_sharding): the decode-step model on
// hand-worked cases, limits and monotonicity, the frontier against a brute-force dominance check, and the
// rejections. Expected values are worked out here from the raw figures, not by calling the function twice.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "scaling/cost/frontier.hpp"
#include "scaling/cost/gemm_efficiency.hpp"
#include "scaling/cost/inference.hpp"
#include "scaling/cost/inference_sharding.hpp"
#include "scaling/hardware/chip.hpp"
#include "scaling/model/presets.hpp"
#include "scaling/model/transformer.hpp"

using namespace scaling;
using doctest::Approx;

namespace {
// §7.1.5's pop quiz: a 30B dense model in int8 (30e9 bytes, 6e10 FLOPs per token), 100 kB of KV per token,
// a v5e 4x4 with the quiz's 8.1e11 B/s and 1.97e14 FLOPs/s.
DecodeInputs quiz() {
  DecodeInputs in;
  in.param_bytes = 30e9;
  in.matmul_flops_per_token = 2 * 30e9;
  in.kv_bytes_per_token = 100e3;
  in.system = bare_system(16, 16e9, 8.1e11, 1.97e14);
  return in;
}
}  // namespace

TEST_CASE("decode step: the §7.1.5 pop quiz, term by term") {
  const auto in = quiz();
  const auto s4 = decode_terms(in, 4, 8192);
  CHECK(s4.kv_bytes == Approx(4 * 8192 * 100e3));
  CHECK(s4.t_kv_s == Approx(4 * 819.2e6 / (16 * 8.1e11)));
  CHECK(s4.t_params_s == Approx(30e9 / 1.296e13));
  CHECK(s4.t_flops_s == Approx(4 * 6e10 / 3.152e15));
  CHECK(s4.step_s == Approx((3.2768e9 + 30e9) / 1.296e13));  // memory-bound: 2.57 ms
  CHECK(std::string(bound(s4)) == "params");
  CHECK_FALSE(s4.mlp_compute_bound);
  const auto s256 = decode_terms(in, 256, 8192);
  CHECK(s256.mlp_compute_bound);
  CHECK(s256.step_s == Approx(256 * 819.2e6 / 1.296e13 + 256 * 6e10 / 3.152e15));  // ≈ 21 ms
  CHECK(std::string(bound(s256)) == "kv");
  CHECK(s256.tokens_per_s == Approx(256 / s256.step_s));
  CHECK(s256.tokens_per_s_per_chip == Approx(256 / s256.step_s / 16));
  CHECK(min_step_s(in, 4, 8192) == Approx(s4.step_s));
}

TEST_CASE("decode step: critical batch is the chip's intensity times bytes per parameter over 2") {
  auto in = quiz();
  in.param_bytes = 2 * 30e9;  // bf16
  CHECK(critical_batch(in) == Approx(1.97e14 / 8.1e11));
  in.param_bytes = 30e9;  // int8 weights, bf16 FLOPs: half
  CHECK(critical_batch(in) == Approx(1.97e14 / 8.1e11 / 2));
  in.system.chip.bf16_flops_per_s = 3.94e14;  // int8 FLOPs: back to the bf16 figure
  CHECK(critical_batch(in) == Approx(1.97e14 / 8.1e11));
  // At B*, t_flops = t_params; just below, memory-bound; just above, compute-bound.
  const double b = critical_batch(in);
  CHECK(decode_terms(in, b, 1).t_flops_s == Approx(decode_terms(in, b, 1).t_params_s));
  CHECK_FALSE(decode_terms(in, std::floor(b), 1).mlp_compute_bound);
  CHECK(decode_terms(in, std::ceil(b) + 1, 1).mlp_compute_bound);
}

TEST_CASE("decode step: tokens/s rises with batch and saturates at 1/(t_kv + t_flops) per token") {
  const auto in = quiz();
  double previous = 0;
  for (double b : {1.0, 2.0, 8.0, 64.0, 200.0}) {
    const double t = decode_terms(in, b, 1024).tokens_per_s;
    CHECK(t > previous);
    previous = t;
  }
  const double per_token = 1024 * 100e3 / (16 * 8.1e11) + 6e10 / (16 * 1.97e14);
  CHECK(decode_terms(in, 1e6, 1024).tokens_per_s == Approx(1 / per_token));
}

TEST_CASE("memory: fits, max batch, min chips") {
  auto in = quiz();  // 16 × 16e9 = 256e9 bytes; weights 30e9; KV per 8192-token sequence 819.2e6
  CHECK(hbm_bytes(in) == 256e9);
  CHECK(max_batch(in, 8192) == std::floor(226e9 / 819.2e6));  // 275
  CHECK(fits(in, 275, 8192));
  CHECK_FALSE(fits(in, 276, 8192));
  CHECK(min_chips(in, 0, 8192) == 2);                             // 30e9 / 16e9 = 1.875
  CHECK(min_chips(in, 10, 8192) == std::ceil(38.192e9 / 16e9));  // 3
  in.system = bare_system(1, 16e9, 8.1e11, 1.97e14);
  in.param_bytes = 20e9;  // weights alone exceed one chip: an answer, not an error
  CHECK(max_batch(in, 8192) == 0);
  CHECK_FALSE(fits(in, 1, 8192));
}

TEST_CASE("from the model and chip descriptions: LLaMA-2-13B on a v5e, dtypes independent") {
  const auto& c = model("llama2-13b");
  const auto& v5e = chip("tpu-v5e");
  // Parameters by hand: L·(4·D·N·H + 3·D·F + 2·D) + 2·V·D + D.
  const double D = 5120, F = 13824, L = 40, V = 32000, NH = 40 * 128;
  const double total = L * (4 * D * NH + 3 * D * F + 2 * D) + 2 * V * D + D;
  const double matmul = L * (4 * D * NH + 3 * D * F) + V * D;  // the embedding is a lookup
  const auto bf16 = decode_inputs(c, v5e, 8, {});
  CHECK(bf16.param_bytes == Approx(2 * total));
  CHECK(bf16.matmul_flops_per_token == Approx(2 * matmul));
  CHECK(bf16.kv_bytes_per_token == Approx(2 * L * NH * 2));
  CHECK(bf16.attention_flops_per_key == Approx(4 * L * NH));
  CHECK(peak_flops_per_s(bf16) == 1.97e14);
  const auto w8 = decode_inputs(c, v5e, 8, {Dtype::int8, Dtype::bf16, Dtype::bf16});
  CHECK(w8.param_bytes == Approx(total));
  CHECK(w8.kv_bytes_per_token == bf16.kv_bytes_per_token);
  const auto kv4 = decode_inputs(c, v5e, 8, {Dtype::bf16, Dtype::int4, Dtype::int8});
  CHECK(kv4.kv_bytes_per_token == Approx(2 * L * NH * 0.5));
  CHECK(peak_flops_per_s(kv4) == 3.94e14);
  // A100 has no fp8 tensor cores: no peak to compute in.
  CHECK_THROWS_AS(decode_inputs(c, chip("a100"), 8, {Dtype::bf16, Dtype::bf16, Dtype::fp8}), std::invalid_argument);
}

TEST_CASE("MoE: bytes from every expert, FLOPs from the active ones") {
  TransformerConfig c;
  c.name = "moe";
  c.d_model = 64, c.d_ff = 128, c.layers = 2, c.q_heads = 4, c.kv_heads = 2, c.head_dim = 16, c.vocab = 100;
  c.experts = 8, c.experts_per_token = 2;
  const auto in = decode_inputs(c, chip("tpu-v5e"), 1, {});
  const double D = 64, F = 128, L = 2, E = 8, k = 2, attn = D * 4 * 16 + 2 * D * 2 * 16 + 4 * 16 * D;
  const double stored = L * (attn + E * 3 * D * F + D * E + 2 * D) + 2 * 100 * D + D;
  const double active_matmul = L * (attn + k * 3 * D * F + D * E) + 100 * D;
  CHECK(in.param_bytes == Approx(2 * stored));
  CHECK(in.matmul_flops_per_token == Approx(2 * active_matmul));
}

TEST_CASE("slices: allowed shapes and the smallest that holds a chip count") {
  const auto& v5e = chip("tpu-v5e");
  const std::vector<std::vector<int>> want{{1, 1}, {2, 2}, {2, 4}, {4, 4}, {4, 8}, {8, 8}, {8, 16}, {16, 16}};
  CHECK(allowed_slices(v5e) == want);
  CHECK(smallest_slice(v5e, 7) == std::vector<int>{2, 4});
  CHECK(smallest_slice(v5e, 8.75) == std::vector<int>{4, 4});
  CHECK(smallest_slice(v5e, 1) == std::vector<int>{1, 1});
  CHECK_FALSE(smallest_slice(v5e, 257).has_value());
  const auto v5p = allowed_slices(chip("tpu-v5p"));
  CHECK(v5p.front() == std::vector<int>{2, 2, 1});
  CHECK(v5p.back() == std::vector<int>{16, 20, 28});  // the full pod, after 16x16x16
  CHECK(smallest_slice(chip("tpu-v5p"), 4097) == std::vector<int>{16, 20, 28});
  for (std::size_t i = 1; i < v5p.size(); ++i) CHECK(chips_in(v5p[i]) > chips_in(v5p[i - 1]));
  CHECK(allowed_slices(chip("h100")).back() == std::vector<int>{8});
}

TEST_CASE("prefill, disaggregation, eviction, prefix cache, FLOPs per dollar") {
  auto in = quiz();
  in.attention_flops_per_key = 0;
  const auto p = prefill(in, 8192, 0.4);
  CHECK(p.t_s == Approx(8192 * 6e10 / (16 * 1.97e14 * 0.4)));
  in.attention_flops_per_key = 1000;
  const auto q = prefill(in, 4, 1);
  CHECK(q.attention_flops == 1000 * (1 + 2 + 3 + 4));
  // §8.3's pipeline: 0.91 s per prefill, 19 ms per step at batch 32, 512-token decodes -> about 3.
  CHECK(prefill_to_decode_servers(0.91, 0.019, 32, 512) == Approx(0.91 * 32 / (0.019 * 512)));
  CHECK(kv_tokens_evicted_per_step(32, 8192, 4096) == Approx(96));
  CHECK(sequences_finished_per_step(32, 4096) == Approx(1.0 / 128));
  CHECK(prefix_cache_matmul_fraction(3, 2) == Approx(1.0 / 3));
  in.attention_flops_per_key = 0;
  CHECK(prefix_cache_flops_fraction(in, 3, 2) == Approx(1.0 / 3));
  in.attention_flops_per_key = 6e10;  // attention as costly per key as the matmuls per token
  // Full: 3 + (1+2+3) = 9 units; with 2 cached: 1 + 3 = 4 units.
  CHECK(prefix_cache_flops_fraction(in, 3, 2) == Approx(4.0 / 9));
  CHECK(flops_per_dollar(1.97e14, 1.20) == Approx(1.97e14 * 3600 / 1.2));
  CHECK(qps_per_chip(decode_terms(quiz(), 32, 8192), 512) ==
        Approx(decode_terms(quiz(), 32, 8192).tokens_per_s_per_chip / 512));
}

TEST_CASE("frontier: every batch that fits, Pareto set by brute-force dominance") {
  auto in = quiz();
  in.system = bare_system(4, 16e9, 8.1e11, 1.97e14);  // 64e9 of HBM: (64e9 − 30e9)/(2048·100e3) = 166 sequences of 2048
  const auto points = frontier(in, 2048);
  REQUIRE(points.size() == 166);
  for (std::size_t i = 0; i < points.size(); ++i) {
    bool dominated = false;
    // o dominates i: no slower and clearly more productive, or faster and as productive to rounding (1e-12).
    const double t = points[i].tokens_per_s_per_chip, s = points[i].step_s;
    for (const auto& o : points)
      dominated |= (o.step_s <= s && o.tokens_per_s_per_chip > t * (1 + 1e-12)) ||
                   (o.step_s < s && o.tokens_per_s_per_chip * (1 + 1e-12) >= t);
    CHECK(points[i].pareto == !dominated);
  }
  in.param_bytes = 1e12;
  CHECK(frontier(in, 2048).empty());
  std::vector<FrontierPoint> mixed{{1, 2.0, 5, false}, {2, 1.0, 6, false}, {3, 3.0, 7, false}, {4, 3.0, 7, false}};
  mark_pareto(mixed);
  CHECK_FALSE(mixed[0].pareto);  // slower and less productive than point 2
  CHECK(mixed[1].pareto);
  CHECK(mixed[2].pareto);
  CHECK(mixed[3].pareto);  // equal points are both kept
}

TEST_CASE("sharding for decode: model-parallel limit, latency-bound collectives, 2-D weight stationary") {
  CHECK(model_parallel_limit(16384, 32, 8e11, 1e11) == Approx(64));  // §7.3.2
  CHECK(latency_bound_buffer_bytes(8, 4.5e10, 1e-6) == Approx(360e3));  // §7.6.3
  CHECK(latency_bound(16 * 8192, 8, 4.5e10, 1e-6));
  CHECK(latency_bound_shards(16, 8192, 1, 4.5e10, 1e-6) == Approx(16 * 8192 / 45000.0));
  // Ex. 7.7: with F = 4D the optimum is X = sqrt(N/8) and the minimum sqrt(128)·BD/(sqrt(N)·W).
  const double B = 8, D = 1024, F = 4096, N = 512, W = 1e11;
  CHECK(weight_stationary_2d_best_x(D, F, N) == Approx(8));
  CHECK(weight_stationary_2d_min_comms_s(B, D, F, N, W) == Approx(std::sqrt(128.0) * B * D / (std::sqrt(N) * W)));
  // The optimum beats its neighbours.
  for (double X : {4.0, 16.0})
    CHECK(weight_stationary_2d_comms_s(B, D, F, X, N / X, W) > weight_stationary_2d_min_comms_s(B, D, F, N, W));
  CHECK(weight_stationary_2d_crossover_chips(D, F) == Approx(72));
  const double n = weight_stationary_2d_crossover_chips(D, F);
  CHECK(weight_stationary_2d_min_comms_s(B, D, F, n, W) == Approx(weight_stationary_1d_comms_s(B, D, W)));
  CHECK(mlp_t_math_s(B, D, F, N, 1.97e14) == Approx(4 * B * D * F / (N * 1.97e14)));
}

TEST_CASE("inference library rejects bad sizes with the field named") {
  const auto in = quiz();
  CHECK_THROWS_WITH_AS(decode_terms(in, 0, 8192), doctest::Contains("batch"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(decode_terms(in, 4, -1), doctest::Contains("context"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(decode_terms(in, 4, NAN), doctest::Contains("context"), std::invalid_argument);
  auto bad = in;
  bad.system.chip.hbm_bytes_per_s = 0;
  CHECK_THROWS_WITH_AS(decode_terms(bad, 1, 1), doctest::Contains("hbm_bytes_per_s"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(prefill(in, 10, 1.5), doctest::Contains("mfu"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(prefix_cache_matmul_fraction(3, 4), doctest::Contains("cached"), std::invalid_argument);
  CHECK_THROWS_AS(frontier(in, 1, CostModel::book, 10), std::invalid_argument);  // more batches than the cap
  CHECK_THROWS_AS(qps_per_chip(decode_terms(in, 1, 1), 0), std::invalid_argument);
  CHECK_THROWS_WITH_AS(decode_terms(in, 1e300, 1e300), doctest::Contains("overflow"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(bare_system(1e300, 16e9, 8.1e11, 1.97e14), doctest::Contains("chips"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(bare_system(2.5, 16e9, 8.1e11, 1.97e14), doctest::Contains("chips = 2.5"), std::invalid_argument);
  auto huge = in;
  huge.system.chip.hbm_bytes = 1e300;
  huge.system = serving_system(huge.system.chip, 1e9);
  CHECK_THROWS_WITH_AS(decode_terms(huge, 1, 1), doctest::Contains("overflow"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(serving_system(chip("h100"), 12), doctest::Contains("whole nodes"), std::invalid_argument);
}

TEST_CASE("decode step, ideal model: the exact lower bound with §7.2's collectives beside HBM and FLOPs") {
  // The quiz's 30B model given a shape: 48 layers of D = 7168, 4·48·7168 attention FLOPs per cached key. A
  // hand-made System of two axes (4 wrapping at 9e10 B/s with 1 µs hops, 2 open at 4.5e10 with 2 µs) and
  // 2 groups over a slow tier (1e10 B/s, 10 µs): 16 chips of the quiz's figures.
  DecodeInputs in = quiz();
  in.layers = 48;
  in.d_model = 7168;
  in.attention_flops_per_key = 4 * 48 * 7168;
  System sys;
  sys.chip = in.system.chip;
  sys.fast = {{4, true, 9e10, 1e-6}, {2, false, 4.5e10, 2e-6}};
  sys.slow = {2, 1e10, 10e-6, "DCN"};
  in.system = sys;
  const double batch = 64, T = 1024, bytes = 64 * 7168 * 2;
  // By hand: 8 chips on the fast axes share 1.35e11 B/s, then half the bytes cross the slow tier once.
  const double t_bw = 7.0 / 8 * bytes / 1.35e11 + 0.5 * bytes / 1e10;
  const double t_lat = 2 * 1e-6 + 1 * 2e-6 + 1 * 10e-6;  // ⌊4/2⌋ + (2−1) fast hops, ⌊2/2⌋ slow hop
  const DecodeTerms book = decode_terms(in, batch, T), s = decode_terms(in, batch, T, CostModel::ideal);
  CHECK(book.t_comms_s == 0);
  CHECK(s.comms_bytes == bytes);
  CHECK(s.comms_collectives == 4 * 48);
  CHECK(s.comms_hops == 4);
  CHECK(s.t_comms_s == Approx(4 * 48 * std::max(t_bw, t_lat)));
  CHECK(s.comms_latency_bound == (t_lat > t_bw));
  const double hbm = (30e9 + 64 * 1024 * 100e3) / (16 * 8.1e11);
  const double math = (64 * 6e10 + 64 * 1024 * 4 * 48 * 7168.0) / (16 * 1.97e14);
  CHECK(s.t_hbm_s == Approx(hbm));
  CHECK(s.t_math_s == Approx(math));
  CHECK(s.step_s == Approx(std::max({hbm, math, 4 * 48 * std::max(t_bw, t_lat)})));
  CHECK(s.tokens_per_s == Approx(batch / s.step_s));
  // With nothing the book leaves out (one chip: no collectives; no attention FLOPs) the ideal step is never
  // above the book's, which adds the KV read to the weights' or the FLOPs' time instead of overlapping them.
  DecodeInputs lone = quiz();
  lone.system = bare_system(1, 16e9, 8.1e11, 1.97e14);
  for (double b : {1.0, 8.0, 64.0, 256.0})
    CHECK(decode_terms(lone, b, T, CostModel::ideal).step_s <= decode_terms(lone, b, T).step_s * (1 + 1e-12));
  in.layers = 0;
  CHECK_THROWS_WITH_AS(decode_terms(in, batch, T, CostModel::ideal), doctest::Contains("layers"), std::invalid_argument);
}

TEST_CASE("decode step: one count of tensor-parallel reductions per layer, from the config, in both models") {
  // Pythia-1.4B runs attention and MLP side by side (use_parallel_residual) and adds both into the residual
  // at once; the same sizes made sequential add the attention's output, then the MLP's. Counted by hand:
  // each place the row-parallel partial sums (W_O, W_out) join the residual needs one AllReduce over the
  // tensor-parallel chips: 2 per sequential layer, 1 per parallel one. The ideal model times an AllReduce as
  // a ReduceScatter plus an AllGather (two collectives), the calibrated one as one AllReduce.
  const auto parallel = load_hf_config(std::string(TEST_DATA_DIR) + "/pythia-1.4b.json");
  REQUIRE(parallel.parallel_blocks);
  auto sequential = parallel;
  sequential.parallel_blocks = false;
  const double L = parallel.layers, B = 32, T = 2048;
  const auto h100 = chip("h100");
  for (const auto& [config, per_layer] : {std::pair{parallel, 1.0}, std::pair{sequential, 2.0}}) {
    INFO(per_layer);
    const auto in = decode_inputs(config, h100, 8, {});
    CHECK(tp_reductions_per_step(in) == per_layer * L);
    const auto ideal = decode_terms(in, B, T, CostModel::ideal);
    const auto cal = decode_terms(in, B, T, CostModel::calibrated);
    CHECK(ideal.comms_reductions == per_layer * L);
    CHECK(cal.comms_reductions == per_layer * L);
    CHECK(ideal.comms_collectives == 2 * per_layer * L);
    CHECK(cal.comms_collectives == per_layer * L);
    // By hand from the raw figures: B·D·2 bytes, a ring over the 8 GPUs' NVLink (4.5e11 B/s each, no
    // per-hop latency in the preset) for each half; the calibrated AllReduce both halves plus the measured
    // 8-GPU latency (10.1 µs).
    const double bytes = B * parallel.d_model * 2, half = 7.0 / 8 * bytes / 4.5e11;
    CHECK(ideal.t_comms_s == Approx(2 * per_layer * L * half).epsilon(1e-12));
    CHECK(cal.t_comms_s == Approx(per_layer * L * (10.1e-6 + 2 * half)).epsilon(1e-12));
    // Prefill follows the same count (B·P tokens of activations).
    const double pbytes = B * T * parallel.d_model * 2, phalf = 7.0 / 8 * pbytes / 4.5e11;
    CHECK(prefill_terms(in, B, T, CostModel::ideal).t_comms_s == Approx(2 * per_layer * L * phalf).epsilon(1e-12));
    CHECK(prefill_terms(in, B, T, CostModel::calibrated).t_comms_s ==
          Approx(per_layer * L * (10.1e-6 + 2 * phalf)).epsilon(1e-12));
  }
  // A by-hand model takes the usual layer (2) and refuses anything but 1 or 2, naming the field.
  DecodeModel m = decode_model(sequential, {});
  m.tp_reductions_per_layer = 3;
  CHECK_THROWS_WITH_AS(validate(m), "tp_reductions_per_layer = 3: must be 1 (parallel blocks) or 2 (attention, then MLP)",
                       std::invalid_argument);
  CHECK(DecodeModel{}.tp_reductions_per_layer == 2);
}

TEST_CASE("decode step, calibrated model: matmuls at their measured rates, the KV read, AllReduces with latency") {
  // LLaMA-3-8B on one H100 node (8 GPUs), written out: D 4096, F 14336, 32 Q heads and 8 KV heads of 128,
  // V 128256. Each layer's matmuls sharded Megatron's way: QKV (4096 → 6144/8), O (4096/8 → 4096), up+gate
  // (4096 → 2·14336/8), down (14336/8 → 4096); the unembedding 4096 → 128256/8.
  const auto& h100 = chip("h100");
  const auto in = decode_inputs(model("llama3-8b"), h100, 8, {});
  const GemmTable& t = measured_gemm_table("h100");
  const double B = 16, T = 2048, L = 32;
  auto g = [&](double k, double n) { return 2 * B * k * n / achieved_flops_per_s(t, B, k, n); };
  const double layer = g(4096, 6144.0 / 8) + g(4096.0 / 8, 4096) + 2 * g(4096, 14336.0 / 8) + g(14336.0 / 8, 4096);
  const double matmuls = L * layer + g(4096, 128256.0 / 8);
  const double W = measured_bytes_per_s("h100", "copy");  // the achieved HBM rate
  const double kv = B * T * 2 * L * 8 * 128 * 2 / (8 * W);
  // Two AllReduces per layer of B·D·2 bytes: ReduceScatter + AllGather over NVLink (4.5e11 B/s per GPU),
  // and the measured 8-GPU latency of 10.1 µs each.
  const double ar = 10.1e-6 + 2 * 7.0 / 8 * B * 4096 * 2 / 4.5e11;
  // The non-matmul kernels per layer and token, bf16: two RMSNorms (read and write D), two residual adds
  // (read 2D, write D), SiLU·gate on this GPU's 14336/8 (read 2F, write F), rotary on Q and K (read and write
  // (4096 + 1024)/8), each at the rate measured for that kernel on the H100.
  auto rate = [](const char* op) { return measured_bytes_per_s("h100", op); };
  const double vector = B * L * (2 * 4096 * 2 * 2 / rate("rmsnorm") + 2 * 3 * 4096 * 2 / rate("add") +
                                 3 * 14336.0 / 8 * 2 / rate("silu_mul") + 2 * 5120.0 / 8 * 2 / rate("copy"));
  const auto s = decode_terms(in, B, T, CostModel::calibrated);
  CHECK(s.t_math_s == Approx(matmuls).epsilon(1e-12));
  CHECK(s.t_vector_s == Approx(vector).epsilon(1e-12));
  CHECK(s.t_hbm_s == Approx(kv).epsilon(1e-12));
  CHECK(s.comms_collectives == 2 * L);
  CHECK(s.t_comms_s == Approx(2 * L * ar).epsilon(1e-12));
  CHECK(s.step_s == Approx(matmuls + kv + vector + 2 * L * ar).epsilon(1e-12));
  // Physically above the ideal lower bound, and each measured matmul no faster than its weights at the
  // datasheet bandwidth.
  CHECK(s.step_s > decode_terms(in, B, T, CostModel::ideal).step_s);
  CHECK(matmuls > 2 * 8.03e9 / (8 * 3.35e12) * 0.9);
  // A GPU without its own table (A100): each matmul sits as far above the A100's roofline (1.7e12 B/s
  // achieved, 3.12e14 FLOPs/s) as the H100's measured time sits above the H100's (its copy rate, 9.894e14).
  const auto a = decode_inputs(model("llama3-8b"), chip("a100"), 1, {});
  const double Wh = measured_bytes_per_s("h100", "copy");
  auto ga = [&](double k, double n) {
    const double flops = 2 * B * k * n;
    const double r = (flops / achieved_flops_per_s(t, B, k, n)) / std::max(flops / 9.894e14, 2 * k * n / Wh);
    return r * std::max(flops / 3.12e14, 2 * k * n / 1.7e12);
  };
  const double a_layer = ga(4096, 6144) + ga(4096, 4096) + 2 * ga(4096, 14336) + ga(14336, 4096);
  CHECK(decode_terms(a, B, T, CostModel::calibrated).t_math_s == Approx(L * a_layer + ga(4096, 128256)).epsilon(1e-12));
  // A chip without measurements (a TPU): the weights at the datasheet bandwidth or the FLOPs at the peak.
  const auto v = decode_inputs(model("llama3-8b"), chip("tpu-v5e"), 1, {});
  const auto one = decode_terms(v, 1, 128, CostModel::calibrated);
  CHECK(one.t_comms_s == 0);
  CHECK(one.t_math_s >= v.param_bytes * 0.9 / 8.1e11);
  CHECK(one.t_math_s <= v.param_bytes / 8.1e11);  // the lookup embedding's bytes are stored, not multiplied
}
