#include "scaling/cost/planner.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "scaling/base/format.hpp"
#include "scaling/cost/calibrated.hpp"

namespace scaling {

std::vector<PlanRule> default_saved_rules() {
  const auto all = saved_rules();
  return {all.begin(), all.end()};
}

namespace {

constexpr int kMaxAxes = 6;
constexpr int kMaxRules = 8;
constexpr double kMaxPlanChips = 1 << 30;  // every degree and chip count fits an int (2^31 - 1)
constexpr int kMaxMicroCount = 1 << 20;  // the largest microbatch count the search tries (CLI: kMaxMicrobatches)

// What one request fixes: the model's sizes and the per-rule constants.
struct Fixed {
  double B, L, D, F, heads, C, hbm, hbm_bw, slow_bw;
  // The calibrated model's batch rules (it predicts runs, and no framework splits a sequence): the batch
  // is a whole number of sequences, and each data replica's microbatch is a whole number of them, so
  // data degree × microbatches divides the batch's sequences. The ideal and book models stay the
  // per-token lower bound of §5 (seqs = the tokens; only the microbatches divide the tokens): their
  // answers in chapters 5-6 reason per token.
  bool whole;
  double seqs;
  double p_layer, p_other, p_total;
  double six_active;           // 6 · active parameters per token (training.hpp)
  TrainingMemory state;        // the whole model's parameters, gradients, optimizer state and master copy
  int n_rules;
  std::array<double, kMaxRules> act_bytes{};    // bytes saved per token per layer
  std::array<double, kMaxRules> rule_flops{};   // training FLOPs per token with the rule's recomputation
  std::array<double, kMaxRules> rule_reruns{};  // forward passes rerun (full rematerialisation: 1)
  int n_fast;
  std::array<int, kMaxAxes> axis{};
  std::array<double, kMaxAxes> axis_bw{};
  int n_micro;
  std::vector<double> micro;  // the microbatch counts to try, ascending
};

// `only_micro` > 0: that one microbatch count (step_terms), instead of the powers of two up to the maximum.
Fixed fix(const PlanRequest& r, int only_micro = 0) {
  const auto& c = r.model;
  validate(c);
  if (!(r.batch_tokens >= 1) || !std::isfinite(r.batch_tokens))
    throw std::invalid_argument("batch = " + format_number(r.batch_tokens) + " tokens: must be at least 1");
  if (!(r.seq_len >= 1) || !std::isfinite(r.seq_len))
    throw std::invalid_argument("sequence length = " + format_number(r.seq_len) + ": must be at least 1");
  // The calibrated model predicts runs: a step trains on whole sequences, at least one (the attention
  // core spans seq_len tokens). The ideal and book models keep §5's per-token batches (chapter 1's and
  // 5's answers take batches of a few tokens); the CLI refuses a batch below one sequence for every model.
  if (r.cost_model == CostModel::calibrated && r.batch_tokens < r.seq_len)
    throw std::invalid_argument(fmt::format("batch = {} tokens is less than one sequence of {} tokens",
                                            format_number(r.batch_tokens), format_number(r.seq_len)));
  if (r.cost_model == CostModel::calibrated && std::fmod(r.batch_tokens, r.seq_len) != 0)
    throw std::invalid_argument(fmt::format("batch = {} tokens is not a whole number of sequences of {} tokens ({})",
                                            format_number(r.batch_tokens), format_number(r.seq_len),
                                            format_number(r.batch_tokens / r.seq_len, 8)));
  if (r.saved_rules.empty() || r.saved_rules.size() > kMaxRules)
    throw std::invalid_argument("the planner needs 1 to 8 activation-saving rules");
  if (r.zero_stages.empty()) throw std::invalid_argument("the planner needs at least one ZeRO stage");
  for (int z : r.zero_stages)
    if (z < 0 || z > 3) throw std::invalid_argument("ZeRO stage " + std::to_string(z) + ": must be 0, 1, 2 or 3");
  if (r.top_k < 1) throw std::invalid_argument("top = " + std::to_string(r.top_k) + ": must be at least 1");
  if (r.max_microbatches < 1 || r.max_microbatches > kMaxMicroCount)
    throw std::invalid_argument("max microbatches = " + std::to_string(r.max_microbatches) + ": must be 1 to 2^20");
  if (r.max_pipeline < 0) throw std::invalid_argument("max pipeline degree must not be negative");
  if (r.fixed_data < 0 || r.fixed_tensor < 0 || r.fixed_pipeline < 0)
    throw std::invalid_argument("a fixed degree must not be negative (0 leaves it to the search)");
  const auto& h = r.system;
  if (h.fast.empty() || h.fast.size() > kMaxAxes)
    throw std::invalid_argument("--slice/--nodes: the machine needs 1 to 6 fast axes, each with a bandwidth, not " +
                                std::to_string(h.fast.size()));
  for (const auto& axis : h.fast) {
    if (axis.size < 1 || axis.size > 1 << 20)
      throw std::invalid_argument("axis size " + std::to_string(axis.size) + ": must be 1 to 2^20");
    if (!(axis.bytes_per_s > 0) || !std::isfinite(axis.bytes_per_s))
      throw std::invalid_argument(h.fast_name + " bandwidth must be positive and finite");
  }
  if (h.slow.groups < 1 || h.slow.groups > 1 << 20)
    throw std::invalid_argument("the slow network joins 1 to 2^20 groups, not " + std::to_string(h.slow.groups));
  // Every degree, microbatch count and chip count below is an int: the whole machine must fit one, so no
  // double is ever converted to an int out of its range (a layout's dp of 2^31 would wrap negative).
  double machine_chips = h.slow.groups;
  for (const auto& axis : h.fast) machine_chips *= axis.size;
  if (machine_chips > kMaxPlanChips)
    throw std::invalid_argument("--slice/--nodes/--pods: the machine has " + format_number(machine_chips) +
                                " chips; the planner takes at most " + format_number(kMaxPlanChips));
  if (!(h.chip.bf16_flops_per_s > 0) || !(h.chip.hbm_bytes > 0) || !(h.chip.hbm_bytes_per_s > 0))
    throw std::invalid_argument("the chip needs positive FLOPs/s, HBM bytes and HBM bandwidth");
  if (h.slow.groups > 1 && !(h.slow.bytes_per_s > 0))
    throw std::invalid_argument("more than one group needs a positive " + h.slow.name + " bandwidth");
  Fixed f;
  f.B = r.batch_tokens;
  f.whole = r.cost_model == CostModel::calibrated;
  f.seqs = f.whole ? r.batch_tokens / r.seq_len : r.batch_tokens;  // whole (checked above)
  f.L = c.layers;
  f.D = c.d_model;
  f.F = c.d_ff;
  f.heads = c.q_heads;
  f.C = h.chip.bf16_flops_per_s;
  f.hbm = h.chip.hbm_bytes;
  f.hbm_bw = h.chip.hbm_bytes_per_s;
  f.slow_bw = h.slow.bytes_per_s;
  const auto p = param_counts(c);
  // The layers' parameters and the rest, from the one weight inventory (model/tensors.hpp); whole numbers
  // below 2^53, so the difference is exact.
  f.p_layer = (p.total - p.once) / c.layers;
  f.p_other = p.total - f.p_layer * c.layers;
  f.p_total = p.total;
  f.six_active = six_active_flops_per_token(c);
  TrainingSetup setup = r.setup;
  f.state = training_memory(c, 1, setup);
  f.state.activations = 0;
  f.state.total = f.state.params + f.state.grads + f.state.optimizer + f.state.master;
  f.n_rules = static_cast<int>(r.saved_rules.size());
  for (int i = 0; i < f.n_rules; ++i) {
    const auto& rule = r.saved_rules[static_cast<size_t>(i)];
    const auto ri = static_cast<size_t>(i);
    f.act_bytes[ri] = bytes_per_element(setup.activations) * saved_elements_per_layer_token(saved_elements(rule, c), c);
    f.rule_flops[ri] = f.six_active + remat_extra_flops_per_token(c, r.seq_len, rule.recompute);
    f.rule_reruns[ri] = rule.recompute == Remat::block ? 1 : 0;
  }
  f.n_fast = static_cast<int>(h.fast.size());
  for (int i = 0; i < f.n_fast; ++i) {
    f.axis[static_cast<size_t>(i)] = h.fast[static_cast<size_t>(i)].size;
    f.axis_bw[static_cast<size_t>(i)] = h.fast[static_cast<size_t>(i)].bytes_per_s;
  }
  if (only_micro > 0) f.micro.push_back(only_micro);
  else
    // Whole microbatches only: every count up to the maximum that divides B (Calculon tries every divisor
    // of the batch too), ascending, so the search stops at the first with fewer than one token per replica.
    for (double m = 1; m <= r.max_microbatches && m <= f.B; ++m)
      if (std::fmod(f.B, m) == 0) f.micro.push_back(m);
  f.n_micro = static_cast<int>(f.micro.size());
  return f;
}

// What one assignment of the axes fixes (independent of ZeRO stage, rule and microbatches); every
// communication term comes from the training library's per-layer costs (training.hpp).
struct Assignment {
  double X, X_fast, X_slow, Y, S, S_fast, S_slow, chips;
  double lps, p_stage, imbalance;
  double w_data, w_tensor, w_pipe;  // bandwidths of the groups (bytes/s), 0 when the group is trivial
  TrainingMemory stage;             // the stage's model state per chip before ZeRO: 1/Y of it
  double weights;                   // bytes of the stage's weights per chip (1/Y)
  double t_gather_fast;             // one AllGather (= one ReduceScatter) of them over the slice's data group
  double t_gather_slow;             // one of a chip's 1/X_fast share over the pods
  double t_tensor, t_tensor_rerun;  // TP: the step's collectives, and those a rerun forward adds
  double t_pipe_fast, t_pipe_slow;  // pipeline sends per step
  std::vector<double> bubble;       // t_bubble / t_chip for each microbatch count: f / (1 − f)
};

Assignment assign(const Fixed& f, const System& system, const AxisRoles* axes, AxisRoles slow) {
  Assignment a{};
  a.X_fast = a.Y = a.S_fast = 1;
  for (int i = 0; i < f.n_fast; ++i) {
    a.X_fast *= axes[i].data;
    a.Y *= axes[i].tensor;
    a.S_fast *= axes[i].pipeline;
  }
  // Each group's share of the links it spans (layout.hpp's rule, shared with the calibrated model).
  const GroupBandwidths g = group_bandwidths(system, axes);
  a.w_data = g.data;
  a.w_tensor = g.tensor;
  a.w_pipe = g.pipeline;
  a.X_slow = slow.data;
  a.S_slow = slow.pipeline;
  a.X = a.X_fast * a.X_slow;
  a.S = a.S_fast * a.S_slow;
  a.chips = a.X * a.Y * a.S;
  return a;
}

// The terms that need the layout to be valid (Y dividing the heads, S ≤ L, X ≤ B).
void cost_assignment(const Fixed& f, Assignment& a) {
  a.lps = std::ceil(f.L / a.S);
  a.p_stage = a.lps * f.p_layer + f.p_other;
  a.imbalance = a.S * a.lps / f.L;
  const double share = a.p_stage / f.p_total / a.Y;
  a.stage = f.state;
  a.stage.params *= share, a.stage.grads *= share, a.stage.optimizer *= share, a.stage.master *= share;
  a.weights = a.stage.params;
  // The stage's weights as one §5 layer of equal size (2·D·F_stage parameters): its FSDP AllGather is
  // comm_x_fwd — the collective ZeRO repeats.
  const MlpLayer stage_layer{f.B, f.D, a.p_stage / (2 * f.D)};
  if (a.X_fast > 1)
    a.t_gather_fast = layer_cost(stage_layer, Strategy::fsdp_tp, a.X_fast, a.Y).comm_x_fwd_exact / a.w_data;
  if (a.X_slow > 1)
    a.t_gather_slow = layer_cost(stage_layer, Strategy::fsdp_tp, a.X_slow, a.Y * a.X_fast).comm_x_fwd_exact / f.slow_bw;
  // Tensor parallelism: each layer has two blocks (attention, MLP) that gather and scatter like §5's layer.
  if (a.Y > 1) {
    const auto tp = layer_cost(MlpLayer{f.B, f.D, f.F}, Strategy::fsdp_tp, a.X, a.Y);
    a.t_tensor = 2 * a.lps * (tp.comm_y_fwd_exact + tp.comm_y_bwd_exact) / a.w_tensor;
    a.t_tensor_rerun = 2 * a.lps * tp.comm_y_fwd_exact / a.w_tensor;
  }
  a.bubble.assign(f.micro.size(), 0.0);
  if (a.S > 1) {
    // §5.1.5: a replica's B/X tokens cross each stage boundary forward and back; TP splits them over Y.
    const auto pc = pipeline_cost(MlpLayer{f.B / a.X, f.D, f.F}, f.L, a.S, 1);
    const double bytes = (pc.bytes_sent_per_stage_fwd + pc.bytes_sent_per_stage_bwd) / a.Y;
    if (a.S_fast > 1) a.t_pipe_fast = bytes / a.w_pipe;
    if (a.S_slow > 1) a.t_pipe_slow = bytes / f.slow_bw;
    for (int i = 0; i < f.n_micro; ++i) {
      const double b = pipeline_cost(MlpLayer{f.B / a.X, f.D, f.F}, f.L, a.S, f.micro[static_cast<size_t>(i)]).bubble_fraction;
      a.bubble[static_cast<size_t>(i)] = b / (1 - b);
    }
  }
}

struct Score {
  double step, bytes, t_math, t_hbm, t_bubble, t_ici, t_dcn;
  Bound bound;
};

// The saved activations per chip: ⌈L/S⌉ layers of the rule's bytes per token, for the tokens of one
// microbatch of one replica split over the tensor group, times the microbatches in flight.
inline double activation_bytes(const Fixed& f, const Assignment& a, int mi, int rule) {
  const double m = f.micro[static_cast<size_t>(mi)];
  const double b = f.B / (a.X * m);  // tokens per microbatch per data replica
  const double inflight = a.S > 1 ? std::min(m, a.S) : 1;
  return f.act_bytes[static_cast<size_t>(rule)] * a.lps * (b / a.Y) * inflight;
}

// The ideal model of planner.hpp for one layout; `state` is the stage's model state per chip after ZeRO.
inline Score score(const Fixed& f, const Assignment& a, int zero, bool zero_all, double state, int mi, int rule) {
  const auto ri = static_cast<size_t>(rule);
  const double m = f.micro[static_cast<size_t>(mi)];
  // Memory per chip: model state, and the saved activations of ⌈L/S⌉ layers for the microbatches in flight.
  const double bytes = state + activation_bytes(f, a, mi, rule);
  // The chip: FLOPs, and the weights read from HBM for each microbatch (forward, and twice backward).
  const double t_math = f.rule_flops[ri] * f.B * a.imbalance / (a.chips * f.C);
  const double t_hbm = m * (3 + f.rule_reruns[ri]) * a.weights / f.hbm_bw;
  const double chip = std::max(t_math, t_hbm);
  const double t_bubble = a.bubble[static_cast<size_t>(mi)] * chip;
  // ZeRO's pattern of AllGathers (ag) and ReduceScatters (rs) of the stage per step, in units of one.
  const double units = zero == 3 ? 3 * m : zero == 2 ? m + 1 : 2;
  const double t_data = units * a.t_gather_fast;
  const double t_tensor = a.t_tensor + f.rule_reruns[ri] * a.t_tensor_rerun;
  const double t_ici = std::max(t_data, std::max(t_tensor, a.t_pipe_fast));
  // Over the pods: an AllReduce of each chip's gradient share, or ZeRO's own pattern across them.
  const double t_dcn = (zero_all ? units : 2) * a.t_gather_slow + a.t_pipe_slow;
  const double step = std::max(chip + t_bubble, std::max(t_ici, t_dcn));
  Bound bound;
  if (t_ici >= chip + t_bubble && t_ici >= t_dcn) bound = Bound::ici;
  else if (t_dcn >= chip + t_bubble) bound = Bound::dcn;
  else if (t_bubble > chip) bound = Bound::bubble;
  else bound = t_hbm > t_math ? Bound::memory : Bound::compute;
  return {step, bytes, t_math, t_hbm, t_bubble, t_ici, t_dcn, bound};
}

TrainingMemory state_memory(const Assignment& a, int zero, bool zero_all) {
  return zero_memory_per_device(a.stage, zero_all ? a.X : a.X_fast, zero);
}
double state_bytes(const Assignment& a, int zero, bool zero_all) {
  const auto m = state_memory(a, zero, zero_all);
  return m.params + m.grads + m.optimizer + m.master;
}

// All (d, t, p) with d·t·p = n; the slow axis takes t = 1.
std::vector<AxisRoles> splits(int n, bool tensor) {
  std::vector<AxisRoles> out;
  for (int d = 1; d <= n; ++d) {
    if (n % d) continue;
    for (int t = 1; t <= n / d; ++t) {
      if ((n / d) % t || (!tensor && t > 1)) continue;
      out.push_back({d, t, n / d / t});
    }
  }
  return out;
}

bool better_planned(const Planned& a, const Planned& b) { return better(a.terms, b.terms); }

// Layouts that differ only in how the same degrees sit on the axes count once in the list: the best mapping.
bool same_degrees(const Layout& a, const Layout& b) {
  return data_degree(a) == data_degree(b) && tensor_degree(a) == tensor_degree(b) &&
         pipeline_degree(a) == pipeline_degree(b) && a.microbatches == b.microbatches && a.zero == b.zero &&
         a.zero_scope == b.zero_scope && a.saved.rule == b.saved.rule && a.saved.recompute == b.saved.recompute &&
         a.slow.data == b.slow.data && a.slow.pipeline == b.slow.pipeline;
}

// The K best so far, kept sorted; `worst` is the step time a layout must beat once full.
struct TopK {
  int k;
  std::vector<Planned> items;
  double worst_step() const { return static_cast<int>(items.size()) < k ? INFINITY : items.back().terms.step_s; }
  void offer(const Planned& l) {
    if (static_cast<int>(items.size()) == k && !better_planned(l, items.back())) return;
    for (auto it = items.begin(); it != items.end(); ++it) {
      if (!same_degrees(it->layout, l.layout)) continue;
      if (!better_planned(l, *it)) return;
      items.erase(it);
      break;
    }
    items.insert(std::upper_bound(items.begin(), items.end(), l, better_planned), l);
    if (static_cast<int>(items.size()) > k) items.pop_back();
  }
};

// The layout the search is at, written in place (the calibrated search reuses one, so timing a layout
// allocates nothing).
void set_layout(Layout& l, const Fixed& f, const PlanRequest& r, const AxisRoles* axes, AxisRoles slow, int mi, int rule,
                int zero, bool zero_all) {
  l.fast.assign(axes, axes + f.n_fast);
  l.slow = slow;
  l.microbatches = static_cast<int>(f.micro[static_cast<size_t>(mi)]);
  l.zero = zero;
  l.zero_scope = zero_all ? ZeroScope::all : ZeroScope::group;
  l.saved = r.saved_rules[static_cast<size_t>(rule)];
}

Terms ideal_terms(const Fixed& f, const Assignment& a, const Score& t, int mi, int rule, int zero, bool zero_all) {
  Terms o;
  o.step_s = t.step;
  o.t_math_s = t.t_math;
  o.t_hbm_s = t.t_hbm;
  o.t_bubble_s = t.t_bubble;
  o.t_ici_s = t.t_ici;
  o.t_dcn_s = t.t_dcn;
  o.bound = t.bound;
  o.mfu = f.six_active * f.B / (a.chips * f.C * t.step);
  const auto m = state_memory(a, zero, zero_all);
  o.memory = {m.params, m.grads, m.optimizer, m.master, activation_bytes(f, a, mi, rule), t.bytes};
  return o;
}

Planned make_planned(const Fixed& f, const PlanRequest& r, const Assignment& a, const Score& t, const AxisRoles* axes,
                     AxisRoles slow, int mi, int rule, int zero, bool zero_all) {
  Planned p;
  set_layout(p.layout, f, r, axes, slow, mi, rule, zero, zero_all);
  p.terms = ideal_terms(f, a, t, mi, rule, zero, zero_all);
  return p;
}

// §5.1.4: the book's FSDP × TP model on one slice. M_X + M_Y = the slice's axes longer than 1; the tensor
// group takes one of them when both groups are sharded.
struct BookAxes {
  double m_x, m_y;
};
BookAxes book_axes(const Fixed& f, double X, double Y) {
  int long_axes = 0;
  for (int i = 0; i < f.n_fast; ++i) long_axes += f.axis[static_cast<size_t>(i)] > 1;
  long_axes = std::max(long_axes, 1);
  if (Y == 1) return {static_cast<double>(long_axes), 1};
  if (X == 1) return {1, static_cast<double>(long_axes)};
  return {std::max(long_axes - 1, 1) * 1.0, 1};
}

// The book models the forward pass (the most communication per FLOP) with the two axes' comms summed;
// a training step is three times it (forward + backward = 4 + 8 in the §5.2 table's compute).
Score score_book(const Fixed& f, const PlanRequest& r, double X, double Y, int rule, TrainingMemory* parts = nullptr,
                 const BookReading& reading = {}, const AxisRoles* placed = nullptr, BookAxes* used = nullptr) {
  const auto& c = r.model;
  auto [m_x, m_y] = book_axes(f, X, Y);
  if (reading.axes_from_layout && placed) {
    m_x = m_y = 0;
    for (int i = 0; i < f.n_fast; ++i) m_x += placed[i].data > 1, m_y += placed[i].tensor > 1;
    m_x = std::max(m_x, 1.0), m_y = std::max(m_y, 1.0);
  }
  if (used) *used = {m_x, m_y};
  const Strategy s = X > 1 && Y > 1 ? Strategy::fsdp_tp : Y > 1 ? Strategy::tp : Strategy::fsdp;
  const auto cost = layer_cost(MlpLayer{f.B, c.d_model, c.d_ff}, s, X, Y);
  LayerTime t = layer_time(cost, Pass::forward, f.C, f.axis_bw[0], m_x, m_y, reading.comms);
  double k = 3 * f.L;
  if (reading.per_pass) {  // forward + backward, each overlapped on its own
    const auto b = layer_time(cost, Pass::backward, f.C, f.axis_bw[0], m_x, m_y, reading.comms);
    t = {t.t_math_s + b.t_math_s, t.t_x_s + b.t_x_s, t.t_y_s + b.t_y_s, t.t_comms_s + b.t_comms_s, t.t_s + b.t_s,
         t.compute_bound && b.compute_bound};
    k = f.L;
  }
  TrainingSetup setup = r.setup;
  setup.saved = saved_elements(r.saved_rules[static_cast<size_t>(rule)], c);
  const auto memory = zero_memory_per_device(training_memory(c, f.B, setup), X * Y, 3);
  if (parts) *parts = memory;
  const double bytes = memory.total;
  return {k * t.t_s, bytes, k * t.t_math_s, 0, 0, k * t.t_comms_s, 0, t.compute_bound ? Bound::compute : Bound::ici};
}

Planned book_planned(const Fixed& f, const PlanRequest& r, const Score& t, double X, double Y, int rule,
                     const TrainingMemory& m, const BookAxes* used = nullptr) {
  Planned p;
  const auto [m_x, m_y] = used ? *used : book_axes(f, X, Y);
  // The book maps no axes; the layout records the degrees on the first axis (describe_axes shows M_X, M_Y).
  p.layout.fast.assign(static_cast<size_t>(f.n_fast), AxisRoles{});
  p.layout.fast[0] = {static_cast<int>(X), static_cast<int>(Y), 1};
  p.layout.zero = 3;
  p.layout.saved = r.saved_rules[static_cast<size_t>(rule)];
  auto& o = p.terms;
  o.m_x = m_x;
  o.m_y = m_y;
  o.step_s = t.step;
  o.t_math_s = t.t_math;
  o.t_ici_s = t.t_ici;
  o.bound = t.bound;
  o.mfu = t.t_math / t.step;  // of the book's FLOPs: the two MLP matrices
  o.memory = {m.params, m.grads, m.optimizer, m.master, m.activations, t.bytes};
  return p;
}

// The calibrated model's switches of the request on one candidate: the interleaved schedule only where
// there is a pipeline (1F1B otherwise), and virtual_stages = -1 to skip a pipeline whose S·v virtual
// stages do not hold the L layers evenly (interleaved_layers_rule).
void apply_switches(Layout& l, const Layout& sw, double S, double L) {
  l.schedule = sw.schedule;
  l.virtual_stages = sw.virtual_stages;
  l.sequence_parallel = sw.sequence_parallel;
  l.tp_overlap = sw.tp_overlap;
  l.dp_overlap = sw.dp_overlap;
  l.attention = sw.attention;
  if (sw.schedule == Schedule::interleaved && S < 2) l.schedule = Schedule::one_f_one_b, l.virtual_stages = 1;
  else if (sw.schedule == Schedule::interleaved && !interleaves_evenly(L, S, sw.virtual_stages)) l.virtual_stages = -1;
}

// Whether degrees (X, Y, S) keep the request's fixed degrees (PlanRequest::fixed_*; 0 leaves one free).
bool has_fixed_degrees(const PlanRequest& r, double X, double Y, double S) {
  return (r.fixed_data == 0 || X == r.fixed_data) && (r.fixed_tensor == 0 || Y == r.fixed_tensor) &&
         (r.fixed_pipeline == 0 || S == r.fixed_pipeline);
}

PlanResult plan_book(const PlanRequest& r, const Fixed& f) {
  if (r.system.slow.groups != 1) throw std::invalid_argument("the book's cost model plans one slice: use --pods 1");
  double N = 1;
  for (int i = 0; i < f.n_fast; ++i) N *= f.axis[static_cast<size_t>(i)];
  PlanResult out;
  TopK top{r.top_k, {}};
  for (int y = 1; y <= N; ++y) {
    if (static_cast<int>(N) % y || std::fmod(f.heads, y) != 0) continue;
    const double X = N / y;
    if (X > f.B || !has_fixed_degrees(r, X, y, 1)) continue;
    ++out.configs_evaluated;
    TrainingMemory parts;
    const Score t = score_book(f, r, X, y, 0, &parts);  // the first rule: memory only, the book's time has none
    if (t.bytes > f.hbm) continue;
    ++out.configs_fit;
    top.offer(book_planned(f, r, t, X, y, 0, parts));
  }
  out.top = std::move(top.items);
  return out;
}

}  // namespace

MicrobatchFloor microbatch_floor(const CalibratedContext& ctx, double b, double Y, AttentionKernel kernel) {
  const auto& c = ctx.model;
  // The GEMMs of calibrated.hpp's layer at the calibrated model's own rate for each shape.
  const double e = c.expert_d_ff > 0 ? c.expert_d_ff : c.d_ff;
  const double f = is_moe(c) ? (c.experts_per_token + c.shared_experts) * e : c.d_ff;  // the MLP width a token uses
  const double hq = c.q_heads * c.head_dim, hkv = c.kv_heads * c.head_dim;
  const double shapes[4][2] = {{c.d_model, (hq + 2 * hkv) / Y},
                               {hq / Y, c.d_model},
                               {c.d_model, (c.gated_mlp ? 2 : 1) * f / Y},
                               {f / Y, c.d_model}};
  MicrobatchFloor fl;
  for (const auto& s : shapes) fl.layer_fwd_mm_s += 2 * b * s[0] * s[1] / matmul_rate(ctx.cal, b, s[0], s[1]);
  fl.unembed_fwd_mm_s = 2 * b * c.d_model * (c.vocab / Y) / matmul_rate(ctx.cal, b, c.d_model, c.vocab / Y);
  // The attention core: a flash kernel's whole time, the calibrated model's own (flash_attention_times),
  // the materialized kernel's every pair at the matmul ceiling (the FLOP side of its roofline).
  const double ceiling = ctx.cal.matmul_ceiling_flops_per_s, per_pair = 4 * c.head_dim * b * (c.q_heads / Y);
  if (kernel != AttentionKernel::materialized) {
    const auto att = flash_attention_times(ctx, kernel, b, c.q_heads / Y);
    fl.att_fwd_s = att.fwd_s;
    fl.att_bwd_s = att.bwd_s;
  } else {
    fl.att_fwd_s = per_pair * ctx.seq_len / ceiling;
    fl.att_bwd_s = 2 * fl.att_fwd_s;
  }
  return fl;
}

double floor_step_s(const MicrobatchFloor& fl, const CalibratedContext& ctx, double m, double lps, double bubble_units,
                    Remat recompute) {
  const double fb = 1 + 2 / ctx.backward_gemm_rate_fraction;  // forward + backward GEMM time per forward's
  const double rerun = recompute == Remat::block         ? fl.layer_fwd_mm_s + fl.att_fwd_s
                       : recompute == Remat::big_matmuls ? fl.att_fwd_s
                                                         : 0;
  const double t_mb = lps * (fb * fl.layer_fwd_mm_s + fl.att_fwd_s + fl.att_bwd_s + rerun) + fb * fl.unembed_fwd_mm_s;
  // The guard covers rounding only: the calibrated model sums the same parts in another order.
  return (m + bubble_units) * t_mb * (1 - 1e-9);
}

double calibrated_step_floor_s(const CalibratedContext& ctx, const Layout& l) {
  const double X = data_degree(l), Y = tensor_degree(l), S = pipeline_degree(l), m = l.microbatches;
  const double lps = std::ceil(ctx.model.layers / S);
  const bool interleaved = l.schedule == Schedule::interleaved;
  const double units = S > 1 ? (interleaved ? (S - 1) / l.virtual_stages : S - 1) : 0;
  const auto fl = microbatch_floor(ctx, ctx.batch_tokens / (X * m), Y, l.attention);
  return floor_step_s(fl, ctx, m, lps, units, l.saved.recompute);
}

namespace {

// The interleaving degrees the calibrated search tries on S stages: every v ≥ 2, up to the layers a stage
// holds, that splits the layers evenly over the S·v virtual stages (Megatron-LM's rule, interleaves_evenly;
// Calculon tries every such v too).
// Appended to `out` (the search reuses one vector).
void add_interleavings(std::vector<int>& out, double L, double S) {
  const int lps = static_cast<int>(std::ceil(L / S));  // at most the layers, an int
  for (int v = 2; v <= lps; ++v)
    if (interleaves_evenly(L, S, v)) out.push_back(v);
}

// The search prunes against the K-th best step found so far, which is infinite until K layouts are
// timed. To start lower: the ideal model's K + 16 best layouts (a quick search, distinct combinations of
// degrees, each in the calibrated space with the request's switches), timed by the calibrated model; the
// K-th best of those that fit bounds the K-th best of the whole space (K distinct combinations whose
// best is at most that), so pruning at it loses nothing the list would keep. Infinite when fewer fit.
double seed_bound(const PlanRequest& r, const Fixed& f, CalibratedContext& ctx) {
  PlanRequest q = r;
  q.cost_model = CostModel::ideal;
  q.top_k = std::min(r.top_k, 1 << 24) + 16;
  std::vector<double> steps;
  // The ideal search splits sequences; the calibrated space does not (Fixed::whole, f.seqs): a seed
  // outside it would set a bound no layout of the space can meet.
  for (const auto& s : plan(q).top) {
    const double X = data_degree(s.layout);
    if (std::fmod(f.seqs, X * s.layout.microbatches) != 0) continue;
    Layout l = s.layout;
    apply_switches(l, r.switches, pipeline_degree(l), f.L);
    if (l.virtual_stages < 0) continue;  // the request's v does not split the layers evenly over the stages
    if (l.schedule == Schedule::interleaved && l.virtual_stages == 1) {
      // Interleaving asked for without a v: the search tries every v ≥ 2; the seed takes the smallest.
      std::vector<int> vs;
      add_interleavings(vs, f.L, pipeline_degree(l));
      if (vs.empty()) continue;
      l.virtual_stages = vs.front();
    }
    const Terms t = calibrated_terms(ctx, l, s.terms);
    if (t.memory.total <= r.system.chip.hbm_bytes) steps.push_back(t.step_s);
  }
  if (static_cast<int>(steps.size()) < r.top_k) return INFINITY;
  std::nth_element(steps.begin(), steps.begin() + (r.top_k - 1), steps.end());
  return steps[static_cast<size_t>(r.top_k - 1)];
}

}  // namespace

PlanResult plan(const PlanRequest& r) {
  const Fixed f = fix(r);
  if (r.cost_model == CostModel::book) return plan_book(r, f);
  const bool calibrated = r.cost_model == CostModel::calibrated;
  std::optional<CalibratedContext> ctx;
  if (calibrated) ctx = calibrated_context(r.model, r.system, r.batch_tokens, r.seq_len, r.setup);
  std::array<std::vector<AxisRoles>, kMaxAxes> options;
  for (int i = 0; i < f.n_fast; ++i) options[static_cast<size_t>(i)] = splits(f.axis[static_cast<size_t>(i)], true);
  const auto slow_options = splits(r.system.slow.groups, false);
  // The calibrated floor of one microbatch by (data degree × microbatches, tensor degree): few distinct.
  std::map<std::pair<double, double>, MicrobatchFloor> floors;
  std::vector<const MicrobatchFloor*> floor_of_micro(f.micro.size());

  PlanResult out;
  TopK top{r.top_k, {}};
  std::array<size_t, kMaxAxes> idx{};
  std::array<AxisRoles, kMaxAxes> axes{};
  // A starting bound for the pruning: the calibrated step of the ideal model's best layouts (see seed_bound).
  const double seeded = calibrated && r.prune ? seed_bound(r, f, *ctx) : INFINITY;
  std::vector<int> v_options;
  Planned work;  // the calibrated layout being timed
  Terms ideal;   // and the ideal terms of its base (the calibrated memory starts from them)
  for (;;) {
    for (int i = 0; i < f.n_fast; ++i) axes[static_cast<size_t>(i)] = options[static_cast<size_t>(i)][idx[static_cast<size_t>(i)]];
    for (const auto& slow : slow_options) {
      Assignment a = assign(f, r.system, axes.data(), slow);
      if (!degrees_keep_rules(f.heads, f.L, f.seqs, f.whole, a.X, a.Y, a.S) ||
          (r.max_pipeline > 0 && a.S > r.max_pipeline) || !has_fixed_degrees(r, a.X, a.Y, a.S))
        continue;
      cost_assignment(f, a);
      if (calibrated) {
        // The schedules to try: the request's (v = 1 here), and with search_switches the interleaved
        // schedule at every v add_interleavings gives. An interleaved schedule asked for without its v
        // takes those v only (with one virtual stage a stage it would be 1F1B, which calibrated_terms
        // refuses to call interleaved).
        v_options.assign(1, 1);
        const bool any_v = r.switches.schedule == Schedule::interleaved && r.switches.virtual_stages == 1;
        if (any_v && a.S >= 2) v_options.clear();
        if ((r.search_switches || any_v) && a.S >= 2)
          add_interleavings(v_options, f.L, a.S);
        for (int mi = 0; mi < f.n_micro; ++mi) {
          const double xm = a.X * f.micro[static_cast<size_t>(mi)];
          if (xm > f.seqs) break;
          if (std::fmod(f.seqs, xm) != 0) continue;  // a microbatch of part of a sequence
          auto [it, fresh] = floors.try_emplace({xm, a.Y});
          if (fresh) it->second = microbatch_floor(*ctx, r.batch_tokens / xm, a.Y, r.switches.attention);
          floor_of_micro[static_cast<size_t>(mi)] = &it->second;
        }
      }
      // Switches searched (calibrated only): sequence parallelism on and off and the TP overlap's three
      // modes where there is a tensor group, the DP overlap where a data group reduces gradients outside ZeRO-3.
      const int sp_options = calibrated && r.search_switches && a.Y > 1 ? 2 : 1;
      const int tpo_options = calibrated && r.search_tp_overlap && a.Y > 1 ? 3 : 1;
      for (int zero : r.zero_stages) {
        const int dpo_options = calibrated && r.search_dp_overlap && a.X > 1 && zero < 3 ? 2 : 1;
        const int per_schedule = sp_options * tpo_options * dpo_options;
        // ZeRO over the slice's data group only, or over every replica (only distinct with pods and a stage).
        for (int all = 0; all <= (zero > 0 && a.X_slow > 1); ++all) {
          // Under the calibrated model a stage over a ZeRO group of one chip is ZeRO-0 (calibrated.cpp):
          // only the lowest stage requested is timed, so the list holds no copies of one layout.
          if (calibrated && zero > *std::min_element(r.zero_stages.begin(), r.zero_stages.end()) &&
              (all ? a.X : a.X_fast) == 1)
            continue;
          const double state = state_bytes(a, zero, all);
          for (int rule = 0; rule < f.n_rules; ++rule) {
            for (int mi = 0; mi < f.n_micro && a.X * f.micro[static_cast<size_t>(mi)] <= f.seqs; ++mi) {
              if (f.whole && std::fmod(f.seqs, a.X * f.micro[static_cast<size_t>(mi)]) != 0) continue;
              const Score t = score(f, a, zero, all, state, mi, rule);
              if (!calibrated) {
                ++out.configs_evaluated;
                if (t.bytes > f.hbm) continue;
                ++out.configs_fit;
                if (t.step > top.worst_step()) continue;
                top.offer(make_planned(f, r, a, t, axes.data(), slow, mi, rule, zero, all));
                continue;
              }
              const std::uint64_t variants = v_options.size() * static_cast<std::uint64_t>(per_schedule);
              out.configs_evaluated += variants;
              // The calibrated memory is the ideal one plus what real runs add (calibrated.hpp: more
              // microbatches in flight, never fewer; buffers ≥ 0), so a layout the ideal model cannot fit
              // never fits, whatever its switches.
              if (t.bytes > f.hbm) continue;
              const double m = f.micro[static_cast<size_t>(mi)];
              const auto recompute = r.saved_rules[static_cast<size_t>(rule)].recompute;
              bool at_base = false;  // `work` holds this base layout and `ideal` its terms
              for (int v : v_options) {
                // The bubble of this schedule in units of one microbatch (calibrated.hpp): (S − 1)/v
                // interleaved, S − 1 for GPipe and 1F1B, none without a pipeline.
                const bool interleaved = v > 1 || (r.switches.schedule == Schedule::interleaved && a.S >= 2);
                const double v_used = v > 1 ? v : interleaved ? r.switches.virtual_stages : 1;
                if (interleaved && !interleaves_evenly(f.L, a.S, v_used)) {  // the request's v: uneven stages
                  out.configs_evaluated -= static_cast<std::uint64_t>(per_schedule);
                  continue;
                }
                // The bound: no switch of this schedule can beat the K-th best (planner.hpp's proof).
                if (r.prune) {
                  const double units = a.S > 1 ? (interleaved ? (a.S - 1) / v_used : a.S - 1) : 0;
                  const double floor =
                      floor_step_s(*floor_of_micro[static_cast<size_t>(mi)], *ctx, m, a.lps, units, recompute);
                  if (floor > std::min(seeded, top.worst_step())) {
                    out.configs_pruned += static_cast<std::uint64_t>(per_schedule);
                    continue;
                  }
                }
                if (!at_base) {
                  set_layout(work.layout, f, r, axes.data(), slow, mi, rule, zero, all);
                  ideal = ideal_terms(f, a, t, mi, rule, zero, all);
                  at_base = true;
                }
                Layout& l = work.layout;
                apply_switches(l, r.switches, a.S, f.L);
                if (v > 1) l.schedule = Schedule::interleaved, l.virtual_stages = v;
                for (int sp = 0; sp < sp_options; ++sp) {
                  for (int tpo = 0; tpo < tpo_options; ++tpo) {
                    for (int dpo = 0; dpo < dpo_options; ++dpo) {
                      if (sp_options == 2) l.sequence_parallel = sp == 1;
                      if (tpo_options == 3)
                        l.tp_overlap = std::array{TpOverlap::none, TpOverlap::backward, TpOverlap::all}[tpo];
                      if (dpo_options == 2) l.dp_overlap = dpo == 1;
                      work.terms = calibrated_terms(*ctx, l, ideal);
                      ++out.configs_timed;
                      if (work.terms.memory.total > f.hbm) continue;
                      ++out.configs_fit;
                      if (work.terms.step_s > top.worst_step()) continue;
                      top.offer(work);
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
    int i = 0;
    for (; i < f.n_fast; ++i) {
      auto& k = idx[static_cast<size_t>(i)];
      if (++k < options[static_cast<size_t>(i)].size()) break;
      k = 0;
    }
    if (i == f.n_fast) break;
  }
  out.top = std::move(top.items);
  return out;
}

Terms step_terms(const TransformerConfig& model, const System& system, const Layout& layout, const Batch& batch,
                 CostModel cost_model, const TrainingSetup& setup) {
  PlanRequest r;
  r.model = model;
  r.system = system;
  r.batch_tokens = batch.tokens;
  r.seq_len = batch.seq_len;
  r.saved_rules = {layout.saved};
  r.setup = setup;
  r.zero_stages = {layout.zero};
  r.cost_model = cost_model;
  if (layout.microbatches < 1)
    throw std::invalid_argument("microbatches = " + std::to_string(layout.microbatches) + ": must be at least 1");
  if (std::fmod(batch.tokens, layout.microbatches) != 0)
    throw std::invalid_argument("microbatches = " + std::to_string(layout.microbatches) + " does not divide the batch of " +
                                format_number(batch.tokens) + " tokens");
  if (layout.zero < 0 || layout.zero > 3)
    throw std::invalid_argument("ZeRO stage " + std::to_string(layout.zero) + ": must be 0, 1, 2 or 3");
  const Fixed f = fix(r, layout.microbatches);
  const auto& axes = layout.fast;
  if (static_cast<int>(axes.size()) != f.n_fast)
    throw std::invalid_argument("the layout names " + std::to_string(axes.size()) + " axes; the machine has " +
                                std::to_string(f.n_fast));
  for (int i = 0; i < f.n_fast; ++i) {
    const auto& s = axes[static_cast<size_t>(i)];
    if (s.data < 1 || s.tensor < 1 || s.pipeline < 1 || s.data * s.tensor * s.pipeline != f.axis[static_cast<size_t>(i)])
      throw std::invalid_argument("axis " + std::to_string(i) + ": data·tensor·pipeline must equal its size " +
                                  std::to_string(f.axis[static_cast<size_t>(i)]));
  }
  const auto& slow = layout.slow;
  if (slow.tensor != 1 || slow.data < 1 || slow.pipeline < 1 || slow.data * slow.pipeline != system.slow.groups)
    throw std::invalid_argument("the " + system.slow.name + " tier: data·pipeline must equal its " +
                                std::to_string(system.slow.groups) + " groups and tensor must be 1");
  Assignment a = assign(f, system, axes.data(), slow);
  if (cost_model == CostModel::book) {
    if (system.slow.groups != 1) throw std::invalid_argument("the book's cost model plans one slice: use --pods 1");
    if (a.S > 1) throw std::invalid_argument("the book's cost model has no pipeline");
    if (a.X > f.B)
      throw std::invalid_argument("data degree " + format_number(a.X) + " exceeds the batch of " + format_number(f.B) + " tokens");
    TrainingMemory parts;
    BookAxes used{};
    const Score t = score_book(f, r, a.X, a.Y, 0, &parts, layout.book, axes.data(), &used);
    auto p = book_planned(f, r, t, a.X, a.Y, 0, parts, &used);
    return p.terms;
  }
  if (std::fmod(f.heads, a.Y) != 0)
    throw std::invalid_argument("tensor degree " + format_number(a.Y) + " does not divide the " +
                                format_number(f.heads) + " heads");
  if (a.S > f.L)
    throw std::invalid_argument("pipeline degree " + format_number(a.S) + " exceeds the " + format_number(f.L) + " layers");
  if (!f.whole && a.X * layout.microbatches > f.B)
    throw std::invalid_argument("data degree × microbatches = " + format_number(a.X * layout.microbatches) +
                                " exceeds the batch of " + format_number(f.B) + " tokens");
  if (f.whole && std::fmod(f.seqs, a.X * layout.microbatches) != 0)
    throw std::invalid_argument(fmt::format(
        "data degree {} × microbatches {}: each replica's microbatch would hold {} sequences of {} tokens (the "
        "batch's {} {} over {}): must be a whole number of sequences",
        format_number(a.X), layout.microbatches, format_number(f.seqs / (a.X * layout.microbatches), 6),
        format_number(batch.seq_len), format_number(f.seqs), f.seqs == 1 ? "sequence" : "sequences",
        format_number(a.X * layout.microbatches)));
  const bool all = layout.zero_scope == ZeroScope::all;
  cost_assignment(f, a);
  const Score t = score(f, a, layout.zero, all, state_bytes(a, layout.zero, all), 0, 0);
  const Terms ideal = make_planned(f, r, a, t, axes.data(), slow, 0, 0, layout.zero, all).terms;
  if (cost_model != CostModel::calibrated) return ideal;
  auto ctx = calibrated_context(model, system, batch.tokens, batch.seq_len, setup);
  return calibrated_terms(ctx, layout, ideal);
}

Planned best_placement(const TransformerConfig& model, const System& system, int data, int tensor, int pipeline,
                       const Layout& base, const Batch& batch, CostModel cost_model, const TrainingSetup& setup) {
  if (data < 1 || tensor < 1 || pipeline < 1)
    throw std::invalid_argument("degrees must be at least 1 (data " + std::to_string(data) + ", tensor " +
                                std::to_string(tensor) + ", pipeline " + std::to_string(pipeline) + ")");
  const double n = chips(system);
  if (static_cast<double>(data) * tensor * pipeline != n)
    throw std::invalid_argument(fmt::format("data {} × tensor {} × pipeline {} = {}: must equal the {} chips", data,
                                            tensor, pipeline, format_number(static_cast<double>(data) * tensor * pipeline),
                                            format_number(n)));
  const auto options = placements(system, data, tensor, pipeline, base);
  if (options.empty()) {
    std::string sizes;
    for (const auto& a : system.fast) {
      if (!sizes.empty()) sizes += 'x';
      sizes += std::to_string(a.size);
    }
    throw std::invalid_argument(fmt::format("no placement of data {} × tensor {} × pipeline {} on the {} axes {} and "
                                            "{} {} (tensor parallelism stays inside a slice or node; each axis' "
                                            "factors must divide its size)",
                                            data, tensor, pipeline, system.fast_name, sizes, system.slow.groups,
                                            system.slow.groups == 1 ? "group" : "groups"));
  }
  std::optional<Planned> best;
  std::string last_error;
  for (const auto& l : options) {
    try {
      Planned p{l, step_terms(model, system, l, batch, cost_model, setup)};
      if (!best || better(p.terms, best->terms)) best = std::move(p);
    } catch (const std::invalid_argument& e) {
      last_error = e.what();
    }
  }
  if (!best) throw std::invalid_argument(last_error);
  return *best;
}

std::string describe_axes(const Planned& p, const System& s) {
  if (p.terms.m_x > 0) return fmt::format("M_X={} M_Y={}", p.terms.m_x, p.terms.m_y);
  return describe_axes(p.layout, s);
}

std::string bound_label(Bound b, const System& s) {
  if (b == Bound::ici) return s.fast_name;
  if (b == Bound::dcn) return s.slow.name;
  return to_string(b);
}

}  // namespace scaling
