// The `scaling` CLI, run as a user would: values against hand-computed ones, and bad input.
#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <sstream>
#include <nlohmann/json.hpp>

#include "cli_run.hpp"

using namespace testing;

namespace {
nlohmann::json matmul_json(const std::string& args) {
  const auto r = run("matmul " + args + " --json");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  return nlohmann::json::parse(r.out);
}
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
  CHECK(names == std::vector<std::string>{"tpu-v3", "tpu-v4p", "tpu-v5p", "tpu-v5e", "tpu-v6e", "a100", "h100", "h200", "b200"});
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
      {"matmul --chip a100 --B 1 --D 1 --F 1 --compute-dtype fp8", "fp8"},
  };
  expect_rejected(cases);
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

TEST_CASE("a usage error points at the subcommand's help, or the program's without one") {
  CHECK(run("plan --model llama3-8b --chip h100 --batch-tokens 1M").err.find("(see scaling plan --help)") !=
        std::string::npos);
  CHECK(run("--bogus").err.find("(see scaling --help)") != std::string::npos);
}

TEST_CASE("an option given twice is named, in the project's wording, exit 2") {
  // CLI11 said "--tp: At Most 1 required but received 2" (it counts values); the user typed --tp twice.
  const std::string plan = "plan --model llama3-8b --chip h100 --nodes 2 --batch-tokens 1M";
  for (const auto& [args, message] : std::vector<std::pair<std::string, std::string>>{
           {plan + " --tp 2 --tp 4", "scaling: --tp given twice: give it once (see scaling plan --help)\n"},
           {plan + " --tp=2 --tp 2", "scaling: --tp given twice: give it once (see scaling plan --help)\n"},
           {"train --model llama3-8b --model llama3-8b --chip h100 --nodes 1 --batch-tokens 1M",
            "scaling: --model given twice: give it once (see scaling train --help)\n"},
           {"matmul --chip tpu-v5e --B 1 --B 2 --B 3 --D 8 --F 8",
            "scaling: --B given 3 times: give it once (see scaling matmul --help)\n"},
           // An option of two values (dot's --shapes) given twice: named by its occurrences, not its values.
           {"dot 'bf,fd->db' --shapes 128,256 256,16 --shapes 1,2 2,3 --dtypes f32 bf16",
            "scaling: --shapes given twice: give it once (see scaling dot --help)\n"}}) {
    INFO(args);
    const auto r = run(args);
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(r.err == message);
  }
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
      if (a.contains("book")) CHECK((a["book"]["status"] == "agrees" || a["book"]["status"] == "approximation" ||
                                        a["book"]["status"] == "erratum"));
    }
  const auto bad = run_program(CHAPTER_1_PROGRAM, "--bogus");
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("--bogus") != std::string::npos);
}

TEST_CASE("scaling collective: exact costs by hand") {
  auto json = [](const std::string& args) {
    const auto r = run("collective " + args + " --json");
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    return nlohmann::json::parse(r.out);
  };
  // v4p 4x4x4 wraps: AllGather of 2 MiB over one axis of 4 = 3/4 · V / 9e10, 2 hops
  const auto a = json("--chip tpu-v4p --slice 4x4x4 --op all-gather --axes 0 --bytes 2097152");
  CHECK(a.size() == 5);
  CHECK(a["t_bandwidth_s"].get<double>() == Approx(0.75 * 2097152 / 9e10));
  CHECK(a["hops"] == 2);
  CHECK(a["t_latency_s"].get<double>() == Approx(2e-6));
  CHECK(a["latency_bound"] == false);
  CHECK(a["t_s"].get<double>() == Approx(0.75 * 2097152 / 9e10));
  // v5e 4x4 does not wrap: one-way bandwidth, 3 hops; tiny arrays are latency-bound
  const auto b = json("--chip tpu-v5e --slice 4x4 --op all-reduce --axes 1 --bytes 1024");
  CHECK(b["hops"] == 6);
  CHECK(b["latency_bound"] == true);
  CHECK(b["t_s"].get<double>() == Approx(6e-6));
  // forcing wraparound on: bidirectional bandwidth, 2 hops
  const auto c = json("--chip tpu-v5e --slice 4x4 --op all-gather --axes 1 --bytes 1e9 --wrap yes");
  CHECK(c["t_bandwidth_s"].get<double>() == Approx(0.75 * 1e9 / 9e10));
  // AllToAll on a wrapped 16-ring: ⌊16²/4⌋ · V / (16² · W_bidir)
  const auto d = json("--chip tpu-v5e --slice 16x16 --op all-to-all --axes 0 --bytes 1e9");
  CHECK(d["t_bandwidth_s"].get<double>() == Approx(64.0 * 1e9 / (256 * 9e10)));
}

TEST_CASE("scaling simulate and scaling shard") {
  const auto s = run("simulate --op all-gather --devices 8 --direction uni --elements 64 --json");
  REQUIRE(s.exit_code == 0);
  const auto j = nlohmann::json::parse(s.out);
  CHECK(j.size() == 4);
  CHECK(j["correct"] == true);
  CHECK(j["steps"] == 7);
  CHECK(j["max_link_elements"].get<double>() == 56);   // 7 shards of 8
  CHECK(j["total_link_elements"].get<double>() == 8 * 56);
  const auto big = nlohmann::json::parse(run("simulate --op all-reduce --devices 1000 --direction bi --elements 1e9 "
                                             "--count-only --json").out);
  CHECK(big["correct"].is_null());
  CHECK(big["steps"] == 1000);

  const auto sh = run("shard --mesh X=2,Y=8,Z=2 --dtype int8 'A[I_XY, J]' --shape 128,2048 --json");
  REQUIRE(sh.exit_code == 0);
  const auto k = nlohmann::json::parse(sh.out);
  CHECK(k["local_shape"] == nlohmann::json::array({8.0, 2048.0}));
  CHECK(k["bytes_per_device"].get<double>() == 16384);
  CHECK(k["total_bytes"].get<double>() == 524288);
  CHECK(k["replication"].get<double>() == 2);
}

TEST_CASE("collective, simulate and shard reject bad input with one line, exit 1") {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"collective --chip tpu-v5e --slice 4x4 --op all-gather --axes 2 --bytes 100", "axis 2"},
      {"collective --chip h100 --nodes 2 --op all-reduce --bytes 1e9 --ici-bw 1e9", "--ici-bw '1e9': the NVIDIA H100 is a GPU"},
      {"collective --chip tpu-v5e --slice 4x4 --op all-scatter --axes 0 --bytes 100", "all-scatter"},
      {"collective --chip tpu-v5e --slice 4x0 --op all-gather --axes 0 --bytes 100", "4x0"},
      {"collective --chip tpu-v5e --slice 4x4 --op all-gather --axes 0 --bytes -5", "--bytes '-5'"},
      {"collective --chip tpu-v5e --slice 4x4 --op all-gather --axes 0 --bytes 100 --wrap maybe", "maybe"},
      {"collective --chip h100 --slice 4x4 --op all-gather --axes 0 --bytes 100", "the NVIDIA H100 has no ICI slices"},
      {"simulate --op all-to-all --devices 8 --direction bi --elements 100", "multiple of 64"},
      {"simulate --op all-gather --devices 0 --direction bi --elements 8", "--devices '0'"},
      {"simulate --op all-gather --devices 8 --direction up --elements 8", "up"},
      {"shard --mesh X=2,Y=8 'A[I_X, J_X]' --shape 4,4", "used twice"},
      {"shard --mesh X=2,Y=8 'A[I_W, J]' --shape 4,4", "unknown mesh axis"},
      {"shard --mesh X=2,Y=8 'A[I_Y, J]' --shape 4,4", "not divisible"},
      {"shard --mesh X=2,Y=8 'A[I_X, J' --shape 4,4", "expected"},
      {"shard --mesh X=2,Y=8 'A[I_X, J]' --shape 4,x", "--shape 'x'"},
      {"shard --mesh X=two 'A[I_X, J]' --shape 4,4", "X"},
  };
  expect_rejected(cases);
  CHECK(run("collective --chip tpu-v5e --slice 4x4 --op all-gather --bytes 100").exit_code == 2);  // no --axes
  CHECK(run("shard --mesh X=2 --shape 4").exit_code == 2);                                          // no sharding
}

TEST_CASE("scaling models and scaling params") {
  const auto m = run("models --json");
  REQUIRE(m.exit_code == 0);
  CHECK(nlohmann::json::parse(m.out).size() >= 8);
  const auto p = run("params --config '" + std::string(TEST_DATA_DIR) + "/llama-3-8b.json' --json");
  REQUIRE_MESSAGE(p.exit_code == 0, p.err);
  const auto j = nlohmann::json::parse(p.out);
  CHECK(j.size() == 7);
  CHECK(j["total_params"].get<double>() == 8030261248.0);
  CHECK(j["active_params"].get<double>() == 8030261248.0);
  CHECK(j["embedding_params"].get<double>() == 2.0 * 128256 * 4096);
  CHECK(j["attention_params"].get<double>() == 32.0 * (2 * 4096 * 4096 + 2 * 4096 * 1024));
  CHECK(j["mlp_params"].get<double>() == 32.0 * 3 * 4096 * 14336);
  CHECK(j["norm_params"].get<double>() == 65.0 * 4096);
  CHECK(j["kv_bytes_per_token"].get<double>() == 2.0 * 32 * 8 * 128 * 2);
  // GPT-2 small (KerasNLP's preset count, tests/data/README.md): the vocabulary row holds wte and the learned
  // wpe (tied: no second matrix); biases and LayerNorm biases are in their components.
  const auto g = run("params --config '" + std::string(TEST_DATA_DIR) + "/gpt2.json' --json");
  REQUIRE_MESSAGE(g.exit_code == 0, g.err);
  const auto gj = nlohmann::json::parse(g.out);
  CHECK(gj["total_params"].get<double>() == 124439808.0);
  CHECK(gj["embedding_params"].get<double>() == (50257.0 + 1024) * 768);
  CHECK(gj["norm_params"].get<double>() == (2.0 * 12 + 1) * 2 * 768);
  CHECK(gj["kv_bytes_per_token"].get<double>() == 2.0 * 12 * 768 * 2);
  const auto mix = nlohmann::json::parse(run("params --model mixtral-8x7b --kv-dtype int8 --json").out);
  CHECK(mix["active_params"].get<double>() == 12879925248.0);
  CHECK(mix["kv_bytes_per_token"].get<double>() == 2.0 * 32 * 8 * 128);
  CHECK(run("params --model gpt-9").exit_code == 1);
  CHECK(run("params --config /nonexistent.json").exit_code == 1);
  CHECK(run("params --model llama3-8b --kv-dtype int3").exit_code == 1);
  CHECK(run("params").exit_code == 2);
  CHECK(run("params --model llama3-8b --config x.json").exit_code == 2);
}

TEST_CASE("README: every scaling example line runs with exit 0, well inside the fuzzer timeout") {
  // The examples a reader copies (and fuzz/make-seeds turns into seeds): none may fail or drift into a
  // refusal (issue 16 review: a train example's --dp 512 no longer matched its 512 GPUs with --tp 8).
  const auto readme = slurp(std::filesystem::path(TEST_SOURCE_DIR) / ".." / "README.md");
  std::istringstream lines_in(readme);
  std::string line;
  int examples = 0;
  const std::string prefix = "build/cli/scaling ";
  while (std::getline(lines_in, line)) {
    if (line.rfind(prefix, 0) != 0) continue;
    std::string args = line.substr(prefix.size());
    // A trailing "# comment" is the README's, not the command's (no example quotes a '#').
    if (const auto hash = args.find("   #"); hash != std::string::npos) args.resize(hash);
    if (const auto hash = args.find("  #"); hash != std::string::npos) args.resize(hash);
    const std::string data_dir = std::string(TEST_DATA_DIR) + "/";
    for (size_t at = 0; (at = args.find("tests/data/", at)) != std::string::npos; at += data_dir.size())
      args.replace(at, 11, data_dir);
    CAPTURE(args);
    const auto start = std::chrono::steady_clock::now();
    const auto r = run(args);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CHECK_MESSAGE(r.exit_code == 0, r.err);
    CHECK(seconds < 5.0);  // each takes well under a second on idle cores
    ++examples;
  }
  CHECK(examples >= 19);
}
