// The calibrated step model against published training runs it was not built on
// (validation/holdout-runs.json: MosaicML llm-foundry's MPT benchmarks on H100 and A100 under FSDP, MaxText
// on TPU v5p, Llama 3 405B on H100 (Dubey et al. 2024, Table 4) and torchtitan's Llama 3.1 8B on power-capped
// H100s). None of these rows is in training-runs.json and none was compared with the model while it was built;
// no constant is fitted to them. The model was not frozen for the whole hold-out, though: three lib/ changes
// followed its first run (see kGuard), the last prompted by the Llama 3 rows, which are no longer clean; and
// later, with the published attention rates, the llm-foundry rows' attention kernel was corrected.
//
// This is a regression guard, not an accuracy target (the hold-out misses issue 17's targets by far on GPUs:
// validation/README.md says where and why). The thresholds are what the model reached per group when
// they were last set (calibrated mean and max |error|, rounded up to 0.1 %), plus 2 percentage points, so a
// model change that moves the hold-out the wrong way fails here; one that improves it should lower them. The
// test also fails when any row cannot be evaluated.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "scaling/cost/calibrated.hpp"
#include "training_runs.hpp"
#include "validation_readme.hpp"

namespace {

const std::vector<validation::RunResult>& holdout() {
  static const auto r = validation::evaluate_runs(VALIDATION_HOLDOUT_JSON);
  return r;
}

// The guard per group: {mean |error| reached + 0.02, max |error| reached + 0.02}, as the model stands after
// this hold-out was first run on the frozen model (A100 and H100 llm-foundry 22.2 / 37.4 %, v5p 9.6 %,
// Llama 3 89.3 %, torchtitan 50.0 % mean) and three later changes made for their own reasons: sourced
// matmul rates (the A100's GEMMs by Calculon's table: llm-foundry A100 rows worse), the GPU overlap
// slowdown, and ZeRO-2's per-microbatch ReduceScatters hidden behind every microbatch's backward (an
// inconsistency the Llama 3 rows exposed, so those two rows are no longer a clean hold-out). Then, after an
// outside review, the Llama 3 rows' schedule went from 1F1B to interleaved with v = 2 (the paper states an
// interleaved schedule; its Figure 6 draws 2 stages per rank): Llama 3 60.4 / 71.4 % -> 36.8 / 40.6 %. And
// the 34 bf16 llm-foundry rows of mpt-125m, -350m and -760m, first dropped for a wrong reason (their yamls
// exist), were added: llm-foundry A100 28.7 / 54.4 % -> 32.7 / 60.5 %, H100 35.6 / 71.2 % -> 37.1 / 71.2 %.
// Then collectives in a GPU node at NCCL's published bus bandwidth by payload (made for the A100 runs of
// training-runs.json): Llama 3 (8-way tensor groups on H100) 36.8 / 40.6 % -> 39.2 / 43.2 %.
// Then the flash kernels were timed at their published rates (attention_rates.hpp) instead of the matmul
// ceiling, and the llm-foundry rows' attention assumption was corrected to the kernel each table ran
// (attn_impl 'triton': flash1, except the large-scale 1b/3b/7b/70b rows, FlashAttention-2), a fact about the
// runs found after their predictions had been seen (validation/README.md, "Held-out runs"): llm-foundry
// A100 32.6 / 60.5 % -> 9.4 / 33.4 %, H100 37.0 / 71.1 % -> 15.6 / 36.8 %, torchtitan 48.6 / 52.7 % ->
// 37.0 / 42.1 %, MaxText v5p unchanged (no TPU rate is published), Llama 3 39.2 / 43.2 % -> 42.1 / 46.4 %
// (both changes together: llm-foundry A100 9.1 / 33.1 %, H100 15.3 / 36.6 %, torchtitan 36.7 / 41.9 %, Llama 3 42.0 / 46.3 %).
// Round 8's Megatron-LM changes (made for the calibration runs): llm-foundry A100 8.6 / 31.3 %. Round 9: the
// Llama 3 rows' other reading (one gradient ReduceScatter a step) is evaluated beside the rule, not adopted
// (validation/README.md, "Held-out runs"); the rule's figures stay.
const std::map<std::string, std::pair<double, double>> kGuard = {
    {"llm-foundry-a100", {0.086 + 0.02, 0.313 + 0.02}},
    {"llm-foundry-h100", {0.153 + 0.02, 0.366 + 0.02}},
    {"maxtext-v5p", {0.096 + 0.02, 0.348 + 0.02}},
    {"llama3-405b", {0.420 + 0.02, 0.463 + 0.02}},
    {"torchtitan-h100-500w", {0.367 + 0.02, 0.419 + 0.02}},
};

}  // namespace

TEST_CASE("validation_holdout_runs") {
  REQUIRE(holdout().size() == 153);
  std::map<std::string, double> sum, worst, n;
  for (const auto& r : holdout()) {
    CAPTURE(r.id);
    // Every row evaluates under the book-free models (no row is skipped from the means).
    REQUIRE(r.ideal.step_s.has_value());
    REQUIRE(r.calibrated.step_s.has_value());
    REQUIRE(kGuard.count(r.group) == 1);
    // The ideal model is a lower bound: every held-out run took longer than it says.
    CHECK(r.ideal.error < 0);
    const double e = std::abs(r.calibrated.error);
    sum[r.group] += e, n[r.group] += 1;
    worst[r.group] = std::max(worst[r.group], e);
  }
  for (const auto& [group, guard] : kGuard) {
    CAPTURE(group);
    REQUIRE(n[group] > 0);
    MESSAGE(group << ": calibrated mean |error| " << 100 * sum[group] / n[group] << " %, max " << 100 * worst[group] << " %");
    CHECK(sum[group] / n[group] <= guard.first);
    CHECK(worst[group] <= guard.second);
  }
}

TEST_CASE("validation_holdout_runs: the Llama 3 rows under both readings of their gradient reduce") {
  // The file keeps one ReduceScatter per microbatch (ZeRO-2) and evaluates one per step of the gradients
  // accumulated in fp32 (ZeRO-1 traffic) as the assumption's other_reading. The other reading must be the row
  // evaluated with zero = 1, and the two readings' data-parallel traffic must stand as the counts say:
  // ZeRO-2 reduce-scatters the fp32 gradients (G) after each of the m microbatches and gathers the bf16
  // weights (G/2) once: (m + 1/2) G; ZeRO-1 reduce-scatters them once and gathers the updated bf16 weights
  // once: (1 + 1/2) G. Their ratio is (m + 1/2) / (3/2), with m the file's batch per DP group (one sequence
  // each).
  std::ifstream in(VALIDATION_HOLDOUT_JSON);
  REQUIRE(in);
  auto file = nlohmann::json::parse(in);
  std::map<std::string, double> m;
  for (auto& row : file.at("runs")) {
    if (row.at("group") != "llama3-405b") continue;
    m[row.at("id")] = row.at("parallelism").at("batch_per_dp").get<double>();
    auto& zero = row.at("assumptions").at("zero");
    REQUIRE(zero.at("value") == 2);
    REQUIRE(zero.at("other_reading").at("value") == 1);
    zero = {{"value", 1}, {"why", "the other reading, for this test"}};
  }
  REQUIRE(m.size() == 2);
  // A file of this test's own (the process id keeps parallel runs apart), removed however the test ends.
  const std::string path = fmt::format("holdout-llama3-zero1-{}.json", static_cast<long>(getpid()));
  struct Remove {
    std::string p;
    ~Remove() { std::remove(p.c_str()); }
  } cleanup{path};
  std::ofstream(path) << file.dump();
  const auto swapped = validation::evaluate_runs(path);
  int checked = 0;
  for (const auto& r : holdout()) {
    if (r.group != "llama3-405b") continue;
    CAPTURE(r.id);
    REQUIRE(r.other_readings.size() == 1);
    const auto& o = r.other_readings.front();
    CHECK(o.assumption == "zero");
    CHECK(o.value == 1);
    const auto it = std::find_if(swapped.begin(), swapped.end(), [&](const auto& s) { return s.id == r.id; });
    REQUIRE(it != swapped.end());
    REQUIRE(o.calibrated.step_s.has_value());
    CHECK(*o.calibrated.step_s == doctest::Approx(*it->calibrated.step_s).epsilon(1e-12));
    REQUIRE(r.dp_split.has_value());
    REQUIRE(it->dp_split.has_value());
    CHECK(r.dp_split->traffic_s / it->dp_split->traffic_s == doctest::Approx((m.at(r.id) + 0.5) / 1.5).epsilon(1e-9));
    ++checked;
  }
  CHECK(checked == 2);
}

TEST_CASE("validation_holdout_runs: one row's attention time by hand from the printed kernel figure") {
  // foundry-a100-mpt7b-s8192-g8: MPT-7B (32 layers, 32 heads of 128: scripts/train/yamls/pretrain/mpt-7b.yaml),
  // 8192-token sequences, 1,048,576 tokens a step on 8 A100s (llm-foundry's README at 8c8dd48, A100 80GB
  // table), attn_impl 'triton' timed as FlashAttention-1: causal forward + backward at head dim 128 and 8k,
  // 80 TFLOP/s (Dao-AILab/flash-attention 4f285b35, assets/flash2_a100_fwd_bwd_benchmark.png, panel (d)).
  // Per GPU and step: 131,072 tokens, each query attending (s + 1)/2 keys on average, 4·128 FLOPs per pair
  // and head forward, 3.5× that forward + backward.
  const double a100_s = 3.5 * 4 * 128 * (1048576.0 / 8) * 32 * (8192 + 1) / 2 * 32 / 80e12;
  // foundry-h100-mpt70b-s2048-g128-ls: MPT-70B (80 layers, 64 heads of 128), 2048 tokens, 2,097,152 tokens a
  // step on 128 H100s (the large-scale table), FlashAttention-2: 265 TFLOP/s at head dim 128 and 2k
  // (same commit, assets/flash2_h100_fwd_bwd_benchmark.png, panel (d)).
  const double h100_s = 3.5 * 4 * 128 * (2097152.0 / 128) * 64 * (2048 + 1) / 2 * 80 / 265e12;
  int found = 0;
  for (const auto& r : holdout()) {
    if (r.id == "foundry-a100-mpt7b-s8192-g8") {
      CHECK(r.calibrated.terms.calibrated.t_attention_s == doctest::Approx(a100_s).epsilon(1e-9));
      ++found;
    }
    if (r.id == "foundry-h100-mpt70b-s2048-g128-ls") {
      CHECK(r.calibrated.terms.calibrated.t_attention_s == doctest::Approx(h100_s).epsilon(1e-9));
      ++found;
    }
  }
  CHECK(found == 2);
}

TEST_CASE("validation_holdout_runs: the measured step gives back the source's printed figures") {
  // Each source prints a utilisation beside its throughput. The step the model is held against comes from
  // the throughput (training_runs.cpp); from that step, the row's printed or derived model size and the
  // source's own FLOP count, the printed utilisation must come back to its printed digits. This checks the
  // step formula and the parsed columns together, by a count written here and not in the evaluator.
  std::ifstream in(VALIDATION_HOLDOUT_JSON);
  REQUIRE(in);
  const auto file = nlohmann::json::parse(in);
  std::map<std::string, double> step;
  for (const auto& r : holdout()) step[r.id] = r.measured_step_s;
  int checked = 0;
  for (const auto& row : file.at("runs")) {
    const std::string id = row.at("id");
    const std::string group = row.at("group");
    CAPTURE(id);
    const auto& m = row.at("model");
    const double L = m.at("layers"), d = m.at("hidden"), s = m.at("seq");
    const double tokens = row.at("parallelism").at("global_batch_tokens");
    const double chips = row.at("hardware").at("count");
    const double flops_per_s_per_chip = [&] {
      if (group.rfind("llm-foundry", 0) == 0) {
        // llm-foundry's collect_results.py: (6 N + 12 L d s) per token, N its printed parameter count.
        const double N = m.at("params_printed");
        return (6 * N + 12 * L * d * s) * tokens / step.at(id) / chips;
      }
      if (group == "maxtext-v5p" || group == "llama3-405b") {
        // MaxText's train.py at the pinned commit (6 N + 6 H L hd s) and PaLM's count for Llama 3
        // (6 N + 12 H L hd s), N counted here from the shapes: no biases, RMSNorm scales, embeddings.
        const double H = m.at("heads"), K = m.at("kv_heads"), hd = m.at("head_dim"), F = m.at("ffn_hidden");
        const double V = m.at("vocab");
        const bool llama = group == "llama3-405b";
        const double N = (llama ? 2 : 1) * V * d + L * (2 * d * H * hd + 2 * d * K * hd + (llama ? 3 : 2) * d * F + 2 * d) + d;
        return (6 * N + (llama ? 12 : 6) * H * L * hd * s) * tokens / step.at(id) / chips;
      }
      return 0.0;
    }();
    if (group.rfind("llm-foundry", 0) == 0) {
      const double peak = row.at("hardware").at("chip") == "h100" ? 989e12 : 312e12;
      CHECK(100 * flops_per_s_per_chip / peak == doctest::Approx(row.at("measured").at("mfu").get<double>()).epsilon(0.01));
      ++checked;
    } else if (group == "maxtext-v5p" || group == "llama3-405b") {
      // The printed TFLOP/s per chip, to its three digits.
      CHECK(flops_per_s_per_chip / 1e12 ==
            doctest::Approx(row.at("measured").at("tflops_per_device").get<double>()).epsilon(0.002));
      ++checked;
    } else {
      // torchtitan prints tokens per second per GPU and no utilisation: the step must give it back.
      CHECK(tokens / step.at(id) / chips ==
            doctest::Approx(row.at("measured").at("tokens_per_s_per_device").get<double>()).epsilon(1e-9));
      ++checked;
    }
  }
  CHECK(checked == static_cast<int>(holdout().size()));
}

TEST_CASE("validation README: the hold-out table is validation_report's") {
  // validation/README.md prints the hold-out summary; each row must read what runs_json computes, to its digits.
  const std::string text = validation_readme();
  REQUIRE(!text.empty());
  const auto summary = validation::runs_json(holdout(), "validation/holdout-runs.json").at("summary");
  for (const auto& [group, v] : summary.items()) {
    const std::string row = fmt::format("| {} | {} | {:.1f} % | {:.1f} % | {:.1f} % | {:.1f} % |", group,
                                        v.at("runs").get<double>(), 100 * v.at("ideal_mean_abs_error").get<double>(),
                                        100 * v.at("ideal_max_abs_error").get<double>(),
                                        100 * v.at("calibrated_mean_abs_error").get<double>(),
                                        100 * v.at("calibrated_max_abs_error").get<double>());
    CAPTURE(row);
    CHECK(text.find(row) != std::string::npos);
  }
}

TEST_CASE("the MFU records train and plan warn against are the highest measured MFU of the runs held here") {
  // lib's published_mfu_records() computes each from one row's printed throughput and parameter count;
  // here the same figure comes from every run of validation/ (its model built from its config, its measured
  // step from its printed figures): the record must be the highest of its chip's runs.
  auto runs = validation::evaluate_runs(VALIDATION_RUNS_JSON, false);
  const auto& held = holdout();
  runs.insert(runs.end(), held.begin(), held.end());
  for (const auto& rec : scaling::published_mfu_records()) {
    CAPTURE(rec.chip);
    double best = 0;
    for (const auto& r : runs)
      if (r.chip == rec.chip) best = std::max(best, r.measured_mfu);
    CHECK(rec.mfu == doctest::Approx(best).epsilon(0.005));
  }
}
