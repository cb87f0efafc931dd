#pragma once
// The parallelism planner (`scaling plan`): for a model, a machine and a global batch, every layout of
// §5's strategies — data/FSDP degree × tensor degree × pipeline degree, each mapped onto the machine's
// physical axes, × gradient-accumulation microbatches × a rule for the activations kept for the backward
// pass × a ZeRO stage — with its memory per chip and its step time, and the fastest that fit.
//
// The machine is a System (hardware/system.hpp): chips in fast groups — a TPU slice's ICI axes, or a GPU
// node's NVLink domain as one axis — and slow groups over the slow network (pods over DCN, nodes over
// InfiniBand). A layout (cost/layout.hpp) splits each fast axis of size n as n = d·t·p among the data,
// tensor and pipeline groups, and the slow tier as d·p. `step_terms` below is the one training-step
// model: `scaling train` and `scaling plan` given every degree call it; the search (and so the chapters'
// planner exercises) runs the same functions, with what does not depend on the layout hoisted out of its
// loops, and a test holds every layout the search reports against step_terms.
//
// The ideal cost model (CostModel::ideal, called `exact` before), per training step, per chip. Letters: B global batch (tokens),
// X = X_fast·X_slow data degree, Y tensor degree, S pipeline degree, m microbatches, b = B/(X·m) tokens
// per microbatch per data replica, L layers of which the busiest stage holds ⌈L/S⌉ (with the embedding
// and unembedding: a bound, exact for S = 1), P_s the parameters that stage holds. Every memory and
// communication term comes from the training library (cost/training.hpp); the planner adds the mapping
// onto links, the HBM roofline and the schedule.
//   Compute (§4.1, §5):    t_math = (6·N_active + remat extra)·B · (S·⌈L/S⌉/L) / (chips · C)
//   HBM (§1, the roofline): t_hbm = m · (3 + forward reruns) · (weight bytes of P_s)/Y / W_hbm
//   Bubble (§5.1.5):       t_bubble = f/(1 − f) · max(t_math, t_hbm), f = (S − 1)/(m + S − 1)
//   ICI (the fast network: ICI, or NVLink on GPUs): each group's collectives over the axes it spans, time = exact ring bytes ((n − 1)/n, training.hpp)
//   over Σ W_axis / k (an axis shared by k groups gives each 1/k of its links); groups run concurrently (max):
//     data — the stage's weights as one §5 layer (2·D·F_s = P_s): one AllGather = FSDP's comm_x_fwd; ZeRO-3
//       3m of them per step (AllGather forward and backward, ReduceScatter of the gradients, every
//       microbatch), ZeRO-2 m + 1, ZeRO-0/1 2 (one AllReduce, or ReduceScatter + AllGather);
//     tensor — two blocks per layer (attention, MLP), each §5's TP comm_y forward and backward, plus the
//       forward's again when the forward is rerun;
//     pipeline — §5.1.5's activations and their gradients across a stage boundary, 1/Y per chip, one link.
//   DCN (the slow network: DCN, or InfiniBand between GPU nodes): each chip's 1/X_fast share of the stage crosses the pods — an AllReduce of its gradient once per
//     step when ZeRO shards within the slice only, or the ZeRO stage's own pattern when it shards over every
//     replica (zero_all) — and the pipeline sends that cross pods.
//   step = max(max(t_math, t_hbm) + t_bubble, t_ici, t_dcn); the bound is the network when a network term
//   is the maximum, otherwise the largest of compute, memory (HBM bandwidth) and bubble.
// Memory per chip: training_memory's weights, gradients, optimizer state and master copy for P_s/Y,
// sharded by zero_memory_per_device over the ZeRO group (X_fast, or X with zero_all), plus the rule's saved
// activations (saved_elements: the activation inventory's sums for the named rules) of ⌈L/S⌉ layers for
// min(m, S) microbatches in flight (1 without a pipeline), sharded over Y.
// Left out: the layer ZeRO-3 gathers for the moment it is used, collective and workspace buffers, and the
// per-step overheads of real kernels — so the step is a lower bound and the MFU an upper one.
//
// The book's model (CostModel::book, §5.1.4) restricts the space to FSDP × TP on one slice: X·Y = N with
// X ≥ 1, Y dividing the heads, M_X and M_Y the book's axis counts (M_X + M_Y = the slice's axes, M_Y = 1
// when both are sharded), per layer T_math = 4BDF/(N·C), T_comms = 4DF/(Y·W·M_X) + 4BD/(X·W·M_Y) summed,
// training = 3 × forward, one microbatch, ZeRO-3, the first saved rule (memory only); ties on step time
// (every compute-bound layout) go to less memory, then less communication. Its MFU counts the book's FLOPs.
//
// The calibrated model (CostModel::calibrated, cost/calibrated.hpp) times the same layouts as a real run
// would take them (achieved rates, exposed collectives, schedules); its memory is the ideal model's plus
// what real runs add.
//
// Both models treat sequence (context) parallelism as data parallelism (§5.1.1): the data degree may
// exceed the number of sequences in the batch. A list (--top K) shows each combination of degrees once, at
// its best mapping onto the axes.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "scaling/cost/calibrated.hpp"
#include "scaling/cost/layout.hpp"
#include "scaling/cost/terms.hpp"
#include "scaling/cost/training.hpp"
#include "scaling/hardware/system.hpp"
#include "scaling/model/transformer.hpp"

namespace scaling {

// The default set of rules the search tries: saved_rules() (input, matmuls, all).
std::vector<PlanRule> default_saved_rules();

// The rules a layout's three degrees keep, in the search and in a layout given whole (the CLI's check of
// one degree given asks the same): the tensor degree divides the query heads, the pipeline holds at most the
// layers, and the data degree is at most the batch's units — its sequences under the calibrated model, which
// it must also divide (no framework splits a sequence), else its tokens (§5's per-token bound).
inline bool degrees_keep_rules(double heads, double layers, double units, bool whole_sequences, double data,
                               double tensor, double pipeline) {
  return std::fmod(heads, tensor) == 0 && pipeline <= layers && data <= units &&
         (!whole_sequences || std::fmod(units, data) == 0);
}

// The batch of one step: B tokens, and the context of the attention a rematerialisation reruns.
struct Batch {
  double tokens = 0;
  double seq_len = 4096;
};

// The one training-step model: `layout` of `model` on `system` for one step of `batch`, under
// `cost_model`, with the dtypes, optimizer and master copy of `setup` (its `saved` is ignored: the
// layout's rule applies). Throws std::invalid_argument naming what is wrong with the layout (factors that
// do not multiply to an axis, a tensor degree that does not divide the heads, a pipeline deeper than the
// layers, microbatches that do not divide the batch, data degree × microbatches above the batch, the book model given pods or a pipeline;
// under the calibrated model a batch that is not whole sequences, a replica's microbatch that is not, and
// interleaving over uneven virtual stages (interleaves_evenly), …).
Terms step_terms(const TransformerConfig& model, const System& system, const Layout& layout, const Batch& batch,
                 CostModel cost_model = CostModel::ideal, const TrainingSetup& setup = {});

struct PlanRequest {
  TransformerConfig model;
  System system;
  double batch_tokens = 0;
  double seq_len = 4096;  // the context of the attention a rematerialisation reruns
  std::vector<PlanRule> saved_rules = default_saved_rules();
  TrainingSetup setup;  // dtypes, optimizer and master copy (its `saved` is ignored: the rules above vary it)
  std::vector<int> zero_stages{0, 1, 2, 3};
  int max_microbatches = 256;  // every count up to this (at most 2^20) that divides B (and up to B/X tokens)
  int max_pipeline = 0;        // the largest pipeline degree to try; 0: any (up to the layers)
  // Degrees the search keeps fixed (0: searched): only layouts with these data, tensor and pipeline
  // degrees are evaluated (`plan --tp 8` searches everything else).
  int fixed_data = 0, fixed_tensor = 0, fixed_pipeline = 0;
  CostModel cost_model = CostModel::ideal;
  // The calibrated model's switches every candidate takes (schedule, virtual stages, sequence
  // parallelism, overlaps, attention kernel; layout.hpp); the interleaved schedule applies where there is
  // a pipeline over which v interleaves evenly (interleaves_evenly). The ideal and book models ignore them.
  Layout switches;
  // Calibrated only, each a layout of its own in configs_evaluated (a list shows each combination of
  // degrees once, at its best switches): search_switches tries sequence parallelism on and off (where
  // there is a tensor group) and the interleaved schedule at every v ≥ 2 that interleaves_evenly allows
  // (where there is a pipeline); search_tp_overlap the TP overlap's three modes (with a tensor group);
  // search_dp_overlap the DP overlap off and on (with a data group and ZeRO 0–2, where it acts).
  bool search_switches = false;
  bool search_tp_overlap = false;
  bool search_dp_overlap = false;
  // Calibrated only: skip the layouts whose floor (calibrated_step_floor_s below) already exceeds the
  // K-th best step found so far. The list is the same with and without (the floor never exceeds the
  // step, and such a layout would be rejected anyway); only configs_timed and configs_pruned differ.
  bool prune = true;
  int top_k = 1;
};

// One layout and the terms the cost model gives it.
struct Planned {
  Layout layout;
  Terms terms;
};

struct PlanResult {
  std::uint64_t configs_evaluated = 0;  // every layout of the space the request spans
  // Ideal: the layouts that fit in HBM. Calibrated: those of the timed layouts that fit (a pruned layout
  // is never timed, so whether its calibrated memory fits is not known).
  std::uint64_t configs_fit = 0;
  std::uint64_t configs_timed = 0;   // calibrated: layouts the calibrated model timed
  std::uint64_t configs_pruned = 0;  // calibrated: layouts skipped by the floor (they fit the ideal memory)
  std::vector<Planned> top;  // the fastest that fit, best first (at most top_k), ranked by better() (terms.hpp)
};

// The pruning bound: a floor under the calibrated step of a layout, cheap enough to test before timing it.
// Per microbatch through the busiest stage (calibrated.hpp's letters; R the calibrated model's own GEMM
// rate for the shape, c its matmul ceiling):
//   t_floor = l·((1 + 2/β)·Σ_GEMMs 2·b·K·N/R + A_fwd + A_bwd + rerun) + (1 + 2/β)·2·b·D·(V/Y)/R(b, D, V/Y)
// with β the backward GEMMs' rate fraction (1 as documented), A the attention core's time (flash kernels:
// the calibrated model's own, flash_attention_times — F = 4H·b·(N_q/Y)·(s + 1)/2 at the kernel's published
// rates, or at c where none is published; materialized: every pair at c, 4H·b·(N_q/Y)·s FLOPs forward,
// twice that backward), rerun the full recompute's layer forward (GEMMs + A_fwd) or the selective one's
// A_fwd; and floor = (m + u)·t_floor, u the schedule's bubble in microbatches ((S − 1)/v interleaved,
// S − 1 for GPipe and 1F1B, 0 without a pipeline).
// Proof that floor ≤ the calibrated step, term by term against calibrated.hpp: step = m·t_mb + t_bubble +
// t_dp + t_opt with t_bubble = u·t_mb and t_dp, t_opt ≥ 0, so step ≥ (m + u)·t_mb. t_mb = l·(matmul +
// attention + vector + recompute + TP) + the stage's extras + sends, every part ≥ 0: its layer matmul
// is l·(1 + 2/β)·Σ 2bKN/R, the same sum; its attention is A_fwd + A_bwd for the flash kernels (the same function) and, for the
// materialized kernel, a roofline max(FLOPs/c, bytes/rate) ≥ the FLOP side; its recompute is the forward
// layer (GEMMs + attention + vector ≥ GEMMs + A_fwd) or attention + softmax (≥ A_fwd); the extras are the
// unembedding GEMM + loss when the last stage is the busier (or S = 1, where the embedding adds to them)
// and the embedding otherwise, which is then larger than unembedding GEMM + loss: either way ≥ the
// unembedding GEMM. Every other part (vector work, TP collectives — also when overlapped, never below
// 0 —, sends, exposed DP traffic, the optimizer) is dropped, which is why the floor is weak for
// communication-bound layouts. The floor takes 1 − 1e-9 of the sum against rounding (the model adds the
// same parts in another order). tests/test_planner_prune.cpp holds it against calibrated_terms on random
// layouts over TPU slices, pods and GPU clusters.
// Why not the ideal model as the floor: its step is not below the calibrated one for every layout. It
// charges 1F1B's bubble, (S − 1)/m of the compute, to an interleaved layout whose calibrated bubble is
// (S − 1)/(v·m): the property test finds such layouts among its random ones (65 of 1,600, every one
// interleaved). Nor is it term by term below elsewhere, so no proof covers it: its compute is 6·N_active
// FLOPs per token with the embedding table in N (the calibrated model looks the embedding up, a copy),
// and it reads the weights from HBM once per microbatch and pass, which the calibrated GEMM rates
// already contain.
struct MicrobatchFloor {
  double layer_fwd_mm_s = 0;    // one layer's four GEMMs, forward, at the calibrated rates
  double unembed_fwd_mm_s = 0;  // the unembedding GEMM, forward
  double att_fwd_s = 0, att_bwd_s = 0;  // the attention core (see above)
};
// For b tokens per microbatch per replica and tensor degree Y.
MicrobatchFloor microbatch_floor(const CalibratedContext& ctx, double b, double Y, AttentionKernel kernel);
// (m + u)·t_floor for m microbatches, l = lps layers on the busiest stage, u bubble units.
double floor_step_s(const MicrobatchFloor& fl, const CalibratedContext& ctx, double m, double lps, double bubble_units,
                    Remat recompute);
// The floor of one layout (validated as step_terms validates it).
double calibrated_step_floor_s(const CalibratedContext& ctx, const Layout& layout);

// Throws std::invalid_argument naming a bad request (a batch that is not positive, an empty rule set, a
// ZeRO stage outside 0–3, the book's model asked for more than one slice, …).
PlanResult plan(const PlanRequest& r);

// Degrees data × tensor × pipeline fixed (and `base`'s microbatches, ZeRO stage and scope and rule): every
// placement of them on the system's axes (placements(), layout.hpp) through step_terms, the best by
// better(). What `scaling plan` given every degree prints as its best and `scaling train` prints. Throws
// std::invalid_argument when the degrees do not multiply to the chips or no placement is valid (the
// message of the last placement's rejection).
Planned best_placement(const TransformerConfig& model, const System& system, int data, int tensor, int pipeline,
                       const Layout& base, const Batch& batch, CostModel cost_model = CostModel::ideal,
                       const TrainingSetup& setup = {});

// "16=4·1·4 …" as describe_axes (layout.hpp); for the book model, which maps no axes, "M_X=2 M_Y=1".
std::string describe_axes(const Planned& p, const System& s);

// The bound's name on this system: "ICI" / "NVLink" for the fast network, "DCN" / "InfiniBand" for the slow.
std::string bound_label(Bound b, const System& s);

}  // namespace scaling
