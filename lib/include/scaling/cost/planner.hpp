#pragma once
// The parallelism planner (`scaling plan`): for a model, a machine and a global batch, every layout of
// §5's strategies — data/FSDP degree × tensor degree × pipeline degree, each mapped onto the machine's
// physical axes, × gradient-accumulation microbatches × a rule for the activations kept for the backward
// pass × a ZeRO stage — with its memory per chip and its step time, and the fastest that fit.
//
// The machine: chips in fast groups — a TPU slice's ICI axes, or a GPU node's NVLink domain as one
// axis — and `slow_groups` such groups over the slow network (pods over DCN, nodes over InfiniBand).
// Each fast axis of size n is split as n = d·t·p among the data, tensor and pipeline groups; the slow
// axis as d·p (tensor parallelism never crosses the slow network). A group spans the axes where its
// factor is above 1.
//
// The exact cost model (CostModel::exact), per training step, per chip. Letters: B global batch (tokens),
// X = X_fast·X_slow data degree, Y tensor degree, S pipeline degree, m microbatches, b = B/(X·m) tokens
// per microbatch per data replica, L layers of which the busiest stage holds ⌈L/S⌉ (with the embedding
// and unembedding: a bound, exact for S = 1), P_s the parameters that stage holds. Every memory and
// communication term comes from the training library (cost/training.hpp); the planner adds the mapping
// onto links, the HBM roofline and the schedule.
//   Compute (§4.1, §5):    t_math = (6·N_active + remat extra)·B · (S·⌈L/S⌉/L) / (chips · C)
//   HBM (§1, the roofline): t_hbm = m · (3 + forward reruns) · (weight bytes of P_s)/Y / W_hbm
//   Bubble (§5.1.5):       t_bubble = f/(1 − f) · max(t_math, t_hbm), f = (S − 1)/(m + S − 1)
//   ICI: each group's collectives over the axes it spans, time = exact ring bytes ((n − 1)/n, training.hpp)
//   over Σ W_axis / k (an axis shared by k groups gives each 1/k of its links); groups run concurrently (max):
//     data — the stage's weights as one §5 layer (2·D·F_s = P_s): one AllGather = FSDP's comm_x_fwd; ZeRO-3
//       3m of them per step (AllGather forward and backward, ReduceScatter of the gradients, every
//       microbatch), ZeRO-2 m + 1, ZeRO-0/1 2 (one AllReduce, or ReduceScatter + AllGather);
//     tensor — two blocks per layer (attention, MLP), each §5's TP comm_y forward and backward, plus the
//       forward's again when the forward is rerun;
//     pipeline — §5.1.5's activations and their gradients across a stage boundary, 1/Y per chip, one link.
//   DCN: each chip's 1/X_fast share of the stage crosses the pods — an AllReduce of its gradient once per
//     step when ZeRO shards within the slice only, or the ZeRO stage's own pattern when it shards over every
//     replica (zero_all) — and the pipeline sends that cross pods.
//   step = max(max(t_math, t_hbm) + t_bubble, t_ici, t_dcn); the bound is the network when a network term
//   is the maximum, otherwise the largest of compute, memory (HBM bandwidth) and bubble.
// Memory per chip: training_memory's weights, gradients, optimizer state and master copy for P_s/Y,
// sharded by zero_memory_per_device over the ZeRO group (X_fast, or X with zero_all), plus the rule's saved
// activations of ⌈L/S⌉ layers for min(m, S) microbatches in flight (1 without a pipeline), sharded over Y.
// Left out: the layer ZeRO-3 gathers for the moment it is used, collective and workspace buffers, and the
// per-step overheads of real kernels — so the step is a lower bound and the MFU an upper one.
//
// The book's model (CostModel::book, §5.1.4) restricts the space to FSDP × TP on one slice: X·Y = N with
// X ≥ 1, Y dividing the heads, M_X and M_Y the book's axis counts (M_X + M_Y = the slice's axes, M_Y = 1
// when both are sharded), per layer T_math = 4BDF/(N·C), T_comms = 4DF/(Y·W·M_X) + 4BD/(X·W·M_Y) summed,
// training = 3 × forward, one microbatch, ZeRO-3, the first saved rule (memory only); ties on step time
// (every compute-bound layout) go to less memory, then less communication. Its MFU counts the book's FLOPs.
//
// Both models treat sequence (context) parallelism as data parallelism (§5.1.1): the data degree may
// exceed the number of sequences in the batch. A list (--top K) shows each combination of degrees once, at
// its best mapping onto the axes.
#include <cstdint>
#include <string>
#include <vector>

#include "scaling/hardware/chip.hpp"
#include "scaling/cost/training.hpp"
#include "scaling/model/transformer.hpp"

namespace scaling {

struct PlanHardware {
  std::string name;                      // "TPU v5p 16x20x28 × 8 pods"
  double flops_per_s = 0;                // peak bf16 per chip
  double hbm_bytes = 0, hbm_bytes_per_s = 0;
  std::vector<int> fast_axes;            // chips per fast axis (ICI axes, or one NVLink axis)
  std::vector<double> fast_bytes_per_s;  // per axis: a chip's bidirectional bandwidth along it
  int slow_groups = 1;                   // pods over DCN, or nodes over InfiniBand
  double slow_bytes_per_s = 0;           // per chip over the slow network (one direction)
  std::string fast_name = "ICI", slow_name = "DCN";
};
// A TPU slice `shape` of `c`, `pods` of them over DCN (per chip: the host's DCN bandwidth / chips per host).
PlanHardware tpu_pods(const Chip& c, const std::vector<int>& shape, int pods);
// `nodes` of `gpus_per_node` GPUs: NVLink as one fast axis of `nvlink_bytes_per_s` per GPU, InfiniBand
// at `ib_bytes_per_s` per GPU between nodes.
PlanHardware gpu_cluster(const Chip& c, int gpus_per_node, int nodes, double nvlink_bytes_per_s,
                         double ib_bytes_per_s);

enum class CostModel { exact, book };
enum class Bound { compute, memory, bubble, ici, dcn };
const char* to_string(Bound b);

// A rule for what each layer keeps for the backward pass: the elements per token (a sum of terms in D, F,
// NH, KH, as the book writes it: notation/saved_rule.hpp) and what the backward pass recomputes.
struct PlanRule {
  std::string rule;  // "D", "2D+2F+NH+2KH", …
  Remat recompute;
};
// The default set: only each layer's input (the forward pass rerun), the outputs of the big matmuls
// (attention rerun), and everything (nothing rerun).
std::vector<PlanRule> default_saved_rules();

struct PlanRequest {
  TransformerConfig model;
  PlanHardware hw;
  double batch_tokens = 0;
  double seq_len = 4096;  // the context of the attention a rematerialisation reruns
  std::vector<PlanRule> saved_rules = default_saved_rules();
  TrainingSetup setup;  // dtypes, optimizer and master copy (its `saved` is ignored: the rules above vary it)
  std::vector<int> zero_stages{0, 1, 2, 3};
  int max_microbatches = 256;  // powers of two up to this (and up to B/X tokens)
  int max_pipeline = 0;        // the largest pipeline degree to try; 0: any (up to the layers)
  CostModel cost_model = CostModel::exact;
  int top_k = 1;
};

struct AxisRoles {
  int data = 1, tensor = 1, pipeline = 1;
};

struct PlanLayout {
  int fsdp = 1, tp = 1, pipeline = 1, microbatches = 1, zero = 3;
  int fsdp_slow = 1, pipeline_slow = 1;  // the slow axis' share of fsdp and pipeline
  bool zero_all = false;                 // ZeRO shards over every data replica, across the slow network too
  double m_x = 0, m_y = 0;               // the book model's axis counts M_X, M_Y (0 in the exact model)
  std::vector<AxisRoles> axes;           // per fast axis
  int saved = 0;                         // index into PlanRequest::saved_rules
  double step_s = 0, bytes_per_chip = 0;
  double t_math_s = 0, t_hbm_s = 0, t_bubble_s = 0, t_ici_s = 0, t_dcn_s = 0;
  double mfu = 0;  // 6·N_active·B / (chips · C · step)
  Bound bound = Bound::compute;
};

struct PlanResult {
  std::uint64_t configs_evaluated = 0;
  std::uint64_t configs_fit = 0;
  std::vector<PlanLayout> top;  // the fastest that fit, best first (at most top_k)
};

// Throws std::invalid_argument naming a bad request (a batch that is not positive, an empty rule set, a
// ZeRO stage outside 0–3, the book's model asked for more than one slice, …).
PlanResult plan(const PlanRequest& r);

// One layout's terms under r.cost_model: the same arithmetic the search runs.
PlanLayout evaluate(const PlanRequest& r, const std::vector<AxisRoles>& axes, AxisRoles slow, int microbatches,
                    int saved, int zero, bool zero_all = false);

// "16=4·1·4" per axis: the data, tensor and pipeline factors of each axis, then the slow axis; for the
// book model, which maps no axes, "M_X=2 M_Y=1".
std::string describe_axes(const PlanLayout& l, const PlanHardware& hw);

}  // namespace scaling
