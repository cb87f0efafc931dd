// One wording per rule (issue 16): the cost models' positive-value checks all go through scaling::check,
// so the same rule reads the same in training, inference, inference sharding, the serving planner, chip
// overrides and collectives: "<name> = <value>: must be positive" (or "must be a finite number").
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

#include "scaling/cost/collectives.hpp"
#include "scaling/cost/inference.hpp"
#include "scaling/cost/inference_sharding.hpp"
#include "scaling/cost/serving_plan.hpp"
#include "scaling/cost/training.hpp"
#include "scaling/hardware/chip.hpp"
#include "scaling/model/presets.hpp"

using namespace scaling;

TEST_CASE("one wording per rule: every cost model refuses a non-positive value the same way") {
  CHECK_THROWS_WITH_AS(dp_min_batch_per_chip(0, 3), "alpha = 0: must be positive", std::invalid_argument);
  CHECK_THROWS_WITH_AS(dcn_min_batch_per_pod(1e15, -1), "pod DCN bandwidth = -1: must be positive",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(flops_per_dollar(-2, 1), "flops_per_s = -2: must be positive", std::invalid_argument);
  CHECK_THROWS_WITH_AS(sequences_finished_per_step(8, 0), "decode_len = 0: must be positive", std::invalid_argument);
  CHECK_THROWS_WITH_AS(model_parallel_limit(0, 8, 8.1e11, 4.5e10), "F = 0: must be positive", std::invalid_argument);
  ChipOverrides o;
  o.hbm_bytes = -1;
  CHECK_THROWS_WITH_AS(with_overrides(chip("tpu-v5e"), o), "hbm_bytes = -1: must be positive", std::invalid_argument);
  const Link link{4.5e10, 9e10, 1e-6};
  CHECK_THROWS_WITH_AS(collective_cost(Collective::all_gather, {{4, true}}, 0, link), "bytes = 0: must be positive",
                       std::invalid_argument);
  const auto in = decode_inputs(model("llama2-7b"), chip("tpu-v5e"), 8, {});
  CHECK_THROWS_WITH_AS(largest_batch_within(in, 0, 1), "context = 0: must be positive", std::invalid_argument);
  // Not finite is its own rule, the same everywhere too.
  CHECK_THROWS_WITH_AS(tp_max_degree(INFINITY, 8, 3), "alpha = inf: must be a finite number", std::invalid_argument);
}
