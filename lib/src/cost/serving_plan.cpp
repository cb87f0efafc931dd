#include "scaling/cost/serving_plan.hpp"
#include "scaling/base/validate.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "scaling/base/format.hpp"

namespace scaling {

namespace {
constexpr double kTie = 1e-9;
double fastest_batch_at_best_throughput(const DecodeInputs& in, double context, double b_cap) {
  const double target = decode_terms(in, b_cap, context).tokens_per_s_per_chip * (1 - kTie);
  double lo = 1, hi = b_cap;
  while (lo < hi) {
    const double mid = std::floor((lo + hi) / 2);
    if (decode_terms(in, mid, context).tokens_per_s_per_chip >= target) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

}  // namespace

double largest_batch_within(const DecodeInputs& in, double context, double step_cap_s) {
  check::positive("context", context);
  check::positive("step cap", step_cap_s);
  double lo = 0, hi = max_batch(in, context);  // invariant: lo meets the cap (or is 0), hi + 1 does not fit
  if (hi < 1 || decode_terms(in, 1, context).step_s > step_cap_s) return 0;
  lo = 1;
  while (lo < hi) {
    const double mid = std::floor((lo + hi + 1) / 2);
    if (decode_terms(in, mid, context).step_s <= step_cap_s) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

double best_batch_within(const DecodeInputs& in, double context, double step_cap_s) {
  const double b_cap = largest_batch_within(in, context, step_cap_s);
  return b_cap < 1 ? 0 : fastest_batch_at_best_throughput(in, context, b_cap);
}

std::optional<ServingChoice> best_throughput_within(const TransformerConfig& model, const Chip& chip,
                                                    const InferenceDtypes& dtypes, double context,
                                                    double step_cap_s) {
  std::optional<ServingChoice> best;
  for (const auto& shape : allowed_slices(chip)) {
    const double n = chips_in(shape);
    const auto in = decode_inputs(model, chip, n, dtypes);
    const double b = best_batch_within(in, context, step_cap_s);
    if (b < 1) continue;
    const auto s = decode_terms(in, b, context);
    // A tie (equal to rounding: the compute-bound plateau is the same on every slice) keeps the fewer chips.
    if (!best || s.tokens_per_s_per_chip > best->step.tokens_per_s_per_chip * (1 + kTie)) best = ServingChoice{shape, n, s};
  }
  return best;
}

std::optional<ServingChoice> shortest_step(const TransformerConfig& model, const Chip& chip,
                                           const InferenceDtypes& dtypes, double context) {
  check::positive("context", context);
  std::optional<ServingChoice> best;
  for (const auto& shape : allowed_slices(chip)) {
    const double n = chips_in(shape);
    const auto in = decode_inputs(model, chip, n, dtypes);
    if (max_batch(in, context) < 1) continue;
    const auto s = decode_terms(in, 1, context);
    if (!best || s.step_s < best->step.step_s) best = ServingChoice{shape, n, s};
  }
  return best;
}

}  // namespace scaling
