#include "scaling/cost/planner.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "scaling/base/format.hpp"

namespace scaling {

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

std::vector<SavedRule> default_saved_rules() {
  return {{"D", Remat::block}, {"2D+2F+N·H+2K·H", Remat::big_matmuls}, {"20D", Remat::none}};
}

PlanHardware tpu_pods(const Chip& c, const std::vector<int>& shape, int pods) {
  if (c.ici_bidi_bytes_per_s <= 0) throw std::invalid_argument(c.name + ": no ICI bandwidth: not a TPU");
  if (pods < 1) throw std::invalid_argument("pods = " + std::to_string(pods) + ": must be at least 1");
  PlanHardware h;
  h.name = c.display + " " + shape_text(shape) + (pods > 1 ? " × " + std::to_string(pods) + " pods" : "");
  h.flops_per_s = c.bf16_flops_per_s;
  h.hbm_bytes = c.hbm_bytes;
  h.hbm_bytes_per_s = c.hbm_bytes_per_s;
  h.fast_axes = shape;
  h.fast_bytes_per_s.assign(shape.size(), c.ici_bidi_bytes_per_s);
  h.slow_groups = pods;
  const double per_host = std::min(chips_in(c.host_shape), chips_in(shape));
  h.slow_bytes_per_s = c.dcn_bytes_per_s_per_host / per_host;
  return h;
}

PlanHardware gpu_cluster(const Chip& c, int gpus_per_node, int nodes, double nvlink_bytes_per_s,
                         double ib_bytes_per_s) {
  if (gpus_per_node < 1 || nodes < 1)
    throw std::invalid_argument("a GPU cluster needs at least one node of at least one GPU");
  if (!(nvlink_bytes_per_s > 0) || !(ib_bytes_per_s > 0) || !std::isfinite(nvlink_bytes_per_s) ||
      !std::isfinite(ib_bytes_per_s))
    throw std::invalid_argument("NVLink and InfiniBand bandwidths must be positive and finite");
  PlanHardware h;
  h.name = std::to_string(nodes) + " × " + std::to_string(gpus_per_node) + " " + c.display;
  h.flops_per_s = c.bf16_flops_per_s;
  h.hbm_bytes = c.hbm_bytes;
  h.hbm_bytes_per_s = c.hbm_bytes_per_s;
  h.fast_axes = {gpus_per_node};
  h.fast_bytes_per_s = {nvlink_bytes_per_s};
  h.slow_groups = nodes;
  h.slow_bytes_per_s = ib_bytes_per_s;
  h.fast_name = "NVLink";
  h.slow_name = "InfiniBand";
  return h;
}

namespace {

constexpr int kMaxAxes = 6;

// What one request fixes: the model's sizes and the per-rule constants.
struct Fixed {
  double B, L, D, heads, C, hbm, hbm_bw, slow_bw;
  double p_layer, p_other, n_active;
  double w_bytes = 2, g_bytes = 2, opt_bytes = 8, act_bytes = 2;
  int n_rules;
  std::array<double, 8> rule_elements{};  // saved elements per token per layer
  std::array<double, 8> rule_flops{};     // training FLOPs per token with the rule's recomputation
  std::array<double, 8> rule_reruns{};    // extra passes over the weights (a rerun forward)
  int n_fast;
  std::array<int, kMaxAxes> axis{};
  std::array<double, kMaxAxes> axis_bw{};
};

// Per-layer elements per token a rule keeps. TODO(train-lib): the rule parser of the training library.
double rule_elements(const SavedRule& r, const TransformerConfig& c) {
  return saved_tensors_per_layer(r.recompute) * c.d_model;
}

Fixed fix(const PlanRequest& r) {
  const auto& c = r.model;
  validate(c);
  if (!(r.batch_tokens >= 1) || !std::isfinite(r.batch_tokens))
    throw std::invalid_argument("batch = " + format_number(r.batch_tokens) + " tokens: must be at least 1");
  if (!(r.seq_len >= 1) || !std::isfinite(r.seq_len))
    throw std::invalid_argument("sequence length = " + format_number(r.seq_len) + ": must be at least 1");
  if (r.saved_rules.empty() || r.saved_rules.size() > 8)
    throw std::invalid_argument("the planner needs 1 to 8 activation-saving rules");
  if (r.zero_stages.empty()) throw std::invalid_argument("the planner needs at least one ZeRO stage");
  for (int z : r.zero_stages)
    if (z < 0 || z > 3) throw std::invalid_argument("ZeRO stage " + std::to_string(z) + ": must be 0, 1, 2 or 3");
  if (r.top_k < 1) throw std::invalid_argument("top = " + std::to_string(r.top_k) + ": must be at least 1");
  if (r.max_microbatches < 1) throw std::invalid_argument("max microbatches must be at least 1");
  const auto& h = r.hw;
  if (h.fast_axes.empty() || h.fast_axes.size() > kMaxAxes || h.fast_bytes_per_s.size() != h.fast_axes.size())
    throw std::invalid_argument("the machine needs 1 to 6 fast axes, each with a bandwidth");
  for (size_t i = 0; i < h.fast_axes.size(); ++i) {
    if (h.fast_axes[i] < 1) throw std::invalid_argument("axis size " + std::to_string(h.fast_axes[i]) + ": must be at least 1");
    if (!(h.fast_bytes_per_s[i] > 0) || !std::isfinite(h.fast_bytes_per_s[i]))
      throw std::invalid_argument("axis bandwidth must be positive and finite");
  }
  if (h.slow_groups < 1) throw std::invalid_argument("the slow network joins at least 1 group");
  if (!(h.flops_per_s > 0) || !(h.hbm_bytes > 0) || !(h.hbm_bytes_per_s > 0))
    throw std::invalid_argument("the chip needs positive FLOPs/s, HBM bytes and HBM bandwidth");
  if (h.slow_groups > 1 && !(h.slow_bytes_per_s > 0))
    throw std::invalid_argument("more than one group needs a positive " + h.slow_name + " bandwidth");
  Fixed f;
  f.B = r.batch_tokens;
  f.L = c.layers;
  f.D = c.d_model;
  f.heads = c.q_heads;
  f.C = h.flops_per_s;
  f.hbm = h.hbm_bytes;
  f.hbm_bw = h.hbm_bytes_per_s;
  f.slow_bw = h.slow_bytes_per_s;
  const auto p = param_counts(c);
  f.p_layer = (p.attention + p.mlp + p.router + (p.norms - (c.final_norm ? c.d_model * (c.norm_bias ? 2 : 1) : 0))) / c.layers;
  f.p_other = p.total - f.p_layer * c.layers;
  f.n_active = p.active;
  f.n_rules = static_cast<int>(r.saved_rules.size());
  for (int i = 0; i < f.n_rules; ++i) {
    const auto& rule = r.saved_rules[static_cast<size_t>(i)];
    f.rule_elements[static_cast<size_t>(i)] = rule_elements(rule, c);
    f.rule_flops[static_cast<size_t>(i)] =
        six_n_rule_flops_per_token(c) + remat_extra_flops_per_token(c, r.seq_len, rule.recompute);
    f.rule_reruns[static_cast<size_t>(i)] = rule.recompute == Remat::block ? 1 : 0;
  }
  f.n_fast = static_cast<int>(h.fast_axes.size());
  for (int i = 0; i < f.n_fast; ++i) {
    f.axis[static_cast<size_t>(i)] = h.fast_axes[static_cast<size_t>(i)];
    f.axis_bw[static_cast<size_t>(i)] = h.fast_bytes_per_s[static_cast<size_t>(i)];
  }
  return f;
}

// What one assignment of the axes fixes (independent of ZeRO stage, rule and microbatches).
struct Assignment {
  double X, X_fast, X_slow, Y, S, S_fast, S_slow, chips;
  double lps, p_stage, imbalance;
  double w_data, w_tensor, w_pipe;  // bandwidths of the groups (bytes/s), 0 when the group is trivial
};

Assignment assign(const Fixed& f, const AxisSplit* axes, AxisSplit slow) {
  Assignment a{};
  a.X_fast = a.Y = a.S_fast = 1;
  double pipe_bw = 0;
  for (int i = 0; i < f.n_fast; ++i) {
    const auto& s = axes[i];
    const int share = (s.data > 1) + (s.tensor > 1) + (s.pipeline > 1);
    const double w = share > 0 ? f.axis_bw[static_cast<size_t>(i)] / share : 0;
    a.X_fast *= s.data;
    a.Y *= s.tensor;
    a.S_fast *= s.pipeline;
    if (s.data > 1) a.w_data += w;
    if (s.tensor > 1) a.w_tensor += w;
    // A stage hands its activations to the next over one link, one way: the slowest axis it crosses.
    if (s.pipeline > 1) pipe_bw = pipe_bw > 0 ? std::min(pipe_bw, w / 2) : w / 2;
  }
  a.w_pipe = pipe_bw;
  a.X_slow = slow.data;
  a.S_slow = slow.pipeline;
  a.X = a.X_fast * a.X_slow;
  a.S = a.S_fast * a.S_slow;
  a.chips = a.X * a.Y * a.S;
  a.lps = std::ceil(f.L / a.S);
  a.p_stage = a.lps * f.p_layer + f.p_other;
  a.imbalance = a.S * a.lps / f.L;
  return a;
}

struct Terms {
  double step, bytes, t_math, t_hbm, t_bubble, t_ici, t_dcn;
  Bound bound;
};

// §5, the exact model of planner.hpp, for one layout.
inline Terms score(const Fixed& f, const Assignment& a, int zero, bool zero_all, double m, int rule) {
  const auto ri = static_cast<size_t>(rule);
  const double b = f.B / (a.X * m);  // tokens per microbatch per data replica
  const double z = zero_all ? a.X : a.X_fast;  // the ZeRO group
  const double weights = f.w_bytes * a.p_stage / a.Y, grads = f.g_bytes * a.p_stage / a.Y;
  // Memory per chip.
  const double inflight = a.S > 1 ? std::min(m, a.S) : 1;
  const double bytes = weights / (zero >= 3 ? z : 1) + grads / (zero >= 2 ? z : 1) +
                       f.opt_bytes * a.p_stage / a.Y / (zero >= 1 ? z : 1) +
                       f.rule_elements[ri] * f.act_bytes * a.lps * (b / a.Y) * inflight;
  // The chip: FLOPs and the weights read from HBM.
  const double t_math = f.rule_flops[ri] * f.B * a.imbalance / (a.chips * f.C);
  const double t_hbm = m * (3 + f.rule_reruns[ri]) * weights / f.hbm_bw;
  const double chip = std::max(t_math, t_hbm);
  const double t_bubble = (a.S - 1) / m * chip;
  // ICI: the data group's collectives of the stage's weights and gradients.
  double t_data = 0;
  if (a.X_fast > 1) {
    const double ring = (a.X_fast - 1) / a.X_fast / a.w_data;
    const double ag = weights * ring, rs = grads * ring;
    t_data = zero == 3 ? m * (2 * ag + rs) : zero == 2 ? m * rs + ag : zero == 1 ? rs + ag : 2 * rs;
  }
  // Tensor: 8 collectives of [b, D] per layer and microbatch (4 forward, 4 backward); m·b = B/X.
  double t_tensor = 0;
  if (a.Y > 1) t_tensor = a.lps * 8 * (a.Y - 1) / a.Y * f.act_bytes * (f.B / a.X) * f.D / a.w_tensor;
  // Pipeline: the activation forward and its gradient back, [b, D/Y] each, per microbatch.
  const double pipe_bytes = 2 * f.act_bytes * (f.B / a.X) * f.D / a.Y;
  const double t_pipe_fast = a.S_fast > 1 ? pipe_bytes / a.w_pipe : 0;
  const double t_ici = std::max(t_data, std::max(t_tensor, t_pipe_fast));
  // DCN: each chip's share (1/X_fast) of the stage crosses the pods: an AllReduce of its gradient once per
  // step, or, when ZeRO shards across the pods too, the same pattern of collectives as inside the slice.
  double t_dcn = 0;
  if (a.X_slow > 1) {
    const double ring = (a.X_slow - 1) / a.X_slow / a.X_fast / f.slow_bw;
    const double ag = weights * ring, rs = grads * ring;
    t_dcn += !zero_all ? 2 * rs : zero == 3 ? m * (2 * ag + rs) : zero == 2 ? m * rs + ag : rs + ag;
  }
  if (a.S_slow > 1) t_dcn += pipe_bytes / f.slow_bw;
  const double step = std::max(chip + t_bubble, std::max(t_ici, t_dcn));
  Bound bound;
  if (t_ici >= chip + t_bubble && t_ici >= t_dcn) bound = Bound::ici;
  else if (t_dcn >= chip + t_bubble) bound = Bound::dcn;
  else if (t_bubble > chip) bound = Bound::bubble;
  else bound = t_hbm > t_math ? Bound::memory : Bound::compute;
  return {step, bytes, t_math, t_hbm, t_bubble, t_ici, t_dcn, bound};
}

// All (d, t, p) with d·t·p = n; the slow axis takes t = 1.
std::vector<AxisSplit> splits(int n, bool tensor) {
  std::vector<AxisSplit> out;
  for (int d = 1; d <= n; ++d) {
    if (n % d) continue;
    for (int t = 1; t <= n / d; ++t) {
      if ((n / d) % t || (!tensor && t > 1)) continue;
      out.push_back({d, t, n / d / t});
    }
  }
  return out;
}

// Faster first; on a tie, less memory, then less time on the networks (more headroom).
bool better(const PlanLayout& a, const PlanLayout& b) {
  if (a.step_s != b.step_s) return a.step_s < b.step_s;
  if (a.bytes_per_chip != b.bytes_per_chip) return a.bytes_per_chip < b.bytes_per_chip;
  return std::max(a.t_ici_s, a.t_dcn_s) < std::max(b.t_ici_s, b.t_dcn_s);
}

// Layouts that differ only in how the same degrees sit on the axes count once in the list: the best mapping.
bool same_degrees(const PlanLayout& a, const PlanLayout& b) {
  return a.fsdp == b.fsdp && a.tp == b.tp && a.pipeline == b.pipeline && a.microbatches == b.microbatches &&
         a.zero == b.zero && a.zero_all == b.zero_all && a.saved == b.saved && a.fsdp_slow == b.fsdp_slow && a.pipeline_slow == b.pipeline_slow;
}

// The K best so far, kept sorted; `worst` is the step time a layout must beat once full.
struct TopK {
  int k;
  std::vector<PlanLayout> items;
  double worst_step() const { return static_cast<int>(items.size()) < k ? INFINITY : items.back().step_s; }
  void offer(const PlanLayout& l) {
    if (static_cast<int>(items.size()) == k && !better(l, items.back())) return;
    for (auto it = items.begin(); it != items.end(); ++it) {
      if (!same_degrees(*it, l)) continue;
      if (!better(l, *it)) return;
      items.erase(it);
      break;
    }
    items.insert(std::upper_bound(items.begin(), items.end(), l, better), l);
    if (static_cast<int>(items.size()) > k) items.pop_back();
  }
};

PlanLayout make_layout(const Fixed& f, const Assignment& a, const Terms& t, const AxisSplit* axes, AxisSplit slow,
                       int m, int rule, int zero, double six_n) {
  PlanLayout l;
  l.fsdp = static_cast<int>(a.X);
  l.tp = static_cast<int>(a.Y);
  l.pipeline = static_cast<int>(a.S);
  l.microbatches = m;
  l.zero = zero;
  l.fsdp_slow = slow.data;
  l.pipeline_slow = slow.pipeline;
  l.axes.assign(axes, axes + f.n_fast);
  l.saved = rule;
  l.step_s = t.step;
  l.bytes_per_chip = t.bytes;
  l.t_math_s = t.t_math;
  l.t_hbm_s = t.t_hbm;
  l.t_bubble_s = t.t_bubble;
  l.t_ici_s = t.t_ici;
  l.t_dcn_s = t.t_dcn;
  l.bound = t.bound;
  l.mfu = six_n * f.B / (a.chips * f.C * t.step);
  return l;
}

// §5.1.4: the book's FSDP × TP model on one slice.
struct BookAxes {
  double m_x, m_y;
};
BookAxes book_axes(const Fixed& f, double X, double Y) {
  int long_axes = 0;
  for (int i = 0; i < f.n_fast; ++i) long_axes += f.axis[static_cast<size_t>(i)] > 1;
  long_axes = std::max(long_axes, 1);
  if (Y == 1) return {static_cast<double>(long_axes), 0};
  if (X == 1) return {0, static_cast<double>(long_axes)};
  return {std::max(long_axes - 1, 1) * 1.0, 1};
}

Terms score_book(const Fixed& f, const PlanRequest& r, double X, double Y, int rule) {
  const auto& c = r.model;
  const double D = c.d_model, F = c.d_ff, B = f.B, N = X * Y, W = f.axis_bw[0];
  const auto [m_x, m_y] = book_axes(f, X, Y);
  const double t_math = 4 * B * D * F / (N * f.C);
  const double t_fsdp = X > 1 ? 4 * D * F / (Y * W * m_x) : 0;
  const double t_mp = Y > 1 ? 4 * B * D / (X * W * m_y) : 0;
  const double t_comms = t_fsdp + t_mp;
  const double step = 3 * f.L * std::max(t_math, t_comms);
  Assignment a{};
  a.X = a.X_fast = X, a.Y = Y, a.S = 1, a.chips = N, a.lps = f.L, a.p_stage = f.p_layer * f.L + f.p_other;
  const double bytes = (f.w_bytes + f.g_bytes + f.opt_bytes) * a.p_stage / N +
                       f.rule_elements[static_cast<size_t>(rule)] * f.act_bytes * f.L * B / N;
  return {step, bytes, 3 * f.L * t_math, 0, 0, 3 * f.L * t_comms, 0, t_comms > t_math ? Bound::ici : Bound::compute};
}

PlanResult plan_book(const PlanRequest& r, const Fixed& f) {
  if (r.hw.slow_groups != 1) throw std::invalid_argument("the book's cost model plans one slice: use --pods 1");
  double N = 1;
  for (int i = 0; i < f.n_fast; ++i) N *= f.axis[static_cast<size_t>(i)];
  PlanResult out;
  TopK top{r.top_k, {}};
  for (int y = 1; y <= N; ++y) {
    if (static_cast<int>(N) % y || std::fmod(f.heads, y) != 0) continue;
    const double X = N / y;
    if (X > f.B) continue;
    ++out.configs_evaluated;
    const Terms t = score_book(f, r, X, y, 0);  // the first rule: memory only, the book's time has none
    if (t.bytes > f.hbm) continue;
    ++out.configs_fit;
    PlanLayout l;
    l.fsdp = static_cast<int>(X);
    l.tp = y;
    l.step_s = t.step;
    l.bytes_per_chip = t.bytes;
    l.t_math_s = t.t_math;
    l.t_ici_s = t.t_ici;
    l.bound = t.bound;
    l.mfu = t.t_math / t.step;  // of the book's FLOPs: the two MLP matrices
    top.offer(l);
  }
  out.top = std::move(top.items);
  return out;
}

}  // namespace

PlanResult plan(const PlanRequest& r) {
  const Fixed f = fix(r);
  if (r.cost_model == CostModel::book) return plan_book(r, f);
  const double six_n = six_n_rule_flops_per_token(r.model);
  std::array<std::vector<AxisSplit>, kMaxAxes> options;
  for (int i = 0; i < f.n_fast; ++i) options[static_cast<size_t>(i)] = splits(f.axis[static_cast<size_t>(i)], true);
  const auto slow_options = splits(r.hw.slow_groups, false);
  std::vector<double> microbatches;
  for (double m = 1; m <= r.max_microbatches; m *= 2) microbatches.push_back(m);

  PlanResult out;
  TopK top{r.top_k, {}};
  std::array<size_t, kMaxAxes> idx{};
  std::array<AxisSplit, kMaxAxes> axes{};
  for (;;) {
    for (int i = 0; i < f.n_fast; ++i) axes[static_cast<size_t>(i)] = options[static_cast<size_t>(i)][idx[static_cast<size_t>(i)]];
    for (const auto& slow : slow_options) {
      const Assignment a = assign(f, axes.data(), slow);
      if (std::fmod(f.heads, a.Y) != 0 || a.S > f.L || a.X > f.B) continue;
      for (int zero : r.zero_stages) {
        // ZeRO over the slice's data group only, or over every replica (only distinct with pods and a stage).
        for (int all = 0; all <= (zero > 0 && a.X_slow > 1); ++all) {
          for (int rule = 0; rule < f.n_rules; ++rule) {
            for (double m : microbatches) {
              if (a.X * m > f.B) break;
              ++out.configs_evaluated;
              const Terms t = score(f, a, zero, all, m, rule);
              if (t.bytes > f.hbm) continue;
              ++out.configs_fit;
              if (t.step > top.worst_step()) continue;
              auto l = make_layout(f, a, t, axes.data(), slow, static_cast<int>(m), rule, zero, six_n);
              l.zero_all = all;
              top.offer(l);
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

PlanLayout evaluate(const PlanRequest& r, const std::vector<AxisSplit>& axes, AxisSplit slow, int microbatches,
                    int saved, int zero, bool zero_all) {
  const Fixed f = fix(r);
  if (static_cast<int>(axes.size()) != f.n_fast)
    throw std::invalid_argument("the layout names " + std::to_string(axes.size()) + " axes; the machine has " +
                                std::to_string(f.n_fast));
  if (saved < 0 || saved >= f.n_rules) throw std::invalid_argument("no activation rule " + std::to_string(saved));
  if (zero < 0 || zero > 3) throw std::invalid_argument("ZeRO stage " + std::to_string(zero) + ": must be 0–3");
  if (microbatches < 1) throw std::invalid_argument("microbatches must be at least 1");
  for (int i = 0; i < f.n_fast; ++i) {
    const auto& s = axes[static_cast<size_t>(i)];
    if (s.data < 1 || s.tensor < 1 || s.pipeline < 1 || s.data * s.tensor * s.pipeline != f.axis[static_cast<size_t>(i)])
      throw std::invalid_argument("axis " + std::to_string(i) + ": data·tensor·pipeline must equal its size " +
                                  std::to_string(f.axis[static_cast<size_t>(i)]));
  }
  if (slow.tensor != 1 || slow.data < 1 || slow.pipeline < 1 || slow.data * slow.pipeline != r.hw.slow_groups)
    throw std::invalid_argument("the slow axis: data·pipeline must equal " + std::to_string(r.hw.slow_groups) +
                                " and tensor must be 1");
  const double six_n = six_n_rule_flops_per_token(r.model);
  if (r.cost_model == CostModel::book) {
    if (r.hw.slow_groups != 1) throw std::invalid_argument("the book's cost model plans one slice: use --pods 1");
    double X = 1, Y = 1;
    for (const auto& s : axes) X *= s.data * s.pipeline, Y *= s.tensor;
    const Terms t = score_book(f, r, X, Y, saved);
    Assignment a{};
    a.X = X, a.Y = Y, a.S = 1, a.chips = X * Y;
    auto l = make_layout(f, a, t, axes.data(), slow, 1, saved, 3, six_n);
    l.mfu = t.t_math / t.step;
    return l;
  }
  const Assignment a = assign(f, axes.data(), slow);
  const Terms t = score(f, a, zero, zero_all, microbatches, saved);
  auto l = make_layout(f, a, t, axes.data(), slow, microbatches, saved, zero, six_n);
  l.zero_all = zero_all;
  return l;
}

std::string describe_axes(const PlanLayout& l, const PlanHardware& hw) {
  std::string s;
  for (size_t i = 0; i < l.axes.size() && i < hw.fast_axes.size(); ++i) {
    const auto& a = l.axes[i];
    s += fmt::format("{}{}={}·{}·{}", s.empty() ? "" : " ", hw.fast_axes[i], a.data, a.tensor, a.pipeline);
  }
  if (hw.slow_groups > 1)
    s += fmt::format(" {} {}={}·1·{}", hw.slow_name, hw.slow_groups, l.fsdp_slow, l.pipeline_slow);
  return s;
}

}  // namespace scaling
