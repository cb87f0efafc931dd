// `scaling`: the book's questions for any chip, shape and model. See README.md, "Use the CLI".
// Each subcommand is a module (cli/commands/<name>.cpp) that declares its own typed options; train and
// plan are still declared here (their runners are cli/train.cpp and cli/plan.cpp). main parses the command
// line, then runs the chosen subcommand and turns its exceptions into exit codes.
#include <CLI/CLI.hpp>

#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "commands.hpp"
#include "commands/modules.hpp"
#include "options.hpp"
#include "scaling/model/presets.hpp"
#include "scaling/base/format.hpp"
#include "scaling_main.hpp"

std::function<void()>& cli::pending() {
  static std::function<void()> run;
  return run;
}

int scaling_main(int argc, char** argv) {
  CLI::App app{"scaling: roofline and scaling arithmetic from How to Scale Your Model"};
  app.require_subcommand(1);
  auto on = [](CLI::App* sub, std::function<void()> run) { cli::run_when_chosen(sub, std::move(run)); };
  auto model_check = [](const std::string& name) {
    return cli::name_check(name, [](const std::string& t) { scaling::model(t); });
  };
  // One module per subcommand (cli/commands/<name>.cpp); train and plan are still declared here.
  cli::add_chips(app);
  cli::add_matmul(app);
  cli::add_collective(app);
  cli::add_simulate(app);
  cli::add_shard(app);
  cli::add_models(app);
  cli::add_params(app);
  cli::add_collective_matmul(app);
  cli::TrainArgs tr;
  auto* train = app.add_subcommand("train", "training memory, time and the §5 parallelism bounds on a slice");
  train->add_option("--model", tr.model, "a preset (see `scaling models`)")->check(model_check("--model"));
  train->add_option("--config", tr.config, "a HuggingFace config.json")->check(cli::path_check("--config"));
  cli::add_chip_options(train, tr.chip);
  train->add_option("--slice", tr.slice, "slice shape, e.g. 16x16x16")->check(cli::shape_check("--slice"));
  train->add_option("--pods", tr.pods, "pods of that slice, data-parallel over DCN")->check(cli::size_check("--pods", cli::limits::kMaxPods));
  train->add_option("--chips", tr.chips, "a chip count instead of a slice (counted as one ICI axis)")->check(cli::size_check("--chips", cli::limits::kMaxChips));
  train->add_option("--batch-tokens", tr.batch_tokens, "global batch in tokens")->check(cli::size_check("--batch-tokens"))->required();
  train->add_option("--tokens", tr.tokens, "training tokens: gives total_flops and time_s")->check(cli::size_check("--tokens"));
  train->add_option("--mfu", tr.mfu, "model FLOPs utilisation in [1e-6, 1]")->check(cli::fraction_check("--mfu"))->capture_default_str();
  train->add_option("--saved", tr.saved, "activations saved per layer per token, a sum of terms in D, F, NH, KH "
                                         "(e.g. 4D, D+2F, 2D+2F+NH+2KH)")->capture_default_str();
  train->add_option("--weights", tr.weights, "dtype of the weights (and of the saved activations)")->capture_default_str();
  train->add_option("--grads", tr.grads, "dtype of the gradient buffer, or none")->capture_default_str();
  train->add_option("--optimizer", tr.optimizer, "adam (two fp32 moments) or sgd (no state)")->capture_default_str();
  train->add_option("--master", tr.master, "an fp32 master copy of the weights: none or fp32")->capture_default_str();
  train->add_option("--fsdp", tr.fsdp, "FSDP degree X (with --tp; X·Y = chips of a pod)")->check(cli::size_check("--fsdp", cli::limits::kMaxChips));
  train->add_option("--tp", tr.tp, "tensor-parallel degree Y (with --fsdp)")->check(cli::size_check("--tp", cli::limits::kMaxChips));
  train->add_flag("--json", tr.json, "print one JSON object, SI units");
  on(train, [&] { cli::run_train(tr); });

  cli::PlanArgs pl;
  auto* planner = app.add_subcommand("plan", "the parallelism planner: the fastest layouts that fit (§5, §6)");
  planner->add_option("--model", pl.model, "a preset (see `scaling models`)")->check(model_check("--model"));
  planner->add_option("--config", pl.config, "a HuggingFace config.json")->check(cli::path_check("--config"));
  cli::add_chip_options(planner, pl.chip);
  planner->add_option("--slice", pl.slice, "TPU: the slice (pod) shape, e.g. 16x20x28")->check(cli::shape_check("--slice"));
  planner->add_option("--pods", pl.pods, "TPU: that many slices over DCN (default 1)")->check(cli::size_check("--pods", cli::limits::kMaxPods));
  planner->add_option("--nodes", pl.nodes, "GPU: nodes over InfiniBand")->check(cli::size_check("--nodes", cli::limits::kMaxNodes));
  planner->add_option("--gpus-per-node", pl.gpus_per_node, "GPU: GPUs per NVLink node")->check(cli::size_check("--gpus-per-node", cli::limits::kMaxChips));
  planner->add_option("--nvlink-bw", pl.nvlink_bw, "GPU: NVLink bandwidth per GPU, bytes/s (both directions)")->check(cli::positive_check("--nvlink-bw"));
  planner->add_option("--ib-bw", pl.ib_bw, "GPU: InfiniBand bandwidth per GPU, bytes/s (one direction)")->check(cli::positive_check("--ib-bw"));
  planner->add_option("--batch-tokens", pl.batch_tokens, "global batch per step, tokens")->check(cli::size_check("--batch-tokens"));
  planner->add_option("--seq", pl.seq, "sequence length (the attention a rerun repeats; default 4096)")->check(cli::size_check("--seq"));
  planner->add_option("--top", pl.top, "print the K fastest layouts (default 1, at most 1000)");
  planner->add_option("--saved", pl.saved, "activation rules to try: input,matmuls,all (default all three)")->check(cli::list_check("--saved", cli::limits::kMaxSavedRules));
  planner->add_option("--zero", pl.zero, "ZeRO stages to try, e.g. 1,3 (default 0,1,2,3)")->check(cli::list_check("--zero", cli::limits::kMaxZeroStages));
  planner->add_option("--max-microbatches", pl.max_microbatches, "largest microbatch count (powers of 2; default 256)");
  planner->add_option("--cost-model", pl.cost_model, "exact (default) or book (§5.1.4's FSDP × TP on one slice)");
  planner->add_flag("--json", pl.json, "print one JSON object, SI units");
  on(planner, [&] { cli::run_plan(pl); });
  cli::add_layout(app);
  cli::add_dot(app);
  cli::add_serve(app);

  // Every message is one line: user values may hold newlines or escapes, so the whole text is escaped
  // (and cut when very long) where it is printed. Exit 2 for usage, 1 for a value, 3 for a bug of ours.
  auto say = [](const std::string& message, const char* suffix = "") {
    std::cerr << "scaling: " << scaling::escape_for_message(message, 600) << suffix << "\n";
  };
  cli::pending() = nullptr;
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return 0;
  } catch (const CLI::ParseError& e) {
    // An unknown option is named even when CLI11 first finds a required one missing: "--ctx" is the
    // mistake, not "--context is required".
    const auto extra = app.remaining(true);
    if (!extra.empty() && dynamic_cast<const CLI::ExtrasError*>(&e) == nullptr) {
      say("unknown option or argument '" + extra.front() + "'", " (see scaling --help)");
      return 2;
    }
    say(e.what(), " (see scaling --help)");
    return 2;
  } catch (const std::invalid_argument& e) {  // a typed option's check (options.hpp): a bad value, exit 1
    say(e.what());
    return 1;
  }

  try {
    // An option without a default given an empty value ('--model ""') is a bad value of that option, not
    // a missing one (runners read an empty string as "not given"); options with a default check their own.
    for (const auto* sub : app.get_subcommands())
      for (const auto* opt : sub->get_options())
        if (opt->get_type_size() != 0 && opt->count() > 0 && opt->get_default_str().empty())
          for (const auto& value : opt->results())
            if (value.empty()) throw std::invalid_argument(opt->get_name() + " '': empty value");
    if (!cli::pending()) throw cli::UsageError("a subcommand is required");
    cli::pending()();
    return 0;
  } catch (const cli::UsageError& e) {
    say(e.what(), " (see scaling --help)");
    return 2;
  } catch (const std::invalid_argument& e) {
    say(e.what());
    return 1;
  } catch (const nlohmann::json::exception& e) {  // a value JSON cannot hold or a mistyped field left unchecked
    say(std::string("invalid JSON value: ") + e.what());
    return 1;
  } catch (const std::exception& e) {
    say(std::string("internal error: ") + e.what());
    return 3;
  }
}
