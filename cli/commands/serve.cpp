// `scaling serve`: the §7.1.5 decode-step model for a model on a slice — step time and its terms, memory,
// the largest batch, the smallest slice, and with --frontier every batch's latency and throughput.
#include <fmt/format.h>

#include <cmath>
#include <memory>

#include "../options.hpp"
#include "../output.hpp"
#include "modules.hpp"
#include "scaling/base/format.hpp"
#include "scaling/base/validate.hpp"
#include "scaling/cost/frontier.hpp"
#include "scaling/cost/inference.hpp"
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

void run(const Args& a) {
  using namespace scaling;
  const TransformerConfig cfg = resolve_model("serve", a.model, a.config);
  if (a.slice.empty() == a.chips.empty())
    throw UsageError(a.slice.empty() ? "serve: give --slice AxB[xC] or --chips N" : "serve: give --slice or --chips, not both");
  if (a.prefill_len.empty() != a.mfu.empty()) throw UsageError("serve: --prefill-len and --mfu go together");
  const Chip c = resolve_chip(a.chip);
  // The slice is checked against the chip exactly as collective does it (slice_on_chip).
  const double n = a.slice.empty() ? parse_size("--chips", a.chips, limits::kMaxChips)
                                   : chips(slice_on_chip(c, "--slice", a.slice));
  const double B = parse_size("--batch", a.batch), T = parse_size("--context", a.context);
  InferenceDtypes d{parse_dtype(a.weights), parse_dtype(a.kv), parse_dtype(a.compute)};
  if (d.compute != Dtype::bf16 && d.compute != Dtype::int8)
    check::fail(check::subject("--compute", a.compute), "must be bf16 or int8");
  for_option("--compute", [&] { return peak_flops_per_s(c, d.compute); });
  const DecodeInputs in = for_option(a.slice.empty() ? "--chips" : "--slice", [&] { return decode_inputs(cfg, c, n, d); });
  auto options = chip_overrides(a.chip);
  options.insert(options.begin(), {{"--model", a.model}, {"--config", a.config}, {"--slice", a.slice},
                                   {"--chips", a.chips}, {"--batch", a.batch}, {"--context", a.context}});
  const std::string inputs = given(options);
  require_finite("the KV cache's bytes", B * T * in.kv_bytes_per_token, inputs);
  const DecodeStep s = decode_step(in, B, T);
  const double chips_needed = min_chips(in, B, T);
  const auto slice = smallest_slice(c, chips_needed);
  const std::string slice_text = slice ? shape_text(*slice) : "none";
  const double b_max = max_batch(in, T);

  Report r;
  r.label_width = 30;
  r.heading = fmt::format("{} on {} × {} (weights {}, KV {}, compute {}): batch {}, context {}", cfg.name,
                          format_number(n), c.display, name(d.weights), name(d.kv), name(d.compute), format_number(B),
                          format_number(T));
  r.outputs = {{"model", "", cfg.name},
               {"chip", "", c.name},
               {"chips", "", n, kCount},
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
               {"fits", "fits", fits(in, B, T)},
               {"max_batch", "largest batch that fits", b_max, kCount},
               {"t_kv_s", "t_kv (KV read)", s.t_kv_s, "s"},
               {"t_params_s", "t_params (weight read)", s.t_params_s, "s"},
               {"t_flops_s", "t_flops (MLP and projections)", s.t_flops_s, "s"},
               {"step_s", "step = t_kv + max(...)", s.step_s, "s"},
               {"bound", "bound", std::string(bound(s))},
               {"tokens_per_s", "tokens/s", s.tokens_per_s},
               {"tokens_per_s_per_chip", "tokens/s per chip", s.tokens_per_s_per_chip},
               {"critical_batch", "compute-bound MLP above batch", critical_batch(in)},
               {"min_chips", "fewest chips (weights + KV)", chips_needed, kCount},
               {"min_slice", "smallest slice", slice_text}};
  if (!a.decode_len.empty())
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
    const auto points = frontier(in, T, kMaxFrontierPoints);
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
  add_size(sub, "--chips", a->chips, "number of chips (or give --slice)", limits::kMaxChips);
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
