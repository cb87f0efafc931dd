#include "scaling/sim/switched_tree.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace scaling::sim {

namespace {

// The fabric: spans[ℓ] = GPUs under one child of level ℓ (1 for a GPU, then the products of degrees).
struct Fabric {
  std::vector<int> degrees;
  std::vector<long> span;  // span[ℓ], ℓ = 0..L: GPUs under one element at height ℓ (height L: everything)
  long gpus = 1;
  // Elements on child link (ℓ, i), i = GPU / span[ℓ], each direction; stamps mark a transfer's links once.
  std::vector<std::vector<double>> up, down;
  std::vector<std::vector<long>> up_stamp, down_stamp;
  long stamp = 0;

  explicit Fabric(const std::vector<int>& d) : degrees(d) {
    span.push_back(1);
    for (int k : d) span.push_back(span.back() * k);
    gpus = span.back();
    for (size_t l = 0; l < d.size(); ++l) {
      const size_t children = static_cast<size_t>(gpus / span[l]);
      up.emplace_back(children, 0.0);
      down.emplace_back(children, 0.0);
      up_stamp.emplace_back(children, -1);
      down_stamp.emplace_back(children, -1);
    }
  }
  int levels() const { return static_cast<int>(degrees.size()); }
  // Height of the lowest switch above both GPUs (0 when a == b).
  int meet(long a, long b) const {
    int h = 0;
    while (a / span[h] != b / span[h]) ++h;
    return h;
  }
  void mark_up(long gpu, int height, double n) {  // links from gpu up to the switch at `height`
    for (int l = 0; l < height; ++l) {
      const long i = gpu / span[l];
      if (up_stamp[l][i] == stamp) continue;
      up_stamp[l][i] = stamp;
      up[l][i] += n;
    }
  }
  void mark_down(long gpu, int height, double n) {  // links from the switch at `height` down to gpu
    for (int l = 0; l < height; ++l) {
      const long i = gpu / span[l];
      if (down_stamp[l][i] == stamp) continue;
      down_stamp[l][i] = stamp;
      down[l][i] += n;
    }
  }
  // One payload from `src` to every GPU of `dst` over the union of the paths (unicast: one destination).
  void multicast(long src, const std::vector<long>& dst, double n) {
    ++stamp;
    int top = 0;
    for (long d : dst) top = std::max(top, meet(src, d));
    mark_up(src, top, n);
    // A destination's down path stops where it meets the source's path: below the meeting switch.
    for (long d : dst) mark_down(d, meet(src, d), n);
  }
  // The mirror image: a payload from every GPU of `src` merged in the switches on its way to `dst`.
  void reduce(const std::vector<long>& src, long dst, double n) {
    ++stamp;
    int top = 0;
    for (long s : src) top = std::max(top, meet(dst, s));
    mark_down(dst, top, n);
    for (long s : src) mark_up(s, meet(dst, s), n);
  }
};

}  // namespace

TreeResult run_tree(const SwitchedTree& tree, const TreeRequest& req) {
  if (tree.degrees.empty()) throw std::invalid_argument("switched tree: give at least one level");
  double gpus = 1;
  for (int d : tree.degrees) {
    if (d < 2) throw std::invalid_argument(fmt::format("switched tree: degree {} (each level needs 2 or more children)", d));
    gpus *= d;
    if (gpus > kMaxTreeGpus)
      throw std::invalid_argument(fmt::format("switched tree: more than {} GPUs", kMaxTreeGpus));
  }
  const long n = static_cast<long>(gpus);
  const double e = req.elements;
  const double unit = req.op == TreeOp::all_to_all ? gpus * gpus : gpus;
  if (!(e > 0) || std::fmod(e, unit) != 0)
    throw std::invalid_argument(fmt::format("switched tree: {} elements is not a positive multiple of {}", e, unit));
  const int y = req.op == TreeOp::sharded_all_gather || req.op == TreeOp::sharded_sharp_all_reduce ? req.inner_y : 1;
  if (y < 1 || n % y != 0)
    throw std::invalid_argument(fmt::format("switched tree: Y = {} does not divide {} GPUs", y, n));
  if (gpus * e > kMaxTreeValues)
    throw std::invalid_argument(fmt::format("switched tree: {} GPUs × {} elements exceeds {} values", gpus, e, kMaxTreeValues));

  Fabric f(tree.degrees);
  const long E = static_cast<long>(e), shard = E / n;
  // Every GPU's array; inputs are distinct integers so a misplaced or doubled element shows.
  std::vector<std::vector<double>> data(static_cast<size_t>(n), std::vector<double>(static_cast<size_t>(E), 0.0));
  auto input = [&](long g, long i) { return double((g + 1) * 1000003 % 7919) + double(i % 9973) * 0.5; };
  std::vector<long> everyone(static_cast<size_t>(n));
  for (long g = 0; g < n; ++g) everyone[static_cast<size_t>(g)] = g;
  auto others = [&](long g) {
    std::vector<long> o;
    for (long k = 0; k < n; ++k)
      if (k != g) o.push_back(k);
    return o;
  };
  TreeResult r;
  bool correct = true;

  auto ring_reduce_scatter = [&] {
    // Step s: GPU g sends its running sum of chunk (g − s − 1) mod n to g + 1, which adds its own.
    for (long s = 0; s < n - 1; ++s) {
      std::vector<std::vector<double>> sent(static_cast<size_t>(n));
      for (long g = 0; g < n; ++g) {
        const long c = ((g - s - 1) % n + n) % n, to = (g + 1) % n;
        f.multicast(g, {to}, double(shard));
        sent[static_cast<size_t>(g)].assign(data[static_cast<size_t>(g)].begin() + c * shard,
                                            data[static_cast<size_t>(g)].begin() + (c + 1) * shard);
      }
      for (long g = 0; g < n; ++g) {
        const long c = ((g - s - 1) % n + n) % n, to = (g + 1) % n;
        for (long i = 0; i < shard; ++i)
          data[static_cast<size_t>(to)][static_cast<size_t>(c * shard + i)] += sent[static_cast<size_t>(g)][static_cast<size_t>(i)];
      }
      r.steps += 1;
    }
  };
  auto ring_all_gather = [&] {
    // Step s: GPU g forwards chunk (g − s) mod n to g + 1.
    for (long s = 0; s < n - 1; ++s) {
      for (long g = 0; g < n; ++g) f.multicast(g, {(g + 1) % n}, double(shard));
      std::vector<std::vector<double>> next = data;
      for (long g = 0; g < n; ++g) {
        const long c = ((g - s) % n + n) % n, to = (g + 1) % n;
        std::copy(data[static_cast<size_t>(g)].begin() + c * shard, data[static_cast<size_t>(g)].begin() + (c + 1) * shard,
                  next[static_cast<size_t>(to)].begin() + c * shard);
      }
      data.swap(next);
      r.steps += 1;
    }
  };
  // Inputs and the plain answers.
  std::vector<double> sum(static_cast<size_t>(E), 0.0), gathered(static_cast<size_t>(E), 0.0);
  for (long g = 0; g < n; ++g)
    for (long i = 0; i < E; ++i) sum[static_cast<size_t>(i)] += input(g, i);
  for (long i = 0; i < E; ++i) gathered[static_cast<size_t>(i)] = input(i / shard, i);
  auto load_shards = [&] {  // GPU g holds its own shard of the gathered array
    for (long g = 0; g < n; ++g)
      for (long i = g * shard; i < (g + 1) * shard; ++i)
        data[static_cast<size_t>(g)][static_cast<size_t>(i)] = gathered[static_cast<size_t>(i)];
  };
  auto load_full = [&] {
    for (long g = 0; g < n; ++g)
      for (long i = 0; i < E; ++i) data[static_cast<size_t>(g)][static_cast<size_t>(i)] = input(g, i);
  };
  auto expect_everywhere = [&](const std::vector<double>& want) {
    for (long g = 0; g < n; ++g) correct = correct && data[static_cast<size_t>(g)] == want;
  };

  switch (req.op) {
    case TreeOp::ring_all_gather:
      load_shards();
      ring_all_gather();
      expect_everywhere(gathered);
      break;
    case TreeOp::ring_reduce_scatter:
      load_full();
      ring_reduce_scatter();
      // Step s hands g + 1 the running sum of chunk g − s − 1, so the last step (s = n − 2) completes
      // chunk h at GPU h.
      for (long g = 0; g < n; ++g) {
        const long c = g;
        for (long i = c * shard; i < (c + 1) * shard; ++i)
          correct = correct && std::abs(data[static_cast<size_t>(g)][static_cast<size_t>(i)] - sum[static_cast<size_t>(i)]) <=
                                   1e-9 * std::abs(sum[static_cast<size_t>(i)]);
      }
      break;
    case TreeOp::ring_all_reduce: {
      load_full();
      ring_reduce_scatter();
      ring_all_gather();  // GPU g owns the finished chunk g, as the AllGather expects
      for (long g = 0; g < n; ++g)
        for (long i = 0; i < E; ++i)
          correct = correct && std::abs(data[static_cast<size_t>(g)][static_cast<size_t>(i)] - sum[static_cast<size_t>(i)]) <=
                                   1e-9 * std::abs(sum[static_cast<size_t>(i)]);
      break;
    }
    case TreeOp::multicast_all_gather:
      load_shards();
      for (long g = 0; g < n; ++g) {
        f.multicast(g, others(g), double(shard));
        for (long k = 0; k < n; ++k)
          std::copy(data[static_cast<size_t>(g)].begin() + g * shard, data[static_cast<size_t>(g)].begin() + (g + 1) * shard,
                    data[static_cast<size_t>(k)].begin() + g * shard);
      }
      r.steps = 1;
      expect_everywhere(gathered);
      break;
    case TreeOp::sharp_all_reduce:
    case TreeOp::sharded_sharp_all_reduce: {
      // X-group q = GPUs {q, q + Y, …} reduces its own Y-shard, elements [q·E/Y, (q+1)·E/Y) (Y = 1: one
      // group, the whole array). Phase 1: chunk m of the shard, summed in the switches on its way from the
      // group's other members to member m, which adds its own part. Phase 2: m multicasts the finished
      // chunk to the rest of its group.
      const long x = n / y, part = E / y;
      auto member = [&](long q, long m) { return q + m * y; };
      auto group_but = [&](long q, long m) {
        std::vector<long> g;
        for (long k = 0; k < x; ++k)
          if (k != m) g.push_back(member(q, k));
        return g;
      };
      load_full();
      for (long q = 0; q < y; ++q)
        for (long m = 0; m < x; ++m) {
          if (x > 1) f.reduce(group_but(q, m), member(q, m), double(shard));
          for (long i = q * part + m * shard; i < q * part + (m + 1) * shard; ++i) {
            double s = 0;
            for (long k = 0; k < x; ++k) s += data[static_cast<size_t>(member(q, k))][static_cast<size_t>(i)];
            data[static_cast<size_t>(member(q, m))][static_cast<size_t>(i)] = s;
          }
        }
      for (long q = 0; q < y; ++q)
        for (long m = 0; m < x; ++m) {
          const long owner = member(q, m);
          if (x > 1) f.multicast(owner, group_but(q, m), double(shard));
          for (long k = 0; k < x; ++k)
            std::copy(data[static_cast<size_t>(owner)].begin() + q * part + m * shard,
                      data[static_cast<size_t>(owner)].begin() + q * part + (m + 1) * shard,
                      data[static_cast<size_t>(member(q, k))].begin() + q * part + m * shard);
        }
      r.steps = 2;
      for (long q = 0; q < y; ++q)
        for (long i = q * part; i < (q + 1) * part; ++i) {
          double want = 0;
          for (long k = 0; k < x; ++k) want += input(member(q, k), i);
          for (long k = 0; k < x; ++k)
            correct = correct && std::abs(data[static_cast<size_t>(member(q, k))][static_cast<size_t>(i)] - want) <= 1e-9 * std::abs(want);
        }
      break;
    }
    case TreeOp::all_to_all: {
      // Block (i → j) of E/n² elements sits at [(i·n + j)·b, …) in i's array and lands at the same place in j's.
      const long b = E / (n * n);
      load_full();
      auto before = data;
      for (long i = 0; i < n; ++i)
        for (long j = 0; j < n; ++j) {
          if (i == j) continue;
          f.multicast(i, {j}, double(b));
          std::copy(before[static_cast<size_t>(i)].begin() + (i * n + j) * b, before[static_cast<size_t>(i)].begin() + (i * n + j + 1) * b,
                    data[static_cast<size_t>(j)].begin() + (i * n + j) * b);
        }
      r.steps = 1;
      for (long j = 0; j < n; ++j)
        for (long i = 0; i < n; ++i)
          for (long k = 0; k < b; ++k)
            correct = correct && data[static_cast<size_t>(j)][static_cast<size_t>((i * n + j) * b + k)] == input(i, (i * n + j) * b + k);
      break;
    }
    case TreeOp::sharded_all_gather: {
      // X-group q = GPUs {q, q + Y, q + 2Y, …} (Y inner: consecutive GPUs hold different Y-shards). Group q
      // gathers its own array of E/Y elements; member m of the group holds its E/N piece at m·shard.
      const long x = n / y;
      const long part = E / y;  // elements of one Y-shard (one group's gathered array)
      for (long q = 0; q < y; ++q) {
        std::vector<long> group;
        for (long m = 0; m < x; ++m) group.push_back(q + m * y);
        for (long m = 0; m < x; ++m) {
          const long g = group[static_cast<size_t>(m)];
          std::vector<long> rest;
          for (long k : group)
            if (k != g) rest.push_back(k);
          if (!rest.empty()) f.multicast(g, rest, double(shard));
          for (long k : group)
            for (long i = 0; i < shard; ++i)
              data[static_cast<size_t>(k)][static_cast<size_t>(q * part + m * shard + i)] = input(g, i);
        }
      }
      r.steps = 1;
      for (long q = 0; q < y; ++q)
        for (long m = 0; m < x; ++m)
          for (long k = 0; k < x; ++k)
            for (long i = 0; i < shard; ++i)
              correct = correct && data[static_cast<size_t>(q + k * y)][static_cast<size_t>(q * part + m * shard + i)] == input(q + m * y, i);
      break;
    }
  }
  r.correct = correct;

  for (int l = 0; l < f.levels(); ++l) {
    LevelCounts c;
    for (size_t i = 0; i < f.up[static_cast<size_t>(l)].size(); ++i) {
      c.max_up = std::max(c.max_up, f.up[static_cast<size_t>(l)][i]);
      c.max_down = std::max(c.max_down, f.down[static_cast<size_t>(l)][i]);
      c.total_up += f.up[static_cast<size_t>(l)][i];
      c.total_down += f.down[static_cast<size_t>(l)][i];
    }
    // Switches at height l + 1: their children's links, and their own link to the parent (if any).
    const long switches = n / f.span[static_cast<size_t>(l) + 1];
    const long deg = f.degrees[static_cast<size_t>(l)];
    for (long s = 0; s < switches; ++s) {
      double in = 0, out = 0;
      for (long k = s * deg; k < (s + 1) * deg; ++k) {
        in += f.up[static_cast<size_t>(l)][static_cast<size_t>(k)];
        out += f.down[static_cast<size_t>(l)][static_cast<size_t>(k)];
      }
      if (l + 1 < f.levels()) {
        in += f.down[static_cast<size_t>(l) + 1][static_cast<size_t>(s)];
        out += f.up[static_cast<size_t>(l) + 1][static_cast<size_t>(s)];
      }
      c.max_switch_in = std::max(c.max_switch_in, in);
      c.max_switch_out = std::max(c.max_switch_out, out);
    }
    r.levels.push_back(c);
  }
  return r;
}

double tree_time_s(const TreeResult& r, double bytes_per_element, const std::vector<double>& level_bytes_per_s) {
  if (level_bytes_per_s.size() != r.levels.size())
    throw std::invalid_argument(fmt::format("switched tree: {} bandwidths for {} levels", level_bytes_per_s.size(), r.levels.size()));
  double t = 0;
  for (size_t l = 0; l < r.levels.size(); ++l) {
    if (!(level_bytes_per_s[l] > 0)) throw std::invalid_argument("switched tree: a level's bandwidth must be positive");
    t = std::max(t, std::max(r.levels[l].max_up, r.levels[l].max_down) * bytes_per_element / level_bytes_per_s[l]);
  }
  return t;
}

}  // namespace scaling::sim
