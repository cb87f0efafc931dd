#include "scaling/cost/frontier.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "scaling/base/format.hpp"

namespace scaling {

std::vector<FrontierPoint> frontier(const DecodeInputs& in, double context, CostModel cost_model, double max_points) {
  const double b_max = max_batch(in, context);
  if (b_max > max_points)
    throw std::invalid_argument("max batch " + format_number(b_max) + " exceeds the frontier's limit of " +
                                format_number(max_points) + " points");
  std::vector<FrontierPoint> out;
  out.reserve(static_cast<std::size_t>(b_max));
  for (double b = 1; b <= b_max; ++b) {
    const DecodeTerms s = decode_terms(in, b, context, cost_model);
    out.push_back({b, s.step_s, s.tokens_per_s_per_chip, false});
  }
  mark_pareto(out);
  return out;
}

// Sort by latency (then throughput, best first); a point is on the frontier when its throughput beats every
// faster point's.
void mark_pareto(std::vector<FrontierPoint>& points) {
  std::vector<std::size_t> order(points.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (points[a].step_s != points[b].step_s) return points[a].step_s < points[b].step_s;
    return points[a].tokens_per_s_per_chip > points[b].tokens_per_s_per_chip;
  });
  double best = -1;
  double best_latency = -1;
  for (std::size_t i : order) {
    auto& p = points[i];
    // Throughput flat to rounding (past the compute-bound batch, B/(B·c) varies in the last bit) is no gain.
    const bool better = p.tokens_per_s_per_chip > best * (1 + 1e-12);
    const bool equal_to_best = p.tokens_per_s_per_chip == best && p.step_s == best_latency;
    p.pareto = better || equal_to_best;
    if (better) best = p.tokens_per_s_per_chip, best_latency = p.step_s;
  }
}

}  // namespace scaling
