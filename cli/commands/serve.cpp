// `scaling serve`: the decode step of a model on a slice or GPU node under one of the three cost models
// (--cost-model calibrated, the default; ideal; book = §7.1.5's equation) — step time and its terms, memory,
// the largest batch, the smallest slice, and with --frontier every batch's latency and throughput.
// ideal and calibrated include the tensor-parallel collectives over the slice's ICI axes or the GPUs'
// NVLink (and InfiniBand across nodes): every chip holds a shard of every weight, so each layer reduces its
// activations; the rules are in cost/inference.hpp, the calibrated constants in cost/serving_calibration.hpp. `--chips auto` serves on the
// smallest allowed slice (GPUs: 1, 2, 4, 8 of a node, then whole nodes) that holds the weights and the
// batch's KV cache. A configuration that does not fit prints its memory and terms but no throughput.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <algorithm>
#include <memory>
#include <optional>
#include <tuple>
#include <vector>

#include "../options.hpp"
#include "../output.hpp"
#include "../step_options.hpp"
#include "modules.hpp"
#include "scaling/base/format.hpp"
#include "scaling/base/validate.hpp"
#include "scaling/cost/frontier.hpp"
#include "scaling/cost/inference.hpp"
#include "scaling/cost/serving_calibration.hpp"
#include "scaling/hardware/system.hpp"
#include "scaling/hardware/topology.hpp"
#include "scaling/model/presets.hpp"

namespace cli {

namespace {

struct Args {
  ChipArgs chip;
  std::string model, config, slice, chips, batch, context, weights = "bf16", kv = "bf16", compute = "bf16";
  std::string decode_len, prefill_len, mfu, cost_model = "calibrated";
  std::string nvlink_bw, ib_bw;  // GPU overrides of the preset's NVLink and InfiniBand bytes/s per GPU
  bool frontier = false, json = false;
};


// The fewest GPUs allowed to serve (1, 2, 4 or 8 of a node, then whole nodes) of at least `need`, up to
// the chip limit.
double gpu_min_chips(const scaling::Chip& c, double need) {
  const double g = c.gpus_per_node;
  for (double n : {1.0, 2.0, 4.0, 8.0})
    if (n <= g && n >= need) return n;
  const double nodes = std::ceil(need / g);
  return std::min(nodes, std::floor(limits::kMaxChips / g)) * g;
}

// --chips auto: the smallest allowed machine whose HBM holds weights + KV (none: the largest one, which
// does not fit). GPUs past one node: whole nodes, up to the chip limit.
double auto_chips(const scaling::Chip& c, const scaling::DecodeInputs& one_chip, double B, double T,
                  std::vector<int>& shape) {
  using namespace scaling;
  const double need = std::max(1.0, min_chips(one_chip, B, T));
  if (is_gpu(c)) return gpu_min_chips(c, need);
  const auto slices = allowed_slices(c);
  const auto s = smallest_slice(c, need);
  shape = s ? *s : slices.back();
  return chips_in(shape);
}

void run(const Args& a) {
  using namespace scaling;
  const TransformerConfig cfg = resolve_model("serve", a.model, a.config);
  if (a.slice.empty() == a.chips.empty())
    throw UsageError(a.slice.empty() ? "serve: give --slice AxB[xC] or --chips N" : "serve: give --slice or --chips, not both");
  if (a.prefill_len.empty() != a.mfu.empty())
    throw UsageError(a.mfu.empty() ? "--prefill-len '" + escape_for_message(a.prefill_len) +
                                         "': needs --mfu (the prefill's assumed utilisation); give both or neither"
                                   : "--mfu '" + escape_for_message(a.mfu) +
                                         "': serve reads it only for --prefill-len; give both or neither");
  const Chip c = resolve_chip(a.chip);
  const CostModel cm = for_option("--cost-model", [&] { return parse_cost_model(a.cost_model); });
  const double B = parse_size("--batch", a.batch), T = parse_size("--context", a.context);
  InferenceDtypes d{parse_dtype(a.weights), parse_dtype(a.kv), parse_dtype(a.compute)};
  if (d.compute != Dtype::bf16 && d.compute != Dtype::int8 && d.compute != Dtype::fp8)
    check::fail(check::subject("--compute", a.compute), check::one_of_rule({"bf16", "int8", "fp8"}));
  for_option("--compute", [&] { return peak_flops_per_s(c, d.compute); });
  const std::string option = a.slice.empty() ? "--chips" : "--slice";
  const bool automatic = a.chips == "auto";
  if (automatic && !is_gpu(c) && c.pod_shape.empty())
    check::fail(check::subject("--chips", a.chips), "auto needs a TPU or GPU preset (this chip has no slices or nodes)");
  // The slice is checked against the chip exactly as collective does it (slice_on_chip).
  std::vector<int> shape;
  double n = 0;
  if (automatic)
    n = auto_chips(c, for_option("--chips", [&] { return decode_inputs(cfg, c, 1, d); }), B, T, shape);
  else if (!a.slice.empty())
    shape = slice_on_chip(c, "--slice", a.slice).shape, n = chips_in(shape);
  else
    n = parse_size("--chips", a.chips, limits::kMaxChips);
  if (is_gpu(c) && n > c.gpus_per_node && std::fmod(n, c.gpus_per_node) != 0)
    check::fail(check::subject(option, a.chips), fmt::format("{} GPUs span nodes of {}: more than one node must be whole nodes",
                                                             format_number(n), c.gpus_per_node));
  // The machine: the slice given, else serving_system's (a TPU slice of n chips, a GPU node or whole nodes).
  System system = for_option(option, [&] { return shape.empty() ? serving_system(c, n) : tpu_pods(c, shape, 1); });
  if (!a.nvlink_bw.empty() || !a.ib_bw.empty()) {
    // The bandwidth overrides through the machine options train, plan and collective share (a TPU names
    // the flag it refuses); the GPUs as --chips n, the node split serving_system made.
    MachineArgs m;
    m.slice = a.slice;
    m.chips = a.slice.empty() ? format_number(n) : std::string();
    m.nvlink_bw = a.nvlink_bw;
    m.ib_bw = a.ib_bw;
    system = resolve_system("serve", c, m);
  }
  const DecodeInputs in = for_option(option, [&] { return decode_inputs(cfg, system, d); });
  // A TPU's ICI or a GPU's NVLink; a chip file with neither is served without the collectives.
  const bool links = has_links(system);
  const std::optional<System> sys = links ? std::optional<System>(system) : std::nullopt;
  auto options = chip_overrides(a.chip);
  options.insert(options.begin(), {{"--model", a.model}, {"--config", a.config}, {"--slice", a.slice},
                                   {"--chips", a.chips}, {"--nvlink-bw", a.nvlink_bw}, {"--ib-bw", a.ib_bw}, {"--batch", a.batch}, {"--context", a.context}});
  const std::string inputs = given(options);
  require_finite("the KV cache's bytes", B * T * in.kv_bytes_per_token, inputs);
  const DecodeTerms s = for_option("--cost-model", [&] { return decode_terms(in, B, T, cm); });
  const bool fit = fits(in, B, T);
  const double chips_needed = min_chips(in, B, T);
  const auto slice = smallest_slice(c, chips_needed);
  // A GPU's smallest machine is a GPU count (whole nodes past one node); "none" when even the most
  // GPUs the CLI takes do not hold it.
  const double gpu_min = is_gpu(c) ? gpu_min_chips(c, std::max(1.0, chips_needed)) : 0;
  const std::string slice_text = is_gpu(c)  ? (gpu_min >= chips_needed ? format_number(gpu_min) : "none")
                                 : slice ? shape_text(*slice)
                                         : "none";
  const double b_max = max_batch(in, T);

  // Where the calibrated rates come from: serving_calibration finds a measured card's tables by the chip's
  // name, so a chip file copying a preset under another name runs at datasheet rates (README "Your own chip").
  const ServingCalibration sc = serving_calibration(c);
  // Where the calibrated matmul rates come from is the note's (below): a chip's own tables cover some weight
  // dtypes and dense layers only, the rest runs at a roofline.
  const char* math_label = cm != CostModel::calibrated ? "t_math (all FLOPs)" : "t_math (every matmul, calibrated)";
  // The chip's figures given that the step does not read, by the rule train's and plan's ignored_options keep:
  // each figure given is set to 1 (FLOP/s, B/s), so that any roofline it enters binds whatever value was typed,
  // and the step's own terms (its rule's) timed again; one that moves none of them is listed, with the reason.
  const auto step_parts = [cm](const DecodeTerms& t) {
    if (cm == CostModel::book) return std::vector<double>{t.step_s, t.t_kv_s, t.t_flops_s, t.t_params_s};
    if (cm == CostModel::ideal) return std::vector<double>{t.step_s, t.t_hbm_s, t.t_math_s, t.t_comms_s};
    return std::vector<double>{t.step_s, t.t_math_s, t.t_hbm_s, t.t_vector_s, t.t_comms_s};
  };
  std::vector<std::string> ignored, ignored_why;
  for (const auto& [option, text, field, dtype] :
       {std::tuple{"--flops", a.chip.flops, &Chip::bf16_flops_per_s, Dtype::bf16},
        std::tuple{"--flops-int8", a.chip.flops_int8, &Chip::int8_flops_per_s, Dtype::int8},
        std::tuple{"--hbm-bw", a.chip.hbm_bw, &Chip::hbm_bytes_per_s, Dtype::bf16}}) {
    if (text.empty()) continue;
    System moved = system;
    moved.chip.*field = 1;
    if (step_parts(decode_terms(decode_inputs(cfg, moved, d), B, T, cm)) != step_parts(s)) continue;
    ignored.emplace_back(option);
    const bool peak = field != &Chip::hbm_bytes_per_s;
    ignored_why.push_back(fmt::format(
        "{} ({})", option,
        peak && dtype != d.compute ? fmt::format("the matmuls run in {}", name(d.compute))
        : cm == CostModel::calibrated
            ? (peak ? "the matmuls run at the chip's measured rates, calibration.matmuls in the JSON; the critical "
                      "batch and a prefill at --mfu still use it"
                    : "the step reads the chip's measured bandwidth, calibration.memory in the JSON; the critical "
                      "batch still uses it")
            : "the step does not read it here"));
  }

  Report r;
  r.label_width = 44;
  r.heading = fmt::format("{} on {} (weights {}, KV {}, compute {}): batch {}, context {}; {} cost model", cfg.name,
                          system.name, name(d.weights), name(d.kv), name(d.compute), format_number(B),
                          format_number(T), to_string(cm));
  const char* step_rule = cm == CostModel::book    ? "step = t_kv + max(t_flops, t_params)"
                          : cm == CostModel::ideal ? "step = max(t_hbm, t_math, t_comms)"
                                                   : "step = t_math + t_hbm + t_vector + t_comms";
  r.outputs = {{"model", "", cfg.name},
               {"cost_model", "cost model", std::string(to_string(cm))},
               {"chip", "", c.name},
               {"chips", "", n, kCount},
               {"system", "", system.name},
               {"batch", "", B, kCount},
               {"context", "", T, kCount},
               {"weights", "", std::string(name(d.weights))},
               {"kv", "", std::string(name(d.kv))},
               {"compute", "", std::string(name(d.compute))},
               {"param_bytes", "parameters", in.param_bytes, "B"},
               {"kv_bytes_per_token", "KV per token", in.kv_bytes_per_token, "B"},
               {"kv_bytes", "KV of the batch", s.kv_bytes, "B"},
               {"total_bytes", "weights + KV", in.param_bytes + s.kv_bytes, "B"},
               {"hbm_bytes", "HBM of the slice", hbm_bytes(in), "B"},
               {"fits", "fits", fit},
               {"max_batch", "largest batch that fits", b_max, kCount},
               {"t_kv_s", "t_kv (KV read)", s.t_kv_s, "s"},
               {"t_params_s", "t_params (weight read)", s.t_params_s, "s"},
               {"t_flops_s", "t_flops (MLP and projections)", s.t_flops_s, "s"},
               {"t_math_s", math_label, s.t_math_s, "s"},
               {"t_hbm_s", cm == CostModel::calibrated ? "t_hbm (KV read)" : "t_hbm (weights + KV)", s.t_hbm_s, "s"},
               {"step_s", step_rule, s.step_s, "s"},
               {"bound", "bound", std::string(bound(s))}};
  if (cm == CostModel::calibrated)
    r.outputs.insert(r.outputs.end() - 2, {"t_vector_s", "t_vector (norms, adds, activation)", s.t_vector_s, "s"});
  if (sys && cm != CostModel::book) {
    r.outputs.insert(r.outputs.end() - 2,
                     {"t_comms_s", fmt::format("t_comms ({}{} collectives)", sys->fast_name, sys->slow.groups > 1 ? " + " + sys->slow.name : ""), s.t_comms_s, "s",
                      fmt::format("({} {} × {} per step, latency {} each{})", format_number(s.comms_collectives),
                                  cm == CostModel::ideal ? "gathers and reduce-scatters" : "AllReduces",
                                  format_quantity(s.comms_bytes, "B"), format_quantity(s.comms_latency_s, "s"),
                                  s.comms_latency_bound ? ", latency-bound" : "")});
    r.outputs.push_back({"comms_bytes", "", s.comms_bytes, "B"});
    r.outputs.push_back({"comms_collectives", "", s.comms_collectives, kCount});
  } else if (cm != CostModel::book) {
    // One chip (or a chip file without links): no collectives, printed as zeros so every run's JSON has
    // the same keys.
    r.outputs.insert(r.outputs.end() - 2, {"t_comms_s", "t_comms (no links: none)", 0.0, "s"});
    r.outputs.push_back({"comms_bytes", "", 0.0, "B"});
    r.outputs.push_back({"comms_collectives", "", 0.0, kCount});
  }
  if (fit) {
    r.outputs.push_back({"tokens_per_s", "tokens/s", s.tokens_per_s});
    r.outputs.push_back({"tokens_per_s_per_chip", "tokens/s per chip", s.tokens_per_s_per_chip});
  } else {
    r.outputs.push_back({"", "tokens/s", std::string("none: weights + KV exceed the HBM")});
  }
  r.outputs.insert(r.outputs.end(), {
               {"critical_batch", "compute-bound MLP above batch", critical_batch(in)},
               {"min_chips", "fewest chips (weights + KV)", chips_needed, kCount},
               {"min_slice", "smallest slice", slice_text}});
  if (!a.decode_len.empty() && fit)
    r.outputs.push_back({"qps_per_chip", "queries/s per chip", qps_per_chip(s, parse_size("--decode-len", a.decode_len))});
  if (!a.prefill_len.empty()) {
    const double mfu = check::number("--mfu", a.mfu);
    const double P = parse_size("--prefill-len", a.prefill_len);
    const auto p = for_option("--prefill-len/--mfu", [&] { return prefill(in, P, mfu); });
    r.outputs.push_back({"prefill_s", "prefill of one prompt", p.t_s, "s"});
    r.outputs.push_back({"prefill_flops", "", p.flops, "FLOPs"});
  }
  if (a.frontier) {
    if (b_max > limits::kMaxFrontierPoints)
      check::fail(check::subject("--context", a.context),
                     fmt::format("--frontier: {} batches fit at this context, more than the {} points the frontier "
                                 "prints; give a longer context or fewer chips",
                                 format_number(b_max), format_number(limits::kMaxFrontierPoints)));
    const auto points = frontier(in, T, cm, limits::kMaxFrontierPoints);
    auto& f = r.extra["frontier"] = nlohmann::json::array();
    r.tail = fmt::format("\n  {:>8} {:>12} {:>18} {}\n", "batch", "step", "tokens/s/chip", "Pareto");
    for (const auto& p : points) {
      require_finite("a frontier point", p.step_s * p.tokens_per_s_per_chip, inputs);
      f.push_back({{"batch", count_json(p.batch)}, {"step_s", p.step_s}, {"tokens_per_s_per_chip", p.tokens_per_s_per_chip},
                   {"pareto", p.pareto}});
      r.tail += fmt::format("  {:>8} {:>12} {:>18} {}\n", format_number(p.batch), format_quantity(p.step_s, "s"),
                            format_number(p.tokens_per_s_per_chip), p.pareto ? "*" : "");
    }
  }
  // A context (or a prompt) longer than a learned position table: said once per option.
  std::vector<std::string> position_notes;
  for (const auto& [option, text] : {std::pair{std::string("--context"), a.context}, std::pair{std::string("--prefill-len"), a.prefill_len}}) {
    if (text.empty()) continue;
    const double tokens = parse_size(option, text);
    const std::string note = positions_note(cfg, tokens, option + " " + format_number(tokens));
    if (!note.empty()) position_notes.push_back(note);
  }
  std::string positions_text;
  if (!position_notes.empty()) r.extra["notes"] = notes_json(position_notes);
  for (const auto& note : position_notes) positions_text += escape_for_message(note, 400) + "\n";
  r.extra["ignored_options"] = ignored;
  std::string head;  // the notes, above the table as train and plan print theirs
  if (!ignored.empty())
    head += fmt::format("note: the {} cost model ignores {}\n", to_string(cm), fmt::join(ignored_why, "; "));
  if (cm == CostModel::calibrated) {
    const bool own = sc.gemm_bf16 != nullptr;
    const std::string chip_name = escape_for_message(c.name);
    const std::string matmuls =
        own ? fmt::format("measured GEMM tables of the {} (validation/gemm/{}.json: 2- and 1-byte weights, layers "
                          "with matmul shapes; other weights and MoE layers at the roofline of the chip's peak)",
                          chip_name, chip_name)
        : sc.proxy_bf16 ? fmt::format("this chip's roofline times the measured-over-roofline ratio of the {} "
                                      "(validation/gemm/h100.json) at the same shape",
                                      sc.proxy_bf16->card)
                        : std::string("the roofline at the datasheet peak and bandwidth");
    r.extra["calibration"] = {{"chip", c.name},
                              {"measured", sc.measured},
                              {"preset", is_preset_name(c.name)},
                              {"matmuls", matmuls},
                              {"memory", sc.hbm_source}};
    head += sc.measured ? fmt::format("note: calibrated rates: matmuls from {}; memory from {}\n", matmuls,
                                      sc.hbm_source)
                        : fmt::format("note: no measured table for '{}' (the calibrated model finds them by chip "
                                      "name; measured: {}): matmuls at the roofline of the datasheet peak and bandwidth, "
                                      "memory at the datasheet bandwidth (JSON: calibration)\n",
                                      chip_name, fmt::join(measured_cards(), ", "));
  }
  r.head = head + positions_text;
  emit(r, a.json, inputs);
}

}  // namespace

void add_serve(CLI::App& app) {
  auto a = std::make_shared<Args>();
  auto* sub = app.add_subcommand("serve", "decode step time, memory and throughput of a model on a slice (§7, §8)");
  add_name(sub, "--model", a->model, "a preset (see `scaling models`)", [](const std::string& t) { scaling::model(t); });
  add_path(sub, "--config", a->config, "a HuggingFace config.json (llama, mistral, mixtral, gemma, gpt2, gpt_neox, opt)");
  add_chip_options(sub, a->chip);
  sub->add_option("--slice", a->slice, "slice shape, e.g. 4x4 (or give --chips)")->check(shape_check("--slice"));
  sub->add_option("--chips", a->chips,
                  "number of chips, or auto: the smallest slice (GPUs: node) that holds weights + KV (or give --slice)")
      ->check(CLI::Validator(
          [](std::string& t) { return t == "auto" ? std::string() : size_check("--chips", limits::kMaxChips)(t); },
          "N|auto"));
  sub->add_option("--nvlink-bw", a->nvlink_bw, "GPU override: NVLink bytes/s per GPU, one direction")
      ->check(positive_check("--nvlink-bw"));
  sub->add_option("--ib-bw", a->ib_bw, "GPU override: InfiniBand bytes/s per GPU, one direction")
      ->check(positive_check("--ib-bw"));
  add_size(sub, "--batch", a->batch, "B: sequences decoded together")->required();
  add_size(sub, "--context", a->context, "T: KV entries each sequence reads per step")->required();
  const auto dtype = [](const std::string& t) { scaling::parse_dtype(t); };
  add_name(sub, "--weights", a->weights, "dtype of the stored weights (bf16, int8, int4, …)", dtype)->capture_default_str();
  add_name(sub, "--kv", a->kv, "dtype of the KV cache (bf16, int8, int4, …)", dtype)->capture_default_str();
  // One list for --compute, while parsing and after: the dtypes with a peak of their own on a chip.
  add_name(sub, "--compute", a->compute, "dtype of the FLOPs: bf16, int8 or fp8 (picks the chip's peak)",
           [](const std::string& t) {
             if (t != "bf16" && t != "int8" && t != "fp8") scaling::check::not_one_of(t, {"bf16", "int8", "fp8"});
           })
      ->capture_default_str();
  add_name(sub, "--cost-model", a->cost_model,
           "calibrated (measured rates and latencies), ideal (roofline lower bound) or book (§7.1.5's equation)",
           [](const std::string& t) { scaling::parse_cost_model(t); })
      ->capture_default_str();
  add_size(sub, "--decode-len", a->decode_len, "G: tokens decoded per request (adds qps_per_chip)");
  add_size(sub, "--prefill-len", a->prefill_len, "P: prompt tokens of one prefill (with --mfu: adds prefill_s)");
  add_fraction(sub, "--mfu", a->mfu, "model FLOPs utilisation of the prefill, in [1e-6, 1]");
  sub->add_flag("--frontier", a->frontier, "latency and throughput per chip for every batch that fits (at most 100,000), Pareto set marked");
  sub->add_flag("--json", a->json, "print one JSON object, SI units");
  run_when_chosen(sub, [a] { run(*a); });
}

}  // namespace cli
