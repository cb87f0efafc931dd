#pragma once
#include <doctest/doctest.h>
// Numeric searches the independent checks share. They work on times written out by hand in each
// check, never through libscaling's closed forms, so a search result is a second derivation.

namespace testing {

// The point in [lo, hi] where `below` turns false, by 200 halvings (below(lo) true, below(hi) false).
template <class Predicate>
double bisect(double lo, double hi, const Predicate& below) {
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (below(mid) ? lo : hi) = mid;
  }
  return hi;
}

// The batch B at which X[B, D]·Y[D, F] turns compute-bound: 2BDF/C = (s_lhs·BD + s_rhs·DF + s_out·BF)/W,
// with s_* the bytes per element of each operand. 0 when even B = limit is still bandwidth-bound.
inline double matmul_crossover(double D, double F, double s_lhs, double s_rhs, double s_out, double flops_per_s,
                               double bytes_per_s, double limit = 1e9) {
  auto bandwidth_bound = [&](double B) {
    return 2 * B * D * F / flops_per_s < (s_lhs * B * D + s_rhs * D * F + s_out * B * F) / bytes_per_s;
  };
  REQUIRE(bandwidth_bound(1e-9));  // the search brackets the crossover from below: tiny batches move weights
  return bandwidth_bound(limit) ? 0 : bisect(0, limit, bandwidth_bound);
}

}  // namespace testing
