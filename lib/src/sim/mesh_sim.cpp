#include "scaling/sim/mesh_sim.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>

#include "scaling/base/format.hpp"
#include "scaling/base/validate.hpp"

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
  bool uni() const { return topo_.links == Direction::uni; }

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

// ---- Count-only mode's link counters --------------------------------------------------------------
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

// ---- The router, written once for both modes ---------------------------------------------------------
// Every collective but AllToAll is made of straight runs: `hops` hops from a device along one axis in one
// direction, carrying a set of ranges, either kept by each device it reaches (gather, ppermute) or added
// into the next device's values (reduction chains). The algorithms below emit those runs into a sink:
//  - PathSink (data mode) keeps each run as a Path with its explicit ranges, to execute on real arrays;
//  - CountSink (count-only mode) adds the run's elements to the link counters and the tallies, carrying
//    only how many ranges there are and how long each is (RangeCount) — so the same routes are counted at
//    sizes no data mode could hold, as ppermute.hpp's shape-only blocks do for collective matmuls.
// Every range of one run has the same length, so halving a RangeCount is exact: halves() below cut each
// range at begin + length/2 and drop the empty halves, and so do the counts.

struct RangeCount {
  long long ranges = 0, each = 0;  // `ranges` ranges of `each` elements
};

RangeCount halves(const RangeCount& rc, bool first) {
  const long long each = first ? rc.each / 2 : rc.each - rc.each / 2;
  return {each > 0 ? rc.ranges : 0, each};
}

Range shard_part(long long shard_elements, int shard, int part, int parts) {
  const long long base = shard * shard_elements;
  return {base + shard_elements * part / parts, base + shard_elements * (part + 1) / parts};
}

long long part_size(long long shard, int part, int parts) { return shard * (part + 1) / parts - shard * part / parts; }

struct PathSink {
  using Ranges = std::vector<Range>;
  const Grid& grid;
  std::vector<Path>& paths;

  void run(int start, int axis, int dir, int hops, Ranges ranges, bool add, int first_step, int phase) {
    if (hops <= 0 || ranges.empty()) return;
    paths.push_back({start, std::vector<Move>(static_cast<size_t>(hops), Move{axis, dir}), std::move(ranges), add,
                     first_step, phase});
  }
  // Part `part` of the shards of every rank of the group that matches `device`'s coordinates on the axes
  // not marked free.
  Ranges shards(const Group& grp, int device, const std::vector<bool>& free, long long shard, int part, int parts) const {
    const auto my = grp.rank_coords(grp.rank(device));
    Ranges out;
    for (int r = 0; r < grp.n; ++r) {
      const auto rc = grp.rank_coords(r);
      bool match = true;
      for (size_t i = 0; i < free.size() && match; ++i) match = free[i] || rc[i] == my[i];
      if (match) out.push_back(shard_part(shard, r, part, parts));
    }
    return out;
  }
  int steps() const {
    int s = 0;
    for (const auto& p : paths) s = std::max(s, p.first_step + static_cast<int>(p.moves.size()) - 1);
    return s;
  }
};

// What the count pass tells the data mode before it builds anything: the counts, and the work it would do.
struct Counted {
  Result result{true, 0, 0, 0};
  double records = 0;  // hops plus ranges the data mode would store (an upper bound for AllToAll)
};

struct CountSink {
  using Ranges = RangeCount;
  const Grid& grid;
  Counted& c;
  LinkCounter& links;

  void run(int start, int axis, int dir, int hops, const Ranges& rc, bool /*add*/, int first_step, int phase) {
    if (hops <= 0 || rc.ranges == 0) return;  // as PathSink drops a run with no ranges
    const double elements = static_cast<double>(rc.ranges * rc.each);
    links.run(start, axis, dir, hops, elements, phase);
    c.result.total_link_elements += elements * hops;
    c.result.steps = std::max(c.result.steps, first_step + hops - 1);
    c.records += static_cast<double>(hops + rc.ranges);
  }
  // As PathSink::shards, counted: one rank for each choice of coordinates on the free axes.
  Ranges shards(const Group& grp, int /*device*/, const std::vector<bool>& free, long long shard, int part,
                int parts) const {
    long long matches = 1;
    for (size_t i = 0; i < free.size(); ++i)
      if (free[i]) matches *= grid.size(grp.axes[i]);
    return {matches, part_size(shard, part, parts)};
  }
  int steps() const { return c.result.steps; }
};

// AllGather along one axis: the ranges held by `d` spread to every device of its ring.
template <class Sink>
void flood(const Grid& g, Sink& sink, int d, int axis, const typename Sink::Ranges& ranges, int first_step, int phase) {
  const int m = g.size(axis), pos = g.coords(d)[static_cast<size_t>(axis)];
  if (m == 1) return;
  if (!g.wraps(axis)) {
    sink.run(d, axis, +1, m - 1 - pos, ranges, false, first_step, phase);
    sink.run(d, axis, -1, pos, ranges, false, first_step, phase);
  } else if (g.uni()) {
    sink.run(d, axis, +1, m - 1, ranges, false, first_step, phase);
  } else if (m % 2 == 1) {
    sink.run(d, axis, +1, m / 2, ranges, false, first_step, phase);
    sink.run(d, axis, -1, m / 2, ranges, false, first_step, phase);
  } else {  // the antipode gets the first half from the + side and the second half from the − side
    const int h = m / 2;
    sink.run(d, axis, +1, h, halves(ranges, true), false, first_step, phase);
    sink.run(d, axis, +1, h - 1, halves(ranges, false), false, first_step, phase);
    sink.run(d, axis, -1, h, halves(ranges, false), false, first_step, phase);
    sink.run(d, axis, -1, h - 1, halves(ranges, true), false, first_step, phase);
  }
}

// ReduceScatter along one axis: reduction chains that end at `owner`, carrying the owner's ranges.
template <class Sink>
void reduce_to(const Grid& g, Sink& sink, int owner, int axis, const typename Sink::Ranges& ranges, int first_step,
               int phase) {
  const int m = g.size(axis);
  if (m == 1) return;
  auto c = g.coords(owner);
  const int pos = c[static_cast<size_t>(axis)];
  auto at = [&](int coord) {
    c[static_cast<size_t>(axis)] = ((coord % m) + m) % m;
    return g.index(c);
  };
  if (!g.wraps(axis)) {
    sink.run(at(m - 1), axis, -1, m - 1 - pos, ranges, true, first_step, phase);
    sink.run(at(0), axis, +1, pos, ranges, true, first_step, phase);
  } else if (g.uni()) {
    sink.run(at(pos + 1), axis, +1, m - 1, ranges, true, first_step, phase);
  } else if (m % 2 == 1) {
    const int h = m / 2;
    sink.run(at(pos + h), axis, -1, h, ranges, true, first_step, phase);
    sink.run(at(pos - h), axis, +1, h, ranges, true, first_step, phase);
  } else {  // mirror of flood(): the antipode sends its first half one way and its second half the other
    const int h = m / 2;
    sink.run(at(pos + h), axis, -1, h, halves(ranges, true), true, first_step, phase);
    sink.run(at(pos + h - 1), axis, -1, h - 1, halves(ranges, false), true, first_step, phase);
    sink.run(at(pos - h), axis, +1, h, halves(ranges, false), true, first_step, phase);
    sink.run(at(pos - h + 1), axis, +1, h - 1, halves(ranges, true), true, first_step, phase);
  }
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

// Part p of the array visits the axes in the cyclic order starting at p. Before phase q it holds the shards
// of every rank that differs from the device's own only on the axes it has already gathered.
template <class Sink>
void all_gather(const Grid& g, const Group& grp, long long shard, int first_step, int first_phase, Sink& sink) {
  const int k = static_cast<int>(grp.axes.size());
  const auto start = phase_starts(g, grp.axes, first_step, false);
  std::vector<bool> free(static_cast<size_t>(k));
  for (int d = 0; d < g.devices(); ++d)
    for (int p = 0; p < k; ++p)
      for (int q = 0; q < k; ++q) {
        std::fill(free.begin(), free.end(), false);
        for (int qq = 0; qq < q; ++qq) free[static_cast<size_t>((p + qq) % k)] = true;
        flood(g, sink, d, grp.axes[static_cast<size_t>((p + q) % k)], sink.shards(grp, d, free, shard, p, k),
              start[static_cast<size_t>(q)], first_phase + q);
      }
}

// The time-reverse: part p reduces the axes in the reverse cyclic order. Phase q delivers the shards that
// match the device's coordinates on the axes reduced so far and on the current one; the rest are free.
template <class Sink>
void reduce_scatter(const Grid& g, const Group& grp, long long shard, int first_step, Sink& sink) {
  const int k = static_cast<int>(grp.axes.size());
  const auto start = phase_starts(g, grp.axes, first_step, true);
  std::vector<bool> free(static_cast<size_t>(k));
  for (int d = 0; d < g.devices(); ++d)
    for (int p = 0; p < k; ++p)
      for (int q = 0; q < k; ++q) {
        std::fill(free.begin(), free.end(), true);
        for (int qq = 0; qq <= q; ++qq) free[static_cast<size_t>((p + k - 1 - qq) % k)] = false;
        reduce_to(g, sink, d, grp.axes[static_cast<size_t>((p + k - 1 - q) % k)],
                  sink.shards(grp, d, free, shard, p, k), start[static_cast<size_t>(q)], q);
      }
}

// ppermute: each device's shard goes `shift` places along the one axis by the shortest way (the +
// direction on a unidirectional ring; an antipodal shift on an even bidirectional ring is split in halves,
// one each way; along an open axis, straight there).
template <class Sink>
void ppermute_runs(const Grid& g, const Group& grp, long long shard, int shift, Sink& sink) {
  const int axis = grp.axes[0], m = g.size(axis), s = ((shift % m) + m) % m;
  std::vector<bool> own(1, false);  // a device sends only its own shard
  for (int d = 0; d < g.devices(); ++d) {
    const auto mine = sink.shards(grp, d, own, shard, 0, 1);
    const int here = g.coords(d)[static_cast<size_t>(axis)], there = (here + s) % m;
    if (!g.wraps(axis)) sink.run(d, axis, there >= here ? +1 : -1, std::abs(there - here), mine, false, 1, 0);
    else if (g.uni() || s < m - s) sink.run(d, axis, +1, s, mine, false, 1, 0);
    else if (s > m - s) sink.run(d, axis, -1, m - s, mine, false, 1, 0);
    else {
      sink.run(d, axis, +1, s, halves(mine, true), false, 1, 0);
      sink.run(d, axis, -1, s, halves(mine, false), false, 1, 0);
    }
  }
}

// Every collective but AllToAll, into one sink.
template <class Sink>
void route_runs(const Grid& g, const Group& grp, const Op& op, long long shard, Sink& sink) {
  if (const auto* pp = std::get_if<Ppermute>(&op)) return ppermute_runs(g, grp, shard, pp->shift, sink);
  const int k = static_cast<int>(grp.axes.size());
  switch (std::get<Collective>(op)) {
    case Collective::all_gather: all_gather(g, grp, shard, 1, 0, sink); break;
    case Collective::reduce_scatter: reduce_scatter(g, grp, shard, 1, sink); break;
    case Collective::all_reduce:
      reduce_scatter(g, grp, shard, 1, sink);
      all_gather(g, grp, shard, sink.steps() + 1, k, sink);
      break;
    case Collective::all_to_all: throw std::logic_error("AllToAll is routed block by block (route_block)");
  }
}

// AllToAll in data mode: the block from one device to another by the shortest route over the group's axes
// in order; antipodal hops split the ranges.
void route_block(const Grid& g, const std::vector<int>& axes, size_t axis_i, int from, const std::vector<int>& to_coords,
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
    route_block(g, axes, axis_i + 1, at, to_coords, std::move(mv), std::move(rs), start, paths);
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

// Link phases of a collective over k axes: one per axis (AllReduce: its ReduceScatter's and its
// AllGather's), one for a ppermute; AllToAll is counted in closed form, without link counters.
int link_phases(const Op& op, int k) {
  if (std::holds_alternative<Ppermute>(op)) return 1;
  if (is(op, Collective::all_to_all)) return 0;
  return is(op, Collective::all_reduce) ? 2 * k : k;
}

Counted count(const Grid& g, const Group& grp, const Request& req, long long E) {
  Counted c;
  if (is(req.op, Collective::all_to_all)) {
    all_to_all_counts(g, grp, E / (static_cast<long long>(grp.n) * grp.n), c);
    return c;
  }
  LinkCounter links(g, link_phases(req.op, static_cast<int>(grp.axes.size())));
  CountSink sink{g, c, links};
  route_runs(g, grp, req.op, E / grp.n, sink);
  c.result.max_link_elements = links.busiest_per_phase_summed();
  return c;
}

// Deterministic small integers, so sums are exact in double precision.
double value(int group, int rank, long long idx) {
  return static_cast<double>((group * 7919LL + rank * 104729LL + idx * 31LL) % 1000);
}

}  // namespace

Direction parse_direction(std::string_view text) {
  if (text == "uni") return Direction::uni;
  if (text == "bi") return Direction::bi;
  check::not_one_of(text, {"uni", "bi"});
}

std::string_view name(Direction d) { return d == Direction::uni ? "uni" : "bi"; }

Topology ring(int devices, Direction links) { return {{devices}, {true}, links}; }
Topology line(int devices) { return {{devices}, {false}, Direction::bi}; }
Topology from_slice(const Slice& s) { return {s.shape, s.wraps, Direction::bi}; }
Topology from_system(const System& s) {
  Topology t;
  for (const auto& axis : s.fast) {
    t.shape.push_back(axis.size);
    t.wraps.push_back(axis.wraps);
  }
  return t;
}

bool is(const Op& op, Collective c) {
  const auto* x = std::get_if<Collective>(&op);
  return x && *x == c;
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
  if (std::holds_alternative<Ppermute>(req.op) && req.axes.size() != 1) throw std::invalid_argument("ppermute runs over exactly one axis");
  const Group grp(g, req.axes);
  const double n = grp.n;
  const double divisor = is(req.op, Collective::all_to_all) ? n * n : n;
  if (!(req.elements >= 1) || req.elements != std::floor(req.elements) || req.elements > 1e15)
    throw std::invalid_argument("elements = " + format_number(req.elements) + ": must be a positive whole number");
  if (std::fmod(req.elements, divisor) != 0)
    throw std::invalid_argument("elements = " + format_number(req.elements) + ": must be a multiple of " +
                                format_number(divisor) + (is(req.op, Collective::all_to_all) ? " (n², one block per device pair)" : " (one shard per device)"));
  const auto E = static_cast<long long>(req.elements);
  const long long shard = E / grp.n;

  // Count pass (README, "Limits"): memory is one counter per directed link and phase, checked first.
  const int k = static_cast<int>(req.axes.size());
  const double count_phases = link_phases(req.op, k);
  const double counters = count_phases * g.devices() * g.axes() * 2;
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
  if (is(req.op, Collective::all_to_all)) {
    const long long block = E / (static_cast<long long>(grp.n) * grp.n);
    for (int d = 0; d < g.devices(); ++d) {
      const int i = grp.rank(d);
      for (int j = 0; j < grp.n; ++j) {
        if (j == i) continue;
        const Range r{(static_cast<long long>(i) * grp.n + j) * block, (static_cast<long long>(i) * grp.n + j + 1) * block};
        route_block(g, req.axes, 0, d, g.coords(grp.device(d, j)), {}, {r}, d, paths);
      }
    }
  } else {
    PathSink sink{g, paths};
    route_runs(g, grp, req.op, shard, sink);
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
    if (is(req.op, Collective::all_gather) || std::holds_alternative<Ppermute>(req.op))
      for (long long x = r * shard; x < (r + 1) * shard; ++x) b[static_cast<size_t>(x)] = value(gid, 0, x);
    else if (is(req.op, Collective::all_to_all))
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
    if ((is(req.op, Collective::reduce_scatter) || is(req.op, Collective::all_reduce)) && !sums.count(gid)) {
      auto& sum = sums[gid];
      sum.assign(static_cast<size_t>(E), 0.0);
      for (int q = 0; q < grp.n; ++q)
        for (long long x = 0; x < E; ++x) sum[static_cast<size_t>(x)] += value(gid, q, x);
    }
    auto total = [&](long long x) { return sums[gid][static_cast<size_t>(x)]; };
    if (const auto* pp = std::get_if<Ppermute>(&req.op)) {
      const int m = grp.n, src = static_cast<int>(((r - static_cast<long long>(pp->shift)) % m + m) % m);
      for (long long x = src * shard; x < (src + 1) * shard; ++x) res.correct &= b[static_cast<size_t>(x)] == value(gid, 0, x);
      continue;
    }
    switch (std::get<Collective>(req.op)) {
      case Collective::all_gather:
        for (long long x = 0; x < E; ++x) res.correct &= b[static_cast<size_t>(x)] == value(gid, 0, x);
        break;
      case Collective::reduce_scatter:
        for (long long x = r * shard; x < (r + 1) * shard; ++x) res.correct &= b[static_cast<size_t>(x)] == total(x);
        break;
      case Collective::all_reduce:
        for (long long x = 0; x < E; ++x) res.correct &= b[static_cast<size_t>(x)] == total(x);
        break;
      case Collective::all_to_all: {
        const long long block = shard / grp.n;
        for (int i = 0; i < grp.n; ++i)
          for (long long x = (static_cast<long long>(i) * grp.n + r) * block; x < (static_cast<long long>(i) * grp.n + r + 1) * block; ++x)
            res.correct &= b[static_cast<size_t>(x)] == value(gid, i, x);
        break;
      }
    }
  }
  return res;
}
}  // namespace

SimTime to_time(const Result& r, double bytes_per_element, const System& s) {
  if (s.fast.empty()) throw std::invalid_argument(s.name + ": no fast axes to time a collective on");
  const Link link = axis_link(s, 0);
  for (int a = 1; a < static_cast<int>(s.fast.size()); ++a) {
    const Link other = axis_link(s, a);
    if (other.oneway_bytes_per_s != link.oneway_bytes_per_s || other.hop_latency_s != link.hop_latency_s)
      throw std::invalid_argument(s.name + ": its fast axes have different links; a simulated time takes one");
  }
  SimTime t{};
  t.t_bandwidth_s = r.max_link_elements * bytes_per_element / link.oneway_bytes_per_s;
  t.t_latency_s = r.steps * link.hop_latency_s;
  t.t_s = std::max(t.t_bandwidth_s, t.t_latency_s);
  return t;
}

}  // namespace scaling::sim
