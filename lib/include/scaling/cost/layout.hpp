#pragma once
// A Layout: how one training step is spread over a System (hardware/system.hpp) — the question a cost
// model answers, never the answer (that is Terms, terms.hpp). Each fast axis of size n is split as
// n = data · tensor · pipeline; the slow tier as data · pipeline (tensor parallelism never crosses the
// slow network). A group spans the axes where its factor is above 1.
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "scaling/cost/training.hpp"

namespace scaling {

struct AxisRoles {
  int data = 1, tensor = 1, pipeline = 1;
};

// What each layer keeps for the backward pass: the elements per token (a sum of terms in D, F, NH, KH,
// as the book writes it: notation/saved_rule.hpp) and what the backward pass recomputes. `name` is the
// word `train`, `plan` and the report use for the rule; empty for a rule given only as its sum.
struct PlanRule {
  std::string rule;  // "D", "2D+2F+NH+2KH", …
  Remat recompute;
  std::string name = "";  // "input", "matmuls", "all"; empty for a rule given only as its sum
};
// The named rules: only each layer's input (the forward rerun), the outputs of the big matmuls (attention
// rerun: 2D + 2F + NH + 2KH, §4's inventory of what the big matmuls produce), and everything the backward
// pass reads (nothing rerun: 4D + 3F + 2NH + 2KH for a gated MLP; §4.4.2 counts every intermediate node,
// "about 20 [tokens, D] tensors", which chapter 4 keeps as the book's own count; no dropout masks). The one
// vocabulary of --saved in train and plan.
std::span<const PlanRule> saved_rules();
// By name; throws std::invalid_argument naming the text and the names.
const PlanRule& saved_rule(std::string_view name);
// --saved's one vocabulary: a name of saved_rules(), or a sum in D, F, NH, KH. A sum equal to a named
// rule's is that rule (with its recompute); any other sum is taken as saved with nothing rerun, so the
// step model counts no recompute FLOPs for it (a lower bound). Throws std::invalid_argument for neither.
PlanRule parse_plan_rule(std::string_view text);
// What a rule keeps of `model`, per layer per token: `input`, `matmuls` and `all` summed from the model's
// activation inventory (model/tensors.hpp: for a gated dense model D, 2D+2F+NH+2KH and 4D+3F+2NH+2KH, the
// texts above; a plain MLP has one input matrix and no gate, an MoE layer its experts' widths), any other
// rule its sum as written.
SavedRule saved_elements(const PlanRule& r, const TransformerConfig& model);
// parse_plan_rule for one model: a sum is that named rule when it equals the rule's sum for `model`
// (saved_elements: GPT-3's matmuls are 2D+F+NH+2KH, not the gated 2D+2F+NH+2KH); any other sum, the gated
// texts included, is taken as typed, with nothing rerun. What `train` and `plan` read --saved with.
PlanRule parse_plan_rule(std::string_view text, const TransformerConfig& model);
// The rule's sum for `model` in canonical form ("2D+F+NH+2KH" for GPT-3's matmuls): what its name means there.
std::string resolved_rule(const PlanRule& r, const TransformerConfig& model);
// The name, or the sum when the rule has none.
std::string label(const PlanRule& r);

struct System;

enum class ZeroScope {
  group,  // ZeRO shards over the data replicas of one slice or node
  all,    // over every data replica, across the slow tier too
};
const char* to_string(ZeroScope s);
// "all" or "group"; throws std::invalid_argument naming the text and the names.
ZeroScope parse_zero_scope(std::string_view text);

// The pipeline schedule (what the calibrated model times; the ideal model charges 1F1B's bubble):
// GPipe (every microbatch forward, then every backward: all m in flight), 1F1B (Narayanan et al. 2021
// §2.2.1: at most S in flight, the same bubble), interleaved 1F1B (§2.2.2: v model chunks per stage
// divide the bubble by v at v times the sends).
enum class Schedule { gpipe, one_f_one_b, interleaved };
const char* to_string(Schedule s);
// "gpipe", "1f1b", "interleaved"; throws std::invalid_argument naming the text and the names.
Schedule parse_schedule(std::string_view text);

// How the attention core runs. The flash kernels keep the scores on chip and skip the causal blocks above
// the diagonal; they differ in the rate they reach (attention_rates.hpp: published per chip, head size and
// sequence length):
//   flash         FlashAttention-2 (Dao 2023; flash-attn 2.x, and PyTorch SDPA's flash backend, which is
//                 FA2): the plain word means this generation.
//   flash1        the FlashAttention-1 generation (Dao et al. 2022; flash-attn 1.x), and as a stated proxy
//                 Triton ports of it of 2022–23 (e.g. llm-foundry's attn_impl 'triton', a copy of
//                 flash-attention's flash_attn_triton.py), for which no rate of their own was found.
//   materialized  writes the [seq, seq] scores to HBM and runs softmax (and dropout) on them as separate
//                 kernels, computing the masked half too (Megatron-LM's fused-softmax path of 2021–22).
// A chip without published flash figures (every TPU) times flash and flash1 alike, at the matmul ceiling.
enum class AttentionKernel { flash, flash1, materialized };
const char* to_string(AttentionKernel a);
// "flash", "flash1" or "materialized"; throws std::invalid_argument naming the text and the names.
AttentionKernel parse_attention_kernel(std::string_view text);

// Which tensor-parallel collectives run beside compute instead of before or after it (calibrated.hpp
// times each):
//   none      every TP collective on the critical path (plain PyTorch TP, XLA without collective matmul).
//   backward  Megatron-LM's asynchronous backward collectives (megatron/mpu/layers.py: the AllReduce on by
//             default since September 2021, merge b462d25; with sequence parallelism
//             LinearWithGradAccumulationAndAsyncCommunication, on main since May 2022): in the backward
//             pass of each column-parallel linear (QKV, MLP in) the input gradient's AllReduce — with
//             sequence parallelism its ReduceScatter — runs beside that linear's weight-gradient GEMM, and
//             with sequence parallelism the AllGather that rebuilds the linear's saved, sequence-sharded
//             input runs beside its input-gradient GEMM. The forward passes' collectives stay exposed.
//   async     a compiler's asynchronous collectives (XLA's: compute scheduled between a collective's start
//             and done cannot depend on it): every backward collective of a layer — the AllGathers of the
//             output gradients and the reductions of the input gradients — beside the layer's
//             weight-gradient GEMMs, which nothing else in the layer's backward waits for; the forward's
//             and the rerun's on the critical path (each feeds the GEMM after it: hiding those needs
//             collective matmul, `all`).
//   all       every TP collective hidden behind the matmuls as far as they last (collective matmul).
// "no", "backward", "async", "yes": the CLI's words (--tp-overlap).
enum class TpOverlap { none, backward, async, all };
const char* to_string(TpOverlap o);
// "no", "backward", "async" or "yes"; throws std::invalid_argument naming the text and the names.
TpOverlap parse_tp_overlap(std::string_view text);

struct Layout {
  std::vector<AxisRoles> fast;   // one per fast axis of the System
  AxisRoles slow;                // tensor stays 1
  int microbatches = 1;          // gradient accumulation: B is split into this many, one in flight at a time
  int zero = 3;                  // ZeRO stage 0–3 (§5.4.1)
  ZeroScope zero_scope = ZeroScope::all;
  PlanRule saved = {"D", Remat::block, "input"};
  // Read by the calibrated model only (the ideal and book models ignore them, so their answers stay the
  // chapters'): the pipeline schedule and its virtual stages v (interleaved only; the layers split
  // evenly into pipeline·v virtual stages, interleaves_evenly), sequence parallelism (Korthikanti et al. 2022 §4.2.2: each TP AllReduce becomes a
  // ReduceScatter + AllGather and the norms, dropout and residual work is split over the tensor group),
  // whether the TP collectives hide behind the matmuls, whether the data-parallel gradient reduce overlaps
  // the backward pass, and the attention kernel.
  Schedule schedule = Schedule::one_f_one_b;
  int virtual_stages = 1;
  bool sequence_parallel = false;
  TpOverlap tp_overlap = TpOverlap::none;
  bool dp_overlap = true;
  AttentionKernel attention = AttentionKernel::flash;
  // Read by the book model only (training.hpp): which reading of §5.1.4 times the layout.
  BookReading book;
};

// The bandwidth (bytes/s per chip) each group of a layout gets on the fast network: an axis shared by k
// groups gives each 1/k of its links, a group spanning several axes adds them; a pipeline send crosses one
// link one way, so its figure is the slowest such axis' share halved. 0 for a trivial group.
struct GroupBandwidths {
  double data = 0, tensor = 0, pipeline = 0;
};
GroupBandwidths group_bandwidths(const System& s, const AxisRoles* axes);

// Whether the interleaved schedule can give each of the S pipeline stages v virtual stages of equal
// size: the L layers split into S·v chunks of whole layers, where the embedding and the loss may each
// count as one layer's slot (v ≤ 1 is no interleaving: always true). Megatron-LM asserts exactly this
// before interleaving: num_layers, plus one with --account-for-embedding-in-pipeline-split and one with
// --account-for-loss-in-pipeline-split, divisible by the pipeline degree, and the layers per stage by
// the layers per virtual stage (NVIDIA/Megatron-LM, megatron/training/arguments.py, validate_args,
// lines 958-973 at commit d98e8a64dd). Llama 3 405B ran it with both: 126 layers + 2 over pp 16 × v
// (Dubey et al. 2024, arXiv:2407.21783, §3.3.2: one layer less on the first and on the last stage, the
// first chunk holding only the embedding and the last only the output projection and the loss).
bool interleaves_evenly(double layers, double pipeline, int virtual_stages);

// The degrees a layout implies: products over the axes.
int data_degree(const Layout& l);
int tensor_degree(const Layout& l);
int pipeline_degree(const Layout& l);
// The ZeRO stage a layout runs: a stage over a group of one chip (its scope's data replicas) shards
// nothing, so it runs as ZeRO-0 (the calibrated model times it so; the CLI says what it ignores by it).
int zero_stage_run(const Layout& l);

// Every way to place degrees data × tensor × pipeline on the system's axes (data and pipeline may use
// the slow tier, tensor may not), with the other fields of `base`, in the planner's search order (the
// last axis outermost, each axis by data then tensor factor ascending). Empty when the degrees do not
// multiply to the system's chips or cannot be placed.
std::vector<Layout> placements(const System& s, int data, int tensor, int pipeline, const Layout& base);

// "16=4·1·4 20=20·1·1 DCN 2=2·1·1": each axis' size = data·tensor·pipeline, then the slow tier's.
std::string describe_axes(const Layout& l, const System& s);

}  // namespace scaling
