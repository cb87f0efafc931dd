// The switched-tree simulator (sim/switched_tree.hpp) against the §12.4 formulas on every topology the
// chapter uses: one 8-GPU node, two nodes, a 32-node scalable unit and the 1024-GPU SuperPod. The
// expected counts are written from the chapter's step-by-step answers (Quiz 4) and the closed forms of
// cost/collectives.hpp; the simulator moves real numbers and reports whether every GPU ended right.
#include <doctest/doctest.h>

#include <stdexcept>
#include <vector>

#include "scaling/cost/collectives.hpp"
#include "scaling/hardware/chip.hpp"
#include "scaling/hardware/system.hpp"
#include "scaling/sim/switched_tree.hpp"

using namespace scaling;
using namespace scaling::sim;
using doctest::Approx;

namespace {
double gpus(const std::vector<int>& d) {
  double n = 1;
  for (int k : d) n *= k;
  return n;
}
std::vector<TreeLevel> levels_of(const std::vector<int>& d) {
  // NVLink 450e9 per GPU, 400e9 per node, 32 × 400e9 per unit: the SuperPod's figures.
  const double w[] = {450e9, 400e9, 12.8e12};
  const char* names[] = {"node", "leaf", "spine"};
  std::vector<TreeLevel> l;
  for (size_t i = 0; i < d.size(); ++i) l.push_back({names[i], d[i], w[i]});
  return l;
}
std::vector<double> rates_of(const std::vector<int>& d) {
  std::vector<double> w;
  for (const auto& l : levels_of(d)) w.push_back(l.link_bytes_per_s);
  return w;
}
const std::vector<std::vector<int>> kTopologies = {{8}, {8, 2}, {8, 32}, {8, 32, 4}};
}  // namespace

TEST_CASE("switched tree: a ring AllGather / ReduceScatter / AllReduce in a node moves (n − 1)/n per port") {
  for (int n : {2, 5, 8}) {
    INFO("n = " << n);
    const double e = n * 3;
    for (auto op : {TreeOp::ring_all_gather, TreeOp::ring_reduce_scatter}) {
      const auto r = run_tree({{n}}, {op, e});
      CHECK(r.correct);
      CHECK(r.levels[0].max_up == Approx(e * (n - 1) / n));
      CHECK(r.levels[0].max_down == Approx(e * (n - 1) / n));
      CHECK(r.levels[0].max_switch_in == Approx(e * (n - 1)));
      CHECK(r.steps == n - 1);
      CHECK(tree_time_s(r, 2, {450e9}) == Approx(node_all_gather_s(2 * e, n, 450e9)));
    }
    const auto ar = run_tree({{n}}, {TreeOp::ring_all_reduce, e});
    CHECK(ar.correct);
    CHECK(tree_time_s(ar, 2, {450e9}) == Approx(node_all_reduce_s(2 * e, n, 450e9, false)));
  }
}

TEST_CASE("switched tree: SHARP in a node — Quiz 4 Q2's BN in and out of the switch, B per GPU") {
  for (int n : {2, 4, 8}) {
    const double e = n * 2;
    const auto r = run_tree({{n}}, {TreeOp::sharp_all_reduce, e});
    CHECK(r.correct);
    CHECK(r.levels[0].max_switch_in == Approx(e * n));
    CHECK(r.levels[0].max_switch_out == Approx(e * n));
    CHECK(r.levels[0].max_up == Approx(e));
    CHECK(r.levels[0].max_down == Approx(e));
    CHECK(tree_time_s(r, 1, {450e9}) == Approx(node_all_reduce_s(e, n, 450e9, true)));
  }
}

TEST_CASE("switched tree: a multicast AllGather over M nodes — Quiz 4 Q1's switch counts") {
  for (int m : {2, 4, 32}) {
    const int n = 8;
    const double e = n * m;
    const auto r = run_tree({{n, m}}, {TreeOp::multicast_all_gather, e});
    CHECK(r.correct);
    CHECK(r.levels[0].max_switch_in == Approx(e));            // B/M from its GPUs + B(M − 1)/M from above
    CHECK(r.levels[0].max_switch_out == Approx(e * n));       // N(B − B/MN) down + B/M up
    CHECK(r.levels[1].max_switch_in == Approx(e));            // B/M from each node
    CHECK(r.levels[1].max_switch_out == Approx(e * (m - 1)));  // B(M − 1)/M to each node
    CHECK(r.levels[1].max_down == Approx(e * (m - 1) / m));
  }
}

TEST_CASE("switched tree: AllGather and sharded AllGather equal the closed forms on every SuperPod topology") {
  for (const auto& d : kTopologies) {
    const double n = gpus(d);
    for (int y : {1, 2, 8, 16, 64, 256}) {
      if (y > n || static_cast<long>(n) % y != 0) continue;
      INFO("GPUs " << n << ", Y = " << y);
      const auto r = run_tree({d}, {TreeOp::sharded_all_gather, n, y});
      CHECK(r.correct);
      CHECK(tree_time_s(r, 1 / n, rates_of(d)) == Approx(sharded_tree_all_gather_s(1, levels_of(d), y)));
    }
    const auto r = run_tree({d}, {TreeOp::multicast_all_gather, n});
    CHECK(tree_time_s(r, 1 / n, rates_of(d)) == Approx(tree_all_gather_s(1, levels_of(d))));
    // The chapter's per-level ring is exact at the top level and below it never above the executed count.
    CHECK(tree_all_gather_book_s(1, levels_of(d)) <= tree_all_gather_s(1, levels_of(d)) * (1 + 1e-12));
  }
}

TEST_CASE("switched tree: AllToAll inside a node and across nodes") {
  for (const auto& d : std::vector<std::vector<int>>{{8}, {8, 2}, {8, 4}, {4, 3, 2}}) {
    const double n = gpus(d);
    const auto r = run_tree({d}, {TreeOp::all_to_all, n * n});
    CHECK(r.correct);
    const double g = d[0];
    CHECK(r.levels[0].max_up == Approx((n - 1) / (n * n) * n * n));  // (N − 1) blocks of E/N²
    if (d.size() > 1) {
      const double m = n / g;
      CHECK(r.levels[1].max_up / (n * n) == Approx((m - 1) / (m * m)));  // the node's egress share
      CHECK(r.levels[1].max_up / (n * n) / 400e9 == Approx(cross_node_all_to_all_s(1, static_cast<int>(m), 400e9)));
    } else {
      CHECK(tree_time_s(r, 1 / (n * n), {450e9}) == Approx(node_all_to_all_s(1, static_cast<int>(n), 450e9)));
    }
  }
}

TEST_CASE("switched tree: sharded SHARP AllReduce — Quiz 4 Q3 and Q4") {
  // One node, N = X·Y: every port carries B/Y each way.
  for (int y : {1, 2, 4}) {
    const auto r = run_tree({{8}}, {TreeOp::sharded_sharp_all_reduce, 16, y});
    CHECK(r.correct);
    CHECK(r.levels[0].max_up == Approx(16.0 / y));
  }
  // The pod with Y = 256: each unit's link carries the whole B up and down.
  const auto r = run_tree({{8, 32, 4}}, {TreeOp::sharded_sharp_all_reduce, 1024, 256});
  CHECK(r.correct);
  CHECK(r.levels[2].max_up == Approx(1024));
  CHECK(r.levels[2].max_down == Approx(1024));
}

TEST_CASE("switched tree: bad requests are refused with the rule") {
  CHECK_THROWS_AS(run_tree({{}}, {TreeOp::ring_all_gather, 8}), std::invalid_argument);
  CHECK_THROWS_AS(run_tree({{8, 1}}, {TreeOp::ring_all_gather, 8}), std::invalid_argument);
  CHECK_THROWS_AS(run_tree({{8}}, {TreeOp::ring_all_gather, 12}), std::invalid_argument);
  CHECK_THROWS_AS(run_tree({{8}}, {TreeOp::all_to_all, 8}), std::invalid_argument);
  CHECK_THROWS_AS(run_tree({{8}}, {TreeOp::sharded_all_gather, 8, 3}), std::invalid_argument);
  CHECK_THROWS_AS(run_tree({{256, 256, 2}}, {TreeOp::ring_all_gather, 1}), std::invalid_argument);
  CHECK_THROWS_AS(run_tree({{8}}, {TreeOp::ring_all_gather, -8}), std::invalid_argument);
  const auto r = run_tree({{8}}, {TreeOp::ring_all_gather, 8});
  CHECK_THROWS_AS(tree_time_s(r, 1, {0}), std::invalid_argument);
  CHECK_THROWS_AS(tree_time_s(r, 1, {1, 2}), std::invalid_argument);
  CHECK_THROWS_AS(node_all_gather_s(0, 8, 1), std::invalid_argument);
  CHECK_THROWS_AS(sharded_tree_all_gather_s(1, {{"node", 8, 1e9}}, 3), std::invalid_argument);
  CHECK_THROWS_AS(fat_tree_levels(gpu_cluster(chip("h100"), 48), 32), std::invalid_argument);
}
