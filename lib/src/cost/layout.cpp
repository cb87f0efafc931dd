#include "scaling/cost/layout.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "scaling/base/format.hpp"
#include "scaling/base/validate.hpp"
#include "scaling/cost/terms.hpp"
#include "scaling/hardware/system.hpp"
#include "scaling/model/tensors.hpp"

namespace scaling {

std::span<const PlanRule> saved_rules() {
  static const std::vector<PlanRule> k{{"D", Remat::block, "input"},
                                       {"2D+2F+NH+2KH", Remat::big_matmuls, "matmuls"},
                                       {"4D+3F+2NH+2KH", Remat::none, "all"}};
  return k;
}

const PlanRule& saved_rule(std::string_view name) {
  std::vector<std::string> known;
  for (const auto& r : saved_rules()) {
    if (r.name == name) return r;
    known.push_back(r.name);
  }
  check::not_one_of(name, known);
}

PlanRule parse_plan_rule(std::string_view text) {
  for (const auto& r : saved_rules())
    if (r.name == text) return r;
  SavedRule parsed;
  try {
    parsed = parse_saved_rule(text);
  } catch (const std::invalid_argument& e) {
    std::string names;
    for (const auto& r : saved_rules()) names += r.name + ", ";
    throw std::invalid_argument(std::string(e.what()) + " (or a rule name: " + names.substr(0, names.size() - 2) + ")");
  }
  for (const auto& r : saved_rules())
    if (to_string(parse_saved_rule(r.rule)) == to_string(parsed)) return r;
  return {std::string(text), Remat::none, ""};
}

SavedRule saved_elements(const PlanRule& r, const TransformerConfig& model) {
  if (r.name == "input") return saved_of_kind(model, ActivationKind::layer_input);
  if (r.name == "matmuls") return saved_of_kind(model, ActivationKind::matmul_output);
  if (r.name == "all") return saved_for_backward(model);
  return parse_saved_rule(r.rule);
}

PlanRule parse_plan_rule(std::string_view text, const TransformerConfig& model) {
  for (const auto& r : saved_rules())
    if (r.name == text) return r;
  static_cast<void>(parse_plan_rule(text));  // the sum's syntax checked, with the one message
  const std::string sum = to_string(parse_saved_rule(text));
  for (const auto& r : saved_rules())
    if (to_string(saved_elements(r, model)) == sum) return r;
  return {std::string(text), Remat::none, ""};
}

std::string resolved_rule(const PlanRule& r, const TransformerConfig& model) {
  return to_string(saved_elements(r, model));
}

std::string label(const PlanRule& r) { return r.name.empty() ? r.rule : r.name; }

const char* to_string(ZeroScope s) { return s == ZeroScope::all ? "all" : "group"; }

ZeroScope parse_zero_scope(std::string_view text) {
  for (ZeroScope s : {ZeroScope::all, ZeroScope::group})
    if (text == to_string(s)) return s;
  check::not_one_of(text, {"all", "group"});
}

const char* to_string(Schedule s) {
  switch (s) {
    case Schedule::gpipe: return "gpipe";
    case Schedule::interleaved: return "interleaved";
    case Schedule::one_f_one_b: break;
  }
  return "1f1b";
}

Schedule parse_schedule(std::string_view text) {
  for (Schedule s : {Schedule::gpipe, Schedule::one_f_one_b, Schedule::interleaved})
    if (text == to_string(s)) return s;
  check::not_one_of(text, {"gpipe", "1f1b", "interleaved"});
}

const char* to_string(AttentionKernel a) {
  switch (a) {
    case AttentionKernel::flash: return "flash";
    case AttentionKernel::flash1: return "flash1";
    case AttentionKernel::materialized: return "materialized";
  }
  return "flash";
}

AttentionKernel parse_attention_kernel(std::string_view text) {
  for (AttentionKernel a : {AttentionKernel::flash, AttentionKernel::flash1, AttentionKernel::materialized})
    if (text == to_string(a)) return a;
  check::not_one_of(text, {"flash", "flash1", "materialized"});
}

const char* to_string(TpOverlap o) {
  switch (o) {
    case TpOverlap::backward: return "backward";
    case TpOverlap::async: return "async";
    case TpOverlap::all: return "yes";
    case TpOverlap::none: break;
  }
  return "no";
}

TpOverlap parse_tp_overlap(std::string_view text) {
  for (TpOverlap o : {TpOverlap::none, TpOverlap::backward, TpOverlap::async, TpOverlap::all})
    if (text == to_string(o)) return o;
  check::not_one_of(text, {"no", "backward", "async", "yes"});
}

GroupBandwidths group_bandwidths(const System& sys, const AxisRoles* axes) {
  GroupBandwidths g;
  for (size_t i = 0; i < sys.fast.size(); ++i) {
    const auto& s = axes[i];
    const int share = (s.data > 1) + (s.tensor > 1) + (s.pipeline > 1);
    const double w = share > 0 ? sys.fast[i].bytes_per_s / share : 0;
    if (s.data > 1) g.data += w;
    if (s.tensor > 1) g.tensor += w;
    if (s.pipeline > 1) g.pipeline = g.pipeline > 0 ? std::min(g.pipeline, w / 2) : w / 2;
  }
  return g;
}

bool interleaves_evenly(double layers, double pipeline, int virtual_stages) {
  if (virtual_stages <= 1) return true;
  for (double slots : {layers, layers + 1, layers + 2})  // + the embedding's and/or the loss' slot
    if (std::fmod(slots, pipeline * virtual_stages) == 0) return true;
  return false;
}

int data_degree(const Layout& l) {
  int n = l.slow.data;
  for (const auto& a : l.fast) n *= a.data;
  return n;
}
int tensor_degree(const Layout& l) {
  int n = 1;
  for (const auto& a : l.fast) n *= a.tensor;
  return n;
}
int pipeline_degree(const Layout& l) {
  int n = l.slow.pipeline;
  for (const auto& a : l.fast) n *= a.pipeline;
  return n;
}
int zero_stage_run(const Layout& l) {
  int fast = 1;
  for (const auto& a : l.fast) fast *= a.data;
  const int group = l.zero_scope == ZeroScope::all ? fast * l.slow.data : fast;
  return group > 1 ? l.zero : 0;
}

namespace {
// Every (d, t, p) with d·t·p = n whose factors divide the remaining degrees; the slow tier takes t = 1.
// The order is the planner's search order (the last axis outermost, each axis by data then tensor factor
// ascending, the slow tier innermost), so a full tie goes to the placement the search would keep.
void place(const System& s, size_t k, int data, int tensor, int pipeline, Layout& cur, std::vector<Layout>& out) {
  if (k == s.fast.size()) {
    const int groups = s.slow.groups;
    for (int d = 1; d <= groups; ++d) {
      if (groups % d || d != data || groups / d != pipeline || tensor != 1) continue;
      cur.slow = {d, 1, groups / d};
      out.push_back(cur);
    }
    return;
  }
  const size_t axis = s.fast.size() - 1 - k;
  const int n = s.fast[axis].size;
  for (int d = 1; d <= n; ++d) {
    if (n % d || data % d) continue;
    for (int t = 1; t <= n / d; ++t) {
      if ((n / d) % t || tensor % t) continue;
      const int p = n / d / t;
      if (pipeline % p) continue;
      cur.fast[axis] = {d, t, p};
      place(s, k + 1, data / d, tensor / t, pipeline / p, cur, out);
    }
  }
}
}  // namespace

std::vector<Layout> placements(const System& s, int data, int tensor, int pipeline, const Layout& base) {
  std::vector<Layout> out;
  if (data < 1 || tensor < 1 || pipeline < 1) return out;
  Layout cur = base;
  cur.fast.assign(s.fast.size(), AxisRoles{});
  place(s, 0, data, tensor, pipeline, cur, out);
  return out;
}

std::string describe_axes(const Layout& l, const System& s) {
  std::string out;
  for (size_t i = 0; i < l.fast.size() && i < s.fast.size(); ++i) {
    const auto& a = l.fast[i];
    out += fmt::format("{}{}={}·{}·{}", out.empty() ? "" : " ", s.fast[i].size, a.data, a.tensor, a.pipeline);
  }
  if (s.slow.groups > 1) out += fmt::format(" {} {}={}·1·{}", s.slow.name, s.slow.groups, l.slow.data, l.slow.pipeline);
  return out;
}

const char* to_string(CostModel m) {
  switch (m) {
    case CostModel::book: return "book";
    case CostModel::calibrated: return "calibrated";
    case CostModel::ideal: break;
  }
  return "ideal";
}

CostModel parse_cost_model(std::string_view text) {
  for (CostModel m : {CostModel::calibrated, CostModel::ideal, CostModel::book})
    if (text == to_string(m)) return m;
  if (text == "exact")
    throw std::invalid_argument("'exact': the lower-bound model is now called 'ideal' (expected calibrated, ideal or book)");
  check::not_one_of(text, {"calibrated", "ideal", "book"});
}

const char* to_string(Bound b) {
  switch (b) {
    case Bound::compute: return "compute";
    case Bound::memory: return "memory";
    case Bound::bubble: return "bubble";
    case Bound::ici: return "ICI";
    case Bound::dcn: return "DCN";
  }
  return "?";
}

bool better(const Terms& a, const Terms& b) {
  if (a.step_s != b.step_s) return a.step_s < b.step_s;
  if (a.memory.total != b.memory.total) return a.memory.total < b.memory.total;
  return std::max(a.t_ici_s, a.t_dcn_s) < std::max(b.t_ici_s, b.t_dcn_s);
}

}  // namespace scaling
