// `scaling`: the book's questions for any chip, shape and model. See README.md, "Use the CLI".
// This is the only file that uses CLI11: it declares every subcommand's options, fills the argument
// structs of commands.hpp and runs the chosen subcommand.
#include <CLI/CLI.hpp>

#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "commands.hpp"
#include "scaling/base/format.hpp"
#include "scaling_main.hpp"

int scaling_main(int argc, char** argv) {
  CLI::App app{"scaling: roofline and scaling arithmetic from How to Scale Your Model"};
  app.require_subcommand(1);
  std::function<void()> chosen;
  auto on = [&](CLI::App* sub, std::function<void()> run) { sub->callback([&chosen, run] { chosen = run; }); };
  // Every subcommand that runs on a chip takes a preset or a chip file, and overrides of single figures.
  auto add_chip_options = [](CLI::App* sub, cli::ChipArgs& c) {
    auto* preset = sub->add_option("--chip", c.chip, "chip preset (see `scaling chips`)");
    auto* file = sub->add_option("--chip-file", c.chip_file, "a JSON chip description (`scaling chips --json` format)");
    preset->excludes(file);
    file->excludes(preset);
    sub->add_option("--hbm-bytes", c.hbm_bytes, "override: HBM capacity per chip, bytes");
    sub->add_option("--hbm-bw", c.hbm_bw, "override: HBM bandwidth per chip, bytes/s");
    sub->add_option("--flops", c.flops, "override: peak bf16 FLOPs/s per chip");
    sub->add_option("--flops-int8", c.flops_int8, "override: peak int8 OPs/s per chip");
    sub->add_option("--ici-bw", c.ici_bw, "override: ICI bandwidth per link, one way, bytes/s (both ways: twice)");
  };

  bool chips_json = false;
  auto* chips = app.add_subcommand("chips", "list the chip presets and their figures");
  chips->add_flag("--json", chips_json, "print a JSON array, SI units");
  on(chips, [&] { cli::run_chips(chips_json); });

  cli::MatmulArgs mm;
  auto* matmul = app.add_subcommand("matmul", "roofline of X[B, D]·Y[D, F] -> Z[B, F] on one chip (§1.1.2)");
  add_chip_options(matmul, mm.chip);
  matmul->add_option("--B", mm.B, "batch (rows of X), a positive whole number")->required();
  matmul->add_option("--D", mm.D, "contracting dimension")->required();
  matmul->add_option("--F", mm.F, "output dimension")->required();
  matmul->add_option("--lhs-dtype", mm.lhs, "dtype of X (fp32, bf16, fp8, int8, int4)")->capture_default_str();
  matmul->add_option("--rhs-dtype", mm.rhs, "dtype of Y")->capture_default_str();
  matmul->add_option("--out-dtype", mm.out, "dtype of Z")->capture_default_str();
  matmul->add_option("--compute-dtype", mm.compute, "dtype the MXU computes in: picks the bf16 or int8 peak")
      ->capture_default_str();
  matmul->add_flag("--json", mm.json, "print one JSON object, SI units");
  on(matmul, [&] { cli::run_matmul(mm); });

  cli::CollectiveArgs co;
  auto* collective = app.add_subcommand("collective", "exact time of a collective over slice axes (§3)");
  add_chip_options(collective, co.chip);
  collective->add_option("--slice", co.slice, "slice shape, e.g. 4x4x4")->required();
  collective->add_option("--op", co.op, "all-gather, reduce-scatter, all-reduce or all-to-all")->required();
  collective->add_option("--axes", co.axes, "slice axes it runs over, e.g. 0 or 0,1")->required();
  collective->add_option("--bytes", co.bytes, "V: the gathered array (AllGather), the unreduced input "
                                              "(ReduceScatter, AllReduce) or the array (AllToAll), in bytes")
      ->required();
  collective->add_option("--wrap", co.wrap, "wraparound: auto (§2.2 rules), yes or no")->capture_default_str();
  collective->add_flag("--json", co.json, "print one JSON object, SI units");
  on(collective, [&] { cli::run_collective(co); });

  cli::SimulateArgs si;
  auto* simulate = app.add_subcommand("simulate", "run a collective on a virtual wrapped ring, on real data");
  simulate->add_option("--op", si.op, "all-gather, reduce-scatter, all-reduce, all-to-all or ppermute")->required();
  simulate->add_option("--devices", si.devices, "devices on the ring")->required();
  simulate->add_option("--direction", si.direction, "uni or bi")->required();
  simulate->add_option("--elements", si.elements, "elements of the whole array (a multiple of devices; of "
                                                   "devices² for all-to-all)")
      ->required();
  simulate->add_flag("--count-only", si.count_only, "no data, counts only (for large rings); correct is null");
  simulate->add_flag("--json", si.json, "print one JSON object");
  on(simulate, [&] { cli::run_simulate(si); });

  cli::ShardArgs sh;
  auto* shard = app.add_subcommand("shard", "local shape and memory of a sharded array, e.g. 'A[I_XY, J]'");
  shard->add_option("sharding", sh.sharding, "the sharding in named-axis notation")->required();
  shard->add_option("--mesh", sh.mesh, "mesh axes and sizes, e.g. X=2,Y=8,Z=2")->required();
  shard->add_option("--shape", sh.shape, "global shape, e.g. 128,2048")->required();
  shard->add_option("--dtype", sh.dtype, "element type")->capture_default_str();
  shard->add_flag("--json", sh.json, "print one JSON object");
  on(shard, [&] { cli::run_shard(sh); });

  bool models_json = false;
  auto* models = app.add_subcommand("models", "list the model presets");
  models->add_flag("--json", models_json, "print a JSON array");
  on(models, [&] { cli::run_models(models_json); });

  cli::ParamsArgs pa;
  auto* params = app.add_subcommand("params", "parameter counts and KV-cache bytes of a model");
  auto* model_opt = params->add_option("--model", pa.model, "a preset (see `scaling models`)");
  auto* config_opt = params->add_option("--config", pa.config, "a HuggingFace config.json (llama, mistral, mixtral, gemma)");
  model_opt->excludes(config_opt);
  config_opt->excludes(model_opt);
  params->add_option("--kv-dtype", pa.kv_dtype, "dtype of the KV cache")->capture_default_str();
  params->add_flag("--json", pa.json, "print one JSON object");
  on(params, [&] { cli::run_params(pa); });

  cli::CollectiveMatmulArgs cm;
  auto* cmatmul = app.add_subcommand("collective-matmul", "a §10 collective matmul on the virtual mesh, with its timeline");
  cmatmul->add_option("--kind", cm.kind, "all-gather, reduce-scatter, all-reduce or ffn")->required();
  add_chip_options(cmatmul, cm.chip);
  cmatmul->add_option("--mesh", cm.mesh, "the mesh X=a,Y=b: X shards the batch, Y the model")->required();
  cmatmul->add_option("--B", cm.B, "batch")->required();
  cmatmul->add_option("--D", cm.D, "model dimension")->required();
  cmatmul->add_option("--F", cm.F, "hidden (feed-forward) dimension")->required();
  cmatmul->add_option("--direction", cm.direction, "uni (one ring direction) or bi (half each way)")->capture_default_str();
  cmatmul->add_option("--wrap", cm.wrap, "wraparound: auto (§2.2 rules), yes or no")->capture_default_str();
  cmatmul->add_flag("--verify", cm.verify, "run on real numbers and compare with the plain matmul (small sizes)");
  cmatmul->add_flag("--json", cm.json, "print one JSON object, SI units");
  on(cmatmul, [&] { cli::run_collective_matmul(cm); });

  // Every message is one line: user values may hold newlines or escapes, so the whole text is escaped
  // (and cut when very long) where it is printed. Exit 2 for usage, 1 for a value, 3 for a bug of ours.
  auto say = [](const std::string& message, const char* suffix = "") {
    std::cerr << "scaling: " << scaling::escape_for_message(message, 600) << suffix << "\n";
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return 0;
  } catch (const CLI::ParseError& e) {
    say(e.what(), " (see scaling --help)");
    return 2;
  }

  try {
    // An option given an empty value ('--model ""') is a bad value of that option, not a missing option.
    for (const auto* sub : app.get_subcommands())
      for (const auto* opt : sub->get_options())
        if (opt->get_type_size() != 0 && opt->count() > 0)
          for (const auto& value : opt->results())
            if (value.empty()) throw std::invalid_argument(opt->get_name() + " '': empty value");
    chosen();
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
