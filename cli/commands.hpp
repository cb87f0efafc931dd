#pragma once
// What the subcommands share: the chip and model options, the parsing helpers, and train's and plan's
// argument structs and runners (cli/train.cpp and cli/plan.cpp; their options are declared once in
// cli/commands/train_plan.cpp; every other subcommand is a module in cli/commands/ with its own options).
// Runners throw std::invalid_argument for invalid values (exit 1) and UsageError for usage (exit 2).
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "scaling/hardware/chip.hpp"
#include "scaling/hardware/topology.hpp"
#include "scaling/model/transformer.hpp"

namespace cli {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// --chip NAME or --chip-file PATH, and overrides of single figures (README: "Your own chip").
struct ChipArgs {
  std::string chip, chip_file, hbm_bytes, hbm_bw, flops, flops_int8, ici_bw;
};

// The machine of `train` and `plan`: TPU --slice [--pods] (or --chips N as one axis), GPU --nodes
// [--gpus-per-node] (or --chips N), bandwidths from the chip preset unless overridden.
struct MachineArgs {
  std::string slice, pods, chips, nodes, gpus_per_node, nvlink_bw, ib_bw;
};
// The layout and the training setup of `train` and `plan` (plan takes lists for --zero and --saved).
struct StepArgs {
  std::string dp, tp, pp, fsdp, microbatches, zero, zero_scope, saved, seq, cost_model = "calibrated";
  // The calibrated model's switches (layout.hpp): --vp, --schedule, --sp, --tp-overlap, --dp-overlap,
  // --recompute (another spelling of --saved's three named rules), --attention.
  std::string vp, schedule, sp, tp_overlap, dp_overlap, recompute, attention;
  std::string weights = "bf16", grads = "bf16", optimizer = "adam", master = "none";
};
struct PlanArgs {
  ChipArgs chip;
  MachineArgs machine;
  StepArgs step;
  std::string model, config, batch_tokens, top, max_microbatches;
  bool json = false;
};
struct TrainArgs {
  std::string model, config;
  ChipArgs chip;
  MachineArgs machine;
  StepArgs step;
  std::string batch_tokens, tokens, mfu = "0.5";
  bool json = false;
};

void run_train(const TrainArgs& a);
void run_plan(const PlanArgs& a);

// The chip a subcommand runs on: a preset or a chip file, with any overrides applied. Throws UsageError
// when neither or both of --chip and --chip-file are given, std::invalid_argument for a bad value.
scaling::Chip resolve_chip(const ChipArgs& a);
// The model of --model NAME or --config PATH (exactly one; UsageError otherwise, naming the subcommand).
scaling::TransformerConfig resolve_model(const std::string& subcommand, const std::string& model,
                                         const std::string& config);
// A hardware figure ("8.1e11": bytes, bytes/s, FLOPs/s, seconds) given to an option: positive and within
// [check::kMinFigure, check::kMaxFigure] (limits::kMinFigure); throws std::invalid_argument naming it.
double parse_positive(const std::string& option, const std::string& text);

// A dimension given on the command line: a positive whole number ("4096", "1e6", "8k" = 8000) up to 2^53 - 1.
// Throws std::invalid_argument naming the option and the text.
double parse_size(const std::string& option, const std::string& text, double max = 9007199254740991.0);
// "128,2048" -> {128, 2048}, each a positive whole number.
std::vector<double> parse_sizes(const std::string& option, const std::string& text);
// --wrap: "auto" (the §2.2 rules), "yes" or "no".
scaling::WrapPolicy parse_wrap(const std::string& text);
// Runs f; an std::invalid_argument from it comes back prefixed with the option: "--kind: unknown …".
template <class Fn>
auto for_option(const std::string& option, Fn&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const std::invalid_argument& e) {
    // A message that starts with the quoted value ("'v': expected a or b") reads "--X 'v': expected a or b".
    const std::string what = e.what();
    throw std::invalid_argument(option + (what.rfind('\'', 0) == 0 ? " " : ": ") + what);
  }
}
// "--B '1e300', --D '7'": the options given (empty ones left out), for require_finite's message.
std::string given(const std::vector<std::pair<std::string, std::string>>& options);
// The chip file and the chip overrides given, as for given().
std::vector<std::pair<std::string, std::string>> chip_overrides(const ChipArgs& a);
// A computed quantity that must be finite: throws std::invalid_argument "<what> overflows a double for
// <inputs>: out of range" (inputs names the options and values, e.g. "--bytes '1e308'") when it is inf or NaN.
void require_finite(const std::string& what, double value, const std::string& inputs);
// "a,b,c" -> {"a", "b", "c"} after checking that there are at most max_entries (refused naming the option).
std::vector<std::string> split_list(const std::string& option, const std::string& text, double max_entries);
// "0,2" -> {0, 2}: non-negative whole numbers.
std::vector<int> parse_indices(const std::string& option, const std::string& text);

}  // namespace cli
