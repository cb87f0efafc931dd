// `scaling plan`: the parallelism planner (lib/include/scaling/cost/planner.hpp) for a model on a TPU
// slice (or pods of them over DCN) or a GPU cluster, at a global batch.
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "scaling/base/format.hpp"
#include "scaling/cost/planner.hpp"
#include "scaling/hardware/topology.hpp"
#include "scaling/model/presets.hpp"

namespace cli {

namespace {

// --saved: names of the planner's rules, comma-separated.
std::vector<scaling::PlanRule> parse_saved(const std::string& text) {
  const auto all = scaling::default_saved_rules();
  const std::vector<std::string> names{"input", "matmuls", "all"};  // the order of default_saved_rules()
  std::vector<scaling::PlanRule> out;
  size_t start = 0;
  while (true) {
    const size_t end = text.find(',', start);
    const std::string name = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    size_t i = 0;
    while (i < names.size() && names[i] != name) ++i;
    if (i == names.size())
      throw std::invalid_argument("--saved '" + scaling::escape_for_message(name) +
                                  "': expected input, matmuls or all (comma-separated)");
    out.push_back(all[i]);
    if (end == std::string::npos) return out;
    start = end + 1;
  }
}

std::vector<int> parse_zero(const std::string& text) {
  std::vector<int> out;
  for (int z : parse_indices("--zero", text)) {
    if (z > 3) throw std::invalid_argument("--zero '" + text + "': stages are 0, 1, 2 or 3");
    out.push_back(z);
  }
  return out;
}

int whole(const std::string& option, const std::string& text, double limit) {
  const double v = parse_size(option, text);
  if (v > limit) throw std::invalid_argument(option + " '" + text + "': at most " + scaling::format_number(limit));
  return static_cast<int>(v);
}

nlohmann::json layout_json(const scaling::PlanLayout& l, const scaling::PlanRequest& r) {
  return {{"fsdp", l.fsdp},
          {"tp", l.tp},
          {"pipeline", l.pipeline},
          {"microbatches", l.microbatches},
          {"saved", r.saved_rules[static_cast<size_t>(l.saved)].rule},
          {"zero", l.zero},
          {"zero_scope", l.zero_all ? "all" : "slice"},
          {"step_s", l.step_s},
          {"bytes_per_chip", l.bytes_per_chip},
          {"bound", scaling::to_string(l.bound)},
          {"axes", scaling::describe_axes(l, r.hw)},
          {"fsdp_slow", l.fsdp_slow},
          {"pipeline_slow", l.pipeline_slow},
          {"t_math_s", l.t_math_s},
          {"t_hbm_s", l.t_hbm_s},
          {"t_bubble_s", l.t_bubble_s},
          {"t_ici_s", l.t_ici_s},
          {"t_dcn_s", l.t_dcn_s},
          {"mfu", l.mfu}};
}

}  // namespace

void run_plan(const PlanArgs& a) {
  using namespace scaling;
  PlanRequest r;
  r.model = resolve_model("plan", a.model, a.config);
  if (a.batch_tokens.empty()) throw UsageError("plan: --batch-tokens is required");
  const Chip c = resolve_chip(a.chip);
  const bool gpu = !a.nodes.empty() || !a.gpus_per_node.empty();
  if (gpu) {
    if (!a.slice.empty() || !a.pods.empty()) throw UsageError("plan: --slice/--pods (TPU) and --nodes (GPU) exclude each other");
    if (a.nodes.empty() || a.gpus_per_node.empty() || a.nvlink_bw.empty() || a.ib_bw.empty())
      throw UsageError("plan: a GPU cluster needs --nodes, --gpus-per-node, --nvlink-bw and --ib-bw");
    r.hw = gpu_cluster(c, whole("--gpus-per-node", a.gpus_per_node, 1024), whole("--nodes", a.nodes, 1e6),
                       parse_positive("--nvlink-bw", a.nvlink_bw), parse_positive("--ib-bw", a.ib_bw));
  } else {
    if (a.slice.empty()) throw UsageError("plan: give --slice AxBxC (TPU) or --nodes (GPU)");
    const auto slice = for_option("--slice", [&] { return make_slice(c, parse_shape(a.slice)); });
    const int pods = a.pods.empty() ? 1 : whole("--pods", a.pods, 1e6);
    r.hw = tpu_pods(c, slice.shape, pods);
  }
  r.batch_tokens = parse_size("--batch-tokens", a.batch_tokens);
  if (!a.seq.empty()) r.seq_len = parse_size("--seq", a.seq);
  if (!a.top.empty()) r.top_k = whole("--top", a.top, 1000);
  if (!a.saved.empty()) r.saved_rules = parse_saved(a.saved);
  if (!a.zero.empty()) r.zero_stages = parse_zero(a.zero);
  if (!a.max_microbatches.empty()) r.max_microbatches = whole("--max-microbatches", a.max_microbatches, 1 << 20);
  if (a.cost_model == "book") r.cost_model = CostModel::book;
  else if (a.cost_model != "exact")
    throw std::invalid_argument("--cost-model '" + escape_for_message(a.cost_model) + "': expected exact or book");
  if (r.cost_model == CostModel::book && r.hw.slow_groups > 1)
    throw std::invalid_argument("--cost-model book: the book's FSDP × TP model plans one slice (--pods 1)");

  const auto out = plan(r);
  if (out.top.empty())
    throw std::invalid_argument(fmt::format("no layout of the {} evaluated fits in {} of HBM per chip",
                                            out.configs_evaluated, format_quantity(r.hw.hbm_bytes, "B")));
  if (a.json) {
    nlohmann::json top = nlohmann::json::array();
    for (const auto& l : out.top) top.push_back(layout_json(l, r));
    std::cout << nlohmann::json{{"configs_evaluated", out.configs_evaluated},
                                {"configs_fit", out.configs_fit},
                                {"hardware", r.hw.name},
                                {"best", layout_json(out.top.front(), r)},
                                {"top", top}}
                     .dump(2)
              << "\n";
    return;
  }
  fmt::print("{} on {}, batch {} tokens ({} cost model)\n", a.model.empty() ? a.config : a.model, r.hw.name,
             format_number(r.batch_tokens), a.cost_model);
  fmt::print("layouts evaluated: {}, fit in HBM: {}\n\n", out.configs_evaluated, out.configs_fit);
  if (r.hw.slow_groups > 1) fmt::print("(zero N*: ZeRO shards across the {} as well)\n", r.hw.slow_name);
  fmt::print("{:>3} {:>6} {:>4} {:>4} {:>5} {:>4} {:<16} {:>10} {:>10} {:>6} {:<8} {}\n", "#", "fsdp", "tp", "pp",
             "micro", "zero", "saved", "step", "mem/chip", "MFU", "bound", "axes (data·tensor·pipeline)");
  int rank = 1;
  for (const auto& l : out.top)
    fmt::print("{:>3} {:>6} {:>4} {:>4} {:>5} {:>4} {:<16} {:>10} {:>10} {:>5.1f}% {:<8} {}\n", rank++, l.fsdp, l.tp,
               l.pipeline, l.microbatches, std::to_string(l.zero) + (l.zero_all ? "*" : ""), r.saved_rules[static_cast<size_t>(l.saved)].rule,
               format_quantity(l.step_s, "s"), format_quantity(l.bytes_per_chip, "B"), 100 * l.mfu,
               to_string(l.bound), describe_axes(l, r.hw));
}

}  // namespace cli
