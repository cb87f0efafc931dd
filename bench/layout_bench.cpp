// Tiled layouts (§9.2.2): every element's offset for `scaling layout --grid`, on a 1024 x 1024 bf16 array
// in the TPU's (8, 128)(2, 1) tiles (one million offsets per iteration).
#include <benchmark/benchmark.h>

#include "scaling/notation/hlo_shape.hpp"
#include "scaling/notation/tiled_layout.hpp"

using namespace scaling;

static void BM_OffsetGrid1024(benchmark::State& state) {
  const auto shape = hlo::parse_shape("bf16[1024,1024]{1,0:T(8,128)(2,1)}");
  for (auto _ : state) {
    const hlo::OffsetMap map(shape);
    const auto offsets = map.all();
    benchmark::DoNotOptimize(offsets.data());
  }
  state.counters["offsets/s"] = benchmark::Counter(1024.0 * 1024 * static_cast<double>(state.iterations()),
                                                   benchmark::Counter::kIsRate);
}
BENCHMARK(BM_OffsetGrid1024)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
