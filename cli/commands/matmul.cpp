// `scaling matmul`: the §1.1.2 roofline of X[B, D]·Y[D, F] -> Z[B, F] on one chip.
#include <fmt/format.h>

#include <memory>

#include "../options.hpp"
#include "../output.hpp"
#include "modules.hpp"
#include "scaling/base/format.hpp"
#include "scaling/cost/roofline.hpp"
#include "scaling/hardware/chip.hpp"

namespace cli {

namespace {

struct Args {
  ChipArgs chip;
  std::string B, D, F, lhs = "bf16", rhs = "bf16", out = "bf16", compute = "bf16";
  bool json = false;
};

void run(const Args& a) {
  using namespace scaling;
  const Chip c = resolve_chip(a.chip);
  const Matmul m{parse_size("--B", a.B), parse_size("--D", a.D), parse_size("--F", a.F), parse_dtype(a.lhs),
                 parse_dtype(a.rhs), parse_dtype(a.out)};
  auto options = chip_overrides(a.chip);
  options.insert(options.begin(), {{"--B", a.B}, {"--D", a.D}, {"--F", a.F}});
  const double peak = for_option("--compute-dtype", [&] { return peak_flops_per_s(c, parse_dtype(a.compute)); });
  const double chip_i = critical_intensity(peak, c.hbm_bytes_per_s);
  const Roofline r = roofline(flops(m), bytes(m), peak, c.hbm_bytes_per_s);
  const auto crit = std::isfinite(chip_i) ? critical_batch(m.D, m.F, m.lhs, m.rhs, m.out, chip_i) : std::nullopt;
  Report rep;
  rep.heading = fmt::format("{}[{}, {}] · {}[{}, {}] -> {}[{}, {}] on {} ({} compute)", a.lhs, format_whole(m.B),
                            format_whole(m.D), a.rhs, format_whole(m.D), format_whole(m.F), a.out, format_whole(m.B),
                            format_whole(m.F), c.display, a.compute);
  rep.outputs = {{"flops", "FLOPs", flops(m), "FLOPs"},
                 {"bytes", "bytes (HBM)", bytes(m), "B"},
                 {"intensity", "intensity", intensity(m), "FLOPs/byte"},
                 {"chip_intensity", "chip intensity", chip_i, "FLOPs/byte"},
                 {"t_math_s", "T_math", r.t_math_s, "s"},
                 {"t_comms_s", "T_comms", r.t_comms_s, "s"},
                 {"t_lower_s", "lower bound (max)", r.t_lower_s, "s"},
                 {"t_upper_s", "upper bound (sum)", r.t_upper_s, "s"},
                 {"bound", "", std::string(r.compute_bound ? "compute" : "memory")},
                 {"", "bound", std::string(r.compute_bound ? "compute" : "memory bandwidth")}};
  if (crit) rep.outputs.push_back({"critical_batch", "critical batch", *crit, "tokens", "(compute-bound above)"});
  else rep.outputs.push_back({"", "critical batch", std::string("none: no batch makes this compute-bound")});
  // JSON keeps critical_batch null when no batch is compute-bound: a documented null, not an overflow.
  if (!crit) rep.extra["critical_batch"] = nullptr;
  emit(rep, a.json, given(options));
}

}  // namespace

void add_matmul(CLI::App& app) {
  auto a = std::make_shared<Args>();
  auto* sub = app.add_subcommand("matmul", "roofline of X[B, D]·Y[D, F] -> Z[B, F] on one chip (§1.1.2)");
  add_chip_options(sub, a->chip);
  add_size(sub, "--B", a->B, "batch (rows of X)")->required();
  add_size(sub, "--D", a->D, "contracting dimension")->required();
  add_size(sub, "--F", a->F, "output dimension")->required();
  const auto dtype = [](const std::string& t) { scaling::parse_dtype(t); };
  add_name(sub, "--lhs-dtype", a->lhs, "dtype of X (fp32, bf16, fp8, int8, int4)", dtype)->capture_default_str();
  add_name(sub, "--rhs-dtype", a->rhs, "dtype of Y", dtype)->capture_default_str();
  add_name(sub, "--out-dtype", a->out, "dtype of Z", dtype)->capture_default_str();
  add_name(sub, "--compute-dtype", a->compute, "dtype the MXU computes in: picks the bf16 or int8 peak", dtype)
      ->capture_default_str();
  sub->add_flag("--json", a->json, "print one JSON object, SI units");
  run_when_chosen(sub, [a] { run(*a); });
}

}  // namespace cli
