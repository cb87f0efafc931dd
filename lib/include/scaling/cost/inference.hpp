#pragma once
// §7.1.5–7.1.6 (and §8.2–8.3): the cost of generating one token per sequence for a batch, from the one model
// description (model/tensors.hpp, model/transformer.hpp) and the one machine description (hardware/system.hpp:
// the chip, its links and their latencies).
//
//   t_kv     = B·T·kv_bytes_per_token / (N·W_hbm)     every sequence reads its whole KV cache (never compute-bound)
//   t_params = param_bytes / (N·W_hbm)                 every stored weight is read once per step
//   t_flops  = B·matmul_flops_per_token / (N·C)        2 FLOPs per active matmul weight per token, C the peak of
//                                                      the compute dtype
//   step     = t_kv + max(t_flops, t_params)           (§7.1.5, equation 4)
//
// The three cost models of decode_terms (cost/terms.hpp's CostModel):
//   book       §7.1.5's equation (4) above, exactly as the chapters use it: no collectives (t_comms = 0).
//   ideal      the exact roofline lower bound: every byte at the datasheet HBM rate, every FLOP (matmuls and the
//              attention's 4·L·N·H per cached key) at the peak, the §7.2 tensor-parallel collectives over the
//              System's links, and all three overlapped perfectly: step = max(t_hbm, t_math, t_comms).
//              The collectives (one rule for both models, below): every chip holds a shard of every weight,
//              so each layer sums its row-parallel matmuls' partial outputs over the chips R times, R =
//              tp_reductions_per_layer (model/transformer.hpp: 2, after the attention block and after the
//              MLP; 1 when the blocks run in parallel and are summed once), each sum an AllReduce of the batch's
//              activations, B·D·2 bytes (bf16, §7.3.2, exercise 7.7). The ideal model times an AllReduce as its
//              two halves, a ReduceScatter after the block and an AllGather before the next: 2·R·L collectives
//              per step, each costing
//                t_bw  = (n−1)/n · bytes / ΣW_fast  (+ (g−1)/g · bytes / W_slow over g > 1 slow groups)
//                t_lat = Σ over fast axes of hops·t_hop, hops = wraps ? ⌊size/2⌋ : size−1 (+ ⌊g/2⌋ slow hops)
//                t     = max(t_bw, t_lat)           (§3: bandwidth- or latency-bound)
//   calibrated what a real serving stack achieves (cost/serving_calibration.hpp holds every constant and its
//              source): each layer's matmuls timed one by one at their tensor-parallel shard's shape — from
//              the measured GEMM tables where the chip has one (H100, H200: the weight read at small batch and
//              the tensor cores' real rate at large, in one lookup), else max(FLOPs / peak, weight bytes /
//              achieved HBM rate); the KV cache read at the achieved HBM rate; two AllReduces per layer
//              (Megatron's layout) each paying a measured per-collective latency plus its bytes; nothing
//              overlapped, because each layer waits for the previous one's reduction; and the non-matmul
//              kernels (two norms, two residual adds, the MLP's activation, the rotary embedding of Q and K),
//              their bf16 bytes at the rates measured for those kernels (validation/gemm):
//                step = Σ_layers (Σ_matmuls t_gemm + t_kv_layer + t_vector_layer + R·t_allreduce) + t_unembedding.
//
// with B sequences, T tokens of context each (KV entries read per sequence), N chips, the weights fully
// sharded and the KV cache fully sharded (§7.3.3). Weights, KV and compute dtypes are independent. An MoE
// pays bytes for all its parameters and FLOPs for the active ones. Everything here is a free function of
// plain numbers; invalid input (a non-positive or non-finite size) throws std::invalid_argument naming it.
#include <optional>
#include <string>
#include <vector>

#include "scaling/cost/terms.hpp"
#include "scaling/hardware/chip.hpp"
#include "scaling/hardware/dtype.hpp"
#include "scaling/hardware/system.hpp"
#include "scaling/model/transformer.hpp"

namespace scaling {

// The three number formats of serving: stored weights, stored KV cache, and the MXU's inputs.
struct InferenceDtypes {
  Dtype weights = Dtype::bf16;  // bf16, int8 or int4 (fp8 and fp32 allowed too)
  Dtype kv = Dtype::bf16;       // bf16, int8 or int4
  Dtype compute = Dtype::bf16;  // bf16 or int8: which peak of the chip C is
};

// One matmul a token runs through, before tensor-parallel sharding: x[·, K] · W[K, N], `count` per layer.
// Column-parallel (Q, K, V, the MLP's input projections, the unembedding) splits N over the chips;
// row-parallel (the attention output and the MLP's output projection) splits K (Megatron's layout, §7.2).
struct MatmulShape {
  double k = 0, n = 0, count = 1;
  bool row_parallel = false;
};

// The model half of a decode step: what one step reads and computes, whatever machine runs it. Built from a
// model by decode_model(), or filled in by hand from a book's round numbers (a "30B model, 100 kB/token"
// quiz; then layer_matmuls stays empty and the calibrated model reads the weights as one block).
struct DecodeModel {
  double param_bytes = 0;              // every stored parameter, in the weights dtype
  double matmul_flops_per_token = 0;   // 2 × active matmul weights (embedding lookup and norms excluded)
  double kv_bytes_per_token = 0;       // 2·L·K·H·bytes(KV dtype)
  double attention_flops_per_key = 0;  // 4·L·N·H: Q·Kᵀ and P·V per cached key
  double layers = 0, d_model = 0;      // L, D: the sizes of the tensor-parallel collectives (0: by hand)
  InferenceDtypes dtypes;              // dtypes.compute picks the chip's peak
  std::vector<MatmulShape> layer_matmuls;  // one layer's (dense models; empty for MoE and by hand)
  MatmulShape unembedding;                 // k = D, n = V (0: none given)
  // The non-matmul work of one layer, per token, in bf16 activations (calibrated model; 0 by hand): the
  // widths the norms, residual adds, MLP activation and rotary embedding read and write.
  double q_width = 0, kv_width = 0, d_ff = 0;  // N·H, K·H, F
  bool gated_mlp = true, layer_norm = false;   // SiLU·gate or GeLU; LayerNorm (with bias) or RMSNorm
  // R: the tensor-parallel sums (AllReduces) one layer needs, tp_reductions_per_layer(config): 2 for
  // sequential blocks, 1 for parallel ones (by hand: 2, the usual layer).
  double tp_reductions_per_layer = 2;
};
void validate(const DecodeModel& m);  // throws std::invalid_argument naming a non-positive or non-finite field
// The step's tensor-parallel AllReduces, R·L: the one count both models time (the header's rule).
double tp_reductions_per_step(const DecodeModel& m);

// A model on a machine: the two things a decode step needs, nothing repeated (the machine is the one
// System type, hardware/system.hpp).
struct DecodeInputs : DecodeModel {
  System system;
};
void validate(const DecodeInputs& in);  // the model's fields, and the slice's totals finite

DecodeModel decode_model(const TransformerConfig& c, const InferenceDtypes& d);
DecodeInputs decode_inputs(const TransformerConfig& c, const System& system, const InferenceDtypes& d);
// `chips` of `chip` as serving_system() arranges them.
DecodeInputs decode_inputs(const TransformerConfig& c, const Chip& chip, double chips, const InferenceDtypes& d);

// `chips` chips of `chip` as one model-parallel serving machine: a TPU slice of that many chips (the allowed
// slice of exactly that size, else a line without wraparound), a GPU node (up to its size) or whole nodes
// over InfiniBand, and for a chip with neither ICI nor NVLink figures a machine without links (the book
// and ideal models need none; the collectives then throw). Throws std::invalid_argument for a chip count
// that is not a whole number ≥ 1, or GPUs past one node that are not whole nodes.
System serving_system(const Chip& chip, double chips);
// A machine of `chips` chips built from bare figures (the book's round numbers: "16 chips at 8.1e11 B/s"),
// no links. The chip's bf16 peak is `flops_per_s`: give the model dtypes.compute = bf16.
System bare_system(double chips, double hbm_bytes_per_chip, double hbm_bytes_per_s, double flops_per_s);

// Whether the System's chips are linked at all (a fast axis of more than one chip with a bandwidth): a chip
// file with neither ICI nor NVLink figures is not, and ideal and calibrated then model no collectives.
bool has_links(const System& s);

// Figures of the machine the step model uses.
double chip_count(const DecodeInputs& in);        // every chip of the System
double peak_flops_per_s(const DecodeInputs& in);  // per chip, of the compute dtype
double hbm_bytes_per_s(const DecodeInputs& in);   // per chip, datasheet

// One decode step of `batch` sequences whose new token attends to `context` cached tokens.
struct DecodeTerms {
  CostModel cost_model = CostModel::book;
  double batch = 0, context = 0, chips = 0;
  double kv_bytes = 0;     // B·T·kv_bytes_per_token: read in t_kv
  double param_bytes = 0;  // read in t_params
  double flops = 0;        // B·matmul_flops_per_token: done in t_flops
  // The book's three terms, at the rates of the cost model (book, ideal: datasheet; calibrated: achieved).
  double t_kv_s = 0, t_params_s = 0, t_flops_s = 0;
  // Terms in the vocabulary every cost model shares (terms.hpp): time on the MXU / tensor cores, on HBM, on
  // the links; the step. In `calibrated` the matmuls are timed whole (their weight read and FLOPs in one
  // measured time): t_math_s holds them, t_hbm_s the KV read alone.
  double t_math_s = 0, t_hbm_s = 0, t_comms_s = 0;
  double t_vector_s = 0;  // calibrated: the non-matmul kernels (norms, adds, activation, rotary) at measured rates
  double step_s = 0;
  double tokens_per_s = 0;           // B / step
  double tokens_per_s_per_chip = 0;  // B / (step·N)
  bool mlp_compute_bound = false;    // t_flops > t_params
  // The tensor-parallel collectives (none in `book`):
  double comms_reductions = 0;   // AllReduces per step, R·L, in both models (tp_reductions_per_step)
  double comms_collectives = 0;  // per step, as the model times them: ideal 2·R·L halves, calibrated R·L
  double comms_bytes = 0;        // B·D·2 per collective
  double comms_hops = 0;         // hops of one collective
  double comms_latency_s = 0;    // latency paid by one collective
  bool comms_latency_bound = false;
  // Memory per chip: weights and KV fully sharded (§7.3.3).
  double weight_bytes_per_chip = 0, kv_bytes_per_chip = 0, hbm_bytes_per_chip = 0;
  bool fits = false;
};
// The one serving model: `model` on `system` under `cost_model` (the header's three). Throws
// std::invalid_argument naming a non-positive batch or context, or (ideal, calibrated) links the collectives
// need and the System lacks.
DecodeTerms decode_terms(const DecodeModel& model, const System& system, double batch, double context,
                         CostModel cost_model = CostModel::book);
DecodeTerms decode_terms(const DecodeInputs& in, double batch, double context, CostModel cost_model = CostModel::book);

// Which term bounds the step, in the cost model's own terms (ties go to the earlier name): book, the largest
// of "kv", "params", "flops"; ideal, of the overlapped "hbm", "flops", "comms"; calibrated, the largest
// addend: "matmuls", "kv" or "comms".
const char* bound(const DecodeTerms& s);

// §7.1.5's lower bound ("Theoretical Min Step Time", memory alone): (B·T·kv + param bytes) / (N·W_hbm),
// and its tokens/s B / that.
double min_step_s(const DecodeInputs& in, double batch, double context);

// §7.1.3, §8.2: the batch above which the MLP is compute-bound, t_flops = t_params:
// B* = param_bytes·C / (matmul_flops_per_token·W_hbm), independent of N. For a dense bf16 model this is
// the chip's intensity C/W (240 on a v5e); int8 weights with bf16 FLOPs halve it.
double critical_batch(const DecodeInputs& in);

// §7.1.6: memory of weights and KV on the slice.
double kv_bytes(const DecodeInputs& in, double batch, double context);  // B·T·kv_bytes_per_token
double hbm_bytes(const DecodeInputs& in);                                // N × HBM per chip
bool fits(const DecodeInputs& in, double batch, double context);         // weights + KV ≤ HBM of the slice
// The largest B with weights + B·T·kv ≤ HBM: ⌊(N·HBM − param bytes) / (T·kv)⌋, 0 when even the weights
// do not fit (an answer, not an error).
double max_batch(const DecodeInputs& in, double context);
// Fewest chips whose HBM holds the weights and `batch` sequences of `context` (batch 0: weights only):
// ⌈(param bytes + B·T·kv) / HBM per chip⌉.
double min_chips(const DecodeInputs& in, double batch, double context);

// The slice shapes a chip is offered in, smallest first: for a 2-D pod (v5e, v6e) the Cloud topologies
// 1x1, 2x2, 2x4, 4x4, 4x8, 8x8, 8x16, 16x16; for a 3-D pod (v4p, v5p) 2x2x1, 2x2x2, 2x2x4, 2x4x4, then
// multiples of whole 4x4x4 cubes doubling an axis at a time, then the whole pod; a chip without a pod (a GPU):
// 1, 2, 4 and 8 chips of one server.
std::vector<std::vector<int>> allowed_slices(const Chip& chip);
// The smallest allowed slice with at least `chips` chips; empty when none (more than a pod).
std::optional<std::vector<int>> smallest_slice(const Chip& chip, double chips);

// §8.3: requests served per second per chip when each decodes G tokens (the decode servers alone):
// tokens/s per chip / G.
double qps_per_chip(const DecodeTerms& s, double decode_len);

// §7.3.1, §8.3: prefill of one sequence of P tokens at a model FLOPs utilisation U (the book's estimate).
struct Prefill {
  double matmul_flops;     // P · matmul_flops_per_token (the book's 2·params·P)
  double attention_flops;  // causal: token i attends to i keys, Σ = attention_flops_per_key · P(P+1)/2
  double flops;
  double t_s;              // flops / (N·C·U)
  double t_matmul_only_s;  // matmul_flops / (N·C·U): the book's estimate
};
Prefill prefill(const DecodeInputs& in, double prompt_len, double mfu);

// The prefill of `batch` prompts of P tokens each under a cost model: book = prefill() at U = 1 (matmul and
// causal attention FLOPs at the peak); ideal = max(FLOPs / peak, weight bytes / datasheet HBM, collectives);
// calibrated = each matmul at M = B·P tokens from the measured GEMM tables (else the peak), the causal
// attention at the measured flash-attention rate (else the peak), and the R AllReduces of B·P·D·2 bytes per
// layer (the decode step's rule) with their latency, in sequence.
struct PrefillTerms {
  CostModel cost_model = CostModel::book;
  double t_math_s = 0, t_hbm_s = 0, t_comms_s = 0, t_vector_s = 0, step_s = 0;
};
PrefillTerms prefill_terms(const DecodeInputs& in, double batch, double prompt_len,
                           CostModel cost_model = CostModel::book);

// §8.3: disaggregated serving. A prefill server takes prefill_s per request; a decode server of batch B
// and step step_s finishes B / (step_s·G) requests per second. Prefill servers needed per decode server
// to keep both saturated: prefill_s·B / (step_s·G).
double prefill_to_decode_servers(double prefill_s, double step_s, double batch, double decode_len);

// §8.3: with prompts of P and decodes of G tokens, a batch of B finishes B/G sequences per step on average
// and frees B·(P + G)/G KV tokens per step.
double sequences_finished_per_step(double batch, double decode_len);
double kv_tokens_evicted_per_step(double batch, double prompt_len, double decode_len);

// §7.4.2: a prompt of P tokens whose first `cached` tokens are already in a prefix cache. The fraction of
// the full prefill's FLOPs still to do: matmuls (P − c)/P exactly; with causal attention the new tokens
// still attend to the cached ones, so slightly more.
double prefix_cache_matmul_fraction(double prompt_len, double cached);
double prefix_cache_flops_fraction(const DecodeInputs& in, double prompt_len, double cached);

// §8.1: peak FLOPs bought per dollar: FLOPs/s × 3600 / (USD per chip-hour).
double flops_per_dollar(double flops_per_s, double usd_per_chip_hour);

}  // namespace scaling
