#include "scaling/sim/mesh_sim.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
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
    devices_ = 1;
    for (int s : t.shape) {
      if (s < 1) throw std::invalid_argument("axis size " + std::to_string(s) + ": must be at least 1");
      devices_ *= s;
    }
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
  if (req.count_only) return res;

  // Data mode: run the paths step by step on real arrays and compare with the plain computation.
  if (static_cast<double>(g.devices()) * req.elements > 5e7)
    throw std::invalid_argument("data mode holds " + format_number(g.devices() * req.elements) +
                                " values; above 5e7 use count-only mode");
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
  for (const auto& hops : by_step) {
    std::vector<std::vector<double>> payload;  // read everything first: messages of one step are simultaneous
    for (const auto& h : hops) {
      std::vector<double> v;
      for (const auto& r : h.path->ranges)
        v.insert(v.end(), buf[static_cast<size_t>(h.from)].begin() + r.begin, buf[static_cast<size_t>(h.from)].begin() + r.end);
      payload.push_back(std::move(v));
    }
    for (size_t i = 0; i < hops.size(); ++i) {
      size_t k = 0;
      auto& dst = buf[static_cast<size_t>(hops[i].to)];
      for (const auto& r : hops[i].path->ranges)
        for (long long x = r.begin; x < r.end; ++x, ++k)
          dst[static_cast<size_t>(x)] = hops[i].path->add ? dst[static_cast<size_t>(x)] + payload[i][k] : payload[i][k];
    }
  }
  if (external) return res;  // the caller checks its own data
  for (int d = 0; d < g.devices() && res.correct; ++d) {
    const int gid = grp.id(d), r = grp.rank(d);
    const auto& b = buf[static_cast<size_t>(d)];
    auto total = [&](long long x) {
      double s = 0;
      for (int q = 0; q < grp.n; ++q) s += value(gid, q, x);
      return s;
    };
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
        const int m = grp.n, src = ((r - req.shift) % m + m) % m;
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
