#include "scaling/sim/mesh_sim.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>

#include "scaling/base/format.hpp"

namespace scaling::sim {

namespace {

struct Range {
  long long begin, end;  // [begin, end)
};

struct Move {
  int axis, dir;  // dir = +1 or -1
};

// A message that travels hop by hop: at step first_step + t it crosses moves[t]. The receiver either
// keeps a copy of the ranges (gather, routing) or adds them into its own values (reduction).
struct Path {
  int start;
  std::vector<Move> moves;
  std::vector<Range> ranges;
  bool add;
  int first_step;
  int phase = 0;  // paths of later phases start only after every path of earlier phases has arrived
  long long elements() const {
    long long n = 0;
    for (const auto& r : ranges) n += r.end - r.begin;
    return n;
  }
};

std::vector<Range> halves(const std::vector<Range>& rs, bool first) {
  std::vector<Range> out;
  for (const auto& r : rs) {
    const long long mid = r.begin + (r.end - r.begin) / 2;
    const Range h = first ? Range{r.begin, mid} : Range{mid, r.end};
    if (h.end > h.begin) out.push_back(h);
  }
  return out;
}

class Grid {
 public:
  explicit Grid(const Topology& t) : topo_(t) {
    if (t.shape.empty() || t.shape.size() != t.wraps.size())
      throw std::invalid_argument("topology needs a size and a wrap flag per axis");
    if (t.shape.size() > static_cast<size_t>(kMaxAxes))
      throw std::invalid_argument("topology of " + std::to_string(t.shape.size()) + " axes: at most " +
                                  std::to_string(kMaxAxes));
    double devices = 1;
    for (int s : t.shape) {
      if (s < 1) throw std::invalid_argument("axis size " + std::to_string(s) + ": must be at least 1");
      devices *= s;
    }
    if (devices > kMaxDevices)
      throw std::invalid_argument("topology of " + format_number(devices) + " devices: at most " + format_number(kMaxDevices));
    devices_ = static_cast<int>(devices);
  }
  int devices() const { return devices_; }
  int axes() const { return static_cast<int>(topo_.shape.size()); }
  int size(int axis) const { return topo_.shape[static_cast<size_t>(axis)]; }
  bool wraps(int axis) const { return topo_.wraps[static_cast<size_t>(axis)]; }
  bool uni() const { return topo_.links == Links::uni; }

  std::vector<int> coords(int d) const {
    std::vector<int> c(topo_.shape.size());
    for (int a = axes() - 1; a >= 0; --a) {
      c[static_cast<size_t>(a)] = d % size(a);
      d /= size(a);
    }
    return c;
  }
  int index(const std::vector<int>& c) const {
    int d = 0;
    for (int a = 0; a < axes(); ++a) d = d * size(a) + c[static_cast<size_t>(a)];
    return d;
  }
  int step(int d, const Move& m) const {
    auto c = coords(d);
    int& x = c[static_cast<size_t>(m.axis)];
    x += m.dir;
    if (x < 0 || x >= size(m.axis)) {
      if (!wraps(m.axis)) throw std::logic_error("path leaves an open axis");
      x = (x + size(m.axis)) % size(m.axis);
    }
    return index(c);
  }
  size_t link(int d, const Move& m) const {
    return (static_cast<size_t>(d) * static_cast<size_t>(axes()) + static_cast<size_t>(m.axis)) * 2 + (m.dir > 0 ? 0 : 1);
  }
  // Hops a flood or reduction chain needs along one axis.
  int span(int axis) const {
    const int m = size(axis);
    return (wraps(axis) && !uni()) ? m / 2 : m - 1;
  }

 private:
  Topology topo_;
  int devices_ = 1;
};

// The group of devices a collective runs over: those that differ only on `axes`.
struct Group {
  const Grid& grid;
  std::vector<int> axes;
  int n = 1;
  Group(const Grid& g, std::vector<int> a) : grid(g), axes(std::move(a)) {
    for (int x : axes) n *= grid.size(x);
  }
  int rank(int d) const {
    const auto c = grid.coords(d);
    int r = 0;
    for (int x : axes) r = r * grid.size(x) + c[static_cast<size_t>(x)];
    return r;
  }
  int id(int d) const {  // which group (coordinates off the group's axes)
    auto c = grid.coords(d);
    for (int x : axes) c[static_cast<size_t>(x)] = 0;
    return grid.index(c);
  }
  std::vector<int> rank_coords(int r) const {  // coordinates on the group's axes, in axes order
    std::vector<int> out(axes.size());
    for (int i = static_cast<int>(axes.size()) - 1; i >= 0; --i) {
      out[static_cast<size_t>(i)] = r % grid.size(axes[static_cast<size_t>(i)]);
      r /= grid.size(axes[static_cast<size_t>(i)]);
    }
    return out;
  }
  int device(int any_member, int r) const {  // the member of any_member's group with rank r
    auto c = grid.coords(any_member);
    const auto rc = rank_coords(r);
    for (size_t i = 0; i < axes.size(); ++i) c[static_cast<size_t>(axes[i])] = rc[i];
    return grid.index(c);
  }
};

void add_path(std::vector<Path>& paths, int start, int axis, int dir, int hops, std::vector<Range> ranges, bool add,
              int first_step) {
  if (hops <= 0 || ranges.empty()) return;
  paths.push_back({start, std::vector<Move>(static_cast<size_t>(hops), Move{axis, dir}), std::move(ranges), add, first_step});
}

// Tags every path added since `from` with a phase number.
void tag_phase(std::vector<Path>& paths, size_t from, int phase) {
  for (size_t i = from; i < paths.size(); ++i) paths[i].phase = phase;
}

// AllGather along one axis: the ranges held by `d` spread to every device of its ring.
void flood(const Grid& g, std::vector<Path>& paths, int d, int axis, const std::vector<Range>& ranges, int first_step) {
  const int m = g.size(axis), pos = g.coords(d)[static_cast<size_t>(axis)];
  if (m == 1) return;
  if (!g.wraps(axis)) {
    add_path(paths, d, axis, +1, m - 1 - pos, ranges, false, first_step);
    add_path(paths, d, axis, -1, pos, ranges, false, first_step);
  } else if (g.uni()) {
    add_path(paths, d, axis, +1, m - 1, ranges, false, first_step);
  } else if (m % 2 == 1) {
    add_path(paths, d, axis, +1, m / 2, ranges, false, first_step);
    add_path(paths, d, axis, -1, m / 2, ranges, false, first_step);
  } else {  // the antipode gets the first half from the + side and the second half from the − side
    const int h = m / 2;
    add_path(paths, d, axis, +1, h, halves(ranges, true), false, first_step);
    add_path(paths, d, axis, +1, h - 1, halves(ranges, false), false, first_step);
    add_path(paths, d, axis, -1, h, halves(ranges, false), false, first_step);
    add_path(paths, d, axis, -1, h - 1, halves(ranges, true), false, first_step);
  }
}

// ReduceScatter along one axis: reduction chains that end at `owner`, carrying the owner's ranges.
void reduce_to(const Grid& g, std::vector<Path>& paths, int owner, int axis, const std::vector<Range>& ranges,
               int first_step) {
  const int m = g.size(axis);
  if (m == 1) return;
  auto c = g.coords(owner);
  const int pos = c[static_cast<size_t>(axis)];
  auto at = [&](int coord) {
    c[static_cast<size_t>(axis)] = ((coord % m) + m) % m;
    return g.index(c);
  };
  if (!g.wraps(axis)) {
    add_path(paths, at(m - 1), axis, -1, m - 1 - pos, ranges, true, first_step);
    add_path(paths, at(0), axis, +1, pos, ranges, true, first_step);
  } else if (g.uni()) {
    add_path(paths, at(pos + 1), axis, +1, m - 1, ranges, true, first_step);
  } else if (m % 2 == 1) {
    const int h = m / 2;
    add_path(paths, at(pos + h), axis, -1, h, ranges, true, first_step);
    add_path(paths, at(pos - h), axis, +1, h, ranges, true, first_step);
  } else {  // mirror of flood(): the antipode sends its first half one way and its second half the other
    const int h = m / 2;
    add_path(paths, at(pos + h), axis, -1, h, halves(ranges, true), true, first_step);
    add_path(paths, at(pos + h - 1), axis, -1, h - 1, halves(ranges, false), true, first_step);
    add_path(paths, at(pos - h), axis, +1, h, halves(ranges, false), true, first_step);
    add_path(paths, at(pos - h + 1), axis, +1, h - 1, halves(ranges, true), true, first_step);
  }
}

Range shard_part(long long shard_elements, int shard, int part, int parts) {
  const long long base = shard * shard_elements;
  return {base + shard_elements * part / parts, base + shard_elements * (part + 1) / parts};
}

// Phase start steps for the k-part cyclic schedule; `reverse` walks the axes backwards (ReduceScatter).
std::vector<int> phase_starts(const Grid& g, const std::vector<int>& axes, int first_step, bool reverse) {
  const int k = static_cast<int>(axes.size());
  std::vector<int> start{first_step};
  for (int q = 0; q < k; ++q) {
    int len = 0;
    for (int p = 0; p < k; ++p) {
      const int idx = reverse ? (p + k - 1 - q) % k : (p + q) % k;
      len = std::max(len, g.span(axes[static_cast<size_t>(idx)]));
    }
    start.push_back(start.back() + len);
  }
  return start;
}

void all_gather_paths(const Grid& g, const Group& grp, long long shard, int first_step, int first_phase,
                      std::vector<Path>& paths) {
  const int k = static_cast<int>(grp.axes.size());
  const auto start = phase_starts(g, grp.axes, first_step, false);
  for (int d = 0; d < g.devices(); ++d) {
    const auto my = grp.rank_coords(grp.rank(d));
    for (int p = 0; p < k; ++p)
      for (int q = 0; q < k; ++q) {
        const size_t before = paths.size();
        // Held before phase q: shards that match mine except on the axes part p has already gathered.
        std::vector<bool> free(static_cast<size_t>(k));
        for (int qq = 0; qq < q; ++qq) free[static_cast<size_t>((p + qq) % k)] = true;
        std::vector<Range> ranges;
        for (int r = 0; r < grp.n; ++r) {
          const auto rc = grp.rank_coords(r);
          bool match = true;
          for (int i = 0; i < k && match; ++i) match = free[static_cast<size_t>(i)] || rc[static_cast<size_t>(i)] == my[static_cast<size_t>(i)];
          if (match) ranges.push_back(shard_part(shard, r, p, k));
        }
        flood(g, paths, d, grp.axes[static_cast<size_t>((p + q) % k)], ranges, start[static_cast<size_t>(q)]);
        tag_phase(paths, before, first_phase + q);
      }
  }
}

void reduce_scatter_paths(const Grid& g, const Group& grp, long long shard, int first_step, std::vector<Path>& paths) {
  const int k = static_cast<int>(grp.axes.size());
  const auto start = phase_starts(g, grp.axes, first_step, true);
  for (int d = 0; d < g.devices(); ++d) {
    const auto my = grp.rank_coords(grp.rank(d));
    for (int p = 0; p < k; ++p)
      for (int q = 0; q < k; ++q) {
        const size_t before = paths.size();
        const int axis_index = (p + k - 1 - q) % k;
        // Owned before phase q: shards matching my coordinates on the axes part p has already reduced;
        // this phase delivers those whose coordinate on the current axis is mine.
        std::vector<bool> fixed(static_cast<size_t>(k));
        for (int qq = 0; qq <= q; ++qq) fixed[static_cast<size_t>((p + k - 1 - qq) % k)] = true;
        std::vector<Range> ranges;
        for (int r = 0; r < grp.n; ++r) {
          const auto rc = grp.rank_coords(r);
          bool match = true;
          for (int i = 0; i < k && match; ++i) match = !fixed[static_cast<size_t>(i)] || rc[static_cast<size_t>(i)] == my[static_cast<size_t>(i)];
          if (match) ranges.push_back(shard_part(shard, r, p, k));
        }
        reduce_to(g, paths, d, grp.axes[static_cast<size_t>(axis_index)], ranges, start[static_cast<size_t>(q)]);
        tag_phase(paths, before, q);
      }
  }
}

// Shortest route from `from` to `to` over the group's axes in order; antipodal hops split the ranges.
void route(const Grid& g, const std::vector<int>& axes, size_t axis_i, int from, const std::vector<int>& to_coords,
           std::vector<Move> moves, std::vector<Range> ranges, int start, std::vector<Path>& paths) {
  if (ranges.empty()) return;
  if (axis_i == axes.size()) {
    if (!moves.empty()) paths.push_back({start, std::move(moves), std::move(ranges), false, 1});
    return;
  }
  const int a = axes[axis_i], m = g.size(a);
  const int here = g.coords(from)[static_cast<size_t>(a)], there = to_coords[static_cast<size_t>(a)];
  auto go = [&](int dir, int hops, std::vector<Range> rs) {
    auto mv = moves;
    int at = from;
    for (int i = 0; i < hops; ++i) {
      mv.push_back({a, dir});
      at = g.step(at, {a, dir});
    }
    route(g, axes, axis_i + 1, at, to_coords, std::move(mv), std::move(rs), start, paths);
  };
  const int delta = there - here;
  if (!g.wraps(a)) {
    go(delta >= 0 ? +1 : -1, std::abs(delta), ranges);
  } else {
    const int fwd = ((delta % m) + m) % m;
    if (g.uni() || fwd < m - fwd) go(+1, fwd, ranges);
    else if (fwd > m - fwd) go(-1, m - fwd, ranges);
    else {
      go(+1, fwd, halves(ranges, true));
      go(-1, fwd, halves(ranges, false));
    }
  }
}

// ---- Count-only mode: the same algorithms, counted without building a path or a hop. ----------------
// A straight run of h hops along one axis adds its elements to h consecutive links of one line of the
// mesh; difference arrays make that O(1), so the work is linear in the devices (AllGather and
// ReduceScatter: k² runs per device over k axes) and the memory is one counter per link and phase.
// AllToAll's n² routes are summed in closed form per axis instead (all_to_all_counts).
class LinkCounter {
 public:
  LinkCounter(const Grid& g, int phases)
      : g_(g), per_phase_(static_cast<size_t>(g.devices()) * static_cast<size_t>(g.axes()) * 2),
        diff_(static_cast<size_t>(phases) * per_phase_) {}

  // `elements` cross the links from `start` along `axis` in direction `dir`, `hops` of them.
  void run(int start, int axis, int dir, int hops, double elements, int phase) {
    const int m = g_.size(axis);
    const int pos = g_.coords(start)[static_cast<size_t>(axis)];
    const int first = dir > 0 ? pos : pos - hops + 1;  // the links used are positions [first, first + hops)
    const int line_start = start - pos * stride(axis);
    if (first >= 0 && first + hops <= m) {
      add(line_start, axis, dir, first, first + hops, elements, phase);
    } else {  // wraps around: two pieces
      const int lo = ((first % m) + m) % m;
      add(line_start, axis, dir, lo, m, elements, phase);
      add(line_start, axis, dir, 0, lo + hops - m, elements, phase);
    }
  }

  // The busiest link of each phase, summed over the phases (they run one after another).
  double busiest_per_phase_summed() {
    double sum = 0;
    for (size_t p = 0; p * per_phase_ < diff_.size(); ++p) {
      double busiest = 0;
      for (int axis = 0; axis < g_.axes(); ++axis)
        for (int dir = 0; dir < 2; ++dir)
          for (int d = 0; d < g_.devices(); ++d) {
            if ((d / stride(axis)) % g_.size(axis) != 0) continue;  // one prefix sum per line
            double running = 0;
            for (int x = 0; x < g_.size(axis); ++x) {
              running += diff_[slot(p, d + x * stride(axis), axis, dir)];
              busiest = std::max(busiest, running);
            }
          }
      sum += busiest;
    }
    return sum;
  }

 private:
  int stride(int axis) const {
    int s = 1;
    for (int a = g_.axes() - 1; a > axis; --a) s *= g_.size(a);
    return s;
  }
  size_t slot(size_t phase, int device, int axis, int dir) const {
    return phase * per_phase_ + (static_cast<size_t>(device) * static_cast<size_t>(g_.axes()) + static_cast<size_t>(axis)) * 2 +
           static_cast<size_t>(dir);
  }
  void add(int line_start, int axis, int dir, int lo, int hi, double elements, int phase) {  // positions [lo, hi)
    if (hi <= lo) return;
    const int d = dir > 0 ? 0 : 1;
    diff_[slot(static_cast<size_t>(phase), line_start + lo * stride(axis), axis, d)] += elements;
    if (hi < g_.size(axis)) diff_[slot(static_cast<size_t>(phase), line_start + hi * stride(axis), axis, d)] -= elements;
  }

  const Grid& g_;
  size_t per_phase_;
  std::vector<double> diff_;
};

// What the count pass tells the data mode before it builds anything: the counts, and the work it would do.
struct Counted {
  Result result{true, 0, 0, 0};
  double records = 0;  // hops plus ranges the data mode would store (an upper bound for AllToAll)
};

struct Tally {
  Counted& c;
  LinkCounter* links;
  // One path of `hops` hops along `axis` carrying `elements`; `kept` as the path builder keeps it (a path
  // whose ranges are all empty is dropped), starting at step `first_step`.
  void run(int start, int axis, int dir, int hops, double elements, long long ranges, int first_step, int phase) {
    if (hops <= 0 || ranges == 0) return;
    if (links) links->run(start, axis, dir, hops, elements, phase);
    c.result.total_link_elements += elements * hops;
    c.result.steps = std::max(c.result.steps, first_step + hops - 1);
    c.records += static_cast<double>(hops + ranges);
  }
};

// flood() counted: `matches` ranges of `part` elements each.
void flood_counts(const Grid& g, Tally& t, int d, int axis, long long matches, long long part, int first_step, int phase) {
  const int m = g.size(axis), pos = g.coords(d)[static_cast<size_t>(axis)];
  if (m == 1) return;
  const long long lo = part / 2, hi = part - part / 2;  // halves(): the first half is the shorter
  const double all = static_cast<double>(matches * part);
  if (!g.wraps(axis)) {
    t.run(d, axis, +1, m - 1 - pos, all, matches, first_step, phase);
    t.run(d, axis, -1, pos, all, matches, first_step, phase);
  } else if (g.uni()) {
    t.run(d, axis, +1, m - 1, all, matches, first_step, phase);
  } else if (m % 2 == 1) {
    t.run(d, axis, +1, m / 2, all, matches, first_step, phase);
    t.run(d, axis, -1, m / 2, all, matches, first_step, phase);
  } else {
    const int h = m / 2;
    const long long lo_ranges = lo > 0 ? matches : 0, hi_ranges = hi > 0 ? matches : 0;
    t.run(d, axis, +1, h, static_cast<double>(matches * lo), lo_ranges, first_step, phase);
    t.run(d, axis, +1, h - 1, static_cast<double>(matches * hi), hi_ranges, first_step, phase);
    t.run(d, axis, -1, h, static_cast<double>(matches * hi), hi_ranges, first_step, phase);
    t.run(d, axis, -1, h - 1, static_cast<double>(matches * lo), lo_ranges, first_step, phase);
  }
}

// reduce_to() counted: the chains that end at `owner`, with the hop counts and halves reduce_to uses.
void reduce_counts(const Grid& g, Tally& t, int owner, int axis, long long matches, long long part, int first_step,
                   int phase) {
  const int m = g.size(axis);
  if (m == 1) return;
  auto c = g.coords(owner);
  const int pos = c[static_cast<size_t>(axis)];
  auto at = [&](int coord) {
    c[static_cast<size_t>(axis)] = ((coord % m) + m) % m;
    return g.index(c);
  };
  const long long lo = part / 2, hi = part - part / 2;
  const double all = static_cast<double>(matches * part);
  if (!g.wraps(axis)) {
    t.run(at(m - 1), axis, -1, m - 1 - pos, all, matches, first_step, phase);
    t.run(at(0), axis, +1, pos, all, matches, first_step, phase);
  } else if (g.uni()) {
    t.run(at(pos + 1), axis, +1, m - 1, all, matches, first_step, phase);
  } else if (m % 2 == 1) {
    const int h = m / 2;
    t.run(at(pos + h), axis, -1, h, all, matches, first_step, phase);
    t.run(at(pos - h), axis, +1, h, all, matches, first_step, phase);
  } else {
    const int h = m / 2;
    const long long lo_ranges = lo > 0 ? matches : 0, hi_ranges = hi > 0 ? matches : 0;
    t.run(at(pos + h), axis, -1, h, static_cast<double>(matches * lo), lo_ranges, first_step, phase);
    t.run(at(pos + h - 1), axis, -1, h - 1, static_cast<double>(matches * hi), hi_ranges, first_step, phase);
    t.run(at(pos - h), axis, +1, h, static_cast<double>(matches * hi), hi_ranges, first_step, phase);
    t.run(at(pos - h + 1), axis, +1, h - 1, static_cast<double>(matches * lo), lo_ranges, first_step, phase);
  }
}

long long part_size(long long shard, int part, int parts) { return shard * (part + 1) / parts - shard * part / parts; }

// all_gather_paths() counted: in phase q, part p holds the shards of every rank that differs from mine
// only on the axes it has already gathered, so the number of ranges is the product of their sizes.
void all_gather_counts(const Grid& g, const Group& grp, long long shard, int first_step, int first_phase, Tally& t) {
  const int k = static_cast<int>(grp.axes.size());
  const auto start = phase_starts(g, grp.axes, first_step, false);
  for (int d = 0; d < g.devices(); ++d)
    for (int p = 0; p < k; ++p)
      for (int q = 0; q < k; ++q) {
        long long matches = 1;
        for (int qq = 0; qq < q; ++qq) matches *= grp.grid.size(grp.axes[static_cast<size_t>((p + qq) % k)]);
        flood_counts(g, t, d, grp.axes[static_cast<size_t>((p + q) % k)], matches, part_size(shard, p, k),
                     start[static_cast<size_t>(q)], first_phase + q);
      }
}

void reduce_scatter_counts(const Grid& g, const Group& grp, long long shard, int first_step, Tally& t) {
  const int k = static_cast<int>(grp.axes.size());
  const auto start = phase_starts(g, grp.axes, first_step, true);
  for (int d = 0; d < g.devices(); ++d)
    for (int p = 0; p < k; ++p)
      for (int q = 0; q < k; ++q) {
        long long matches = 1;  // the axes not yet reduced are free
        for (int qq = q + 1; qq < k; ++qq) matches *= g.size(grp.axes[static_cast<size_t>((p + k - 1 - qq) % k)]);
        reduce_counts(g, t, d, grp.axes[static_cast<size_t>((p + k - 1 - q) % k)], matches, part_size(shard, p, k),
                      start[static_cast<size_t>(q)], q);
      }
}

// AllToAll in closed form. A block routed axis by axis (route()) crosses a link on the i-th axis with
// its coordinates on the earlier axes already the destination's and on the later ones still the
// source's. So a link of axis i carries, for each pair of positions (s, t) on that axis whose 1D route
// uses it, every choice of the source's earlier coordinates (each either the same as the destination's,
// antipodal to it — the block was halved there — or other) times every choice of the destination's later
// coordinates. The block sizes after halvings are tracked as a small weighted multiset.
void all_to_all_counts(const Grid& g, const Group& grp, long long block, Counted& c) {
  std::vector<std::pair<long long, double>> sizes{{block, 1.0}};  // block size -> number of source choices
  for (size_t i = 0; i < grp.axes.size(); ++i) {
    const int axis = grp.axes[i], m = g.size(axis);
    const bool wrapped = g.wraps(axis), uni = g.uni();
    double later = 1;
    for (size_t j = i + 1; j < grp.axes.size(); ++j) later *= g.size(grp.axes[j]);
    double full = 0, first_half = 0, second_half = 0;  // Σ weight × size over the multiset
    for (const auto& [v, w] : sizes) {
      full += w * static_cast<double>(v);
      first_half += w * static_cast<double>(v / 2);
      second_half += w * static_cast<double>(v - v / 2);
    }
    // Pairs of positions whose 1D route uses a link at position x, direction + or −.
    const double md = m;
    auto load = [&](int x, int dir) {
      if (!wrapped) return later * full * (dir > 0 ? (x + 1.0) * (md - 1 - x) : x * (md - x));
      if (uni) return dir > 0 ? later * full * md * (md - 1) / 2 : 0.0;
      const double shorter = (m + 1) / 2 - 1;  // forward distances f with f < m − f
      double l = full * shorter * (shorter + 1) / 2;
      if (m % 2 == 0) l += (md / 2) * (dir > 0 ? first_half : second_half);
      return later * l;
    };
    double axis_total = 0;
    for (int x = 0; x < m; ++x)
      for (int dir : {+1, -1}) {
        const double l = load(x, dir);
        c.result.max_link_elements = std::max(c.result.max_link_elements, l);
        axis_total += l;
      }
    c.result.total_link_elements += axis_total * (g.devices() / m);
    c.result.steps += (wrapped && !uni) ? m / 2 : m - 1;
    // The source's coordinate on this axis, seen from the destination's: the same one, the antipode
    // (halves), or another.
    const int antipodes = (wrapped && !uni && m % 2 == 0) ? 1 : 0;
    std::vector<std::pair<long long, double>> next;
    for (const auto& [v, w] : sizes) {
      next.push_back({v, w * (m - antipodes)});
      if (antipodes) {
        next.push_back({v / 2, w});
        next.push_back({v - v / 2, w});
      }
    }
    std::sort(next.begin(), next.end());
    sizes.clear();
    for (const auto& e : next) {  // merge equal sizes: at most two per number of halvings
      if (!sizes.empty() && sizes.back().first == e.first) sizes.back().second += e.second;
      else sizes.push_back(e);
    }
  }
  // An upper bound on what the data mode would store: at most 2^k pieces of each of n² blocks per group.
  c.records = std::ldexp(static_cast<double>(g.devices()) * grp.n, static_cast<int>(grp.axes.size())) *
              (c.result.steps + 1);
}

// ppermute counted: each device's shard goes `shift` places along the one axis by route()'s choice.
void ppermute_counts(const Grid& g, const Group& grp, long long shard, int shift, Tally& t) {
  const int axis = grp.axes[0], m = g.size(axis), s = ((shift % m) + m) % m;
  for (int d = 0; d < g.devices(); ++d) {
    const int here = g.coords(d)[static_cast<size_t>(axis)], there = (here + s) % m;
    if (!g.wraps(axis)) {
      t.run(d, axis, there >= here ? +1 : -1, std::abs(there - here), static_cast<double>(shard), 1, 1, 0);
    } else if (g.uni() || s < m - s) {
      t.run(d, axis, +1, s, static_cast<double>(shard), 1, 1, 0);
    } else if (s > m - s) {
      t.run(d, axis, -1, m - s, static_cast<double>(shard), 1, 1, 0);
    } else {
      t.run(d, axis, +1, s, static_cast<double>(shard / 2), shard / 2 > 0 ? 1 : 0, 1, 0);
      t.run(d, axis, -1, s, static_cast<double>(shard - shard / 2), 1, 1, 0);
    }
  }
}

Counted count(const Grid& g, const Group& grp, const Request& req, long long E) {
  Counted c;
  const long long shard = E / grp.n;
  const int k = static_cast<int>(grp.axes.size());
  if (req.op == Op::all_to_all) {
    all_to_all_counts(g, grp, E / (static_cast<long long>(grp.n) * grp.n), c);
    return c;
  }
  const int phases = req.op == Op::all_reduce ? 2 * k : req.op == Op::ppermute ? 1 : k;
  LinkCounter links(g, phases);
  Tally t{c, &links};
  switch (req.op) {
    case Op::all_gather: all_gather_counts(g, grp, shard, 1, 0, t); break;
    case Op::reduce_scatter: reduce_scatter_counts(g, grp, shard, 1, t); break;
    case Op::all_reduce: {
      reduce_scatter_counts(g, grp, shard, 1, t);
      all_gather_counts(g, grp, shard, c.result.steps + 1, k, t);
      break;
    }
    case Op::ppermute: ppermute_counts(g, grp, shard, req.shift, t); break;
    case Op::all_to_all: break;
  }
  c.result.max_link_elements = links.busiest_per_phase_summed();
  return c;
}

// Deterministic small integers, so sums are exact in double precision.
double value(int group, int rank, long long idx) {
  return static_cast<double>((group * 7919LL + rank * 104729LL + idx * 31LL) % 1000);
}

}  // namespace

Topology ring(int devices, Links links) { return {{devices}, {true}, links}; }
Topology line(int devices) { return {{devices}, {false}, Links::bi}; }
Topology from_slice(const Slice& s) { return {s.shape, s.wraps, Links::bi}; }

Op to_op(Collective c) {
  switch (c) {
    case Collective::all_gather: return Op::all_gather;
    case Collective::reduce_scatter: return Op::reduce_scatter;
    case Collective::all_reduce: return Op::all_reduce;
    case Collective::all_to_all: return Op::all_to_all;
  }
  return Op::all_gather;
}

namespace {
Result run(const Topology& topo, const Request& req, std::vector<std::vector<double>>* external);
}  // namespace

Result simulate(const Topology& topo, const Request& req) { return run(topo, req, nullptr); }

Result run_on(const Topology& topo, const Request& req, std::vector<std::vector<double>>& data) {
  Request r = req;
  r.count_only = false;
  return run(topo, r, &data);
}

namespace {
Result run(const Topology& topo, const Request& req, std::vector<std::vector<double>>* external) {
  const Grid g(topo);
  if (req.axes.empty()) throw std::invalid_argument("a collective needs at least one axis");
  std::vector<bool> seen(static_cast<size_t>(g.axes()));
  for (int a : req.axes) {
    if (a < 0 || a >= g.axes())
      throw std::invalid_argument("axis " + std::to_string(a) + ": the mesh has axes 0.." + std::to_string(g.axes() - 1));
    if (seen[static_cast<size_t>(a)]) throw std::invalid_argument("axis " + std::to_string(a) + " given twice");
    seen[static_cast<size_t>(a)] = true;
    if (g.uni() && !g.wraps(a)) throw std::invalid_argument("unidirectional links need a wrapped axis (a ring)");
  }
  if (req.op == Op::ppermute && req.axes.size() != 1) throw std::invalid_argument("ppermute runs over exactly one axis");
  const Group grp(g, req.axes);
  const double n = grp.n;
  const double divisor = req.op == Op::all_to_all ? n * n : n;
  if (!(req.elements >= 1) || req.elements != std::floor(req.elements) || req.elements > 1e15)
    throw std::invalid_argument("elements = " + format_number(req.elements) + ": must be a positive whole number");
  if (std::fmod(req.elements, divisor) != 0)
    throw std::invalid_argument("elements = " + format_number(req.elements) + ": must be a multiple of " +
                                format_number(divisor) + (req.op == Op::all_to_all ? " (n², one block per device pair)" : " (one shard per device)"));
  const auto E = static_cast<long long>(req.elements);
  const long long shard = E / grp.n;

  // Count pass (README, "Limits"): memory is one counter per directed link and phase, checked first.
  const int k = static_cast<int>(req.axes.size());
  const double count_phases = req.op == Op::all_reduce ? 2.0 * k : req.op == Op::all_gather || req.op == Op::reduce_scatter ? k : 1;
  const double counters = req.op == Op::all_to_all ? 0 : count_phases * g.devices() * g.axes() * 2;
  if (counters > kMaxLinkCounters)
    throw std::invalid_argument("counting " + format_number(g.devices()) + " devices × " + std::to_string(g.axes()) +
                                " axes × " + format_number(count_phases) + " phases of links: more than " +
                                format_number(kMaxLinkCounters) + " counters");
  const Counted counted = count(g, grp, req, E);
  if (req.count_only) return counted.result;

  // Data mode: bounded before any path is built, by what the count pass says it would hold and move.
  const double held = static_cast<double>(g.devices()) * req.elements;
  if (held > kMaxDataValues)
    throw std::invalid_argument("data mode would hold " + format_number(held) + " values (devices × elements); at most " +
                                format_number(kMaxDataValues) + ": use count-only mode");
  if (counted.result.total_link_elements > kMaxDataMoves)
    throw std::invalid_argument("data mode would move " + format_number(counted.result.total_link_elements) +
                                " values over links; at most " + format_number(kMaxDataMoves) + ": use count-only mode");
  if (counted.records > kMaxDataRecords)
    throw std::invalid_argument("data mode would route " + format_number(counted.records) + " hops and ranges; at most " +
                                format_number(kMaxDataRecords) + ": use count-only mode");

  std::vector<Path> paths;
  switch (req.op) {
    case Op::all_gather: all_gather_paths(g, grp, shard, 1, 0, paths); break;
    case Op::reduce_scatter: reduce_scatter_paths(g, grp, shard, 1, paths); break;
    case Op::all_reduce: {
      reduce_scatter_paths(g, grp, shard, 1, paths);
      int rs_steps = 0;
      for (const auto& p : paths) rs_steps = std::max(rs_steps, p.first_step + static_cast<int>(p.moves.size()) - 1);
      all_gather_paths(g, grp, shard, rs_steps + 1, static_cast<int>(grp.axes.size()), paths);
      break;
    }
    case Op::all_to_all: {
      const long long block = E / (static_cast<long long>(grp.n) * grp.n);
      for (int d = 0; d < g.devices(); ++d) {
        const int i = grp.rank(d);
        for (int j = 0; j < grp.n; ++j) {
          if (j == i) continue;
          const Range r{(static_cast<long long>(i) * grp.n + j) * block, (static_cast<long long>(i) * grp.n + j + 1) * block};
          route(g, req.axes, 0, d, g.coords(grp.device(d, j)), {}, {r}, d, paths);
        }
      }
      break;
    }
    case Op::ppermute: {
      const int m = grp.n, s = ((req.shift % m) + m) % m;
      for (int d = 0; d < g.devices(); ++d) {
        const int i = grp.rank(d);
        route(g, req.axes, 0, d, g.coords(grp.device(d, (i + s) % m)), {}, {{i * shard, (i + 1) * shard}}, d, paths);
      }
      break;
    }
  }

  // Links run concurrently within a phase; phases run one after another. So the bandwidth-bound time
  // is set by the busiest link of each phase, summed over the phases.
  Result res{true, 0, 0, 0};
  res.sent_elements.assign(static_cast<size_t>(g.devices()), 0.0);
  int phases = 1;
  for (const auto& p : paths) phases = std::max(phases, p.phase + 1);
  const size_t links = static_cast<size_t>(g.devices()) * static_cast<size_t>(g.axes()) * 2;
  std::vector<std::vector<double>> link_elements(static_cast<size_t>(phases), std::vector<double>(links));
  for (const auto& p : paths) {
    const double count = static_cast<double>(p.elements());
    int at = p.start;
    for (const auto& mv : p.moves) {
      link_elements[static_cast<size_t>(p.phase)][g.link(at, mv)] += count;
      res.sent_elements[static_cast<size_t>(at)] += count;
      at = g.step(at, mv);
    }
    res.total_link_elements += count * static_cast<double>(p.moves.size());
    res.steps = std::max(res.steps, p.first_step + static_cast<int>(p.moves.size()) - 1);
  }
  for (const auto& phase : link_elements) res.max_link_elements += *std::max_element(phase.begin(), phase.end());

  // Data mode: run the paths step by step on real arrays and compare with the plain computation.
  std::vector<std::vector<double>> own;
  if (external) {
    if (external->size() != static_cast<size_t>(g.devices()))
      throw std::invalid_argument("run_on: expected one array per device (" + std::to_string(g.devices()) + ")");
    for (const auto& a : *external)
      if (a.size() != static_cast<size_t>(E))
        throw std::invalid_argument("run_on: every device array must hold " + std::to_string(E) + " values");
  } else {
    own.assign(static_cast<size_t>(g.devices()), std::vector<double>(static_cast<size_t>(E)));
  }
  auto& buf = external ? *external : own;
  for (int d = 0; d < g.devices() && !external; ++d) {
    const int gid = grp.id(d), r = grp.rank(d);
    auto& b = buf[static_cast<size_t>(d)];
    if (req.op == Op::all_gather || req.op == Op::ppermute)
      for (long long x = r * shard; x < (r + 1) * shard; ++x) b[static_cast<size_t>(x)] = value(gid, 0, x);
    else if (req.op == Op::all_to_all)
      for (long long x = r * shard; x < (r + 1) * shard; ++x) b[static_cast<size_t>(x)] = value(gid, r, x);
    else
      for (long long x = 0; x < E; ++x) b[static_cast<size_t>(x)] = value(gid, r, x);
  }
  struct Hop {
    int from, to;
    const Path* path;
  };
  std::vector<std::vector<Hop>> by_step(static_cast<size_t>(res.steps) + 1);
  for (const auto& p : paths) {
    int at = p.start;
    for (size_t t = 0; t < p.moves.size(); ++t) {
      const int next = g.step(at, p.moves[t]);
      by_step[static_cast<size_t>(p.first_step) + t].push_back({at, next, &p});
      at = next;
    }
  }
  std::vector<double> payload;  // one step's messages, read before any is delivered: they are simultaneous
  for (const auto& hops : by_step) {
    payload.clear();
    for (const auto& h : hops)
      for (const auto& r : h.path->ranges)
        payload.insert(payload.end(), buf[static_cast<size_t>(h.from)].begin() + r.begin,
                       buf[static_cast<size_t>(h.from)].begin() + r.end);
    size_t k = 0;
    for (const auto& h : hops) {
      auto& dst = buf[static_cast<size_t>(h.to)];
      for (const auto& r : h.path->ranges)
        for (long long x = r.begin; x < r.end; ++x, ++k)
          dst[static_cast<size_t>(x)] = h.path->add ? dst[static_cast<size_t>(x)] + payload[k] : payload[k];
    }
  }
  if (external) return res;  // the caller checks its own data
  std::map<int, std::vector<double>> sums;  // per group: the plain reduction of every element, computed once
  for (int d = 0; d < g.devices() && res.correct; ++d) {
    const int gid = grp.id(d), r = grp.rank(d);
    const auto& b = buf[static_cast<size_t>(d)];
    if ((req.op == Op::reduce_scatter || req.op == Op::all_reduce) && !sums.count(gid)) {
      auto& sum = sums[gid];
      sum.assign(static_cast<size_t>(E), 0.0);
      for (int q = 0; q < grp.n; ++q)
        for (long long x = 0; x < E; ++x) sum[static_cast<size_t>(x)] += value(gid, q, x);
    }
    auto total = [&](long long x) { return sums[gid][static_cast<size_t>(x)]; };
    switch (req.op) {
      case Op::all_gather:
        for (long long x = 0; x < E; ++x) res.correct &= b[static_cast<size_t>(x)] == value(gid, 0, x);
        break;
      case Op::reduce_scatter:
        for (long long x = r * shard; x < (r + 1) * shard; ++x) res.correct &= b[static_cast<size_t>(x)] == total(x);
        break;
      case Op::all_reduce:
        for (long long x = 0; x < E; ++x) res.correct &= b[static_cast<size_t>(x)] == total(x);
        break;
      case Op::all_to_all: {
        const long long block = shard / grp.n;
        for (int i = 0; i < grp.n; ++i)
          for (long long x = (static_cast<long long>(i) * grp.n + r) * block; x < (static_cast<long long>(i) * grp.n + r + 1) * block; ++x)
            res.correct &= b[static_cast<size_t>(x)] == value(gid, i, x);
        break;
      }
      case Op::ppermute: {
        const int m = grp.n, src = static_cast<int>(((r - static_cast<long long>(req.shift)) % m + m) % m);
        for (long long x = src * shard; x < (src + 1) * shard; ++x) res.correct &= b[static_cast<size_t>(x)] == value(gid, 0, x);
        break;
      }
    }
  }
  return res;
}
}  // namespace

SimTime to_time(const Result& r, double bytes_per_element, const Link& link) {
  SimTime t{};
  t.t_bandwidth_s = r.max_link_elements * bytes_per_element / link.oneway_bytes_per_s;
  t.t_latency_s = r.steps * link.hop_latency_s;
  t.t_s = std::max(t.t_bandwidth_s, t.t_latency_s);
  return t;
}

}  // namespace scaling::sim
