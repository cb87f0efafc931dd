// `scaling train` and `scaling plan`: one training step's memory and time for a given layout, and the
// search over layouts. Both take the same machine, layout and setup options, declared once here, and both
// time a layout with the one step model (cost/planner.hpp's step_terms); their runners are cli/train.cpp
// and cli/plan.cpp (README: "Train and plan").
#include <memory>

#include "../commands.hpp"
#include "../limits.hpp"
#include "../options.hpp"
#include "modules.hpp"
#include "../step_options.hpp"
#include "scaling/cost/layout.hpp"
#include "scaling/model/presets.hpp"

namespace cli {

namespace {

void add_model_options(CLI::App* sub, std::string& model, std::string& config) {
  add_name(sub, "--model", model, "a preset (see `scaling models`)", [](const std::string& t) { scaling::model(t); });
  add_path(sub, "--config", config, "a HuggingFace config.json");
}

// The machine: TPU --slice [--pods] (or --chips N as one axis), GPU --nodes [--gpus-per-node] (or
// --chips N), bandwidths from the chip preset unless overridden.
void add_machine_options(CLI::App* sub, MachineArgs& m) {
  sub->add_option("--slice", m.slice, "TPU: the slice (pod) shape, e.g. 16x20x28")->check(shape_check("--slice"));
  add_size(sub, "--pods", m.pods, "TPU: that many slices over DCN (default 1)", limits::kMaxPods);
  add_size(sub, "--nodes", m.nodes, "GPU: nodes over InfiniBand (bandwidths from the chip preset)", limits::kMaxNodes);
  add_size(sub, "--gpus-per-node", m.gpus_per_node, "GPU: GPUs per NVLink node (default: the preset's)", limits::kMaxGpusPerNode);
  add_size(sub, "--chips", m.chips, "a chip count instead: one TPU ICI axis, or GPUs filling whole nodes", limits::kMaxChips);
  sub->add_option("--nvlink-bw", m.nvlink_bw, "GPU override: NVLink bytes/s per GPU, one direction")
      ->check(positive_check("--nvlink-bw"));
  sub->add_option("--ib-bw", m.ib_bw, "GPU override: InfiniBand bytes/s per GPU, one direction")
      ->check(positive_check("--ib-bw"));
}

// The layout and the training setup. Each subcommand's help says what it does with an option not given:
// train times one layout, so a missing option takes a default; plan searches, so a missing degree, ZeRO
// stage, rule or (calibrated) switch is tried every way the search allows, and only what it does not
// search has a default. What plan searches is planner.hpp's PlanRequest as run_plan fills it (cli/plan.cpp);
// with two degrees given plan times one layout, with train's defaults.
void add_step_options(CLI::App* sub, StepArgs& s, bool plan) {
  // plan: the degrees a search leaves open, and the one-layout mode's defaults (train's).
  const std::string given_plan = "; one degree given is fixed and the rest searched; two given fix one layout";
  add_size(sub, "--dp", s.dp,
           plan ? "data-parallel degree: searched when not given (every degree dividing the chips and, calibrated, "
                  "the batch's sequences)" + given_plan + ", a missing --dp then the chips left"
                : "data-parallel degree (default: the chips left by --tp and --pp; with no degree given, every chip, "
                  "or under the calibrated model the split `default_layout` names when every chip breaks the "
                  "whole-sequence rule)",
           limits::kMaxChips);
  add_size(sub, "--tp", s.tp,
           plan ? "tensor-parallel degree: searched when not given (every degree inside a slice or node that "
                  "divides the heads)" + given_plan + ", a missing --tp then 1"
                : "tensor-parallel degree (default 1, unless no degree is given and `default_layout` names a split)",
           limits::kMaxChips);
  add_size(sub, "--pp", s.pp,
           plan ? "pipeline degree: searched when not given (up to the layers; the book model has none)" + given_plan +
                      ", a missing --pp then 1"
                : "pipeline degree (default 1, unless no degree is given and `default_layout` names a split)",
           limits::kMaxChips);
  add_size(sub, "--fsdp", s.fsdp,
           plan ? "FSDP degree X: --dp X with ZeRO-3 only (the search tries no other stage)"
                : "FSDP degree X: --dp X --zero 3",
           limits::kMaxChips);
  add_size(sub, "--microbatches", s.microbatches,
           plan ? "gradient-accumulation microbatches of one layout (two degrees given; default 1); the search "
                  "refuses it and tries every count dividing the batch up to --max-microbatches (the book model: 1)"
                : "gradient-accumulation microbatches (default 1; above 1, data degree × microbatches divides "
                  "--batch-tokens: each replica's microbatch is whole tokens)",
           limits::kMaxMicrobatches);
  if (plan) {
    sub->add_option("--zero", s.zero,
                    "ZeRO stages the search tries, e.g. 1,3 (default 0,1,2,3; the book model: 3 only); two degrees "
                    "given: one stage (default 3)")
        ->check(list_check("--zero", limits::kMaxZeroStages));
  } else {
    // One stage, read as a number 0-3 (a list is plan's).
    sub->add_option("--zero", s.zero, "ZeRO stage 0, 1, 2 or 3 (default 3)")
        ->type_name("INT")
        ->check(parse_check("0-3", "--zero", [](const std::string& t) { parse_zero_stage(t); }));
  }
  add_name(sub, "--zero-scope", s.zero_scope,
           plan ? "ZeRO shards over all (every replica) or group (one slice/node): two degrees given only (default "
                  "all); the search tries both where there are pods or nodes"
                : "ZeRO shards over: all (every replica, default) or group (one slice/node)",
           [](const std::string& t) { scaling::parse_zero_scope(t); });
  if (plan) {
    sub->add_option("--saved", s.saved,
                    "activation rules the search tries: input, matmuls, all or a sum such as D+2F (default "
                    "input,matmuls,all; the book model times none and takes the first for memory); two degrees "
                    "given: one rule (default D+2F)")
        ->check(list_check("--saved", limits::kMaxSavedRules));
  } else {
    sub->add_option("--saved", s.saved,
                    "activations saved per layer: input, matmuls, all, or a sum of D, F, NH, KH such as 4D or D+2F "
                    "(default D+2F)")
        ->check(parse_check("RULE", "--saved", [](const std::string& t) {
          check_one_saved_rule(t);
          for_option("--saved", [&] { scaling::parse_plan_rule(t); });
        }));
  }
  add_size(sub, "--seq", s.seq,
           "sequence length (default 4096): the calibrated model's attention span; the ideal model reads it only "
           "through a --saved rule that reruns attention, the book model not at all (`ignored_options` says so)");
  add_name(sub, "--cost-model", s.cost_model,
           "calibrated (default: what real runs achieve, cost/calibrated.hpp), ideal (the lower bound: peak FLOPs, "
           "perfect overlap) or book (§5.1.4's FSDP × TP on one slice: its step and utilisation count the MLP "
           "matmuls only, printed as mlp_flops_utilisation, not mfu)",
           [](const std::string& t) { scaling::parse_cost_model(t); });
  // The calibrated model's switches (the ideal and book models ignore them: `ignored_options` says so, and
  // their layouts leave them out).
  const std::string cal = " (calibrated only)";
  // plan's calibrated search tries sequence parallelism and the interleaved schedule unless one of --sp,
  // --vp, --schedule is given (PlanRequest::search_switches); then each takes its value or default.
  const std::string layout_search =
      "; unless --sp, --vp or --schedule is given, the search tries ";
  add_size(sub, "--vp", s.vp,
           plan ? "virtual pipeline stages per stage (interleaved 1F1B; needs --pp)" + layout_search +
                      "1F1B and interleaved at every v that splits a stage's layers evenly; given any of the three, "
                      "default 1" + cal
                : "virtual pipeline stages per stage (interleaved 1F1B; needs --pp; default 1)" + cal,
           1024);
  add_name(sub, "--schedule", s.schedule,
           plan ? "pipeline schedule: gpipe, 1f1b or interleaved" + layout_search +
                      "1f1b and interleaved (never gpipe); given any of the three, default 1f1b (interleaved when "
                      "--vp > 1; interleaved without --vp tries every v >= 2 that splits a stage's layers evenly)" + cal
                : "pipeline schedule: gpipe, 1f1b or interleaved (default 1f1b; interleaved when --vp > 1; "
                  "interleaved needs --vp 2 or more)" + cal,
           [](const std::string& t) { scaling::parse_schedule(t); });
  add_name(sub, "--sp", s.sp,
           plan ? "sequence parallelism: yes or no" + layout_search +
                      "it off and on where tp > 1; given any of the three, default no" + cal
                : "sequence parallelism: yes or no (default no)" + cal,
           [](const std::string& t) { parse_yes_no(t); });
  const std::string tpo =
      "tensor-parallel collectives beside compute: no (all on the critical path), backward (Megatron-LM's "
      "asynchronous backward: the column-parallel linears' input-gradient reductions beside their "
      "weight-gradient GEMMs), async (a compiler's asynchronous collectives, as XLA's: every backward one beside "
      "the layer's weight-gradient GEMMs) or yes (all behind the matmuls: collective matmul); default no";
  add_name(sub, "--tp-overlap", s.tp_overlap,
           plan ? tpo + "; the search does not try it (each mode needs a framework's kernels or a compiler's schedule)" + cal : tpo + cal,
           [](const std::string& t) { scaling::parse_tp_overlap(t); });
  add_name(sub, "--dp-overlap", s.dp_overlap,
           plan ? "overlap the data-parallel gradient reduce with the backward pass: yes or no (searched off and "
                  "on where dp > 1 under ZeRO 0-2 unless given; two degrees given: default yes)" + cal
                : "overlap the data-parallel gradient reduce with the backward pass: yes or no (default yes)" + cal,
           [](const std::string& t) { parse_yes_no(t); });
  add_name(sub, "--recompute", s.recompute,
           plan ? "none, selective (attention) or full: --saved all, matmuls or input by another name (the search "
                  "then tries that rule only)"
                : "none, selective (attention) or full: --saved all, matmuls or input by another name",
           [](const std::string& t) { recompute_rule(t); });
  add_name(sub, "--attention", s.attention, "attention kernel, timed at its published rate on the chip: flash (default" +
           std::string(plan ? ", not searched" : "") + "; FlashAttention-2, "
           "also PyTorch SDPA's flash backend), flash1 (FlashAttention-1; its Triton ports such as "
           "llm-foundry's attn_impl triton at FlashAttention-1's rate, a stated proxy) or materialized (scores written to HBM, softmax a separate kernel); "
           "flash and flash1 run at the matmul ceiling where no rate is published (TPUs; the H200 takes the H100's rates)" + cal,
           [](const std::string& t) { scaling::parse_attention_kernel(t); });
  sub->add_option("--weights", s.weights, "dtype of the weights (and of the saved activations)")->capture_default_str();
  sub->add_option("--grads", s.grads, "dtype of the gradient buffer, or none")->capture_default_str();
  sub->add_option("--optimizer", s.optimizer, "adam (two fp32 moments) or sgd (no state)")->capture_default_str();
  sub->add_option("--master", s.master, "an fp32 master copy of the weights: none or fp32")->capture_default_str();
}

}  // namespace

void add_train(CLI::App& app) {
  // Fresh arguments for every app built (as every other subcommand does): a static struct kept the last
  // call's options, so a second in-process call (the fuzzer, a test) could run with a stale --chips.
  auto owned = std::make_shared<TrainArgs>();
  TrainArgs& tr = *owned;
  auto* train = app.add_subcommand("train", "training memory, step time and the §5 bounds for one layout");
  add_model_options(train, tr.model, tr.config);
  add_chip_options(train, tr.chip);
  add_machine_options(train, tr.machine);
  add_step_options(train, tr.step, false);
  add_size(train, "--batch-tokens", tr.batch_tokens, "global batch in tokens")
      ->required();
  add_size(train, "--tokens", tr.tokens, "training tokens: gives total_flops and time_s");
  train->add_option("--mfu", tr.mfu, "an assumed model FLOPs utilisation in [1e-6, 1] for time_s, the training "
                                     "time of --tokens at that MFU (time_at_step_s uses the modelled step instead)")
      ->check(fraction_check("--mfu"))
      ->capture_default_str();
  train->add_flag("--json", tr.json, "print one JSON object, SI units");
  run_when_chosen(train, [owned] { run_train(*owned); });
}

void add_plan(CLI::App& app) {
  auto owned = std::make_shared<PlanArgs>();
  PlanArgs& pl = *owned;
  auto* planner = app.add_subcommand("plan", "the parallelism planner: the fastest layouts that fit (§5, §6)");
  add_model_options(planner, pl.model, pl.config);
  add_chip_options(planner, pl.chip);
  add_machine_options(planner, pl.machine);
  add_step_options(planner, pl.step, true);
  add_size(planner, "--batch-tokens", pl.batch_tokens, "global batch per step, tokens")->required();
  add_size(planner, "--top", pl.top, "print the K fastest layouts (default 1, at most 1000)", limits::kMaxTop);
  add_size(planner, "--max-microbatches", pl.max_microbatches, "largest microbatch count the search tries (every count dividing the batch up to this; default 256; "
           "the book model: 1)", limits::kMaxMicrobatches);
  planner->add_flag("--json", pl.json, "print one JSON object, SI units");
  run_when_chosen(planner, [owned] { run_plan(*owned); });
}

}  // namespace cli
