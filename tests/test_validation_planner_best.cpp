// The planner's best calibrated layout for each of the 44 published runs (validation/training-runs.json),
// held to what real runs reach (issue 17: "plan's best layout is one a practitioner would run"):
//   1. its predicted MFU is at most the highest MFU published for that chip: the best measured run of the
//      chip in the file, or MosaicML's llm-foundry MPT-3B row at sequence 512 on A100 (a hold-out row, the
//      best A100 run held in validation/), derived below from the row's printed throughput and parameter
//      count, on the workbook's 6·N basis;
//   2. its predicted speed-up over the published layout is at most record MFU / the run's measured MFU: no
//      more than the fastest published run of that chip was faster than this run. Both steps of the
//      speed-up come from the same model, so this check holds even where the model is biased on a run.
// The runs whose best is beyond either bound today are listed below, each with the check it fails, and the
// test holds the list exactly: a model change that brings a run within the bounds, or takes one out, fails
// here until the list (and validation/README.md) says so.
// The records and the measured MFUs are derived here from the printed figures, not from the model; the
// bounds validation_report prints for the report's appendix must agree with them.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "scaling/hardware/chip.hpp"
#include "training_runs.hpp"

namespace {

const std::vector<validation::RunResult>& planned_runs() {
  static const auto r = validation::evaluate_runs(VALIDATION_RUNS_JSON, /*with_planner=*/true);
  return r;
}

// mosaicml/llm-foundry, scripts/train/benchmarking/README.md at commit 8c8dd48f72168c5d51e2f7b151595892a8fba43d,
// "A100 80GB" table, row "3b | 512 | 8 | a100_80gb" (amp_bf16): Throughput (T/s/GPU) 12127, NumParams 2647905280.
double llm_foundry_a100_record() {
  const double tokens_per_s_per_gpu = 12127, params = 2647905280;
  return 6 * params * tokens_per_s_per_gpu / scaling::chip("a100").bf16_flops_per_s;
}

// The runs whose planner's best is beyond a bound today, and which bound ("mfu", "speedup" or "both"):
// 26 of the 44, so issue 17's "a layout a practitioner would run" is NOT met yet.
// A100 (5 runs: 4 by MFU alone, 1 by the speed-up): the A100's GEMMs at Calculon's table
// capped at stas00's measured best make every large layer run near 271 TFLOP/s; the model predicts most of
// these published steps 8-15 % too fast, and the best (often no recompute, many microbatches,
// interleaving, ZeRO-3 over InfiniBand) inherits that optimism.
// TPU v5e (21 runs): the best reruns only attention where the published runs rerun every layer, splitting
// the batch into microbatches under ZeRO-3,
// re-gathering the weights per microbatch behind compute. No measurement of what overlapped collectives
// cost a TPU's compute was found (the GPU figure is not applied to it: validation/README.md, sensitivity).
const std::map<std::string, std::string>& beyond_bounds() {
  static const std::map<std::string, std::string> m = {
      {"narayanan2021-t1-18.4B", "speedup"},
      {"narayanan2021-t1-39.1B", "mfu"},
      {"korthikanti2022-t5-530B-seqsel", "mfu"},
      {"korthikanti2022-t5-1T-seqsel", "mfu"},
      {"korthikanti2022-530B-dp8-seqsel", "mfu"},
      {"maxtext-v5e-16B-1x-v5e-256", "both"},
      {"maxtext-v5e-32B-1x-v5e-256", "both"},
      {"maxtext-v5e-128B-1x-v5e-256", "speedup"},
      {"maxtext-v5e-16B-2x-v5e-256", "both"},
      {"maxtext-v5e-32B-2x-v5e-256", "both"},
      {"maxtext-v5e-128B-2x-v5e-256", "both"},
      {"maxtext-v5e-16B-4x-v5e-256", "both"},
      {"maxtext-v5e-32B-4x-v5e-256", "both"},
      {"maxtext-v5e-128B-4x-v5e-256", "both"},
      {"maxtext-v5e-16B-8x-v5e-256", "both"},
      {"maxtext-v5e-32B-8x-v5e-256", "both"},
      {"maxtext-v5e-64B-8x-v5e-256", "both"},
      {"maxtext-v5e-128B-8x-v5e-256", "both"},
      {"maxtext-v5e-16B-16x-v5e-256", "both"},
      {"maxtext-v5e-32B-16x-v5e-256", "both"},
      {"maxtext-v5e-64B-16x-v5e-256", "mfu"},
      {"maxtext-v5e-128B-16x-v5e-256", "speedup"},
      {"maxtext-v5e-16B-32x-v5e-256", "both"},
      {"maxtext-v5e-32B-32x-v5e-256", "both"},
      {"maxtext-v5e-64B-32x-v5e-256", "mfu"},
      {"maxtext-v5e-128B-32x-v5e-256", "speedup"},
  };
  return m;
}

}  // namespace

TEST_CASE("validation_planner_best: within the published MFU record and speed-up bound, except the listed runs") {
  const auto& runs = planned_runs();
  REQUIRE(runs.size() == 44);
  // The records, from the measured runs and the llm-foundry row.
  std::map<std::string, double> record;
  for (const auto& r : runs) record[r.chip] = std::max(record[r.chip], r.measured_mfu);
  REQUIRE(record.count("a100") == 1);
  REQUIRE(record.count("tpu-v5e") == 1);
  record["a100"] = std::max(record["a100"], llm_foundry_a100_record());
  // The row is transcribed right: its own MFU formula (README 'MFU': 6·N plus 3 · n_layers · 4 · d_model ·
  // seq attention FLOPs per token; MPT-3B has 32 layers of width 2,560, scripts/train/yamls/pretrain/
  // mpt-3b.yaml) gives its printed 63.71 % from the same throughput, to the throughput's printed digits.
  {
    const double attention_per_token = 3.0 * 32 * 4 * 2560 * 512;
    const double row_mfu = llm_foundry_a100_record() * (6 * 2647905280.0 + attention_per_token) / (6 * 2647905280.0);
    CHECK(row_mfu == doctest::Approx(0.6371).epsilon(0.0005));
  }

  std::map<std::string, std::string> beyond;
  const auto printed = validation::planner_best_realism(runs);
  REQUIRE(printed.size() == runs.size());
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto& r = runs[i];
    CAPTURE(r.id);
    REQUIRE(r.planner_best.has_value());
    REQUIRE(r.calibrated.step_s.has_value());
    const auto& best = r.planner_best->terms;
    // The search finds the published layout or a faster one (the published layout is in its space).
    const double speedup = *r.calibrated.step_s / best.step_s;
    CHECK(speedup >= 1 - 1e-9);
    const double bound = record[r.chip] / r.measured_mfu;
    const bool mfu_ok = best.mfu <= record[r.chip], speedup_ok = speedup <= bound;
    if (!mfu_ok || !speedup_ok) beyond[r.id] = !mfu_ok && !speedup_ok ? "both" : !mfu_ok ? "mfu" : "speedup";
    // What validation_report prints for the appendix is this derivation.
    CHECK(printed[i].id == r.id);
    CHECK(printed[i].record_mfu == doctest::Approx(record[r.chip]));
    CHECK(printed[i].speedup_bound == doctest::Approx(bound));
    CHECK(printed[i].mfu_within == mfu_ok);
    CHECK(printed[i].speedup_within == speedup_ok);
  }
  for (const auto& [id, which] : beyond) {
    CAPTURE(id);
    CAPTURE(which);
    const auto it = beyond_bounds().find(id);
    CHECK_MESSAGE(it != beyond_bounds().end(), "a run newly beyond a bound");
    if (it != beyond_bounds().end()) CHECK(it->second == which);
  }
  for (const auto& [id, which] : beyond_bounds()) {
    CAPTURE(id);
    CHECK_MESSAGE(beyond.count(id) == 1, "a listed run is now within its bounds: take it off the list");
  }
}
