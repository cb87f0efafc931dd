// `scaling collective`: the exact cost of a collective over some axes of a slice (§3.2–3.3).
#include <fmt/format.h>

#include <memory>

#include "../options.hpp"
#include "../output.hpp"
#include "modules.hpp"
#include "scaling/base/format.hpp"
#include "scaling/cost/collectives.hpp"

namespace cli {

namespace {

struct Args {
  ChipArgs chip;
  std::string slice, op, axes, bytes, wrap = "auto";
  bool json = false;
};

void run(const Args& a) {
  using namespace scaling;
  const Slice s = slice_on_chip(resolve_chip(a.chip), "--slice", a.slice, parse_wrap(a.wrap));
  const Collective op = parse_collective(a.op);
  const auto axes = for_option("--axes", [&] { return slice_axes(s, parse_indices("--axes", a.axes)); });
  const double v = parse_size("--bytes", a.bytes);
  const auto c = collective_cost(op, axes, v, ici_link(s.chip));
  auto options = chip_overrides(a.chip);
  options.insert(options.begin(), {"--bytes", a.bytes});
  std::string axes_text;
  for (const auto& ax : axes) axes_text += fmt::format("{}{} ", ax.size, ax.wraps ? " (wraps)" : " (open)");
  Report r;
  r.label_width = 14;
  r.heading = fmt::format("{} of {} over axes of size {}on a {} {}", op == Collective::all_to_all ? "AllToAll" : name(op),
                          format_quantity(v, "B"), axes_text, s.chip.display, shape_text(s.shape));
  r.outputs = {{"t_s", "time", c.t_s, "s"},
               {"t_bandwidth_s", "bandwidth", c.t_bandwidth_s, "s"},
               {"t_latency_s", "latency", c.t_latency_s, "s", fmt::format("({} hops)", c.hops)},
               {"latency_bound", "", c.latency_bound},
               {"hops", "", double(c.hops), kCount},
               {"", "bound by", std::string(c.latency_bound ? "latency" : "bandwidth")}};
  emit(r, a.json, given(options));
}

}  // namespace

void add_collective(CLI::App& app) {
  auto a = std::make_shared<Args>();
  auto* sub = app.add_subcommand("collective", "exact time of a collective over slice axes (§3)");
  add_chip_options(sub, a->chip);
  sub->add_option("--slice", a->slice, "slice shape, e.g. 4x4x4")->check(shape_check("--slice"))->required();
  add_name(sub, "--op", a->op, "all-gather, reduce-scatter, all-reduce or all-to-all",
           [](const std::string& t) { scaling::parse_collective(t); })
      ->required();
  add_text(sub, "--axes", a->axes, "slice axes it runs over, e.g. 0 or 0,1")->required();
  add_size(sub, "--bytes", a->bytes,
           "V: the gathered array (AllGather), the unreduced input (ReduceScatter, AllReduce) or the array "
           "(AllToAll), in bytes")
      ->required();
  add_name(sub, "--wrap", a->wrap, "wraparound: auto (§2.2 rules), yes or no", [](const std::string& t) { parse_wrap(t); })
      ->capture_default_str();
  sub->add_flag("--json", a->json, "print one JSON object, SI units");
  run_when_chosen(sub, [a] { run(*a); });
}

}  // namespace cli
