#include "training_runs.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <numeric>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "scaling/cost/calibrated.hpp"
#include "scaling/cost/training.hpp"
#include "scaling/hardware/system.hpp"

namespace validation {

using nlohmann::json;
using namespace scaling;

namespace {

// The file being read, for messages (training-runs.json or holdout-runs.json).
thread_local std::string g_file = "training-runs.json";

[[noreturn]] void fail(const std::string& run, const std::string& what) {
  throw std::invalid_argument(g_file + ", run '" + run + "': " + what);
}

double num(const json& j, const char* key, const std::string& run) {
  if (!j.contains(key) || !j[key].is_number()) fail(run, std::string("missing number '") + key + "'");
  return j[key].get<double>();
}

const json& assumption(const json& r, const char* key, const std::string& run) {
  if (!r.contains("assumptions") || !r["assumptions"].contains(key) || !r["assumptions"][key].contains("value"))
    fail(run, std::string("missing assumption '") + key + "'");
  return r["assumptions"][key]["value"];
}

// The files' 16-bit "fp16" has bf16's two bytes (and the same tensor-core peak on these chips).
Dtype dtype(const std::string& text) { return text == "fp16" ? Dtype::bf16 : parse_dtype(text); }

TransformerConfig model_of(const json& r, const std::string& run) {
  const json& m = r["model"];
  const json& a = assumption(r, "model", run);
  TransformerConfig c;
  c.name = run;
  c.layers = num(m, "layers", run);
  c.d_model = num(m, "hidden", run);
  c.q_heads = num(m, "heads", run);
  c.kv_heads = num(m, "kv_heads", run);
  c.head_dim = num(a, "head_dim", run);
  c.d_ff = num(m, "ffn_hidden", run);
  c.vocab = num(m, "vocab", run);
  c.gated_mlp = a.at("gated_mlp").get<bool>();
  c.norm_bias = a.at("norm_bias").get<bool>();
  c.attention_bias = a.at("attention_bias").get<bool>();
  c.mlp_bias = a.at("mlp_bias").get<bool>();
  c.tied_embeddings = a.at("tied_embeddings").get<bool>();
  validate(c);
  return c;
}

TrainingSetup setup_of(const json& r, const std::string& run) {
  const json& d = assumption(r, "dtypes", run);
  TrainingSetup s;
  s.weights = dtype(d.at("weights").get<std::string>());
  s.grads = dtype(d.at("grads").get<std::string>());
  s.optimizer = Optimizer::adam;
  s.optimizer_state = dtype(d.at("optimizer_state").get<std::string>());
  s.fp32_master = d.at("master").get<std::string>() == "fp32";
  s.activations = dtype(d.at("activations").get<std::string>());
  return s;
}

// The recompute policy as the run states it: full → the `input` rule, selective → `matmuls`.
PlanRule recompute_of(const json& p, const std::string& run) {
  const std::string text = p.value("recompute", "");
  if (text.rfind("full", 0) == 0 || text == "remat_policy=full") return saved_rule("input");
  // MaxText's "minimal" policy saves every matmul output and recomputes the attention context: selective.
  if (text.rfind("selective", 0) == 0 || text == "remat_policy=minimal") return saved_rule("matmuls");
  if (text == "none") return saved_rule("all");
  fail(run, "unknown recompute '" + text + "'");
}

struct Built {
  System system;
  Layout layout;
  Batch batch;
  double dp = 1, slices = 1;
};

Built build_gpu(const json& r, const std::string& run) {
  const json& h = r["hardware"];
  const json& p = r["parallelism"];
  Built b;
  const int gpus = static_cast<int>(num(h, "count", run)), node = static_cast<int>(num(h, "node_size", run));
  const int tp = static_cast<int>(num(p, "tp", run)), pp = static_cast<int>(num(p, "pp", run));
  const int dp = static_cast<int>(num(p, "dp", run));
  if (tp * pp * dp != gpus) fail(run, "tp · pp · dp must equal the GPU count");
  GpuOverrides o;
  o.ib_bytes_per_s = num(assumption(r, "network", run), "infiniband_bytes_per_s", run);
  const int nodes = std::max(1, gpus / node);
  // training-runs.json is all A100 and names no preset; holdout-runs.json names one per run.
  b.system = gpu_cluster(chip(h.value("chip", std::string("a100"))), nodes, std::min(gpus, node), o);
  // Megatron-LM's rank order: tensor innermost, then data, then pipeline.
  const int in_node = std::min(gpus, node);
  if (in_node % tp) fail(run, "tp must divide the node");
  const int d_fast = std::min(dp, in_node / tp);
  const int p_fast = in_node / tp / d_fast;
  b.layout.fast = {AxisRoles{d_fast, tp, p_fast}};
  b.layout.slow = {dp / d_fast, 1, pp / p_fast};
  const double seq = num(r["model"], "seq", run);
  const double sequences = num(p, "global_batch", run);
  const double mb = assumption(r, "microbatch_sequences", run).get<double>();
  b.batch = {sequences * seq, seq};
  b.layout.microbatches = static_cast<int>(sequences / (dp * mb));
  b.layout.zero = assumption(r, "zero", run).get<int>();
  b.layout.zero_scope = ZeroScope::all;
  b.layout.saved = recompute_of(p, run);
  b.layout.sequence_parallel = p.value("sequence_parallel", false);
  b.dp = dp;
  return b;
}

Built build_tpu(const json& r, const std::string& run) {
  const json& h = r["hardware"];
  const json& p = r["parallelism"];
  Built b;
  const int slices = static_cast<int>(num(h, "slices", run));
  if (!h.contains("slice_shape")) {
    // training-runs.json: TPU v5e-256 slices (16 × 16), FSDP on the first axis, tensor parallelism on the second.
    b.system = tpu_pods(chip("tpu-v5e"), {16, 16}, slices);
    const int tp = static_cast<int>(num(p, "tp", run));
    const int fsdp = static_cast<int>(num(p, "fsdp", run));
    if (tp * fsdp != 256) fail(run, "fsdp · tp must fill the 256-chip slice");
    b.layout.fast = tp > 1 ? std::vector<AxisRoles>{{16, 1, 1}, {fsdp / 16, tp, 1}} : std::vector<AxisRoles>{{16, 1, 1}, {16, 1, 1}};
  } else {
    // holdout-runs.json names the chip and the slice's torus shape; the tensor degree takes whole axes from
    // the last one inwards (as jax's mesh_utils.create_device_mesh places the innermost mesh axis), the
    // rest of the slice is FSDP.
    const auto shape = h["slice_shape"].get<std::vector<int>>();
    b.system = tpu_pods(chip(h.at("chip").get<std::string>()), shape, slices);
    int tp_left = static_cast<int>(num(p, "tp", run));
    int per_slice = 1;
    b.layout.fast.assign(shape.size(), AxisRoles{});
    for (size_t i = shape.size(); i-- > 0;) {
      const int t = std::gcd(shape[i], tp_left);
      b.layout.fast[i] = {shape[i] / t, t, 1};
      tp_left /= t;
      per_slice *= shape[i];
    }
    if (tp_left != 1) fail(run, "tp must divide the slice's axes");
    if (static_cast<int>(num(p, "fsdp", run)) * static_cast<int>(num(p, "tp", run)) != per_slice)
      fail(run, "fsdp · tp must fill the slice");
  }
  b.layout.slow = {slices, 1, 1};
  b.batch = {num(p, "global_batch_tokens", run), num(r["model"], "seq", run)};
  b.layout.microbatches = 1;
  b.layout.zero = assumption(r, "zero", run).get<int>();
  b.layout.zero_scope = ZeroScope::group;
  b.layout.saved = recompute_of(p, run);
  b.dp = num(p, "fsdp", run) * slices;
  b.slices = slices;
  return b;
}

// The step time the run measured, by the formula its row names (measured_step.formula).
double measured_step(const json& r, const std::string& run, const TransformerConfig& c, double chips, std::string& formula) {
  const std::string id = run;
  const json& me = r["measured"];
  const json& p = r["parallelism"];
  const double B = p.contains("global_batch") ? num(p, "global_batch", run) : 0;
  const double s = num(r["model"], "seq", run), l = c.layers, h = c.d_model, V = c.vocab;
  formula = r.at("measured_step").at("formula").get<std::string>();
  const std::string kind = r["measured_step"].value("kind", "");
  if (kind == "tokens_per_s") return num(p, "global_batch_tokens", run) / num(me, "tokens_per_s", run);
  if (kind == "tokens_per_s_per_device")
    return num(p, "global_batch_tokens", run) / (chips * num(me, "tokens_per_s_per_device", run));
  if (!kind.empty() && kind != "tflops_per_device") fail(run, "unknown measured_step.kind '" + kind + "'");
  if (id.rfind("narayanan", 0) == 0) {
    // Eq. 3: F = 96·B·s·l·h²·(1 + s/(6h) + V/(16·l·h)), the FLOPs the printed TFLOP/s counts.
    const double F = 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
    return F / (chips * num(me, "tflops_per_device", run) * 1e12);
  }
  if (id.rfind("korthikanti", 0) == 0) {
    if (me.contains("iteration_time_s") && me["iteration_time_s"].is_number()) return me["iteration_time_s"].get<double>();
    // Eq. 7: model FLOPs = 72·B·s·l·h²·(1 + s/(6h) + V/(12·h·l)), at the printed MFU of 312 TFLOP/s.
    const double F = 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * h * l));
    return F / (chips * 312e12 * num(me, "mfu", run) / 100);
  }
  // MaxText: tokens per second per chip = printed TFLOP/s over the model FLOPs per token it counts.
  const double per_chip = num(me, "tflops_per_device", run) * 1e12 / num(r["derived"], "model_flops_per_token", run);
  return num(p, "global_batch_tokens", run) / (chips * per_chip);
}

// Calculon's other A100 system file, for the sensitivity band only: calculon-ai/calculon at
// caa4b11f8fe1fee3ba57adaacb7590d7deabd053, systems/a100_80e.json (its memory checks read it; its step-time
// validation reads a100_80g.json, the model's rule): matrix efficiency [[128, 0.99], [16, 0.9], [1, 0.6],
// [0, 0.1]] of 312 TFLOPS, HBM [[100, 0.95], [10, 0.90], [1, 0.7], [0, 0.3]] of 2048 GBps, "no_overlap".
PublishedGemmRule calculon_a100_80e() {
  return {"a100", 312e12, {{128e9, 0.99}, {16e9, 0.9}, {1e9, 0.6}, {0, 0.1}}, 2048e9,
          {{100e6, 0.95}, {10e6, 0.90}, {1e6, 0.7}, {0, 0.3}}, "calculon-ai/calculon caa4b11, systems/a100_80e.json"};
}

// The calibrated prediction under a sensitivity variant: the ideal terms, then the calibrated model on a
// context whose uncertain inputs the variant moves (step_terms does the same with none moved).
Prediction predict_variant(const TransformerConfig& c, const Built& b, const TrainingSetup& s, double measured,
                           const Variant& v) {
  Prediction out;
  try {
    const Terms ideal = step_terms(c, b.system, b.layout, b.batch, CostModel::ideal, s);
    auto ctx = calibrated_context(c, b.system, b.batch.tokens, b.batch.seq_len, s);
    if (v.v5e_matmul_ceiling_flops_per_s > 0 && b.system.chip.name == "tpu-v5e")
      ctx.cal.matmul_ceiling_flops_per_s = v.v5e_matmul_ceiling_flops_per_s;
    if (v.a100_gemm != Variant::A100Gemm::model && b.system.chip.name == "a100") {
      if (v.a100_gemm == Variant::A100Gemm::calculon_80e) {
        static const PublishedGemmRule rule = calculon_a100_80e();
        ctx.cal.rule = &rule;
      } else {
        ctx.cal.rule = nullptr;
        ctx.cal.scaled = true;
        ctx.cal.gemm = &measured_gemm_table("h100", Dtype::bf16);
        ctx.cal.table_best_flops_per_s = 0;
        for (const auto& curve : ctx.cal.gemm->curves)
          for (double r : curve.flops_per_s) ctx.cal.table_best_flops_per_s = std::max(ctx.cal.table_best_flops_per_s, r);
      }
    }
    ctx.backward_gemm_rate_fraction = v.backward_gemm_rate_fraction;
    if (v.link_figures) ctx.cal.nvlink_sweep = nullptr, ctx.cal.ici_fraction = 1;
    if (v.tpu_overlap_slowdown > 0 && b.system.chip.gpus_per_node == 0) ctx.overlap_slowdown = v.tpu_overlap_slowdown;
    out.terms = calibrated_terms(ctx, b.layout, ideal);
    out.step_s = out.terms.step_s;
    out.error = *out.step_s / measured - 1;
  } catch (const std::invalid_argument& e) {
    out.why_not = e.what();
  }
  return out;
}

Prediction predict(const TransformerConfig& c, const Built& b, CostModel m, const TrainingSetup& s, double measured) {
  Prediction out;
  try {
    out.terms = step_terms(c, b.system, b.layout, b.batch, m, s);
    out.step_s = out.terms.step_s;
    out.error = *out.step_s / measured - 1;
  } catch (const std::invalid_argument& e) {
    out.why_not = e.what();
  }
  return out;
}

}  // namespace

std::vector<Variant> sensitivity_variants() {
  std::vector<Variant> out;
  const auto v5e = chip_calibration(chip("tpu-v5e"));
  const auto a100 = chip_calibration(chip("a100"));
  out.push_back({"as published",
                 fmt::format("the model as documented (TPU v5e GEMM ceiling {:.1f} TFLOP/s, the JAX Pallas TPU "
                             "guide's XLA matmul; A100 GEMMs by Calculon's a100_80g table, at most {:.1f} TFLOP/s, "
                             "stas00's measured best; collectives in an A100 node by stas00's NCCL sweep, on the "
                             "v5e's ICI at the book's measured 95 % of the link)",
                             v5e.matmul_ceiling_flops_per_s / 1e12, a100.matmul_ceiling_flops_per_s / 1e12)});
  {
    // The Pallas guide timed each call with Python's timeit, dispatch included: the kernel's own time at
    // the best point is at least its printed time less the whole time of the guide's smallest call, so its
    // rate lies between the printed one and this.
    static const auto points = published_gemm_points();
    const PublishedGemmPoint *best = nullptr, *smallest = nullptr;
    for (const auto& p : points) {
      if (std::string(p.chip) != "tpu-v5e") continue;
      if (!best || p.flops_per_s > best->flops_per_s) best = &p;
      if (!smallest || p.m * p.k * p.n < smallest->m * smallest->k * smallest->n) smallest = &p;
    }
    const double f_best = 2 * best->m * best->k * best->n, f_small = 2 * smallest->m * smallest->k * smallest->n;
    const double upper = f_best / (f_best / best->flops_per_s - f_small / smallest->flops_per_s);
    Variant v;
    v.name = fmt::format("v5e matmul ceiling {:.1f} TFLOP/s", upper / 1e12);
    v.why = "the guide's timings include Python dispatch: its best point less its whole smallest call bounds the kernel's rate";
    v.v5e_matmul_ceiling_flops_per_s = upper;
    out.push_back(v);
  }
  {
    Variant v;
    v.name = fmt::format("v5e matmul ceiling {:g} TFLOP/s", chip("tpu-v5e").bf16_flops_per_s / 1e12);
    v.why = "the datasheet peak (the rule before a published v5e figure was found): no kernel can exceed it";
    v.v5e_matmul_ceiling_flops_per_s = chip("tpu-v5e").bf16_flops_per_s;
    out.push_back(v);
  }
  {
    Variant v;
    v.name = "A100 GEMMs by Calculon's other A100 file";
    v.why = "Calculon's a100_80e.json (its memory checks read it; the model's rule until an outside check found its "
            "step-time validation reads a100_80g.json): 0.99 at >= 128 GFLOP, higher HBM efficiencies";
    v.a100_gemm = Variant::A100Gemm::calculon_80e;
    out.push_back(v);
  }
  {
    Variant v;
    v.name = "A100 GEMMs by the H100 shape curve";
    v.why = "the rule before a published A100 table: H100 measured curve scaled to the A100's measured ceiling";
    v.a100_gemm = Variant::A100Gemm::h100_shape;
    out.push_back(v);
  }
  // The model times backward GEMMs at the forward shape's rate; validation/gemm measured their rate
  // relative to the forward's (medians per token count, dgrad and wgrad).
  for (double f : {0.98, 0.93}) {
    Variant v;
    v.name = fmt::format("backward GEMMs at {} of forward", f);
    v.why = "validation/gemm/README.md: backward / forward rate medians 0.92-0.98 at 2,048-8,192 tokens (H100, H200)";
    v.backward_gemm_rate_fraction = f;
    out.push_back(v);
  }
  {
    Variant v;
    v.name = "collectives at the link figures";
    v.why = "the rule before achieved figures: NVLink at 300 GB/s a GPU (no NCCL sweep), v5e ICI at the full 4.5e10 "
            "B/s a link (not the book's measured 95 %)";
    v.link_figures = true;
    out.push_back(v);
  }
  {
    Variant v;
    v.name = "GPU overlap slowdown on the v5e too";
    v.why = "a what-if, not a measurement: Lee et al. 2025's 18.9 % compute slowdown beside collectives, measured on "
            "GPUs, applied to the TPU v5e, whose overlap cost nobody has published";
    v.tpu_overlap_slowdown = overlap_slowdown(chip("a100"));
    out.push_back(v);
  }
  {
    Variant v;
    v.name = "Narayanan rows interleaved, v = 2";
    v.why = "Narayanan et al. 2021 state the interleaved schedule for Table 1; v = 2 where it divides the layers per stage";
    v.narayanan_interleaved_v2 = true;
    out.push_back(v);
  }
  {
    Variant v;
    v.name = "no asynchronous backward on the Korthikanti rows";
    v.why = "the rule before round 8: every tensor-parallel collective on the critical path, though Megatron-LM's "
            "code of 2022 (d898a89, megatron/mpu/layers.py) runs the backward ones beside the GEMMs by default";
    v.no_tp_overlap = true;
    out.push_back(v);
  }
  {
    Variant v;
    v.name = "MaxText rows with XLA's asynchronous backward";
    v.why = "a what-if for an unpublished TPU behaviour, what XLA's schedule hides: each backward tensor-parallel "
            "collective beside the layer's weight-gradient GEMMs (`--tp-overlap async`), as the runs' LIBTPU_INIT_ARGS "
            "enabling asynchronous collectives would allow; the forward's and the rerun's stay exposed";
    v.maxtext_async_tp = true;
    out.push_back(v);
  }
  return out;
}

std::vector<RunResult> evaluate_runs(const std::string& path, bool with_planner, const Variant& variant) {
  g_file = path.substr(path.rfind('/') + 1);
  std::ifstream in(path);
  if (!in) throw std::invalid_argument("cannot read " + path);
  const json file = json::parse(in);
  std::vector<RunResult> out;
  for (const json& r : file.at("runs")) {
    const std::string run = r.at("id").get<std::string>();
    RunResult res;
    res.id = run;
    res.group = r.contains("group") ? r["group"].get<std::string>()
                : run.rfind("maxtext", 0) == 0 ? "maxtext-v5e" : run.substr(0, run.find('-'));
    const TransformerConfig c = model_of(r, run);
    const TrainingSetup setup = setup_of(r, run);
    const bool tpu = r["hardware"].value("kind", "") == "tpu";
    Built b = tpu ? build_tpu(r, run) : build_gpu(r, run);
    const json& a = r["assumptions"];
    b.layout.schedule = parse_schedule(a.at("schedule").at("value").get<std::string>());
    b.layout.virtual_stages = a.at("virtual_stages").at("value").get<int>();
    b.layout.attention = parse_attention_kernel(a.at("attention").at("value").get<std::string>());
    b.layout.dp_overlap = a.at("dp_overlap").at("value").get<bool>();
    // A boolean (false: none, true: all) or one of TpOverlap's words ("backward").
    const json& tpo = a.at("tp_overlap").at("value");
    b.layout.tp_overlap = tpo.is_boolean() ? (tpo.get<bool>() ? TpOverlap::all : TpOverlap::none)
                                           : parse_tp_overlap(tpo.get<std::string>());
    if (a.contains("sequence_parallel")) b.layout.sequence_parallel = a["sequence_parallel"].at("value").get<bool>();
    res.chip = b.system.chip.name;
    res.hbm_bytes = b.system.chip.hbm_bytes;
    res.chips = chips(b.system);
    res.slices = b.slices;
    res.dp = b.dp;
    res.params_b = param_counts(c).total / 1e9;
    res.measured_step_s = measured_step(r, run, c, res.chips, res.measured_formula);
    if (r.contains("derived")) {
      const json& d = r["derived"];
      if (d.contains("iteration_time_s") && d["iteration_time_s"].is_number()) res.file_step_s = d["iteration_time_s"].get<double>();
      else if (d.contains("iteration_time_s_from_mfu") && d["iteration_time_s_from_mfu"].is_number())
        res.file_step_s = d["iteration_time_s_from_mfu"].get<double>();
    }
    res.measured_mfu = six_active_flops_per_token(c) * b.batch.tokens /
                       (res.chips * b.system.chip.bf16_flops_per_s * res.measured_step_s);
    res.book = predict(c, b, CostModel::book, setup, res.measured_step_s);
    res.ideal = predict(c, b, CostModel::ideal, setup, res.measured_step_s);
    const bool moved = variant.v5e_matmul_ceiling_flops_per_s > 0 || variant.a100_gemm != Variant::A100Gemm::model ||
                       variant.backward_gemm_rate_fraction != 1 ||
                       variant.link_figures || variant.narayanan_interleaved_v2 || variant.no_tp_overlap ||
                       variant.tpu_overlap_slowdown > 0 || variant.maxtext_async_tp;
    if (variant.no_tp_overlap) b.layout.tp_overlap = TpOverlap::none;
    if (variant.maxtext_async_tp && res.group.rfind("maxtext", 0) == 0) b.layout.tp_overlap = TpOverlap::async;
    if (variant.narayanan_interleaved_v2 && res.group == "narayanan2021") {
      const int S = pipeline_degree(b.layout), per_stage = (c.layers + S - 1) / S;
      if (S > 1 && per_stage % 2 == 0) b.layout.schedule = Schedule::interleaved, b.layout.virtual_stages = 2;
    }
    res.calibrated = moved ? predict_variant(c, b, setup, res.measured_step_s, variant)
                           : predict(c, b, CostModel::calibrated, setup, res.measured_step_s);
    if (!moved && b.layout.dp_overlap && b.layout.zero < 3 && res.calibrated.step_s) {
      try {
        const Terms ideal = step_terms(c, b.system, b.layout, b.batch, CostModel::ideal, setup);
        auto ctx = calibrated_context(c, b.system, b.batch.tokens, b.batch.seq_len, setup);
        RunResult::DpSplit d;
        d.overlap_slowdown = ctx.overlap_slowdown;
        Layout off = b.layout;
        off.dp_overlap = false;
        d.traffic_s = calibrated_terms(ctx, off, ideal).calibrated.t_dp_exposed_s;
        ctx.overlap_slowdown = 0;
        d.hidden_s = d.traffic_s - calibrated_terms(ctx, b.layout, ideal).calibrated.t_dp_exposed_s;
        if (d.traffic_s > 0) res.dp_split = d;
      } catch (const std::invalid_argument&) {
      }
    }
    // The other reading of an input the source leaves open (see RunResult::OtherReading).
    for (const auto& [key, entry] : a.items()) {
      if (!entry.is_object() || !entry.contains("other_reading")) continue;
      if (key != "zero") fail(run, "an other_reading is supported for the assumption 'zero' only, not '" + key + "'");
      const json& o = entry["other_reading"];
      if (!o.contains("value") || !o["value"].is_number_integer() || !o.contains("why"))
        fail(run, "assumption 'zero': other_reading needs an integer value and a why");
      Built other = b;
      other.layout.zero = o["value"].get<int>();
      res.other_readings.push_back({key, other.layout.zero, o["why"].get<std::string>(),
                                    predict(c, other, CostModel::calibrated, setup, res.measured_step_s)});
    }
    if (with_planner) {
      PlanRequest q;
      q.model = c;
      q.system = b.system;
      q.batch_tokens = b.batch.tokens;
      q.seq_len = b.batch.seq_len;
      q.setup = setup;
      q.cost_model = CostModel::calibrated;
      q.switches = b.layout;
      // The published layout is in the space searched: up to its microbatch count (280 for a 530B run).
      q.max_microbatches = std::max(q.max_microbatches, b.layout.microbatches);
      const auto found = plan(q);
      if (!found.top.empty()) {
        res.planner_best = found.top.front();
        res.planner_axes = describe_axes(*res.planner_best, b.system);
      }
    }
    out.push_back(std::move(res));
  }
  return out;
}

namespace {

json terms_json(const Terms& t) {
  const auto& p = t.calibrated;
  return {{"step_s", t.step_s},          {"t_math_s", t.t_math_s},
          {"t_hbm_s", t.t_hbm_s},        {"t_ici_s", t.t_ici_s},
          {"t_dcn_s", t.t_dcn_s},        {"t_bubble_s", t.t_bubble_s},
          {"mfu", t.mfu},                {"bound", to_string(t.bound)},
          {"bytes_per_chip", t.memory.total},
          {"memory_per_chip", {{"params", t.memory.params}, {"grads", t.memory.grads}, {"optimizer", t.memory.optimizer},
                               {"master", t.memory.master}, {"activations", t.memory.activations},
                               {"working", t.memory.working}, {"reserve", t.memory.reserve}}},
          {"t_matmul_s", p.t_matmul_s},  {"t_attention_s", p.t_attention_s},
          {"t_vector_s", p.t_vector_s},  {"t_recompute_s", p.t_recompute_s},
          {"t_tp_s", p.t_tp_s},          {"t_pipeline_send_s", p.t_pipeline_send_s},
          {"t_dp_exposed_s", p.t_dp_exposed_s}, {"t_optimizer_s", p.t_optimizer_s},
          {"t_latency_s", p.t_latency_s}, {"matmul_efficiency", p.matmul_efficiency}};
}

json prediction_json(const Prediction& p) {
  if (!p.step_s) return {{"step_s", nullptr}, {"why_not", p.why_not}};
  return {{"step_s", *p.step_s}, {"error", p.error}, {"terms", terms_json(p.terms)}};
}

}  // namespace

std::vector<UnreproducedTrend> not_reproduced_trends(const std::vector<RunResult>& runs) {
  auto find = [&](const std::string& id) -> const RunResult& {
    for (const auto& r : runs)
      if (r.id == id) return r;
    throw std::invalid_argument("no run " + id);
  };
  std::vector<UnreproducedTrend> out;
  for (const char* model : {"16B", "32B", "64B", "128B"}) {
    UnreproducedTrend t;
    t.trend = "step time as slices join over DCN (TPU v5e, 1 -> 32 slices)";
    t.from_id = fmt::format("maxtext-v5e-{}-1x-v5e-256", model);
    t.to_id = fmt::format("maxtext-v5e-{}-32x-v5e-256", model);
    const auto& a = find(t.from_id);
    const auto& b = find(t.to_id);
    if (!a.calibrated.step_s || !b.calibrated.step_s) throw std::invalid_argument("no calibrated step for " + t.to_id);
    t.measured_change = b.measured_step_s / a.measured_step_s - 1;
    t.predicted_change = *b.calibrated.step_s / *a.calibrated.step_s - 1;
    out.push_back(t);
  }
  return out;
}

namespace {
// Mean and max |error| of a set of runs, and the worst run.
struct ErrorBand {
  double n = 0, sum = 0, worst = 0;
  std::string worst_id;
  void add(double error, const std::string& id) {
    const double e = std::abs(error);
    sum += e, n += 1;
    if (e > worst) worst = e, worst_id = id;
  }
  double mean() const { return sum / n; }
};
// The band of each group of `runs` and of all of them ("all"), of the error `error_of` reads from a run.
template <class ErrorOf>
std::map<std::string, ErrorBand> bands_by_group(const std::vector<RunResult>& runs, ErrorOf error_of) {
  std::map<std::string, ErrorBand> out;
  for (const auto& r : runs)
    for (const std::string& g : {r.group, std::string("all")}) out[g].add(error_of(r), r.id);
  return out;
}
double calibrated_error(const RunResult& r) { return r.calibrated.error; }
}  // namespace

json sensitivity_json(const std::string& path, const std::string& holdout_path) {
  // The calibrated model's band per variant; a run without a calibrated step is refused by name.
  const auto bands = [](const std::vector<RunResult>& runs, const std::string& name) {
    for (const auto& r : runs)
      if (!r.calibrated.step_s) throw std::invalid_argument(name + ": no calibrated step for " + r.id);
    return bands_by_group(runs, calibrated_error);
  };
  json out = json::array();
  for (const auto& v : sensitivity_variants()) {
    const ErrorBand all = bands(evaluate_runs(path, false, v), v.name).at("all");
    json row{{"variant", v.name}, {"why", v.why}, {"runs", all.n}, {"calibrated_mean_abs_error", all.mean()},
             {"calibrated_max_abs_error", all.worst}, {"worst_run", all.worst_id}};
    // The same input moved on the runs held out from the model: a variant that helps the calibration runs
    // only for their sake shows here.
    if (!holdout_path.empty()) {
      auto held = bands(evaluate_runs(holdout_path, false, v), v.name);
      row["holdout_mean_abs_error"] = held.at("all").mean();
      row["holdout_max_abs_error"] = held.at("all").worst;
      held.erase("all");
      json per_group = json::object();
      for (const auto& [g, b] : held)
        per_group[g] = {{"runs", b.n}, {"calibrated_mean_abs_error", b.mean()}, {"calibrated_max_abs_error", b.worst}};
      row["holdout_groups"] = per_group;
    }
    out.push_back(row);
  }
  return out;
}

std::vector<scaling::MfuRecord> mfu_records(const std::vector<RunResult>& runs) {
  // The highest MFU a published run held in validation/ reached on each chip: lib's table (calibrated.hpp,
  // published_mfu_records, the one `train` and `plan` warn against), for the chips these runs use.
  std::vector<scaling::MfuRecord> out;
  for (const auto& r : runs) {
    if (std::any_of(out.begin(), out.end(), [&](const scaling::MfuRecord& m) { return m.chip == r.chip; })) continue;
    if (const auto* rec = published_mfu_record(r.chip)) out.push_back(*rec);
  }
  return out;
}

std::vector<BestRealism> planner_best_realism(const std::vector<RunResult>& runs) {
  const auto records = mfu_records(runs);
  std::vector<BestRealism> out;
  for (const auto& r : runs) {
    if (!r.planner_best || !r.calibrated.step_s) continue;
    const auto rec = std::find_if(records.begin(), records.end(), [&](const scaling::MfuRecord& m) { return m.chip == r.chip; });
    BestRealism b;
    b.id = r.id;
    b.best_mfu = r.planner_best->terms.mfu;
    b.record_mfu = rec->mfu;
    b.speedup = *r.calibrated.step_s / r.planner_best->terms.step_s;
    b.speedup_bound = rec->mfu / r.measured_mfu;
    b.mfu_within = b.best_mfu <= b.record_mfu;
    b.speedup_within = b.speedup <= b.speedup_bound;
    out.push_back(b);
  }
  return out;
}

std::vector<MemoryFit> memory_fit(const std::vector<RunResult>& runs) {
  std::map<std::string, MemoryFit> by;
  for (const auto& r : runs) {
    if (!r.calibrated.step_s) continue;
    const auto& m = r.calibrated.terms.memory;
    const double live = m.total - m.reserve;
    for (const std::string& g : {r.group, std::string("all")}) {
      auto& f = by[g];
      f.group = g;
      f.runs += 1;
      f.over += m.total > r.hbm_bytes;
      f.over_live += live > r.hbm_bytes;
      f.worst_live_over_hbm = std::max(f.worst_live_over_hbm, live / r.hbm_bytes);
    }
  }
  std::vector<MemoryFit> out;
  for (auto& [g, f] : by) out.push_back(f);
  return out;
}

json runs_json(const std::vector<RunResult>& runs, const std::string& source) {
  json rows = json::array();
  for (const auto& r : runs) {
    rows.push_back({{"id", r.id},
                    {"group", r.group},
                    {"chip", r.chip},
                    {"params_b", r.params_b},
                    {"chips", r.chips},
                    {"data_parallel", r.dp},
                    {"slices", r.slices},
                    {"measured_step_s", r.measured_step_s},
                    {"measured_formula", r.measured_formula},
                    {"measured_mfu", r.measured_mfu},
                    {"hbm_bytes", r.hbm_bytes},
                    {"book", prediction_json(r.book)},
                    {"ideal", prediction_json(r.ideal)},
                    {"calibrated", prediction_json(r.calibrated)}});
    if (r.planner_best) {
      const auto& [l, t] = *r.planner_best;
      rows.back()["planner_best"] = {{"dp", data_degree(l)}, {"tp", tensor_degree(l)}, {"pp", pipeline_degree(l)},
                                     {"microbatches", l.microbatches}, {"zero", l.zero}, {"saved", label(l.saved)},
                                     {"axes", r.planner_axes}, {"step_s", t.step_s}, {"mfu", t.mfu},
                                     {"speedup_over_published", r.calibrated.step_s ? *r.calibrated.step_s / t.step_s : 0.0},
                                     {"terms", terms_json(t)}};
    }
    for (const auto& o : r.other_readings)
      rows.back()["other_readings"].push_back(
          {{"assumption", o.assumption}, {"value", o.value}, {"why", o.why}, {"calibrated", prediction_json(o.calibrated)}});
    if (r.dp_split)
      rows.back()["calibrated_dp_split"] = {{"traffic_s", r.dp_split->traffic_s}, {"hidden_s", r.dp_split->hidden_s},
                                            {"overlap_slowdown", r.dp_split->overlap_slowdown}};
  }
  const auto ideal = bands_by_group(runs, [](const RunResult& r) { return r.ideal.error; });
  const auto calibrated = bands_by_group(runs, calibrated_error);
  json summary = json::object();
  for (const auto& [g, s] : calibrated)
    summary[g] = {{"runs", s.n},
                  {"ideal_mean_abs_error", ideal.at(g).mean()},
                  {"ideal_max_abs_error", ideal.at(g).worst},
                  {"calibrated_mean_abs_error", s.mean()},
                  {"calibrated_max_abs_error", s.worst}};
  json unreproduced = json::array();
  const bool has_maxtext = std::any_of(runs.begin(), runs.end(), [](const RunResult& r) { return r.group == "maxtext-v5e"; });
  if (has_maxtext)
    for (const auto& t : not_reproduced_trends(runs))
      unreproduced.push_back({{"trend", t.trend}, {"from", t.from_id}, {"to", t.to_id},
                              {"measured_change", t.measured_change}, {"predicted_change", t.predicted_change}});
  json records = json::array();
  json realism = json::array();
  if (std::any_of(runs.begin(), runs.end(), [](const RunResult& r) { return r.planner_best.has_value(); })) {
    for (const auto& m : mfu_records(runs)) records.push_back({{"chip", m.chip}, {"mfu", m.mfu}, {"source", m.source}});
    for (const auto& b : planner_best_realism(runs))
      realism.push_back({{"id", b.id}, {"best_mfu", b.best_mfu}, {"record_mfu", b.record_mfu}, {"speedup", b.speedup},
                         {"speedup_bound", b.speedup_bound}, {"mfu_within_record", b.mfu_within},
                         {"speedup_within_bound", b.speedup_within}});
  }
  json fit = json::object();
  for (const auto& f : memory_fit(runs))
    fit[f.group] = {{"runs", f.runs}, {"over_hbm", f.over}, {"over_hbm_live", f.over_live},
                    {"worst_live_over_hbm", f.worst_live_over_hbm}};
  return {{"source", source}, {"summary", summary}, {"memory_fit", fit}, {"runs", rows}, {"not_reproduced", unreproduced},
          {"mfu_records", records}, {"planner_best_realism", realism}};
}

}  // namespace validation
