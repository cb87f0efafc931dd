// The calibrated step model (cost/calibrated.hpp), each rule held against an independent derivation: the
// pipeline bubble against a simulated 1F1B / interleaved schedule, causal attention against a brute-force count
// of (query, key) pairs, sequence parallelism moving the same TP bytes, TP collectives in a GPU node by hand
// from a published NCCL sweep, the overlap switches only ever
// hiding time, the measured H100 table against a published achievable-matmul figure, the A100's and TPU
// v5e's GEMM rates against their published sources by hand and against each other, and the planner's
// calibrated search against step_terms on what it reports.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "scaling/cost/calibrated.hpp"
#include "scaling/cost/planner.hpp"
#include "scaling/model/presets.hpp"

using namespace scaling;

namespace {

// GPT-3 175B as Korthikanti et al. (Table 3) run it: 8-way tensor in a node, 8 pipeline stages.
TransformerConfig gpt175() {
  TransformerConfig c;
  c.name = "gpt-175b";
  c.layers = 96, c.d_model = 12288, c.q_heads = 96, c.kv_heads = 96, c.head_dim = 128, c.d_ff = 49152;
  c.vocab = 51200, c.gated_mlp = false, c.norm_bias = true, c.attention_bias = true, c.mlp_bias = true;
  c.tied_embeddings = true;
  return c;
}

Layout megatron(int microbatches) {
  Layout l;
  l.fast = {AxisRoles{1, 8, 1}};
  l.slow = {1, 1, 8};
  l.microbatches = microbatches;
  l.zero = 0;
  l.saved = saved_rule("matmuls");
  return l;
}

const System& a100x64() {
  static const System s = gpu_cluster(chip("a100"), 8);
  return s;
}

Terms calibrated(const Layout& l, double seqs = 64) {
  return step_terms(gpt175(), a100x64(), l, {seqs * 2048, 2048}, CostModel::calibrated);
}

}  // namespace

namespace {

// An independent count of the pipeline bubble: run Megatron-LM's 1F1B schedule (interleaved when v > 1,
// Narayanan et al. 2021 §2.2) on S devices in unit time steps and measure the idle share. Each device
// holds v model chunks (virtual stage k = chunk·S + device); a chunk's forward of one microbatch takes 1
// step, its backward 2. A device runs its own list of tasks in the order the schedule fixes, each task as
// soon as the device is free and its input is ready: forward (k, j) after forward (k − 1, j), backward
// (k, j) after backward (k + 1, j), or after forward (k, j) on the last virtual stage.
double simulated_bubble_share(int S, int v, int m) {
  struct Task {
    bool fwd;
    int k, j;
  };
  const int K = S * v, n = m * v;
  std::vector<std::vector<Task>> order(S);
  for (int d = 0; d < S; ++d) {
    auto fwd = [&](int i) { return Task{true, ((i % K) / S) * S + d, (i / K) * S + i % S}; };
    auto bwd = [&](int i) { return Task{false, (v - 1 - (i % K) / S) * S + d, (i / K) * S + i % S}; };
    const int warmup = std::min(n, v == 1 ? S - d - 1 : (S - d - 1) * 2 + (v - 1) * S);
    for (int i = 0; i < warmup; ++i) order[d].push_back(fwd(i));
    for (int i = 0; i < n - warmup; ++i) order[d].push_back(fwd(warmup + i)), order[d].push_back(bwd(i));
    for (int i = n - warmup; i < n; ++i) order[d].push_back(bwd(i));
  }
  // done[1][k][j] / done[0][k][j]: the step forward / backward (k, j) finished (−1 until it has).
  std::vector<std::vector<std::vector<long>>> done(2, std::vector<std::vector<long>>(K, std::vector<long>(m, -1)));
  std::vector<size_t> next(S, 0);
  std::vector<long> free_at(S, 0);
  for (bool progress = true; progress;) {
    progress = false;
    for (int d = 0; d < S; ++d) {
      while (next[d] < order[d].size()) {
        const Task t = order[d][next[d]];
        long ready = 0;
        if (t.fwd && t.k > 0) ready = done[1][t.k - 1][t.j];
        if (!t.fwd) ready = t.k + 1 < K ? done[0][t.k + 1][t.j] : done[1][t.k][t.j];
        if (ready < 0) break;
        const long start = std::max(ready, free_at[d]);
        free_at[d] = start + (t.fwd ? 1 : 2);
        done[t.fwd ? 1 : 0][t.k][t.j] = free_at[d];
        ++next[d];
        progress = true;
      }
    }
  }
  for (int d = 0; d < S; ++d) REQUIRE_MESSAGE(next[d] == order[d].size(), "the schedule deadlocked");
  const double makespan = static_cast<double>(*std::max_element(free_at.begin(), free_at.end()));
  const double busy = 3.0 * n;  // per device: n forwards of 1 step and n backwards of 2
  return 1 - busy / makespan;
}

}  // namespace

TEST_CASE("calibrated: the pipeline bubble is the idle share of a simulated 1F1B / interleaved schedule") {
  for (int v : {1, 2, 3, 4}) {
    for (int m : {8, 64}) {
      CAPTURE(v);
      CAPTURE(m);
      Layout l = megatron(m);
      l.schedule = v > 1 ? Schedule::interleaved : Schedule::one_f_one_b;
      l.virtual_stages = v;
      const Terms t = calibrated(l);
      const double pipeline = t.step_s - t.calibrated.t_dp_exposed_s - t.calibrated.t_optimizer_s;
      CHECK(t.t_bubble_s / pipeline == doctest::Approx(simulated_bubble_share(8, v, m)).epsilon(1e-9));
    }
  }
}

TEST_CASE("calibrated: causal flash attention counts exactly the lower triangle of (query, key) pairs") {
  // One layer's attention FLOPs forward = 4·H·(heads/Y)·Σ_i i per sequence, i = 1..s keys for query i.
  TransformerConfig c = gpt175();
  c.layers = 1;
  const double s = 1024;
  double pairs = 0;
  for (int i = 1; i <= s; ++i) pairs += i;
  Layout l;
  l.fast = {AxisRoles{1, 8, 1}};
  l.zero = 0;
  l.saved = saved_rule("all");
  const System sys = gpu_cluster(chip("a100"), 1);
  const Terms t = step_terms(c, sys, l, {s, s}, CostModel::calibrated);
  // Forward plus the 2.5× backward, at the rate FlashAttention-2 printed for causal attention on an A100
  // at head dim 128 and 1k tokens: 133 TFLOP/s (Dao-AILab/flash-attention 4f285b35,
  // assets/flash2_a100_fwd_bwd_benchmark.png, panel (d)).
  const double flops = 3.5 * 4 * c.head_dim * (c.q_heads / 8) * pairs;
  CHECK(t.calibrated.t_attention_s == doctest::Approx(flops / 133e12).epsilon(1e-12));
  // The materialized kernel computes all s² pairs, masked or not, with a 2× backward, at the matmul ceiling:
  // at least the FLOPs ratio 3·s² / (3.5·Σ i) of the causal pairs' time at that ceiling (more where its score
  // traffic bounds it).
  const double ceiling = chip_calibration(chip("a100")).matmul_ceiling_flops_per_s;
  l.attention = AttentionKernel::materialized;
  const Terms full = step_terms(c, sys, l, {s, s}, CostModel::calibrated);
  CHECK(full.calibrated.t_attention_s >= 3 * s * s / (3.5 * pairs) * flops / ceiling * (1 - 1e-12));
}

TEST_CASE("calibrated: with nothing rerun the materialized kernel keeps Korthikanti et al.'s 5as/h of scores") {
  // Korthikanti et al. 2022 eq. 1: a layer's activations take s·b·h·(34 + 5·a·s/h) bytes (bf16, one-byte
  // dropout masks), of which s·b·h·5·a·s/h = 5·a·s²·b are the attention scores' softmax output, dropout
  // mask and dropout output; split over t tensor ranks. Here a = 96 heads, s = 2048, b = 1 sequence per
  // microbatch, t = 8; 12 layers per stage and min(64, 8) = 8 microbatches in flight under 1F1B.
  Layout l = megatron(64);
  l.saved = saved_rule("all");
  l.attention = AttentionKernel::flash;
  const Terms flash = calibrated(l);
  l.attention = AttentionKernel::materialized;
  const Terms scores = calibrated(l);
  const double heads = 96, s = 2048, b = 1, t = 8, layers = 96.0 / 8, in_flight = 8;
  const double korthikanti_scores = 5 * heads * s * s * b / t;  // bytes per layer and microbatch
  CHECK(scores.memory.activations - flash.memory.activations ==
        doctest::Approx(korthikanti_scores * layers * in_flight).epsilon(1e-9));
  // Selective recompute (the `matmuls` rule) reruns the scores instead: the kernels keep the same bytes.
  l.saved = saved_rule("matmuls");
  const double kept_materialized = calibrated(l).memory.activations;
  l.attention = AttentionKernel::flash;
  CHECK(calibrated(l).memory.activations == kept_materialized);
}

TEST_CASE("calibrated: without sequence parallelism a tensor rank keeps the layer input whole") {
  // Korthikanti et al. 2022 §5 (full recomputation): a layer keeps only its input, 2sbh bytes, and with
  // tensor parallelism that is sharded t ways only by sequence parallelism (2sbh/t). GPT-3 175B on 8-way
  // TP, 8 stages of 12 layers, one sequence per microbatch, min(64, 8) = 8 microbatches in flight.
  Layout l = megatron(64);
  l.saved = saved_rule("input");
  l.sequence_parallel = true;
  const double sp = calibrated(l).memory.activations;
  l.sequence_parallel = false;
  const double plain = calibrated(l).memory.activations;
  const double s = 2048, b = 1, h = 12288, t = 8, layers = 12, in_flight = 8;
  CHECK(plain - sp == doctest::Approx(2 * s * b * h * (1 - 1 / t) * layers * in_flight).epsilon(1e-9));
}

TEST_CASE("calibrated: sequence parallelism moves the same TP bytes and splits the vector work") {
  Layout l = megatron(64);
  const Terms plain = calibrated(l);
  l.sequence_parallel = true;
  const Terms sp = calibrated(l);
  CHECK(sp.calibrated.t_tp_s == doctest::Approx(plain.calibrated.t_tp_s).epsilon(1e-12));
  CHECK(sp.calibrated.t_vector_s < plain.calibrated.t_vector_s);
  CHECK(sp.calibrated.t_matmul_s == plain.calibrated.t_matmul_s);
}

TEST_CASE("calibrated: TP collectives in a GPU node run at the bus bandwidth NCCL measured for their buffer") {
  // stas00/ml-engineering (744d01e), network/README.md 'Real network throughput', printed busbw in GB/s:
  // nccl-tests on 8 x A100, 32 MiB 138.49 and 64 MiB 171.54, 32 KiB 1.31; all_reduce_bench.py on 8 x H200,
  // 64 MiB 346.51, 1 GiB 463.58, the ring alone 367.61 at 16 GiB.
  const ChipCalibration a100 = chip_calibration(chip("a100")), h100 = chip_calibration(chip("h100"));
  REQUIRE(a100.nvlink_sweep != nullptr);
  REQUIRE(h100.nvlink_sweep != nullptr);
  CHECK(sweep_bytes_per_s(*h100.nvlink_sweep, 64.0 * 1024 * 1024) == doctest::Approx(346.51e9).epsilon(1e-12));
  CHECK(sweep_bytes_per_s(*h100.nvlink_sweep, 1024.0 * 1024 * 1024) == doctest::Approx(367.61e9).epsilon(1e-12));
  // Below the smallest payload the time stays that payload's: half the buffer, half the bus bandwidth.
  CHECK(sweep_bytes_per_s(*a100.nvlink_sweep, 16.0 * 1024) == doctest::Approx(1.31e9 / 2).epsilon(1e-12));
  // GPT-3 175B on 8 tensor ranks, one 2048-token sequence per microbatch: each collective moves a
  // 2048 x 12288 bf16 buffer, 48 MiB, a little past halfway (in log size) between 32 and 64 MiB:
  // busbw = 138.49 + log2(48/32)·(171.54 − 138.49) GB/s. Selective recompute: per layer 2 forward and 2
  // backward collectives of 2 ring passes each, 12 layers on the busiest of 8 stages, 64 microbatches.
  const double payload = 2048.0 * 12288 * 2;
  const double busbw = (138.49 + std::log2(48.0 / 32.0) * (171.54 - 138.49)) * 1e9;
  const double pass_s = 7.0 / 8.0 * payload / busbw;
  const Terms t = calibrated(megatron(64));
  CHECK(t.calibrated.t_tp_s == doctest::Approx(64 * 12 * 8 * pass_s).epsilon(1e-9));
}

TEST_CASE("calibrated: TP collectives on a TPU v5e run at the book's measured 95 % of the ICI link") {
  // MaxText's 128B decoder (global_parameter_scale=128) on one v5e 16x16 slice: fsdp 16 on one axis, tensor
  // 16 on the other, 256 sequences of 2048 tokens, full rematerialization. Per chip the 16 sequences of its
  // data shard, 32768 tokens, pass through each collective: a 32768 x 10240 bf16 buffer. Per layer 2 forward
  // + 2 backward collectives of 2 ring passes each, and the rerun forward's again: 12 passes over 16 chips,
  // each (15/16)·P at 95 % of the axis' bidirectional ring (2 × 4.5e10 B/s, §2.3: the axis wraps) plus 15
  // hops at 1 µs (the book's ICI hop latency, §2.2).
  TransformerConfig c;
  c.name = "maxtext-128b";
  c.layers = 64, c.d_model = 10240, c.q_heads = 64, c.kv_heads = 64, c.head_dim = 256, c.d_ff = 65536;
  c.vocab = 32768, c.gated_mlp = false, c.tied_embeddings = true;
  const System sys = tpu_pods(chip("tpu-v5e"), {16, 16}, 1);
  Layout l;
  l.fast = {AxisRoles{16, 1, 1}, AxisRoles{1, 16, 1}};
  l.microbatches = 1;
  l.zero = 3;
  l.saved = saved_rule("input");
  l.sequence_parallel = true;
  const Terms t = step_terms(c, sys, l, {256.0 * 2048, 2048}, CostModel::calibrated);
  const double payload = 32768.0 * 10240 * 2;
  const double pass_s = 15.0 / 16.0 * payload / (0.95 * 2 * 4.5e10) + 15 * 1e-6;
  CHECK(t.calibrated.t_tp_s == doctest::Approx(64 * 12 * pass_s).epsilon(1e-9));
  // The two axes are alike: tensor on the first one times the same.
  l.fast = {AxisRoles{1, 16, 1}, AxisRoles{16, 1, 1}};
  CHECK(step_terms(c, sys, l, {256.0 * 2048, 2048}, CostModel::calibrated).calibrated.t_tp_s ==
        doctest::Approx(64 * 12 * pass_s).epsilon(1e-9));
  // XLA's asynchronous backward (--tp-overlap async): the backward's 4 passes a layer beside its
  // weight-gradient GEMMs. Those GEMMs do the forward's FLOPs again, 2·32768·P_layer with P_layer the layer's
  // matmul weights 4·D·(64·256) + 2·D·F over the 16-way group, far longer than 4 passes (about 29 ms against
  // over 100 ms at the v5e's ceiling), so the 4 hide whole and cost nothing more on a TPU (no overlap slowdown
  // is published for one): 8 exposed passes of 12, and their latency with them.
  l.tp_overlap = TpOverlap::async;
  const double p_layer = 4 * 10240.0 * (64 * 256) + 2 * 10240.0 * 65536;
  REQUIRE(2 * 32768 * p_layer / 16 / 197e12 > 4 * pass_s);  // longer even at the datasheet peak
  const Terms async = step_terms(c, sys, l, {256.0 * 2048, 2048}, CostModel::calibrated);
  CHECK(async.calibrated.t_tp_s == doctest::Approx(64 * 8 * pass_s).epsilon(1e-9));
  l.tp_overlap = TpOverlap::none;
  // The latency the step carries, by hand: data 16 × pipeline 16, ZeRO-0 with its gradient reduce exposed
  // (no overlap), one microbatch: the reduce is 2 ring passes of 15 hops, the microbatch's pipeline sends 2
  // messages of one hop, 1 µs each (§2.2).
  Layout d;
  d.fast = {AxisRoles{16, 1, 1}, AxisRoles{1, 1, 16}};
  d.microbatches = 1, d.zero = 0, d.dp_overlap = false;
  d.saved = saved_rule("input");
  const Terms td = step_terms(c, sys, d, {256.0 * 2048, 2048}, CostModel::calibrated);
  CHECK(td.calibrated.t_latency_s == doctest::Approx(2 * 15 * 1e-6 + 2 * 1e-6).epsilon(1e-9));
}

TEST_CASE("calibrated: overlap switches only hide time, and the ideal model stays a lower bound") {
  Layout l = megatron(32);  // two replicas × 32 microbatches: one sequence each (the calibrated batch rule)
  l.slow = {2, 1, 4};  // two data replicas across nodes
  l.dp_overlap = false;
  const Terms exposed = calibrated(l);
  l.dp_overlap = true;
  const Terms hidden = calibrated(l);
  CHECK(hidden.calibrated.t_dp_exposed_s <= exposed.calibrated.t_dp_exposed_s);
  CHECK(hidden.calibrated.t_dp_exposed_s > 0);  // the last layer's bucket cannot hide
  l.tp_overlap = TpOverlap::backward;
  const Terms backward = calibrated(l);
  CHECK(backward.calibrated.t_tp_s < hidden.calibrated.t_tp_s);
  l.tp_overlap = TpOverlap::all;
  const Terms tp = calibrated(l);
  CHECK(tp.calibrated.t_tp_s < backward.calibrated.t_tp_s);
  const Terms ideal = step_terms(gpt175(), a100x64(), l, {64 * 2048, 2048}, CostModel::ideal);
  CHECK(ideal.step_s < tp.step_s);
}

TEST_CASE("calibrated: Megatron-LM's asynchronous backward hides the column-parallel linears' reductions") {
  // Megatron-LM at d898a89, megatron/mpu/layers.py (LinearWithGradAccumulationAndAsyncCommunication): per
  // layer the backward pass's collectives are the two column-parallel linears' (QKV, MLP in). Without
  // sequence parallelism each is an AllReduce (2 ring passes) launched before that linear's weight-gradient
  // GEMM and waited for after it; the forward's and the rerun forward's AllReduces stay blocking. For GPT-3
  // 175B at 8-way TP, one sequence per microbatch, an AllReduce of 2048 x 12288 x 2 bytes takes well under
  // the weight-gradient GEMMs (>= 2 x 2048 x 12288 x 4608 FLOPs, about 1 ms on an A100), so each hides
  // whole and only slows the GEMM beside it by sigma (Lee et al. 2025: 0.189 on GPUs). Full recompute:
  // 4 + 4 exposed passes and 4 hidden, of 12.
  const double sigma = 0.189;
  Layout l = megatron(64);
  l.saved = saved_rule("input");
  const double none = calibrated(l).calibrated.t_tp_s;
  l.tp_overlap = TpOverlap::backward;
  CHECK(calibrated(l).calibrated.t_tp_s == doctest::Approx(none * (8 + 4 * sigma) / 12).epsilon(1e-9));
  // With sequence parallelism and selective recompute: the forward's 2 AllGathers + 2 ReduceScatters stay
  // exposed, the backward's 2 AllGathers of the row-parallel output gradients too; its 2 ReduceScatters hide
  // behind the weight-gradient GEMMs and 2 more AllGathers (the column-parallel inputs, saved sharded and
  // re-gathered; blocking mode counts them nowhere) behind the input-gradient GEMMs: (4 + 2 + 4 sigma) of
  // blocking mode's 8 passes.
  l.saved = saved_rule("matmuls");
  l.sequence_parallel = true;
  l.tp_overlap = TpOverlap::none;
  const double sp_none = calibrated(l).calibrated.t_tp_s;
  l.tp_overlap = TpOverlap::backward;
  CHECK(calibrated(l).calibrated.t_tp_s == doctest::Approx(sp_none * (6 + 4 * sigma) / 8).epsilon(1e-9));
}

TEST_CASE("calibrated: without sequence parallelism a pipeline receive re-gathers its tensor-split message") {
  // Megatron-LM's pipeline scatter/gather (Narayanan et al. 2021 §4.1; megatron/p2p_communication.py): each
  // TP rank sends 1/Y of the activation and the receiving stage AllGathers the pieces over the tensor group,
  // one ring pass of the whole b·D·a buffer per message; with sequence parallelism the activation stays
  // sequence-sharded and nothing is gathered. Forward and backward, one message each per microbatch (v = 1).
  Layout l = megatron(64);
  l.saved = saved_rule("matmuls");
  const Terms plain = calibrated(l);
  l.sequence_parallel = true;
  const Terms sp = calibrated(l);
  // One TP ring pass: blocking TP with selective recompute is 8 passes per layer, 12 layers per stage, 64
  // microbatches (its time does not depend on sequence parallelism: the same bytes).
  const double pass_s = plain.calibrated.t_tp_s / (8 * 12 * 64);
  CHECK(plain.calibrated.t_pipeline_send_s - sp.calibrated.t_pipeline_send_s ==
        doctest::Approx(64 * 2 * pass_s).epsilon(1e-9));
}

TEST_CASE("calibrated: the TP overlap modes leave exposed the latency of exactly the passes they leave exposed") {
  // A TPU v5e slice of 4x4 as one 16-way tensor group (no data or pipeline group, so every latency of the
  // step is a TP pass's): each ring pass pays its hops' latency, and the overlap slowdown is 0 on TPUs.
  // Blocking: 8 passes per layer with selective recompute. backward with sequence parallelism leaves the
  // forward's 4 and the row-parallel linears' 2 AllGathers exposed (calibrated.hpp): 6 of 8. all: the
  // latency is exposed in the share of the TP time that is.
  TransformerConfig c;
  c.name = "small";
  c.layers = 4, c.d_model = 1024, c.q_heads = 16, c.kv_heads = 16, c.head_dim = 64, c.d_ff = 4096, c.vocab = 32000;
  const System sys = tpu_pods(chip("tpu-v5e"), {4, 4}, 1);
  Layout l;
  l.fast = {AxisRoles{1, 4, 1}, AxisRoles{1, 4, 1}};
  l.slow = {1, 1, 1};
  l.zero = 0;
  l.saved = saved_rule("matmuls");
  l.sequence_parallel = true;
  auto at = [&](TpOverlap o) {
    l.tp_overlap = o;
    return step_terms(c, sys, l, {16 * 2048, 2048}, CostModel::calibrated).calibrated;
  };
  const auto none = at(TpOverlap::none), backward = at(TpOverlap::backward), all = at(TpOverlap::all);
  REQUIRE(none.t_latency_s > 0);
  CHECK(backward.t_latency_s == doctest::Approx(none.t_latency_s * 6 / 8).epsilon(1e-12));
  REQUIRE(all.t_tp_s > 0);  // this small model's collectives outlast its matmuls
  CHECK(all.t_latency_s == doctest::Approx(none.t_latency_s * all.t_tp_s / none.t_tp_s).epsilon(1e-12));
  // async: the backward's 4 passes beside the weight-gradient GEMMs, one forward's worth of matmul time, where
  // `all` hides the whole layer's, forward and backward, three forwards' worth (nothing rerun, and here the
  // collectives outlast both): async hides a third of what all hides, and leaves the forward's 4 of 8 passes'
  // latency exposed.
  const auto async = at(TpOverlap::async);
  CHECK(none.t_tp_s - async.t_tp_s == doctest::Approx((none.t_tp_s - all.t_tp_s) / 3).epsilon(1e-9));
  CHECK(async.t_latency_s == doctest::Approx(none.t_latency_s * 4 / 8).epsilon(1e-12));
  // Without sequence parallelism and with full recompute: 12 passes blocking, the forward's and the
  // rerun's 8 exposed under backward.
  l.sequence_parallel = false;
  l.saved = saved_rule("input");
  CHECK(at(TpOverlap::backward).t_latency_s == doctest::Approx(at(TpOverlap::none).t_latency_s * 8 / 12).epsilon(1e-12));
  // A slower backward GEMM hides more of the collective beside it (here the collectives outlast the GEMMs).
  l.tp_overlap = TpOverlap::backward;
  const Terms ideal = step_terms(c, sys, l, {16 * 2048, 2048}, CostModel::ideal);
  auto ctx = calibrated_context(c, sys, 16 * 2048, 2048, {});
  const double at_forward_rate = calibrated_terms(ctx, l, ideal).calibrated.t_tp_s;
  ctx.backward_gemm_rate_fraction = 0.5;
  ctx.cache.clear();
  CHECK(calibrated_terms(ctx, l, ideal).calibrated.t_tp_s < at_forward_rate);
  // async likewise: its weight-gradient GEMMs take twice as long at half the rate, and hide twice as much.
  l.tp_overlap = TpOverlap::async;
  ctx.backward_gemm_rate_fraction = 1;
  ctx.cache.clear();
  const double none_s = [&] {
    Layout n = l;
    n.tp_overlap = TpOverlap::none;
    return calibrated_terms(ctx, n, ideal).calibrated.t_tp_s;
  }();
  const double async_hidden = none_s - calibrated_terms(ctx, l, ideal).calibrated.t_tp_s;
  ctx.backward_gemm_rate_fraction = 0.5;
  ctx.cache.clear();
  CHECK(none_s - calibrated_terms(ctx, l, ideal).calibrated.t_tp_s == doctest::Approx(2 * async_hidden).epsilon(1e-9));
}

TEST_CASE("calibrated: the summary terms add up to the step, whichever network each part runs on") {
  // Data replicas over both tiers, a pipeline across the slow tier, a 2-way tensor group: each part counted
  // once, in t_math, t_hbm, t_bubble, t_ici or t_dcn. Sequence parallelism moves the same TP bytes and, with the
  // DP reduce not overlapped, the same DP bytes; it drops only the pipeline's receive-side AllGathers, which
  // run on the tensor group's links: so t_dcn is the same both ways and t_ici differs by exactly the sends'.
  for (int zero : {0, 1, 2, 3}) {
    CAPTURE(zero);
    Terms by_sp[2];
    for (bool sp : {false, true}) {
      CAPTURE(sp);
      Layout l;
      l.fast = {AxisRoles{4, 2, 1}};
      l.slow = {2, 1, 4};
      l.microbatches = 4;
      l.zero = zero;
      l.saved = saved_rule("matmuls");
      l.dp_overlap = false;
      l.sequence_parallel = sp;
      const Terms t = step_terms(gpt175(), a100x64(), l, {64 * 2048, 2048}, CostModel::calibrated);
      CHECK(t.step_s == doctest::Approx(t.t_math_s + t.t_hbm_s + t.t_bubble_s + t.t_ici_s + t.t_dcn_s).epsilon(1e-12));
      CHECK(t.calibrated.t_dp_exposed_s > 0);
      by_sp[sp] = t;
    }
    const Terms &plain = by_sp[0], &sp = by_sp[1];
    REQUIRE(plain.calibrated.t_pipeline_send_s > sp.calibrated.t_pipeline_send_s);
    CHECK(plain.t_dcn_s == doctest::Approx(sp.t_dcn_s).epsilon(1e-12));
    CHECK(plain.t_ici_s - sp.t_ici_s ==
          doctest::Approx(plain.calibrated.t_pipeline_send_s - sp.calibrated.t_pipeline_send_s).epsilon(1e-9));
  }
}

TEST_CASE("calibrated: a 2-way tensor group re-gathers its pipeline messages too") {
  Layout l;
  l.fast = {AxisRoles{1, 2, 4}};
  l.slow = {1, 1, 8};
  l.microbatches = 64;
  l.zero = 0;
  l.saved = saved_rule("matmuls");
  const double plain = calibrated(l).calibrated.t_pipeline_send_s;
  l.sequence_parallel = true;
  CHECK(calibrated(l).calibrated.t_pipeline_send_s < plain);
}

TEST_CASE("calibrated: the measured H100 table's best GEMM agrees with a published achievable figure") {
  // stas00/ml-engineering at 744d01e, compute/accelerator/README.md, 'Maximum Achievable Matmul FLOPS
  // comparison table' (BF16): NVIDIA H100 SXM 794.5 TFLOPS (torch 2.7.0+cu126; 792.1 with CUDA 12.1 in the
  // table's earlier version) — another machine, another software stack.
  const double ours = chip_calibration(chip("h100")).matmul_ceiling_flops_per_s;
  CHECK(ours == doctest::Approx(794.5e12).epsilon(0.05));
}

TEST_CASE("calibrated: the A100's GEMMs follow Calculon's published A100 table, no faster than the measured best") {
  const ChipCalibration a100 = chip_calibration(chip("a100"));
  REQUIRE(a100.rule != nullptr);
  // By hand from calculon-ai/calculon systems/a100_80g.json (caa4b11), the file its Table 5 step-time
  // validation reads: a GEMM of at least 16 and under 128 GFLOP runs at 0.9 of 312 TFLOP/s, one moving at
  // least 10 MB and under 100 MB at 0.75 of 2048 GB/s, the two times added. GPT 22B's QKV projection on 8
  // tensor ranks, one 2048-token sequence: M = 2048, K = 6144, N = 3·6144/8 = 2304.
  {
    const double flops = 2.0 * 2048 * 6144 * 2304;                     // 58.0 GFLOP
    const double bytes = 2.0 * (2048 * 6144 + 6144 * 2304 + 2048 * 2304);  // 62.9 MB
    const double t_s = flops / (0.9 * 312e12) + bytes / (0.75 * 2048e9);
    CHECK(matmul_rate(a100, 2048, 6144, 2304) == doctest::Approx(flops / t_s).epsilon(1e-12));
  }
  // GPT-3 175B's MLP-in on 8 ranks (M = 2048, K = 12288, N = 6144; 309 GFLOP, 226 MB): 0.95 of the peak plus
  // its bytes at 0.90 of 2048 GB/s, 265 TFLOP/s, under the best any shape reached in stas00's exhaustive
  // search (ml-engineering 744d01e, compute/accelerator/README.md: A100 SXM 271.2), so the table stands.
  {
    const double flops = 2.0 * 2048 * 12288 * 6144;
    const double bytes = 2.0 * (2048 * 12288 + 12288 * 6144 + 2048 * 6144);
    const double rate = flops / (flops / (0.95 * 312e12) + bytes / (0.90 * 2048e9));
    CHECK(rate < 271.2e12);
    CHECK(matmul_rate(a100, 2048, 12288, 6144) == doctest::Approx(rate).epsilon(1e-12));
  }
  // A GEMM the table puts above the measured best is capped at it: a 128 GFLOP-plus GEMM moving little
  // (M = K = N = 8192: 1.1 TFLOP, 403 MB) would run at 0.95 of 312 with its bytes added, 280 TFLOP/s.
  CHECK(published_gemm_rate(*a100.rule, 8192, 8192, 8192) > 271.2e12);
  CHECK(matmul_rate(a100, 8192, 8192, 8192) == doctest::Approx(271.2e12).epsilon(1e-12));
  // The table against the measurement at the measured best shape (M x N x K = 1024 x 10240 x 5120): 107
  // GFLOP falls in the 0.9 step, so the table says 235 TFLOP/s where 271.2 was measured. Its steps
  // are coarse: within 15 % here, and the model takes it as published.
  const double table = published_gemm_rate(*a100.rule, 1024, 5120, 10240);
  MESSAGE("Calculon's a100_80g table at 1024x5120x10240: " << table / 1e12 << " TFLOP/s, measured 271.2");
  CHECK(table == doctest::Approx(271.2e12).epsilon(0.15));
}

TEST_CASE("calibrated: the TPU v5e's ceiling is the published v5e matmul, and the H100 shape curve it borrows "
          "meets the guide's other points") {
  // JAX's Pallas TPU guide "Matrix Multiplication" (jax-ml/jax docs/pallas/tpu/matmul.ipynb, 1082251), its
  // "XLA matmul" output on a TPU v5e: bf16 8192^3 at 181823175395037.44 FLOP/s (92.2960 % of 197e12),
  // 4096^3 at 166131533963991.34 (84.3307 %), 1024^3 at 17981093801113.996 (9.1275 %).
  const ChipCalibration v5e = chip_calibration(chip("tpu-v5e"));
  CHECK(v5e.matmul_ceiling_flops_per_s == doctest::Approx(0.922960 * 197e12).epsilon(1e-6));
  CHECK(v5e.scaled);  // no published v5e curve by shape: the H100's, relative to its best
  // Each time includes Python's dispatch, which is less than the whole 1024^3 call (119 µs), so the kernel's
  // own time at 4096^3 lies between the printed time less that call's and the printed time: its rate
  // between 166.1 and 194.1 TFLOP/s. The shape curve borrowed from the H100 has to land in that bracket.
  const double flops4096 = 2.0 * 4096 * 4096 * 4096, flops1024 = 2.0 * 1024 * 1024 * 1024;
  const double t4096_s = flops4096 / 166131533963991.34, t1024_s = flops1024 / 17981093801113.996;
  const double r4096 = matmul_rate(v5e, 4096, 4096, 4096);
  MESSAGE("v5e 4096^3: model " << r4096 / 1e12 << " TFLOP/s; published between " << flops4096 / t4096_s / 1e12
                               << " and " << flops4096 / (t4096_s - t1024_s) / 1e12);
  CHECK(r4096 >= flops4096 / t4096_s);
  CHECK(r4096 <= flops4096 / (t4096_s - t1024_s));
  // At 1024^3 the printed rate is dispatch-bound: only a lower bound on the kernel's.
  CHECK(matmul_rate(v5e, 1024, 1024, 1024) >= flops1024 / t1024_s);
}

TEST_CASE("calibrated: bad schedules are refused naming the rule") {
  Layout l = megatron(64);
  l.virtual_stages = 2;
  CHECK_THROWS_WITH_AS(calibrated(l), doctest::Contains("need the interleaved schedule"), std::invalid_argument);
  l.schedule = Schedule::interleaved;
  l.virtual_stages = 5;  // 12 layers per stage
  CHECK_THROWS_WITH_AS(calibrated(l), doctest::Contains("virtual stages = 5: the 96 layers do not split into pipeline 8 × 5 = 40"),
                       std::invalid_argument);
  CHECK_THROWS_AS(parse_schedule("zigzag"), std::invalid_argument);
}

TEST_CASE("planner, calibrated: every layout it reports has the terms step_terms gives it") {
  PlanRequest r;
  r.model = model("llama2-13b");
  r.system = gpu_cluster(chip("h100"), 2);
  r.batch_tokens = 1 << 20;
  r.seq_len = 4096;
  r.cost_model = CostModel::calibrated;
  r.top_k = 20;
  const auto out = plan(r);
  REQUIRE(!out.top.empty());
  for (const auto& p : out.top) {
    const Terms again = step_terms(r.model, r.system, p.layout, {r.batch_tokens, r.seq_len}, r.cost_model, r.setup);
    CHECK(again.step_s == doctest::Approx(p.terms.step_s).epsilon(1e-12));
    CHECK(again.memory.total == doctest::Approx(p.terms.memory.total).epsilon(1e-12));
    CHECK(p.terms.memory.total <= r.system.chip.hbm_bytes);
  }
  // Searching the switches too finds a layout at least as fast, and every one it reports re-evaluates the same.
  r.search_switches = true;
  const auto wider = plan(r);
  CHECK(wider.configs_evaluated > out.configs_evaluated);
  CHECK(wider.top.front().terms.step_s <= out.top.front().terms.step_s);
  for (const auto& p : wider.top) {
    const Terms again = step_terms(r.model, r.system, p.layout, {r.batch_tokens, r.seq_len}, r.cost_model, r.setup);
    CHECK(again.step_s == doctest::Approx(p.terms.step_s).epsilon(1e-12));
  }
  r.search_switches = false;
  // Its best is no faster than the ideal model's best: the ideal model is the lower bound.
  r.cost_model = CostModel::ideal;
  r.top_k = 1;
  CHECK(plan(r).top.front().terms.step_s < out.top.front().terms.step_s);
}

TEST_CASE("calibrated: an interleaved schedule needs two or more virtual stages a pipeline stage") {
  // Megatron-LM interleaves only with 2 or more model chunks a stage; with one it runs 1F1B, whose bubble
  // and microbatches in flight the model would otherwise mix with the interleaved schedule's memory.
  Layout l = megatron(64);
  l.schedule = Schedule::interleaved;
  l.virtual_stages = 1;
  CHECK_THROWS_WITH_AS(calibrated(l), doctest::Contains("2 or more virtual stages"), std::invalid_argument);
  // The planner, asked for the interleaved schedule without a v, tries every v ≥ 2 that splits the layers.
  PlanRequest r;
  r.model = gpt175();
  r.system = a100x64();
  r.batch_tokens = 64 * 2048;
  r.seq_len = 2048;
  r.cost_model = CostModel::calibrated;
  r.fixed_tensor = 8, r.fixed_pipeline = 8;
  r.max_pipeline = 8;
  r.switches.schedule = Schedule::interleaved;
  r.switches.virtual_stages = 1;
  r.top_k = 50;
  const auto out = plan(r);
  REQUIRE(!out.top.empty());
  for (const auto& p : out.top) {
    CHECK(p.layout.schedule == Schedule::interleaved);
    CHECK(p.layout.virtual_stages >= 2);
    CHECK(96 % (8 * p.layout.virtual_stages) == 0);  // 12 layers a stage: v in {2, 3, 4, 6, 12}
  }
}

TEST_CASE("calibrated: ZeRO-1 reduce-scatters the gradients and gathers the updated weights behind a forward") {
  // Data parallelism over the slow tier only (8 replicas of a 8-way tensor group, one microbatch), fp32
  // gradients and bf16 weights: ZeRO-0 all-reduces G (a ReduceScatter and an AllGather of G); ZeRO-1
  // reduce-scatters G and gathers the updated weights W = G/2 (Rajbhandari et al. 2020 §7). With the overlap
  // off both are wholly exposed, so their ratio is (1 + 1/2) / 2.
  TrainingSetup s;
  s.grads = Dtype::fp32;
  Layout l;
  l.fast = {AxisRoles{1, 8, 1}};
  l.slow = {8, 1, 1};
  l.microbatches = 1;
  l.saved = saved_rule("matmuls");
  auto dp = [&](int zero, bool overlap) {
    Layout x = l;
    x.zero = zero;
    x.dp_overlap = overlap;
    return step_terms(gpt175(), a100x64(), x, {64 * 2048, 2048}, CostModel::calibrated, s).calibrated.t_dp_exposed_s;
  };
  // The ratio holds up to the latency, one per hop of each pass: ZeRO-1 and ZeRO-0 make the same passes.
  CHECK(dp(1, false) / dp(0, false) == doctest::Approx(0.75).epsilon(1e-3));
  // With the overlap on, ZeRO-1's gather hides behind a forward pass too, where ZeRO-0's AllReduce has only
  // the backward: on this layout the traffic outruns the backward, so ZeRO-1 leaves less of its own exposed.
  const double c1 = dp(1, false), e1 = dp(1, true), c0 = dp(0, false), e0 = dp(0, true);
  REQUIRE(e0 > 0);
  CHECK(e1 / c1 < e0 / c0);
}
