// `scaling serve`: the §7.1.5 decode-step model for a model on a slice — step time and its terms, memory,
// the largest batch, the smallest slice, and with --frontier every batch's latency and throughput.
// The step includes §7.2's tensor-parallel collectives over the slice's ICI axes or the GPUs' NVLink (and
// InfiniBand across nodes): every chip holds a shard of every weight, so each layer gathers and
// reduce-scatters its activations; the rule is in cost/inference.hpp. `--chips auto` serves on the
// smallest allowed slice (GPUs: 1, 2, 4, 8 of a node, then whole nodes) that holds the weights and the
// batch's KV cache. A configuration that does not fit prints its memory and terms but no throughput.
#include <fmt/format.h>

#include <cmath>
#include <algorithm>
#include <memory>
#include <optional>

#include "../options.hpp"
#include "../output.hpp"
#include "modules.hpp"
#include "scaling/base/format.hpp"
#include "scaling/base/validate.hpp"
#include "scaling/cost/frontier.hpp"
#include "scaling/cost/inference.hpp"
#include "scaling/hardware/system.hpp"
#include "scaling/hardware/topology.hpp"
#include "scaling/model/presets.hpp"

namespace cli {

namespace {
// More frontier points than this would print millions of lines: ask for a longer context or a smaller slice.
constexpr double kMaxFrontierPoints = 1e6;

struct Args {
  ChipArgs chip;
  std::string model, config, slice, chips, batch, context, weights = "bf16", kv = "bf16", compute = "bf16";
  std::string decode_len, prefill_len, mfu;
  bool frontier = false, json = false;
};

// The System the chips form: a TPU slice of `shape`, or GPUs on NVLink (whole nodes over InfiniBand past one).
// `option` is named when the chip count is not a machine the chip comes in.
scaling::System serving_system(const scaling::Chip& c, const std::vector<int>& shape, double n, const std::string& option,
                               const std::string& text) {
  using namespace scaling;
  if (is_gpu(c)) {
    const auto nodes = gpu_nodes(option, text, n, c.gpus_per_node);  // train's and plan's rule
    return for_option(option, [&] { return gpu_cluster(c, nodes.first, nodes.second); });
  }
  return for_option(option, [&] { return tpu_pods(c, shape, 1); });
}

// A TPU slice of n chips for --chips N: the allowed slice of exactly n chips, else a line of n chips
// (no wraparound) — the collectives then take the longest path.
std::vector<int> shape_of(const scaling::Chip& c, double n) {
  for (const auto& s : scaling::allowed_slices(c))
    if (scaling::chips_in(s) == n) return s;
  return {static_cast<int>(n)};
}

// --chips auto: the smallest allowed machine whose HBM holds weights + KV (none: the largest one, which
// does not fit). GPUs past one node: whole nodes, up to the chip limit.
double auto_chips(const scaling::Chip& c, const scaling::DecodeInputs& one_chip, double B, double T,
                  std::vector<int>& shape) {
  using namespace scaling;
  const double need = std::max(1.0, min_chips(one_chip, B, T));
  if (is_gpu(c)) {
    const double g = c.gpus_per_node;
    for (double n : {1.0, 2.0, 4.0, 8.0})
      if (n <= g && n >= need) return n;
    const double nodes = std::ceil(need / g);
    return std::min(nodes, std::floor(limits::kMaxChips / g)) * g;
  }
  const auto slices = allowed_slices(c);
  const auto s = smallest_slice(c, need);
  shape = s ? *s : slices.back();
  return chips_in(shape);
}

void run(const Args& a) {
  using namespace scaling;
  const TransformerConfig cfg = resolve_model("serve", a.model, a.config);
  if (a.slice.empty() == a.chips.empty())
    throw UsageError(a.slice.empty() ? "serve: give --slice AxB[xC] or --chips N" : "serve: give --slice or --chips, not both");
  if (a.prefill_len.empty() != a.mfu.empty()) throw UsageError("serve: --prefill-len and --mfu go together");
  const Chip c = resolve_chip(a.chip);
  const double B = parse_size("--batch", a.batch), T = parse_size("--context", a.context);
  InferenceDtypes d{parse_dtype(a.weights), parse_dtype(a.kv), parse_dtype(a.compute)};
  if (d.compute != Dtype::bf16 && d.compute != Dtype::int8)
    check::fail(check::subject("--compute", a.compute), "must be bf16 or int8");
  for_option("--compute", [&] { return peak_flops_per_s(c, d.compute); });
  const std::string option = a.slice.empty() ? "--chips" : "--slice";
  const bool automatic = a.chips == "auto";
  if (automatic && !is_gpu(c) && c.pod_shape.empty())
    check::fail(check::subject("--chips", a.chips), "auto needs a TPU or GPU preset (this chip has no slices or nodes)");
  // The slice is checked against the chip exactly as collective does it (slice_on_chip).
  std::vector<int> shape;
  double n = 0;
  if (automatic)
    n = auto_chips(c, for_option("--chips", [&] { return decode_inputs(cfg, c, 1, d); }), B, T, shape);
  else if (!a.slice.empty())
    shape = slice_on_chip(c, "--slice", a.slice).shape, n = chips_in(shape);
  else
    n = parse_size("--chips", a.chips, limits::kMaxChips), shape = shape_of(c, n);
  const DecodeInputs in = for_option(option, [&] { return decode_inputs(cfg, c, n, d); });
  // The interconnect: a TPU's ICI or a GPU's NVLink. A chip file with neither is served without the
  // collectives (t_comms_s absent), as §7.1.5 alone.
  std::optional<System> sys;
  if (is_gpu(c) || c.ici_bidi_bytes_per_s > 0) sys = serving_system(c, shape, n, option, a.chips);
  auto options = chip_overrides(a.chip);
  options.insert(options.begin(), {{"--model", a.model}, {"--config", a.config}, {"--slice", a.slice},
                                   {"--chips", a.chips}, {"--batch", a.batch}, {"--context", a.context}});
  const std::string inputs = given(options);
  require_finite("the KV cache's bytes", B * T * in.kv_bytes_per_token, inputs);
  const DecodeStep s = sys ? decode_step(in, B, T, *sys) : decode_step(in, B, T);
  const bool fit = fits(in, B, T);
  const double chips_needed = min_chips(in, B, T);
  const auto slice = smallest_slice(c, chips_needed);
  const std::string slice_text = slice ? shape_text(*slice) : "none";
  const double b_max = max_batch(in, T);

  Report r;
  r.label_width = 30;
  r.heading = fmt::format("{} on {} (weights {}, KV {}, compute {}): batch {}, context {}", cfg.name,
                          sys ? sys->name : format_number(n) + " × " + c.display, name(d.weights), name(d.kv), name(d.compute), format_number(B),
                          format_number(T));
  r.outputs = {{"model", "", cfg.name},
               {"chip", "", c.name},
               {"chips", "", n, kCount},
               {"system", "", sys ? sys->name : format_number(n) + " × " + c.display},
               {"batch", "", B, kCount},
               {"context", "", T, kCount},
               {"weights", "", std::string(name(d.weights))},
               {"kv", "", std::string(name(d.kv))},
               {"compute", "", std::string(name(d.compute))},
               {"param_bytes", "parameters", in.param_bytes, "B"},
               {"kv_bytes_per_token", "KV per token", in.kv_bytes_per_token, "B"},
               {"kv_bytes", "KV of the batch", s.kv_bytes, "B"},
               {"total_bytes", "weights + KV", in.param_bytes + s.kv_bytes, "B"},
               {"hbm_bytes", "HBM of the slice", hbm_bytes(in), "B"},
               {"fits", "fits", fit},
               {"max_batch", "largest batch that fits", b_max, kCount},
               {"t_kv_s", "t_kv (KV read)", s.t_kv_s, "s"},
               {"t_params_s", "t_params (weight read)", s.t_params_s, "s"},
               {"t_flops_s", "t_flops (MLP and projections)", s.t_flops_s, "s"},
               {"step_s", sys ? "step = t_kv + max(..., comms)" : "step = t_kv + max(...)", s.step_s, "s"},
               {"bound", "bound", std::string(bound(s))}};
  if (sys) {
    r.outputs.insert(r.outputs.end() - 2,
                     {"t_comms_s", fmt::format("t_comms ({}{} collectives)", sys->fast_name, sys->slow.groups > 1 ? " + " + sys->slow.name : ""), s.t_comms_s, "s",
                      fmt::format("({} × {} per step, {} hops each{})", format_number(s.comms_collectives),
                                  format_quantity(s.comms_bytes, "B"), format_number(s.comms_hops),
                                  s.comms_latency_bound ? ", latency-bound" : "")});
    r.outputs.push_back({"comms_bytes", "", s.comms_bytes, "B"});
    r.outputs.push_back({"comms_collectives", "", s.comms_collectives, kCount});
  }
  if (fit) {
    r.outputs.push_back({"tokens_per_s", "tokens/s", s.tokens_per_s});
    r.outputs.push_back({"tokens_per_s_per_chip", "tokens/s per chip", s.tokens_per_s_per_chip});
  } else {
    r.outputs.push_back({"", "tokens/s", std::string("none: weights + KV exceed the HBM")});
  }
  r.outputs.insert(r.outputs.end(), {
               {"critical_batch", "compute-bound MLP above batch", critical_batch(in)},
               {"min_chips", "fewest chips (weights + KV)", chips_needed, kCount},
               {"min_slice", "smallest slice", slice_text}});
  if (!a.decode_len.empty() && fit)
    r.outputs.push_back({"qps_per_chip", "queries/s per chip", qps_per_chip(s, parse_size("--decode-len", a.decode_len))});
  if (!a.prefill_len.empty()) {
    const double mfu = check::number("--mfu", a.mfu);
    const double P = parse_size("--prefill-len", a.prefill_len);
    const auto p = for_option("--prefill-len/--mfu", [&] { return prefill(in, P, mfu); });
    r.outputs.push_back({"prefill_s", "prefill of one prompt", p.t_s, "s"});
    r.outputs.push_back({"prefill_flops", "", p.flops, "FLOPs"});
  }
  if (a.frontier) {
    if (b_max > kMaxFrontierPoints)
      check::fail(check::subject("--frontier", a.context),
                     fmt::format("{} batches fit at this context, more than the {} points the frontier prints; give a "
                                 "longer context or fewer chips",
                                 format_number(b_max), format_number(kMaxFrontierPoints)));
    const auto points = frontier(in, T, kMaxFrontierPoints, sys ? &*sys : nullptr);
    auto& f = r.extra["frontier"] = nlohmann::json::array();
    r.tail = fmt::format("\n  {:>8} {:>12} {:>18} {}\n", "batch", "step", "tokens/s/chip", "Pareto");
    for (const auto& p : points) {
      require_finite("a frontier point", p.step_s * p.tokens_per_s_per_chip, inputs);
      f.push_back({{"batch", count_json(p.batch)}, {"step_s", p.step_s}, {"tokens_per_s_per_chip", p.tokens_per_s_per_chip},
                   {"pareto", p.pareto}});
      r.tail += fmt::format("  {:>8} {:>12} {:>18} {}\n", format_number(p.batch), format_quantity(p.step_s, "s"),
                            format_number(p.tokens_per_s_per_chip), p.pareto ? "*" : "");
    }
  }
  emit(r, a.json, inputs);
}

}  // namespace

void add_serve(CLI::App& app) {
  auto a = std::make_shared<Args>();
  auto* sub = app.add_subcommand("serve", "decode step time, memory and throughput of a model on a slice (§7, §8)");
  add_name(sub, "--model", a->model, "a preset (see `scaling models`)", [](const std::string& t) { scaling::model(t); });
  add_path(sub, "--config", a->config, "a HuggingFace config.json (llama, mistral, mixtral, gemma)");
  add_chip_options(sub, a->chip);
  sub->add_option("--slice", a->slice, "slice shape, e.g. 4x4 (or give --chips)")->check(shape_check("--slice"));
  sub->add_option("--chips", a->chips,
                  "number of chips, or auto: the smallest slice (GPUs: node) that holds weights + KV (or give --slice)")
      ->check(CLI::Validator(
          [](std::string& t) { return t == "auto" ? std::string() : size_check("--chips", limits::kMaxChips)(t); },
          "N|auto"));
  add_size(sub, "--batch", a->batch, "B: sequences decoded together")->required();
  add_size(sub, "--context", a->context, "T: KV entries each sequence reads per step")->required();
  const auto dtype = [](const std::string& t) { scaling::parse_dtype(t); };
  add_name(sub, "--weights", a->weights, "dtype of the stored weights (bf16, int8, int4, …)", dtype)->capture_default_str();
  add_name(sub, "--kv", a->kv, "dtype of the KV cache (bf16, int8, int4, …)", dtype)->capture_default_str();
  add_name(sub, "--compute", a->compute, "dtype of the FLOPs: bf16 or int8 (picks the chip's peak)", dtype)
      ->capture_default_str();
  add_size(sub, "--decode-len", a->decode_len, "G: tokens decoded per request (adds qps_per_chip)");
  add_size(sub, "--prefill-len", a->prefill_len, "P: prompt tokens of one prefill (with --mfu: adds prefill_s)");
  add_fraction(sub, "--mfu", a->mfu, "model FLOPs utilisation of the prefill, in [1e-6, 1]");
  sub->add_flag("--frontier", a->frontier, "latency and throughput per chip for every batch that fits, Pareto set marked");
  sub->add_flag("--json", a->json, "print one JSON object, SI units");
  run_when_chosen(sub, [a] { run(*a); });
}

}  // namespace cli
