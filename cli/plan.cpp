// `scaling plan`: the parallelism planner (lib/include/scaling/cost/planner.hpp) for a model on a TPU
// slice (or pods of them over DCN) or a GPU cluster, at a global batch. Given every degree (--dp/--fsdp,
// --tp, --pp, or two of them: the data degree fills the chips, the others default to 1) it evaluates that one
// layout through step_terms, at its best placement on the axes, exactly as `scaling train` does with the
// same flags. Given one degree, it searches the rest of the space with that degree fixed.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "limits.hpp"
#include "output.hpp"
#include "scaling/base/format.hpp"
#include "scaling/base/validate.hpp"
#include "scaling/cost/calibrated.hpp"
#include "scaling/cost/planner.hpp"
#include "scaling/model/presets.hpp"
#include "step_options.hpp"

namespace cli {

namespace {

// --saved: rules to try, comma-separated, each a name or a sum (parse_plan_rule for this model). Two that
// come to the same rule for the model (all and its sum) would list every layout twice: refused.
std::vector<scaling::PlanRule> parse_saved(const std::string& text, const scaling::TransformerConfig& model) {
  std::vector<scaling::PlanRule> out;
  std::vector<std::string> typed;
  size_t start = 0;
  while (true) {
    const size_t end = text.find(',', start);
    const std::string name = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    const auto rule = for_option("--saved", [&] { return scaling::parse_plan_rule(name, model); });
    for (size_t i = 0; i < out.size(); ++i)
      if (out[i].name == rule.name &&
          scaling::resolved_rule(out[i], model) == scaling::resolved_rule(rule, model))
        scaling::check::fail(scaling::check::subject("--saved", text),
                             fmt::format("'{}' and '{}' are the same rule for this model ({}): give each rule once",
                                         scaling::escape_for_message(typed[i]), scaling::escape_for_message(name),
                                         scaling::resolved_rule(rule, model)));
    out.push_back(rule);
    typed.push_back(name);
    if (end == std::string::npos) return out;
    start = end + 1;
  }
}



// The one degree given, before the search: it divides the chips and keeps its own rule (the tensor degree
// divides the heads, the pipeline at most the layers, the data degree the calibrated batch rules with one
// microbatch), and at least one split of the other chips into the two open degrees is a layout (the rules
// again, and a placement on the axes: tensor parallelism inside a slice or node). Throws
// std::invalid_argument naming the option.
void check_fixed_degree(const GivenDegrees& g, const PlanArgs& a, const scaling::PlanRequest& r) {
  using scaling::format_number;
  const double n = chips(r.system);
  const std::string named = g.text();
  const int value = std::max({g.data, g.tensor, g.pipeline});
  if (std::fmod(n, value) != 0)
    throw std::invalid_argument(fmt::format("{}: must divide the {} chips", named, format_number(n)));
  if (g.tensor > 0 && std::fmod(r.model.q_heads, g.tensor) != 0)
    throw std::invalid_argument(fmt::format("{}: tensor degree {} does not divide the {} heads", named, g.tensor,
                                            format_number(r.model.q_heads)));
  if (g.pipeline > 1 && r.cost_model == scaling::CostModel::book)
    throw std::invalid_argument(fmt::format("{}: the book's cost model has no pipeline (§5.1.4's FSDP × TP): leave "
                                            "--pp out, or use --cost-model calibrated or ideal",
                                            named));
  if (g.pipeline > r.model.layers)
    throw std::invalid_argument(fmt::format("{}: pipeline degree {} exceeds the {} layers", named, g.pipeline,
                                            format_number(r.model.layers)));
  check_given_degrees(a.step, a.machine, r.system, r.model, r.cost_model);  // --tp wider than a slice or node
  const bool whole = r.cost_model == scaling::CostModel::calibrated;
  const double seqs = r.batch_tokens / r.seq_len;  // whole under the calibrated model (check_batch)
  if (g.data > 0) check_data_degree(a.step, {true, g.data, 1, 1}, 1, r.batch_tokens, r.seq_len, r.cost_model);
  const int rest = static_cast<int>(n) / value;
  // x and rest / x are the two open degrees, in the order data, tensor, pipeline.
  auto is_layout = [&](int x) {
    int data = g.data, tensor = g.tensor, pipeline = g.pipeline;
    if (data == 0 && tensor == 0) data = x, tensor = rest / x;
    else if (data == 0) data = x, pipeline = rest / x;
    else tensor = x, pipeline = rest / x;
    return scaling::degrees_keep_rules(r.model.q_heads, r.model.layers, whole ? seqs : r.batch_tokens, whole, data,
                                       tensor, pipeline) &&
           !scaling::placements(r.system, data, tensor, pipeline, {}).empty();
  };
  for (int x = 1; static_cast<double>(x) * x <= rest; ++x)  // each divisor pair once: √rest steps
    if (rest % x == 0 && (is_layout(x) || is_layout(rest / x))) return;
  throw std::invalid_argument(fmt::format(
      "{}: no layout of {} has it: no split of the {} chips it leaves keeps the layout rules (tensor parallelism "
      "inside a slice or node, its degree dividing the {} heads; the pipeline at most the {} layers{})",
      named, scaling::escape_for_message(r.system.name), format_number(rest), format_number(r.model.q_heads),
      format_number(r.model.layers),
      whole ? fmt::format("; the data degree dividing the {} sequences of {} in --batch-tokens {}",
                          format_number(seqs), seq_text(a.step), format_number(r.batch_tokens))
            : std::string()));
}

}  // namespace

void run_plan(const PlanArgs& a) {
  using namespace scaling;
  PlanRequest r;
  r.model = resolve_model("plan", a.model, a.config);
  if (a.batch_tokens.empty()) throw UsageError("--batch-tokens is required");
  const Chip c = resolve_chip(a.chip);
  r.system = resolve_system("plan", c, a.machine);
  r.batch_tokens = parse_size("--batch-tokens", a.batch_tokens);
  r.seq_len = resolve_seq(a.step);
  r.setup = resolve_setup(a.step);
  r.cost_model = resolve_cost_model(a.step, a.machine, r.system);
  if (!a.top.empty()) r.top_k = static_cast<int>(parse_size("--top", a.top, limits::kMaxTop));
  const GivenDegrees g = given_degrees(a.step);

  const std::string inputs = step_inputs(a.chip, a.machine, a.batch_tokens);  // named by a refusal
  PlanResult out;
  std::string mode = "search";
  nlohmann::json fixed = nlohmann::json::object();  // the degrees the command line fixed
  const bool one_layout = fixes_every_degree(g);
  bool reruns = false;  // whether a rule the run times reruns attention (the ideal model's --seq)
  if (one_layout) {
    const Degrees d = resolve_degrees(a.step, chips(r.system));
    check_given_degrees(a.step, a.machine, r.system, r.model, r.cost_model);
    // One layout: its degrees at their best placement on the axes, as `train` computes it.
    mode = "one layout";
    fixed = {{"dp", d.data}, {"tp", d.tensor}, {"pp", d.pipeline}};
    // Named as typed: the first of the two search options given.
    const bool top = !a.top.empty();
    if (top || !a.max_microbatches.empty())
      throw UsageError(fmt::format("{} '{}': an option of the search, and with {} given there is one layout: leave it "
                                   "out, or give one degree fewer",
                                   top ? "--top" : "--max-microbatches",
                                   escape_for_message(top ? a.top : a.max_microbatches), g.text()));
    const Layout base = resolve_layout(a.step, r.model);
    reruns = base.saved.recompute != Remat::none;
    check_virtual_stages(a.step, d, base, r.model.layers);
    check_batch(r.batch_tokens, a.step, r.cost_model);  // after the usage and layout rules, as train
    check_data_degree(a.step, d, base.microbatches, r.batch_tokens, r.seq_len, r.cost_model);
    out.top = {for_layout(a.step, d, inputs, [&] {
      return best_placement(r.model, r.system, d.data, d.tensor, d.pipeline, base, {r.batch_tokens, r.seq_len},
                            r.cost_model, r.setup);
    })};
    as_timed(out.top.front(), r.cost_model);  // the book's step: ZeRO-3, one microbatch (as its search says)
    out.configs_evaluated = 1;
    out.configs_timed = 1;  // the one layout was timed (a search's count of timed layouts)
    out.configs_fit = out.top.front().terms.memory.total <= r.system.chip.hbm_bytes ? 1 : 0;
  } else {
    // What fixes one layout from here: two degrees, or a second beside the one given.
    const std::string fix_two = g.count() == 0
                                    ? std::string("give two of --dp, --tp and --pp to time one layout")
                                    : "give a second of --dp, --tp and --pp beside " + g.text() + " to time one layout";
    if (!a.step.microbatches.empty())
      throw UsageError(fmt::format("--microbatches '{}': one layout's count, and the search tries every count: {}, or "
                                   "bound the search with --max-microbatches",
                                   escape_for_message(a.step.microbatches), fix_two));
    if (!a.step.zero_scope.empty())
      throw UsageError(fmt::format("--zero-scope '{}': one layout's scope, and the search tries both where there are "
                                   "pods or nodes: {}",
                                   escape_for_message(a.step.zero_scope), fix_two));
    if (!a.step.saved.empty() && !a.step.recompute.empty())
      throw UsageError("--recompute names one of --saved's rules: give one of them");
    if (!a.step.saved.empty()) r.saved_rules = parse_saved(a.step.saved, r.model);
    if (!a.step.recompute.empty()) r.saved_rules = {for_option("--recompute", [&] { return recompute_rule(a.step.recompute); })};
    for (const auto& rule : r.saved_rules) reruns = reruns || rule.recompute != Remat::none;
    apply_switches(a.step, r.switches);
    // --vp's rule, as train's: interleaving needs --pp (2 or more, its stages' layers divisible by v).
    check_virtual_stages(a.step, {false, 1, 1, g.pipeline > 0 ? g.pipeline : 1}, r.switches, r.model.layers,
                         /*one_layout=*/false);
    // The calibrated search tries sequence parallelism and interleaving itself unless they are given.
    r.search_switches = a.step.sp.empty() && a.step.vp.empty() && a.step.schedule.empty();
    // The data-parallel overlap off and on unless it is given (every framework's DDP/FSDP overlaps the
    // gradient reduce). The tensor-parallel overlap only when asked (--tp-overlap yes): it needs a
    // framework's collective-matmul kernels, and on TPUs the calibrated model has no measured cost for it,
    // so searching it would hand the best layout a free speed-up no published run shows.
    r.search_tp_overlap = false;
    r.search_dp_overlap = a.step.dp_overlap.empty();
    if (!a.step.zero.empty()) r.zero_stages = parse_zero_stages(a.step.zero);
    // --fsdp X is --dp X with ZeRO-3 (resolve_layout's rule for one layout, the same here).
    if (!a.step.fsdp.empty()) {
      if (!a.step.zero.empty() && a.step.zero != "3")
        throw std::invalid_argument("--fsdp with --zero '" + escape_for_message(a.step.zero) +
                                    "': FSDP is ZeRO stage 3 (use --dp)");
      r.zero_stages = {3};
    }
    if (!a.max_microbatches.empty()) {
      r.max_microbatches = static_cast<int>(parse_size("--max-microbatches", a.max_microbatches, limits::kMaxMicrobatches));
    }
    check_batch(r.batch_tokens, a.step, r.cost_model);
    if (g.count() == 0) {
      out = for_option(inputs, [&] { return plan(r); });
    } else {
      // One degree given: the rest of the space searched with it fixed.
      check_fixed_degree(g, a, r);
      if (g.data > 0) fixed["dp"] = g.data;
      if (g.tensor > 0) fixed["tp"] = g.tensor;
      if (g.pipeline > 0) fixed["pp"] = g.pipeline;
      // A fixed pipeline also bounds the planner's own search (deeper pipelines are never kept).
      if (g.pipeline > 0) r.max_pipeline = g.pipeline;
      r.fixed_data = g.data, r.fixed_tensor = g.tensor, r.fixed_pipeline = g.pipeline;
      out = for_option(inputs + layout_inputs(a.step), [&] { return plan(r); });
      if (out.top.empty() && out.configs_evaluated > 0) {
        // Nothing with that degree fits: name the fastest layout of any degree that does, if one does.
        PlanRequest any = r;
        any.fixed_data = any.fixed_tensor = any.fixed_pipeline = 0, any.max_pipeline = 0;
        const PlanResult others = for_option(inputs, [&] { return plan(any); });
        std::string fastest = "no layout of any degree fits either";
        if (!others.top.empty()) {
          const auto& [l, t] = others.top.front();
          fastest = fmt::format("the fastest that fits: dp {} × tp {} × pp {}, {}", data_degree(l), tensor_degree(l),
                                pipeline_degree(l), format_quantity(t.step_s, "s"));
        }
        throw std::invalid_argument(fmt::format("no layout with {} fits in {} of HBM per chip for {} ({} evaluated; {})",
                                                g.text(), format_quantity(r.system.chip.hbm_bytes, "B"), inputs,
                                                format_number(static_cast<double>(out.configs_evaluated)), fastest));
      }
    }
    if (out.top.empty() && out.configs_evaluated == 0)
      throw std::invalid_argument(fmt::format(
          "no layout to evaluate for {}: no split of the chips meets the layout rules (the data degree dividing "
          "the batch's sequences under the calibrated model, the pipeline at most the "
          "layers, the tensor degree dividing the heads)",
          inputs));
    if (out.top.empty())
      throw std::invalid_argument(fmt::format("no layout of the {} evaluated fits in {} of HBM per chip for {}",
                                              out.configs_evaluated, format_quantity(r.system.chip.hbm_bytes, "B"),
                                              inputs));
  }
  // Options given that the cost model does not read: said in the answer (stdout), not on stderr.
  // One layout: the conditions of option_reads on the layout timed; a search: on some layout of the space.
  const scaling::ChipCalibration rates = scaling::chip_calibration(r.system.chip);
  auto given = chip_figures_given(a.chip);
  given.insert(given.begin(), {"--max-microbatches", a.max_microbatches});
  const auto ignored =
      ignored_options(a.step, r.cost_model, {reruns, one_layout ? &out.top.front().layout : nullptr, &rates}, given);
  nlohmann::json top = nlohmann::json::array();
  for (const auto& l : out.top) top.push_back(step_json(l, r.system, r.cost_model, r.model));
  nlohmann::json j{{"configs_evaluated", out.configs_evaluated},
                         {"configs_fit", out.configs_fit},
                         {"configs_timed", out.configs_timed},
                         {"configs_pruned", out.configs_pruned},
                         {"hardware", r.system.name},
                         {"chips", count_json(chips(r.system))},
                         {"fast_network", r.system.fast_name},
                         {"slow_network", r.system.slow.name},
                         {"cost_model", to_string(r.cost_model)},
                         {"ignored_options", ignored},
                         {"mode", mode},
                         {"fixed", fixed},
                         {"tie_break", kTieRule},
                         {"fits", out.configs_fit > 0},
                         {"best", step_json(out.top.front(), r.system, r.cost_model, r.model)},
                         {"top", top}};
  if (r.cost_model == CostModel::calibrated) j["calibration"] = calibration_json(c);
  std::vector<std::string> notes;
  if (const std::string positions = positions_note(r.model, r.seq_len, seq_text(a.step)); !positions.empty())
    notes.push_back(positions);
  // One layout given whole: its bubble said as train says it (a search ranks layouts and its best needs none).
  if (one_layout)
    if (const std::string bubble = bubble_note(out.top.front()); !bubble.empty()) notes.push_back(bubble);
  if (!notes.empty()) j["notes"] = notes_json(notes);
  // Every result finite before anything is printed (the table shows the same numbers as the JSON).
  require_finite_json(j, inputs);
  if (a.json) {
    std::cout << json_text(j) << "\n";
    return;
  }
  fmt::print("{} on {}, batch {} tokens ({} cost model, {})\n", model_title(a.model, a.config), escape_for_message(r.system.name),
             format_number(r.batch_tokens), to_string(r.cost_model),
             one_layout || g.count() == 0 ? mode : mode + " with " + g.text() + " fixed");
  if (!ignored.empty()) fmt::print("{}\n", ignored_note(ignored, r.cost_model));
  if (r.cost_model == CostModel::calibrated) fmt::print("{}\n", calibration_note(c));
  for (const auto& note : notes) fmt::print("{}\n", escape_for_message(note, 400));
  if (!fixed.empty() && !one_layout)
    fmt::print("every layout with {} is searched (the other degrees, microbatches, ZeRO, saved rules, switches)\n", g.text());
  if (r.cost_model == CostModel::calibrated && !one_layout)
    fmt::print("layouts evaluated: {}, timed: {} ({} fit in HBM), skipped by the floor: {}; ranked by: {}\n\n",
               out.configs_evaluated, out.configs_timed, out.configs_fit, out.configs_pruned, kTieRule);
  else if (!one_layout)
    fmt::print("layouts evaluated: {}, fit in HBM: {}; ranked by: {}\n\n", out.configs_evaluated, out.configs_fit,
               kTieRule);
  else
    fmt::print("\n");  // one layout: nothing ranked
  if (r.system.slow.groups > 1) fmt::print("(zero N*: ZeRO shards across the {} as well)\n", r.system.slow.name);
  const bool cal = r.cost_model == CostModel::calibrated;
  // The book's utilisation is §5.1.4's, of the MLP matmuls' FLOPs only: its own column name (step_json's
  // mlp_flops_utilisation), not MFU.
  const bool book = r.cost_model == CostModel::book;
  if (book)
    fmt::print("(MLP FU: §5.1.4's utilisation of the MLP matmuls' FLOPs only, the book's step; not the 6N MFU of the "
               "other models)\n");
  fmt::print("{:>3} {:>6} {:>4} {:>4} {:>5} {:>4} {:<16} {}{:>10} {:>10} {:>7} {:<10} {}\n", "#", "dp", "tp", "pp",
             "micro", "zero", "saved", cal ? "sp  vp  tpo      dpo " : "", "step", "mem/chip", book ? "MLP FU" : "MFU", "bound",
             "axes (data·tensor·pipeline)");
  int rank = 1;
  for (const auto& p : out.top) {
    const auto& [l, t] = p;
    // Calibrated: sequence parallelism and TP overlap ("-" without a tensor group: nothing to split or
    // overlap), virtual stages (1 without interleaving) and DP overlap ("-" without data replicas).
    auto yes_no = [](bool b) { return b ? "yes" : "no"; };
    const std::string switches =
        cal ? fmt::format("{:<3} {:<3} {:<8} {:<3} ", tensor_degree(l) > 1 ? yes_no(l.sequence_parallel) : "-",
                          l.virtual_stages, tensor_degree(l) > 1 ? to_string(l.tp_overlap) : "-",
                          data_degree(l) > 1 ? yes_no(l.dp_overlap) : "-")
            : "";
    fmt::print("{:>3} {:>6} {:>4} {:>4} {:>5} {:>4} {:<16} {}{:>10} {:>10} {:>6.1f}% {:<10} {}\n", rank++,
               data_degree(l), tensor_degree(l), pipeline_degree(l), l.microbatches,
               std::to_string(l.zero) + (l.zero > 0 && l.zero_scope == ZeroScope::all && r.system.slow.groups > 1 ? "*" : ""),
               label(l.saved), switches, format_quantity(t.step_s, "s"), format_quantity(t.memory.total, "B"),
               100 * t.mfu, bound_label(t.bound, r.system), describe_axes(p, r.system));
  }
  if (r.cost_model == CostModel::calibrated)
    if (const MfuRecord* rec = published_mfu_record(r.system.chip.name); rec && out.top.front().terms.mfu > rec->mfu)
      fmt::print("\nnote: the best predicted MFU ({:.1f}%) is above the highest a published run reached on this chip "
                 "({:.1f}%, {}): treat it as optimistic\n",
                 100 * out.top.front().terms.mfu, 100 * rec->mfu, rec->source);
  if (one_layout && out.configs_fit == 0)
    fmt::print("\ndoes not fit: {} per chip against {} of HBM\n", format_quantity(out.top.front().terms.memory.total, "B"),
               format_quantity(r.system.chip.hbm_bytes, "B"));
}

}  // namespace cli
