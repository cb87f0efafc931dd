// The serving validation table (validation/serving-runs.json): every published decode or prefill
// measurement evaluated with the three serving cost models (cost/inference.hpp: book, ideal, calibrated),
// its error (predicted time / measured time − 1), and with --check the calibrated model held to the targets
// the JSON file states. --out writes the per-run results as JSON for the report.
//
//   serving_runs validation/serving-runs.json [--out results.json] [--check]
//
// A run generates `output_len` tokens for `batch` prompts of `prompt_len` tokens: the prefill of the whole
// batch (whose last position gives the first token), then output_len − 1 decode steps whose new token
// attends to prompt_len + i cached tokens (i = 1 … output_len − 1). The metrics:
//   tokens_per_s_per_sequence     output_len / (prefill + decode)          (batch 1: "tokens/s")
//   output_tokens_per_s_per_gpu   batch · output_len / ((prefill + decode) · GPUs)
//   latency_s                     prefill + decode
//   ttft_s                        prefill
// Each figure is also kept as its source prints it (`measured.printed`, in `measured.printed_unit` where that
// is not the metric's own, e.g. a latency logged in ms): the report shows that text, and a run whose printed
// figure does not give back its value is refused (printed_value).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "scaling/cost/inference.hpp"
#include "scaling/cost/serving_calibration.hpp"
#include "scaling/hardware/chip.hpp"
#include "scaling/model/presets.hpp"

using namespace scaling;
using nlohmann::json;

namespace {

TransformerConfig model_of(const json& m) {
  if (m.is_string()) return model(m.get<std::string>());
  TransformerConfig c = from_hf_config(m.at("hf_config").dump(), m.value("name", "config"));
  c.name = m.value("name", c.name);
  return c;
}

// The model as the report names it: a preset by its title (presets.hpp), a config by the name the file gives it.
std::string model_title(const json& m) {
  if (m.is_string()) {
    for (const auto& p : model_presets())
      if (p.key == m.get<std::string>()) return std::string(p.title);
  }
  return model_of(m).name;
}

// Whether `text` is a number as a source prints one: digits, with a thousands separator only between groups of
// three ("19,258", not "1,92"), then at most one decimal part ("14.57"). (Written out: GCC 12 warns falsely
// inside std::regex under the sanitizer build's -Werror.)
bool is_printed_number(const std::string& text) {
  const size_t dot = text.find('.');
  const std::string whole = text.substr(0, dot), fraction = dot == std::string::npos ? "" : text.substr(dot + 1);
  const auto digits = [](const std::string& s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (dot != std::string::npos && !digits(fraction)) return false;
  size_t start = 0, group = 0;
  while (true) {
    const size_t comma = whole.find(',', start);
    const std::string part = whole.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!digits(part) || (group > 0 && part.size() != 3) || (group == 0 && comma != std::string::npos && part.size() > 3))
      return false;
    if (comma == std::string::npos) return true;
    start = comma + 1, ++group;
  }
}

// The value a run's printed figure states, in the metric's unit: the digits as printed (a thousands separator
// allowed only between groups of three, "19,258"), scaled from `printed_unit` (only "ms", for a time metric).
// Throws naming the run where the text is not a number or does not give back `measured.value`.
double printed_value(const json& run) {
  const std::string id = run.value("id", "?");
  const json& m = run.at("measured");
  if (!m.contains("printed") || !m.at("printed").is_string())
    throw std::invalid_argument("run " + id + ": measured.printed (the figure as its source prints it) is missing");
  const std::string text = m.at("printed");
  if (!is_printed_number(text))
    throw std::invalid_argument("run " + id + ": measured.printed '" + text + "' is not a printed number");
  std::string digits;
  for (char c : text)
    if (c != ',') digits += c;
  double scale = 1;
  const std::string unit = m.value("printed_unit", "");
  const std::string metric = m.at("metric");
  if (unit == "ms" && (metric == "latency_s" || metric == "ttft_s")) scale = 1e-3;
  else if (!unit.empty())
    throw std::invalid_argument("run " + id + ": measured.printed_unit '" + unit + "' does not convert to " + metric);
  const double printed = std::stod(digits) * scale, value = m.at("value");
  if (!(std::fabs(printed - value) <= 1e-12 * std::fabs(value)))
    throw std::invalid_argument(fmt::format("run {}: measured.printed '{}'{} is {} in the metric's unit, not its value {}",
                                            id, text, unit.empty() ? std::string() : fmt::format(" ({})", unit),
                                            printed, value));
  return printed;
}

// The run's time under one cost model, and the measured quantity's time equivalent.
struct Timing {
  double prefill_s = 0, decode_s = 0;
  double total_s() const { return prefill_s + decode_s; }
};
Timing predict(const DecodeInputs& in, double batch, double prompt, double output, CostModel cm) {
  Timing t;
  t.prefill_s = prefill_terms(in, batch, prompt, cm).step_s;
  for (double i = 1; i < output; ++i) t.decode_s += decode_terms(in, batch, prompt + i, cm).step_s;
  return t;
}

// The measured figure as a time, comparable with the prediction: throughputs turned into the time they imply.
double measured_time_s(const json& run) {
  const std::string metric = run.at("measured").at("metric");
  const double v = run.at("measured").at("value"), B = run.at("batch"), G = run.at("output_len"), N = run.at("gpus");
  if (metric == "tokens_per_s_per_sequence") return G / v;
  if (metric == "output_tokens_per_s_per_gpu") return B * G / (v * N);
  if (metric == "latency_s" || metric == "ttft_s") return v;
  throw std::invalid_argument("run " + run.value("id", "?") + ": unknown metric '" + metric + "'");
}

double predicted_time_s(const json& run, const Timing& t) {
  return run.at("measured").at("metric") == "ttft_s" ? t.prefill_s : t.total_s();
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc < 2) throw std::invalid_argument("usage: serving_runs FILE.json [--out RESULTS.json] [--check]");
    std::string out_path;
    bool check = false;
    for (int i = 2; i < argc; ++i) {
      const std::string a = argv[i];
      if (a == "--check") check = true;
      else if (a == "--out" && i + 1 < argc) out_path = argv[++i];
      else throw std::invalid_argument("unknown argument '" + a + "'");
    }
    std::ifstream f(argv[1]);
    if (!f) throw std::invalid_argument(std::string("cannot read ") + argv[1]);
    const json doc = json::parse(f);
    json results = json::array();
    const CostModel models[] = {CostModel::book, CostModel::ideal, CostModel::calibrated};
    double sum_abs[3] = {0, 0, 0}, max_abs[3] = {0, 0, 0};
    fmt::print("{:<38} {:>9} {:>9} {:>9} {:>9}   {:>9} {:>9} {:>9}\n", "run", "measured", "book", "ideal",
               "calibr.", "err book", "err ideal", "err cal.");
    for (const json& run : doc.at("runs")) {
      const TransformerConfig cfg = model_of(run.at("model"));
      const InferenceDtypes d{parse_dtype(run.at("weights").get<std::string>()), parse_dtype(run.at("kv").get<std::string>()),
                              parse_dtype(run.at("compute").get<std::string>())};
      const DecodeInputs in = decode_inputs(cfg, chip(run.at("chip").get<std::string>()), run.at("gpus").get<double>(), d);
      const double B = run.at("batch"), P = run.at("prompt_len"), G = run.at("output_len");
      const double measured = measured_time_s(run);
      printed_value(run);
      json r{{"id", run.at("id")}, {"model", model_title(run.at("model"))}, {"chip", run.at("chip")},
             {"gpus", run.at("gpus")}, {"batch", run.at("batch")}, {"metric", run.at("measured").at("metric")},
             {"measured_value", run.at("measured").at("value")},
             {"measured_printed", run.at("measured").at("printed")},
             {"measured_printed_unit", run.at("measured").value("printed_unit", "")},
             {"measured_time_s", measured}, {"source", run.at("source").at("url")}};
      std::string line = fmt::format("{:<38} {:>9.4g}", run.at("id").get<std::string>(), measured);
      std::string errs;
      for (int m = 0; m < 3; ++m) {
        const Timing t = predict(in, B, P, G, models[m]);
        const double p = predicted_time_s(run, t), err = p / measured - 1;
        sum_abs[m] += std::fabs(err);
        max_abs[m] = std::max(max_abs[m], std::fabs(err));
        r[to_string(models[m])] = {{"time_s", p}, {"prefill_s", t.prefill_s}, {"decode_s", t.decode_s}, {"error", err}};
        line += fmt::format(" {:>9.4g}", p);
        errs += fmt::format(" {:>+8.1f}%", 100 * err);
      }
      // The calibrated model's achieved memory rate for this chip and where it comes from (the report's note on
      // power-limited rows names it).
      const ServingCalibration cal = serving_calibration(chip(run.at("chip").get<std::string>()));
      r["calibrated_hbm"] = {{"bytes_per_s", cal.hbm_bytes_per_s}, {"source", cal.hbm_source}};
      // Where the calibrated decode step's time goes, halfway through the generation.
      if (G > 1) {
        const DecodeTerms mid = decode_terms(in, B, P + std::floor(G / 2), CostModel::calibrated);
        r["calibrated_mid_step"] = {{"context", P + std::floor(G / 2)}, {"step_s", mid.step_s},
                                    {"t_math_s", mid.t_math_s}, {"t_hbm_s", mid.t_hbm_s},
                                    {"t_vector_s", mid.t_vector_s}, {"t_comms_s", mid.t_comms_s}};
      }
      fmt::print("{}  {}\n", line, errs);
      results.push_back(r);
    }
    const double n = static_cast<double>(results.size());
    json summary;
    for (int m = 0; m < 3; ++m)
      summary[to_string(models[m])] = {{"mean_abs_error", sum_abs[m] / n}, {"max_abs_error", max_abs[m]}};
    fmt::print("\n{} runs. mean |error|: book {:.1f}%, ideal {:.1f}%, calibrated {:.1f}%; largest: {:.1f}%, {:.1f}%, {:.1f}%\n",
               results.size(), 100 * sum_abs[0] / n, 100 * sum_abs[1] / n, 100 * sum_abs[2] / n, 100 * max_abs[0],
               100 * max_abs[1], 100 * max_abs[2]);
    if (!out_path.empty()) {
      std::ofstream o(out_path);
      o << json{{"runs", results}, {"summary", summary}, {"targets", doc.value("targets", json::object())}}.dump(1) << "\n";
    }
    if (check) {
      const json& t = doc.at("targets");
      const double mean_target = t.at("calibrated_mean_abs_error"), max_target = t.at("calibrated_max_abs_error");
      const double mean = sum_abs[2] / n;
      if (mean > mean_target || max_abs[2] > max_target) {
        fmt::print(stderr, "calibrated model misses its target: mean |error| {:.1f}% (target {:.1f}%), largest {:.1f}% (target {:.1f}%)\n",
                   100 * mean, 100 * mean_target, 100 * max_abs[2], 100 * max_target);
        return 1;
      }
      fmt::print("calibrated within target: mean |error| {:.1f}% ≤ {:.1f}%, largest {:.1f}% ≤ {:.1f}%\n", 100 * mean,
                 100 * mean_target, 100 * max_abs[2], 100 * max_target);
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "serving_runs: " << e.what() << "\n";
    return 2;
  }
}
