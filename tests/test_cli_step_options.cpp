// `scaling train` and `scaling plan` as a practitioner reads them (round 8's review): each --help states
// what its own subcommand does with an option left out, and each claim is held against what the search
// does (its configs_evaluated counts); options a cost model does not read are named in the answer and
// change nothing in it; memory per chip is a list of named parts that sum to the total, two of them
// checked against the figures the calibrated model documents; min_chips holds what its label says.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <tuple>
#include <unistd.h>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "cli_run.hpp"
#include "scaling/hardware/chip.hpp"
#include "scaling/hardware/chip_file.hpp"

using namespace testing;

namespace {
nlohmann::json answer(const std::string& args) {
  const auto r = run(args + " --json");
  REQUIRE_MESSAGE(r.exit_code == 0, args << ": " << r.err);
  CHECK(r.err.empty());
  return nlohmann::json::parse(r.out);
}
double evaluated(const std::string& args) { return answer("plan " + args)["configs_evaluated"].get<double>(); }

// The help line of one option ("  --sp TEXT:NAME   sequence parallelism …"): CLI11 prints each on one line.
std::string help_line(const std::string& help, const std::string& option) {
  const auto at = help.find("\n  " + option + " ");
  REQUIRE_MESSAGE(at != std::string::npos, option);
  const auto end = help.find('\n', at + 1);
  return help.substr(at + 1, end - at - 1);
}
bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

double hbm_bytes(const std::string& chip) {
  const auto r = run("chips --json");
  REQUIRE(r.exit_code == 0);
  for (const auto& c : nlohmann::json::parse(r.out))
    if (c["name"] == chip) return c["hbm_bytes"].get<double>();
  FAIL("no chip " << chip);
  return 0;
}
}  // namespace

TEST_CASE("plan --help says what plan searches when an option is left out, and the search does exactly that") {
  const auto h = run("plan --help");
  REQUIRE(h.exit_code == 0);
  // The degrees: searched, not train's "default 1".
  for (const char* option : {"--dp", "--tp", "--pp"}) {
    INFO(option);
    CHECK(has(help_line(h.out, option), "searched when not given"));
    CHECK_FALSE(has(help_line(h.out, option), "(default 1"));
  }
  // One node of 8 H100s, the tensor degree fixed at 8: data and pipeline degree 1, so the only factors of
  // the counts are the options below (no DP-overlap pair without a data group, no interleaving without a
  // pipeline, no ZeRO scope without a second node).
  const std::string tp8 = "--model llama3-8b --chip h100 --nodes 1 --batch-tokens 1048576 --max-microbatches 16 --tp 8";
  const double base = evaluated(tp8);

  // --sp: tried off and on unless given (then fixed, default no).
  const auto sp = help_line(h.out, "--sp");
  CHECK(has(sp, "the search tries it off and on where tp > 1"));
  CHECK_FALSE(has(sp, "(default no)"));
  CHECK(base == 2 * evaluated(tp8 + " --sp no"));
  CHECK(evaluated(tp8 + " --sp yes") == evaluated(tp8 + " --sp no"));
  // Given --schedule, sequence parallelism is no longer searched: it takes its default, no.
  CHECK(evaluated(tp8 + " --schedule 1f1b") == evaluated(tp8 + " --sp no"));
  CHECK(answer("plan " + tp8 + " --schedule 1f1b")["best"]["sequence_parallel"] == false);

  // --tp-overlap: not searched, default no.
  CHECK(has(help_line(h.out, "--tp-overlap"), "the search does not try it"));
  CHECK(evaluated(tp8 + " --tp-overlap no") == base);
  CHECK(answer("plan " + tp8 + " --top 20")["top"].size() > 1);
  const auto top20 = answer("plan " + tp8 + " --top 20");  // kept alive: a range-for over a temporary's member dangles
  for (const auto& l : top20["top"]) CHECK(l["tp_overlap"] == "no");

  // --attention: not searched, default flash.
  CHECK(has(help_line(h.out, "--attention"), "not searched"));
  CHECK(evaluated(tp8 + " --attention flash") == base);
  CHECK(answer("plan " + tp8)["best"]["attention"] == "flash");

  // --zero: 0, 1, 2 and 3 unless given; --saved: the three named rules unless given.
  CHECK(has(help_line(h.out, "--zero"), "default 0,1,2,3"));
  CHECK(base == evaluated(tp8 + " --zero 0,1,2,3"));
  // With one data replica every stage shards over a group of one chip: the same layout as ZeRO-0, timed
  // once (the lowest stage asked for), so the list holds no copies.
  CHECK(base == evaluated(tp8 + " --zero 3"));
  const auto top = answer("plan " + tp8 + " --top 20")["top"];
  for (size_t i = 0; i < top.size(); ++i)
    for (size_t k = i + 1; k < top.size(); ++k)
      CHECK_FALSE((top[i]["microbatches"] == top[k]["microbatches"] && top[i]["saved"] == top[k]["saved"] &&
                   top[i]["sequence_parallel"] == top[k]["sequence_parallel"] &&
                   top[i]["dp_overlap"] == top[k]["dp_overlap"]));
  CHECK(has(help_line(h.out, "--saved"), "default input,matmuls,all"));
  CHECK(base == 3 * evaluated(tp8 + " --saved input"));

  // --microbatches: the search refuses it and tries the counts up to --max-microbatches instead.
  const auto micro = help_line(h.out, "--microbatches");
  CHECK(has(micro, "the search refuses it"));
  const auto refused = run("plan " + tp8 + " --microbatches 2");
  CHECK(refused.exit_code == 2);
  CHECK(has(refused.err, "--max-microbatches"));
  // Of 1 to 16, the counts that divide the batch's 256 sequences are 1, 2, 4, 8 and 16: five against one.
  CHECK(base == 5 * evaluated("--model llama3-8b --chip h100 --nodes 1 --batch-tokens 1048576 --max-microbatches 1 --tp 8"));

  // --dp-overlap: tried off and on where a data group reduces gradients (ZeRO 0-2) unless given.
  CHECK(has(help_line(h.out, "--dp-overlap"), "searched off and on"));
  const std::string dp8 = "--model llama3-8b --chip h100 --nodes 1 --batch-tokens 1048576 --max-microbatches 2 --dp 8 --zero 1";
  CHECK(evaluated(dp8) == 2 * evaluated(dp8 + " --dp-overlap yes"));
  CHECK(evaluated(dp8 + " --dp-overlap no") == evaluated(dp8 + " --dp-overlap yes"));

  // --vp and --schedule: 1F1B and interleaving tried with a pipeline unless one of --sp, --vp, --schedule
  // is given; GPipe only when asked.
  CHECK(has(help_line(h.out, "--schedule"), "never gpipe"));
  const std::string pp4 = "--model llama3-8b --chip h100 --nodes 1 --batch-tokens 1048576 --max-microbatches 4 --pp 4";
  const double fixed_1f1b = evaluated(pp4 + " --schedule 1f1b");
  CHECK(evaluated(pp4) > 2 * fixed_1f1b);  // every v that splits the layers evenly, and sp off and on
  CHECK(evaluated(pp4 + " --schedule gpipe") == fixed_1f1b);
  CHECK(evaluated(pp4 + " --sp no") == fixed_1f1b);
}

TEST_CASE("train --help: each option says train's default, and --zero and --saved take one value, as labelled") {
  const auto h = run("train --help");
  REQUIRE(h.exit_code == 0);
  CHECK(has(help_line(h.out, "--zero"), "--zero INT:0-3"));
  CHECK(has(help_line(h.out, "--saved"), "--saved TEXT:RULE"));
  CHECK_FALSE(has(help_line(h.out, "--zero"), "LIST"));
  CHECK_FALSE(has(help_line(h.out, "--saved"), "LIST"));
  CHECK_FALSE(has(h.out, "plan:"));  // plan's search is plan's help
  for (const char* option : {"--tp", "--pp", "--microbatches", "--sp", "--tp-overlap", "--dp-overlap", "--schedule", "--vp"})
    CHECK_MESSAGE(has(help_line(h.out, option), "default "), option);
  // plan keeps its lists.
  const auto p = run("plan --help");
  CHECK(has(help_line(p.out, "--zero"), "LIST"));
  CHECK(has(help_line(p.out, "--saved"), "LIST"));
  // One value: a list is refused while parsing, naming the option; one stage is the layout's.
  const std::string base = "train --model llama3-8b --chip h100 --nodes 1 --batch-tokens 1048576 ";
  expect_rejected({{base + "--zero 1,3", "--zero '1,3': one layout takes one stage"},
                   {base + "--saved input,all", "--saved"}});
  CHECK(answer(base + "--zero 2")["zero"] == 2);
  CHECK(answer(base + "--saved matmuls")["saved"] == "matmuls");
}

namespace {
// What a cost model answers for a layout: every number it computes (not the echo of the request).
nlohmann::json model_answer(const nlohmann::json& j) {
  nlohmann::json out = nlohmann::json::object();
  for (const char* key : {"step_s", "bytes_per_chip", "memory_per_chip", "t_math_s", "t_hbm_s", "t_bubble_s", "t_ici_s",
                          "t_dcn_s", "bound", "mfu", "mlp_flops_utilisation", "calibrated", "axes"})
    if (j.contains(key)) out[key] = j[key];
  return out;
}
bool lists(const nlohmann::json& j, const std::string& option) {
  for (const auto& o : j["ignored_options"])
    if (o == option) return true;
  return false;
}
// "train" + options, one value per option (a later one replaces an earlier).
std::string command(const std::vector<std::pair<std::string, std::string>>& options) {
  std::string out = "train";
  for (const auto& [o, v] : options) out += " " + o + " " + v;
  return out;
}
}  // namespace

TEST_CASE("ignored_options: an option is listed exactly when changing its value leaves the model's answer unchanged") {
  // The table (cli/step_options.cpp's option_reads) against behaviour, never against itself: each option is
  // run at two values; where the two answers are the same the model did not read it, and both runs must list
  // it — except a run whose value is the one the model timed (the book's ZeRO-3 and one microbatch, which the
  // layout then prints); where they differ the model read it, and neither may list it.
  using Options = std::vector<std::pair<std::string, std::string>>;
  struct Base {
    const char* name;
    std::string cost_model;
    Options options;
  };
  const std::string h100 = "--model llama3-8b --chip h100";
  // Every switch acts on this layout under the calibrated model: a tensor group, a pipeline, data replicas
  // reducing gradients under ZeRO-1, across two nodes (so the ZeRO scope has replicas over InfiniBand).
  const Options acting = {{h100, ""}, {"--nodes", "2"}, {"--batch-tokens", "262144"}, {"--dp", "4"}, {"--tp", "2"},
                          {"--pp", "2"}, {"--microbatches", "4"}, {"--zero", "1"}, {"--saved", "all"}};
  // The switches' conditions unmet: no tensor group, no pipeline, ZeRO-3, one node.
  const Options idle = {{h100, ""}, {"--nodes", "1"}, {"--batch-tokens", "262144"}, {"--dp", "8"}, {"--zero", "3"},
                        {"--saved", "all"}};
  // The book's model: one node, no pipeline.
  const Options book = {{h100, ""}, {"--nodes", "1"}, {"--batch-tokens", "262144"}, {"--dp", "4"}, {"--tp", "2"},
                        {"--saved", "all"}};
  const Base bases[] = {{"acting", "calibrated", acting}, {"acting", "ideal", acting},  {"idle", "calibrated", idle},
                        {"idle", "ideal", idle},          {"book", "book", book}};
  struct Variation {
    std::string option, a, b;
  };
  const Variation variations[] = {
      {"--microbatches", "1", "2"}, {"--zero", "3", "1"},          {"--zero-scope", "all", "group"},
      {"--saved", "all", "input"},  {"--seq", "4096", "2048"},     {"--schedule", "1f1b", "gpipe"},
      {"--sp", "no", "yes"},        {"--tp-overlap", "no", "yes"}, {"--dp-overlap", "yes", "no"},
      {"--recompute", "none", "full"}, {"--attention", "flash", "materialized"}, {"--optimizer", "adam", "sgd"},
      {"--master", "none", "fp32"}};
  int read = 0, ignored = 0;
  for (const auto& base : bases) {
    for (const auto& v : variations) {
      Options with_a = base.options, with_b = base.options;
      for (auto* o : {&with_a, &with_b}) {
        // --recompute names --saved's rules: one of them at a time.
        if (v.option == "--recompute") std::erase_if(*o, [](const auto& p) { return p.first == "--saved"; });
        std::erase_if(*o, [&](const auto& p) { return p.first == v.option; });
        o->push_back({"--cost-model", base.cost_model});
      }
      with_a.push_back({v.option, v.a});
      with_b.push_back({v.option, v.b});
      INFO(std::string(base.name), " ", base.cost_model, " ", v.option);
      const auto ja = answer(command(with_a)), jb = answer(command(with_b));
      const bool same = model_answer(ja) == model_answer(jb);
      (same ? ignored : read) += 1;
      for (const auto& [j, value] : {std::pair{&ja, v.a}, std::pair{&jb, v.b}}) {
        INFO("value ", value);
        // The value the model timed, where the layout prints it: then it was honoured, not ignored.
        const bool timed = (v.option == "--zero" && (*j)["zero"].dump() == value) ||
                           (v.option == "--microbatches" && (*j)["microbatches"].dump() == value);
        CHECK(lists(*j, v.option) == (same && !timed));
      }
    }
  }
  // Both kinds occur (the check could fail either way).
  CHECK(read > 20);
  CHECK(ignored > 20);

  // --seq under the ideal model: read only through a rule that reruns attention.
  const Options rerun = {{h100, ""}, {"--nodes", "1"}, {"--batch-tokens", "262144"}, {"--cost-model", "ideal"},
                         {"--saved", "input"}};
  Options seq_a = rerun, seq_b = rerun;
  seq_a.push_back({"--seq", "4096"});
  seq_b.push_back({"--seq", "2048"});
  const auto ra = answer(command(seq_a)), rb = answer(command(seq_b));
  CHECK(model_answer(ra) != model_answer(rb));
  CHECK_FALSE(lists(ra, "--seq"));
}

TEST_CASE("ignored_options: the chip's --flops and --hbm-bw are listed exactly when the step's time ignores them") {
  // Against behaviour, as above, on three chips whose calibrated rates rest on different figures: the H100's
  // measured tables (neither), the A100's published GEMM ceiling with the H100's kernel fractions of its
  // bandwidth (--hbm-bw only), and a copy of the TPU v5e under a new name, with nothing published (both).
  // The MFU divides by the --flops given under every model, so the answer compared here is the step's time,
  // memory and terms without the MFU.
  const auto path = std::filesystem::temp_directory_path() / fmt::format("chip_{}.json", ::getpid());
  {
    auto j = nlohmann::json::parse(scaling::chip_to_json(scaling::chip("tpu-v5e")));
    j["name"] = "v5e-renamed";
    std::ofstream(path) << j.dump();
  }
  struct Base {
    std::string chip, machine;
    bool reads_flops, reads_hbm_bw;  // under the calibrated model
  };
  const Base bases[] = {{"--chip h100", "--nodes 1 --dp 4 --tp 2", false, false},
                        {"--chip a100", "--nodes 1 --dp 4 --tp 2", false, true},
                        {"--chip tpu-v5e", "--slice 4x4 --dp 4 --tp 4", false, true},
                        {"--chip-file '" + path.string() + "'", "--slice 4x4 --dp 4 --tp 4", true, true}};
  auto timing = [](nlohmann::json j) {
    nlohmann::json out = model_answer(j);
    out.erase("mfu");
    if (out.contains("calibrated")) out["calibrated"].erase("matmul_efficiency");  // a fraction of the peak
    return out;
  };
  int read = 0, ignored = 0;
  for (const auto& base : bases) {
    for (const char* cost_model : {"calibrated", "ideal", "book"}) {
      for (const auto& [option, a, b] : {std::tuple{"--flops", "1e15", "2e15"}, std::tuple{"--hbm-bw", "1e12", "5e12"},
                                         std::tuple{"--flops-int8", "1e15", "3e15"}}) {
        const std::string common = fmt::format("train --model llama3-8b {} {} --batch-tokens 262144 --saved all "
                                               "--cost-model {} {} ",
                                               base.chip, base.machine, cost_model, option);
        INFO(common);
        const auto ja = answer(common + a), jb = answer(common + b);
        const bool same = timing(ja) == timing(jb);
        (same ? ignored : read) += 1;
        CHECK(lists(ja, option) == same);
        CHECK(lists(jb, option) == same);
        if (std::string(cost_model) == "calibrated" && std::string(option) != "--flops-int8")
          CHECK(!same == (std::string(option) == "--flops" ? base.reads_flops : base.reads_hbm_bw));
        if (std::string(option) == "--flops-int8") CHECK(same);  // training's matmuls run in bf16
      }
    }
  }
  CHECK(read > 4);
  CHECK(ignored > 4);
  std::filesystem::remove(path);
}

TEST_CASE("ignored_options in plan: the book's fixed values, --max-microbatches, and a search's rules") {
  const std::string gpu = "plan --model llama3-8b --chip h100 --nodes 1 --batch-tokens 1048576 ";
  // The book's search times ZeRO-3 with one microbatch: a list asking only for those is honoured.
  CHECK(answer(gpu + "--cost-model book --zero 3 --max-microbatches 1")["ignored_options"] == nlohmann::json::array());
  const auto book = answer(gpu + "--cost-model book --zero 1,3 --max-microbatches 4 --sp no");
  CHECK(book["ignored_options"] == nlohmann::json({"--zero", "--sp", "--max-microbatches"}));
  CHECK(model_answer(book["best"]) == model_answer(answer(gpu + "--cost-model book")["best"]));
  // The ideal search reads --seq when a rule of its list reruns attention (the default list's input does).
  CHECK_FALSE(lists(answer(gpu + "--cost-model ideal --seq 8192"), "--seq"));
  CHECK(lists(answer(gpu + "--cost-model ideal --seq 8192 --saved all"), "--seq"));
  // plan given every degree says what train says for the same flags.
  const std::string flags = "--model llama3-8b --chip h100 --nodes 1 --batch-tokens 1048576 --dp 8 --tp 1 "
                            "--sp yes --dp-overlap no --cost-model calibrated";
  CHECK(answer("plan " + flags)["ignored_options"] == answer("train " + flags)["ignored_options"]);
  CHECK(answer("train " + flags)["ignored_options"] == nlohmann::json({"--sp", "--dp-overlap"}));

  // The text: one line naming them with the reason, on stdout; nothing on stderr (an answer, not a warning).
  for (const char* sub : {"train", "plan"}) {
    const std::string machine = " --model llama3-8b --chip h100 --nodes 1 --batch-tokens 1048576 --tp 8";
    const auto t = run(std::string(sub) + machine + " --cost-model ideal --sp yes --attention flash1");
    REQUIRE(t.exit_code == 0);
    CHECK(t.err.empty());
    CHECK(has(t.out, "note: the ideal cost model ignores --sp, --attention (the calibrated model's switches: use "
                     "--cost-model calibrated)\n"));
    const auto plain = run(std::string(sub) + machine + " --cost-model ideal");
    CHECK_FALSE(has(plain.out, "ignores"));
  }
}

TEST_CASE("the layout printed is the one timed: no switch a model ignored, the book's ZeRO-3 and one microbatch") {
  const std::string flags = "--model llama3-8b --chip h100 --nodes 1 --batch-tokens 1048576 --dp 4 --tp 2 --zero 1 "
                            "--microbatches 4 --zero-scope group --sp yes --tp-overlap backward --dp-overlap no "
                            "--attention materialized --schedule gpipe";
  const char* switches[] = {"schedule", "virtual_stages", "sequence_parallel", "tp_overlap", "dp_overlap", "attention"};
  for (const char* sub : {"train", "plan"}) {
    INFO(sub);
    const auto cal = answer(std::string(sub) + " " + flags);
    const auto& c = std::string(sub) == "plan" ? cal["best"] : cal;
    CHECK(c["sequence_parallel"] == true);
    CHECK(c["tp_overlap"] == "backward");
    CHECK(c["dp_overlap"] == false);
    CHECK(c["attention"] == "materialized");
    CHECK(c["schedule"] == "gpipe");
    for (const char* model : {"ideal", "book"}) {
      INFO(model);
      const auto j = answer(std::string(sub) + " " + flags + " --cost-model " + model);
      const auto& l = std::string(sub) == "plan" ? j["best"] : j;
      for (const char* key : switches) CHECK_FALSE(l.contains(key));
      // One node: the scope is the same either way, printed as "all" whatever --zero-scope says.
      CHECK(l["zero_scope"] == "all");
      CHECK(l["zero"] == (std::string(model) == "book" ? 3 : 1));
      CHECK(l["microbatches"] == (std::string(model) == "book" ? 1 : 4));
    }
  }
  // The text says the same: train's layout line, plan's columns (the switches only under calibrated).
  const auto book = run("train " + flags + " --cost-model book");
  CHECK(has(book.out, "layout: dp 4 × tp 2 × pp 1, 1 microbatch, ZeRO-3 over all,"));
  const auto ideal = run("train " + flags + " --cost-model ideal");
  CHECK(has(ideal.out, "layout: dp 4 × tp 2 × pp 1, 4 microbatches, ZeRO-1 over all,"));
  CHECK_FALSE(has(ideal.out, "gpipe"));
  CHECK_FALSE(has(ideal.out, "materialized"));
  CHECK_FALSE(has(run("plan " + flags + " --cost-model ideal").out, " tpo "));
  CHECK(has(run("plan " + flags).out, " tpo "));
}

TEST_CASE("the book model's utilisation is §5.1.4's, of the MLP matmuls only, and is labelled so, not as MFU") {
  // llama3-8b (D 4096, F 14336, L 32, 8,030,261,248 parameters) on 8 H100s at 989 TFLOP/s, a 1M-token batch:
  // §5.1.4's step does 3 × L × 4·B·D·F FLOPs (the two MLP matmuls, forward 2·B·D·F each, backward twice
  // that), so its utilisation is those FLOPs over chips × peak × step — written out here, not read back.
  const double D = 4096, F = 14336, L = 32, B = 1048576, chips = 8, peak = 989e12, params = 8030261248.0;
  const std::string flags = "--model llama3-8b --chip h100 --nodes 1 --batch-tokens 1048576 --dp 4 --tp 2";
  const auto t = answer("train " + flags + " --cost-model book");
  CHECK_FALSE(t.contains("mfu"));
  const double step = t["step_s"].get<double>();
  CHECK(t["mlp_flops_utilisation"].get<double>() == doctest::Approx(12 * L * B * D * F / (chips * peak * step)).epsilon(1e-9));
  // Read as the other models' MFU (6N FLOPs per token) the same step would be another number, here above 1.
  CHECK(6 * params * B / (chips * peak * step) > 1.0);
  const auto p = answer("plan " + flags + " --cost-model book");
  CHECK_FALSE(p["best"].contains("mfu"));
  CHECK(p["best"]["mlp_flops_utilisation"] == t["mlp_flops_utilisation"]);
  // The other models keep `mfu` (6N), and no MLP key.
  const auto ideal = answer("train " + flags + " --cost-model ideal");
  CHECK(ideal["mfu"].get<double>() == doctest::Approx(6 * params * B / (chips * peak * ideal["step_s"].get<double>())).epsilon(1e-9));
  CHECK_FALSE(ideal.contains("mlp_flops_utilisation"));
  // The text: the book's row and column are named for what they are.
  const auto text = run("train " + flags + " --cost-model book");
  CHECK(has(text.out, "MLP-only FLOP utilisation (§5.1.4, not MFU)"));
  CHECK_FALSE(has(text.out, "MFU at that step"));
  const auto plan_text = run("plan " + flags + " --cost-model book");
  CHECK(has(plan_text.out, " MLP FU bound "));
  CHECK_FALSE(has(plan_text.out, " MFU bound "));
  CHECK(has(run("plan " + flags + " --cost-model ideal").out, " MFU bound "));
}

TEST_CASE("memory per chip: named parts that sum to the total, on GPUs and TPUs, under every cost model") {
  struct Case {
    std::string machine;
    bool gpu;
  };
  const Case machines[] = {{"--chip h100 --nodes 2", true},
                           {"--chip a100 --nodes 1", true},
                           {"--chip h200 --chips 8 --tp 8", true},
                           {"--chip tpu-v5p --slice 4x4x4", false},
                           {"--chip tpu-v5e --slice 16x16 --pods 2", false}};
  int checked = 0;
  for (const auto& [machine, gpu] : machines)
    for (const char* model : {"llama3-8b", "llama2-13b", "mixtral-8x7b"})
      for (const char* cost : {"calibrated", "ideal", "book"}) {
        const bool one_group = machine.find("--nodes 2") == std::string::npos && machine.find("--pods") == std::string::npos;
        if (std::string(cost) == "book" && !one_group) continue;  // the book's model plans one slice or node
        const std::string args = fmt::format("--model {} {} --batch-tokens 1048576 --cost-model {}", model, machine, cost);
        INFO(args);
        std::vector<nlohmann::json> layouts{answer("train " + args)};
        // plan's best layouts too, where one fits (Mixtral fits no layout of 8 A100s).
        if (machine.find("--tp") == std::string::npos)
          if (const auto p = run("plan " + args + " --max-microbatches 8 --top 3 --json"); p.exit_code == 0) {
            const auto parsed = nlohmann::json::parse(p.out);  // kept alive over the loop
            for (const auto& l : parsed["top"]) layouts.push_back(l);
          }
        for (const auto& l : layouts) {
          const auto& m = l["memory_per_chip"];
          double sum = 0;
          for (const char* part : {"params", "grads", "optimizer", "master", "activations", "buffers", "allocator_reserve"}) {
            REQUIRE_MESSAGE(m.contains(part), part);
            CHECK(m[part].get<double>() >= 0);
            sum += m[part].get<double>();
          }
          CHECK(m.size() == 7);
          const double total = l["bytes_per_chip"].get<double>();
          CHECK(std::abs(sum - total) <= 1e-9 * total);
          // The allocator's reserve: f = 0.15 of what it reserves on a GPU (GMLake, Guo et al. 2024,
          // arXiv 2401.08156, abstract: 15 % fragmentation on average), none on a TPU or outside the
          // calibrated model.
          const double f = gpu && std::string(cost) == "calibrated" ? 0.15 : 0;
          CHECK(m["allocator_reserve"].get<double>() == doctest::Approx(f * total).epsilon(1e-12));
          if (std::string(cost) != "calibrated") CHECK(m["buffers"] == 0.0);
          ++checked;
        }
      }
  CHECK(checked >= 39);  // train and plan layouts over the 5 machines, 3 models, 3 cost models
  // The whole model's parts sum to its total as well.
  const auto t = answer("train --model llama3-8b --chip h100 --nodes 1 --batch-tokens 1048576");
  CHECK(t["param_bytes"].get<double>() + t["grad_bytes"].get<double>() + t["optimizer_bytes"].get<double>() +
            t["master_bytes"].get<double>() + t["activation_bytes"].get<double>() ==
        doctest::Approx(t["total_bytes"].get<double>()).epsilon(1e-12));
}

TEST_CASE("memory per chip: the calibrated buffers are ZeRO-3's two gathered layers and two 25 MB buckets") {
  // LLaMA-3 8B's layer by hand: attention 4096·4096 (Q) + 2·4096·1024 (K, V: 8 heads of 128) + 4096·4096 (O),
  // the gated MLP 3·4096·14336, two RMSNorm weights of 4096 (Meta's config: hidden 4096, 32 heads, 8 KV
  // heads, intermediate 14336).
  const double layer = 4096.0 * 4096 * 2 + 2 * 4096.0 * 1024 + 3 * 4096.0 * 14336 + 2 * 4096;
  const double buckets = 2 * 25e6;  // PyTorch DDP's bucket_cap_mb default, twice
  const std::string base = "train --model llama3-8b --chip h100 --nodes 2 --batch-tokens 1048576 ";
  for (int tp : {1, 2, 8}) {
    INFO("tp " << tp);
    const auto z3 = answer(base + fmt::format("--tp {} --zero 3", tp));
    CHECK(z3["memory_per_chip"]["buffers"].get<double>() == doctest::Approx(2 * layer * 2 / tp + buckets).epsilon(1e-12));
    const auto z1 = answer(base + fmt::format("--tp {} --zero 1", tp));
    CHECK(z1["memory_per_chip"]["buffers"].get<double>() == doctest::Approx(buckets).epsilon(1e-9));
  }
  // The table prints each part by name, the reserve on a GPU only.
  const auto gpu = run(base);
  CHECK(has(gpu.out, "per chip: comm buffers, ZeRO-3 gathers"));
  CHECK(has(gpu.out, "per chip: allocator reserve (fragmentation)"));
  const auto tpu = run("train --model llama3-8b --chip tpu-v5p --slice 4x4x4 --batch-tokens 1048576");
  CHECK(has(tpu.out, "per chip: comm buffers, ZeRO-3 gathers"));
  CHECK_FALSE(has(tpu.out, "allocator reserve"));
}

TEST_CASE("train's min_chips: the whole model's state and the whole batch's activations at once, as labelled") {
  // LLaMA-3 8B by hand: 8,030,261,248 parameters at 2 (bf16 weights) + 2 (bf16 gradients) + 8 (Adam's two
  // fp32 moments) bytes, and D+2F = 4096 + 2·14336 bf16 elements per layer per token, 32 layers, every token
  // of the batch at once.
  const double B = 1048576, params = 8030261248.0;
  const double total = params * 12 + (4096 + 2 * 14336.0) * 2 * 32 * B;
  const double hbm = hbm_bytes("h100");
  const std::string base = "train --model llama3-8b --chip h100 --nodes 4 --batch-tokens 1048576 --tp 8 --pp 4 ";
  const auto one = answer(base + "--microbatches 1");
  CHECK(one["total_bytes"].get<double>() == doctest::Approx(total).epsilon(1e-12));
  CHECK(one["min_chips"].get<double>() == std::ceil(total / hbm));
  // What it assumes, no microbatching: the layout's microbatches shrink its own activations, not min_chips.
  const auto many = answer(base + "--microbatches 32");
  CHECK(many["memory_per_chip"]["activations"].get<double>() < one["memory_per_chip"]["activations"].get<double>());
  CHECK(many["min_chips"] == one["min_chips"]);
  const auto text = run(base + "--microbatches 32");
  CHECK(has(text.out, "total (all the batch's activations at once)"));
  CHECK(has(text.out, "chips whose HBM holds that total"));
  // README's example: a layout with microbatches fits on fewer chips than min_chips counts.
  const auto readme = answer("train --model llama3-70b --chip h100 --nodes 64 --batch-tokens 4194304 --dp 64 --tp 8 "
                             "--microbatches 8");
  CHECK(readme["fits"] == true);
  CHECK(readme["min_chips"].get<double>() > readme["chips"].get<double>());
}

TEST_CASE("refusals lead with the option and its value, then the rule (issue 17's review)") {
  // Each message starts with what the user typed ("scaling: --tp 8: …"), not with the list of inputs.
  const std::string h100 = "--model llama3-8b --chip h100 --batch-tokens 1048576 ";
  for (const char* sub : {"train", "plan"}) {
    const std::string s = sub;
    expect_rejected({
        // Tensor parallelism wider than a node: the node's size and where it came from.
        {s + " " + h100 + "--nodes 2 --gpus-per-node 4 --tp 8",
         "scaling: --tp 8: tensor parallelism stays inside one node (it never crosses InfiniBand), and a node here "
         "has 4 GPUs (--gpus-per-node 4): give --tp 4 or less"},
        {s + " " + h100 + "--nodes 4 --tp 16",
         "scaling: --tp 16: tensor parallelism stays inside one node (it never crosses InfiniBand), and a node here "
         "has 8 GPUs (the h100 preset's node): give --tp 8 or less"},
        {s + " --model llama3-8b --chip tpu-v5p --slice 4x4x4 --pods 2 --batch-tokens 1048576 --tp 128 --dp 1",
         "scaling: --tp 128: tensor parallelism stays inside one slice (it never crosses DCN), and a slice here has "
         "64 chips (--slice 4x4x4): give --tp 64 or less"},
        // The book's model has no pipeline: the remedy, with one degree given or two.
        {s + " " + h100 + "--nodes 1 --cost-model book --pp 2 --tp 2",
         "scaling: --pp 2: the book's cost model has no pipeline (§5.1.4's FSDP × TP): leave --pp out, or use "
         "--cost-model calibrated or ideal"},
    });
  }
  expect_rejected({
      {"train " + h100 + "--nodes 1 --cost-model book --pp 2", "scaling: --pp 2: the book's cost model has no pipeline"},
      {"train " + h100 + "--nodes 16 --pp 64", "scaling: --pp 64: exceeds the 32 layers"},
      // Item 4: one layout (every degree given) takes one --saved rule, said as --zero's list is.
      {"plan " + h100 + "--nodes 8 --dp 8 --tp 8 --saved input,all",
       "scaling: --saved 'input,all': one layout takes one rule (plan searches a list when fewer than two degrees "
       "are given)"},
      {"train " + h100 + "--nodes 1 --saved input,all", "scaling: --saved 'input,all': one layout takes one rule"},
      // A rule that does not parse, and a compute dtype the chip has no peak for (round 10).
      {"train " + h100 + "--nodes 1 --saved 4D+", "scaling: --saved '4D+': a '+' without a term (a saved-activations rule: "},
      {"serve --model llama3-8b --chip tpu-v5e --chips 4 --batch 8 --context 1024 --compute fp8",
       "scaling: --compute 'fp8': chip tpu-v5e has no peak FLOPs/s for that compute dtype (it has bf16, int8)"},
      // The step model's own refusal of a layout: the layout first, the machine last.
      {"train --model llama2-13b --chip tpu-v5p --slice 4x4x4 --batch-tokens 2 --seq 1 --cost-model ideal --tp 2",
       "scaling: dp 32 × tp 2 × pp 1 (--tp '2'): data degree × microbatches = 32 exceeds the batch of 2 tokens (for "},
  });
  // plan's search still takes a list.
  CHECK(run("plan " + h100 + "--nodes 1 --saved input,all --json").exit_code == 0);
}

TEST_CASE("a message naming --seq quotes the length given, or says it is the default (issue 17's review)") {
  // The review saw a message name --seq 4,096 when --seq 8192 was given; no path does that now, and a length
  // the user did not type is called the default.
  const std::string h100 = "--model llama3-8b --chip h100 ";
  struct Case {
    std::string args, given, missing;
  };
  const Case cases[] = {
      {"train " + h100 + "--nodes 1 --batch-tokens 1000000", "--seq 8,192 (122.07031)", "the default --seq 4,096 (244.14062)"},
      {"train " + h100 + "--nodes 1 --batch-tokens 1000 --cost-model book", "one sequence of --seq 8,192",
       "one sequence of the default --seq 4,096"},
      {"plan " + h100 + "--nodes 2 --batch-tokens 32768 --dp 16", "sequences of --seq 8,192 (--batch-tokens 32,768",
       "sequences of the default --seq 4,096 (--batch-tokens 32,768"},
  };
  for (const auto& c : cases) {
    INFO(c.args);
    const auto with = run(c.args + " --seq 8192"), without = run(c.args);
    CHECK(with.exit_code == 1);
    CHECK(has(with.err, c.given));
    CHECK_FALSE(has(with.err, "4,096"));
    CHECK(without.exit_code == 1);
    CHECK(has(without.err, c.missing));
  }
  // The review's command: the book model on two nodes is refused for --nodes, naming what was typed.
  const auto r = run("train --model llama3-8b --chip h100 --nodes 2 --batch-tokens 1000000 --cost-model book --seq 8192");
  CHECK(r.exit_code == 1);
  CHECK(has(r.err, "scaling: --cost-model book with --nodes '2': the book's FSDP × TP model plans one node"));
  CHECK_FALSE(has(r.err, "4,096"));
}

TEST_CASE("train notes a pipeline that idles most of the step, and names the fix") {
  // One microbatch through 8 stages: under 1F1B the bubble is (S-1)/(M+S-1) = 7/8 of compute plus bubble, so of
  // the whole step (which adds collectives and the rest) more than half and at most 87.5 %.
  const std::string run175 = "train --model gpt3-175b --chip a100 --nodes 8 --tp 8 --pp 8 --batch-tokens 131072 --seq 2048 ";
  for (const char* cm : {"calibrated", "ideal"}) {
    INFO(cm);
    const auto j = answer(run175 + "--cost-model " + cm);
    REQUIRE(j.contains("notes"));
    const std::string note = j["notes"][0];
    CHECK(note.find("1 microbatch through 8 stages; more microbatches (a larger batch where each replica's are "
                    "already as small as they go), interleaving (--vp) or fewer stages shrink it") != std::string::npos);
    const double pct = std::stod(note.substr(std::string("the pipeline bubble is ").size()));
    CHECK(note.find(fmt::format("{:.0f}% of the step", pct)) != std::string::npos);
    CHECK(pct > 50);
    CHECK(pct <= 87.5 + 0.5);
    // 64 microbatches: a bubble of 7/71 of compute: no note.
    CHECK_FALSE(answer(run175 + "--microbatches 64 --cost-model " + cm).contains("notes"));
    // plan timing the same layout given whole says the same.
    const auto p = answer("plan --model gpt3-175b --chip a100 --nodes 8 --batch-tokens 131072 --seq 2048 --dp 1 "
                          "--tp 8 --pp 8 --cost-model " + std::string(cm));
    REQUIRE(p.contains("notes"));
    CHECK(p["notes"][0] == j["notes"][0]);
  }
}
