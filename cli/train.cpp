// `scaling train`: memory and step time of one training layout (cost/planner.hpp's step_terms, the one
// step model `scaling plan` also uses), the whole model's memory, and the book's bounds: §5's on a TPU slice,
// §12.5's on a GPU cluster.
#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "output.hpp"
#include "scaling/base/format.hpp"
#include "scaling/cost/gpu_rooflines.hpp"
#include "scaling/cost/planner.hpp"
#include "scaling/cost/training.hpp"
#include "scaling/model/presets.hpp"
#include "step_options.hpp"

namespace cli {

void run_train(const TrainArgs& a) {
  using namespace scaling;
  const TransformerConfig cfg = resolve_model("train", a.model, a.config);
  const Chip chip = resolve_chip(a.chip);
  const System system = resolve_system("train", chip, a.machine);
  const double n = chips(system), pods = system.slow.groups;
  const double B = parse_size("--batch-tokens", a.batch_tokens);
  const double mfu = parse_positive("--mfu", a.mfu);  // its range, [1e-6, 1], is the option's check (train_plan.cpp)
  const double tokens = a.tokens.empty() ? 0 : parse_size("--tokens", a.tokens);
  TrainingSetup s = resolve_setup(a.step);
  const Layout base = resolve_layout(a.step, cfg);
  s.saved = saved_elements(base.saved, cfg);  // the whole model's activations by the layout's rule
  const CostModel cost_model = resolve_cost_model(a.step, a.machine, system);
  // No degree given: every chip a data replica with ZeRO-3 (FSDP over the whole machine), unless the
  // calibrated model's whole-sequence rule refuses that; then default_degrees' split, and it says so.
  Degrees d = resolve_degrees(a.step, n);
  check_given_degrees(a.step, a.machine, system, cfg, cost_model);  // each degree typed against its rule
  check_virtual_stages(a.step, d, base, cfg.layers);  // before a default layout: --vp needs --pp either way
  // The batch against --seq (after the option and degree rules): at least one sequence, whole ones when
  // calibrated; the default layout and the data degree's rules count those sequences.
  check_batch(B, a.step, cost_model);
  std::string default_layout;
  if (!d.given) {
    const auto chosen = default_degrees(cfg, system, base, B, a.step, cost_model);
    d = chosen.degrees;
    default_layout = chosen.why;
  }

  check_data_degree(a.step, d, base.microbatches, B, resolve_seq(a.step), cost_model);

  const auto p = param_counts(cfg);
  const auto m = for_option("--batch-tokens", [&] { return training_memory(cfg, B, s); });
  const double flops_per_token = six_active_flops_per_token(cfg);
  // A layout the batch cannot take (more replicas × microbatches than tokens) is refused naming the inputs.
  Planned step = for_layout(a.step, d, step_inputs(a.chip, a.machine, a.batch_tokens), [&] {
    return best_placement(cfg, system, d.data, d.tensor, d.pipeline, base, {B, resolve_seq(a.step)}, cost_model, s);
  });
  as_timed(step, cost_model);  // the book's step: ZeRO-3, one microbatch, whatever --zero and --microbatches say
  const scaling::ChipCalibration rates = scaling::chip_calibration(chip);
  const auto ignored = ignored_options(a.step, cost_model, {base.saved.recompute != Remat::none, &step.layout, &rates},
                                       chip_figures_given(a.chip));
  const double per_chip = step.terms.memory.total;

  nlohmann::json j{{"total_params", count_json(p.total)},
                   {"active_params", count_json(p.active)},
                   {"param_bytes", m.params},
                   {"grad_bytes", m.grads},
                   {"optimizer_bytes", m.optimizer},
                   {"master_bytes", m.master},
                   {"activation_bytes", m.activations},
                   {"total_bytes", m.total},
                   {"chips", count_json(n)},
                   {"hardware", system.name},
                   {"fast_network", system.fast_name},
                   {"slow_network", system.slow.name},
                   // Chips are whole (as serve's min_chips): ⌈total_bytes / HBM per chip⌉, the chips whose HBM
                   // together holds the whole model's state and the whole batch's activations at once. What it
                   // assumes (README): no microbatching and no pipeline schedule (every token's activations
                   // live together), everything sharded evenly over the chips, no buffers or allocator
                   // reserve. A §5-style count, not the layout's: the layout's own answer is bytes_per_chip
                   // and fits, and `scaling plan` finds the layouts that fit.
                   {"min_chips", count_json(std::ceil(m.total / chip.hbm_bytes))},
                   {"fits", per_chip <= chip.hbm_bytes},
                   {"flops_per_token", flops_per_token},
                   {"cost_model", to_string(cost_model)},
                   {"ignored_options", ignored},
                   {"tie_break", kTieRule}};
  // The layout and its terms: the same keys and values as `scaling plan`'s best with the same flags.
  const nlohmann::json layout_terms = step_json(step, system, cost_model, cfg);
  for (const auto& [key, value] : layout_terms.items()) j[key] = value;
  if (!default_layout.empty()) j["default_layout"] = default_layout;
  if (cost_model == CostModel::calibrated) j["calibration"] = calibration_json(chip);
  std::vector<std::string> notes;
  if (const std::string positions = positions_note(cfg, resolve_seq(a.step), seq_text(a.step)); !positions.empty())
    notes.push_back(positions);
  if (const std::string bubble = bubble_note(step); !bubble.empty()) notes.push_back(bubble);
  if (!notes.empty()) j["notes"] = notes_json(notes);
  if (!a.tokens.empty()) {
    const double total_flops = flops_per_token * tokens;
    if (!std::isfinite(total_flops))
      throw std::invalid_argument("--tokens '" + escape_for_message(a.tokens) + "': the total FLOPs overflow a double");
    j["total_flops"] = total_flops;
    j["time_s"] = training_time_s(total_flops, n, chip.bf16_flops_per_s, mfu);
    // The same tokens at the step this command models: whole steps of the batch (the last one may be
    // partly filled), step_s each.
    const double steps = std::ceil(tokens / B);
    j["steps"] = count_json(steps);
    j["time_at_step_s"] = steps * step.terms.step_s;
  }
  j["batch_per_chip"] = B / n;

  if (!is_gpu(chip) && chip.ici_bidi_bytes_per_s > 0) {
    // §5.1's bounds in the book's own terms (one slice's axes longer than one; --chips N counts as one).
    double n_axes = 0;
    for (const auto& axis : system.fast) n_axes += axis.size > 1 ? 1 : 0;
    n_axes = std::max(1.0, n_axes);
    const double alpha = ici_alpha(chip);
    const double m_x_default = std::max(1.0, n_axes - 1);  // §5.1.4: M_X·M_Y = 2 on a 3-D mesh
    j["alpha"] = alpha;
    j["n_axes"] = count_json(n_axes);
    j["fsdp_min_batch_per_chip"] = dp_min_batch_per_chip(alpha, n_axes);
    j["tp_max_degree"] = tp_max_degree(alpha, cfg.d_ff, n_axes);
    j["x_opt"] = x_opt(B / pods, n / pods, cfg.d_ff, m_x_default, 1);  // within one pod
    if (pods > 1) {
      // §5.1.6: pure data parallelism across pods over DCN.
      const double pod_dcn = system.slow.bytes_per_s * chips_per_group(system);
      j["batch_per_pod"] = B / pods;
      if (pod_dcn > 0)
        j["dcn_min_batch_per_pod"] = dcn_min_batch_per_pod(chips_per_group(system) * chip.bf16_flops_per_s, pod_dcn);
    }
  }

  if (system.fast_name == "NVLink" && system.fast[0].bytes_per_s > 0 && system.slow.bytes_per_s > 0) {
    // §12.5's rooflines on this GPU cluster (cost/gpu_rooflines.hpp; perfect overlap and peak FLOPs, as the
    // chapter): the per-GPU batch above which data parallelism / ZeRO is compute-bound over the network it
    // crosses (NVLink in one node, the node's InfiniBand egress past one; × E/k for an MoE), and the largest
    // tensor degree that stays compute-bound, F·W/C, inside a node and across nodes.
    const GpuRates r = gpu_rates(system);
    const bool across = system.slow.groups > 1;
    const bool moe = is_moe(cfg);
    const double f = moe && cfg.expert_d_ff > 0 ? cfg.expert_d_ff : cfg.d_ff;
    j["gpu_dp_min_batch_per_gpu"] = gpu_dp_critical_tokens_per_gpu(r, across, moe ? cfg.experts : 1,
                                                                    moe ? cfg.experts_per_token : 1);
    j["gpu_tp_max_degree_in_node"] = gpu_tp_max_degree(r, f, false);
    j["gpu_tp_max_degree_across_nodes"] = gpu_tp_max_degree(r, f, true);
  }

  // Nothing non-finite reaches the output (a chip file's 1e-300 figures, a huge batch): the JSON holds every
  // number the table prints, so checking it covers both.
  require_finite_json(j, step_inputs(a.chip, a.machine, a.batch_tokens) +
                             given({{"--tokens", a.tokens}, {"--mfu", a.mfu}}).insert(0, ", "));
  if (a.json) {
    std::cout << json_text(j) << "\n";
    return;
  }
  fmt::print("{} on {} ({} cost model)\n", model_title(a.model, a.config), escape_for_message(system.name), to_string(cost_model));
  if (!ignored.empty()) fmt::print("{}\n", ignored_note(ignored, cost_model));
  if (cost_model == CostModel::calibrated) fmt::print("{}\n", calibration_note(chip));
  for (const auto& note : notes) fmt::print("{}\n", escape_for_message(note, 400));
  auto row = [&](const std::string& what, const std::string& value) { fmt::print("  {:<44} {:>18}\n", what, value); };
  auto bytes = [&](const char* key) { return format_quantity(j[key].get<double>(), "B"); };
  row("parameters (total / active)", format_number(p.total) + " / " + format_number(p.active));
  row("weights", bytes("param_bytes"));
  row("gradients", bytes("grad_bytes"));
  row("optimizer state", bytes("optimizer_bytes"));
  row("fp32 master copy", bytes("master_bytes"));
  // The rule in the value column: a long sum (5D+3F+2NH+2KH) would push a label past its column.
  row("activations saved per layer per token", to_string(s.saved));
  row("activations", bytes("activation_bytes"));
  row("total (all the batch's activations at once)", bytes("total_bytes"));
  // min_chips' assumptions are in its label: the README says why it is not the layout's count.
  row("chips whose HBM holds that total", format_number(j["min_chips"].get<double>()));
  row("FLOPs per token (6 × active)", format_quantity(flops_per_token, "FLOPs"));
  if (j.contains("time_s")) {
    row("training time at the modelled step", format_number(j["time_at_step_s"].get<double>() / 86400) + " days (" +
                                                  format_number(j["steps"].get<double>()) + " steps)");
    row("training time at --mfu " + a.mfu,
        format_number(j["time_s"].get<double>() / 86400) + " days");
  }
  row("batch per chip", format_number(B / n));
  const auto& [l, t] = step;
  // The scope as the JSON's zero_scope: on one slice or node "all" (the same either way).
  // ZeRO-0 shards nothing: no scope printed.
  fmt::print("layout: dp {} × tp {} × pp {}, {} microbatch{}, ZeRO-{}{}, saved {} (axes {})\n",
             data_degree(l), tensor_degree(l), pipeline_degree(l), l.microbatches, l.microbatches == 1 ? "" : "es",
             l.zero, l.zero == 0 ? std::string() : " over " + j["zero_scope"].get<std::string>(),
             label(l.saved), describe_axes(step, system));
  if (!default_layout.empty()) fmt::print("  ({})\n", default_layout);
  // The parts of memory_per_chip, each printed (the calibrated ones where the model has them): they sum to
  // the total.
  const auto& mp = j["memory_per_chip"];
  auto part = [&](const char* what, const char* key) { row(what, format_quantity(mp[key].get<double>(), "B")); };
  part("per chip: weights", "params");
  part("per chip: gradients", "grads");
  part("per chip: optimizer state", "optimizer");
  part("per chip: fp32 master copy", "master");
  part("per chip: activations in flight", "activations");
  if (cost_model == CostModel::calibrated) {
    part("per chip: comm buffers, ZeRO-3 gathers", "buffers");
    if (mp["allocator_reserve"].get<double>() > 0) part("per chip: allocator reserve (fragmentation)", "allocator_reserve");
  }
  row("per chip: total", format_quantity(per_chip, "B") + (j["fits"].get<bool>() ? " (fits)" : " (does not fit)"));
  const bool cal = cost_model == CostModel::calibrated;
  if (cal) {
    // Where the calibrated step goes (cost/calibrated.hpp); the five summary lines below add up to it.
    const auto& c = t.calibrated;
    // A switch the layout has nothing for ("-"): a schedule without a pipeline, sequence parallelism and TP
    // overlap without a tensor group, DP overlap without data replicas (as plan's table prints them).
    const bool pipe = pipeline_degree(l) > 1, tensor = tensor_degree(l) > 1, data = data_degree(l) > 1;
    fmt::print("  calibrated (schedule {}, {} virtual, sp {}, tp-overlap {}, dp-overlap {}, {} attention):\n",
               pipe ? to_string(l.schedule) : "-", l.virtual_stages,
               tensor ? (l.sequence_parallel ? "yes" : "no") : "-", tensor ? to_string(l.tp_overlap) : "-",
               data ? (l.dp_overlap ? "yes" : "no") : "-", to_string(l.attention));
    row("  matmuls at " + format_number(100 * c.matmul_efficiency, 3) + "% of peak", format_quantity(c.t_matmul_s, "s"));
    row("  attention core", format_quantity(c.t_attention_s, "s"));
    row("  recompute", format_quantity(c.t_recompute_s, "s"));
    row("  norms, adds, activations, softmax", format_quantity(c.t_vector_s, "s"));
    row("  optimizer update", format_quantity(c.t_optimizer_s, "s"));
    row("  tensor-parallel collectives (exposed)", format_quantity(c.t_tp_s, "s"));
    row("  pipeline sends", format_quantity(c.t_pipeline_send_s, "s"));
    row("  data-parallel reduce (exposed)", format_quantity(c.t_dp_exposed_s, "s"));
    // Every collective's latency (tensor, pipeline and data), counted inside the lines above.
    row("  latency of all collectives, in the above", format_quantity(c.t_latency_s, "s"));
  }
  row(cal ? "step: math (achieved rates)" : "step: math at peak", format_quantity(t.t_math_s, "s"));
  row(cal ? "step: HBM (vector work, optimizer)" : "step: HBM", format_quantity(t.t_hbm_s, "s"));
  row("step: pipeline bubble", format_quantity(t.t_bubble_s, "s"));
  row("step: " + system.fast_name, format_quantity(t.t_ici_s, "s"));
  row("step: " + system.slow.name, format_quantity(t.t_dcn_s, "s"));
  row("step", format_quantity(t.step_s, "s") + " (" + bound_label(t.bound, system) + "-bound)");
  if (cost_model == CostModel::book) {
    // Not an MFU: §5.1.4's step and FLOPs are the two MLP matmuls' only (mlp_flops_utilisation).
    row("MLP-only FLOP utilisation (§5.1.4, not MFU)", format_number(100 * t.mfu, 3) + "%");
    fmt::print("note: the book model's step and utilisation count only the MLP matmuls' FLOPs (§5.1.4), so its step "
               "can be shorter than the ideal model's lower bound, and its utilisation is not the 6N MFU of the other "
               "models\n");
  } else {
    row("MFU at that step", format_number(100 * t.mfu, 3) + "%");
  }
  if (j.contains("mfu_record")) {
    const auto& rec = j["mfu_record"];
    row("highest MFU published on this chip", format_number(100 * rec["mfu"].get<double>(), 3) + "%");
    if (rec["exceeded"].get<bool>())
      fmt::print("note: the predicted MFU is above the highest a published run reached on this chip ({}): "
                 "treat the step as optimistic\n", rec["source"].get<std::string>());
  }
  if (j.contains("alpha")) {
    row("alpha = C / W_ici", format_number(j["alpha"].get<double>()));
    row("§5.1.2: FSDP compute-bound above (per chip)", format_number(j["fsdp_min_batch_per_chip"].get<double>()));
    row("§5.1.3: TP compute-bound up to degree", format_number(j["tp_max_degree"].get<double>()));
    row("§5.1.4: X_opt (the comms minimum)", format_number(j["x_opt"].get<double>()));
  }
  if (j.contains("gpu_dp_min_batch_per_gpu")) {
    // The network the data-parallel reduce crosses: NVLink in one node, InfiniBand past one.
    row("§12.5.1: DP/ZeRO compute-bound above",
        format_number(j["gpu_dp_min_batch_per_gpu"].get<double>()) + " per GPU (" +
            (system.slow.groups > 1 ? system.slow.name : system.fast_name) + ")");
    row("§12.5.2: TP degree bound, in a node", format_number(j["gpu_tp_max_degree_in_node"].get<double>()));
    row("§12.5.2: TP degree bound, across nodes", format_number(j["gpu_tp_max_degree_across_nodes"].get<double>()));
  }
  if (j.contains("dcn_min_batch_per_pod"))
    row("§5.1.6: DCN compute-bound above (per pod)", format_number(j["dcn_min_batch_per_pod"].get<double>()));
}

}  // namespace cli
