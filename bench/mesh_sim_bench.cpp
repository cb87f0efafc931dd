// Throughput of the virtual mesh: link transfers (one message crossing one link) per second.
#include <benchmark/benchmark.h>

#include "scaling/sim/mesh_sim.hpp"
#include "scaling/hardware/topology.hpp"

using namespace scaling;

// Count-only AllGather over the 28-chip axis of a full v5p pod (8,960 devices).
static void BM_PodAllGatherCountOnly(benchmark::State& state) {
  const auto topo = sim::from_slice(make_slice("tpu-v5p", "16x20x28"));
  double transfers = 0;
  for (auto _ : state) {
    const auto r = sim::simulate(topo, {Collective::all_gather, {2}, 28.0 * 1024, true});
    benchmark::DoNotOptimize(r.max_link_elements);
    transfers += 320.0 * 28 * 27;  // 320 rings; every device's shard crosses 27 links on a ring of 28
  }
  state.counters["link_transfers/s"] = benchmark::Counter(transfers, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_PodAllGatherCountOnly)->Unit(benchmark::kMillisecond);

// Data mode: AllReduce of real arrays on a bidirectional ring.
static void BM_RingAllReduceData(benchmark::State& state) {
  const int devices = static_cast<int>(state.range(0));
  const auto topo = sim::ring(devices, sim::Direction::bi);
  const double elements = 4096.0 * devices;
  for (auto _ : state) {
    const auto r = sim::simulate(topo, {Collective::all_reduce, {0}, elements});
    if (!r.correct) state.SkipWithError("wrong result");
  }
  state.counters["elements/s"] =
      benchmark::Counter(elements * devices * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_RingAllReduceData)->Arg(8)->Arg(64)->Unit(benchmark::kMillisecond);

// AllToAll over two axes of a 16x16 torus, count-only: 65,280 routed blocks.
static void BM_TorusAllToAll(benchmark::State& state) {
  const sim::Topology topo{{16, 16}, {true, true}, sim::Direction::bi};
  for (auto _ : state) {
    const auto r = sim::simulate(topo, {Collective::all_to_all, {0, 1}, 256.0 * 256 * 4, true});
    benchmark::DoNotOptimize(r.max_link_elements);
  }
}
BENCHMARK(BM_TorusAllToAll)->Unit(benchmark::kMillisecond);

// Count-only scaling on a bidirectional ring of 10² … 10⁵ devices (README, "Limits"): time and memory
// linear in the devices. The counters are one double per directed link and phase (AllReduce: 2 phases);
// AllToAll needs none, its n² blocks are summed in closed form per axis. `counter_bytes` reports that
// memory; the fitted complexity (BigO) reports the time.
static void count_only_ring(benchmark::State& state, scaling::Collective op) {
  const int devices = static_cast<int>(state.range(0));
  const auto topo = sim::ring(devices, sim::Direction::bi);
  const double elements = op == Collective::all_to_all ? 1.0 * devices * devices : 1.0 * devices;
  for (auto _ : state) {
    const auto r = sim::simulate(topo, {op, {0}, elements, true});
    benchmark::DoNotOptimize(r.max_link_elements);
  }
  const double phases = op == Collective::all_reduce ? 2 : op == Collective::all_to_all ? 0 : 1;
  state.counters["counter_bytes"] = phases * devices * 2 * sizeof(double);
  state.SetComplexityN(devices);
}
static void BM_CountOnlyAllGather(benchmark::State& s) { count_only_ring(s, Collective::all_gather); }
static void BM_CountOnlyAllReduce(benchmark::State& s) { count_only_ring(s, Collective::all_reduce); }
static void BM_CountOnlyAllToAll(benchmark::State& s) { count_only_ring(s, Collective::all_to_all); }
BENCHMARK(BM_CountOnlyAllGather)->RangeMultiplier(10)->Range(100, 100000)->Unit(benchmark::kMillisecond)->Complexity();
BENCHMARK(BM_CountOnlyAllReduce)->RangeMultiplier(10)->Range(100, 100000)->Unit(benchmark::kMillisecond)->Complexity();
BENCHMARK(BM_CountOnlyAllToAll)->RangeMultiplier(10)->Range(100, 100000)->Unit(benchmark::kMillisecond)->Complexity();

BENCHMARK_MAIN();
