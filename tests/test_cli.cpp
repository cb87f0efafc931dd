// The `scaling` CLI, run as a user would: values against hand-computed ones, and bad input.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <sys/wait.h>

namespace {

struct Run {
  int exit_code;
  std::string out, err;
};

std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

Run run_program(const std::string& program, const std::string& args) {
  static int counter = 0;
  const auto dir = std::filesystem::temp_directory_path();
  const auto tag = std::to_string(::getpid()) + "_" + std::to_string(counter++);
  const auto out = dir / ("scaling_cli_out_" + tag), err = dir / ("scaling_cli_err_" + tag);
  const std::string cmd = "'" + program + "' " + args + " >'" + out.string() + "' 2>'" + err.string() + "'";
  const int status = std::system(cmd.c_str());
  Run r{WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
  std::filesystem::remove(out);
  std::filesystem::remove(err);
  return r;
}

Run run(const std::string& args) { return run_program(SCALING_CLI, args); }

nlohmann::json matmul_json(const std::string& args) {
  const auto r = run("matmul " + args + " --json");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  return nlohmann::json::parse(r.out);
}

int lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

}  // namespace

using doctest::Approx;

TEST_CASE("scaling matmul: bf16 on v5e, by hand") {
  const auto j = matmul_json("--chip tpu-v5e --B 256 --D 8192 --F 8192");
  const std::vector<std::string> keys{"flops", "bytes", "intensity", "chip_intensity", "t_math_s", "t_comms_s",
                                      "t_lower_s", "t_upper_s", "bound", "critical_batch"};
  CHECK(j.size() == keys.size());
  for (const auto& k : keys) CHECK_MESSAGE(j.contains(k), k);
  const double flops = 2.0 * 256 * 8192 * 8192;                        // 3.436e10
  const double bytes = 2.0 * 256 * 8192 + 2.0 * 8192 * 8192 + 2.0 * 256 * 8192;  // 142,606,336
  CHECK(j["flops"].get<double>() == flops);
  CHECK(j["bytes"].get<double>() == bytes);
  CHECK(j["intensity"].get<double>() == Approx(flops / bytes));
  CHECK(j["chip_intensity"].get<double>() == Approx(1.97e14 / 8.1e11));
  CHECK(j["t_math_s"].get<double>() == Approx(flops / 1.97e14));
  CHECK(j["t_comms_s"].get<double>() == Approx(bytes / 8.1e11));
  CHECK(j["t_lower_s"].get<double>() == Approx(bytes / 8.1e11));  // 240.9 < 243.2: memory-bound
  CHECK(j["t_upper_s"].get<double>() == Approx(flops / 1.97e14 + bytes / 8.1e11));
  CHECK(j["bound"] == "memory");
  // B* = I·D·F / (D·F − I·(D + F)) for all-bf16, I = 1.97e14 / 8.1e11
  const double i = 1.97e14 / 8.1e11;
  CHECK(j["critical_batch"].get<double>() == Approx(i * 8192 * 8192 / (8192.0 * 8192 - i * (8192 + 8192))));
}

TEST_CASE("scaling matmul: int8 compute on v6e picks the int8 peak") {
  const auto j = matmul_json("--chip tpu-v6e --B 4096 --D 4096 --F 16384 --lhs-dtype int8 --rhs-dtype int8 "
                             "--out-dtype int8 --compute-dtype int8");
  const double flops = 2.0 * 4096 * 4096 * 16384, bytes = 4096.0 * 4096 + 4096.0 * 16384 + 4096.0 * 16384;
  CHECK(j["t_math_s"].get<double>() == Approx(flops / 1.84e15));
  CHECK(j["t_comms_s"].get<double>() == Approx(bytes / 1.6e12));
  CHECK(j["chip_intensity"].get<double>() == Approx(1.84e15 / 1.6e12));
  CHECK(j["bound"] == "compute");
}

TEST_CASE("scaling matmul: mixed dtypes on H100") {
  // bf16 activations, int4 weights, fp32 output
  const auto j = matmul_json("--chip h100 --B 64 --D 8192 --F 28672 --rhs-dtype int4 --out-dtype fp32");
  const double bytes = 2.0 * 64 * 8192 + 0.5 * 8192 * 28672 + 4.0 * 64 * 28672;
  CHECK(j["bytes"].get<double>() == bytes);
  CHECK(j["t_math_s"].get<double>() == Approx(2.0 * 64 * 8192 * 28672 / 9.89e14));
  CHECK(j["t_comms_s"].get<double>() == Approx(bytes / 3.35e12));
  CHECK(j["bound"] == "memory");
}

TEST_CASE("scaling matmul: no critical batch when D and F are too small") {
  const auto j = matmul_json("--chip tpu-v5e --B 64 --D 128 --F 128");
  CHECK(j["critical_batch"].is_null());
}

TEST_CASE("scaling chips lists every preset") {
  const auto r = run("chips --json");
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  std::vector<std::string> names;
  for (const auto& c : j) names.push_back(c["name"]);
  CHECK(names == std::vector<std::string>{"tpu-v3", "tpu-v4p", "tpu-v5p", "tpu-v5e", "tpu-v6e", "h100"});
  CHECK(run("chips").exit_code == 0);
}

TEST_CASE("scaling rejects bad values with one line naming them, exit 1") {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"matmul --chip tpu-v9 --B 1 --D 1 --F 1", "tpu-v9"},
      {"matmul --chip tpu-v5e --B 0 --D 1 --F 1", "--B '0'"},
      {"matmul --chip tpu-v5e --B -4 --D 1 --F 1", "--B '-4'"},
      {"matmul --chip tpu-v5e --B 1 --D abc --F 1", "--D 'abc'"},
      {"matmul --chip tpu-v5e --B 1 --D 1 --F 2.5", "--F '2.5'"},
      {"matmul --chip tpu-v5e --B 1 --D 1 --F nan", "--F 'nan'"},
      {"matmul --chip tpu-v5e --B 1 --D 1 --F 1 --lhs-dtype bf32", "bf32"},
      {"matmul --chip h100 --B 1 --D 1 --F 1 --compute-dtype int8", "int8"},
  };
  for (const auto& [args, named] : cases) {
    INFO(args);
    const auto r = run(args);
    CHECK(r.exit_code == 1);
    CHECK(lines(r.err) == 1);
    CHECK(r.err.find(named) != std::string::npos);
    CHECK(r.out.empty());
  }
}

TEST_CASE("scaling usage errors exit 2") {
  for (const std::string args : {"", "matmul --B 1 --D 1 --F 1", "matmul --chip tpu-v5e --B 1 --D 1 --F 1 --bogus",
                                 "frobnicate"}) {
    INFO(args);
    const auto r = run(args);
    CHECK(r.exit_code == 2);
    CHECK(lines(r.err) == 1);
  }
  CHECK(run("--help").exit_code == 0);
}

TEST_CASE("a chapter program: walkthrough, --json, and usage errors") {
  const auto text = run_program(CHAPTER_1_PROGRAM, "");
  CHECK(text.exit_code == 0);
  CHECK(text.out.find("ex1.5") != std::string::npos);
  const auto json = run_program(CHAPTER_1_PROGRAM, "--json");
  REQUIRE(json.exit_code == 0);
  const auto doc = nlohmann::json::parse(json.out);
  CHECK(doc["chapter"] == 1);
  CHECK(doc["slug"] == "ch01");
  for (const auto& ex : doc["exercises"])
    for (const auto& a : ex["answers"]) {
      CHECK(a.contains("key"));
      CHECK(a["value"].is_number());
      CHECK(a.contains("unit"));
      CHECK(a["notes"].is_array());
      if (a.contains("book")) CHECK((a["book"]["status"] == "agrees" || a["book"]["status"] == "erratum"));
    }
  const auto bad = run_program(CHAPTER_1_PROGRAM, "--bogus");
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("--bogus") != std::string::npos);
}
