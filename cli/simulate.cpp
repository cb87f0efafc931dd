// `scaling simulate`: run a collective on the virtual mesh (a wrapped ring) and report its counts.
#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "scaling/cost/collectives.hpp"
#include "scaling/base/format.hpp"
#include "scaling/sim/mesh_sim.hpp"

namespace cli {

void run_simulate(const SimulateArgs& a) {
  using namespace scaling;
  const sim::Op op = a.op == "ppermute" ? sim::Op::ppermute : sim::to_op(parse_collective(a.op));
  const double devices = parse_size("--devices", a.devices);
  if (devices > sim::kMaxDevices)
    throw std::invalid_argument(given({{"--devices", a.devices}}) + ": at most " + format_number(sim::kMaxDevices));
  if (a.direction != "uni" && a.direction != "bi")
    throw std::invalid_argument(given({{"--direction", a.direction}}) + ": expected uni or bi");
  const double elements = parse_size("--elements", a.elements);
  const auto topo = sim::ring(static_cast<int>(devices), a.direction == "uni" ? sim::Links::uni : sim::Links::bi);
  const auto r = for_option(a.count_only ? "--devices, --elements" : "--devices, --elements (data mode)",
                            [&] { return sim::simulate(topo, {op, {0}, elements, 1, a.count_only}); });
  for (const auto& [what, v] : {std::pair{"the busiest link's elements", r.max_link_elements},
                                {"the total link elements", r.total_link_elements}})
    require_finite(what, v, given({{"--devices", a.devices}, {"--elements", a.elements}}));
  if (a.json) {
    std::cout << nlohmann::json{{"correct", a.count_only ? nlohmann::json(nullptr) : nlohmann::json(r.correct)},
                                {"steps", r.steps},
                                {"max_link_elements", r.max_link_elements},
                                {"total_link_elements", r.total_link_elements}}
                     .dump(2)
              << "\n";
    return;
  }
  fmt::print("{} of {} elements on a {} ring of {} devices\n", a.op, format_number(elements),
             a.direction == "uni" ? "unidirectional" : "bidirectional", format_number(devices));
  fmt::print("  {:<26} {}\n", "result", a.count_only ? "not computed (--count-only)" : r.correct ? "correct" : "WRONG");
  fmt::print("  {:<26} {}\n", "steps", r.steps);
  fmt::print("  {:<26} {}\n", "busiest link (elements)", format_number(r.max_link_elements));
  fmt::print("  {:<26} {}\n", "all link transfers", format_number(r.total_link_elements));
}
}  // namespace cli
