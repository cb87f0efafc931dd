// `scaling collective`: the exact cost of a collective over some axes of a slice (§3.2–3.3).
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "scaling/cost/collectives.hpp"
#include "scaling/base/format.hpp"

namespace cli {

void run_collective(const CollectiveArgs& a) {
  using namespace scaling;
  const Slice s = make_slice(resolve_chip(a.chip), parse_shape(a.slice), parse_wrap(a.wrap));
  const Collective op = parse_collective(a.op);
  const auto axes = slice_axes(s, parse_indices("--axes", a.axes));
  const double v = parse_size("--bytes", a.bytes);
  const auto c = collective_cost(op, axes, v, ici_link(s.chip));
  auto options = chip_overrides(a.chip);
  options.insert(options.begin(), {"--bytes", a.bytes});
  for (const auto& [what, t] : {std::pair{"the time", c.t_s}, {"the bandwidth time", c.t_bandwidth_s},
                                {"the latency time", c.t_latency_s}})
    require_finite(what, t, given(options));
  if (a.json) {
    std::cout << nlohmann::json{{"t_s", c.t_s},
                                {"t_bandwidth_s", c.t_bandwidth_s},
                                {"t_latency_s", c.t_latency_s},
                                {"latency_bound", c.latency_bound},
                                {"hops", c.hops}}
                     .dump(2)
              << "\n";
    return;
  }
  std::string axes_text;
  for (const auto& ax : axes) axes_text += fmt::format("{}{} ", ax.size, ax.wraps ? " (wraps)" : " (open)");
  fmt::print("{} of {} over axes of size {}on a {} {}\n", op == Collective::all_to_all ? "AllToAll" : name(op),
             format_quantity(v, "B"), axes_text, s.chip.display, shape_text(s.shape));
  fmt::print("  {:<14} {}\n", "time", format_quantity(c.t_s, "s"));
  fmt::print("  {:<14} {}\n", "bandwidth", format_quantity(c.t_bandwidth_s, "s"));
  fmt::print("  {:<14} {} ({} hops)\n", "latency", format_quantity(c.t_latency_s, "s"), c.hops);
  fmt::print("  {:<14} {}\n", "bound by", c.latency_bound ? "latency" : "bandwidth");
}
}  // namespace cli
