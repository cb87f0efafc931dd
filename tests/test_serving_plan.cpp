// lib/cost/serving_plan: the best serving slice under a step cap, on hand-made inputs.
#include <doctest/doctest.h>

#include <stdexcept>

#include "scaling/cost/serving_plan.hpp"
#include "scaling/hardware/chip.hpp"
#include "scaling/model/presets.hpp"

using namespace scaling;

namespace {
// A slice whose step is 1 ms of weights plus 0.1 ms of KV per sequence, compute-bound from batch 20
// (0.05 ms of FLOPs per sequence), with room for 100 sequences.
DecodeInputs toy() {
  DecodeInputs in;
  in.system = bare_system(1, 1e9 + 100 * 1e8, 1e12, 1e15);
  in.param_bytes = 1e9;               // t_params = 1 ms
  in.kv_bytes_per_token = 1e8 / 1000;  // 1000 tokens of context: 1e8 B = 0.1 ms per sequence
  in.matmul_flops_per_token = 5e10;  // 0.05 ms per sequence
  in.attention_flops_per_key = 1;
  return in;
}
}  // namespace

TEST_CASE("largest_batch_within: the last batch whose step meets the cap, bounded by HBM") {
  const auto in = toy();
  // step(B) = 0.1·B ms + max(1, 0.05·B) ms: 2 ms at B = 10, 3 ms at B = 20, 15 ms at B = 100.
  CHECK(largest_batch_within(in, 1000, 2e-3) == 10);
  CHECK(largest_batch_within(in, 1000, 2.05e-3) == 10);
  CHECK(largest_batch_within(in, 1000, 3e-3 * (1 + 1e-12)) == 20);
  CHECK(largest_batch_within(in, 1000, 1.0) == 100);      // HBM holds 100
  CHECK(largest_batch_within(in, 1000, 1.0e-3) == 0);     // one sequence already takes 1.1 ms
  CHECK_THROWS_AS(largest_batch_within(in, 0, 1e-3), std::invalid_argument);
  CHECK_THROWS_AS(largest_batch_within(in, 1000, -1), std::invalid_argument);
}

TEST_CASE("best_throughput_within: LLaMA-3 70B int8 on v5e, 20 ms") {
  const auto& c = chip("tpu-v5e");
  const InferenceDtypes d{Dtype::int8, Dtype::int8, Dtype::bf16};
  const auto best = best_throughput_within(model("llama3-70b"), c, d, 8192, 20e-3);
  REQUIRE(best);
  // Every slice that fits: none beats the choice, and within the cap.
  CHECK(best->step.step_s <= 20e-3);
  for (const auto& shape : allowed_slices(c)) {
    const auto in = decode_inputs(model("llama3-70b"), c, chips_in(shape), d);
    for (double B = 1; B <= max_batch(in, 8192); ++B) {
      const auto s = decode_terms(in, B, 8192);
      if (s.step_s <= 20e-3) CHECK(s.tokens_per_s_per_chip <= best->step.tokens_per_s_per_chip * (1 + 1e-9));
    }
  }
  // A cap below the weights' own read time on the largest slice: nothing qualifies.
  CHECK_FALSE(best_throughput_within(model("llama3-70b"), c, d, 8192, 1e-4));
  CHECK_THROWS_AS(best_throughput_within(model("llama3-70b"), c, d, 8192, 0), std::invalid_argument);
}

TEST_CASE("shortest_step: the largest slice that holds the model, batch 1") {
  const auto& c = chip("tpu-v5e");
  const InferenceDtypes d{Dtype::bf16, Dtype::bf16, Dtype::bf16};
  const auto s = shortest_step(model("llama3-70b"), c, d, 8192);
  REQUIRE(s);
  CHECK(s->chips == 256);
  CHECK(s->step.batch == 1);
  CHECK_THROWS_AS(shortest_step(model("llama3-70b"), c, d, -5), std::invalid_argument);
  // A chip whose whole pod cannot hold the weights: no slice, not a slice that does not fit.
  ChipOverrides tiny;
  tiny.hbm_bytes = 1e8;
  const Chip small = with_overrides(c, tiny);
  CHECK_FALSE(shortest_step(model("llama3-70b"), small, d, 8192));
  CHECK_FALSE(best_throughput_within(model("llama3-70b"), small, d, 8192, 1.0));
}

TEST_CASE("best_batch_within: the fastest batch on the compute-bound plateau") {
  const auto in = toy();
  // Compute-bound from batch 20: tokens/s per chip is B/(0.1·B + 0.05·B) ms = 1/0.15 per ms from there on, so
  // under a cap of 12 ms (batch 80 at most) the best batch is 20, the first on the plateau.
  CHECK(largest_batch_within(in, 1000, 12e-3 * (1 + 1e-12)) == 80);
  CHECK(best_batch_within(in, 1000, 12e-3 * (1 + 1e-12)) == 20);
  // Below the plateau throughput still grows with the batch: the best is the largest within the cap.
  CHECK(best_batch_within(in, 1000, 2e-3) == 10);
  CHECK(best_batch_within(in, 1000, 1e-3) == 0);
}
