// validation_report [training.json [holdout.json]]: every run of validation/training-runs.json against the
// book, ideal and calibrated step models, as one JSON object (per run: measured step, the three predictions,
// their errors and terms, and the planner's best calibrated layout for the same run; per group: mean and max
// |error|) for the report's appendix; with the trends the model does not reproduce, the sensitivity band
// (mean and max |error| with one uncertain input moved, validation::sensitivity_variants), and under
// "holdout" the same table for validation/holdout-runs.json (runs held out from the model; no planner search).
#include <fstream>
#include <iostream>

#include "training_runs.hpp"

int main(int argc, char** argv) {
  try {
    const std::string path = argc > 1 ? argv[1] : VALIDATION_RUNS_JSON;
    const std::string holdout = argc > 2 ? argv[2] : VALIDATION_HOLDOUT_JSON;
    auto out = validation::runs_json(validation::evaluate_runs(path, /*with_planner=*/true));
    out["sensitivity"] = validation::sensitivity_json(path, holdout);
    out["holdout"] = validation::runs_json(validation::evaluate_runs(holdout), "validation/holdout-runs.json");
    // The published rows the file leaves out, with the reason (a feature the model lacks).
    std::ifstream in(holdout);
    const auto file = nlohmann::json::parse(in);
    out["holdout"]["not_evaluated"] = file.value("not_evaluated", nlohmann::json::array());
    std::cout << out.dump(1) << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "validation_report: " << e.what() << "\n";
    return 1;
  }
}
