// `scaling train`: memory, time and the §5 bounds for training a model on a slice (cost/training.hpp).
#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "commands.hpp"
#include "scaling/base/format.hpp"
#include "scaling/cost/training.hpp"
#include "scaling/model/presets.hpp"

namespace cli {

void run_train(const TrainArgs& a) {
  using namespace scaling;
  const TransformerConfig cfg = resolve_model("train", a.model, a.config);
  if (a.slice.empty() == a.chips.empty())
    throw UsageError(a.slice.empty() ? "train: --slice or --chips is required" : "train: give --slice or --chips, not both");
  if (!a.pods.empty() && a.slice.empty()) throw UsageError("train: --pods needs --slice");
  if (a.fsdp.empty() != a.tp.empty()) throw UsageError("train: --fsdp and --tp go together");

  const Chip chip = resolve_chip(a.chip);

  // The hardware: a slice (times pods) or a plain chip count, and the slice axes longer than one.
  std::vector<int> shape;
  double chips = 0, pods = 1, n_axes = 1;
  std::optional<Slice> slice;
  if (!a.slice.empty()) {
    slice = for_option("--slice", [&] { return make_slice(chip, parse_shape(a.slice)); });
    shape = slice->shape;
    if (!a.pods.empty()) pods = parse_size("--pods", a.pods);
    chips = scaling::chips(*slice) * pods;
    n_axes = 0;
    for (int n : shape) n_axes += n > 1 ? 1 : 0;
    n_axes = std::max(1.0, n_axes);
  } else {
    chips = parse_size("--chips", a.chips);
  }
  const double B = parse_size("--batch-tokens", a.batch_tokens);
  const double mfu = parse_positive("--mfu", a.mfu);
  if (mfu > 1) throw std::invalid_argument("--mfu '" + a.mfu + "': must be in (0, 1]");

  TrainingSetup s;
  s.weights = for_option("--weights", [&] { return parse_dtype(a.weights); });
  s.activations = s.weights;  // activations are kept in the compute dtype, which the weights set
  if (a.grads == "none") {
    s.grads = std::nullopt;
  } else {
    s.grads = for_option("--grads", [&] { return parse_dtype(a.grads); });
  }
  s.optimizer = for_option("--optimizer", [&] { return parse_optimizer(a.optimizer); });
  if (a.master != "none" && a.master != "fp32")
    throw std::invalid_argument("--master '" + escape_for_message(a.master) + "': expected none or fp32");
  s.fp32_master = a.master == "fp32";
  s.saved = for_option("--saved", [&] { return parse_saved_rule(a.saved); });

  const auto p = param_counts(cfg);
  const auto m = for_option("--batch-tokens", [&] { return training_memory(cfg, B, s); });
  const double peak = chip.bf16_flops_per_s;
  const double flops_per_token = six_active_flops_per_token(cfg);
  const bool has_ici = chip.ici_bidi_bytes_per_s > 0;

  nlohmann::json j{{"total_params", p.total},
                   {"active_params", p.active},
                   {"param_bytes", m.params},
                   {"grad_bytes", m.grads},
                   {"optimizer_bytes", m.optimizer},
                   {"master_bytes", m.master},
                   {"activation_bytes", m.activations},
                   {"total_bytes", m.total},
                   {"chips", chips},
                   {"min_chips", m.total / chip.hbm_bytes},
                   {"bytes_per_chip", m.total / chips},
                   {"fits", m.total / chips <= chip.hbm_bytes},
                   {"flops_per_token", flops_per_token},
                   {"saved", to_string(s.saved)}};
  if (!a.tokens.empty()) {
    const double total_flops = flops_per_token * parse_size("--tokens", a.tokens);
    if (!std::isfinite(total_flops))
      throw std::invalid_argument("--tokens '" + escape_for_message(a.tokens) + "': the total FLOPs overflow a double");
    j["total_flops"] = total_flops;
    j["time_s"] = training_time_s(total_flops, chips, peak, mfu);
  }
  j["batch_per_chip"] = B / chips;

  if (has_ici) {
    // §5.1: the bounds, with the slice's axes (a bare --chips N counts as one axis).
    const double alpha = ici_alpha(chip);
    const double m_x_default = std::max(1.0, n_axes - 1);  // §5.1.4: M_X·M_Y = 2 on a 3-D mesh
    j["alpha"] = alpha;
    j["n_axes"] = n_axes;
    j["fsdp_min_batch_per_chip"] = dp_min_batch_per_chip(alpha, n_axes);
    j["tp_max_degree"] = tp_max_degree(alpha, cfg.d_ff, n_axes);
    j["x_opt"] = x_opt(B / pods, chips / pods, cfg.d_ff, m_x_default, 1);  // within one pod
  }
  if (slice && !a.pods.empty()) {
    // §5.1.6: pure data parallelism across pods over DCN.
    const double pod_dcn = hosts(*slice) * chip.dcn_bytes_per_s_per_host;
    j["batch_per_pod"] = B / pods;
    if (pod_dcn > 0) j["dcn_min_batch_per_pod"] = dcn_min_batch_per_pod(total_flops_per_s(*slice), pod_dcn);
  }
  if (!a.fsdp.empty()) {
    const double X = parse_size("--fsdp", a.fsdp), Y = parse_size("--tp", a.tp);
    const double per_pod = chips / pods;
    if (X * Y != per_pod)
      throw std::invalid_argument("--fsdp " + a.fsdp + " × --tp " + a.tp + " = " + format_number(X * Y) +
                                  ": must equal the " + format_number(per_pod) + " chips" +
                                  (pods > 1 ? " of one pod" : ""));
    if (!has_ici) throw std::invalid_argument("--fsdp/--tp: chip " + chip.name + " has no ICI bandwidth (give --ici-bw)");
    const AxisSplit ax = slice ? for_option("--tp " + a.tp, [&] { return split_axes(shape, Y); })
                               : AxisSplit{X > 1 ? 1.0 : 0.0, Y > 1 ? 1.0 : 0.0};
    const double W = chip.ici_bidi_bytes_per_s, b = bytes_per_element(s.weights);
    // One step at peak: every matmul FLOP of 6·active·B over the chips.
    const double t_math = flops_per_token * B / (chips * peak);
    // §5.1.2: each weight is gathered forward, gathered again and its gradient reduce-scattered backward,
    // over the X axes, its shard along Y; the ring moves (X − 1)/X of it.
    const double t_fsdp = X > 1 ? 3 * (X - 1) / X * (m.params / Y) / (W * ax.m_x) : 0;
    // §5.1.3: per layer and per sharded block (attention and MLP), In is gathered and Out reduce-scattered
    // forward, dOut gathered and dIn reduce-scattered backward: 4 collectives of the [B/X, D] activations.
    const double per_block = 4 * (Y - 1) / Y * b * (B / pods / X) * cfg.d_model;
    const double t_tp = Y > 1 ? 2 * cfg.layers * per_block / (W * ax.m_y) : 0;
    j["fsdp"] = X;
    j["tp"] = Y;
    j["m_x"] = ax.m_x;
    j["m_y"] = ax.m_y;
    j["t_math_s"] = t_math;
    j["t_fsdp_s"] = t_fsdp;
    j["t_tp_s"] = t_tp;
    j["compute_bound"] = t_math >= std::max(t_fsdp, t_tp);
    j["compute_bound_if_summed"] = t_math >= t_fsdp + t_tp;
  }

  if (a.json) {
    std::cout << j.dump(2) << "\n";
    return;
  }
  fmt::print("{} on {} {}\n", a.model.empty() ? a.config : a.model, format_number(chips), chip.display);
  auto row = [&](const char* what, const std::string& value) { fmt::print("  {:<40} {:>18}\n", what, value); };
  auto bytes = [&](const char* key) { return format_quantity(j[key].get<double>(), "B"); };
  row("parameters (total / active)", format_number(p.total) + " / " + format_number(p.active));
  row("weights", bytes("param_bytes"));
  row("gradients", bytes("grad_bytes"));
  row("optimizer state", bytes("optimizer_bytes"));
  row("fp32 master copy", bytes("master_bytes"));
  row(("activations (" + to_string(s.saved) + " per layer per token)").c_str(), bytes("activation_bytes"));
  row("total", bytes("total_bytes"));
  row("per chip", bytes("bytes_per_chip") + (j["fits"].get<bool>() ? " (fits)" : " (does not fit)"));
  row("chips needed for memory", format_number(j["min_chips"].get<double>()));
  row("FLOPs per token (6 × active)", format_quantity(flops_per_token, "FLOPs"));
  if (j.contains("time_s"))
    row(("training time at MFU " + a.mfu).c_str(), format_number(j["time_s"].get<double>() / 86400) + " days");
  row("batch per chip", format_number(B / chips));
  if (has_ici) {
    row("alpha = C / W_ici", format_number(j["alpha"].get<double>()));
    row("FSDP compute-bound above (per chip)", format_number(j["fsdp_min_batch_per_chip"].get<double>()));
    row("TP compute-bound up to degree", format_number(j["tp_max_degree"].get<double>()));
    row("X_opt (FSDP degree)", format_number(j["x_opt"].get<double>()));
  }
  if (j.contains("dcn_min_batch_per_pod"))
    row("DCN compute-bound above (per pod)", format_number(j["dcn_min_batch_per_pod"].get<double>()));
  if (j.contains("t_math_s")) {
    row("step: math at peak", format_quantity(j["t_math_s"].get<double>(), "s"));
    row("step: FSDP comms", format_quantity(j["t_fsdp_s"].get<double>(), "s"));
    row("step: TP comms", format_quantity(j["t_tp_s"].get<double>(), "s"));
    row("compute-bound", j["compute_bound"].get<bool>() ? "yes" : "no");
  }
}

}  // namespace cli
