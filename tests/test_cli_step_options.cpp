// `scaling train` and `scaling plan` as a practitioner reads them (round 8's review): each --help states
// what its own subcommand does with an option left out, and each claim is held against what the search
// does (its configs_evaluated counts); options a cost model does not read are named in the answer and
// change nothing in it; memory per chip is a list of named parts that sum to the total, two of them
// checked against the figures the calibrated model documents; min_chips holds what its label says.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_run.hpp"

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

TEST_CASE("ignored_options: what the cost model does not read is said in the answer, and changes nothing in it") {
  const std::string gpu = "--model llama3-8b --chip h100 --nodes 1 --batch-tokens 1048576 ";
  // The calibrated model reads every switch: nothing ignored, and a switch changes the step.
  const auto cal = answer("train " + gpu + "--sp yes --attention materialized --tp 8");
  CHECK(cal["ignored_options"] == nlohmann::json::array());
  CHECK(cal["step_s"] != answer("train " + gpu + "--tp 8")["step_s"]);
  CHECK(answer("plan " + gpu + "--max-microbatches 2")["ignored_options"] == nlohmann::json::array());

  // The ideal model: the switches are named, and the answer is the one without them.
  const std::string switches = "--sp yes --schedule 1f1b --tp-overlap yes --dp-overlap no --attention materialized";
  const auto ideal = answer("train " + gpu + "--tp 8 --cost-model ideal " + switches);
  CHECK(ideal["ignored_options"] ==
        nlohmann::json({"--schedule", "--sp", "--tp-overlap", "--dp-overlap", "--attention"}));
  const auto ideal_plain = answer("train " + gpu + "--tp 8 --cost-model ideal");
  CHECK(ideal_plain["ignored_options"] == nlohmann::json::array());
  CHECK(ideal["step_s"] == ideal_plain["step_s"]);
  CHECK(ideal["bytes_per_chip"] == ideal_plain["bytes_per_chip"]);
  // --zero and --microbatches the ideal model reads: not listed, and they change the answer.
  const auto ideal_zero = answer("train " + gpu + "--cost-model ideal --zero 1 --microbatches 4");
  CHECK(ideal_zero["ignored_options"] == nlohmann::json::array());
  CHECK(ideal_zero["bytes_per_chip"] != answer("train " + gpu + "--cost-model ideal")["bytes_per_chip"]);

  // The book model: ZeRO-3 over the whole batch at once, whatever --zero and --microbatches say; the layout
  // printed is the one it timed.
  const auto book = answer("train " + gpu + "--cost-model book --zero 1 --microbatches 4 --vp 1");
  CHECK(book["ignored_options"] == nlohmann::json({"--microbatches", "--zero", "--vp"}));
  const auto book_plain = answer("train " + gpu + "--cost-model book");
  CHECK(book["step_s"] == book_plain["step_s"]);
  CHECK(book["bytes_per_chip"] == book_plain["bytes_per_chip"]);
  CHECK(book["zero"] == 3);
  CHECK(book["microbatches"] == 1);
  // plan: --max-microbatches too (the book's search has one microbatch).
  const auto plan_book = answer("plan " + gpu + "--cost-model book --max-microbatches 4 --sp no");
  CHECK(plan_book["ignored_options"] == nlohmann::json({"--sp", "--max-microbatches"}));
  CHECK(plan_book["configs_evaluated"] == answer("plan " + gpu + "--cost-model book")["configs_evaluated"]);

  // The text: one line naming them, on stdout; nothing on stderr (an answer, not a warning).
  for (const char* sub : {"train", "plan"}) {
    const auto t = run(std::string(sub) + " " + gpu + "--tp 8 --cost-model ideal --sp yes --attention flash1");
    REQUIRE(t.exit_code == 0);
    CHECK(t.err.empty());
    CHECK(has(t.out, "note: the ideal cost model ignores --sp, --attention:"));
    const auto plain = run(std::string(sub) + " " + gpu + "--tp 8 --cost-model ideal");
    CHECK_FALSE(has(plain.out, "ignores"));
  }
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
  CHECK(has(gpu.out, "per chip: comm buffers (and ZeRO-3's gathered layers)"));
  CHECK(has(gpu.out, "per chip: allocator reserve (fragmentation)"));
  const auto tpu = run("train --model llama3-8b --chip tpu-v5p --slice 4x4x4 --batch-tokens 1048576");
  CHECK(has(tpu.out, "per chip: comm buffers (and ZeRO-3's gathered layers)"));
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
