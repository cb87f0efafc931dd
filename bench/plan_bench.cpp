// Speed of the parallelism planner (`scaling plan`): layouts evaluated per second on one core (ideal and
// calibrated models; the rates are per CPU second), the time of issue 17's 70B-on-8,192-H100s plan, and the
// time of an exhaustive plan of LLaMA-3.1 405B over one to eight TPU v5p pods (16x20x28 each) at a
// 16M-token batch, ideal and — over the whole calibrated space `scaling plan` searches, with and without
// the floor that prunes it (planner.hpp) — calibrated.
#include <benchmark/benchmark.h>

#include <cstdint>

#include "scaling/cost/planner.hpp"
#include "scaling/model/presets.hpp"

using namespace scaling;

namespace {
PlanRequest request(const char* model_key, int pods, double batch_tokens) {
  PlanRequest r;
  r.model = model(model_key);
  r.system = tpu_pods(chip("tpu-v5p"), {16, 20, 28}, pods);
  r.batch_tokens = batch_tokens;
  r.top_k = 10;
  return r;
}

// The calibrated search as `scaling plan` runs it without switch flags: sequence parallelism, every
// interleaving and both overlaps searched too.
void search_everything(PlanRequest& r) {
  r.cost_model = CostModel::calibrated;
  r.search_switches = r.search_tp_overlap = r.search_dp_overlap = true;
}

// Runs the search once per iteration and reports layouts per second; `fit_only` counts only the layouts
// that fit (the ones the calibrated model times), and `total` also reports one search's count.
void time_plan(benchmark::State& state, const PlanRequest& r, bool fit_only = false, bool total = false) {
  double layouts = 0, last = 0;
  std::uint64_t timed = 0;
  for (auto _ : state) {
    const auto out = plan(r);
    timed = out.configs_timed;
    benchmark::DoNotOptimize(out.top.data());
    last = static_cast<double>(fit_only ? out.configs_fit : out.configs_evaluated);
    layouts += last;
  }
  if (total) state.counters["layouts"] = last;
  if (r.cost_model == CostModel::calibrated) state.counters["timed"] = static_cast<double>(timed);
  state.counters["layouts/s"] = benchmark::Counter(layouts, benchmark::Counter::kIsRate);
}
}  // namespace

// Layouts per second: LLaMA-3 70B on one v5p pod with the §6 batch of 4M tokens.
static void BM_LayoutsPerSecond(benchmark::State& state) {
  const auto r = request("llama3-70b", 1, 4 * 1024 * 1024);
  time_plan(state, r);
}
BENCHMARK(BM_LayoutsPerSecond)->Unit(benchmark::kMillisecond);

// The same search under the calibrated model (achieved GEMM rates by shape, exposed collectives,
// schedules: cost/calibrated.hpp). Layouts the ideal memory already rules out are skipped before timing.
static void BM_CalibratedLayoutsPerSecond(benchmark::State& state) {
  auto r = request("llama3-70b", 1, 4 * 1024 * 1024);
  r.cost_model = CostModel::calibrated;
  time_plan(state, r);
}
BENCHMARK(BM_CalibratedLayoutsPerSecond)->Unit(benchmark::kMillisecond);

// The worst case for the calibrated model: HBM so large that every layout fits and no pruning, so every
// one is timed: the calibrated model's own speed.
static void BM_CalibratedEveryLayoutTimed(benchmark::State& state) {
  auto r = request("llama3-70b", 1, 4 * 1024 * 1024);
  r.cost_model = CostModel::calibrated;
  r.system.chip.hbm_bytes = 1e18;
  r.prune = false;
  time_plan(state, r, /*fit_only=*/true);
}
BENCHMARK(BM_CalibratedEveryLayoutTimed)->Unit(benchmark::kMillisecond);

// Issue 17's case: LLaMA-3 70B on 8,192 H100s (1,024 nodes) at a 4M-token batch, calibrated.
static void BM_Llama70BOn8192H100(benchmark::State& state) {
  PlanRequest r;
  r.model = model("llama3-70b");
  r.system = gpu_cluster(chip("h100"), 1024);
  r.batch_tokens = 4 * 1024 * 1024;
  search_everything(r);
  r.top_k = 10;
  time_plan(state, r, /*fit_only=*/false, /*total=*/true);
}
BENCHMARK(BM_Llama70BOn8192H100)->Unit(benchmark::kMillisecond);

// The exhaustive plan of LLaMA-3.1 405B on 1…8 pods (Exercise 6.2's question), 16M tokens per step.
static void BM_Llama405BPods(benchmark::State& state) {
  const auto r = request("llama3-405b", static_cast<int>(state.range(0)), 16.0 * 1024 * 1024);
  time_plan(state, r, /*fit_only=*/false, /*total=*/true);
}
BENCHMARK(BM_Llama405BPods)->DenseRange(1, 8)->Unit(benchmark::kMillisecond);

// README's example: the 405B on 8 pods, top 5, over the whole calibrated space; argument 1 prunes (as
// `scaling plan` does), 0 times every layout that fits the ideal memory.
static void BM_Llama405BOn8PodsCalibrated(benchmark::State& state) {
  auto r = request("llama3-405b", 8, 16.0 * 1024 * 1024);
  search_everything(r);
  r.top_k = 5;
  r.prune = state.range(0) == 1;
  time_plan(state, r, /*fit_only=*/false, /*total=*/true);
}
BENCHMARK(BM_Llama405BOn8PodsCalibrated)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
