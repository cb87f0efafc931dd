// `scaling collective-matmul`: a §10 collective matmul run on the virtual mesh (counts only, or on real
// numbers with --verify), with its step-by-step timeline against the blocking and the ideal times.
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "scaling/base/format.hpp"
#include "scaling/notation/sharding.hpp"
#include "scaling/sim/collective_matmul.hpp"

namespace cli {

namespace {

// The mesh X=a,Y=b as a slice of the chip (a 3D chip gets a third axis of 1), so --wrap auto follows §2.2.
scaling::sim::CmProblem mesh_problem(const CollectiveMatmulArgs& a, const scaling::Chip& chip) {
  using namespace scaling;
  const Mesh mesh = for_option("--mesh", [&] { return parse_mesh(a.mesh); });
  int x = -1, y = -1;
  for (size_t i = 0; i < mesh.axes.size(); ++i) {
    if (mesh.axes[i].name == "X") x = static_cast<int>(i);
    if (mesh.axes[i].name == "Y") y = static_cast<int>(i);
  }
  if (mesh.axes.size() != 2 || x < 0 || y < 0)
    throw std::invalid_argument("--mesh '" + a.mesh + "': expected the two axes X and Y, like X=2,Y=4 (X shards the batch, Y the model)");
  std::vector<int> shape{mesh.axes[0].size, mesh.axes[1].size};
  while (shape.size() < chip.pod_shape.size()) shape.push_back(1);
  const Slice s = for_option("--mesh '" + a.mesh + "'", [&] { return make_slice(chip, shape, parse_wrap(a.wrap)); });
  sim::CmProblem p;
  p.mesh = sim::Topology{{shape[0], shape[1]}, {s.wraps[0], s.wraps[1]}, sim::Links::bi};
  p.x_axis = x;
  p.y_axis = y;
  return p;
}

}  // namespace

void run_collective_matmul(const CollectiveMatmulArgs& a) {
  using namespace scaling;
  const auto kind = for_option("--kind", [&] { return sim::parse_cm_kind(a.kind); });
  const Chip c = resolve_chip(a.chip);
  if (c.pod_shape.empty()) throw std::invalid_argument("chip '" + c.name + "' has no ICI mesh (only TPUs have one)");
  parse_wrap(a.wrap);
  auto p = mesh_problem(a, c);
  p.kind = kind;
  p.B = parse_size("--B", a.B);
  p.D = parse_size("--D", a.D);
  p.F = parse_size("--F", a.F);
  p.direction = for_option("--direction", [&] { return sim::parse_direction(a.direction); });
  try {
    sim::validate(p);
  } catch (const sim::ShapeError& e) {
    throw std::invalid_argument("--" + e.dimension + ": " + e.what());
  }
  if (a.verify) for_option("--verify", [&] { sim::check_executable(p); });
  const auto run = sim::run(p, a.verify ? sim::example_inputs(p) : sim::shape_inputs(p));
  const auto t = sim::times(p, run, sim::machine(c));
  const bool y_wraps = p.mesh.wraps[static_cast<size_t>(p.y_axis)];
  {
    auto options = chip_overrides(a.chip);
    options.insert(options.begin(), {{"--B", a.B}, {"--D", a.D}, {"--F", a.F}});
    const std::string inputs = given(options);
    for (const auto& [what, v] : {std::pair{"the overlapped time", t.overlapped_s}, {"the blocking time", t.blocking_s},
                                  {"the blocking collective", t.blocking_comm_s}, {"the ideal time", t.ideal_s},
                                  {"a step's compute", t.step_compute_s}, {"a step's communication", t.step_comm_s}})
      require_finite(what, v, inputs);
    for (const auto& s : t.timeline)
      for (double v : {s.start_s, s.compute_s, s.comm_s}) require_finite("a step of the timeline", v, inputs);
  }

  if (a.json) {
    nlohmann::json timeline = nlohmann::json::array();
    for (const auto& s : t.timeline) timeline.push_back({{"start_s", s.start_s}, {"compute_s", s.compute_s}, {"comm_s", s.comm_s}});
    nlohmann::json out{{"steps", t.timeline.size()},
                       {"y_wraps", y_wraps},
                       {"step_compute_s", t.step_compute_s},
                       {"step_comm_s", t.step_comm_s},
                       {"overlapped_s", t.overlapped_s},
                       {"blocking_s", t.blocking_s},
                       {"blocking_comm_s", t.blocking_comm_s},
                       {"ideal_s", t.ideal_s},
                       {"timeline", timeline}};
    if (run.correct) out["correct"] = *run.correct;  // only with --verify
    std::cout << out.dump(2) << "\n";
    return;
  }
  fmt::print("{} collective matmul, {}directional, B = {}, D = {}, F = {} on a {} mesh {} (Y {})\n", a.kind,
             p.direction == sim::Direction::uni ? "uni" : "bi", format_number(p.B), format_number(p.D),
             format_number(p.F), c.display, a.mesh, y_wraps ? "wraps" : "open, no wraparound");
  fmt::print("  {:<22} {}\n", "result", !run.correct ? "not computed (add --verify)" : *run.correct ? "equals the plain matmul" : "WRONG");
  fmt::print("  {:>4}  {:>12}  {:>12}  {:>12}\n", "step", "start", "compute", "ppermute");
  for (size_t i = 0; i < t.timeline.size(); ++i) {
    const auto& s = t.timeline[i];
    fmt::print("  {:>4}  {:>12}  {:>12}  {:>12}\n", i, format_quantity(s.start_s, "s"), format_quantity(s.compute_s, "s"),
               format_quantity(s.comm_s, "s"));
  }
  fmt::print("  {:<22} {}\n", "overlapped", format_quantity(t.overlapped_s, "s"));
  fmt::print("  {:<22} {} (of which the collective {})\n", "blocking", format_quantity(t.blocking_s, "s"),
             format_quantity(t.blocking_comm_s, "s"));
  fmt::print("  {:<22} {}\n", "ideal (no comms)", format_quantity(t.ideal_s, "s"));
}

}  // namespace cli
