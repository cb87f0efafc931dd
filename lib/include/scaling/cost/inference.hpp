#pragma once
// §7.1.5–7.1.6 (and §8.2–8.3): the cost of generating one token per sequence for a batch, from the one model
// description (model/tensors.hpp, model/transformer.hpp) and the one chip description (hardware/chip.hpp).
//
//   t_kv     = B·T·kv_bytes_per_token / (N·W_hbm)     every sequence reads its whole KV cache (never compute-bound)
//   t_params = param_bytes / (N·W_hbm)                 every stored weight is read once per step
//   t_flops  = B·matmul_flops_per_token / (N·C)        2 FLOPs per active matmul weight per token, C the peak of
//                                                      the compute dtype
//   step     = t_kv + max(t_flops, t_params)           (§7.1.5, equation 4)
//
// With a System (the overload of decode_step below) the step also pays the tensor-parallel collectives
// of §7.2–7.3.2: the weights are sharded over every chip (model parallelism), so each layer gathers its
// activations before the attention projections and before the MLP, and reduce-scatters them after
// each: 4 collectives per layer, each of B·D·2 bytes (bf16 activations, as the book counts them in
// §7.3.2 and exercise 7.7). One collective over the System's axes costs
//   t_bw  = (n−1)/n · bytes / ΣW_fast  (+ (g−1)/g · bytes / W_slow when g > 1 slow groups take part)
//   t_lat = Σ over fast axes of hops·t_hop, hops = wraps ? ⌊size/2⌋ : size−1 (+ ⌊g/2⌋ slow-tier hops)
//   t     = max(t_bw, t_lat)           (§3: a collective is either bandwidth- or latency-bound)
// and the step takes them as a third roofline beside the MLP's FLOPs and weight reads (§7.3.2 compares
// the activations' ICI time with the weight-load time: sharding is free while it stays below it):
//   step  = t_kv + max(t_flops, t_params, t_comms),  t_comms = 4·L·t.
// The plain decode_step (no System) is §7.1.5's model exactly, t_comms = 0: the chapters' answers use it.
//
// with B sequences, T tokens of context each (KV entries read per sequence), N chips, the weights fully
// sharded and the KV cache fully sharded (§7.3.3). Weights, KV and compute dtypes are independent. An MoE
// pays bytes for all its parameters and FLOPs for the active ones. Everything here is a free function of
// plain numbers; invalid input (a non-positive or non-finite size) throws std::invalid_argument naming it.
#include <optional>
#include <string>
#include <vector>

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

// The raw figures the step model needs. Built from a model and a chip by decode_inputs(), or filled in
// by hand from a book's round numbers (a "30B model, 100 kB/token" quiz).
struct DecodeInputs {
  double param_bytes = 0;              // every stored parameter, in the weights dtype
  double matmul_flops_per_token = 0;   // 2 × active matmul weights (embedding lookup and norms excluded)
  double kv_bytes_per_token = 0;       // 2·L·K·H·bytes(KV dtype)
  double attention_flops_per_key = 0;  // 4·L·N·H: Q·Kᵀ and P·V per cached key (prefill; not in the step)
  double chips = 1;                    // N
  double hbm_bytes_per_chip = 0;       // capacity
  double hbm_bytes_per_s = 0;          // W_hbm, per chip
  double flops_per_s = 0;              // C, per chip, peak of the compute dtype
  double layers = 0, d_model = 0;      // L, D: the sizes of the tensor-parallel collectives (0: by hand)
};
void validate(const DecodeInputs& in);  // throws std::invalid_argument naming a non-positive or non-finite field

// From the model's tensor inventory and the chip (peak_flops_per_s of the compute dtype: throws when the
// chip has no figure for it).
DecodeInputs decode_inputs(const TransformerConfig& c, const Chip& chip, double chips, const InferenceDtypes& d);

// One decode step of `batch` sequences whose new token attends to `context` cached tokens.
struct DecodeStep {
  double batch, context;
  double kv_bytes;     // B·T·kv_bytes_per_token: read in t_kv
  double param_bytes;  // read in t_params
  double flops;        // B·matmul_flops_per_token: done in t_flops
  double t_kv_s, t_params_s, t_flops_s;
  double step_s;                 // t_kv + max(t_flops, t_params)
  double tokens_per_s;           // B / step
  double tokens_per_s_per_chip;  // B / (step·N)
  bool mlp_compute_bound;        // t_flops > t_params
  // The tensor-parallel collectives (0 without a System):
  double comms_collectives = 0;   // 4·L per step
  double comms_bytes = 0;         // B·D·2 per collective
  double comms_hops = 0;          // hops of one collective
  double t_comms_s = 0;           // all of them in one step
  bool comms_latency_bound = false;
};
DecodeStep decode_step(const DecodeInputs& in, double batch, double context);
// The same step with the per-layer collectives over `system` (every chip of it model-parallel; its chip
// count must equal in.chips, and in.layers, in.d_model must be set as decode_inputs sets them).
DecodeStep decode_step(const DecodeInputs& in, double batch, double context, const System& system);

// Which term is the largest: "kv", "params", "flops" or "comms" (ties go to the earlier name).
const char* bound(const DecodeStep& s);

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
double qps_per_chip(const DecodeStep& s, double decode_len);

// §7.3.1, §8.3: prefill of one sequence of P tokens at a model FLOPs utilisation U.
struct Prefill {
  double matmul_flops;     // P · matmul_flops_per_token (the book's 2·params·P)
  double attention_flops;  // causal: token i attends to i keys, Σ = attention_flops_per_key · P(P+1)/2
  double flops;
  double t_s;              // flops / (N·C·U)
  double t_matmul_only_s;  // matmul_flops / (N·C·U): the book's estimate
};
Prefill prefill(const DecodeInputs& in, double prompt_len, double mfu);

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
