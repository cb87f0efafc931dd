#pragma once
// §4.4, §5: the cost of training a Transformer — memory (parameters, gradients, optimizer state, master
// weights, saved activations; ZeRO sharding), compute and communication per layer for each parallelism
// strategy of §5.1 (forward and backward separately, the §5.2 summary table), the bounds that follow, and
// training time at a given MFU.
//
// Letters follow §5: B = tokens in the global batch, D = d_model, F = d_ff, X = FSDP / data-parallel degree,
// Y = tensor-parallel degree, N = X·Y chips, M_X and M_Y = mesh axes each spans, C = FLOPs/s per chip,
// W = bidirectional ICI bandwidth of one link, α = C / W.
//
// Parameter counts always come from the model's tensor inventory (model/tensors.hpp): memory counts every
// stored parameter (all experts of an MoE), FLOPs only the active ones.
#include <optional>
#include <string_view>
#include <vector>

#include "scaling/hardware/chip.hpp"
#include "scaling/hardware/dtype.hpp"
#include "scaling/model/transformer.hpp"
#include "scaling/notation/saved_rule.hpp"

namespace scaling {

// ---------------------------------------------------------------------------------------------------
// Memory (§4.4.2, §5.1.1, §5.3, §5.4.1)

enum class Optimizer {
  adam,  // two moments per parameter (first and second), in the optimizer-state dtype
  sgd,   // no state
};
Optimizer parse_optimizer(std::string_view text);  // "adam" or "sgd"; throws std::invalid_argument
const char* to_string(Optimizer o);

struct TrainingSetup {
  Dtype weights = Dtype::bf16;
  std::optional<Dtype> grads = Dtype::bf16;  // nullopt: no gradient buffer (applied as produced)
  Optimizer optimizer = Optimizer::adam;
  Dtype optimizer_state = Dtype::fp32;
  bool fp32_master = false;  // an fp32 copy of the weights for the update (mixed precision)
  Dtype activations = Dtype::bf16;
  SavedRule saved{.d = 1};   // elements kept per layer per token (default: each layer's input)
};

struct TrainingMemory {
  double params = 0, grads = 0, optimizer = 0, activations = 0, total = 0;
  double master = 0;  // the fp32 master copy (0 without one)
};

// Elements the rule saves per layer per token: d·D + f·F + nh·N·H + kh·K·H.
double saved_elements_per_layer_token(const SavedRule& rule, const TransformerConfig& c);

// Memory of one training step over `batch_tokens` tokens, not sharded. Parameters, gradients, optimizer
// state and master copy count every stored parameter; activations are
// bytes(activations) × layers × batch_tokens × rule.
TrainingMemory training_memory(const TransformerConfig& c, double batch_tokens, const TrainingSetup& s);

// §4.4.2: what the backward pass recomputes — the half of a saved-activation rule that sets the step's
// FLOPs. Which tensors each rule keeps is not here: the named rules (layout.hpp's saved_rules(): input,
// matmuls, all) pair a recompute policy with what the activation inventory (model/tensors.hpp) says
// the layer saves, so `train`, `plan` and the report count one set of tensors per name.
enum class Remat {
  none,         // nothing: every intermediate was kept
  big_matmuls,  // the dot-product attention: the big matmuls' outputs were kept
  block,        // each layer's forward pass: only its input was kept
};
// Chapter 4's form of training_memory: Adam with two moments in `optimizer` dtype, no master copy, the
// activations `saved` keeps.
TrainingMemory training_memory(const TransformerConfig& c, double tokens, const SavedRule& saved,
                               Dtype params = Dtype::bf16, Dtype grads = Dtype::bf16, Dtype optimizer = Dtype::fp32,
                               Dtype activation = Dtype::bf16);
// FLOPs per token that rematerialisation adds to a training step: block remat reruns the whole forward
// pass (6N -> 8N); saving only the big matmul outputs reruns the dot-product attention.
double remat_extra_flops_per_token(const TransformerConfig& c, double context, Remat r);

// §5.1.2, §5.4.1 (ZeRO): memory per device when `devices` data-parallel devices split the batch and
// ZeRO stage `zero_stage` shards the model state: 0 = plain data parallelism (everything replicated),
// 1 = optimizer state and master copy sharded, 2 = also gradients, 3 = also parameters (FSDP).
// Activations are divided by `devices` (each holds its share of the batch). Throws for a stage outside 0–3
// or a device count that is not a positive whole number.
TrainingMemory zero_memory_per_device(const TrainingMemory& whole, double devices, int zero_stage);

// ---------------------------------------------------------------------------------------------------
// Compute and communication per layer (§5.1, the §5.2 table)
//
// The §5 layer: In[B, D] · W_in[D, F] · W_out[F, D], bf16 (2 bytes per element). "Comm bytes" are the
// table's unit: bytes a collective moves, an AllReduce counted twice (it is an AllGather plus a
// ReduceScatter), so that time = comm bytes / (W · axes). `_x` terms run over the FSDP/DP axes, `_y` over
// the tensor-parallel axes. The book drops the ring factor (n − 1)/n; the `exact` forms keep it.

enum class Strategy { dp, fsdp, tp, fsdp_tp };
const char* to_string(Strategy s);

struct MlpLayer {
  double B, D, F;
  double bytes_per_element = 2;  // bf16 weights and activations
};

struct LayerCost {
  double flops_fwd = 0, flops_bwd = 0;  // per chip
  double comm_x_fwd = 0, comm_x_bwd = 0, comm_y_fwd = 0, comm_y_bwd = 0;  // the book's table
  double comm_x_fwd_exact = 0, comm_x_bwd_exact = 0, comm_y_fwd_exact = 0, comm_y_bwd_exact = 0;
  double comm_fwd() const { return comm_x_fwd + comm_y_fwd; }
  double comm_bwd() const { return comm_x_bwd + comm_y_bwd; }
};

// `X` (for dp, fsdp, fsdp_tp) and `Y` (for tp, fsdp_tp) are the degrees; the other is ignored (taken as 1).
// The backward pass of tensor parallelism re-uses the forward AllGather of In (§5.1.3 step 5), so it moves
// 4BD/X bytes (an AllGather of dOut and a ReduceScatter of dIn), as the §5.2 table's MP row says.
LayerCost layer_cost(const MlpLayer& layer, Strategy s, double X, double Y);

// How the collectives of the two axes of FSDP + TP share time. They run on different links (X-axis and
// Y-axis links), so they can proceed at once: the comms time is the larger of the two (`concurrent`).
// The book (§5.1.4) adds them (`summed`), which is what happens if they are serialised.
enum class CommsModel { concurrent, summed };

// The book model's reading of §5.1.4 (step_terms with CostModel::book): the book's own — the two axes' comms
// summed, a step 3 × the forward pass, M_X = the slice's long axes − 1 when both groups are sharded — or,
// where a chapter takes the concurrent reading, the larger of the two axes' comms, forward + backward
// passes each overlapped on its own, and M_X, M_Y counted from the layout's placement (the axes where
// data, tensor > 1; at least 1).
struct BookReading {
  CommsModel comms = CommsModel::summed;
  bool per_pass = false;
  bool axes_from_layout = false;
};

struct LayerTime {
  double t_math_s = 0, t_x_s = 0, t_y_s = 0;
  double t_comms_s = 0;  // max or sum of t_x_s and t_y_s, per the model
  double t_s = 0;        // max(t_math_s, t_comms_s): perfect overlap of compute and comms
  bool compute_bound = false;
};
// Time of the forward pass, the backward pass or both (`pass`: "fwd", "bwd", "both") for one layer:
// t_math = flops / C, t_x = comm_x / (W · M_X), t_y = comm_y / (W · M_Y) — W the bidirectional link bandwidth.
enum class Pass { forward, backward, both };
LayerTime layer_time(const LayerCost& cost, Pass pass, double C, double W, double M_X, double M_Y,
                     CommsModel model = CommsModel::concurrent, bool exact = false);

// How many slice axes the tensor-parallel group (Y chips) and the FSDP group (the rest) span: Y fills the
// axes in order, whole axes while Y is a multiple of them, then a sub-ring of one axis; FSDP takes every
// axis with chips left over (e.g. 16x16x16 with Y = 4: M_Y = 1, M_X = 3). Throws std::invalid_argument
// when Y does not map that way (Y = 8 on 12x4x4).
struct AxisSplit {
  double m_x = 0, m_y = 0;
};
AxisSplit split_axes(const std::vector<int>& shape, double Y);

// ---------------------------------------------------------------------------------------------------
// Bounds (§5.1.1–5.1.6)

double ici_alpha(const Chip& c);  // α = C / W_ici, W_ici bidirectional per link: v5p 4.59e14 / 1.8e11 = 2550
// §5.1.1–5.1.2: DP and FSDP are compute-bound when B/X > α / n_axes.
double dp_min_batch_per_chip(double alpha, double axes);
// §5.1.3: TP is compute-bound while Y < n_axes · F / α.
double tp_max_degree(double alpha, double F, double axes);
// §5.1.4: the smallest B/N for which FSDP + TP at X_opt is compute-bound:
//   summed: 4α² / (M_X · M_Y · F) (the book's);  concurrent: α² / (M_X · M_Y · F).
double mixed_min_batch_per_chip(double alpha, double F, double M_X, double M_Y, CommsModel model);
// §5.1.4: the FSDP degree that minimises comms, X_opt = sqrt(B · M_X · N / (F · M_Y)) — the same under both
// models, because both are smallest where the two axes' times are equal.
double x_opt(double B, double N, double F, double M_X, double M_Y);
// §5.1.6: data parallelism over DCN stays compute-bound while the batch per pod exceeds C_pod / W_dcn_pod.
double dcn_min_batch_per_pod(double pod_flops_per_s, double pod_dcn_bytes_per_s);

// ---------------------------------------------------------------------------------------------------
// Pipelining (§5.1.5): L layers over `stages` devices, a batch of B tokens in `microbatches` pieces.
struct PipelineCost {
  double flops_per_stage_fwd, flops_per_stage_bwd;  // the stage's L/stages layers, whole batch
  double bytes_sent_per_stage_fwd, bytes_sent_per_stage_bwd;  // activations forward, their gradients back
  double bubble_fraction;  // idle share of a GPipe-style schedule: (stages − 1) / (microbatches + stages − 1)
};
PipelineCost pipeline_cost(const MlpLayer& layer, double layers, double stages, double microbatches);

// ---------------------------------------------------------------------------------------------------
// Training time (§5.1.2, §6)

// The 6N rule per token is six_active_flops_per_token (model/transformer.hpp).
// Wall time of `total_flops` on `chips` chips of `peak_flops_per_s` each at model-FLOPs utilisation `mfu`
// in (0, 1]; throws std::invalid_argument for anything else.
double training_time_s(double total_flops, double chips, double peak_flops_per_s, double mfu);

}  // namespace scaling
