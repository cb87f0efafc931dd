// The parallelism planner against the brute-force enumeration of plan_brute_force.hpp (written from the
// cost model planner.hpp documents, sharing no code with the library), on small machines. Also: the book's cost model reproduces §5.1.4's
// X = 16, Y = 4 example, and bad requests are rejected.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "scaling/cost/planner.hpp"
#include "plan_brute_force.hpp"
#include "scaling/hardware/chip.hpp"

using namespace scaling;

namespace {

using testing::brute::Machine;

// A small gated Transformer: D, F, L, N, K, H, V.
constexpr testing::brute::Model kToy{1024, 4096, 6, 8, 2, 128, 32000};
TransformerConfig toy() {
  TransformerConfig c;
  c.name = "toy";
  c.d_model = kToy.D, c.d_ff = kToy.F, c.layers = kToy.L, c.q_heads = kToy.N, c.kv_heads = kToy.K;
  c.head_dim = kToy.H, c.vocab = kToy.V;
  return c;
}

PlanRequest request(const Machine& mc, double B, double T, int max_m) {
  PlanRequest r;
  r.model = toy();
  r.system.name = "test";
  r.system.chip.bf16_flops_per_s = mc.C;
  r.system.chip.hbm_bytes = mc.hbm;
  r.system.chip.hbm_bytes_per_s = mc.hbm_bw;
  for (size_t i = 0; i < mc.axes.size(); ++i) r.system.fast.push_back({mc.axes[i], false, mc.bw[i], 0});
  r.system.slow.groups = mc.groups;
  r.system.slow.bytes_per_s = mc.slow_bw;
  r.batch_tokens = B;
  r.seq_len = T;
  r.max_microbatches = max_m;
  r.top_k = 5;
  return r;
}

}  // namespace

TEST_CASE("planner: the fastest layout equals a brute-force enumeration on small machines") {
  const std::vector<Machine> machines{
      {{2, 4}, {1.8e11, 1.8e11}, 1, 0, 4.59e14, 2e9, 2.8e12},                  // a 2x4 slice, little HBM
      {{4, 4}, {1.8e11, 9e10}, 2, 6.25e9, 4.59e14, 1.5e9, 2.8e12},              // two 4x4 slices over DCN
      {{8}, {4.5e11}, 3, 5e10, 9.89e14, 8e9, 3.35e12},                          // three nodes of 8 GPUs
      {{2, 2, 4}, {1.8e11, 1.8e11, 1.8e11}, 2, 6.25e9, 4.59e14, 1e9, 2.8e12},  // memory-tight, two pods
  };
  for (const double B : {8192.0, 131072.0}) {
    for (size_t i = 0; i < machines.size(); ++i) {
      CAPTURE(i);
      CAPTURE(B);
      const auto& mc = machines[i];
      const auto want = testing::brute::plan(kToy, mc, B, 2048, 32);
      const auto got = plan(request(mc, B, 2048, 32));
      CHECK(got.configs_evaluated == want.evaluated);
      CHECK(got.configs_fit == want.fit);
      REQUIRE(want.fit > 0);
      REQUIRE(!got.top.empty());
      CHECK(got.top[0].terms.step_s == doctest::Approx(want.step).epsilon(1e-12));
      CHECK(got.top[0].terms.memory.total == doctest::Approx(want.bytes).epsilon(1e-12));
      for (size_t k = 1; k < got.top.size(); ++k) CHECK(got.top[k - 1].terms.step_s <= got.top[k].terms.step_s);
      for (const auto& l : got.top) CHECK(l.terms.memory.total <= mc.hbm);
    }
  }
}

TEST_CASE("planner: a pipeline limit matches the brute force with the same limit") {
  const Machine mc{{4, 4}, {1.8e11, 9e10}, 2, 6.25e9, 4.59e14, 1.5e9, 2.8e12};
  for (int max_pp : {1, 2}) {
    CAPTURE(max_pp);
    auto r = request(mc, 65536, 2048, 32);
    r.max_pipeline = max_pp;
    const auto got = plan(r);
    const auto want = testing::brute::plan(kToy, mc, 65536, 2048, 32, max_pp);
    CHECK(got.configs_evaluated == want.evaluated);
    REQUIRE(!got.top.empty());
    CHECK(got.top[0].terms.step_s == doctest::Approx(want.step).epsilon(1e-12));
    for (const auto& l : got.top) CHECK(pipeline_degree(l.layout) <= max_pp);
  }
}

TEST_CASE("planner: step_terms() gives the terms of the layout the search reports") {
  const Machine mc{{4, 4}, {1.8e11, 1.8e11}, 2, 6.25e9, 4.59e14, 4e9, 2.8e12};
  auto r = request(mc, 65536, 2048, 16);
  r.top_k = 20;
  const auto got = plan(r);
  REQUIRE(got.top.size() > 1);
  for (const auto& [l, t] : got.top) {
    const auto again = step_terms(r.model, r.system, l, {r.batch_tokens, r.seq_len}, r.cost_model, r.setup);
    CHECK(again.step_s == t.step_s);
    CHECK(again.memory.total == t.memory.total);
    CHECK(again.t_math_s == t.t_math_s);
    CHECK(again.t_ici_s == t.t_ici_s);
    CHECK(again.t_dcn_s == t.t_dcn_s);
    CHECK(again.bound == t.bound);
    // The parts add up to the total the search compared with HBM.
    const auto& m = again.memory;
    CHECK(m.params + m.grads + m.optimizer + m.master + m.activations == doctest::Approx(m.total).epsilon(1e-12));
    CHECK(data_degree(l) * tensor_degree(l) * pipeline_degree(l) == 32);
    // Given only its degrees, best_placement finds a placement at least as good (it tries every one).
    const auto best = best_placement(r.model, r.system, data_degree(l), tensor_degree(l), pipeline_degree(l), l,
                                     {r.batch_tokens, r.seq_len}, r.cost_model, r.setup);
    CHECK(best.terms.step_s <= t.step_s);
  }
}

TEST_CASE("planner, book model: §5.1.4's 4x4x4 example picks X = 16, Y = 4") {
  // N = 64 chips, B = 48,000 tokens, F = 32,768; D and the heads only have to admit Y = 4.
  TransformerConfig c;
  c.name = "§5.1.4";
  c.d_model = 8192, c.d_ff = 32768, c.layers = 1, c.q_heads = 64, c.kv_heads = 64, c.head_dim = 128, c.vocab = 1;
  PlanRequest r;
  r.model = c;
  r.system = tpu_pods(chip("tpu-v5p"), {4, 4, 4}, 1);
  r.system.chip.hbm_bytes = 1e15;  // memory is not the question here
  r.batch_tokens = 48000;
  r.cost_model = CostModel::book;
  r.saved_rules = {{"D", Remat::block}};
  const auto out = plan(r);
  REQUIRE(!out.top.empty());
  CHECK(data_degree(out.top[0].layout) == 16);
  CHECK(tensor_degree(out.top[0].layout) == 4);
  // By hand: F·X/(N·M_X) + B/(X·M_Y) with M_X = 2, M_Y = 1 is 4096 + 3000 for X = 16, the least of the
  // divisor pairs; in seconds per layer forward that is (4·D/W)·7096, summed over forward and backward (×3).
  const double W = 1.8e11;
  CHECK(out.top[0].terms.t_ici_s == doctest::Approx(3 * 4 * 8192 / W * (32768.0 * 16 / 128 + 48000.0 / 16)).epsilon(1e-9));
  CHECK(out.configs_evaluated == 7);  // Y = 1, 2, …, 64
}

TEST_CASE("planner: bad requests are rejected with the value named") {
  const Machine mc{{2, 4}, {1.8e11, 1.8e11}, 1, 0, 4.59e14, 2e9, 2.8e12};
  auto r = request(mc, 8192, 2048, 8);
  r.batch_tokens = 0;
  CHECK_THROWS_WITH_AS(plan(r), doctest::Contains("batch"), std::invalid_argument);
  r = request(mc, 8192, 2048, 8);
  r.zero_stages = {4};
  CHECK_THROWS_WITH_AS(plan(r), doctest::Contains("ZeRO stage 4"), std::invalid_argument);
  r = request(mc, 8192, 2048, 8);
  r.saved_rules.clear();
  CHECK_THROWS_AS(plan(r), std::invalid_argument);
  r = request(mc, 8192, 2048, 8);
  r.top_k = 0;
  CHECK_THROWS_AS(plan(r), std::invalid_argument);
  const Machine two{{2, 4}, {1.8e11, 1.8e11}, 2, 6.25e9, 4.59e14, 2e9, 2.8e12};
  r = request(two, 8192, 2048, 8);
  r.cost_model = CostModel::book;
  CHECK_THROWS_WITH_AS(plan(r), doctest::Contains("one slice"), std::invalid_argument);
  r = request(mc, 8192, 2048, 8);
  Layout bad;
  bad.fast = {{2, 2, 1}, {1, 4, 1}};  // 2·2·1 ≠ 2
  CHECK_THROWS_WITH_AS(step_terms(r.model, r.system, bad, {8192}), doctest::Contains("axis 0"), std::invalid_argument);
  bad.fast = {{2, 1, 1}, {1, 4, 1}};
  bad.microbatches = 0;
  CHECK_THROWS_WITH_AS(step_terms(r.model, r.system, bad, {8192}), doctest::Contains("microbatches"), std::invalid_argument);
  bad.microbatches = 1;
  bad.zero = 5;
  CHECK_THROWS_WITH_AS(step_terms(r.model, r.system, bad, {8192}), doctest::Contains("ZeRO stage 5"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(best_placement(r.model, r.system, 3, 1, 1, Layout{}, {8192}), doctest::Contains("must equal the 8 chips"),
                       std::invalid_argument);
}

TEST_CASE("planner: a machine whose chips overflow an int, or with 7 fast axes, is refused naming the options") {
  // 2^20 × 2^20 chips on two axes: every degree derived from them would wrap as an int.
  const Machine huge{{1 << 20, 1 << 20}, {1.8e11, 1.8e11}, 1, 0, 4.59e14, 1.5e9, 2.8e12};
  CHECK_THROWS_WITH_AS(plan(request(huge, 65536, 2048, 32)),
                       "--slice/--nodes/--pods: the machine has 1,099,511,627,776 chips; the planner takes at most "
                       "1,073,741,824",
                       std::invalid_argument);
  const Machine seven{{2, 2, 2, 2, 2, 2, 2}, {1e11, 1e11, 1e11, 1e11, 1e11, 1e11, 1e11}, 1, 0, 4.59e14, 1.5e9, 2.8e12};
  CHECK_THROWS_WITH_AS(plan(request(seven, 65536, 2048, 32)),
                       "--slice/--nodes: the machine needs 1 to 6 fast axes, each with a bandwidth, not 7",
                       std::invalid_argument);
}
