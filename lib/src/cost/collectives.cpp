#include "scaling/cost/collectives.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "scaling/base/format.hpp"
#include "scaling/base/validate.hpp"

namespace scaling {

namespace {
constexpr std::array<std::pair<Collective, std::string_view>, 4> kNames{{
    {Collective::all_gather, "all-gather"},
    {Collective::reduce_scatter, "reduce-scatter"},
    {Collective::all_reduce, "all-reduce"},
    {Collective::all_to_all, "all-to-all"},
}};

double bandwidth(const Axis& a, const Link& l) { return a.wraps ? l.bidi_bytes_per_s : l.oneway_bytes_per_s; }
}  // namespace

Collective parse_collective(std::string_view text) {
  require_printable("collective", text);
  for (const auto& [op, n] : kNames)
    if (n == text) return op;
  check::not_one_of(text, {"all-gather", "reduce-scatter", "all-reduce", "all-to-all"});
}

std::string_view name(Collective c) {
  for (const auto& [op, n] : kNames)
    if (op == c) return n;
  return "?";
}

namespace {
// The one conversion from a chip's figure along an axis (what it takes in over the axis, system.hpp) to
// the figures of one link: on ICI a chip has a link to each neighbour and the figure counts both (W_bidir),
// so one direction of one link carries half of it; behind an NVLink switch a GPU has one port, whose one
// direction is the figure itself.
Link link_from_axis_figure(double bytes_per_s, double hop_latency_s, bool switched) {
  const double links_per_chip = switched ? 1 : 2;
  return {bytes_per_s / links_per_chip, bytes_per_s, hop_latency_s};
}
}  // namespace

Link ici_link(const Chip& c) {
  if (c.ici_bidi_bytes_per_s <= 0) throw std::invalid_argument("chip " + std::string(c.name) + " has no ICI figures");
  check_ici_figures(c);
  // The figure tpu_pods gives every ICI axis of a System (system.cpp), by the rule axis_link uses: the cost
  // model's link and the simulator's are one.
  return link_from_axis_figure(c.ici_bidi_bytes_per_s, c.ici_hop_latency_s, /*switched=*/false);
}

Link axis_link(const System& s, int axis) {
  if (axis < 0 || static_cast<size_t>(axis) >= s.fast.size())
    throw std::invalid_argument(fmt::format("axis {} out of range: {} has {} fast axes", axis, s.name, s.fast.size()));
  const FastAxis& a = s.fast[static_cast<size_t>(axis)];
  return link_from_axis_figure(a.bytes_per_s, a.hop_latency_s, is_gpu(s.chip));
}

CollectiveCost collective_cost(Collective op, const std::vector<Axis>& axes, double bytes, const Link& link) {
  if (axes.empty()) throw std::invalid_argument("a collective needs at least one mesh axis");
  check::positive("bytes", bytes);
  double n = 1, sum_w = 0;
  int hops = 0;
  for (const auto& a : axes) {
    if (a.size < 1) throw std::invalid_argument("mesh axis size " + std::to_string(a.size) + ": must be at least 1");
    n *= a.size;
    sum_w += bandwidth(a, link);
    hops += a.wraps ? a.size / 2 : a.size - 1;
  }
  double t_bw = 0;
  switch (op) {
    case Collective::all_gather:
    case Collective::reduce_scatter: t_bw = (n - 1) / n * bytes / sum_w; break;
    case Collective::all_reduce: t_bw = 2 * (n - 1) / n * bytes / sum_w; break;
    case Collective::all_to_all:
      for (const auto& a : axes) {
        const double quarter_square = std::floor(double(a.size) * a.size / 4);
        t_bw = std::max(t_bw, quarter_square * bytes / (n * a.size * bandwidth(a, link)));
      }
      break;
  }
  if (op == Collective::all_reduce) hops *= 2;
  const double t_lat = hops * link.hop_latency_s;
  return {std::max(t_bw, t_lat), t_bw, t_lat, t_lat > t_bw, hops};
}

double book_collective_time_s(Collective op, const std::vector<Axis>& axes, double bytes, const Link& link) {
  if (axes.empty()) throw std::invalid_argument("a collective needs at least one mesh axis");
  double half_path = 0;
  for (const auto& a : axes) half_path += a.size / 2.0;
  const double gather = std::max(link.hop_latency_s * half_path,
                                 bytes / (link.bidi_bytes_per_s * static_cast<double>(axes.size())));
  switch (op) {
    case Collective::all_gather:
    case Collective::reduce_scatter: return gather;
    case Collective::all_reduce: return 2 * gather;
    case Collective::all_to_all:
      return std::max(link.hop_latency_s * half_path,
                      bytes / (4 * link.bidi_bytes_per_s * static_cast<double>(axes.size())));
  }
  return gather;
}

std::vector<Axis> slice_axes(const Slice& s, const std::vector<int>& indices) {
  if (indices.empty()) throw std::invalid_argument("no axes given");
  std::vector<Axis> out;
  std::vector<bool> used(s.shape.size());
  for (int i : indices) {
    if (i < 0 || i >= static_cast<int>(s.shape.size()))
      throw std::invalid_argument("axis " + std::to_string(i) + ": the slice has axes 0.." +
                                  std::to_string(s.shape.size() - 1));
    if (used[static_cast<size_t>(i)]) throw std::invalid_argument("axis " + std::to_string(i) + " given twice");
    used[static_cast<size_t>(i)] = true;
    out.push_back({s.shape[static_cast<size_t>(i)], s.wraps[static_cast<size_t>(i)]});
  }
  return out;
}

std::string_view name(CollectiveAlgorithm a) {
  switch (a) {
    case CollectiveAlgorithm::tree: return "tree";
    case CollectiveAlgorithm::sharp: return "sharp";
    case CollectiveAlgorithm::ring: break;
  }
  return "ring";
}

CollectiveAlgorithm parse_collective_algorithm(std::string_view text) {
  require_printable("algorithm", text);
  for (CollectiveAlgorithm a : {CollectiveAlgorithm::ring, CollectiveAlgorithm::tree})  // SHARP: not by name
    if (text == name(a)) return a;
  check::not_one_of(text, {"ring", "tree"});
}

GpuCollectiveCost gpu_collective_cost(Collective op, const System& s, double v, CollectiveAlgorithm algorithm) {
  if (s.fast.size() != 1 || s.fast_name != "NVLink") throw std::invalid_argument(s.name + ": not a GPU cluster");
  if (!(v > 0) || !std::isfinite(v)) throw std::invalid_argument("bytes must be positive and finite");
  const double g = s.fast[0].size, m = s.slow.groups, n = g * m;
  const double w_nv = s.fast[0].bytes_per_s, w_ib = s.slow.bytes_per_s;
  if (algorithm == CollectiveAlgorithm::tree && op != Collective::all_reduce)
    throw std::invalid_argument(std::string(name(op)) + " has no tree form: only all-reduce (§12)");
  if (algorithm == CollectiveAlgorithm::tree && m < 2)
    throw std::invalid_argument("a tree runs across nodes: it needs at least 2 nodes");
  GpuCollectiveCost c;
  // A ring stage on one tier: each GPU receives fraction (k − 1)/k of `bytes`, passes = 1 or 2.
  auto ring = [](TierCost& t, double k, double bytes, double w, int passes) {
    t.bytes_per_gpu += passes * (k - 1) / k * bytes;
    t.steps += passes * static_cast<int>(k - 1);
    t.t_bandwidth_s = t.bytes_per_gpu / w;
  };
  if (algorithm == CollectiveAlgorithm::sharp && op != Collective::all_reduce)
    throw std::invalid_argument(std::string(name(op)) + " has no in-network (SHARP) form: only all-reduce (§12.4.1)");
  if (algorithm == CollectiveAlgorithm::sharp) {
    // In-network reduction: V in and out of every GPU's NVLink port; V/G through its NIC across nodes.
    if (g > 1) c.nvlink = {v / w_nv, 0, 2, v};
    if (m > 1) c.infiniband = {v / g / w_ib, 0, 2, v / g};
  } else if (op == Collective::all_to_all) {
    c.nvlink.bytes_per_gpu = (g - 1) * v / (n * n);
    c.nvlink.steps = g > 1 ? 1 : 0;
    c.nvlink.t_bandwidth_s = c.nvlink.bytes_per_gpu / w_nv;
    if (m > 1) {
      c.infiniband.bytes_per_gpu = (n - g) * v / (n * n);
      c.infiniband.steps = 1;
      c.infiniband.t_bandwidth_s = c.infiniband.bytes_per_gpu / w_ib;
    }
  } else {
    const int passes = op == Collective::all_reduce ? 2 : 1;
    if (g > 1) ring(c.nvlink, g, v, w_nv, passes);
    if (m > 1) {
      ring(c.infiniband, m, v / g, w_ib, passes);
      if (algorithm == CollectiveAlgorithm::tree) c.infiniband.steps = static_cast<int>(std::ceil(std::log2(m)));
    }
  }
  c.nvlink.t_latency_s = c.nvlink.steps * s.fast[0].hop_latency_s;
  c.infiniband.t_latency_s = c.infiniband.steps * s.slow.latency_s;
  const double t_nv = std::max(c.nvlink.t_bandwidth_s, c.nvlink.t_latency_s);
  const double t_ib = std::max(c.infiniband.t_bandwidth_s, c.infiniband.t_latency_s);
  c.time_s = op == Collective::all_to_all ? std::max(t_nv, t_ib) : t_nv + t_ib;
  c.latency_bound = c.nvlink.t_latency_s > c.nvlink.t_bandwidth_s || c.infiniband.t_latency_s > c.infiniband.t_bandwidth_s;
  return c;
}

}  // namespace scaling
