// One executed training step of §5's MLP stack (sim/training_step.hpp, sim/pipeline.hpp): time per step
// and the matmul FLOPs per second the simulation sustains, collectives and bookkeeping included. The
// unsharded reference step is the yardstick: the gap is the cost of routing every collective over the
// virtual mesh's links element by element.
#include <benchmark/benchmark.h>

#include "scaling/sim/pipeline.hpp"
#include "scaling/sim/training_step.hpp"

using namespace scaling;

namespace {
const sim::MlpShape kShape{4, 256, 64, 256};
const sim::Topology kMesh{{2, 4}, {true, true}, sim::Direction::bi};
double step_flops() {  // 4BDF forward + 8BDF backward per layer
  return 12.0 * static_cast<double>(kShape.batch * kShape.d_model * kShape.d_ff) * kShape.layers;
}
void count(benchmark::State& state) {
  state.counters["FLOPs/s"] =
      benchmark::Counter(step_flops() * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
}  // namespace

static void BM_ReferenceStep(benchmark::State& state) {
  const auto p = sim::example_problem(kShape, sim::InitKind::gaussian, 1);
  for (auto _ : state) benchmark::DoNotOptimize(sim::reference_step(p, sim::Optimizer{}).loss);
  count(state);
}
BENCHMARK(BM_ReferenceStep)->Unit(benchmark::kMillisecond);

static void BM_ShardedStep(benchmark::State& state) {
  const auto strategy = static_cast<sim::Strategy>(state.range(0));
  state.SetLabel(std::string(scaling::to_string(strategy)));
  const auto p = sim::example_problem(kShape, sim::InitKind::gaussian, 1);
  const auto layout = sim::layout_for(strategy, kMesh);
  for (auto _ : state) benchmark::DoNotOptimize(sim::sharded_step(kMesh, layout, p, sim::Optimizer{}).loss);
  count(state);
}
BENCHMARK(BM_ShardedStep)->DenseRange(0, 3)->Unit(benchmark::kMillisecond);

static void BM_PipelineStep(benchmark::State& state) {
  const auto p = sim::example_problem(kShape, sim::InitKind::gaussian, 1);
  const sim::Topology line{{4}, {false}, sim::Direction::bi};
  for (auto _ : state)
    benchmark::DoNotOptimize(sim::pipeline_step(line, p, sim::Optimizer{}, sim::PipelineOptions{static_cast<int>(state.range(0))}).loss);
  count(state);
}
BENCHMARK(BM_PipelineStep)->Arg(1)->Arg(8)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
