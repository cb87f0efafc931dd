#pragma once
// §8.3 (exercise 8.3): choosing a serving configuration with the §7 decode-step model (cost/inference.hpp).
// Over every slice shape the chip is offered in (allowed_slices) and every batch that fits, the
// configuration with the most tokens/s per chip whose step stays within a latency cap, and the
// shortest step any slice can reach. Weights and KV fully sharded, no communication modelled (the
// step model's own assumptions).
#include <optional>
#include <vector>

#include "scaling/cost/inference.hpp"

namespace scaling {

struct ServingChoice {
  std::vector<int> slice;
  double chips = 0;
  DecodeTerms step{};  // at the chosen batch (step.batch)
};

// The largest batch on `in`'s slice whose step at `context` is at most `step_cap_s` and whose KV fits;
// 0 when none does (the weights alone take too long, or do not fit). A step grows with the batch, so the
// answer is found by bisection over 1..max_batch.
double largest_batch_within(const DecodeInputs& in, double context, double step_cap_s);

// Tokens/s per chip never falls as the batch grows, and once the MLP is compute-bound it is flat (equal
// up to rounding). The smallest batch whose throughput is within 1e-9 of that of the largest batch within
// the cap: the same throughput at the lowest latency. 0 when no batch meets the cap.
double best_batch_within(const DecodeInputs& in, double context, double step_cap_s);

// The most tokens/s per chip over every allowed slice of `chip` within the cap (ties within 1e-9: fewer chips).
// Per slice the batch is best_batch_within's. Empty when no slice meets the cap. Throws std::invalid_argument for a non-positive context or cap.
std::optional<ServingChoice> best_throughput_within(const TransformerConfig& model, const Chip& chip,
                                                    const InferenceDtypes& dtypes, double context,
                                                    double step_cap_s);

// The shortest step of one sequence at `context` over every allowed slice whose HBM holds it (the largest
// slice, as every term falls with N). Empty when no slice holds the model.
std::optional<ServingChoice> shortest_step(const TransformerConfig& model, const Chip& chip,
                                           const InferenceDtypes& dtypes, double context);

}  // namespace scaling
