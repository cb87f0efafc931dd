// §12.4's per-level costs of collectives on a switched GPU fabric (declared in collectives.hpp).
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "scaling/cost/collectives.hpp"

namespace scaling {

namespace {
void need_bytes(double bytes) {
  if (!(bytes > 0) || !std::isfinite(bytes))
    throw std::invalid_argument(fmt::format("bytes {} must be positive and finite", bytes));
}
void need_count(const char* what, double n, double least) {
  if (!(n >= least) || !std::isfinite(n))
    throw std::invalid_argument(fmt::format("{} = {} must be at least {}", what, n, least));
}
void need_rate(const char* what, double w) {
  if (!(w > 0) || !std::isfinite(w)) throw std::invalid_argument(fmt::format("{} = {} must be positive", what, w));
}
double gpus_in(const std::vector<TreeLevel>& levels) {
  if (levels.empty()) throw std::invalid_argument("a fat tree needs at least one level");
  double n = 1;
  for (const auto& l : levels) {
    need_count("a level's degree", l.degree, 2);
    need_rate("a level's link bandwidth", l.link_bytes_per_s);
    n *= l.degree;
  }
  return n;
}
}  // namespace

std::vector<TreeLevel> fat_tree_levels(const System& s, int nodes_per_su) {
  if (s.fast.size() != 1 || s.fast_name != "NVLink") throw std::invalid_argument(s.name + ": not a GPU cluster");
  need_count("nodes per scalable unit", nodes_per_su, 1);
  const int g = s.fast[0].size, m = s.slow.groups;
  if (m % nodes_per_su != 0 && m > nodes_per_su)
    throw std::invalid_argument(fmt::format("{} nodes is not a whole number of {}-node scalable units", m, nodes_per_su));
  const double w_node = g * s.slow.bytes_per_s;
  std::vector<TreeLevel> levels;
  if (g > 1) levels.push_back({"node", g, s.fast[0].bytes_per_s});
  const int leaf = std::min(m, nodes_per_su), units = m / leaf;
  if (leaf > 1) levels.push_back({"leaf", leaf, w_node});
  if (units > 1) levels.push_back({"spine", units, leaf * w_node});
  return levels;
}

double node_all_gather_s(double bytes, int n, double w) {
  need_bytes(bytes), need_count("GPUs", n, 1), need_rate("W", w);
  return bytes * (n - 1) / (double(n) * w);
}

double node_all_reduce_s(double bytes, int n, double w, bool sharp) {
  need_bytes(bytes), need_count("GPUs", n, 1), need_rate("W", w);
  if (n == 1) return 0;
  return sharp ? bytes / w : 2 * bytes * (n - 1) / (double(n) * w);
}

double node_all_to_all_s(double bytes, int n, double w) {
  need_bytes(bytes), need_count("GPUs", n, 1), need_rate("W", w);
  return bytes * (n - 1) / (w * double(n) * n);
}

double ragged_all_to_all_fraction_approx(int k, int z) {
  need_count("k", k, 1), need_count("shards", z, 1);
  return std::min(double(k) / z, 1.0) * (z - 1) / z;
}

double ragged_all_to_all_fraction_expected(int k, int z) {
  need_count("k", k, 1), need_count("shards", z, 1);
  return (1 - std::pow(double(z - 1) / z, k)) * (z - 1) / z;
}

double cross_node_all_to_all_s(double bytes, int m, double w_node) {
  need_bytes(bytes), need_count("nodes", m, 1), need_rate("W_node", w_node);
  return bytes * (m - 1) / (double(m) * m * w_node);
}

double tree_all_gather_book_s(double bytes, const std::vector<TreeLevel>& levels) {
  need_bytes(bytes), gpus_in(levels);
  double t = 0;
  for (const auto& l : levels) t = std::max(t, bytes * (l.degree - 1) / (l.degree * l.link_bytes_per_s));
  return t;
}

double tree_all_gather_book_bytes_per_s(const std::vector<TreeLevel>& levels) {
  gpus_in(levels);
  double w = INFINITY;
  for (const auto& l : levels) w = std::min(w, l.degree * l.link_bytes_per_s / (l.degree - 1));
  return w;
}

double tree_all_gather_s(double bytes, const std::vector<TreeLevel>& levels) {
  return sharded_tree_all_gather_s(bytes, levels, 1);
}

double sharded_tree_all_gather_s(double bytes, const std::vector<TreeLevel>& levels, int y) {
  need_bytes(bytes);
  const double n = gpus_in(levels);
  need_count("Y", y, 1);
  if (std::fmod(n, y) != 0) throw std::invalid_argument(fmt::format("Y = {} does not divide {} GPUs", y, n));
  double t = 0, below = 1;  // below: S_{i−1}, GPUs under one child of level i
  for (const auto& l : levels) {
    const double in = bytes * std::min(below, double(y)) / y * (1 - std::max(below, double(y)) / n);
    t = std::max(t, in / l.link_bytes_per_s);
    below *= l.degree;
  }
  return t;
}

ShardedReduction sharded_reduction_book(double bytes, int y, int g, double w_gpu, double w_node) {
  need_bytes(bytes), need_count("Y", y, 1), need_count("GPUs per node", g, 1);
  need_rate("W_gpu", w_gpu), need_rate("W_node", w_node);
  ShardedReduction r;
  r.t_node_s = bytes / w_gpu / std::min(y, g);
  r.t_scale_out_s = bytes / w_node * g / std::max(g, y);
  r.t_s = std::max(r.t_node_s, r.t_scale_out_s);
  return r;
}

}  // namespace scaling
