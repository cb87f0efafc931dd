#pragma once
// §5.1.5: pipeline parallelism executed on the virtual mesh. The MLP stack's layers are split into S
// stages of L/S consecutive layers, one stage per device of a one-axis mesh (a line or a ring); the batch
// is cut into M microbatches of B/M rows. The schedule is the naive fill-and-drain one (GPipe's):
//   every stage runs the forward pass of microbatches 0, 1, …, M−1, each as soon as the previous stage has
//   handed it over (a ppermute by +1 of the activations [B/M, D]); the last stage computes the loss and
//   its gradient; then every stage runs the backward passes of microbatches M−1, …, 0, each as soon as
//   the next stage has handed its gradient back (a ppermute by −1 of dIn [B/M, D]); the gradients of the
//   microbatches add up, and every stage updates its own layers once at the end.
// The data is real, so the updated weights can be compared with the unsharded step (mlp_stack.hpp).
//
// Timing: an operation lasts as long as its matmul FLOPs (a layer's forward on b rows 4·b·D·F, its
// backward 8·b·D·F: twice as much), in units of one stage's forward on one microbatch; transfers take no
// time (they move one [b, D] block one hop). The bubble is the fraction of stage-time spent idle:
//   1 − (busy time summed over stages) / (S · makespan).
//
// Two switches reproduce the book's pseudo-code of §5.1.5 as printed, to show what it computes:
//   backward_runs = false: its backward loop is `range(0, num_layers, -1)`, which is empty in Python, so
//     no gradient is computed and no weight changes;
//   linearize_at_output = true: it calls jax.vjp at `intermediates[i + 1]`, the layer's output, instead of
//     its input `intermediates[i]`; a vjp re-runs the layer from the point it is given, so both dW and dIn
//     come out evaluated at the wrong point.
#include <vector>

#include "scaling/sim/mlp_stack.hpp"
#include "scaling/sim/ppermute.hpp"

namespace scaling::sim {

struct PipelineOptions {
  int microbatches = 1;
  bool backward_runs = true;
  bool linearize_at_output = false;
};

struct PipelineOp {
  int stage, microbatch;
  bool backward;
  double start, duration;  // in units of one stage's forward pass on one microbatch
};

struct PipelineRun {
  MlpWeights updated;
  double loss = 0;
  std::vector<PipelineOp> schedule;  // in the order executed (by start time, then stage)
  double makespan = 0, busy = 0, bubble_fraction = 0;
  std::vector<double> sent_elements;  // per stage: activations forward plus gradients backward
  double total_link_elements = 0;
  int transfers = 0;
};

// Throws std::invalid_argument for a mesh that is not one axis of at least one device, unidirectional links
// (each message must go one hop, so each stage's sent count is its own), layers that the
// stages do not divide, or a batch that the microbatches do not divide.
void validate(const Topology& stages, const MlpShape& shape, const PipelineOptions& options);
PipelineRun pipeline_step(const Topology& stages, const MlpProblem& p, const Optimizer& opt, const PipelineOptions& options);

}  // namespace scaling::sim
