// Tests written to kill mutants that scripts/mutate found surviving: each pins one behaviour of lib/ to a
// value taken from outside the library (the book's rule as printed, a limit stated in an error message).
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "scaling/cost/collectives.hpp"
#include "scaling/cost/planner.hpp"
#include "scaling/hardware/chip.hpp"
#include "scaling/model/presets.hpp"

using namespace scaling;

TEST_CASE("the book's collective rules (§3.4 table) as printed: V/W, V/W, 2V/W, V/(4W), halved per extra axis") {
  const Link link{4.5e10, 9e10, 1e-9};  // a negligible latency: the bandwidth rule only
  const double v = 1e8;
  const std::vector<Axis> one{{16, true}}, two{{16, true}, {16, true}};
  CHECK(book_collective_time_s(Collective::all_gather, one, v, link) == doctest::Approx(v / 9e10).epsilon(1e-12));
  CHECK(book_collective_time_s(Collective::reduce_scatter, one, v, link) == doctest::Approx(v / 9e10).epsilon(1e-12));
  CHECK(book_collective_time_s(Collective::all_reduce, one, v, link) == doctest::Approx(2 * v / 9e10).epsilon(1e-12));
  CHECK(book_collective_time_s(Collective::all_to_all, one, v, link) == doctest::Approx(v / (4 * 9e10)).epsilon(1e-12));
  CHECK(book_collective_time_s(Collective::all_gather, two, v, link) == doctest::Approx(v / (2 * 9e10)).epsilon(1e-12));
  CHECK(book_collective_time_s(Collective::all_to_all, two, v, link) == doctest::Approx(v / (8 * 9e10)).epsilon(1e-12));
}

TEST_CASE("planner: fast axes of 1 to 2^20 chips, no more") {
  PlanRequest r;
  r.model = model("llama2-7b");
  r.system.name = "test";
  r.system.chip.bf16_flops_per_s = 1e15;
  r.system.chip.hbm_bytes = 1e11;
  r.system.chip.hbm_bytes_per_s = 1e12;
  r.batch_tokens = 1e6;
  r.system.fast = {{(1 << 20) + 1, false, 1e11, 0}};
  CHECK_THROWS_WITH_AS(plan(r), doctest::Contains("must be 1 to 2^20"), std::invalid_argument);
  r.system.fast = {{2 << 20, false, 1e11, 0}};
  CHECK_THROWS_AS(plan(r), std::invalid_argument);
}

namespace {
PlanRequest two_axis_request() {
  PlanRequest r;
  r.model = model("llama2-7b");
  r.system = tpu_pods(chip("tpu-v5p"), {4, 4}, 1);
  r.batch_tokens = 1 << 20;
  return r;
}
}  // namespace

TEST_CASE("planner: the book's cost model refuses any pipeline stage, even two") {
  auto r = two_axis_request();
  r.cost_model = CostModel::book;
  Layout l;
  l.fast = {AxisRoles{2, 1, 2}, AxisRoles{4, 1, 1}};
  CHECK_THROWS_WITH_AS(step_terms(r.model, r.system, l, {r.batch_tokens}, r.cost_model),
                       doctest::Contains("no pipeline"), std::invalid_argument);
  l.fast = {AxisRoles{4, 1, 1}, AxisRoles{4, 1, 1}};
  CHECK_NOTHROW(step_terms(r.model, r.system, l, {r.batch_tokens}, r.cost_model));
}

TEST_CASE("planner: the listed layouts are distinct in their degrees (one mapping each)") {
  auto r = two_axis_request();
  r.top_k = 30;
  const auto result = plan(r);
  REQUIRE(result.top.size() > 1);
  for (size_t i = 0; i < result.top.size(); ++i)
    for (size_t j = i + 1; j < result.top.size(); ++j) {
      const auto &a = result.top[i].layout, &b = result.top[j].layout;
      const bool same = data_degree(a) == data_degree(b) && tensor_degree(a) == tensor_degree(b) &&
                        pipeline_degree(a) == pipeline_degree(b) && a.microbatches == b.microbatches &&
                        a.zero == b.zero && a.zero_scope == b.zero_scope && a.saved.rule == b.saved.rule &&
                        a.slow.data == b.slow.data && a.slow.pipeline == b.slow.pipeline;
      CHECK_MESSAGE(!same, "layouts " << i << " and " << j << " repeat the same degrees");
    }
}

TEST_CASE("planner: an axis shared by data and pipeline parallelism splits its bandwidth, never loses it") {
  auto r = two_axis_request();
  Layout l;
  l.fast = {AxisRoles{2, 1, 2}, AxisRoles{4, 1, 1}};
  l.microbatches = 8;
  const auto shared = step_terms(r.model, r.system, l, {r.batch_tokens});
  CHECK(std::isfinite(shared.step_s));
  CHECK(std::isfinite(shared.t_ici_s));
}

#include "scaling/sim/collective_matmul.hpp"

TEST_CASE("collective matmul: the FFN run holds every shard and global array, counted by hand") {
  sim::CmProblem p;
  p.kind = sim::CmKind::ffn;
  p.mesh = sim::Topology{{2, 4}, {true, true}, sim::Direction::bi};
  p.B = 16, p.D = 8, p.F = 32;
  // Per device (b = 8, |Y| = 4): In[b, D/Y] 16, W_in[D, F/Y] 64, the hidden [b, F/Y] 64, W_out[F/Y, D] 64,
  // Out[b, D/Y] 16: 224 on each of 8 devices. Global: In 128, W_in 256, W_out 256, hidden 512, Out 128.
  CHECK(sim::held_values(p) == 8 * 224 + 1280);
}
