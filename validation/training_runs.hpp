#pragma once
// Published training runs (validation/training-runs.json, and the held-out validation/holdout-runs.json,
// read by the same code) held against the step models: each run's
// model, machine and published layout are built as the run states them (with the file's assumptions for
// what it leaves unstated), the measured step time follows from the printed figures by the run's own
// formula, and book, ideal and calibrated each predict it. Used by the ctest validation_training_runs
// and by the `validation_report` program, which prints the table as JSON.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scaling/cost/planner.hpp"

namespace validation {

struct Prediction {
  std::optional<double> step_s;  // nullopt where the model cannot express the layout (book: pods, pipelines)
  std::string why_not;           // the model's refusal when it cannot
  scaling::Terms terms;
  double error = 0;              // predicted / measured − 1 (0 without a prediction)
};

struct RunResult {
  std::string id, group;        // group: "korthikanti2022", "narayanan2021", "maxtext-v5e"
  std::string chip;             // the chip preset's name ("a100", "tpu-v5e")
  double params_b = 0, chips = 0, slices = 1, dp = 1;
  double measured_step_s = 0;
  std::string measured_formula;
  double measured_mfu = 0;      // 6·N·B / (chips · peak · measured step), the workbook's one MFU
  double file_step_s = 0;       // the file's own derived step time, where it gives one (0 otherwise)
  double hbm_bytes = 0;         // the chip preset's HBM: every published layout ran, so it fit there
  Prediction book, ideal, calibrated;
  // The planner's best layout for the same model, machine, batch and switches under the calibrated model
  // (filled when asked: evaluate_runs(path, true)); its step against the published layout's prediction.
  std::optional<scaling::Planned> planner_best;
  std::string planner_axes;
  // Where the layout overlaps its data-parallel traffic with compute (dp_overlap, ZeRO below 3): the calibrated
  // model's whole data-parallel traffic (its exposed term with the overlap switched off) and how much of it
  // hides (the exposed term's drop with the overlap on and no compute slowdown beside it). The exposed term
  // is then traffic - hidden + overlap_slowdown x hidden. Same lib calls, switches moved: no formula here.
  struct DpSplit {
    double traffic_s = 0, hidden_s = 0, overlap_slowdown = 0;
  };
  std::optional<DpSplit> dp_split;
  // Where a source allows two readings of an unstated input, the row's assumption carries the one the file
  // adopts (`value`) and the other (`other_reading`: its value and why); the calibrated model is evaluated
  // under each other reading too, the published layout otherwise unchanged. Only `zero` may have one today
  // (the Llama 3 rows: one gradient ReduceScatter per step, or one per microbatch).
  struct OtherReading {
    std::string assumption;  // "zero", the one assumption that may have one
    int value = 0;
    std::string why;
    Prediction calibrated;
  };
  std::vector<OtherReading> other_readings;
};

// A what-if for the sensitivity band: the calibrated model with one uncertain input moved to a value
// the evidence allows (the default is the model as published). Never fitted: each value is a published
// or measured alternative named in `why` (sensitivity_variants).
struct Variant {
  std::string name, why;
  double v5e_matmul_ceiling_flops_per_s = 0;  // 0: the model's (the best published v5e GEMM)
  // How the A100's GEMMs are timed: the model's rule (Calculon's a100_80g table, capped at the measured
  // ceiling), Calculon's other A100 system file (a100_80e.json), or the H100's measured shape curve scaled
  // to the A100's ceiling (the rule before Calculon's table was adopted).
  enum class A100Gemm { model, calculon_80e, h100_shape } a100_gemm = A100Gemm::model;
  double backward_gemm_rate_fraction = 1;     // backward GEMMs at this fraction of the forward shape's rate
  bool link_figures = false;                  // collectives at the link figures (no NCCL sweep, no ICI fraction)
  bool narayanan_interleaved_v2 = false;      // Narayanan et al.'s pipelined rows on the interleaved schedule, v = 2
  bool no_tp_overlap = false;                 // every row's TP collectives on the critical path (the rule before round 8)
  double tpu_overlap_slowdown = 0;            // > 0: this compute slowdown beside overlapped collectives on TPUs
  bool maxtext_async_tp = false;              // MaxText rows' TP collectives as XLA's asynchronous backward (async)
};
std::vector<Variant> sensitivity_variants();

// Reads the file (training-runs.json or holdout-runs.json: a run may name its chip preset, hardware.chip,
// its group, and measured_step.kind: "tokens_per_s" for a step of global_batch_tokens / measured.tokens_per_s,
// "tokens_per_s_per_device" for the same over chips × the per-device rate, "tflops_per_device" for the
// printed rate over derived.model_flops_per_token);
// throws std::invalid_argument naming the file, a run and what is missing. With `with_planner`,
// also searches each run's best calibrated layout (seconds, not milliseconds: the report's program only).
// `variant` moves one input of the calibrated prediction (the book and ideal ones are unchanged).
std::vector<RunResult> evaluate_runs(const std::string& path, bool with_planner = false, const Variant& variant = {});

// A measured trend the calibrated model is known not to reproduce: the relative change of the step time
// from one run to another, measured and predicted.
struct UnreproducedTrend {
  std::string trend, from_id, to_id;
  double measured_change = 0, predicted_change = 0;  // step(to) / step(from) − 1
};
// The list (today: the step's growth from 1 to 32 DCN slices for each MaxText model size).
std::vector<UnreproducedTrend> not_reproduced_trends(const std::vector<RunResult>& runs);

// The highest MFU (6·N·B over chips · peak · step, the workbook's one definition) published for a chip:
// the best measured run of that chip in the file, or a published benchmark outside it where higher.
// One record per chip the runs use (lib's scaling::published_mfu_records, cost/calibrated.hpp).
std::vector<scaling::MfuRecord> mfu_records(const std::vector<RunResult>& runs);

// Whether the planner's best layout for a run is one a practitioner would run (issue 17): its predicted
// MFU at most the chip's record, and its predicted speed-up over the published layout at most the record's
// over this run's measured MFU (how much faster than this run anyone has run that chip).
struct BestRealism {
  std::string id;
  double best_mfu = 0, record_mfu = 0, speedup = 0, speedup_bound = 0;
  bool mfu_within = false, speedup_within = false;
};
std::vector<BestRealism> planner_best_realism(const std::vector<RunResult>& runs);

// Memory against the published runs: each ran, so its layout fit in its chip's HBM. Per group, how many the
// calibrated model says do not (its bytes per chip, the allocator's reserve included, above HBM), how many
// do not even on their live bytes (the reserve left out), and the largest live bytes over HBM.
struct MemoryFit {
  std::string group;
  int runs = 0, over = 0, over_live = 0;
  double worst_live_over_hbm = 0;
};
std::vector<MemoryFit> memory_fit(const std::vector<RunResult>& runs);

// The per-run table and the per-group summaries (mean and max |error| of ideal and calibrated) as JSON,
// with the trends not reproduced (where the runs hold the MaxText v5e rows they are about). `source` names
// the file the runs came from.
nlohmann::json runs_json(const std::vector<RunResult>& runs,
                         const std::string& source = "validation/training-runs.json");

// Mean and max |error| of the calibrated model over the runs under each sensitivity variant, as JSON; with
// `holdout_path`, the same over the held-out runs (all, and per group) beside it.
nlohmann::json sensitivity_json(const std::string& path, const std::string& holdout_path = "");

}  // namespace validation
