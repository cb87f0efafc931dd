// The collective matmuls on the virtual mesh: the hot loop is multiply_add on real numbers (FLOPs/s of
// the whole run, plain matmul check included); count-only runs at the book's sizes cost only bookkeeping.
#include <benchmark/benchmark.h>

#include "scaling/sim/collective_matmul.hpp"

using namespace scaling;

namespace {
sim::CmProblem problem(sim::CmKind kind, double B, double D, double F, sim::Direction dir) {
  sim::CmProblem p;
  p.kind = kind;
  p.mesh = sim::Topology{{2, 4}, {false, true}, sim::Direction::bi};
  p.B = B, p.D = D, p.F = F;
  p.direction = dir;
  return p;
}
}  // namespace

// FFN block on real numbers: both collective matmuls and the plain reference (4·B·D·F FLOPs each).
static void BM_FfnOnData(benchmark::State& state) {
  const double n = static_cast<double>(state.range(0));
  const auto p = problem(sim::CmKind::ffn, n, n, 2 * n, sim::Direction::bi);
  const auto in = sim::example_inputs(p);
  for (auto _ : state) {
    const auto r = sim::run(p, in);
    if (!r.correct || !*r.correct) state.SkipWithError("wrong result");
  }
  state.counters["FLOPs/s"] = benchmark::Counter(2 * 4 * p.B * p.D * p.F * static_cast<double>(state.iterations()),
                                                 benchmark::Counter::kIsRate);
}
BENCHMARK(BM_FfnOnData)->Arg(64)->Arg(256)->Unit(benchmark::kMillisecond);

// The §10 example counted and timed without data.
static void BM_AllGatherCounts(benchmark::State& state) {
  const auto p = problem(sim::CmKind::all_gather, 1024, 2048, 8192, sim::Direction::uni);
  const auto system = tpu_pods(chip("tpu-v5e"), p.mesh.shape, 1);
  for (auto _ : state) {
    const auto t = sim::times(p, sim::run(p, sim::shape_inputs(p)), system);
    benchmark::DoNotOptimize(t.overlapped_s);
  }
}
BENCHMARK(BM_AllGatherCounts)->Unit(benchmark::kMicrosecond);
BENCHMARK_MAIN();
