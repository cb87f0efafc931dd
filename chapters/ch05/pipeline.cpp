// Chapter 5, §5.1.5: the naive pipeline, executed (sim/pipeline.hpp). The book's pseudo-code runs the
// layers on successive devices, then backpropagates with jax.vjp and an SGD update. As printed it does not
// do that; the corrected schedule is run on the virtual mesh and gives the unsharded step's weights.
//
// Setup (ours where the book leaves it open): four devices on a line, one layer per device (the code's
// num_layers = len(jax.devices())); the book's batch of 32; §5's MLP block as the layer (D = 8, F = 16:
// small so that, with whole-number data, every sum is exact and "the same weights" means bit for bit);
// the loss ½·Σ(Out − Target)² where the code makes one up (mean(x²)); SGD with learning rate 1/64 (the
// code's 0.01 is not a power of two, which would add a rounding that has nothing to do with the schedule).
// Time is counted in matmul FLOPs: a layer's backward pass costs twice its forward pass.
#include <stdexcept>
#include <string>
#include <vector>

#include "exercise.hpp"
#include "scaling/base/format.hpp"
#include "scaling/sim/pipeline.hpp"

using workbook::exact;
using workbook::Finding;
using workbook::Severity;
using workbook::TimelineBar;

static auto& chapter = workbook::define_chapter(5, "ch05", "How to Parallelize a Transformer for Training");

namespace {

namespace sim = scaling::sim;

constexpr int kStages = 4;
constexpr double kBytesPerElement = 2;  // bf16

sim::Topology stages(int n) { return {{n}, {false}, sim::Direction::bi}; }
sim::MlpShape pipeline_shape() { return {kStages, 32, 8, 16}; }
sim::Optimizer sgd() { return {sim::OptimizerKind::sgd, 1.0 / 64}; }

// len(range(start, stop, step)) in Python: how many of start, start + step, … come strictly before stop.
long long python_range_length(long long start, long long stop, long long step) {
  if (step > 0) return start < stop ? (stop - start + step - 1) / step : 0;
  return start > stop ? (start - stop + (-step) - 1) / (-step) : 0;
}

const Finding kEmptyRange{
    "pipeline-empty-backward-loop", Severity::slip, "the backward loop range(0, num_layers, -1) never runs",
    "§5.1.5's pseudo-code walks back through the layers with `for i in range(0, num_layers, -1)`. A Python range "
    "with a negative step counts down from its start and stops before its end, so from 0 down to num_layers it "
    "is empty: no vjp, no gradient sent back, no weight updated. Counting down from the last layer needs "
    "range(num_layers - 1, -1, -1). The prose conclusions drawn from the code (TPU 0 idles, the bubble) do not "
    "depend on it, so it is a slip in the code, not in a conclusion."};

const Finding kVjpAtOutput{
    "pipeline-vjp-at-output", Severity::slip, "jax.vjp taken at the layer's output, intermediates[i + 1]",
    "The forward loop stores the first input as intermediates[0] and layer i's output as intermediates[i + 1]; the "
    "backward loop then linearises layer i at intermediates[i + 1], its output, instead of intermediates[i], its "
    "input. jax.vjp evaluates the layer at the point it is given, so dW (and, for a nonlinear layer, dx) come out "
    "at the wrong point: even with the range fixed, the update is not the gradient step. Two smaller slips follow "
    "in the same loop: `weights[i] = …` assigns into a jax.Array, which JAX arrays do not allow (it needs "
    "weights.at[i].set(…) or a list), and the weights are never placed on the stages' devices (only x is moved "
    "with device_put), though step 1 of the algorithm shards them by layer."};

}  // namespace

EXERCISE("ch5.pipeline-code", "Naive pipeline pseudo-code") {
  ex.section("§5.1.5");
  const auto shape = pipeline_shape();
  const auto problem = sim::example_problem(shape, sim::InitKind::integers, 5);
  const auto reference = sim::reference_step(problem, sgd());
  const int L = shape.layers;

  // The code as printed: the backward loop's range.
  const double printed_iterations = static_cast<double>(python_range_length(0, L, -1));
  const double corrected_iterations = static_cast<double>(python_range_length(L - 1, -1, -1));
  ex.claim("backward_loop_iterations",
           "§5.1.5's pseudo-code backpropagates through every layer, last to first (iterations of its backward loop)",
           printed_iterations, "iterations")
      .about(corrected_iterations, exact())
      .erratum(kEmptyRange, "Here range(0, " + std::to_string(L) + ", -1) has 0 elements; range(" +
                                std::to_string(L - 1) + ", -1, -1) has " + std::to_string(L) + ".")
      .explain("what the printed loop runs: its Python range's length with num_layers = " + std::to_string(L));
  const auto as_printed = sim::pipeline_step(stages(kStages), problem, sgd(), sim::PipelineOptions{1, false, true});
  if (sim::max_abs_difference(as_printed.updated, problem.weights) != 0)
    throw std::logic_error("the printed pipeline's empty backward loop must leave the weights unchanged");

  // The loop fixed, the vjp still at the layer's output.
  const auto vjp_at_output = sim::pipeline_step(stages(kStages), problem, sgd(), sim::PipelineOptions{1, true, true});
  ex.claim("vjp_point_weight_error",
           "§5.1.5's pseudo-code updates each layer by its gradient (largest |W' − W'_exact| once its loop runs)",
           sim::max_abs_difference(vjp_at_output.updated, reference.updated), "")
      .about(0, exact())
      .erratum(kVjpAtOutput, "Executed with range(num_layers - 1, -1, -1) but the vjp at intermediates[i + 1]: the "
                             "updated weights miss the exact step's.")
      .explain("the largest difference between the weights that loop produces and the unsharded step's, on the "
               "whole-number example (its gradients are large, so the gap is large)");

  // The corrected schedule, one batch and eight microbatches.
  const auto m1 = sim::pipeline_step(stages(kStages), problem, sgd(), sim::PipelineOptions{1});
  const auto m8 = sim::pipeline_step(stages(kStages), problem, sgd(), sim::PipelineOptions{8});
  ex.answer("max_weight_diff_m1", sim::max_abs_difference(m1.updated, reference.updated), "")
      .explain("corrected schedule, no microbatching: largest |W' − W'_unsharded|; whole-number data, so 0 means "
               "bit for bit");
  ex.answer("max_weight_diff_m8", sim::max_abs_difference(m8.updated, reference.updated), "")
      .explain("corrected schedule with 8 microbatches of 4 rows, gradients summed over microbatches");
  ex.answer("bubble_m1", m1.bubble_fraction, "")
      .explain("fraction of stage-time idle in the executed schedule, 4 stages, 1 microbatch");
  ex.answer("bubble_m8", m8.bubble_fraction, "")
      .explain("the same with 8 microbatches: the fill and drain are amortised over more work");
  double stage0_busy = 0;
  for (const auto& op : m1.schedule)
    if (op.stage == 0) stage0_busy += op.duration;
  ex.claim("stage0_idle_m1", "§5.1.5: in the naive pipeline TPU 0 is idle almost all the time (its idle fraction)",
           1 - stage0_busy / m1.makespan, "")
      .above(0.5)
      .explain("stage 0 works in the first forward slot and the last backward slot only; we read 'almost always' "
               "as more than half the step");
  ex.answer("stage_bytes_sent", m1.sent_elements[1] * kBytesPerElement, "B")
      .explain("bytes a middle stage sends in one step: the [B, D] activations forward and the [B, D] gradient "
               "back, one hop each, in bf16");

  // The bubble against the number of microbatches.
  auto& s = ex.series("bubble", "microbatches M", "bubble fraction (idle stage-time)");
  for (int S : {2, 4, 8}) {
    const sim::MlpShape sh{8, 64, 8, 16};
    const auto p = sim::example_problem(sh, sim::InitKind::integers, 9);
    std::vector<double> x, y;
    for (int M : {1, 2, 4, 8, 16, 32, 64}) {
      x.push_back(M);
      y.push_back(sim::pipeline_step(stages(S), p, sgd(), sim::PipelineOptions{M}).bubble_fraction);
    }
    s.line(std::to_string(S) + " stages", x, y, workbook::Mode::both);
  }

  // The executed schedule with 4 microbatches, one lane per stage.
  const auto m4 = sim::pipeline_step(stages(kStages), problem, sgd(), sim::PipelineOptions{4});
  auto& t = ex.timeline("schedule_m4", "time (one stage's forward pass on one microbatch = 1)");
  for (int st = 0; st < kStages; ++st) {
    std::vector<TimelineBar> bars;
    for (const auto& op : m4.schedule)
      if (op.stage == st)
        bars.push_back({op.start, op.duration, "compute", std::string(op.backward ? "B" : "F").append(std::to_string(op.microbatch))});
    t.lane("stage " + std::to_string(st), bars);
  }

  // The same schedule as a table: one row per stage, one column per unit of time.
  std::vector<std::string> columns{"stage"};
  for (int u = 0; u < static_cast<int>(m4.makespan); ++u) columns.push_back(std::to_string(u));
  auto& grid = ex.table("schedule_m4_slots", columns);
  for (int st = 0; st < kStages; ++st) {
    std::vector<std::string> cells(columns.size(), "·");
    cells[0] = std::to_string(st);
    for (const auto& op : m4.schedule)
      if (op.stage == st)
        for (int u = static_cast<int>(op.start); u < static_cast<int>(op.start + op.duration); ++u)
          cells[static_cast<size_t>(u) + 1] = std::string(op.backward ? "B" : "F").append(std::to_string(op.microbatch));
    grid.row(cells);
  }

  // The book's own sizes on Gaussian data (batch 32, d_model 128, d_ff 4·128), for the record.
  auto& tab = ex.table("book_sizes", {"microbatches", "bubble", "max |W' − W'_unsharded|"});
  const sim::MlpShape book{kStages, 32, 128, 512};
  const auto gp = sim::example_problem(book, sim::InitKind::gaussian, 0);
  const auto gref = sim::reference_step(gp, sgd());
  for (int M : {1, 2, 4, 8}) {
    const auto r = sim::pipeline_step(stages(kStages), gp, sgd(), sim::PipelineOptions{M});
    tab.row({std::to_string(M), scaling::format_number(r.bubble_fraction),
             scaling::format_number(sim::max_abs_difference(r.updated, gref.updated))});
  }
}
