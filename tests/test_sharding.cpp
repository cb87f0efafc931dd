// Slices and topology, sharding notation (round trips, rejections) and the §3.2 matmul planner.
#include <doctest/doctest.h>

#include <stdexcept>

#include "scaling/cost/collectives.hpp"
#include "scaling/cost/matmul_plan.hpp"
#include "scaling/notation/sharding.hpp"
#include "scaling/hardware/topology.hpp"

using namespace scaling;
using doctest::Approx;

TEST_CASE("slices: counts and §2.2 wraparound rules") {
  const auto pod = make_slice("tpu-v5p", "16x20x28");
  CHECK(chips(pod) == 8960);
  CHECK(hosts(pod) == 2240);
  CHECK(tensorcores(pod) == 17920);
  CHECK(make_slice("tpu-v4p", "4x4x4").wraps == std::vector<bool>{true, true, true});
  CHECK(make_slice("tpu-v4p", "4x4x8").wraps == std::vector<bool>{true, true, true});
  CHECK(make_slice("tpu-v4p", "2x2x4").wraps == std::vector<bool>{false, false, false});
  CHECK(make_slice("tpu-v5e", "8x16").wraps == std::vector<bool>{false, true});
  CHECK(make_slice("tpu-v5e", "4x4").wraps == std::vector<bool>{false, false});
  CHECK(make_slice("tpu-v5e", "4x4", WrapPolicy::yes).wraps == std::vector<bool>{true, true});
  CHECK(make_slice("tpu-v5p", "4x4x4", WrapPolicy::no).wraps == std::vector<bool>{false, false, false});
  CHECK(hosts(make_slice("tpu-v5e", "2x2")) == 1);  // smaller than one 4x2 host
}

TEST_CASE("hop distance with and without wraparound") {
  const auto open = make_slice("tpu-v5e", "4x4");
  CHECK(hop_distance(open, {0, 0}, {3, 3}) == 6);
  const auto wrapped = make_slice("tpu-v5e", "4x4", WrapPolicy::yes);
  CHECK(hop_distance(wrapped, {0, 0}, {3, 3}) == 2);
  CHECK(hop_distance(make_slice("tpu-v5e", "16x16"), {0, 0}, {15, 8}) == 1 + 8);
  CHECK_THROWS_AS(hop_distance(open, {0, 4}, {0, 0}), std::invalid_argument);
}

TEST_CASE("slice input is rejected with the value named") {
  CHECK_THROWS_WITH_AS(parse_shape("4x0"), doctest::Contains("'4x0'"), std::invalid_argument);
  CHECK_THROWS_AS(parse_shape("4xx4"), std::invalid_argument);
  CHECK_THROWS_AS(parse_shape(""), std::invalid_argument);
  CHECK_THROWS_WITH_AS(make_slice("tpu-v5e", "4x4x4"), doctest::Contains("3 axes"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(make_slice("tpu-v5e", "32x16"), doctest::Contains("exceeds"), std::invalid_argument);
  CHECK_THROWS_AS(make_slice("h100", "4x4"), std::invalid_argument);
}

TEST_CASE("collective cost model: hand-worked cases and the book's identities") {
  const Link v5e = ici_link(chip("tpu-v5e"));
  // AllReduce = 2 × AllGather, both terms
  const std::vector<Axis> ring16{{16, true}};
  const auto ag = collective_cost(Collective::all_gather, ring16, 1e8, v5e);
  const auto ar = collective_cost(Collective::all_reduce, ring16, 1e8, v5e);
  CHECK(ar.t_bandwidth_s == Approx(2 * ag.t_bandwidth_s));
  CHECK(ar.t_latency_s == Approx(2 * ag.t_latency_s));
  CHECK(ag.t_bandwidth_s == Approx(15.0 / 16 * 1e8 / 9e10));
  CHECK(ag.hops == 8);
  // AllToAll tends to AllGather / 4 on a wrapped ring as n grows; exactly n²/4 / (n(n−1)) of it when even
  const std::vector<Axis> big{{64, true}};
  const double ratio = collective_cost(Collective::all_to_all, big, 1e8, v5e).t_bandwidth_s /
                       collective_cost(Collective::all_gather, big, 1e8, v5e).t_bandwidth_s;
  CHECK(ratio == Approx(64.0 / (4 * 63)));
  // open axis: n − 1 hops, one-way bandwidth
  const auto open = collective_cost(Collective::all_gather, {{4, false}}, 1e6, v5e);
  CHECK(open.hops == 3);
  CHECK(open.t_bandwidth_s == Approx(0.75 * 1e6 / 4.5e10));
  // tiny arrays are latency-bound
  CHECK(collective_cost(Collective::all_gather, {{4, true}}, 256, v5e).latency_bound);
  CHECK_THROWS_AS(collective_cost(Collective::all_gather, {}, 1e6, v5e), std::invalid_argument);
  CHECK_THROWS_AS(collective_cost(Collective::all_gather, ring16, -1, v5e), std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_collective("all-scatter"), doctest::Contains("all-scatter"), std::invalid_argument);
}

TEST_CASE("sharding notation: parse, evaluate, round trip") {
  const Mesh mesh = parse_mesh("X=2,Y=8,Z=2");
  CHECK(mesh.devices() == 32);
  const auto s = parse_sharding("A[I_XY, J]", mesh);
  CHECK(s.dims[0].axes == std::vector<std::string>{"X", "Y"});
  const auto a = evaluate(s, mesh, {128, 2048}, Dtype::int8);
  CHECK(a.local_shape == std::vector<double>{8, 2048});
  CHECK(a.bytes_per_device == 16384);
  CHECK(a.total_bytes == 524288);
  CHECK(a.replication == 2);
  for (const std::string text : {"A[I_XY, J]", "C[I, K]{U_X}", "[B_X, D_Y]", "W[D_Z, F_XY]{U_}"}) {
    if (text.find("{U_}") != std::string::npos) {
      CHECK_THROWS_AS(parse_sharding(text, mesh), std::invalid_argument);
      continue;
    }
    CHECK(to_string(parse_sharding(text, mesh)) == text);
  }
  // multi-letter axis names split longest first
  const Mesh named = parse_mesh("data=4,model=2");
  CHECK(parse_sharding("A[B_data, D_model]", named).dims[1].axes == std::vector<std::string>{"model"});
}

TEST_CASE("sharding notation: every rejection names the problem") {
  const Mesh mesh = parse_mesh("X=2,Y=8,Z=2");
  CHECK_THROWS_WITH_AS(parse_sharding("A[I_X, J_X]", mesh), doctest::Contains("mesh axis X used twice"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_sharding("A[I_X]{U_X}", mesh), doctest::Contains("used twice"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_sharding("A[I_W, J]", mesh), doctest::Contains("unknown mesh axis"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_sharding("A(I, J)", mesh), doctest::Contains("expected"), std::invalid_argument);
  CHECK_THROWS_AS(parse_sharding("A[I_X, ]", mesh), std::invalid_argument);
  CHECK_THROWS_AS(parse_sharding("A[I_X, J] junk", mesh), std::invalid_argument);
  CHECK_THROWS_AS(parse_sharding("A[I, I]", mesh), std::invalid_argument);
  CHECK_THROWS_WITH_AS(evaluate(parse_sharding("A[I_Y, J]", mesh), mesh, {12, 4}, Dtype::bf16),
                       doctest::Contains("not divisible by its 8 shards"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(evaluate(parse_sharding("A[I, J]", mesh), mesh, {12}, Dtype::bf16), doctest::Contains("dimensions"),
                       std::invalid_argument);
  CHECK_THROWS_AS(parse_mesh("X=2,Y"), std::invalid_argument);
  CHECK_THROWS_AS(parse_mesh("X=0"), std::invalid_argument);
  CHECK_THROWS_AS(parse_mesh("X=2,X=4"), std::invalid_argument);
}

TEST_CASE("matmul planner: the four cases of §3.2") {
  const Mesh mesh = parse_mesh("X=4,Y=2");
  const std::map<std::string, double> sizes{{"I", 64}, {"J", 128}, {"K", 256}};
  auto plan = [&](const char* a, const char* b, const std::string& rs = "") {
    return plan_matmul(parse_sharding(a, mesh), parse_sharding(b, mesh), mesh, sizes, Dtype::bf16, rs);
  };
  const auto c1 = plan("A[I_X, J]", "B[J, K_Y]");
  CHECK(c1.case_number == 1);
  CHECK(c1.steps.empty());
  CHECK(to_string(c1.result) == "C[I_X, K_Y]");
  CHECK(c1.flops_per_device == 2.0 * 16 * 128 * 128);

  const auto c2 = plan("A[I, J_X]", "B[J, K]");
  CHECK(c2.case_number == 2);
  REQUIRE(c2.steps.size() == 1);
  CHECK(c2.steps[0].op == Collective::all_gather);
  CHECK(c2.steps[0].operand == "A");
  CHECK(c2.steps[0].bytes == 64 * 128 * 2);  // the gathered A on one device
  CHECK(to_string(c2.result) == "C[I, K]");

  const auto c3 = plan("A[I, J_X]", "B[J_X, K]");
  CHECK(c3.case_number == 3);
  REQUIRE(c3.steps.size() == 1);
  CHECK(c3.steps[0].op == Collective::all_reduce);
  CHECK(c3.steps[0].before == "C[I, K]{U_X}");
  CHECK(c3.steps[0].bytes == 64 * 256 * 2);
  const auto c3rs = plan("A[I, J_X]", "B[J_X, K]", "K");
  CHECK(c3rs.steps[0].op == Collective::reduce_scatter);
  CHECK(to_string(c3rs.result) == "C[I, K_X]");

  const auto c4 = plan("A[I_X, J]", "B[J, K_X]");
  CHECK(c4.case_number == 4);
  REQUIRE(c4.steps.size() == 1);
  CHECK(c4.steps[0].operand == "A");  // gathering A (64×128) is cheaper than B (128×256)
  CHECK(to_string(c4.result) == "C[I, K_X]");

  CHECK_THROWS_AS(plan("A[I, J]", "B[K, L]"), std::invalid_argument);
  CHECK_THROWS_AS(plan("A[I, J_X]", "B[J_X, K]", "Q"), std::invalid_argument);
}
