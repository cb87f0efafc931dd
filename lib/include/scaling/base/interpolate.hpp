#pragma once
// Reading a published curve between its printed points.
#include <span>

namespace scaling {

// y at x on a curve printed at ascending xs (ys alike), linear in log x between neighbouring points — the
// way benchmark sweeps double their size from point to point — and the end values held beyond either end.
double interpolate_in_log_x(std::span<const double> xs, std::span<const double> ys, double x);

}  // namespace scaling
