// `scaling simulate`: run a collective on the virtual mesh (a wrapped ring) and report its counts.
#include <fmt/format.h>

#include <memory>

#include "../options.hpp"
#include "../output.hpp"
#include "modules.hpp"
#include "scaling/base/format.hpp"
#include "scaling/cost/collectives.hpp"
#include "scaling/sim/collective_matmul.hpp"
#include "scaling/sim/mesh_sim.hpp"

namespace cli {

namespace {

struct Args {
  std::string op, devices, direction, elements;
  bool count_only = false, json = false;
};

scaling::sim::Op parse_op(const std::string& t) {
  if (t == "ppermute") return scaling::sim::Ppermute{1};
  return scaling::parse_collective(t);
}

void run(const Args& a) {
  using namespace scaling;
  const sim::Op op = parse_op(a.op);
  const double devices = parse_size("--devices", a.devices, sim::kMaxDevices);
  const double elements = parse_size("--elements", a.elements);
  const sim::Direction links = sim::parse_direction(a.direction);
  const auto topo = sim::ring(static_cast<int>(devices), links);
  const auto r = for_option(a.count_only ? "--devices, --elements" : "--devices, --elements (data mode)",
                            [&] { return sim::simulate(topo, {op, {0}, elements, a.count_only}); });
  Report rep;
  rep.label_width = 26;
  rep.heading = fmt::format("{} of {} elements on a {} ring of {} devices", a.op, format_number(elements),
                            links == sim::Direction::uni ? "unidirectional" : "bidirectional", format_number(devices));
  rep.outputs = {{"", "result", std::string(a.count_only ? "not computed (--count-only)" : r.correct ? "correct" : "WRONG")},
                 {"steps", "steps", double(r.steps), kCount},
                 {"max_link_elements", "busiest link (elements)", r.max_link_elements, kCount},
                 {"total_link_elements", "all link transfers", r.total_link_elements, kCount}};
  rep.extra["correct"] = a.count_only ? nlohmann::json(nullptr) : nlohmann::json(r.correct);
  emit(rep, a.json, given({{"--devices", a.devices}, {"--elements", a.elements}}));
}

}  // namespace

void add_simulate(CLI::App& app) {
  auto a = std::make_shared<Args>();
  auto* sub = app.add_subcommand("simulate", "run a collective on a virtual wrapped ring, on real data");
  add_name(sub, "--op", a->op, "all-gather, reduce-scatter, all-reduce, all-to-all or ppermute",
           [](const std::string& t) { parse_op(t); })
      ->required();
  add_size(sub, "--devices", a->devices, "devices on the ring", scaling::sim::kMaxDevices)->required();
  add_name(sub, "--direction", a->direction, "uni or bi", [](const std::string& t) { scaling::sim::parse_direction(t); })
      ->required();
  add_size(sub, "--elements", a->elements,
           "elements of the whole array (a multiple of devices; of devices² for all-to-all)")
      ->required();
  sub->add_flag("--count-only", a->count_only, "no data, counts only (for large rings); correct is null");
  sub->add_flag("--json", a->json, "print one JSON object");
  run_when_chosen(sub, [a] { run(*a); });
}

}  // namespace cli
