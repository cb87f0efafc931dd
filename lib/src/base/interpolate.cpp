#include "scaling/base/interpolate.hpp"

#include <cmath>

namespace scaling {

double interpolate_in_log_x(std::span<const double> xs, std::span<const double> ys, double x) {
  if (x <= xs.front()) return ys.front();
  if (x >= xs.back()) return ys.back();
  for (size_t i = 1; i < xs.size(); ++i) {
    if (x > xs[i]) continue;
    const double f = std::log(x / xs[i - 1]) / std::log(xs[i] / xs[i - 1]);
    return ys[i - 1] + f * (ys[i] - ys[i - 1]);
  }
  return ys.back();
}

}  // namespace scaling
