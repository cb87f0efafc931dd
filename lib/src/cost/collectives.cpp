#include "scaling/cost/collectives.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <utility>

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
  throw std::invalid_argument("unknown collective '" + std::string(text) +
                              "' (known: all-gather, reduce-scatter, all-reduce, all-to-all)");
}

std::string_view name(Collective c) {
  for (const auto& [op, n] : kNames)
    if (op == c) return n;
  return "?";
}

Link ici_link(const Chip& c) {
  if (c.ici_oneway_bytes_per_s <= 0) throw std::invalid_argument("chip " + std::string(c.name) + " has no ICI figures");
  return {c.ici_oneway_bytes_per_s, c.ici_bidi_bytes_per_s, c.ici_hop_latency_s};
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

}  // namespace scaling
