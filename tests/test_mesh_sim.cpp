// The virtual mesh against the cost model: every run moves real data and checks its result; the
// element counts on the busiest link and the step counts must equal the closed forms.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

#include "scaling/cost/collectives.hpp"
#include "scaling/hardware/system.hpp"
#include "scaling/sim/mesh_sim.hpp"

using namespace scaling;
using doctest::Approx;

namespace {
const Link kLink = ici_link(chip("tpu-v5e"));
const System kV5e = tpu_pods(chip("tpu-v5e"), {4, 4}, 1);  // the simulator's time takes the link from a System
constexpr double kBytes = 2;  // bf16

void check_against_model(const sim::Topology& topo, Collective op, const std::vector<int>& axes, double elements) {
  INFO(name(op) << " on " << shape_text(topo.shape) << " over " << axes.size() << " axes, E = " << elements);
  const auto r = sim::simulate(topo, {op, axes, elements});
  CHECK(r.correct);
  std::vector<Axis> model_axes;
  for (int a : axes) model_axes.push_back({topo.shape[static_cast<size_t>(a)], topo.wraps[static_cast<size_t>(a)]});
  const auto model = collective_cost(op, model_axes, elements * kBytes, kLink);
  const auto t = sim::to_time(r, kBytes, kV5e);
  CHECK(t.t_bandwidth_s == Approx(model.t_bandwidth_s).epsilon(1e-12));
  CHECK(r.steps == model.hops);
  CHECK(t.t_latency_s == Approx(model.t_latency_s).epsilon(1e-12));
  // count-only mode counts the same
  const auto counted = sim::simulate(topo, {op, axes, elements, true});
  CHECK(counted.max_link_elements == r.max_link_elements);
  CHECK(counted.total_link_elements == r.total_link_elements);
}
}  // namespace

TEST_CASE("unidirectional rings of 2…64: exact link counts, real data") {
  for (int d = 2; d <= 64; ++d) {
    INFO("devices " << d);
    const auto topo = sim::ring(d, sim::Direction::uni);
    const double e = 2.0 * d * d;
    for (auto op : {Collective::all_gather, Collective::reduce_scatter, Collective::all_reduce}) {
      const auto r = sim::simulate(topo, {op, {0}, e});
      CHECK(r.correct);
      const double per_pass = (d - 1.0) / d * e;  // every shard crosses every link but its own
      CHECK(r.max_link_elements == (op == Collective::all_reduce ? 2 * per_pass : per_pass));
      CHECK(r.steps == (op == Collective::all_reduce ? 2 * (d - 1) : d - 1));
    }
    // AllToAll one way round: blocks of E/d² travel 1, 2, …, d − 1 hops (§3.5, ex3.10 part 2)
    const auto a2a = sim::simulate(topo, {Collective::all_to_all, {0}, e});
    CHECK(a2a.correct);
    CHECK(a2a.max_link_elements == (d - 1.0) / (2.0 * d) * e);
  }
}

TEST_CASE("bidirectional rings of 2…64 match the cost model exactly (odd and even)") {
  for (int d = 2; d <= 64; ++d) {
    INFO("devices " << d);
    const auto topo = sim::ring(d, sim::Direction::bi);
    for (auto op : {Collective::all_gather, Collective::reduce_scatter, Collective::all_reduce, Collective::all_to_all})
      check_against_model(topo, op, {0}, 2.0 * d * d);
  }
}

TEST_CASE("open lines match the cost model (AllToAll's busiest link is the middle one)") {
  for (int d = 2; d <= 24; ++d) {
    INFO("devices " << d);
    for (auto op : {Collective::all_gather, Collective::reduce_scatter, Collective::all_reduce, Collective::all_to_all})
      check_against_model(sim::line(d), op, {0}, 2.0 * d * d);
  }
}

TEST_CASE("2D and 3D tori: multi-axis collectives match the cost model") {
  const sim::Topology torus2{{4, 4}, {true, true}, sim::Direction::bi};
  const sim::Topology torus3{{4, 4, 4}, {true, true, true}, sim::Direction::bi};
  const sim::Topology open2{{4, 4}, {false, false}, sim::Direction::bi};
  const sim::Topology odd2{{5, 5}, {true, true}, sim::Direction::bi};
  for (auto op : {Collective::all_gather, Collective::reduce_scatter, Collective::all_reduce}) {
    check_against_model(torus2, op, {0, 1}, 16 * 2 * 8);
    check_against_model(torus3, op, {0, 1, 2}, 64 * 3 * 2);
    check_against_model(open2, op, {0, 1}, 16 * 2 * 8);
    check_against_model(odd2, op, {0, 1}, 25 * 2 * 4);
    check_against_model(torus3, op, {1}, 4 * 8);  // one axis of a 3D mesh: 16 independent rings
  }
  // AllToAll over several axes, equal and unequal sizes, wrapped and open. Blocks (E/n²) are a
  // multiple of 4 so that a block antipodal on two even axes splits into exact quarters.
  check_against_model(torus2, Collective::all_to_all, {0, 1}, 256 * 4);
  check_against_model(sim::Topology{{4, 8}, {true, true}, sim::Direction::bi}, Collective::all_to_all, {0, 1}, 32 * 32 * 4);
  check_against_model(sim::Topology{{3, 4}, {false, true}, sim::Direction::bi}, Collective::all_to_all, {0, 1}, 144 * 2);
  check_against_model(sim::Topology{{2, 4}, {true, true}, sim::Direction::bi}, Collective::all_to_all, {0, 1}, 64 * 4);
  check_against_model(torus3, Collective::all_to_all, {0, 2}, 256 * 4);
}

TEST_CASE("ppermute sends each shard once along the shortest path") {
  const auto r = sim::simulate(sim::ring(8, sim::Direction::bi), {sim::Ppermute{1}, {0}, 64});
  CHECK(r.correct);
  CHECK(r.steps == 1);
  CHECK(r.max_link_elements == 8);
  const auto back = sim::simulate(sim::ring(8, sim::Direction::bi), {sim::Ppermute{-3}, {0}, 64});
  CHECK(back.correct);
  CHECK(back.steps == 3);
  const auto half = sim::simulate(sim::ring(8, sim::Direction::bi), {sim::Ppermute{4}, {0}, 64});  // antipodal: split
  CHECK(half.correct);
  CHECK(half.max_link_elements == 4 * 4);  // 8 shards of 8, halves of 4, each link on 4 routes
}

TEST_CASE("the mesh of a System is its fast axes: a v5p pod's 16x20x28, each axis wrapped") {
  const auto system = tpu_pods(chip("tpu-v5p"), {16, 20, 28}, 2);  // the DCN tier is not part of the mesh
  const auto mesh = sim::from_system(system);
  CHECK(mesh.shape == std::vector<int>{16, 20, 28});
  CHECK(mesh.wraps == std::vector<bool>{true, true, true});
  CHECK(mesh.links == sim::Direction::bi);
  // An AllGather over the 28-chip ring: ⌊28/2⌋ = 14 hops, and each directed link carries (28 − 1)/2 shards.
  const auto r = sim::simulate(mesh, {Collective::all_gather, {2}, 28 * 1024, true});
  CHECK(r.steps == 14);
  CHECK(r.max_link_elements == 27.0 / 2 * 1024);
}

TEST_CASE("count-only mode handles a whole v5p pod quickly") {
  const auto pod = make_slice("tpu-v5p", "16x20x28");
  const auto r = sim::simulate(sim::from_slice(pod), {Collective::all_gather, {2}, 28 * 1024, true});
  CHECK(r.steps == 14);
  CHECK(r.max_link_elements == 27.0 / 2 * 1024);
}

TEST_CASE("the simulator rejects impossible requests") {
  CHECK_THROWS_WITH_AS(sim::simulate(sim::ring(4, sim::Direction::bi), {Collective::all_gather, {0}, 6}),
                       doctest::Contains("multiple of 4"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(sim::simulate(sim::ring(4, sim::Direction::bi), {Collective::all_to_all, {0}, 8}),
                       doctest::Contains("multiple of 16"), std::invalid_argument);
  CHECK_THROWS_AS(sim::simulate(sim::ring(4, sim::Direction::bi), {Collective::all_gather, {1}, 8}), std::invalid_argument);
  CHECK_THROWS_AS(sim::simulate(sim::Topology{{4}, {false}, sim::Direction::uni}, {Collective::all_gather, {0}, 8}),
                  std::invalid_argument);
  CHECK_THROWS_AS(sim::simulate(sim::ring(4, sim::Direction::bi), {Collective::all_gather, {0}, 0}), std::invalid_argument);
  CHECK_THROWS_AS(sim::simulate(sim::ring(4, sim::Direction::bi), {sim::Ppermute{}, {0, 0}, 8}), std::invalid_argument);
}

TEST_CASE("to_time takes its link from the System: one conversion, one figure on every axis") {
  const auto r = sim::simulate(sim::ring(4, sim::Direction::bi), {Collective::all_gather, {0}, 4096, true});
  auto s = tpu_pods(chip("tpu-v5e"), {4, 4}, 1);
  // §3.2's ring: (n − 1)/n · V / W_bidir, V = 4096 bf16 values, W_bidir = 9e10 B/s (§2.3's v5e figure).
  CHECK(sim::to_time(r, 2, s).t_bandwidth_s == Approx(0.75 * 4096 * 2 / 9e10));
  s.fast[1].bytes_per_s = 2e11;  // axes with different links: the Result cannot say which it crossed
  CHECK_THROWS_AS(sim::to_time(r, 2, s), std::invalid_argument);
  CHECK_THROWS_AS(sim::to_time(r, 2, System{}), std::invalid_argument);
}
