#include "scaling/cost/inference.hpp"
#include "scaling/base/validate.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "scaling/base/format.hpp"
#include "scaling/cost/serving_calibration.hpp"
#include "scaling/model/tensors.hpp"

namespace scaling {

void validate(const DecodeModel& m) {
  check::positive("param_bytes", m.param_bytes);
  check::positive("matmul_flops_per_token", m.matmul_flops_per_token);
  check::positive("kv_bytes_per_token", m.kv_bytes_per_token);
  check::non_negative("attention_flops_per_key", m.attention_flops_per_key);
  if (m.tp_reductions_per_layer != 1 && m.tp_reductions_per_layer != 2)
    check::fail(check::subject("tp_reductions_per_layer", m.tp_reductions_per_layer),
                "must be 1 (parallel blocks) or 2 (attention, then MLP)");
}

double tp_reductions_per_step(const DecodeModel& m) { return m.layers * m.tp_reductions_per_layer; }

void validate(const DecodeInputs& in) {
  validate(static_cast<const DecodeModel&>(in));
  const double n = chips(in.system);
  check::positive("chips", n);
  check::positive("hbm_bytes_per_chip", in.system.chip.hbm_bytes);
  check::positive("hbm_bytes_per_s", in.system.chip.hbm_bytes_per_s);
  const double c = peak_flops_per_s(in.system.chip, in.dtypes.compute);
  // The slice's totals must be numbers too (1e300 chips of 16 GB is not).
  if (!std::isfinite(n * in.system.chip.hbm_bytes) || !std::isfinite(n * in.system.chip.hbm_bytes_per_s) ||
      !std::isfinite(n * c))
    throw std::invalid_argument("chips = " + format_number(n) + ": the slice's HBM, bandwidth or FLOPs overflow");
}

namespace {
// B·T·kv_bytes_per_token, which must stay finite.
double checked_kv_bytes(const DecodeModel& in, double batch, double context) {
  const double bytes = batch * context * in.kv_bytes_per_token;
  if (!std::isfinite(bytes))
    throw std::invalid_argument("batch × context = " + format_number(batch) + " × " + format_number(context) +
                                ": the KV cache's bytes overflow");
  return bytes;
}

int whole_chips(double chips) {
  check::positive("chips", chips);
  if (chips != std::floor(chips) || chips > 1e9)
    throw std::invalid_argument("chips = " + format_number(chips) + ": must be a whole number of at most 1e9");
  return static_cast<int>(chips);
}
}  // namespace

DecodeModel decode_model(const TransformerConfig& c, const InferenceDtypes& d) {
  DecodeModel m;
  m.param_bytes = param_bytes(c, d.weights);
  m.matmul_flops_per_token = forward_flops_per_token(c, 0).total;  // §4.1: 2 per active matmul weight
  m.kv_bytes_per_token = kv_bytes_per_token(c, d.kv);               // §7.1.6: 2·L·K·H·bytes
  m.attention_flops_per_key = forward_flops_per_token(c, 1).attention;
  m.layers = c.layers;
  m.d_model = c.d_model;
  m.dtypes = d;
  if (!is_moe(c)) {
    const double q = c.q_heads * c.head_dim, kv = c.kv_heads * c.head_dim;
    m.layer_matmuls = {{c.d_model, q + 2 * kv, 1, false},  // Q, K, V (one fused projection)
                       {q, c.d_model, 1, true},            // attention output
                       {c.d_model, c.d_ff, c.gated_mlp ? 2.0 : 1.0, false},
                       {c.d_ff, c.d_model, 1, true}};
  }
  m.unembedding = {c.d_model, c.vocab, 1, false};
  m.q_width = c.q_heads * c.head_dim;
  m.kv_width = c.kv_heads * c.head_dim;
  m.d_ff = is_moe(c) ? 0 : c.d_ff;
  m.gated_mlp = c.gated_mlp;
  m.layer_norm = c.norm_bias;
  m.tp_reductions_per_layer = scaling::tp_reductions_per_layer(c);
  validate(m);
  return m;
}

DecodeInputs decode_inputs(const TransformerConfig& c, const System& system, const InferenceDtypes& d) {
  DecodeInputs in;
  static_cast<DecodeModel&>(in) = decode_model(c, d);
  in.system = system;
  validate(in);
  return in;
}

DecodeInputs decode_inputs(const TransformerConfig& c, const Chip& chip, double chips, const InferenceDtypes& d) {
  return decode_inputs(c, serving_system(chip, chips), d);
}

System serving_system(const Chip& chip, double chips) {
  const int n = whole_chips(chips);
  if (is_gpu(chip)) {
    const int g = chip.gpus_per_node;
    if (n > g && n % g != 0)
      throw std::invalid_argument(format_number(n) + " GPUs span nodes of " + std::to_string(g) +
                                  ": more than one node must be whole nodes");
    return n <= g ? gpu_cluster(chip, 1, n) : gpu_cluster(chip, n / g, g);
  }
  if (chip.ici_bidi_bytes_per_s > 0) {
    for (const auto& s : allowed_slices(chip))
      if (chips_in(s) == n) return tpu_pods(chip, s, 1);
    return tpu_pods(chip, {n}, 1);
  }
  System s;
  s.chip = chip;
  s.name = format_number(n) + " × " + chip.display;
  s.fast = {FastAxis{n, false, 0, 0}};
  return s;
}

System bare_system(double chips, double hbm_bytes_per_chip, double hbm_bytes_per_s, double flops_per_s) {
  Chip c{};
  c.name = c.display = "chip";
  c.tensorcores_per_chip = 1;
  c.hbm_bytes = hbm_bytes_per_chip;
  c.hbm_bytes_per_s = hbm_bytes_per_s;
  c.bf16_flops_per_s = flops_per_s;
  c.wrap_rule = WrapRule::none;
  return serving_system(c, chips);
}

bool has_links(const System& s) {
  for (const auto& a : s.fast)
    if (a.size > 1 && a.bytes_per_s > 0) return true;
  return false;
}

double chip_count(const DecodeInputs& in) { return chips(in.system); }
double peak_flops_per_s(const DecodeInputs& in) { return peak_flops_per_s(in.system.chip, in.dtypes.compute); }
double hbm_bytes_per_s(const DecodeInputs& in) { return in.system.chip.hbm_bytes_per_s; }

namespace {

// One collective of `bytes` over every chip of the System, bandwidth and latency as the header states.
struct Collective {
  double t_bw = 0, t_lat = 0, hops = 0;
};
Collective one_collective(const System& system, double bytes) {
  Collective c;
  double sum_w = 0, n_fast = 1;
  for (const auto& a : system.fast) {
    if (a.size <= 1) continue;
    check::positive(system.fast_name + " bandwidth", a.bytes_per_s);
    n_fast *= a.size;
    sum_w += a.bytes_per_s;
    const double h = a.wraps ? std::floor(a.size / 2.0) : a.size - 1;
    c.hops += h;
    c.t_lat += h * a.hop_latency_s;
  }
  if (n_fast > 1) c.t_bw += (n_fast - 1) / n_fast * bytes / sum_w;
  const double g = system.slow.groups;
  if (g > 1) {
    check::positive(system.slow.name + " bandwidth", system.slow.bytes_per_s);
    c.t_bw += (g - 1) / g * bytes / system.slow.bytes_per_s;
    c.hops += std::floor(g / 2);
    c.t_lat += std::floor(g / 2) * system.slow.latency_s;
  }
  return c;
}

// One AllReduce of `bytes` in the calibrated model: a ReduceScatter and an AllGather's bandwidth, plus the
// latency the calibration gives (NVLink: measured per AllReduce; ICI and the slow tier: per hop, twice).
Collective calibrated_allreduce(const System& system, double bytes) {
  Collective c = one_collective(system, bytes);
  c.t_bw *= 2;
  if (system.fast_name == "NVLink") {
    c.t_lat = nvlink_allreduce_latency_s(chips_per_group(system));
    if (system.slow.groups > 1) c.t_lat += 2 * std::floor(system.slow.groups / 2.0) * system.slow.latency_s;
  } else {
    c.t_lat *= 2;
  }
  c.hops *= 2;
  return c;
}

// The time of x[M, K] · W[K, N] on one chip in the calibrated model.
double calibrated_gemm_s(const ServingCalibration& cal, const DecodeModel& m, double peak, double M, double K,
                         double N) {
  const double w_bytes = bytes_per_element(m.dtypes.weights);
  const GemmTable* table = w_bytes == 2 ? cal.gemm_bf16 : w_bytes == 1 ? cal.gemm_8bit : nullptr;
  const double flops = 2 * M * K * N;
  if (table) return flops / achieved_flops_per_s(*table, M, K, N);
  const double roofline = std::max(flops / peak, K * N * w_bytes / cal.hbm_bytes_per_s);
  const GemmTable* proxy = w_bytes == 1 ? cal.proxy_8bit : cal.proxy_bf16;
  if (!proxy) return roofline;
  // serving_calibration.hpp: the sibling card's measured time over its own roofline, at the same shape.
  const double proxy_bytes = K * N * (w_bytes == 1 ? 1.0 : 2.0);
  const double proxy_roofline = std::max(flops / proxy->peak_flops_per_s, proxy_bytes / cal.proxy_hbm_bytes_per_s);
  return roofline * (flops / achieved_flops_per_s(*proxy, M, K, N)) / proxy_roofline;
}

// Σ over one layer's matmuls (and the unembedding once) of their calibrated time at M tokens per chip,
// sharded over n chips. Without shapes (hand-filled models): all weights as one memory-or-FLOPs block.
struct MatmulTimes {
  double layers_s = 0, unembedding_s = 0;
};
MatmulTimes calibrated_matmuls(const ServingCalibration& cal, const DecodeModel& m, double peak, double M, double n) {
  MatmulTimes t;
  if (m.layer_matmuls.empty()) {
    t.layers_s = std::max(M * m.matmul_flops_per_token / (n * peak), m.param_bytes / (n * cal.hbm_bytes_per_s));
    return t;
  }
  for (const auto& g : m.layer_matmuls) {
    const double k = g.row_parallel ? g.k / n : g.k, nn = g.row_parallel ? g.n : g.n / n;
    t.layers_s += g.count * calibrated_gemm_s(cal, m, peak, M, k, nn);
  }
  t.layers_s *= m.layers;
  if (m.unembedding.k > 0) t.unembedding_s = calibrated_gemm_s(cal, m, peak, M, m.unembedding.k, m.unembedding.n / n);
  return t;
}

// The non-matmul kernels of every layer for `tokens` tokens on one of n tensor-parallel chips (header): the
// norms and residual adds see the whole width D on every chip, the activation and the rotary embedding
// their shard. Bytes: each kernel reads its inputs and writes its output once, bf16.
double calibrated_vector_s(const ServingCalibration& cal, const DecodeModel& m, double tokens, double n) {
  if (m.d_model <= 0 || m.layers <= 0) return 0;
  const double D = m.d_model, b = 2;
  double t = 2 * (2 * D * b) / (m.layer_norm ? cal.layer_norm_bytes_per_s : cal.norm_bytes_per_s);  // 2 norms
  t += 2 * (3 * D * b) / cal.add_bytes_per_s;                                                       // 2 adds
  if (m.d_ff > 0)
    t += m.gated_mlp ? 3 * m.d_ff / n * b / cal.silu_mul_bytes_per_s : 2 * m.d_ff / n * b / cal.gelu_bytes_per_s;
  t += 2 * (m.q_width + m.kv_width) / n * b / cal.copy_bytes_per_s;  // rotary on Q and K: read and write
  return tokens * m.layers * t;
}

// The decode step's tensor-parallel collectives (§7.2): the R·L AllReduces of tp_reductions_per_step, each
// of the batch's activations in bf16 (B·D·2 bytes), timed as the ideal model's two halves (2·R·L
// collectives of one_collective) or the calibrated AllReduce (R·L). Records what DecodeTerms shows of them
// and returns one collective's times; the caller combines them by its model's rule.
Collective decode_collectives(DecodeTerms& s, const DecodeModel& model, const System& system, double batch,
                              bool calibrated) {
  check::positive("layers", model.layers);
  check::positive("d_model", model.d_model);
  s.comms_reductions = tp_reductions_per_step(model);
  s.comms_collectives = calibrated ? s.comms_reductions : 2 * s.comms_reductions;
  s.comms_bytes = batch * model.d_model * 2;
  const Collective c = calibrated ? calibrated_allreduce(system, s.comms_bytes) : one_collective(system, s.comms_bytes);
  s.comms_hops = c.hops;
  s.comms_latency_s = c.t_lat;
  s.comms_latency_bound = c.t_lat > c.t_bw;
  return c;
}

}  // namespace

DecodeTerms decode_terms(const DecodeModel& model, const System& system, double batch, double context,
                         CostModel cost_model) {
  validate(model);
  check::positive("batch", batch);
  check::positive("context", context);
  DecodeTerms s;
  s.cost_model = cost_model;
  s.batch = batch;
  s.context = context;
  s.chips = chips(system);
  check::positive("chips", s.chips);
  const double n = s.chips, W = system.chip.hbm_bytes_per_s, C = peak_flops_per_s(system.chip, model.dtypes.compute);
  check::positive("hbm_bytes_per_s", W);
  s.kv_bytes = checked_kv_bytes(model, batch, context);
  s.param_bytes = model.param_bytes;
  s.flops = batch * model.matmul_flops_per_token;
  s.weight_bytes_per_chip = model.param_bytes / n;
  s.kv_bytes_per_chip = s.kv_bytes / n;
  s.hbm_bytes_per_chip = system.chip.hbm_bytes;
  s.fits = s.weight_bytes_per_chip + s.kv_bytes_per_chip <= s.hbm_bytes_per_chip;
  const double attention_flops = batch * context * model.attention_flops_per_key;

  switch (cost_model) {
    case CostModel::book: {  // §7.1.5, equation (4)
      s.t_kv_s = s.kv_bytes / (n * W);
      s.t_params_s = s.param_bytes / (n * W);
      s.t_flops_s = s.flops / (n * C);
      s.t_hbm_s = s.t_kv_s + s.t_params_s;
      s.t_math_s = s.t_flops_s;
      s.step_s = s.t_kv_s + std::max(s.t_flops_s, s.t_params_s);
      break;
    }
    case CostModel::ideal: {
      s.t_kv_s = s.kv_bytes / (n * W);
      s.t_params_s = s.param_bytes / (n * W);
      s.t_flops_s = s.flops / (n * C);
      s.t_hbm_s = s.t_kv_s + s.t_params_s;
      s.t_math_s = (s.flops + attention_flops) / (n * C);
      if (n > 1 && has_links(system)) {
        const Collective c = decode_collectives(s, model, system, batch, /*calibrated=*/false);
        s.t_comms_s = s.comms_collectives * std::max(c.t_bw, c.t_lat);
      }
      s.step_s = std::max({s.t_hbm_s, s.t_math_s, s.t_comms_s});
      break;
    }
    case CostModel::calibrated: {
      const ServingCalibration cal = serving_calibration(system.chip);
      s.t_kv_s = s.kv_bytes / (n * cal.hbm_bytes_per_s);
      s.t_params_s = s.param_bytes / (n * cal.hbm_bytes_per_s);
      s.t_flops_s = s.flops / (n * C);
      const MatmulTimes mm = calibrated_matmuls(cal, model, C, batch, n);
      s.t_math_s = mm.layers_s + mm.unembedding_s;
      // The KV read: at the achieved rate, or the attention's FLOPs at the peak when they take longer.
      s.t_hbm_s = std::max(s.t_kv_s, attention_flops / (n * C));
      if (n > 1 && has_links(system)) {
        const Collective c = decode_collectives(s, model, system, batch, /*calibrated=*/true);
        s.t_comms_s = s.comms_collectives * (c.t_lat + c.t_bw);
      }
      s.t_vector_s = calibrated_vector_s(cal, model, batch, n);
      s.step_s = s.t_math_s + s.t_hbm_s + s.t_vector_s + s.t_comms_s;
      break;
    }
  }
  s.tokens_per_s = batch / s.step_s;
  s.tokens_per_s_per_chip = s.tokens_per_s / n;
  s.mlp_compute_bound = s.t_flops_s > s.t_params_s;
  return s;
}

DecodeTerms decode_terms(const DecodeInputs& in, double batch, double context, CostModel cost_model) {
  validate(in);
  return decode_terms(static_cast<const DecodeModel&>(in), in.system, batch, context, cost_model);
}

PrefillTerms prefill_terms(const DecodeInputs& in, double batch, double prompt_len, CostModel cost_model) {
  validate(in);
  check::positive("batch", batch);
  check::positive("prompt_len", prompt_len);
  const double n = chip_count(in), C = peak_flops_per_s(in), W = hbm_bytes_per_s(in);
  const double tokens = batch * prompt_len;
  const double matmul = tokens * in.matmul_flops_per_token;
  const double attention = batch * in.attention_flops_per_key * prompt_len * (prompt_len + 1) / 2;
  if (!std::isfinite(matmul + attention))
    throw std::invalid_argument("batch × prompt_len = " + format_number(tokens) + ": the prefill's FLOPs overflow");
  PrefillTerms p;
  p.cost_model = cost_model;
  switch (cost_model) {
    case CostModel::book:
      p.t_math_s = (matmul + attention) / (n * C);
      p.step_s = p.t_math_s;
      break;
    case CostModel::ideal: {
      p.t_math_s = (matmul + attention) / (n * C);
      p.t_hbm_s = in.param_bytes / (n * W);
      if (n > 1 && has_links(in.system)) {
        const Collective c = one_collective(in.system, tokens * in.d_model * 2);
        p.t_comms_s = 2 * tp_reductions_per_step(in) * std::max(c.t_bw, c.t_lat);  // both halves of each
      }
      p.step_s = std::max({p.t_math_s, p.t_hbm_s, p.t_comms_s});
      break;
    }
    case CostModel::calibrated: {
      const ServingCalibration cal = serving_calibration(in.system.chip);
      const MatmulTimes mm = calibrated_matmuls(cal, in, C, tokens, n);
      // Only the last token of each prompt needs the unembedding (the next token's logits).
      const MatmulTimes last = calibrated_matmuls(cal, in, C, batch, n);
      p.t_math_s = mm.layers_s + last.unembedding_s + attention / (n * cal.attention_flops_per_s);
      if (n > 1 && has_links(in.system)) {
        const Collective c = calibrated_allreduce(in.system, tokens * in.d_model * 2);
        p.t_comms_s = tp_reductions_per_step(in) * (c.t_lat + c.t_bw);
      }
      p.t_vector_s = calibrated_vector_s(cal, in, tokens, n);
      p.step_s = p.t_math_s + p.t_vector_s + p.t_comms_s;
      break;
    }
  }
  return p;
}

const char* bound(const DecodeTerms& s) {
  switch (s.cost_model) {
    case CostModel::book:
      if (s.t_kv_s >= s.t_params_s && s.t_kv_s >= s.t_flops_s) return "kv";
      return s.t_params_s >= s.t_flops_s ? "params" : "flops";
    case CostModel::ideal:
      if (s.t_hbm_s >= s.t_math_s && s.t_hbm_s >= s.t_comms_s) return "hbm";
      return s.t_math_s >= s.t_comms_s ? "flops" : "comms";
    case CostModel::calibrated:
      if (s.t_math_s >= s.t_hbm_s && s.t_math_s >= s.t_comms_s) return "matmuls";
      return s.t_hbm_s >= s.t_comms_s ? "kv" : "comms";
  }
  return "kv";
}

// §7.1.5: memory-bandwidth bound in both attention and MLP.
double min_step_s(const DecodeInputs& in, double batch, double context) {
  validate(in);
  check::positive("batch", batch);
  check::positive("context", context);
  return (batch * context * in.kv_bytes_per_token + in.param_bytes) / (chip_count(in) * hbm_bytes_per_s(in));
}

// §7.1.3: 2·B·P_active/C = bytes/W  ->  B* = bytes·C / (2·P_active·W).
double critical_batch(const DecodeInputs& in) {
  validate(in);
  return in.param_bytes * peak_flops_per_s(in) / (in.matmul_flops_per_token * hbm_bytes_per_s(in));
}

double kv_bytes(const DecodeInputs& in, double batch, double context) {
  check::non_negative("batch", batch);
  check::positive("context", context);
  return checked_kv_bytes(in, batch, context);
}

double hbm_bytes(const DecodeInputs& in) { return chip_count(in) * in.system.chip.hbm_bytes; }

bool fits(const DecodeInputs& in, double batch, double context) {
  validate(in);
  return in.param_bytes + kv_bytes(in, batch, context) <= hbm_bytes(in);
}

double max_batch(const DecodeInputs& in, double context) {
  validate(in);
  check::positive("context", context);
  const double spare = hbm_bytes(in) - in.param_bytes;
  if (spare <= 0) return 0;
  return std::floor(spare / (context * in.kv_bytes_per_token));
}

double min_chips(const DecodeInputs& in, double batch, double context) {
  validate(in);
  return std::ceil((in.param_bytes + kv_bytes(in, batch, context)) / in.system.chip.hbm_bytes);
}

std::vector<std::vector<int>> allowed_slices(const Chip& chip) {
  std::vector<std::vector<int>> out;
  if (chip.pod_shape.size() == 2) {
    // Doubling the shorter axis each time: 1x1, 2x2 (the Cloud offers no 1x2), 2x4, 4x4, …
    out.push_back({1, 1});
    for (int a = 2, b = 2; a <= chip.pod_shape[0] && b <= chip.pod_shape[1];) {
      out.push_back({a, b});
      if (a == b) b *= 2; else a *= 2;
    }
  } else if (chip.pod_shape.size() == 3) {
    for (auto s : std::vector<std::vector<int>>{{2, 2, 1}, {2, 2, 2}, {2, 2, 4}, {2, 4, 4}}) out.push_back(s);
    std::vector<int> s{4, 4, 4};
    while (s[0] <= chip.pod_shape[0] && s[1] <= chip.pod_shape[1] && s[2] <= chip.pod_shape[2]) {
      out.push_back(s);
      // Double the smallest axis that still fits the pod (the last of equal ones first: 4x4x8, 4x8x8, …).
      int grow = -1;
      for (int i = 2; i >= 0; --i)
        if (s[i] * 2 <= chip.pod_shape[i] && (grow < 0 || s[i] < s[grow])) grow = i;
      if (grow < 0) break;
      s[grow] *= 2;
      std::sort(s.begin(), s.end());
    }
    // The whole pod last, when the doubling stops short of it (v5p: 16x16x16, then 16x20x28).
    if (chips_in(chip.pod_shape) > chips_in(out.back())) out.push_back(chip.pod_shape);
  } else {
    for (int n : {1, 2, 4, 8}) out.push_back({n});
  }
  return out;
}

std::optional<std::vector<int>> smallest_slice(const Chip& chip, double chips) {
  check::non_negative("chips", chips);
  for (const auto& s : allowed_slices(chip))
    if (chips_in(s) >= chips) return s;
  return std::nullopt;
}

double qps_per_chip(const DecodeTerms& s, double decode_len) {
  check::positive("decode_len", decode_len);
  return s.tokens_per_s_per_chip / decode_len;
}

Prefill prefill(const DecodeInputs& in, double prompt_len, double mfu) {
  validate(in);
  check::positive("prompt_len", prompt_len);
  check::positive("mfu", mfu);
  if (mfu > 1) throw std::invalid_argument("mfu = " + format_number(mfu) + ": must be at most 1");
  Prefill p{};
  p.matmul_flops = prompt_len * in.matmul_flops_per_token;
  p.attention_flops = in.attention_flops_per_key * prompt_len * (prompt_len + 1) / 2;
  p.flops = p.matmul_flops + p.attention_flops;
  const double rate = chip_count(in) * peak_flops_per_s(in) * mfu;
  p.t_s = p.flops / rate;
  p.t_matmul_only_s = p.matmul_flops / rate;
  if (!std::isfinite(p.t_s))
    throw std::invalid_argument("prompt_len = " + format_number(prompt_len) + " at mfu = " + format_number(mfu) +
                                ": the prefill's FLOPs or time overflow");
  return p;
}

// §8.3: P/prefill_s = B·G_servers/(step_s·decode_len).
double prefill_to_decode_servers(double prefill_s, double step_s, double batch, double decode_len) {
  check::positive("prefill_s", prefill_s);
  check::positive("step_s", step_s);
  check::positive("batch", batch);
  check::positive("decode_len", decode_len);
  return prefill_s * batch / (step_s * decode_len);
}

double sequences_finished_per_step(double batch, double decode_len) {
  check::positive("batch", batch);
  check::positive("decode_len", decode_len);
  return batch / decode_len;
}

double kv_tokens_evicted_per_step(double batch, double prompt_len, double decode_len) {
  check::non_negative("prompt_len", prompt_len);
  return sequences_finished_per_step(batch, decode_len) * (prompt_len + decode_len);
}

double prefix_cache_matmul_fraction(double prompt_len, double cached) {
  check::positive("prompt_len", prompt_len);
  check::non_negative("cached", cached);
  if (cached > prompt_len)
    throw std::invalid_argument("cached = " + format_number(cached) + ": more than the prompt's " +
                                format_number(prompt_len) + " tokens");
  return (prompt_len - cached) / prompt_len;
}

// New tokens c+1 … P attend to c+1 … P keys: Σ = (P(P+1) − c(c+1))/2.
double prefix_cache_flops_fraction(const DecodeInputs& in, double prompt_len, double cached) {
  const double matmul_part = prefix_cache_matmul_fraction(prompt_len, cached);
  const Prefill full = prefill(in, prompt_len, 1);
  const double attention = in.attention_flops_per_key * (prompt_len * (prompt_len + 1) - cached * (cached + 1)) / 2;
  return (matmul_part * full.matmul_flops + attention) / full.flops;
}

double flops_per_dollar(double flops_per_s, double usd_per_chip_hour) {
  check::positive("flops_per_s", flops_per_s);
  check::positive("usd_per_chip_hour", usd_per_chip_hour);
  return flops_per_s * 3600 / usd_per_chip_hour;
}

}  // namespace scaling
