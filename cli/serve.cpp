// `scaling serve`: the §7.1.5 decode-step model for a model on a slice — step time and its terms, memory,
// the largest batch, the smallest slice, and with --frontier every batch's latency and throughput.
#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "scaling/base/format.hpp"
#include "scaling/cost/frontier.hpp"
#include "scaling/cost/inference.hpp"
#include "scaling/hardware/topology.hpp"
#include "scaling/model/presets.hpp"

namespace cli {

namespace {
// More frontier points than this would print millions of lines: ask for a longer context or a smaller slice.
constexpr double kMaxFrontierPoints = 1e6;

scaling::Dtype storage_dtype(const std::string& option, const std::string& text) {
  return for_option(option, [&] { return scaling::parse_dtype(text); });
}
}  // namespace

void run_serve(const ServeArgs& a) {
  using namespace scaling;
  const TransformerConfig cfg = resolve_model("serve", a.model, a.config);
  if (a.slice.empty() == a.chips.empty())
    throw UsageError(a.slice.empty() ? "serve: give --slice AxB[xC] or --chips N" : "serve: give --slice or --chips, not both");
  if (a.prefill_len.empty() != a.mfu.empty())
    throw UsageError("serve: --prefill-len and --mfu go together");
  const Chip c = resolve_chip(a.chip);
  const double n = a.slice.empty() ? parse_size("--chips", a.chips)
                                   : chips_in(for_option("--slice", [&] { return parse_shape(a.slice); }));
  const double B = parse_size("--batch", a.batch), T = parse_size("--context", a.context);
  InferenceDtypes d{storage_dtype("--weights", a.weights), storage_dtype("--kv", a.kv), storage_dtype("--compute", a.compute)};
  if (d.compute != Dtype::bf16 && d.compute != Dtype::int8)
    throw std::invalid_argument("--compute '" + a.compute + "': must be bf16 or int8");
  for_option("--compute", [&] { return peak_flops_per_s(c, d.compute); });
  const DecodeInputs in = for_option(a.slice.empty() ? "--chips" : "--slice", [&] { return decode_inputs(cfg, c, n, d); });
  if (!std::isfinite(B * T * in.kv_bytes_per_token))
    throw std::invalid_argument("--batch " + a.batch + " × --context " + a.context + ": the KV cache's bytes overflow");
  const DecodeStep s = decode_step(in, B, T);
  const double chips_needed = min_chips(in, B, T);
  const auto slice = smallest_slice(c, chips_needed);
  const std::string slice_text = slice ? shape_text(*slice) : "none";
  const double b_max = max_batch(in, T);

  nlohmann::json out = {{"model", cfg.name},
                        {"chip", c.name},
                        {"chips", n},
                        {"batch", B},
                        {"context", T},
                        {"weights", name(d.weights)},
                        {"kv", name(d.kv)},
                        {"compute", name(d.compute)},
                        {"param_bytes", in.param_bytes},
                        {"kv_bytes_per_token", in.kv_bytes_per_token},
                        {"kv_bytes", s.kv_bytes},
                        {"total_bytes", in.param_bytes + s.kv_bytes},
                        {"hbm_bytes", hbm_bytes(in)},
                        {"fits", fits(in, B, T)},
                        {"max_batch", b_max},
                        {"t_kv_s", s.t_kv_s},
                        {"t_params_s", s.t_params_s},
                        {"t_flops_s", s.t_flops_s},
                        {"step_s", s.step_s},
                        {"tokens_per_s", s.tokens_per_s},
                        {"tokens_per_s_per_chip", s.tokens_per_s_per_chip},
                        {"bound", bound(s)},
                        {"critical_batch", critical_batch(in)},
                        {"min_chips", chips_needed},
                        {"min_slice", slice_text}};
  if (!a.decode_len.empty()) out["qps_per_chip"] = qps_per_chip(s, parse_size("--decode-len", a.decode_len));
  if (!a.prefill_len.empty()) {
    const double mfu = parse_positive("--mfu", a.mfu);
    if (mfu > 1) throw std::invalid_argument("--mfu '" + a.mfu + "': must be at most 1");
    const double P = parse_size("--prefill-len", a.prefill_len);
    const auto p = for_option("--prefill-len/--mfu", [&] { return prefill(in, P, mfu); });
    out["prefill_s"] = p.t_s;
    out["prefill_flops"] = p.flops;
  }
  std::vector<FrontierPoint> points;
  if (a.frontier) {
    if (b_max > kMaxFrontierPoints)
      throw std::invalid_argument("--frontier: " + format_number(b_max) + " batches fit at --context " + a.context +
                                  ", more than the " + format_number(kMaxFrontierPoints) +
                                  " points the frontier prints; give a longer context or fewer chips");
    points = frontier(in, T, kMaxFrontierPoints);
  }

  if (a.json) {
    if (a.frontier) {
      auto& f = out["frontier"] = nlohmann::json::array();
      for (const auto& p : points)
        f.push_back({{"batch", p.batch}, {"step_s", p.step_s}, {"tokens_per_s_per_chip", p.tokens_per_s_per_chip},
                     {"pareto", p.pareto}});
    }
    std::cout << out.dump(2) << "\n";
    return;
  }

  auto row = [](const char* what, const std::string& value) { fmt::print("  {:<30} {}\n", what, value); };
  fmt::print("{} on {} × {} (weights {}, KV {}, compute {}): batch {}, context {}\n", cfg.name, format_number(n),
             c.display, name(d.weights), name(d.kv), name(d.compute), format_number(B), format_number(T));
  row("parameters", format_quantity(in.param_bytes, "B"));
  row("KV per token", format_quantity(in.kv_bytes_per_token, "B"));
  row("KV of the batch", format_quantity(s.kv_bytes, "B"));
  row("weights + KV", format_quantity(in.param_bytes + s.kv_bytes, "B"));
  row("HBM of the slice", format_quantity(hbm_bytes(in), "B"));
  row("fits", fits(in, B, T) ? "yes" : "no");
  row("largest batch that fits", format_number(b_max));
  row("t_kv (KV read)", format_quantity(s.t_kv_s, "s"));
  row("t_params (weight read)", format_quantity(s.t_params_s, "s"));
  row("t_flops (MLP and projections)", format_quantity(s.t_flops_s, "s"));
  row("step = t_kv + max(...)", format_quantity(s.step_s, "s"));
  row("bound", bound(s));
  row("tokens/s", format_number(s.tokens_per_s));
  row("tokens/s per chip", format_number(s.tokens_per_s_per_chip));
  row("compute-bound MLP above batch", format_number(critical_batch(in)));
  row("fewest chips (weights + KV)", format_number(chips_needed));
  row("smallest slice", slice_text);
  if (out.contains("qps_per_chip")) row("queries/s per chip", format_number(out["qps_per_chip"].get<double>()));
  if (out.contains("prefill_s")) row("prefill of one prompt", format_quantity(out["prefill_s"].get<double>(), "s"));
  if (a.frontier) {
    fmt::print("\n  {:>8} {:>12} {:>18} {}\n", "batch", "step", "tokens/s/chip", "Pareto");
    for (const auto& p : points)
      fmt::print("  {:>8} {:>12} {:>18} {}\n", format_number(p.batch), format_quantity(p.step_s, "s"),
                 format_number(p.tokens_per_s_per_chip), p.pareto ? "*" : "");
  }
}

}  // namespace cli
