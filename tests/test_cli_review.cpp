// The outside review of the `scaling` CLI (issue 17): each finding as a command line that failed before
// the fix. Values are checked against the model's own formula or against the preset, never against the
// code path that prints them.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <tuple>
#include <nlohmann/json.hpp>

#include "cli_run.hpp"

using namespace testing;

namespace {
nlohmann::json json_of(const std::string& args) {
  const auto r = run(args + " --json");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  return nlohmann::json::parse(r.out);
}

// The h100 preset as `scaling chips --json` prints it, written back under another name.
std::filesystem::path renamed_h100() {
  const auto chips = json_of("chips");
  const auto& list = chips.is_array() ? chips : chips["chips"];
  nlohmann::json entry;
  for (const auto& c : list)
    if (c["name"] == "h100") entry = c;
  REQUIRE(!entry.is_null());
  entry["name"] = "my-h100";
  const auto path = std::filesystem::temp_directory_path() / ("review_my_h100_" + std::to_string(::getpid()) + ".json");
  std::ofstream(path) << entry.dump();
  return path;
}
}  // namespace

TEST_CASE("review 1: a renamed preset says that its measured rates are not found") {
  const auto file = renamed_h100();
  const std::string machine = " --model llama3-8b --nodes 2 --batch-tokens 1048576";
  for (const std::string sub : {"train", "plan"}) {
    INFO(sub);
    const auto mine = json_of(sub + machine + " --chip-file " + file.string());
    const auto preset = json_of(sub + machine + " --chip h100");
    // The renamed copy times a different (faster) step: the reason is said, in JSON and text.
    REQUIRE(mine.contains("calibration"));
    CHECK(mine["calibration"]["chip"] == "my-h100");
    CHECK(mine["calibration"]["measured"] == false);
    CHECK(preset["calibration"]["measured"] == true);
    CHECK(preset["calibration"]["matmuls"].get<std::string>().find("validation/gemm/h100.json") != std::string::npos);
    const auto text = run(sub + machine + " --chip-file " + file.string());
    CHECK(text.out.find("note: no calibration for 'my-h100'") != std::string::npos);
    CHECK(mine["calibration"]["preset"] == false);
    CHECK(preset["calibration"]["preset"] == true);
    // A preset without a measured GEMM table (the A100: Calculon's published table) is not told it has none.
    const auto a100 = run(sub + machine + " --chip a100");
    CHECK(a100.out.find("note: calibrated rates: matmuls from") != std::string::npos);
    CHECK(a100.out.find("no calibration") == std::string::npos);
    // The ideal model reads no measured table: no calibration block.
    CHECK_FALSE(json_of(sub + machine + " --chip h100 --cost-model ideal").contains("calibration"));
  }
  const auto step_mine = json_of("train --model llama3-8b --nodes 2 --batch-tokens 1048576 --chip-file " + file.string());
  const auto step_h100 = json_of("train --model llama3-8b --nodes 2 --batch-tokens 1048576 --chip h100");
  CHECK(step_mine["step_s"].get<double>() < step_h100["step_s"].get<double>());
  const std::string serve = "serve --model llama3-8b --chips 1 --batch 8 --context 4096";
  const auto s_mine = json_of(serve + " --chip-file " + file.string());
  CHECK(s_mine["calibration"]["measured"] == false);
  CHECK(json_of(serve + " --chip h100")["calibration"]["measured"] == true);
  CHECK(run(serve + " --chip-file " + file.string()).out.find("note: no measured table for 'my-h100'") !=
        std::string::npos);
  std::filesystem::remove(file);
}

TEST_CASE("review 2 and 3: --saved resolves against the model's own sums (GPT-3: a plain MLP)") {
  // GPT-3 175B by hand (config: D 12288, F 49152, 96 heads of 128, no GQA): a plain two-matrix MLP, so the
  // big matmuls' outputs are Q (NH), K and V (2KH), the attention projection (D), the MLP's up (F) and down (D):
  // 2D+F+NH+2KH, not the gated 2D+2F+NH+2KH.
  constexpr double D = 12288, F = 49152, NH = 96 * 128, KH = 96 * 128;
  const std::string base = "train --model gpt3-175b --chip h100 --nodes 64 --batch-tokens 3145728 --tp 8 --pp 8";
  const auto named = json_of(base + " --saved matmuls");
  CHECK(named["saved"] == "matmuls");
  CHECK(named["saved_rule"] == "2D+F+NH+2KH");
  // The model's own matmuls sum is that named rule (with its attention rerun)...
  const auto own = json_of(base + " --saved 2D+F+NH+2KH");
  CHECK(own["saved"] == "matmuls");
  CHECK(own["step_s"].get<double>() == named["step_s"].get<double>());
  // ...and the gated text is a sum of its own, counted as typed.
  const auto gated = json_of(base + " --saved 2D+2F+NH+2KH");
  CHECK(gated["saved"] == "2D+2F+NH+2KH");
  CHECK(gated["saved_rule"] == "2D+2F+NH+2KH");
  CHECK(gated["activation_bytes"].get<double>() / named["activation_bytes"].get<double>() ==
        doctest::Approx((2 * D + 2 * F + NH + 2 * KH) / (2 * D + F + NH + 2 * KH)).epsilon(1e-12));
  CHECK(json_of(base + " --saved all")["saved_rule"] == "4D+2F+2NH+2KH");
  // A gated model keeps the gated texts (LLaMA 3 8B: SwiGLU).
  CHECK(json_of("train --model llama3-8b --chip h100 --nodes 2 --batch-tokens 1048576 --saved matmuls")["saved_rule"] ==
        "2D+2F+NH+2KH");
  // plan: a rule and its own sum are one rule, refused; the gated text beside matmuls on GPT-3 is two rules.
  const std::string plan = "plan --model gpt3-175b --chip h100 --nodes 64 --batch-tokens 3145728 --tp 8 --top 2";
  expect_rejected({{plan + " --saved 4D+2F+2NH+2KH,all", "the same rule for this model"},
                   {plan + " --saved matmuls,2D+F+NH+2KH", "'matmuls' and '2D+F+NH+2KH'"},
                   {plan + " --saved D+2F,2F+D", "give each rule once"}});
  const auto two = json_of(plan + " --saved 2D+2F+NH+2KH,matmuls --dp-overlap yes");
  CHECK(two["configs_evaluated"].get<double>() > 0);
}

TEST_CASE("review 4: plan's usage refusals name what was given, led by the option") {
  const std::string plan = "plan --model llama3-8b --chip h100 --nodes 8 --batch-tokens 1M";
  for (const auto& [args, says, not_says] : std::vector<std::tuple<std::string, std::string, std::string>>{
           // No degree given: the message must not offer "or none (the search)" as if none were not given.
           {plan + " --zero-scope group", "--zero-scope 'group': ", "or none"},
           {plan + " --tp 8 --zero-scope group", "--zero-scope 'group': ", "or none"},
           {plan + " --microbatches 2", "--microbatches '2': ", "or none"},
           // Only --top given: --max-microbatches is not named.
           {plan + " --tp 8 --pp 8 --top 4", "--top '4': ", "--max-microbatches"},
           {plan + " --tp 8 --pp 8 --max-microbatches 4", "--max-microbatches '4': ", "--top"},
           {"train --chip h100 --nodes 1 --batch-tokens 1M", "--model or --config is needed", "train:"}}) {
    INFO(args);
    const auto r = run(args);
    CHECK(r.exit_code == 2);
    CHECK(r.err.rfind("scaling: " + says, 0) == 0);
    CHECK(r.err.find(not_says) == std::string::npos);
  }
  CHECK(run(plan + " --tp 8 --zero-scope group").err.find("a second of --dp, --tp and --pp beside --tp 8") !=
        std::string::npos);
}

TEST_CASE("review 5, 7, 8, 9: frontier cap, whole microbatches, integer steps, one --compute list") {
  // 5: the refusal names --context with its own value; 7,787,993 batches fit (max_batch), above the cap.
  const std::string serve = "serve --model llama3-8b --chip h100 --chips 64 --batch 1";
  CHECK(json_of(serve + " --context 5")["max_batch"].get<double>() > 100000);
  expect_rejected({{serve + " --context 5 --frontier", "--context '5': --frontier: "}});
  // 7: 3e6 tokens over 64 replicas × 2 microbatches is 23,437.5 tokens each: refused under every model.
  const std::string tpu = "train --model llama3-8b --chip tpu-v5p --slice 4x4x4 --batch-tokens 3e6 --dp 64";
  expect_rejected({{tpu + " --microbatches 2 --cost-model ideal", "23,437.5 tokens"},
                   {tpu + " --microbatches 2 --cost-model book", "23,437.5 tokens"}});
  // 3,200,000 tokens over 64 × 2 is 25,000: accepted; one microbatch keeps the per-token reading.
  CHECK(run("train --model llama3-8b --chip tpu-v5p --slice 4x4x4 --batch-tokens 3.2e6 --dp 64 --microbatches 2 "
            "--cost-model ideal").exit_code == 0);
  CHECK(run(tpu + " --cost-model ideal").exit_code == 0);
  // 8: steps is a count: ⌈1e12 / 1,048,576⌉ = 953,675 (1e12 / 2^20 = 953,674.3), an integer in JSON.
  const auto steps = json_of("train --model llama3-8b --chip h100 --nodes 2 --batch-tokens 1048576 --tokens 1e12")["steps"];
  CHECK(steps.is_number_integer());
  CHECK(steps.get<long long>() == 953675);
  // 9: one list of --compute dtypes, whatever the dtype.
  for (const std::string dtype : {"fp4", "int4", "fp32"})
    expect_rejected({{"serve --model llama3-8b --chip h100 --chips 1 --batch 8 --context 4096 --compute " + dtype,
                      "--compute '" + dtype + "': expected bf16, int8 or fp8"}});
}

TEST_CASE("review 10: a sequence past the learned position table is said, naming the option and the table") {
  // tests/data/gpt2.json: "n_positions": 1024; opt-125m.json: "max_position_embeddings": 2048.
  const std::string gpt2 = "--config " + std::string(TEST_SOURCE_DIR) + "/data/gpt2.json";
  const std::string opt = "--config " + std::string(TEST_SOURCE_DIR) + "/data/opt-125m.json";
  const std::string train = "train " + gpt2 + " --chip h100 --nodes 1 --batch-tokens 1048576";
  CHECK(run(train).out.find("note: the default --seq 4,096 is longer than the model's learned position table "
                            "(1,024 positions") != std::string::npos);
  CHECK(json_of(train).contains("notes"));
  CHECK_FALSE(json_of(train + " --seq 1024").contains("notes"));
  CHECK(json_of("plan " + gpt2 + " --chip h100 --nodes 1 --batch-tokens 1048576")["notes"][0].get<std::string>().find(
            "1,024 positions") != std::string::npos);
  // OPT: 2048 positions (its two offset rows are not positions): 2048 is within, 2049 past.
  const std::string serve = "serve " + opt + " --chip h100 --chips 1 --batch 1 --context ";
  CHECK_FALSE(json_of(serve + "2048").contains("notes"));
  CHECK(run(serve + "2049").out.find("note: --context 2,049 is longer than the model's learned position table "
                                     "(2,048 positions") != std::string::npos);
  // A rotary model has no table: no note at any length.
  CHECK_FALSE(json_of("train --model llama3-8b --chip h100 --nodes 2 --batch-tokens 1048576 --seq 1048576").contains("notes"));
}

TEST_CASE("review 11 and 12: labels fit, one layout ranks nothing, unused switches print as '-'") {
  const std::string train = "train --model llama3-8b --chip h100 --nodes 2 --batch-tokens 1048576";
  const auto t = run(train + " --zero 0");
  REQUIRE(t.exit_code == 0);
  // Every table row's label fits the 44-character column: the value column starts at the same place.
  CHECK(t.out.find("  per chip: comm buffers, ZeRO-3 gathers  ") != std::string::npos);
  // A long --saved sum sits in the value column, not in a label (round 10).
  const auto sum = run(train + " --saved 4D+3F+2NH+2KH+D");
  REQUIRE(sum.exit_code == 0);
  CHECK(sum.out.find(fmt::format("  {:<44} {:>18}\n", "activations saved per layer per token", "5D+3F+2NH+2KH")) !=
        std::string::npos);
  CHECK(t.out.find("ZeRO-0 over") == std::string::npos);
  CHECK(t.out.find("ZeRO-0,") != std::string::npos);
  CHECK(t.out.find("of which latency") == std::string::npos);
  // dp 16 × tp 1 × pp 1: no pipeline, no tensor group; dp 16 overlaps its reduce.
  CHECK(t.out.find("calibrated (schedule -, 1 virtual, sp -, tp-overlap -, dp-overlap yes,") != std::string::npos);
  // One layout in plan: timed once, nothing ranked.
  const std::string one = "plan --model llama3-8b --chip h100 --nodes 2 --batch-tokens 1048576 --tp 8 --pp 2";
  const auto j = json_of(one);
  CHECK(j["configs_timed"] == 1);
  CHECK(j["configs_evaluated"] == 1);
  const auto text = run(one);
  CHECK(text.out.find("ranked by") == std::string::npos);
  // dp 1: the DP-overlap column is "-" (nothing to overlap), tp 8: the sp column a word.
  CHECK(text.out.find("D+2F             no  1   no       -  ") != std::string::npos);
  // A refusal's share of a sequence below a thousandth is a fraction, not 6.10352e-5.
  const auto tiny = run("train --model llama3-8b --chip h100 --nodes 2048 --batch-tokens 4096 --dp 16384");
  CHECK(tiny.exit_code == 1);
  CHECK(tiny.err.find("1/16,384 sequences") != std::string::npos);
  CHECK(tiny.err.find("e-") == std::string::npos);
}

TEST_CASE("review: interleaving without --vp is one layout's refusal and plan's search") {
  // Megatron-LM interleaves only with 2 or more model chunks a stage. One layout without --vp is refused,
  // naming the options; plan's search with the pipeline fixed tries every v >= 2 that splits the layers.
  const std::string machine = " --model llama3-70b --chip h100 --nodes 8 --batch-tokens 4194304 --schedule interleaved";
  for (const std::string& one : {"train" + machine + " --tp 8 --pp 4", "plan" + machine + " --tp 8 --pp 4"}) {
    INFO(one);
    const auto r = run(one);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("--schedule interleaved without --vp: one layout needs --vp 2 or more") != std::string::npos);
  }
  const auto searched = json_of("plan" + machine + " --pp 4");
  const auto& best = searched["best"];
  CHECK(best["schedule"] == "interleaved");
  CHECK(best["virtual_stages"].get<int>() >= 2);
  // 80 layers (or 80 plus one or two slots for the embedding and the loss) over 4 stages of v chunks each.
  const int chunks = 4 * best["virtual_stages"].get<int>();
  CHECK((80 % chunks == 0 || 81 % chunks == 0 || 82 % chunks == 0));
}
