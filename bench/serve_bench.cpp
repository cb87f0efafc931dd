// Speed of `scaling serve --frontier`'s work: the decode-step model over every batch that fits.
#include <benchmark/benchmark.h>

#include "scaling/cost/frontier.hpp"
#include "scaling/cost/inference.hpp"
#include "scaling/hardware/chip.hpp"
#include "scaling/model/presets.hpp"

using namespace scaling;

// LLaMA-3.1 405B in bf16 on a v5e 16x16 (256 chips) at a context of state.range(0) tokens: every batch
// from 1 to the largest that fits (776 at 8192, 6,207 at 1024, 49,657 at 128), with the Pareto set.
static void BM_Frontier405bV5e16x16(benchmark::State& state) {
  const auto in = decode_inputs(model("llama3-405b"), chip("tpu-v5e"), 256, {});
  const double context = static_cast<double>(state.range(0));
  double points = 0;
  for (auto _ : state) {
    const auto f = frontier(in, context);
    benchmark::DoNotOptimize(f.data());
    points += static_cast<double>(f.size());
  }
  state.counters["points/s"] = benchmark::Counter(points, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Frontier405bV5e16x16)->Arg(8192)->Arg(1024)->Arg(128)->Unit(benchmark::kMicrosecond);

// Building the inputs from the tensor inventory and one step (what `scaling serve` does without --frontier).
static void BM_DecodeInputsAndStep(benchmark::State& state) {
  for (auto _ : state) {
    const auto in = decode_inputs(model("llama3-405b"), chip("tpu-v5e"), 256, {});
    benchmark::DoNotOptimize(decode_terms(in, 32, 8192).step_s);
  }
}
BENCHMARK(BM_DecodeInputsAndStep)->Unit(benchmark::kMicrosecond);

// One calibrated step of LLaMA-3-70B on an H100 node: every matmul looked up in the measured GEMM table.
static void BM_CalibratedStepH100(benchmark::State& state) {
  const auto in = decode_inputs(model("llama3-70b"), chip("h100"), 8, {});
  for (auto _ : state) benchmark::DoNotOptimize(decode_terms(in, 64, 4096, CostModel::calibrated).step_s);
}
BENCHMARK(BM_CalibratedStepH100)->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
