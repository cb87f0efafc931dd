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
  r.hw.name = "test";
  r.hw.flops_per_s = mc.C;
  r.hw.hbm_bytes = mc.hbm;
  r.hw.hbm_bytes_per_s = mc.hbm_bw;
  r.hw.fast_axes = mc.axes;
  r.hw.fast_bytes_per_s = mc.bw;
  r.hw.slow_groups = mc.groups;
  r.hw.slow_bytes_per_s = mc.slow_bw;
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
      CHECK(got.top[0].step_s == doctest::Approx(want.step).epsilon(1e-12));
      CHECK(got.top[0].bytes_per_chip == doctest::Approx(want.bytes).epsilon(1e-12));
      for (size_t k = 1; k < got.top.size(); ++k) CHECK(got.top[k - 1].step_s <= got.top[k].step_s);
      for (const auto& l : got.top) CHECK(l.bytes_per_chip <= mc.hbm);
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
    CHECK(got.top[0].step_s == doctest::Approx(want.step).epsilon(1e-12));
    for (const auto& l : got.top) CHECK(l.pipeline <= max_pp);
  }
}

TEST_CASE("planner: evaluate() gives the terms of the layout the search reports") {
  const Machine mc{{4, 4}, {1.8e11, 1.8e11}, 2, 6.25e9, 4.59e14, 4e9, 2.8e12};
  const auto r = request(mc, 65536, 2048, 16);
  const auto got = plan(r);
  REQUIRE(!got.top.empty());
  for (const auto& l : got.top) {
    const auto again =
        evaluate(r, l.axes, {l.fsdp_slow, 1, l.pipeline_slow}, l.microbatches, l.saved, l.zero, l.zero_all);
    CHECK(again.step_s == l.step_s);
    CHECK(again.bytes_per_chip == l.bytes_per_chip);
    CHECK(again.bound == l.bound);
    CHECK(l.fsdp * l.tp * l.pipeline == 32);
  }
}

TEST_CASE("planner, book model: §5.1.4's 4x4x4 example picks X = 16, Y = 4") {
  // N = 64 chips, B = 48,000 tokens, F = 32,768; D and the heads only have to admit Y = 4.
  TransformerConfig c;
  c.name = "§5.1.4";
  c.d_model = 8192, c.d_ff = 32768, c.layers = 1, c.q_heads = 64, c.kv_heads = 64, c.head_dim = 128, c.vocab = 1;
  PlanRequest r;
  r.model = c;
  r.hw = tpu_pods(chip("tpu-v5p"), {4, 4, 4}, 1);
  r.hw.hbm_bytes = 1e15;  // memory is not the question here
  r.batch_tokens = 48000;
  r.cost_model = CostModel::book;
  r.saved_rules = {{"D", Remat::block}};
  const auto out = plan(r);
  REQUIRE(!out.top.empty());
  CHECK(out.top[0].fsdp == 16);
  CHECK(out.top[0].tp == 4);
  // By hand: F·X/(N·M_X) + B/(X·M_Y) with M_X = 2, M_Y = 1 is 4096 + 3000 for X = 16, the least of the
  // divisor pairs; in seconds per layer forward that is (4·D/W)·7096, summed over forward and backward (×3).
  const double W = 1.8e11;
  CHECK(out.top[0].t_ici_s == doctest::Approx(3 * 4 * 8192 / W * (32768.0 * 16 / 128 + 48000.0 / 16)).epsilon(1e-9));
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
  CHECK_THROWS_AS(evaluate(r, {{2, 2, 1}, {1, 4, 1}}, {1, 1, 1}, 1, 0, 3), std::invalid_argument);  // 2·2·1 ≠ 2
}
