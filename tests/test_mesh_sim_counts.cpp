// Count-only mode against data mode on every small mesh. Both modes take their routes from the one router
// (mesh_sim.cpp: each collective written once, as straight runs into a sink), so this does not check the
// routes themselves — data mode's `correct` does that (every device ends with the plain computation's
// values), and test_mesh_sim.cpp holds the counts against the cost formulas. What it checks is the counting:
// the two share no counting code (count-only sums the runs into per-link difference arrays and AllToAll in
// closed form; data mode walks every path hop by hop), so equal steps and link counts on all of these
// meshes, operations, axis orders, array sizes and shifts check count-only's arithmetic exhaustively.
#include <doctest/doctest.h>

#include <algorithm>
#include <functional>

#include "scaling/sim/mesh_sim.hpp"

using namespace scaling;

namespace {
void compare(const sim::Topology& t, sim::Request r) {
  const auto data = sim::simulate(t, r);
  r.count_only = true;
  const auto counted = sim::simulate(t, r);
  CHECK(data.correct);
  CHECK(counted.steps == data.steps);
  CHECK(counted.max_link_elements == data.max_link_elements);
  CHECK(counted.total_link_elements == data.total_link_elements);
}

// Every topology of `axes` axes with sizes 1..max_size, each wrapped or open.
void for_each_topology(int axes, int max_size, const std::function<void(const sim::Topology&)>& f) {
  std::vector<int> shape(static_cast<size_t>(axes), 1);
  while (true) {
    for (int wraps = 0; wraps < (1 << axes); ++wraps) {
      std::vector<bool> w;
      for (int a = 0; a < axes; ++a) w.push_back(((wraps >> a) & 1) != 0);
      f({shape, w, sim::Direction::bi});
      if (wraps == (1 << axes) - 1) f({shape, w, sim::Direction::uni});
    }
    size_t a = 0;
    while (a < shape.size() && shape[a] == max_size) shape[a++] = 1;
    if (a == shape.size()) return;
    ++shape[a];
  }
}
}  // namespace

TEST_CASE("count-only equals data mode on every small mesh, operation, axis order, size and shift") {
  int runs = 0;
  for (const auto& [axes, max_size] : {std::pair{1, 9}, {2, 5}, {3, 3}})
    for_each_topology(axes, max_size, [&](const sim::Topology& t) {
      // Every non-empty ordered subset of the axes.
      std::vector<std::vector<int>> subsets;
      for (int mask = 1; mask < (1 << axes); ++mask) {
        std::vector<int> s;
        for (int a = 0; a < axes; ++a)
          if ((mask >> a) & 1) s.push_back(a);
        do subsets.push_back(s);
        while (std::next_permutation(s.begin(), s.end()));
      }
      for (const auto& group : subsets) {
        double n = 1;
        for (int a : group) n *= t.shape[static_cast<size_t>(a)];
        for (const sim::Op& kind : {sim::Op{Collective::all_gather}, sim::Op{Collective::reduce_scatter},
                                    sim::Op{Collective::all_reduce}, sim::Op{Collective::all_to_all},
                                    sim::Op{sim::Ppermute{}}}) {
          const bool ppermute = std::holds_alternative<sim::Ppermute>(kind);
          if (ppermute && group.size() != 1) continue;
          const double unit = sim::is(kind, Collective::all_to_all) ? n * n : n;
          for (const double times : {1.0, 2.0, 3.0, 5.0})
            for (const int shift : ppermute ? std::vector<int>{-3, 1, 2, 4} : std::vector<int>{1}) {
              const sim::Op op = ppermute ? sim::Op{sim::Ppermute{shift}} : kind;
              INFO(shape_text(t.shape) << " wraps " << t.wraps[0] << (t.links == sim::Direction::uni ? " uni" : " bi")
                                       << " op " << kind.index() << " axes " << group.size() << " E " << unit * times);
              compare(t, {op, group, unit * times});
              ++runs;
            }
        }
      }
    });
  CHECK(runs > 10000);
}
