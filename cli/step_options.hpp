#pragma once
// What `scaling train` and `scaling plan` share: the machine options (a System), the layout and setup
// options, and the JSON of one layout and its terms — one reading and one printing for both, so the two
// agree on the same flags.
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <span>
#include <string>
#include <vector>

#include "commands.hpp"
#include "scaling/cost/calibrated.hpp"
#include "scaling/cost/planner.hpp"

namespace cli {

// TPU: --slice [--pods] or --chips N (one ICI axis); GPU: --nodes [--gpus-per-node] or --chips N (whole
// nodes, or one partial node). Throws UsageError for a missing or conflicting machine, std::invalid_argument
// naming the option for a bad value.
scaling::System resolve_system(const std::string& subcommand, const scaling::Chip& chip, const MachineArgs& m);

scaling::TrainingSetup resolve_setup(const StepArgs& s);
// --cost-model: "calibrated", "ideal" or "book" ("exact" is refused with its new name), and the book's model
// only on one slice or node (one rule, one message for train and plan, naming the --pods, --nodes or
// --chips the user gave). Throws std::invalid_argument.
scaling::CostModel resolve_cost_model(const StepArgs& s, const MachineArgs& m, const scaling::System& system);
bool parse_yes_no(const std::string& text);  // "yes" or "no"
// --recompute's words as --saved's named rules: none → all, selective → matmuls, full → input.
const scaling::PlanRule& recompute_rule(const std::string& text);
// The calibrated model's switches of --vp, --schedule, --sp, --tp-overlap, --dp-overlap, --attention on `l`.
void apply_switches(const StepArgs& s, scaling::Layout& l);
double resolve_seq(const StepArgs& s);
// --seq as a message names it: "--seq 8,192" when given, "the default --seq 4,096" when not, so a
// refusal never quotes a length the user did not type without saying where it came from.
std::string seq_text(const StepArgs& s);

// The degrees of --dp/--fsdp, --tp, --pp: whether any was given, and (given or not) the three with the
// missing data degree filled from the chips (tensor and pipeline default to 1).
struct Degrees {
  bool given = false;
  int data = 1, tensor = 1, pipeline = 1;
};
Degrees resolve_degrees(const StepArgs& s, double chips);

// The degrees as given on the command line, 0 where not given (--fsdp is the data degree, named so).
struct GivenDegrees {
  int data = 0, tensor = 0, pipeline = 0;
  std::string data_option = "--dp";
  int count() const { return (data > 0) + (tensor > 0) + (pipeline > 0); }
  std::string text() const;  // "--tp 2", "--fsdp 64, --pp 4": what the user fixed
};
GivenDegrees given_degrees(const StepArgs& s);
// Whether the degrees given fix all three: two or more given (the data degree fills the rest, tensor and
// pipeline default to 1). Then train and plan time one layout; with one, plan searches the rest of the
// space with it fixed (the other degrees, microbatches, ZeRO, rules, switches), with none all of it.
bool fixes_every_degree(const GivenDegrees& g);

// train's layout when no degree is given. Every chip a data replica (FSDP over the machine), as before,
// unless the calibrated model's whole-sequence rule refuses it (check_data_degree: data degree ×
// microbatches divides the batch's sequences). Then the largest data
// degree that keeps the rule, the rest of the chips tensor-parallel inside one slice or node (the largest
// degree that divides the rest and the heads and has a placement), and what is still left pipelined (at
// most the layers). `why` says which layout was chosen and why, empty when every chip is a data replica.
// Throws std::invalid_argument naming the rule when no split keeps it.
struct DefaultDegrees {
  Degrees degrees;
  std::string why;
};
DefaultDegrees default_degrees(const scaling::TransformerConfig& model, const scaling::System& system,
                               const scaling::Layout& base, double batch_tokens, const StepArgs& s,
                               scaling::CostModel cost_model);

// --vp's rules, named by --vp (and --pp): virtual stages need a pipeline of 2 or more stages, and the
// layers split evenly into pp × vp virtual stages (scaling::interleaves_evenly, Megatron-LM's rule).
// One rule for train and plan: --vp above 1 (or --schedule interleaved) needs --pp given, 2 or more (plan's
// search too). Throws std::invalid_argument.
void check_virtual_stages(const StepArgs& s, const Degrees& d, const scaling::Layout& l, double layers,
                          bool one_layout = true);
// The degrees given against the machine, the model and the cost model, each refused naming the option
// first and its rule (one wording for train and plan): --tp wider than one slice or node (tensor
// parallelism never crosses the slow network), --tp not dividing the heads, --pp above the layers, and
// --pp above 1 under the book's model (§5.1.4 has no pipeline). Only degrees the user typed are checked
// here (the default layout keeps these rules). Throws std::invalid_argument.
void check_given_degrees(const StepArgs& s, const MachineArgs& m, const scaling::System& system,
                         const scaling::TransformerConfig& model, scaling::CostModel cost_model);

// --batch-tokens against --seq: at least one sequence under every model, a whole number of them under
// the calibrated one; a one-line refusal naming both options otherwise.
void check_batch(double batch_tokens, const StepArgs& s, scaling::CostModel cost_model);
// The batch's rules for a layout's data degree, named by --dp/--fsdp (or the chips it was filled from)
// and --microbatches: the data degree divides the batch's sequences, and data degree × microbatches does
// too, so each replica's microbatch is a whole number of sequences (the planner's search skips any other
// layout). The calibrated model's rules only, after check_batch: the ideal and book models are §5's
// per-token bounds (there only the microbatches divide the tokens). Throws std::invalid_argument.
void check_data_degree(const StepArgs& s, const Degrees& d, int microbatches, double batch_tokens, double seq_len,
                       scaling::CostModel cost_model);

// --zero's stages, "1,3" -> {1, 3}: each 0, 1, 2 or 3 (train takes one, plan a list); one wording for both.
std::vector<int> parse_zero_stages(const std::string& text);
// One layout's stage (train, and plan given two degrees): a list is refused naming the option.
int parse_zero_stage(const std::string& text);

// One layout's --saved: a list is refused naming the option (one wording for train and plan).
void check_one_saved_rule(const std::string& text);

// One layout's microbatches, ZeRO stage and scope and rule (the defaults: 1, 3, all, D+2F; a sum is a named
// rule only when it equals that rule's sum for `model`: parse_plan_rule's model form). Throws
// std::invalid_argument naming the option (a list given where one value is needed, a stage above 3, …).
scaling::Layout resolve_layout(const StepArgs& s, const scaling::TransformerConfig& model);

// Memory per chip by part, each named for what it holds; the parts sum to bytes_per_chip (the total).
// memory_per_chip's keys: params, grads, optimizer, master, activations, buffers (MemoryPerChip::working:
// the calibrated model's ZeRO-3 working set, the layers gathered whole, the one in use and the one
// prefetched, and its collective buffers, two 25 MB gradient buckets) and allocator_reserve
// (MemoryPerChip::reserve: what a GPU's caching allocator reserves beyond the live bytes,
// calibrated.hpp's allocator_fragmentation); both 0 in the ideal and book models, the reserve 0 on TPUs.
nlohmann::json memory_parts_json(const scaling::MemoryPerChip& m);

// Which cost model reads which option: one row per layout and setup option (and plan's
// --max-microbatches), one entry per model, from what each cost function reads (planner.cpp's ideal
// score and score_book, calibrated.cpp):
//   reads    the model reads the option's value — always, or only on the layouts where `when` holds
//            (the calibrated model's --sp acts only with a tensor group, …);
//   ignores  it never does (the ideal and book models and the calibrated switches; the book and --seq);
//   fixes    it times one value whatever the option says (the book: ZeRO-3, one microbatch, §5.1.4):
//            the option is ignored when its value is another.
enum class Reads { reads, ignores, fixes };
enum class When {
  always,
  tensor_group,  // tp > 1: sequence parallelism and the TP overlap act on the tensor group's collectives
  pipeline,      // pp > 1: the schedule decides the bubble and the microbatches in flight
  dp_reduce,     // data replicas that reduce gradients outside ZeRO-3 (calibrated.cpp: ZeRO-3 overlaps anyway)
  zero_scope,    // data replicas across the slow network and a ZeRO stage ≥ 1: otherwise the scope shards nothing more
  rerun,         // a --saved rule that reruns attention: the ideal model counts attention FLOPs only there
  peak_rates,    // the chip's GEMM ceiling is its datasheet peak: nothing measured or published on it
  hbm_rates,     // the chip's memory kernels are the H100's fractions of its datasheet bandwidth
};
struct ModelReads {
  Reads how = Reads::reads;
  When when = When::always;
  const char* value = "";  // fixes: the value timed
  const char* why = "";    // why it is ignored (ignores, fixes, or `when` not holding), for the note
};
struct OptionReads {
  const char* option;
  ModelReads calibrated, ideal, book;
};
std::span<const OptionReads> option_reads();
// What decides `when`: the layout the model timed (train, and plan given every degree; null in plan's
// search, where some layout of the space may meet each condition), and whether some --saved rule of the
// run reruns attention.
struct ReadContext {
  bool reruns = false;
  const scaling::Layout* timed = nullptr;
  // The calibrated model's rates for the chip (which datasheet figures they rest on); null: not known.
  const scaling::ChipCalibration* rates = nullptr;
};

// The options given that `cost_model` does not read, in the order of --help, by option_reads(): `given`
// holds (option, text as typed) — every layout and setup option of `s`, and `extra` (plan's
// --max-microbatches; the chip's --flops and --hbm-bw). `train` and `plan` print them as `ignored_options` and one line of text, never on
// stderr (an answer prints nothing there: fuzz/cli_fuzz.cpp).
std::vector<std::string> ignored_options(const StepArgs& s, scaling::CostModel cost_model, const ReadContext& context,
                                         const std::vector<std::pair<std::string, std::string>>& extra = {});
// The text's line for them ("note: the ideal cost model ignores --sp, --vp (...)"), empty when none.
std::string ignored_note(const std::vector<std::string>& ignored, scaling::CostModel cost_model);
// The book model times ZeRO-3 with one microbatch whatever the layout says (planner.hpp; its search's
// layouts say so already): `p`'s layout is set to what was timed, so the printed layout is that one.
void as_timed(scaling::Planned& p, scaling::CostModel cost_model);

// The layout and its terms as JSON: dp, tp, pp, microbatches, zero, zero_scope, saved, step_s,
// bytes_per_chip, memory parts, every time term, bound, mfu, axes.
// The calibrated block (where the calibrated step goes) only under --cost-model calibrated: the other models
// have no such terms, and a block of zeros would read as measured.
// saved_rule is the rule's sum for `model` (resolved_rule), the same text the table prints.
nlohmann::json step_json(const scaling::Planned& p, const scaling::System& s, scaling::CostModel cost_model,
                         const scaling::TransformerConfig& model);

// Where the calibrated model's rates for `chip` come from (cost/calibrated.cpp's chip_calibration, which
// finds every measured table by the chip's name): a chip file that copies a preset under another name gets
// no measured table, so its step can be far more optimistic than the preset's. JSON: {chip, measured,
// matmuls, attention, memory_kernels, mfu_record}; the text's note says the same in one line.
// Whether `name` is a preset's: the calibrated model finds a chip's measured and published figures by name.
bool is_preset_name(const std::string& name);
nlohmann::json calibration_json(const scaling::Chip& chip);
// A sequence longer than the model's learned position table (GPT-2's n_positions, OPT's
// max_position_embeddings) cannot run as configured: the note names the option (`what`: "--seq 4,096",
// "the default --seq 4,096", "--context 8,192") and the table; empty when within it or without a table.
std::string positions_note(const scaling::TransformerConfig& model, double seq_len, const std::string& what);
// A pipeline idle for most of the step (its bubble over half of it; the schedules of cost/calibrated.hpp): the
// note names the share, the microbatches and stages, and what shrinks it; empty otherwise. train prints it for
// its layout, plan for a layout given whole.
std::string bubble_note(const scaling::Planned& p);
// Notes ("note: …" lines, as the table prints them) as the JSON's `notes`: each without its "note: ".
nlohmann::json notes_json(const std::vector<std::string>& notes);
// The chip's figures a training step's ignored_options weighs (option, text as typed): --flops, --hbm-bw,
// --flops-int8, in the rows of option_reads.
std::vector<std::pair<std::string, std::string>> chip_figures_given(const ChipArgs& chip);
std::string calibration_note(const scaling::Chip& chip);

// The inputs of a train/plan run for a refusal's message: the chip (or chip file), its overrides, the
// machine options and the batch, as given() writes them ("--chip-file 'x.json', --slice '16x16', …").
std::string step_inputs(const ChipArgs& c, const MachineArgs& m, const std::string& batch_tokens);

// The layout options given (--dp, --fsdp, --tp, --pp, --microbatches), ", "-prefixed for step_inputs' tail.
std::string layout_inputs(const StepArgs& s);

// A refusal of one layout by the step model, led by its subject: the layout ("dp 1 × tp 8 × pp 1", with
// the options that set it), then the rule, then the machine and batch it was refused for:
// "dp 1 × tp 8 × pp 1 (--tp 8): no placement … (for --chip 'h100', --nodes '2', --batch-tokens '1048576')".
template <class Fn>
auto for_layout(const StepArgs& s, const Degrees& d, const std::string& machine, Fn&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const std::invalid_argument& e) {
    const std::string given = layout_inputs(s);
    throw std::invalid_argument(fmt::format("dp {} × tp {} × pp {}{}: {} (for {})", d.data, d.tensor, d.pipeline,
                                            given.empty() ? " (no degree given)" : " (" + given.substr(2) + ")",
                                            e.what(), machine));
  }
}

// Every number in `j` (nested objects and arrays too) must be finite before anything is printed: throws
// std::invalid_argument "<key> is not a finite number for <inputs>: out of range" otherwise.
void require_finite_json(const nlohmann::json& j, const std::string& inputs, const std::string& key = {});

// The heading's name of the model: the preset, or the config path escaped (a path may hold any byte).
std::string model_title(const std::string& model, const std::string& config);

}  // namespace cli
