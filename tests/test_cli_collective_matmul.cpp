// `scaling collective-matmul`, run as a user would: the §10 example's times against hand-computed ones,
// --verify on every kind and direction, sizes far beyond memory without --verify, and every rejection.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_run.hpp"

using doctest::Approx;


namespace {
nlohmann::json cm_json(const std::string& args) {
  const auto r = testing::run("collective-matmul " + args + " --json");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  return nlohmann::json::parse(r.out);
}
}  // namespace

TEST_CASE("scaling collective-matmul: the §10 example on a v5e 2x4, by hand") {
  const auto j = cm_json("--kind all-gather --chip tpu-v5e --mesh X=2,Y=4 --B 1024 --D 2048 --F 8192");
  for (const char* k : {"steps", "y_wraps", "step_compute_s", "step_comm_s", "overlapped_s", "blocking_s",
                        "blocking_comm_s", "ideal_s", "timeline"})
    CHECK_MESSAGE(j.contains(k), k);
  CHECK(!j.contains("correct"));  // nothing computed without --verify
  CHECK(j["steps"] == 4);
  CHECK(j["y_wraps"] == false);  // a v5e wraps an axis only at 16 chips
  // Per device: A chunk [512, 512], W [2048, 2048] of which [512, 2048] per step, Out [512, 2048]; bf16.
  const double comm = 512.0 * 512 * 2 / 4.5e10;                          // one chunk on the busiest link
  const double ideal = 2.0 * 512 * 2048 * 2048 / 1.97e14;                // compute-bound
  const double gather = 0.75 * 512 * 2048 * 2 / 4.5e10;                  // open ring: one direction
  const double later = (512.0 * 512 + 512.0 * 2048 + 2 * 512.0 * 2048) * 2 / 8.1e11;  // memory-bound chunk
  const double first = std::max(2.0 * 512 * 512 * 2048 / 1.97e14, (512.0 * 512 + 2 * 512.0 * 2048) * 2 / 8.1e11);
  CHECK(j["step_comm_s"].get<double>() == Approx(comm));
  CHECK(j["step_compute_s"].get<double>() == Approx(later));
  CHECK(j["ideal_s"].get<double>() == Approx(ideal));
  CHECK(j["blocking_comm_s"].get<double>() == Approx(gather));
  CHECK(j["blocking_s"].get<double>() == Approx(ideal + gather));
  CHECK(j["overlapped_s"].get<double>() == Approx(std::max(first, comm) + 2 * std::max(later, comm) + later));
  const auto& tl = j["timeline"];
  REQUIRE(tl.size() == 4);
  CHECK(tl[0]["start_s"].get<double>() == 0);
  CHECK(tl[1]["start_s"].get<double>() == Approx(std::max(first, comm)));
  CHECK(tl[3]["comm_s"].get<double>() == 0);
  CHECK(tl[0]["compute_s"].get<double>() == Approx(first));
  // Without wraparound, bidirectional changes nothing; with it, the ppermute halves.
  const auto bi = cm_json("--kind all-gather --chip tpu-v5e --mesh X=2,Y=4 --B 1024 --D 2048 --F 8192 --direction bi");
  CHECK(bi["overlapped_s"].get<double>() == Approx(j["overlapped_s"].get<double>()));
  const auto wrapped = cm_json("--kind all-gather --chip tpu-v5e --mesh X=2,Y=4 --B 1024 --D 2048 --F 8192 "
                               "--direction bi --wrap yes");
  CHECK(wrapped["y_wraps"] == true);
  CHECK(wrapped["step_comm_s"].get<double>() == Approx(comm / 2));
  CHECK(wrapped["blocking_comm_s"].get<double>() == Approx(gather / 2));  // both directions
  // Y in first place, and automatic wraparound on the pod side of 16.
  CHECK(cm_json("--kind all-gather --chip tpu-v5e --mesh Y=4,X=2 --B 1024 --D 2048 --F 8192")["overlapped_s"]
            .get<double>() == Approx(j["overlapped_s"].get<double>()));
  CHECK(cm_json("--kind reduce-scatter --chip tpu-v5e --mesh X=1,Y=16 --B 64 --D 64 --F 64")["y_wraps"] == true);
}

TEST_CASE("scaling collective-matmul --verify: every kind and direction equals the plain matmul") {
  for (const std::string kind : {"all-gather", "reduce-scatter", "all-reduce", "ffn"})
    for (const std::string dir : {"uni", "bi"})
      for (const std::string wrap : {"no", "yes"}) {
        INFO(kind << " " << dir << " wrap " << wrap);
        const auto j = cm_json("--kind " + kind + " --chip tpu-v5e --mesh X=2,Y=4 --B 8 --D 24 --F 12 --direction " + dir +
                               " --wrap " + wrap + " --verify");
        CHECK(j["correct"] == true);
      }
  // A 3D chip: the mesh becomes a slice X×Y×1 (no wraparound: not whole 4x4x4 cubes).
  const auto p = cm_json("--kind ffn --chip tpu-v5p --mesh X=2,Y=4 --B 8 --D 16 --F 16 --verify");
  CHECK(p["correct"] == true);
  CHECK(p["y_wraps"] == false);
  CHECK(p["steps"] == 8);
  // The readable table.
  const auto text = testing::run("collective-matmul --kind all-reduce --chip tpu-v5e --mesh X=2,Y=2 --B 4 --D 4 --F 4 --verify");
  CHECK(text.exit_code == 0);
  CHECK(text.out.find("equals the plain matmul") != std::string::npos);
}

TEST_CASE("scaling collective-matmul counts far beyond memory without --verify") {
  // A 1e9 × 1e9 matmul would need exabytes: only shapes move.
  const auto j = cm_json("--kind ffn --chip tpu-v5e --mesh X=16,Y=16 --B 1e9 --D 1e9 --F 1e9");
  CHECK(j["steps"] == 32);
  for (const char* k : {"overlapped_s", "blocking_s", "ideal_s"}) CHECK(std::isfinite(j[k].get<double>()));
  CHECK(j["overlapped_s"].get<double>() > 0);
}

TEST_CASE("scaling collective-matmul rejects bad values with one line naming them, exit 1") {
  const std::string ok = " --chip tpu-v5e --mesh X=2,Y=4 --B 8 --D 8 --F 8";
  testing::expect_rejected({
      {"collective-matmul --kind all-scatter" + ok, "--kind 'all-scatter': expected all-gather, reduce-scatter, all-reduce or ffn"},
      {"collective-matmul --kind ffn --chip tpu-v9 --mesh X=2,Y=4 --B 8 --D 8 --F 8", "unknown chip 'tpu-v9'"},
      {"collective-matmul --kind ffn --chip h100 --mesh X=2,Y=4 --B 8 --D 8 --F 8", "--mesh 'X=2,Y=4': the NVIDIA H100 has no ICI slices"},
      {"collective-matmul --kind ffn --chip tpu-v5e --mesh X=2,Z=4 --B 8 --D 8 --F 8", "--mesh 'X=2,Z=4'"},
      {"collective-matmul --kind ffn --chip tpu-v5e --mesh X=8 --B 8 --D 8 --F 8", "--mesh 'X=8'"},
      {"collective-matmul --kind ffn --chip tpu-v5e --mesh X=2,Y=4,Z=2 --B 8 --D 8 --F 8", "--mesh 'X=2,Y=4,Z=2'"},
      {"collective-matmul --kind ffn --chip tpu-v5e --mesh X=two,Y=4 --B 8 --D 8 --F 8", "--mesh"},
      {"collective-matmul --kind ffn --chip tpu-v5e --mesh X=32,Y=4 --B 32 --D 8 --F 8", "--mesh 'X=32,Y=4'"},
      {"collective-matmul --kind ffn --chip tpu-v5e --mesh X=2,Y=4 --B 5 --D 8 --F 8", "--B: B = 5 is not divisible by |X| = 2"},
      {"collective-matmul --kind all-gather --chip tpu-v5e --mesh X=2,Y=4 --B 8 --D 6 --F 8", "--D: D = 6 is not divisible by |Y| = 4"},
      {"collective-matmul --kind reduce-scatter --chip tpu-v5e --mesh X=2,Y=4 --B 8 --D 8 --F 10", "--F: F = 10"},
      {"collective-matmul --kind all-reduce --chip tpu-v5e --mesh X=2,Y=4 --B 8 --D 8 --F 2", "--F: F = 2"},
      {"collective-matmul --kind ffn --chip tpu-v5e --mesh X=2,Y=4 --B 0 --D 8 --F 8", "--B '0'"},
      {"collective-matmul --kind ffn --chip tpu-v5e --mesh X=2,Y=4 --B 8 --D 8.5 --F 8", "--D '8.5'"},
      {"collective-matmul --kind ffn --chip tpu-v5e --mesh X=2,Y=4 --B 8 --D 8 --F inf", "--F 'inf'"},
      {"collective-matmul --kind ffn --chip tpu-v5e --mesh X=2,Y=4 --B 2e13 --D 8 --F 8", "--B '2e13': must be at most 1,099,511,627,776"},
      {"collective-matmul --kind ffn" + ok + " --direction up", "--direction 'up': expected uni or bi"},
      {"collective-matmul --kind ffn" + ok + " --wrap maybe", "--wrap 'maybe'"},
      {"collective-matmul --kind all-gather --chip tpu-v5e --mesh X=2,Y=4 --B 1024 --D 2048 --F 8192 --verify",
       "--verify: too large"},
  });
}

TEST_CASE("scaling collective-matmul usage errors exit 2") {
  for (const std::string args : {"collective-matmul --chip tpu-v5e --mesh X=2,Y=4 --B 8 --D 8 --F 8",
                                 "collective-matmul --kind ffn --chip tpu-v5e --mesh X=2,Y=4 --B 8 --D 8",
                                 "collective-matmul --kind ffn --chip tpu-v5e --mesh X=2,Y=4 --B 8 --D 8 --F 8 --tiles 3"}) {
    INFO(args);
    const auto r = testing::run(args);
    CHECK(r.exit_code == 2);
    CHECK(testing::lines(r.err) == 1);
  }
}
