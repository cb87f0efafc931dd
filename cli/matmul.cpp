// `scaling matmul`: the §1.1.2 roofline of X[B, D]·Y[D, F] -> Z[B, F] on one chip.
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "scaling/base/format.hpp"
#include "scaling/hardware/chip.hpp"
#include "scaling/cost/roofline.hpp"

namespace cli {

void run_matmul(const MatmulArgs& a) {
  using namespace scaling;
  const Chip c = resolve_chip(a.chip);
  const Matmul m{parse_size("--B", a.B), parse_size("--D", a.D), parse_size("--F", a.F), parse_dtype(a.lhs),
                 parse_dtype(a.rhs), parse_dtype(a.out)};
  auto options = chip_overrides(a.chip);
  options.insert(options.begin(), {{"--B", a.B}, {"--D", a.D}, {"--F", a.F}});
  const std::string inputs = given(options);
  require_finite("FLOPs 2·B·D·F", flops(m), inputs);
  require_finite("bytes", bytes(m), inputs);
  const double peak = peak_flops_per_s(c, parse_dtype(a.compute));
  require_finite("chip intensity", critical_intensity(peak, c.hbm_bytes_per_s), inputs);
  const double chip_i = critical_intensity(peak, c.hbm_bytes_per_s);
  const Roofline r = roofline(flops(m), bytes(m), peak, c.hbm_bytes_per_s);
  const auto crit = critical_batch(m.D, m.F, m.lhs, m.rhs, m.out, chip_i);
  for (const auto& [what, v] : {std::pair{"T_math", r.t_math_s}, {"T_comms", r.t_comms_s}, {"the upper bound", r.t_upper_s},
                                {"intensity", intensity(m)}, {"critical batch", crit.value_or(1.0)}})
    require_finite(what, v, inputs);

  if (a.json) {
    nlohmann::json out = {{"flops", flops(m)},
                          {"bytes", bytes(m)},
                          {"intensity", intensity(m)},
                          {"chip_intensity", chip_i},
                          {"t_math_s", r.t_math_s},
                          {"t_comms_s", r.t_comms_s},
                          {"t_lower_s", r.t_lower_s},
                          {"t_upper_s", r.t_upper_s},
                          {"bound", r.compute_bound ? "compute" : "memory"},
                          {"critical_batch", crit ? nlohmann::json(*crit) : nlohmann::json(nullptr)}};
    std::cout << out.dump(2) << "\n";
    return;
  }
  auto row = [](const char* what, const std::string& value) { fmt::print("  {:<24} {}\n", what, value); };
  fmt::print("{}[{}, {}] · {}[{}, {}] -> {}[{}, {}] on {} ({} compute)\n", a.lhs, format_whole(m.B), format_whole(m.D),
             a.rhs, format_whole(m.D), format_whole(m.F), a.out, format_whole(m.B), format_whole(m.F), c.display, a.compute);
  row("FLOPs", format_quantity(flops(m), "FLOPs"));
  row("bytes (HBM)", format_quantity(bytes(m), "B"));
  row("intensity", format_quantity(intensity(m), "FLOPs/byte"));
  row("chip intensity", format_quantity(chip_i, "FLOPs/byte"));
  row("T_math", format_quantity(r.t_math_s, "s"));
  row("T_comms", format_quantity(r.t_comms_s, "s"));
  row("lower bound (max)", format_quantity(r.t_lower_s, "s"));
  row("upper bound (sum)", format_quantity(r.t_upper_s, "s"));
  row("bound", r.compute_bound ? "compute" : "memory bandwidth");
  row("critical batch", crit ? format_quantity(*crit, "tokens") + " (compute-bound above)"
                             : std::string("none: no batch makes this compute-bound"));
}
}  // namespace cli
