// `scaling simulate`: run a collective on the virtual mesh (a wrapped ring) and report its counts.
#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "scaling/collectives.hpp"
#include "scaling/format.hpp"
#include "scaling/mesh_sim.hpp"

namespace cli {

namespace {
struct Args {
  std::string op, devices, direction, elements;
  bool count_only = false, json = false;
};

void run(const Args& a) {
  using namespace scaling;
  const sim::Op op = a.op == "ppermute" ? sim::Op::ppermute : sim::to_op(parse_collective(a.op));
  const double devices = parse_size("--devices", a.devices);
  if (devices > 1e5) throw std::invalid_argument("--devices '" + a.devices + "': at most 100000");
  if (a.direction != "uni" && a.direction != "bi")
    throw std::invalid_argument("--direction '" + a.direction + "': expected uni or bi");
  const double elements = parse_size("--elements", a.elements);
  const auto topo = sim::ring(static_cast<int>(devices), a.direction == "uni" ? sim::Links::uni : sim::Links::bi);
  const auto r = sim::simulate(topo, {op, {0}, elements, 1, a.count_only});
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
}  // namespace

Runner add_simulate(CLI::App& app) {
  auto* sub = app.add_subcommand("simulate", "run a collective on a virtual wrapped ring, on real data");
  auto a = std::make_shared<Args>();
  sub->add_option("--op", a->op, "all-gather, reduce-scatter, all-reduce, all-to-all or ppermute")->required();
  sub->add_option("--devices", a->devices, "devices on the ring")->required();
  sub->add_option("--direction", a->direction, "uni or bi")->required();
  sub->add_option("--elements", a->elements, "elements of the whole array (a multiple of devices; of devices² "
                                             "for all-to-all)")->required();
  sub->add_flag("--count-only", a->count_only, "no data, counts only (for large rings); correct is null");
  sub->add_flag("--json", a->json, "print one JSON object");
  return [a] { run(*a); };
}

}  // namespace cli
