#include "scaling/cost/calibrated.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "scaling/base/format.hpp"
#include "scaling/base/interpolate.hpp"
#include "scaling/model/tensors.hpp"

namespace scaling {

std::vector<PublishedGemmPoint> published_gemm_points() {
  // stas00/ml-engineering at 744d01e18b79512572f64a6bbd8b5f4a725203a7, compute/accelerator/README.md,
  // "Maximum Achievable Matmul FLOPS comparison table" (BF16): the best of an exhaustive shape search
  // (mamf-finder.py, mean of 100 iterations after 50 warm-ups), its shape printed M x N x K.
  constexpr const char* kMamf =
      "stas00/ml-engineering (744d01e), compute/accelerator/README.md, 'Maximum Achievable Matmul FLOPS "
      "comparison table', BF16: NVIDIA A100 SXM 271.2 TFLOPS (86.9 % of 312), best shape MxNxK "
      "1024x10240x5120, torch 2.6.0+cu126";
  // JAX's Pallas TPU guide "Matrix Multiplication" (docs/pallas/tpu/matmul.ipynb at jax-ml/jax
  // 1082251cde876f91608b403d1995b5e0025f0398), run on one TPU v5e: XLA's jnp.matmul of two bf16 square
  // matrices, timed with timeit over 100 calls (Python dispatch included, so these are lower bounds on the
  // kernel's rate), FLOP/s = 2·m·k·n / time as printed in the notebook's output cell.
  constexpr const char* kPallas =
      "JAX Pallas TPU guide 'Matrix Multiplication' (jax-ml/jax docs/pallas/tpu/matmul.ipynb at 1082251), "
      "'XLA matmul' output on a TPU v5e, bf16 jnp.matmul timed over 100 calls with Python dispatch";
  return {
      {"a100", 1024, 5120, 10240, 271.2e12, kMamf},
      {"tpu-v5e", 8192, 8192, 8192, 181823175395037.44, kPallas},
      {"tpu-v5e", 4096, 4096, 4096, 166131533963991.34, kPallas},
      {"tpu-v5e", 1024, 1024, 1024, 17981093801113.996, kPallas},
  };
}

std::vector<PublishedGemmRule> published_gemm_rules() {
  // calculon-ai/calculon at caa4b11f8fe1fee3ba57adaacb7590d7deabd053, systems/a100_80g.json: "matrix"
  // float16 312 TFLOPS with gflops_efficiency [[128, 0.95], [16, 0.9], [1, 0.6], [0, 0.1]], "mem1" 2048 GBps
  // with MB_efficiency [[100, 0.90], [10, 0.75], [1, 0.6], [0, 0.3]], processing_mode "no_overlap". It is
  // the system file Calculon's step-time validation against Korthikanti et al. 2022's Table 5 reads
  // (calculon/llm/validation.py line 319; its memory checks of the paper's Figures 1 and 7 read
  // a100_80e.json, lines 118 and 234); calculon/processor.py and memory.py take the first step whose
  // threshold the operation reaches, and calculon/llm/layers.py counts a Linear's bytes as inputs + outputs
  // + weights.
  return {
      {"a100", 312e12, {{128e9, 0.95}, {16e9, 0.9}, {1e9, 0.6}, {0, 0.1}}, 2048e9,
       {{100e6, 0.90}, {10e6, 0.75}, {1e6, 0.6}, {0, 0.3}},
       "Calculon (Isaev et al. 2023; calculon-ai/calculon caa4b11, systems/a100_80g.json, the A100 system "
       "its step-time validation against Korthikanti et al. 2022's Table 5 reads): matrix efficiency by GEMM "
       "GFLOPs, HBM efficiency by MB moved, compute and memory time added ('no_overlap')"},
  };
}

std::vector<CollectiveSweep> published_nvlink_sweeps() {
  // stas00/ml-engineering at 744d01e18b79512572f64a6bbd8b5f4a725203a7, network/README.md, "Real network
  // throughput": nccl-tests all_reduce_perf -b 32k -e 16G -f 2 -g 8 on one 8 x A100 NVLink node, busbw in
  // GB/s (1e9 B/s) by buffer size in bytes.
  constexpr const char* kA100 =
      "stas00/ml-engineering (744d01e), network/README.md 'Real network throughput': nccl-tests "
      "all_reduce_perf on one node of 8 A100 (NVLink 3), busbw by payload from 32 KiB to 16 GiB";
  // The same section's sweep on 8 x H200 (NVLink 4; all_reduce_bench.py, payloads 32 KiB to 16 GiB, NCCL's
  // default algorithm, which reduces inside the NVSwitch (NVLS) from 2 MiB up), and its table of the 16 GiB
  // rows: 367.61 GB/s with NVLS disabled, the ring's rate, taken as the cap of a ring pass. The H100 has the
  // same NVLink 4 links and NVSwitch generation (450 GB/s a GPU each way), so the sweep stands for it too.
  // An approximation, said: the sweep is an AllReduce, which NCCL runs in the switch (NVLS) from 2 MiB on 8
  // GPUs; a ReduceScatter or AllGather, or a group of 4 or fewer, runs the ring, whose rate below 16 GiB the
  // source does not give. The 8-GPU sweeps also stand for tensor groups of 2 and 4 GPUs (unmeasured).
  constexpr const char* kH200 =
      "stas00/ml-engineering (744d01e), network/README.md 'Real network throughput': all_reduce_bench.py on "
      "one node of 8 H200 (NVLink 4), busbw by payload from 32 KiB to 16 GiB, no faster than the ring's "
      "367.61 GB/s measured at 16 GiB with NVLS off (same section); the H100 has the same NVLink 4 switch";
  // busbw in GB/s at 32 KiB, 64 KiB, … 16 GiB (kSweepPayloadBytes), as the section prints them.
  constexpr double GB = 1e9;
  const std::array<double, 20> a100 = {1.31 * GB,   2.45 * GB,   4.43 * GB,   7.47 * GB,   11.41 * GB,
                                       18.00 * GB,  36.18 * GB,  72.33 * GB,  109.93 * GB, 106.16 * GB,
                                       138.49 * GB, 171.54 * GB, 176.92 * GB, 194.07 * GB, 222.72 * GB,
                                       229.04 * GB, 231.41 * GB, 233.88 * GB, 234.61 * GB, 234.89 * GB};
  const std::array<double, 20> h200 = {1.44 * GB,   2.93 * GB,   5.73 * GB,   11.74 * GB,  23.94 * GB,
                                       39.93 * GB,  64.53 * GB,  107.16 * GB, 155.53 * GB, 219.89 * GB,
                                       275.84 * GB, 346.51 * GB, 401.93 * GB, 436.15 * GB, 450.29 * GB,
                                       463.58 * GB, 469.17 * GB, 473.10 * GB, 477.45 * GB, 482.26 * GB};
  return {{"a100", a100, 0, kA100}, {"h100", h200, 367.61 * GB, kH200}, {"h200", h200, 367.61 * GB, kH200}};
}

std::vector<MfuRecord> published_mfu_records() {
  // Each from the printed throughput and parameter count of its row: MFU = 6 · N · tokens/s per chip / peak.
  // mosaicml/llm-foundry at 8c8dd48, scripts/train/benchmarking/README.md: the bf16 row "3b | 512 | 8" of
  // the A100 80GB table (12,127 tokens/s/GPU, NumParams 2,647,905,280; 312 TFLOP/s) and of the H100 80GB
  // table (27,965 tokens/s/GPU, the same model; 989 TFLOP/s). AI-Hypercomputer/maxtext at 76bd53b: the 32B
  // model (32,548,464,640 parameters, MaxText/configs/v5p/README.md) on one slice, 132 TFLOP/s per v5e chip
  // (MaxText/configs/v5e/README.md) and 328 per v5p chip, MaxText's count of 198,508,019,712 and
  // 198,512,013,312 FLOPs per token (validation/training-runs.json, holdout-runs.json) giving the tokens/s.
  constexpr double mpt3b = 2647905280, maxtext32b = 32548464640;
  return {
      {"a100", 6 * mpt3b * 12127 / 312e12,
       "llm-foundry MPT-3B at sequence 512 on 8 A100-80GB (github.com/mosaicml/llm-foundry/blob/8c8dd48/scripts/train/benchmarking/README.md)"},
      {"h100", 6 * mpt3b * 27965 / 989e12,
       "llm-foundry MPT-3B at sequence 512 on 8 H100 (github.com/mosaicml/llm-foundry/blob/8c8dd48/scripts/train/benchmarking/README.md)"},
      {"tpu-v5e", 6 * maxtext32b * (132e12 / 198508019712) / 197e12,
       "MaxText 32B on one v5e-256 slice (github.com/AI-Hypercomputer/maxtext/blob/76bd53b/MaxText/configs/v5e/README.md)"},
      {"tpu-v5p", 6 * maxtext32b * (328e12 / 198512013312) / 459e12,
       "MaxText 32B on one v5p-128 slice (github.com/AI-Hypercomputer/maxtext/blob/76bd53b/MaxText/configs/v5p/README.md)"},
  };
}

const MfuRecord* published_mfu_record(const std::string& chip) {
  static const auto records = published_mfu_records();
  for (const auto& r : records)
    if (chip == r.chip) return &r;
  return nullptr;
}

double sweep_bytes_per_s(const CollectiveSweep& sweep, double payload_bytes) {
  const auto& P = kSweepPayloadBytes;
  const auto& busbw = sweep.busbw_bytes_per_s;
  // Below the smallest payload its time stays (a latency floor); elsewhere the printed curve.
  const double bw = payload_bytes < P.front() ? busbw.front() * payload_bytes / P.front()
                                              : interpolate_in_log_x(P, busbw, payload_bytes);
  return sweep.ring_cap_bytes_per_s > 0 ? std::min(bw, sweep.ring_cap_bytes_per_s) : bw;
}

namespace {

double step_efficiency(const std::vector<EfficiencyStep>& steps, double amount) {
  for (const auto& s : steps)
    if (amount >= s.at_least) return s.efficiency;
  return steps.back().efficiency;
}

}  // namespace

double published_gemm_rate(const PublishedGemmRule& rule, double m, double k, double n) {
  const double flops = 2 * m * k * n;
  const double bytes = 2 * (m * k + k * n + m * n);
  const double t_s = flops / (rule.peak_flops_per_s * step_efficiency(rule.by_flops, flops)) +
                     bytes / (rule.hbm_bytes_per_s * step_efficiency(rule.by_bytes, bytes));
  return flops / t_s;
}

namespace {

// The H100's measured memory-bound kernels (validation/gemm/h100.json) as fractions of its datasheet
// bandwidth: the rule for a chip measured by nobody is that its kernels reach the same fractions.
constexpr const char* kReferenceCard = "h100";

// The fastest rate anywhere in a measured GEMM table: the best a large GEMM reached on that card.
double best_flops_per_s(const GemmTable& t) {
  double best = 0;
  for (const auto& curve : t.curves)
    for (double r : curve.flops_per_s) best = std::max(best, r);
  return best;
}

}  // namespace

ChipCalibration chip_calibration(const Chip& chip) {
  ChipCalibration c;
  c.chip = chip.name;
  const auto cards = measured_cards();
  const bool measured = std::find(cards.begin(), cards.end(), chip.name) != cards.end();
  if (measured) {
    c.gemm = &measured_gemm_table(chip.name, Dtype::bf16);
    c.table_best_flops_per_s = best_flops_per_s(*c.gemm);
    c.matmul_ceiling_flops_per_s = c.table_best_flops_per_s;
    c.matmul_source = fmt::format("measured bf16 GEMM table of the {} (validation/gemm/{}.json, {})", c.gemm->card,
                                  chip.name, c.gemm->measured);
  } else {
    // The ceiling: the best published GEMM on this chip, else the datasheet peak.
    c.matmul_ceiling_flops_per_s = chip.bf16_flops_per_s;
    c.rates_read_peak_flops = true;
    std::string ceiling = "no published achievable-matmul figure: the datasheet peak";
    double best = 0;
    for (const auto& p : published_gemm_points()) {
      if (chip.name != p.chip || p.flops_per_s <= best) continue;
      best = c.matmul_ceiling_flops_per_s = p.flops_per_s;
      c.rates_read_peak_flops = false;
      ceiling = fmt::format("ceiling {} at M={}, K={}, N={}: {}", format_quantity(p.flops_per_s, "FLOP/s"),
                            format_whole(p.m), format_whole(p.k), format_whole(p.n), p.source);
    }
    static const auto rules = published_gemm_rules();
    for (const auto& r : rules)
      if (chip.name == r.chip) c.rule = &r;
    if (c.rule) {
      c.matmul_source = ceiling + "; by size: " + c.rule->source + ", no faster than the ceiling";
    } else {
      c.scaled = true;
      c.gemm = &measured_gemm_table(kReferenceCard, Dtype::bf16);
      c.table_best_flops_per_s = best_flops_per_s(*c.gemm);
      c.matmul_source = ceiling +
                        "; by shape, no published curve for this chip: the measured H100 table "
                        "(validation/gemm/h100.json) relative to its best";
    }
  }
  static const auto sweeps = published_nvlink_sweeps();
  for (const auto& sw : sweeps)
    if (chip.name == sw.chip) c.nvlink_sweep = &sw;
  // The book (Part 3, "Sharded Matrices and How to Multiply Them", case 2: an AllGather measured on a TPU
  // v5e 8x16 slice, array sharded over the 16-long axis, a full bidirectional ring): about 95 % of the
  // 4.5e10 B/s link figure, reached from about 10 MB. Measured for an AllGather; taken for every ring pass
  // on the v5e (a ReduceScatter moves the same bytes the other way). Other TPUs keep the link figure.
  if (chip.name == "tpu-v5e") {
    c.ici_fraction = 0.95;
    c.ici_source = "How to Scale Your Model, Part 3 'Sharded Matrices': an AllGather on a TPU v5e 8x16 slice reached "
                   "about 95 % of the 4.5e10 B/s ICI link figure from about 10 MB";
  }
  const std::string card = measured ? chip.name : kReferenceCard;
  c.rates_read_hbm_bw = !measured;
  // Fractions of the measuring card's datasheet bandwidth, applied to this chip's.
  const double scale = measured ? 1.0 : chip.hbm_bytes_per_s / scaling::chip(kReferenceCard).hbm_bytes_per_s;
  c.norm_bytes_per_s = scale * measured_bytes_per_s(card, "layernorm");
  c.add_bytes_per_s = scale * measured_bytes_per_s(card, "add");
  c.activation_bytes_per_s = scale * measured_bytes_per_s(card, "gelu_tanh");
  c.softmax_bytes_per_s = scale * measured_bytes_per_s(card, "softmax");
  c.optimizer_bytes_per_s = scale * measured_bytes_per_s(card, "adamw_fused_step");
  c.copy_bytes_per_s = scale * measured_bytes_per_s(card, "copy");
  c.attention_source = attention_source(chip.name);
  c.hbm_source = measured ? fmt::format("measured kernels of the {} (validation/gemm/{}.json)", chip.name, chip.name)
                          : fmt::format("the fraction of datasheet bandwidth each kernel kind reached on the measured "
                                        "H100 (validation/gemm/h100.json), times this chip's {}",
                                        format_quantity(chip.hbm_bytes_per_s, "B/s"));
  return c;
}

double matmul_rate(const ChipCalibration& cal, double m, double k, double n) {
  if (cal.rule) return std::min(published_gemm_rate(*cal.rule, m, k, n), cal.matmul_ceiling_flops_per_s);
  const double measured = achieved_flops_per_s(*cal.gemm, m, k, n);
  if (!cal.scaled) return measured;
  // The shape's fraction of the reference card's best, at this chip's ceiling; no faster than moving the
  // bf16 operands and result at this chip's copy rate.
  const double flops = 2 * m * k * n;
  const double bytes = 2 * (m * k + k * n + m * n);
  const double rate = cal.matmul_ceiling_flops_per_s * measured / cal.table_best_flops_per_s;
  return flops / std::max(flops / rate, bytes / cal.copy_bytes_per_s);
}

CalibratedContext calibrated_context(const TransformerConfig& model, const System& system, double batch_tokens,
                                     double seq_len, const TrainingSetup& setup) {
  CalibratedContext ctx;
  ctx.model = model;
  ctx.system = system;
  ctx.batch_tokens = batch_tokens;
  ctx.seq_len = seq_len;
  ctx.setup = setup;
  ctx.cal = chip_calibration(system.chip);
  ctx.overlap_slowdown = overlap_slowdown(system.chip);
  ctx.allocator_fragmentation = allocator_fragmentation(system.chip);
  ctx.six_active_flops_per_token = six_active_flops_per_token(model);
  ctx.d_input = saved_of_kind(model, ActivationKind::layer_input).d;
  ctx.d_matmuls = saved_of_kind(model, ActivationKind::matmul_output).d;
  ctx.d_all = saved_for_backward(model).d;
  const auto p = param_counts(model);
  ctx.p_layer = (p.total - p.once) / model.layers;
  ctx.p_other = p.total - ctx.p_layer * model.layers;
  for (AttentionKernel k : {AttentionKernel::flash, AttentionKernel::flash1, AttentionKernel::materialized})
    ctx.attention[static_cast<size_t>(k)] =
        attention_rates(system.chip.name, k, model.head_dim, seq_len, ctx.cal.matmul_ceiling_flops_per_s);
  return ctx;
}

AttentionCoreTimes flash_attention_times(const CalibratedContext& ctx, AttentionKernel kernel, double tokens,
                                         double heads_per_chip) {
  // F: every causal (query, key) pair once, (s + 1)/2 keys per query on average, 4H FLOPs each forward.
  const double F = 4 * ctx.model.head_dim * tokens * heads_per_chip * (ctx.seq_len + 1) / 2;
  const auto& r = ctx.attention[static_cast<size_t>(kernel)];
  // No published figure: the matmul ceiling as it stands in the context (a what-if may have moved it).
  if (!r.published) {
    const double fwd = F / ctx.cal.matmul_ceiling_flops_per_s;
    return {fwd, 2.5 * fwd};
  }
  const double fwd = F / r.fwd_flops_per_s;
  if (!r.forward_published) return {fwd, 2.5 * fwd};
  // Forward + backward take 3.5·F at the combined rate; the backward is what the forward leaves of it.
  return {fwd, std::max(0.0, 3.5 * F / r.fwd_bwd_flops_per_s - fwd)};
}

namespace {

// The MLP width a token passes through: d_ff, or the routed experts' and shared experts' widths it uses.
double active_ff(const TransformerConfig& c) {
  if (!is_moe(c)) return c.d_ff;
  const double e = c.expert_d_ff > 0 ? c.expert_d_ff : c.d_ff;
  return (c.experts_per_token + c.shared_experts) * e;
}

const CalibratedContext::GemmTimes& gemm_times(CalibratedContext& ctx, double b, double y) {
  for (const auto& g : ctx.cache)
    if (g.b == b && g.y == y) return g;
  const auto& c = ctx.model;
  const double hq = c.q_heads * c.head_dim, hkv = c.kv_heads * c.head_dim, f = active_ff(c);
  struct Shape {
    double k, n;
  };
  const Shape shapes[] = {{c.d_model, (hq + 2 * hkv) / y},
                          {hq / y, c.d_model},
                          {c.d_model, (c.gated_mlp ? 2 : 1) * f / y},
                          {f / y, c.d_model}};
  CalibratedContext::GemmTimes g{b, y, 0, 0, 0, 0, 0};
  double t_s[4];
  for (int i = 0; i < 4; ++i) {
    const auto& s = shapes[i];
    const double flops = 2 * b * s.k * s.n;
    g.layer_flops += flops;
    t_s[i] = flops / matmul_rate(ctx.cal, b, s.k, s.n);
    g.layer_fwd_s += t_s[i];
  }
  g.qkv_fwd_s = t_s[0];
  g.mlp_in_fwd_s = t_s[2];
  g.unembed_fwd_s = 2 * b * c.d_model * (c.vocab / y) / matmul_rate(ctx.cal, b, c.d_model, c.vocab / y);
  ctx.cache.push_back(g);
  return ctx.cache.back();
}

double bytes_of(Dtype d) { return bytes_per_element(d); }

}  // namespace

double overlap_slowdown(const Chip& chip) {
  // Lee et al. 2025 (arXiv 2507.03114, abstract): compute kernels that run while a collective
  // runs beside them take on average 18.9 % longer than alone (A100, H100, MI250, MI210; GPT and Llama
  // training; NCCL/RCCL kernels take SMs and HBM bandwidth). Measured on GPUs only: a TPU's collectives
  // run on its DMA engines and no measurement of their effect on the MXUs was found, so 0 there.
  return chip.gpus_per_node > 0 ? 0.189 : 0.0;
}

double allocator_fragmentation(const Chip& chip) {
  // Guo et al. 2024, GMLake (ASPLOS '24, arXiv 2401.08156, abstract): over eight LLMs trained on A100-80GB,
  // stitching the fragments PyTorch's caching allocator leaves removes 15 % fragmentation on average (up to
  // 33 %; 9.2 GB of memory on average), so at least that share of what the caching allocator reserves is
  // fragments no tensor can use (taken as the share, a lower bound). So a layout fits when its live
  // bytes are at most 85 % of HBM. A GPU's framework allocates at run time; XLA on a TPU assigns buffers at
  // compile time and no fragmentation figure for it was found, so 0 there.
  return chip.gpus_per_node > 0 ? 0.15 : 0.0;
}

namespace {

// Ring time of one AllGather or ReduceScatter of `bytes` (the whole buffer) over n ranks at `bw` per
// chip, with one latency per hop.
struct Comm {
  double t_s = 0, latency_s = 0;
};
Comm ring_pass(double bytes, double n, double bw, double hop_latency_s) {
  if (n <= 1 || bytes <= 0) return {};
  return {(n - 1) / n * bytes / bw + (n - 1) * hop_latency_s, (n - 1) * hop_latency_s};
}

// A ring pass moving `bytes` over n chips of a slice's or node's fast axes with link figure `link_bytes_per_s`,
// in collectives of `payload` bytes each: at what the fabric achieved where it was measured — a GPU node's
// published NCCL sweep at that payload (its latency included; every GPU has its own links into the switch,
// so a group sharing the node with another keeps the sweep's rate), a TPU's measured fraction of its ICI
// link — else at the link figure, plus one hop latency per step.
Comm fast_pass(const CalibratedContext& ctx, double bytes, double payload, double n, double link_bytes_per_s,
               double hop_latency_s) {
  const auto& cal = ctx.cal;
  if (cal.nvlink_sweep && ctx.system.fast_name == "NVLink")
    return ring_pass(bytes, n, sweep_bytes_per_s(*cal.nvlink_sweep, payload), 0);
  return ring_pass(bytes, n, link_bytes_per_s * cal.ici_fraction, hop_latency_s);
}

}  // namespace

Terms calibrated_terms(CalibratedContext& ctx, const Layout& l, const Terms& ideal) {
  const auto& c = ctx.model;
  const auto& sys = ctx.system;
  const auto& cal = ctx.cal;
  const double X_fast = [&] { double x = 1; for (const auto& a : l.fast) x *= a.data; return x; }();
  const double Y = tensor_degree(l), S = pipeline_degree(l);
  const double X_slow = l.slow.data, S_slow = l.slow.pipeline;
  const double X = X_fast * X_slow;
  const double m = l.microbatches;
  const double chips = X * Y * S;
  const double lps = std::ceil(c.layers / S);
  const bool interleaved = l.schedule == Schedule::interleaved;
  const double v = interleaved ? l.virtual_stages : 1;
  if (l.virtual_stages < 1)
    throw std::invalid_argument(fmt::format("virtual stages = {}: must be at least 1", l.virtual_stages));
  if (!interleaved && l.virtual_stages != 1)
    throw std::invalid_argument(fmt::format("virtual stages = {} need the interleaved schedule", l.virtual_stages));
  if (interleaved && S < 2) throw std::invalid_argument("the interleaved schedule needs a pipeline (degree ≥ 2)");
  // Megatron-LM interleaves only with 2 or more model chunks a stage; with one it runs 1F1B.
  if (interleaved && l.virtual_stages < 2)
    throw std::invalid_argument(fmt::format("the interleaved schedule needs 2 or more virtual stages a pipeline stage "
                                            "(virtual stages = {}; with one it is 1F1B)",
                                            l.virtual_stages));
  if (interleaved && !interleaves_evenly(c.layers, S, l.virtual_stages))
    throw std::invalid_argument(fmt::format(
        "virtual stages = {}: the {} layers do not split into pipeline {} × {} = {} virtual stages of whole layers "
        "(the interleaved schedule needs the layers, or the layers plus 1 or 2 slots for the embedding and the "
        "loss, divisible by pipeline × virtual stages)",
        l.virtual_stages, format_number(c.layers), format_number(S), l.virtual_stages,
        format_number(S * l.virtual_stages)));

  const double b = ctx.batch_tokens / (X * m);  // tokens per microbatch per replica
  const double s = ctx.seq_len;
  const double a = bytes_of(ctx.setup.activations);
  const double a_w = bytes_of(ctx.setup.weights);
  const double a_g = ctx.setup.grads ? bytes_of(*ctx.setup.grads) : a_w;
  const double D = c.d_model, Fa = active_ff(c);
  const double heads_per_chip = c.q_heads / Y;
  const double d_vec = l.sequence_parallel ? D / Y : D;  // the norms' and residuals' width per chip

  // Matmuls of one layer's forward, one microbatch.
  const auto& g = gemm_times(ctx, b, Y);
  // The attention core.
  const double H = c.head_dim, ceiling = cal.matmul_ceiling_flops_per_s;
  double t_att_fwd = 0, t_att_bwd = 0, t_scores_fwd = 0, t_scores_bwd = 0;
  if (l.attention != AttentionKernel::materialized) {
    const auto att = flash_attention_times(ctx, l.attention, b, heads_per_chip);
    t_att_fwd = att.fwd_s;
    t_att_bwd = att.bwd_s;
  } else {
    // E score elements per microbatch; each GEMM a roofline of its FLOPs and its bytes of scores.
    const double E = b * heads_per_chip * s;
    t_att_fwd = std::max(4 * H * E / ceiling, 2 * a * E / cal.copy_bytes_per_s);
    t_att_bwd = std::max(8 * H * E / ceiling, 4 * a * E / cal.copy_bytes_per_s);
    t_scores_fwd = 2 * a * E / cal.softmax_bytes_per_s + (2 * a + 1) * E / cal.copy_bytes_per_s;
    t_scores_bwd = 3 * a * E / cal.softmax_bytes_per_s + (2 * a + 1) * E / cal.copy_bytes_per_s;
  }
  // Vector work of one layer, one microbatch, forward and backward (bytes of each kernel: see the header).
  const double act_in = c.gated_mlp ? 2 : 1;
  const double t_vec_fwd = c.norms_per_layer * 2 * a * d_vec * b / cal.norm_bytes_per_s +
                           2 * 3 * a * d_vec * b / cal.add_bytes_per_s +
                           (act_in + 1) * a * (Fa / Y) * b / cal.activation_bytes_per_s + t_scores_fwd;
  const double t_vec_bwd = c.norms_per_layer * 3 * a * d_vec * b / cal.norm_bytes_per_s +
                           2 * 3 * a * d_vec * b / cal.add_bytes_per_s +
                           (2 * act_in + 1) * a * (Fa / Y) * b / cal.activation_bytes_per_s + t_scores_bwd;
  // Recompute.
  double t_re = 0, tp_reruns = 0;
  switch (l.saved.recompute) {
    case Remat::block: t_re = g.layer_fwd_s + t_att_fwd + t_vec_fwd, tp_reruns = 1; break;
    case Remat::big_matmuls: t_re = t_att_fwd + t_scores_fwd; break;
    case Remat::none: break;
  }
  // Tensor-parallel collectives of one layer, one microbatch.
  double t_tp = 0, lat_tp = 0, tp_pass_s = 0, tp_pass_latency_s = 0;
  if (Y > 1) {
    const auto gb = group_bandwidths(sys, l.fast.data());
    double hop = 0;
    for (size_t i = 0; i < sys.fast.size(); ++i)
      if (l.fast[i].tensor > 1) hop = std::max(hop, sys.fast[i].hop_latency_s);
    const double payload = b * D * a;
    const Comm pass = fast_pass(ctx, payload, payload, Y, gb.tensor, hop);
    tp_pass_s = pass.t_s, tp_pass_latency_s = pass.latency_s;
    const double passes = 2 * 2 * (2 + tp_reruns);  // 2 collectives each of 2 passes, forward + backward (+ rerun)
    t_tp = passes * pass.t_s;
    lat_tp = passes * pass.latency_s;
    // What a collective of `comm_s` costs beside compute of `beside_s`: the part it outlasts it, plus the
    // slowdown of the compute it runs beside (overlap_slowdown).
    const auto beside = [&](double comm_s, double beside_s) {
      return std::max(0.0, comm_s - beside_s) + ctx.overlap_slowdown * std::min(comm_s, beside_s);
    };
    switch (l.tp_overlap) {
      case TpOverlap::none: break;
      case TpOverlap::all: {
        const double hidden_behind = g.layer_fwd_s * (3 + tp_reruns);
        lat_tp *= t_tp > hidden_behind ? (t_tp - hidden_behind) / t_tp : 0;
        t_tp = beside(t_tp, hidden_behind);
        break;
      }
      case TpOverlap::async: {
        // Asynchronous collectives (layout.hpp): the backward's four passes beside the layer's
        // weight-gradient GEMMs (each as long as its forward GEMM, at the backward rate); the forward's and
        // the rerun's exposed, with their latency.
        const double fwd_passes = 2 * 2 * (1 + tp_reruns);
        const double weight_grad_s = g.layer_fwd_s / ctx.backward_gemm_rate_fraction;
        t_tp = fwd_passes * pass.t_s + beside(4 * pass.t_s, weight_grad_s);
        lat_tp = fwd_passes * pass.latency_s;
        break;
      }
      case TpOverlap::backward: {
        // Megatron-LM's asynchronous backward (layout.hpp): the forward's and the rerun's passes stay
        // exposed; per column-parallel linear (QKV, MLP in) the input gradient's reduction runs beside the
        // weight-gradient GEMM and, with sequence parallelism, the re-gather of its sharded input (one
        // more pass, which only this implementation makes) beside the input-gradient GEMM. Without
        // sequence parallelism the row-parallel linears' backward has no collective; with it, each
        // AllGathers its output gradient, exposed.
        const double fwd_passes = 2 * 2 * (1 + tp_reruns);
        const double bwd_s = 1 / ctx.backward_gemm_rate_fraction;  // a backward GEMM over its forward's time
        double t_bwd = 0, exposed_bwd_passes = 0;
        for (double col_fwd_s : {g.qkv_fwd_s, g.mlp_in_fwd_s}) {
          if (l.sequence_parallel) {
            t_bwd += beside(pass.t_s, col_fwd_s * bwd_s) + beside(pass.t_s, col_fwd_s * bwd_s) + pass.t_s;
            exposed_bwd_passes += 1;
          } else {
            t_bwd += beside(2 * pass.t_s, col_fwd_s * bwd_s);
          }
        }
        t_tp = fwd_passes * pass.t_s + t_bwd;
        lat_tp = (fwd_passes + exposed_bwd_passes) * pass.latency_s;
        break;
      }
    }
  }
  const double t_layer_mm = (1 + 2 / ctx.backward_gemm_rate_fraction) * g.layer_fwd_s, t_layer_att = t_att_fwd + t_att_bwd, t_layer_vec = t_vec_fwd + t_vec_bwd;
  // The first and last stage's extras; the busiest stage pays the larger (both when there is no pipeline).
  const double t_embed = a * D * b / cal.copy_bytes_per_s;
  const double t_unembed_mm = (1 + 2 / ctx.backward_gemm_rate_fraction) * g.unembed_fwd_s;
  const double t_loss = (2 + 3) * 4 * (c.vocab / Y) * b / cal.softmax_bytes_per_s +
                        (c.final_norm ? (2 + 3) * a * d_vec * b / cal.norm_bytes_per_s : 0);
  const bool last_is_busiest = S == 1 || t_unembed_mm + t_loss >= t_embed;
  const double extra_mm = last_is_busiest ? t_unembed_mm : 0;
  const double extra_vec = S == 1 ? t_embed + t_loss : last_is_busiest ? t_loss : t_embed;
  // Pipeline sends per microbatch.
  const auto gb = group_bandwidths(sys, l.fast.data());
  double t_send = 0, lat_send = 0, t_send_gather = 0;  // t_send includes t_send_gather (on the tensor group's links)
  if (S > 1) {
    const bool slow = S_slow > 1;
    const double bw = slow ? sys.slow.bytes_per_s : gb.pipeline;
    double hop = slow ? sys.slow.latency_s : 0;
    if (!slow)
      for (size_t i = 0; i < sys.fast.size(); ++i)
        if (l.fast[i].pipeline > 1) hop = std::max(hop, sys.fast[i].hop_latency_s);
    const double msg = b * D * a / Y;
    t_send = 2 * v * (msg / bw + hop);
    lat_send = 2 * v * hop;
    // Without sequence parallelism the receiving stage rebuilds the whole activation (or its gradient)
    // from the Y pieces before it can start: one AllGather over the tensor group per message (Megatron-LM's
    // gather_split_1d_tensor after each receive, megatron/p2p_communication.py).
    if (Y > 1 && !l.sequence_parallel) {
      t_send_gather = 2 * v * tp_pass_s;
      t_send += t_send_gather;
      lat_send += 2 * v * tp_pass_latency_s;
    }
  }
  // One microbatch through the busiest stage, by part.
  const double mb_mm = lps * t_layer_mm + extra_mm, mb_att = lps * t_layer_att, mb_vec = lps * t_layer_vec + extra_vec;
  const double mb_re = lps * t_re, mb_tp = lps * t_tp;
  const double t_mb = mb_mm + mb_att + mb_vec + mb_re + mb_tp + t_send;
  const double bubble_units = S > 1 ? (interleaved ? (S - 1) / v : S - 1) : 0;
  const double t_bubble = bubble_units * t_mb;

  // Data parallelism and ZeRO over the slice's data group and over the slow tier.
  const double p_stage = lps * ctx.p_layer + ctx.p_other;
  const double W = p_stage / Y * a_w, G = p_stage / Y * a_g;
  const bool zero_all = l.zero_scope == ZeroScope::all;
  // ZeRO over a group of one chip shards nothing: the stage acts as ZeRO-0 (one AllReduce of the
  // accumulated gradients, where there are replicas over the slow tier).
  const int zero = zero_stage_run(l);
  double hop_data = 0;
  for (size_t i = 0; i < sys.fast.size(); ++i)
    if (l.fast[i].data > 1) hop_data = std::max(hop_data, sys.fast[i].hop_latency_s);
  // Over the fast axes the size of each collective sets its achieved bandwidth: ZeRO-2/3 gather and
  // reduce-scatter layer by layer (FSDP's per-block units, XLA's scan over layers), so one layer's bytes;
  // ZeRO-0/1 all-reduce the whole gradient buffer in one call (Megatron-LM's contiguous buffer,
  // megatron/model/distributed.py allreduce_gradients, NVIDIA/Megatron-LM b4bc51b, March 2021).
  auto pattern = [&](double n, double bw, double hop, double share, int stage, bool fast) {
    const double w_coll = stage >= 2 ? ctx.p_layer / Y * a_w : W, g_coll = stage >= 2 ? ctx.p_layer / Y * a_g : G;
    const Comm ag = fast ? fast_pass(ctx, W * share, w_coll, n, bw, hop) : ring_pass(W * share, n, bw, hop);
    const Comm rs = fast ? fast_pass(ctx, G * share, g_coll, n, bw, hop) : ring_pass(G * share, n, bw, hop);
    Comm out;
    const double n_ag = stage == 3 ? 2 * m : stage == 2 ? 1 : 1;
    const double n_rs = stage == 3 ? m : stage == 2 ? m : 1;
    // ZeRO-0: one AllReduce = a ReduceScatter and an AllGather of the gradients. ZeRO-1: the ReduceScatter of
    // the gradients, then an AllGather of the updated weights, in the weights' dtype (Rajbhandari et al. 2020,
    // §7: ZeRO's communication analysis; Megatron-LM's distributed optimizer gathers its 16-bit parameters).
    const Comm ag_used = stage == 0 ? rs : ag;
    out.t_s = n_ag * ag_used.t_s + n_rs * rs.t_s;
    out.latency_s = n_ag * ag_used.latency_s + n_rs * rs.latency_s;
    return out;
  };
  Comm dp_fast = pattern(X_fast, gb.data, hop_data, 1, zero, true);
  Comm dp_slow;
  if (X_slow > 1)
    dp_slow = pattern(X_slow, sys.slow.bytes_per_s, sys.slow.latency_s, 1 / X_fast, zero_all ? zero : 0, false);
  const double C = dp_fast.t_s + dp_slow.t_s;
  double t_dp = 0;
  if (C > 0) {
    // What overlaps is hidden, except the compute it runs beside, which slows by overlap_slowdown.
    const double sigma = ctx.overlap_slowdown;
    auto hide = [&](double behind) {
      const double hidden = std::min(C * (1 - 1 / lps), behind);
      return C - hidden + sigma * hidden;
    };
    if (zero == 3) {
      t_dp = hide(m * lps * (t_layer_mm + t_layer_att + t_layer_vec + t_re));
    } else if (l.dp_overlap) {
      // ZeRO-0/1 reduce once, during the last microbatch's backward; ZeRO-2 reduce-scatters each
      // microbatch's gradients during its own backward and gathers the updated weights during a forward.
      const double backward = lps * (2 * g.layer_fwd_s + t_att_bwd + t_vec_bwd);
      const double forward = lps * (g.layer_fwd_s + t_att_fwd + t_vec_fwd);
      // ZeRO-1's AllGather moves the weights the optimizer has just updated, so it cannot run beside the
      // backward pass that made their gradients: like ZeRO-2's it is prefetched behind a forward pass.
      t_dp = hide(zero == 2 ? m * backward + forward : zero == 1 ? backward + forward : backward);
    } else {
      t_dp = C;
    }
  }
  const double lat_dp = C > 0 ? (dp_fast.latency_s + dp_slow.latency_s) * t_dp / C : 0;
  // The optimizer update.
  const double x_zero = zero >= 1 ? (zero_all ? X : X_fast) : 1;
  const double updated = p_stage / Y / x_zero;
  const bool adam = ctx.setup.optimizer == Optimizer::adam;
  const double a_o = bytes_of(ctx.setup.optimizer_state);
  const double per_param = 2 * a_w + a_g + (adam ? 4 * a_o : 0) + (ctx.setup.fp32_master ? 8 : 0);
  const double t_opt = updated * per_param / cal.optimizer_bytes_per_s;

  Terms t = ideal;
  auto& p = t.calibrated;
  p.t_matmul_s = m * mb_mm;
  p.t_attention_s = m * mb_att;
  p.t_vector_s = m * mb_vec;
  p.t_recompute_s = m * mb_re;
  p.t_tp_s = m * mb_tp;
  p.t_pipeline_send_s = m * t_send;
  p.t_dp_exposed_s = t_dp;
  p.t_optimizer_s = t_opt;
  p.t_latency_s = m * (lps * lat_tp + lat_send) + lat_dp;
  p.matmul_efficiency = g.layer_flops / g.layer_fwd_s / sys.chip.bf16_flops_per_s;

  // The summary terms add up to the step: nothing overlaps beyond the rules above.
  const double dp_slow_share = C > 0 ? dp_slow.t_s / C : 0;
  t.t_math_s = p.t_matmul_s + p.t_attention_s + p.t_recompute_s;
  t.t_hbm_s = p.t_vector_s + p.t_optimizer_s;
  t.t_bubble_s = t_bubble;
  const double send_gather = m * t_send_gather;  // the receive-side AllGathers run on the tensor group's links
  t.t_ici_s = p.t_tp_s + (S_slow > 1 ? send_gather : p.t_pipeline_send_s) + t_dp * (1 - dp_slow_share);
  t.t_dcn_s = (S_slow > 1 ? p.t_pipeline_send_s - send_gather : 0) + t_dp * dp_slow_share;
  t.step_s = m * t_mb + t_bubble + t_dp + t_opt;
  t.mfu = ctx.six_active_flops_per_token * ctx.batch_tokens / (chips * sys.chip.bf16_flops_per_s * t.step_s);
  // The bound: the largest part of the step.
  const double parts[] = {t.t_math_s, t.t_hbm_s, t.t_bubble_s, t.t_ici_s, t.t_dcn_s};
  const Bound bounds[] = {Bound::compute, Bound::memory, Bound::bubble, Bound::ici, Bound::dcn};
  size_t best = 0;
  for (size_t i = 1; i < 5; ++i)
    if (parts[i] > parts[best]) best = i;
  t.bound = bounds[best];

  // Memory: the schedule's microbatches in flight, ZeRO-3's working set and the collective buffers.
  const double ideal_inflight = S > 1 ? std::min(m, S) : 1;
  double inflight = ideal_inflight;
  if (S > 1) {
    if (l.schedule == Schedule::gpipe) inflight = m;
    else if (interleaved) inflight = std::min(m, S) * (1 + (S - 1) / (S * v));
  }
  t.memory.activations = ideal.memory.activations * inflight / ideal_inflight;
  // The materialized kernel with nothing rerun keeps what its backward reads of every score element:
  // the softmax output (a), the dropout mask (1) and the dropout output (a) (Korthikanti et al. 2022,
  // eq. 1's 5as/h term at a = 2). A flash kernel keeps none; selective recompute reruns them.
  if (l.attention == AttentionKernel::materialized && l.saved.recompute == Remat::none)
    t.memory.activations += lps * b * heads_per_chip * s * (2 * a + 1) * inflight;
  // Without sequence parallelism a tensor rank keeps the [tokens, D]-shaped tensors of the rule whole: the
  // ideal memory's 1/Y of them made whole.
  if (Y > 1 && !l.sequence_parallel) {
    double d_kept = 0;
    if (l.saved.name == "input") d_kept = ctx.d_input;
    else if (l.saved.name == "matmuls") d_kept = ctx.d_matmuls;
    else if (l.saved.name == "all") d_kept = ctx.d_all;
    else {
      if (ctx.d_rule_text != l.saved.rule) ctx.d_rule = parse_saved_rule(l.saved.rule).d, ctx.d_rule_text = l.saved.rule;
      d_kept = ctx.d_rule;
    }
    t.memory.activations += d_kept * D * a * lps * b * inflight * (1 - 1 / Y);
  }
  const double x_zero_mem = zero_all ? X : X_fast;
  t.memory.working = (zero == 3 && x_zero_mem > 1 ? 2 * ctx.p_layer / Y * a_w : 0) + 2 * 25e6;
  // What the allocator holds beyond what is live (see allocator_fragmentation), its own part.
  const double live = t.memory.params + t.memory.grads + t.memory.optimizer + t.memory.master + t.memory.activations +
                      t.memory.working;
  const double frag = ctx.allocator_fragmentation;
  t.memory.reserve = live * frag / (1 - frag);
  t.memory.total = t.memory.params + t.memory.grads + t.memory.optimizer + t.memory.master + t.memory.activations +
                   t.memory.working + t.memory.reserve;
  return t;
}

}  // namespace scaling
