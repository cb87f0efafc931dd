#pragma once
// The calibrated cost model (CostModel::calibrated): what one training step of a layout really costs,
// as opposed to the ideal model's lower bound (planner.hpp). step_terms calls it; so does the planner's
// search. Each effect is one field of CalibratedParts (terms.hpp); every rate comes from a table below
// with its source — nothing is fitted to a run.
//
// Letters: B global batch (tokens), s sequence length, X = X_fast·X_slow data degree, Y tensor degree,
// S pipeline degree, v virtual stages (interleaved schedule), m microbatches, b = B/(X·m) tokens per
// microbatch per replica, L layers of which the busiest stage holds l = ⌈L/S⌉, D, F, V model width, MLP
// width and vocabulary, N_q, N_kv, H heads, KV heads and head size, a bytes per activation element.
//
// Per layer, one microbatch, one chip:
//   matmul (forward): Σ 2·b·K·N / R(b, K, N) over QKV [K = D, N = (N_q + 2N_kv)·H/Y], output [N_q·H/Y, D],
//     MLP in [D, F/Y, twice when gated] and MLP out [F/Y, D]; backward twice the forward's FLOPs at the
//     forward shape's rate. R is the achieved rate of that GEMM shape on the chip (matmul_rate below).
//   attention core, E = b·(N_q/Y)·s score elements: flash attention does 4H FLOPs per causal (query, key)
//     pair, (s + 1)/2 keys per query (exactly the lower triangle), F = 4H·b·(N_q/Y)·(s + 1)/2 forward and
//     2.5·F backward (FlashAttention-2, Dao 2023 §3.1.2: five matmuls against two, the scores recomputed),
//     at the kernel's published causal rate for the chip, head size and s (attention_rates.hpp: forward +
//     backward 3.5·F / R_fb, the forward F / R_f where a forward-only rate is published); a chip or kernel
//     with none published (TPUs, the H200) at the matmul ceiling, said in ChipCalibration::attention_source. The
//     materialized kernel computes all E (the masked half too): forward a roofline of 4H·E FLOPs at the
//     ceiling and 2a·E bytes (QKᵀ writes the scores, the product with V reads them) at the copy rate;
//     backward 8H·E FLOPs and 4a·E bytes (dP written, P read, dS read twice).
//   vector work, one HBM pass per kernel at the achieved rate of its kind, forward / backward bytes per
//     token: each norm 2a·D' / 3a·D' (D' = D/Y with sequence parallelism, else D: each TP rank repeats
//     it), two residual adds 3a·D' each way, the MLP activation 2a·F/Y / 3a·F/Y (gated 3a / 5a); the
//     materialized kernel adds per score element softmax 2a / 3a at the softmax rate and dropout 2a + 1
//     each way (a one-byte mask) at the copy rate.
//   recompute: full (the `input` rule) reruns the forward; selective (`matmuls`) the attention core and
//     its softmax and dropout; none nothing.
//   tensor-parallel collectives (Y > 1): per layer 2 forward + 2 backward AllReduces of b·D·a bytes (with
//     sequence parallelism each is a ReduceScatter + AllGather, the same bytes), full recompute adds the
//     forward's again; ring time (Y − 1)/Y per pass over the tensor group's bandwidth plus (Y − 1) hop
//     latencies per pass — at what the fabric achieved where it was measured: on GPUs with a published
//     NCCL sweep (published_nvlink_sweeps) the bus bandwidth NCCL reached for a b·D·a-byte buffer, latency
//     included; on the TPU v5e 95 % of the ICI link (the book's measured AllGather, ici_fraction). By
//     tp_overlap (layout.hpp): none, all on the critical path; all, only what exceeds the matmuls plus σ
//     times what hides behind them (σ: the overlap slowdown below); backward (Megatron-LM's asynchronous
//     backward), the forward's and rerun's passes exposed and, per column-parallel linear (QKV, MLP in),
//     its input-gradient AllReduce (2 passes) beside its weight-gradient GEMM — with sequence parallelism
//     its ReduceScatter there and one more AllGather pass (the saved sharded input re-gathered) beside its
//     input-gradient GEMM, the row-parallel linears' AllGathers exposed — each costing what outlasts its
//     GEMM plus σ times what hides; async (XLA's asynchronous collectives), the forward's and rerun's
//     passes exposed and the backward's four beside the layer's weight-gradient GEMMs:
//     t_TP = (4 + 4·reruns)·t_pass + max(0, 4·t_pass − t_wgrad) + σ·min(4·t_pass, t_wgrad).
// Per stage and microbatch: t_mb = l·(layer forward + backward + recompute + TP) + the stage's extras
// (first: the embedding lookup; last: the final norm, the unembedding GEMM [D, V/Y] forward and backward
// and the loss' softmax over V/Y in fp32, 2·4 + 3·4 bytes per logit; the busiest of the two) + pipeline sends: 2·v messages of
// b·D·a/Y bytes (forward and backward per model chunk, split over the tensor group as Narayanan et al.
// 2021 §4.1's scatter/gather does) over the pipeline link (InfiniBand/DCN when the pipeline crosses groups)
// plus one latency each, on the critical path; without sequence parallelism the receiver then AllGathers the
// Y pieces over the tensor group (one ring pass of b·D·a bytes per message, Megatron-LM's
// gather_split_1d_tensor), also on the critical path.
// Schedule: step_pipeline = m·t_mb + bubble, bubble = (S − 1)·t_mb for GPipe and 1F1B, (S − 1)/v·t_mb
// interleaved (Narayanan et al. 2021 §2.2: bubble fraction (S − 1)/(v·m + S − 1) of the whole).
// Data parallelism and ZeRO, per step, bytes of the stage's weights W and gradients G per chip (1/Y of the
// stage, weight and gradient dtypes): over the slice's data group ring factor (X_f − 1)/X_f; ZeRO-0 one
// AllReduce of G, ZeRO-1 one ReduceScatter of G and one AllGather of the updated W (Rajbhandari et al. 2020
// §7), ZeRO-2 a ReduceScatter of G per microbatch and one AllGather of W, ZeRO-3 per microbatch
// two AllGathers of W and one ReduceScatter of G; over the slow tier a chip's 1/X_f share the same way
// (ZeRO scope all) or one AllReduce of it (scope group); one latency per hop. Over the fast axes each
// collective runs at the achieved bandwidth for its size as above: one layer's bytes under ZeRO-2/3
// (gathered and reduce-scattered layer by layer), the whole gradient buffer under ZeRO-0/1 (one AllReduce). Exposed: ZeRO-3's per-layer
// gathers are prefetched behind the step's compute, so one layer's share (C/l) plus what exceeds the
// compute; with dp_overlap, ZeRO-0's one AllReduce overlaps the last microbatch's backward the same way
// (one layer's share plus what exceeds it), ZeRO-1's ReduceScatter that backward and its AllGather of the
// updated weights a forward pass, and ZeRO-2's per-microbatch ReduceScatters each overlap their
// own microbatch's backward while its one AllGather is prefetched layer by layer behind a forward pass, so
// ZeRO-2 hides behind m backward passes and one forward; without dp_overlap all of it is exposed. What hides is not
// free: the compute it runs beside slows by σ, so t_dp = C − H + σ·H with H the hidden part.
// Overlap slowdown σ (overlap_slowdown): 0.189 on GPUs, the mean slowdown of compute kernels while a
// collective runs beside them that Lee et al. 2025 measured (arXiv 2507.03114, abstract: A100, H100,
// MI250, MI210; GPT and Llama training; up to 0.40): the collective's kernels take SMs and HBM bandwidth.
// 0 on TPUs: their collectives run on DMA engines and no measurement of the effect was found.
// Optimizer: Adam reads weights, gradients, both moments and the master copy and writes all but the
// gradients back, (2a_w + a_g + 4a_o + 8·master) bytes per parameter the chip updates (1/X_zero of the
// stage's 1/Y with ZeRO ≥ 1), at the fused-Adam HBM rate; SGD 2a_w + a_g.
// step = step_pipeline + exposed data-parallel traffic + optimizer.
// Memory: the ideal model's, with the activations of the microbatches the schedule keeps in flight (GPipe
// m, 1F1B min(m, S), interleaved min(m, S)·(1 + (S − 1)/(S·v)), Narayanan et al. 2021 §2.2.2); without
// sequence parallelism (Y > 1) the [tokens, D]-shaped tensors a rule keeps (the layer input, norm outputs,
// residuals, the row-parallel linears' outputs: d·D per token, d from the activation inventory) whole on
// every tensor rank instead of 1/Y of them (Korthikanti et al. 2022 §4.2 and eq. 2: the 10sbh a rank
// keeps whole without it); with the
// materialized kernel and nothing rerun, every score element's softmax output, dropout mask and dropout
// output, (2a + 1)·b·(N_q/Y)·s bytes per layer and microbatch (Korthikanti et al. 2022 eq. 1's 5as/h); plus
// ZeRO-3's working set (two layers gathered whole: the one in use and the one prefetched) and two
// gradient buckets of 25 MB (PyTorch DDP's bucket_cap_mb default) as collective buffers; on GPUs the
// allocator's fragments on top (allocator_fragmentation, f = 0.15): reserved = live / (1 − f), so a
// layout fits only when its live bytes are at most 85 % of HBM. f is the fragmentation GMLake removes from
// PyTorch's caching allocator on average over eight LLM trainings on A100-80GB (Guo et al. 2024, ASPLOS '24,
// arXiv 2401.08156, abstract: 15 % on average, up to 33 %, 9.2 GB on average), a lower bound on what the
// caching allocator leaves fragmented. 0 on TPUs: XLA assigns
// buffers when it compiles, and no fragmentation figure for it was found.
// Left out: kernel launch gaps, stragglers, dropout on the residual stream, MoE routing imbalance (an MoE
// MLP is timed as a dense one of the active width), gradient-accumulation adds (taken as fused into the
// weight-gradient GEMM), the loss of clock under power caps beyond what the GEMM tables measured, the
// tensor-parallel collectives of the vocabulary-parallel embedding (an AllReduce of its output) and output
// layer and loss (under 1 % of a microbatch on the validated runs).
#include <array>
#include <string>
#include <vector>

#include "scaling/cost/attention_rates.hpp"
#include "scaling/cost/gemm_efficiency.hpp"
#include "scaling/cost/layout.hpp"
#include "scaling/cost/terms.hpp"
#include "scaling/cost/training.hpp"
#include "scaling/hardware/system.hpp"
#include "scaling/model/transformer.hpp"

namespace scaling {

// Published measurements of single bf16 GEMMs on a chip with no measured table here: y[M,N] = x[M,K]·W[K,N]
// at `flops_per_s` (2·M·K·N over the time the source printed). A chip's matmul ceiling is the best of its
// points; the others are there to check the shape rule against (tests/test_calibrated.cpp).
struct PublishedGemmPoint {
  const char* chip;
  double m, k, n;
  double flops_per_s;
  const char* source;
};
std::vector<PublishedGemmPoint> published_gemm_points();

// A step of a published efficiency table: operations of at least `at_least` (FLOPs, or bytes) run at
// `efficiency` of the peak. Steps are listed from the largest threshold down; the last is 0.
struct EfficiencyStep {
  double at_least;
  double efficiency;
};

// A published GEMM-time rule by size, for a chip without a measured table (Calculon's system files,
// Isaev et al. 2023): the matrix unit runs a GEMM of F FLOPs at peak·e_F(F), HBM moves its B bytes
// (bf16 inputs read once, output written once: 2(MK + KN + MN)) at bandwidth·e_B(B), and the two do not
// overlap (Calculon's processing_mode "no_overlap"): t = F / (peak·e_F(F)) + B / (bandwidth·e_B(B)).
struct PublishedGemmRule {
  const char* chip;
  double peak_flops_per_s;
  std::vector<EfficiencyStep> by_flops;
  double hbm_bytes_per_s;
  std::vector<EfficiencyStep> by_bytes;
  const char* source;
};
std::vector<PublishedGemmRule> published_gemm_rules();
// The rule's FLOPs/s for an [M, K]·[K, N] bf16 GEMM (no ceiling applied).
double published_gemm_rate(const PublishedGemmRule& rule, double m, double k, double n);

// A published sweep of NCCL all-reduce bus bandwidth by payload on one 8-GPU NVLink node. nccl-tests'
// busbw is algbw · 2(n − 1)/n, so a ring pass (an AllGather or a ReduceScatter, half an AllReduce) of a
// P-byte buffer takes (n − 1)/n · P / busbw(P). Small payloads run far below the link's figure (launch and
// protocol latency, too few bytes in flight); the sweep measured all of it, so a pass timed by it charges
// no separate hop latency. Between two measured payloads busbw is interpolated linearly in log(P); below
// the smallest the time stays the smallest payload's (a latency floor), above the largest busbw stays.
// Both published sweeps double the payload from 32 KiB to 16 GiB.
inline constexpr std::array<double, 20> kSweepPayloadBytes = {
    32.0 * 1024,   64.0 * 1024,   128.0 * 1024,  256.0 * 1024,  512.0 * 1024,  1.0 * (1 << 20), 2.0 * (1 << 20),
    4.0 * (1 << 20), 8.0 * (1 << 20), 16.0 * (1 << 20), 32.0 * (1 << 20), 64.0 * (1 << 20), 128.0 * (1 << 20),
    256.0 * (1 << 20), 512.0 * (1 << 20), 1.0 * (1 << 30), 2.0 * (1 << 30), 4.0 * (1 << 30), 8.0 * (1 << 30),
    16.0 * (1 << 30)};
struct CollectiveSweep {
  const char* chip;                                  // the chip it applies to
  std::array<double, 20> busbw_bytes_per_s;          // bus bytes/s at each of kSweepPayloadBytes
  double ring_cap_bytes_per_s;                       // a ring pass no faster than this (0: none)
  const char* source;
};
std::vector<CollectiveSweep> published_nvlink_sweeps();
// The bus bandwidth of a ring pass of a `payload_bytes` buffer by the sweep (see above).
double sweep_bytes_per_s(const CollectiveSweep& sweep, double payload_bytes);

// The highest MFU any published training run this workbook holds reached on a chip (validation/: the
// calibration and hold-out runs), on the workbook's one count, 6 · active parameters · tokens over the
// bf16 peak: what a plan predicting more than this is claiming nobody has shown. `train` and `plan` say so
// when their calibrated MFU passes it; validation_planner_best holds the planner's bests to it.
struct MfuRecord {
  const char* chip;
  double mfu;
  const char* source;
};
std::vector<MfuRecord> published_mfu_records();
// The record for `chip` (its preset name), or null where none is held.
const MfuRecord* published_mfu_record(const std::string& chip);

// The achieved rates of one chip, each with its source.
struct ChipCalibration {
  std::string chip;
  // Where the GEMM rate by shape comes from, in order of preference:
  //  - the chip's own measured bf16 GEMM table (H100, H200: validation/gemm), `gemm`;
  //  - a published rule by size (A100: Calculon's), `rule`, capped at the ceiling;
  //  - for a chip with neither (TPU v5e), the H100's measured table scaled by ceiling / the table's best
  //    (`scaled`): the shape costs the chip the same fraction of its best as it costs the H100.
  const GemmTable* gemm = nullptr;
  const PublishedGemmRule* rule = nullptr;
  bool scaled = false;
  double table_best_flops_per_s = 0;
  double matmul_ceiling_flops_per_s = 0;  // the best a large GEMM reaches (the table's best, or a published figure)
  std::string matmul_source;
  // Which of the chip's datasheet figures the rates rest on, so an override of one (--flops, --hbm-bw) is
  // known to move the timing or not: the peak only where no GEMM on the chip was measured or published (the
  // ceiling is then the peak); the HBM bandwidth wherever the memory kernels were not measured on the chip
  // itself (they are then the H100's fractions of this chip's bandwidth).
  bool rates_read_peak_flops = false;
  bool rates_read_hbm_bw = false;
  // Achieved HBM bytes/s of the memory-bound kernel kinds.
  double norm_bytes_per_s = 0, add_bytes_per_s = 0, activation_bytes_per_s = 0, softmax_bytes_per_s = 0,
         optimizer_bytes_per_s = 0, copy_bytes_per_s = 0;
  std::string hbm_source;
  // The NCCL sweep that times collectives inside a node (GPUs with a published sweep), else null.
  const CollectiveSweep* nvlink_sweep = nullptr;
  // The fraction of the ICI link figure a TPU's collectives reached where it was measured, else 1.
  double ici_fraction = 1;
  std::string ici_source;
  // Where the flash kernels' attention rates come from (attention_source(), attention_rates.hpp).
  std::string attention_source;
};

// Rates for `chip`: the measured tables for H100/H200 (validation/gemm); otherwise the best published
// GEMM point as the ceiling (the datasheet peak where none is published, said in matmul_source) with the
// published rule by size where there is one, else the H100's shape curve; for HBM, the fraction of the
// datasheet bandwidth each kernel kind reached on the measured H100 applied to this chip's datasheet
// bandwidth (said in hbm_source).
ChipCalibration chip_calibration(const Chip& chip);

// Achieved FLOPs/s of a bf16 GEMM [M, K]·[K, N] on the chip: the measured table where there is one; the
// published rule by size, no faster than the measured ceiling (no GEMM beat it in the search that found
// it); otherwise the H100's measured rate for that shape relative to the H100's best GEMM, times this
// chip's ceiling, capped by a roofline at its achieved copy bandwidth (bf16 inputs and output).
double matmul_rate(const ChipCalibration& cal, double m, double k, double n);

// What one request fixes for the calibrated model (the model, the system, the batch, the dtypes and the
// chip's rates), with a cache of the per-layer GEMM times by (tokens per microbatch, tensor degree), so
// the planner's search looks each shape up once.
struct CalibratedContext {
  TransformerConfig model;
  System system;
  double batch_tokens = 0, seq_len = 0;
  TrainingSetup setup;
  ChipCalibration cal;
  double p_layer = 0, p_other = 0;  // parameters per layer and outside the layers
  double six_active_flops_per_token = 0;  // the MFU's numerator per token (model/tensors), counted once
  // The [tokens, D]-shaped share (elements per token per layer, in D) of what each named rule keeps: the
  // part a tensor-parallel rank keeps whole without sequence parallelism (see Memory above). `all` takes
  // the activation inventory's; a rule given as a sum its own D term (the last one parsed cached).
  double d_input = 0, d_matmuls = 0, d_all = 0;
  std::string d_rule_text;
  double d_rule = 0;
  struct GemmTimes {
    double b, y;
    double layer_fwd_s, layer_flops, unembed_fwd_s;
    double qkv_fwd_s, mlp_in_fwd_s;  // the column-parallel GEMMs, each alone (TpOverlap::backward)
  };
  std::vector<GemmTimes> cache;
  // A what-if for a sensitivity study (validation_report's band), 1 = the model as documented above:
  // the backward GEMMs at this fraction of the forward shape's rate.
  double backward_gemm_rate_fraction = 1;
  // The chip's overlap slowdown and allocator fragmentation (the functions below), set by
  // calibrated_context; a what-if may move them.
  double overlap_slowdown = 0, allocator_fragmentation = 0;
  // The attention core's rates per kernel at this model's head size and seq_len (attention_rates(), indexed
  // by AttentionKernel), set by calibrated_context.
  std::array<AttentionRates, 3> attention;
};
// The attention core's forward and backward time of one microbatch, one layer, one chip, for a flash
// kernel at ctx.attention's rates (see the header; the materialized kernel's roofline is calibrated_terms').
struct AttentionCoreTimes {
  double fwd_s = 0, bwd_s = 0;
};
AttentionCoreTimes flash_attention_times(const CalibratedContext& ctx, AttentionKernel kernel, double tokens,
                                         double heads_per_chip);
CalibratedContext calibrated_context(const TransformerConfig& model, const System& system, double batch_tokens,
                                     double seq_len, const TrainingSetup& setup);

// The fraction by which compute slows while a collective overlaps it (0 where none is measured).
double overlap_slowdown(const Chip& chip);
// The fraction of the memory a run's allocator reserves that fragmentation leaves unusable (0 where none is measured).
double allocator_fragmentation(const Chip& chip);

// The calibrated terms of one layout, already validated (step_terms validates it and passes the ideal
// model's terms, whose memory the calibrated memory starts from). Throws std::invalid_argument for a
// schedule that does not fit the layout (virtual stages without the interleaved schedule or a pipeline,
// v not dividing the layers per stage).
Terms calibrated_terms(CalibratedContext& ctx, const Layout& layout, const Terms& ideal);

}  // namespace scaling
