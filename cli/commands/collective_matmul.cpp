// `scaling collective-matmul`: a §10 collective matmul run on the virtual mesh (counts only, or on real
// numbers with --verify), with its step-by-step timeline against the blocking and the ideal times.
#include <fmt/format.h>

#include <memory>

#include "../options.hpp"
#include "../output.hpp"
#include "modules.hpp"
#include "scaling/base/format.hpp"
#include "scaling/base/validate.hpp"
#include "scaling/notation/sharding.hpp"
#include "scaling/sim/collective_matmul.hpp"

namespace cli {

namespace {

struct Args {
  ChipArgs chip;
  std::string kind, mesh, B, D, F, direction = "uni", wrap = "auto";
  bool verify = false, json = false;
};

// The mesh X=a,Y=b as a slice of the chip (a 3D chip gets a third axis of 1), so --wrap auto follows §2.2;
// its devices are bounded (limits::kMaxMeshDevices) before the simulator allocates anything.
scaling::sim::CmProblem mesh_problem(const Args& a, const scaling::Chip& chip) {
  using namespace scaling;
  const Mesh mesh = strict_mesh("--mesh", a.mesh, limits::kMaxMeshDevices);
  int x = -1, y = -1;
  for (size_t i = 0; i < mesh.axes.size(); ++i) {
    if (mesh.axes[i].name == "X") x = static_cast<int>(i);
    if (mesh.axes[i].name == "Y") y = static_cast<int>(i);
  }
  if (mesh.axes.size() != 2 || x < 0 || y < 0)
    check::fail(check::subject("--mesh", a.mesh),
                   "expected the two axes X and Y, like X=2,Y=4 (X shards the batch, Y the model)");
  std::string shape = std::to_string(mesh.axes[0].size) + "x" + std::to_string(mesh.axes[1].size);
  for (size_t i = 2; i < chip.pod_shape.size(); ++i) shape += "x1";
  const Slice s = slice_on_chip(chip, "--mesh", shape, parse_wrap(a.wrap), a.mesh);
  sim::CmProblem p;
  p.mesh = sim::Topology{{s.shape[0], s.shape[1]}, {s.wraps[0], s.wraps[1]}, sim::Direction::bi};
  p.x_axis = x;
  p.y_axis = y;
  return p;
}

void run(const Args& a) {
  using namespace scaling;
  const auto kind = sim::parse_cm_kind(a.kind);
  const Chip c = resolve_chip(a.chip);
  auto p = mesh_problem(a, c);
  p.kind = kind;
  p.B = parse_size("--B", a.B, sim::kMaxDimension);
  p.D = parse_size("--D", a.D, sim::kMaxDimension);
  p.F = parse_size("--F", a.F, sim::kMaxDimension);
  p.direction = sim::parse_direction(a.direction);
  try {
    sim::validate(p);
  } catch (const sim::ShapeError& e) {
    throw std::invalid_argument("--" + e.dimension + ": " + e.what());
  }
  if (a.verify) for_option("--verify", [&] { sim::check_executable(p); });
  const auto run = sim::run(p, a.verify ? sim::example_inputs(p) : sim::shape_inputs(p));
  const auto t = sim::times(p, run, tpu_pods(c, p.mesh.shape, 1));  // the slice the mesh is cut from
  const bool y_wraps = p.mesh.wraps[static_cast<size_t>(p.y_axis)];
  auto options = chip_overrides(a.chip);
  options.insert(options.begin(), {{"--B", a.B}, {"--D", a.D}, {"--F", a.F}});
  const std::string inputs = given(options);

  Report r;
  r.label_width = 22;
  r.heading = fmt::format("{} collective matmul, {}directional, B = {}, D = {}, F = {} on a {} mesh {} (Y {})", a.kind,
                          p.direction == sim::Direction::uni ? "uni" : "bi", format_number(p.B), format_number(p.D),
                          format_number(p.F), c.display, a.mesh, y_wraps ? "wraps" : "open, no wraparound");
  nlohmann::json timeline = nlohmann::json::array();
  std::string table = fmt::format("  {:>4}  {:>12}  {:>12}  {:>12}\n", "step", "start", "compute", "ppermute");
  for (size_t i = 0; i < t.timeline.size(); ++i) {
    const auto& s = t.timeline[i];
    for (double v : {s.start_s, s.compute_s, s.comm_s}) require_finite("a step of the timeline", v, inputs);
    timeline.push_back({{"start_s", s.start_s}, {"compute_s", s.compute_s}, {"comm_s", s.comm_s}});
    table += fmt::format("  {:>4}  {:>12}  {:>12}  {:>12}\n", i, format_quantity(s.start_s, "s"),
                         format_quantity(s.compute_s, "s"), format_quantity(s.comm_s, "s"));
  }
  r.outputs = {{"", "result", std::string(!run.correct ? "not computed (add --verify)"
                                          : *run.correct ? "equals the plain matmul" : "WRONG")},
               {"steps", "", double(t.timeline.size()), kCount},
               {"y_wraps", "", y_wraps},
               {"step_compute_s", "", t.step_compute_s, "s"},
               {"step_comm_s", "", t.step_comm_s, "s"},
               {"overlapped_s", "", t.overlapped_s, "s"},
               {"blocking_s", "", t.blocking_s, "s"},
               {"blocking_comm_s", "", t.blocking_comm_s, "s"},
               {"ideal_s", "", t.ideal_s, "s"}};
  r.extra["timeline"] = timeline;
  if (run.correct) r.extra["correct"] = *run.correct;  // only with --verify
  r.tail = table + fmt::format("  {:<22} {}\n", "overlapped", format_quantity(t.overlapped_s, "s")) +
           fmt::format("  {:<22} {} (of which the collective {})\n", "blocking", format_quantity(t.blocking_s, "s"),
                       format_quantity(t.blocking_comm_s, "s")) +
           fmt::format("  {:<22} {}\n", "ideal (no comms)", format_quantity(t.ideal_s, "s"));
  emit(r, a.json, inputs);
}

}  // namespace

void add_collective_matmul(CLI::App& app) {
  auto a = std::make_shared<Args>();
  auto* sub = app.add_subcommand("collective-matmul", "a §10 collective matmul on the virtual mesh, with its timeline");
  add_name(sub, "--kind", a->kind, "all-gather, reduce-scatter, all-reduce or ffn",
           [](const std::string& t) { scaling::sim::parse_cm_kind(t); })
      ->required();
  add_chip_options(sub, a->chip);
  add_text(sub, "--mesh", a->mesh, "the mesh X=a,Y=b: X shards the batch, Y the model (at most 4,096 devices)")->required();
  add_size(sub, "--B", a->B, "batch", scaling::sim::kMaxDimension)->required();
  add_size(sub, "--D", a->D, "model dimension", scaling::sim::kMaxDimension)->required();
  add_size(sub, "--F", a->F, "hidden (feed-forward) dimension", scaling::sim::kMaxDimension)->required();
  add_name(sub, "--direction", a->direction, "uni (one ring direction) or bi (half each way)",
           [](const std::string& t) { scaling::sim::parse_direction(t); })
      ->capture_default_str();
  add_name(sub, "--wrap", a->wrap, "wraparound: auto (§2.2 rules), yes or no", [](const std::string& t) { parse_wrap(t); })
      ->capture_default_str();
  sub->add_flag("--verify", a->verify, "run on real numbers and compare with the plain matmul (small sizes)");
  sub->add_flag("--json", a->json, "print one JSON object, SI units");
  run_when_chosen(sub, [a] { run(*a); });
}

}  // namespace cli
