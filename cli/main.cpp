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

  // `train` and `plan` take the same machine, layout and setup options (README: "Train and plan").
  auto add_machine_options = [](CLI::App* sub, cli::MachineArgs& m) {
    sub->add_option("--slice", m.slice, "TPU: the slice (pod) shape, e.g. 16x20x28");
    sub->add_option("--pods", m.pods, "TPU: that many slices over DCN (default 1)");
    sub->add_option("--nodes", m.nodes, "GPU: nodes over InfiniBand (bandwidths from the chip preset)");
    sub->add_option("--gpus-per-node", m.gpus_per_node, "GPU: GPUs per NVLink node (default: the preset's)");
    sub->add_option("--chips", m.chips, "a chip count instead: one TPU ICI axis, or GPUs filling whole nodes");
    sub->add_option("--nvlink-bw", m.nvlink_bw, "GPU override: NVLink bytes/s per GPU, one direction");
    sub->add_option("--ib-bw", m.ib_bw, "GPU override: InfiniBand bytes/s per GPU, one direction");
  };
  auto add_step_options = [](CLI::App* sub, cli::StepArgs& s, bool lists) {
    sub->add_option("--dp", s.dp, "data-parallel degree (default: the chips left by --tp and --pp)");
    sub->add_option("--tp", s.tp, "tensor-parallel degree (default 1)");
    sub->add_option("--pp", s.pp, "pipeline degree (default 1)");
    sub->add_option("--fsdp", s.fsdp, "FSDP degree X: --dp X --zero 3");
    sub->add_option("--microbatches", s.microbatches, "gradient-accumulation microbatches (default 1)");
    sub->add_option("--zero", s.zero, lists ? "ZeRO stages to try, e.g. 1,3 (default 0,1,2,3; 3 given every degree)"
                                            : "ZeRO stage 0-3 (default 3)");
    sub->add_option("--zero-scope", s.zero_scope, "ZeRO shards over: all (every replica, default) or group (one slice/node)");
    sub->add_option("--saved", s.saved, lists ? "activation rules to try: input, matmuls, all or a sum such as D+2F "
                                                "(default the three names; D+2F given every degree)"
                                              : "activations saved per layer: input, matmuls, all, or a sum of D, F, "
                                                "NH, KH such as 4D or D+2F (default D+2F)");
    sub->add_option("--seq", s.seq, "sequence length (the attention a rerun repeats; default 4096)");
    sub->add_option("--cost-model", s.cost_model, "exact (default) or book (§5.1.4's FSDP × TP on one slice)");
    sub->add_option("--weights", s.weights, "dtype of the weights (and of the saved activations)")->capture_default_str();
    sub->add_option("--grads", s.grads, "dtype of the gradient buffer, or none")->capture_default_str();
    sub->add_option("--optimizer", s.optimizer, "adam (two fp32 moments) or sgd (no state)")->capture_default_str();
    sub->add_option("--master", s.master, "an fp32 master copy of the weights: none or fp32")->capture_default_str();
  };

  cli::TrainArgs tr;
  auto* train = app.add_subcommand("train", "training memory, step time and the §5 bounds for one layout");
  train->add_option("--model", tr.model, "a preset (see `scaling models`)");
  train->add_option("--config", tr.config, "a HuggingFace config.json");
  add_chip_options(train, tr.chip);
  add_machine_options(train, tr.machine);
  add_step_options(train, tr.step, false);
  train->add_option("--batch-tokens", tr.batch_tokens, "global batch in tokens")->required();
  train->add_option("--tokens", tr.tokens, "training tokens: gives total_flops and time_s");
  train->add_option("--mfu", tr.mfu, "model FLOPs utilisation in (0, 1]")->capture_default_str();
  train->add_flag("--json", tr.json, "print one JSON object, SI units");
  on(train, [&] { cli::run_train(tr); });

  cli::PlanArgs pl;
  auto* planner = app.add_subcommand("plan", "the parallelism planner: the fastest layouts that fit (§5, §6)");
  planner->add_option("--model", pl.model, "a preset (see `scaling models`)");
  planner->add_option("--config", pl.config, "a HuggingFace config.json");
  add_chip_options(planner, pl.chip);
  add_machine_options(planner, pl.machine);
  add_step_options(planner, pl.step, true);
  planner->add_option("--batch-tokens", pl.batch_tokens, "global batch per step, tokens");
  planner->add_option("--top", pl.top, "print the K fastest layouts (default 1, at most 1000)");
  planner->add_option("--max-microbatches", pl.max_microbatches, "largest microbatch count (powers of 2; default 256)");
  planner->add_flag("--json", pl.json, "print one JSON object, SI units");
  on(planner, [&] { cli::run_plan(pl); });
  cli::LayoutArgs la;
  auto* layout = app.add_subcommand("layout", "an HLO shape's tiled layout: where each element lands in memory (§9.2.2)");
  layout->add_option("shape", la.shape, "an HLO shape, e.g. 'bf16[4,8]{1,0:T(2,4)(2,1)}'")->required();
  auto* index_opt = layout->add_option("--index", la.index, "one element i,j,…: its offset");
  auto* grid_opt = layout->add_flag("--grid", la.grid, "every element's offset, laid out like the shape");
  index_opt->excludes(grid_opt);
  grid_opt->excludes(index_opt);
  layout->add_flag("--json", la.json, "print one JSON object");
  on(layout, [&] { cli::run_layout(la); });

  cli::DotArgs da;
  auto* dot = app.add_subcommand("dot", "the dot_general XLA gets from a two-operand einsum (§9.1)");
  dot->add_option("spec", da.spec, "the einsum, e.g. 'bf,fd->db'")->required();
  dot->add_option("--shapes", da.shapes, "the two operands: HLO shapes (f32[128,256]) or sizes (128,256)")
      ->expected(2)
      ->required();
  dot->add_option("--dtypes", da.dtypes, "their element types, XLA's names (default f32, JAX's default)")->expected(2);
  dot->add_flag("--json", da.json, "print one JSON object");
  on(dot, [&] { cli::run_dot(da); });
  cli::ServeArgs sv;
  auto* serve = app.add_subcommand("serve", "decode step time, memory and throughput of a model on a slice (§7, §8)");
  serve->add_option("--model", sv.model, "a preset (see `scaling models`)");
  serve->add_option("--config", sv.config, "a HuggingFace config.json (llama, mistral, mixtral, gemma)");
  add_chip_options(serve, sv.chip);
  serve->add_option("--slice", sv.slice, "slice shape, e.g. 4x4 (or give --chips)");
  serve->add_option("--chips", sv.chips, "number of chips (or give --slice)");
  serve->add_option("--batch", sv.batch, "B: sequences decoded together")->required();
  serve->add_option("--context", sv.context, "T: KV entries each sequence reads per step")->required();
  serve->add_option("--weights", sv.weights, "dtype of the stored weights (bf16, int8, int4, …)")->capture_default_str();
  serve->add_option("--kv", sv.kv, "dtype of the KV cache (bf16, int8, int4, …)")->capture_default_str();
  serve->add_option("--compute", sv.compute, "dtype of the FLOPs: bf16 or int8 (picks the chip's peak)")
      ->capture_default_str();
  serve->add_option("--decode-len", sv.decode_len, "G: tokens decoded per request (adds qps_per_chip)");
  serve->add_option("--prefill-len", sv.prefill_len, "P: prompt tokens of one prefill (with --mfu: adds prefill_s)");
  serve->add_option("--mfu", sv.mfu, "model FLOPs utilisation of the prefill, in (0, 1]");
  serve->add_flag("--frontier", sv.frontier, "latency and throughput per chip for every batch that fits, Pareto set marked");
  serve->add_flag("--json", sv.json, "print one JSON object, SI units");
  on(serve, [&] { cli::run_serve(sv); });

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
    // An option without a default given an empty value ('--model ""') is a bad value of that option, not
    // a missing one (runners read an empty string as "not given"); options with a default check their own.
    for (const auto* sub : app.get_subcommands())
      for (const auto* opt : sub->get_options())
        if (opt->get_type_size() != 0 && opt->count() > 0 && opt->get_default_str().empty())
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
