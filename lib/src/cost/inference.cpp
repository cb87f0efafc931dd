#include "scaling/cost/inference.hpp"
#include "scaling/base/validate.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "scaling/base/format.hpp"
#include "scaling/model/tensors.hpp"

namespace scaling {
namespace {


}  // namespace

void validate(const DecodeInputs& in) {
  check::positive("param_bytes", in.param_bytes);
  check::positive("matmul_flops_per_token", in.matmul_flops_per_token);
  check::positive("kv_bytes_per_token", in.kv_bytes_per_token);
  check::non_negative("attention_flops_per_key", in.attention_flops_per_key);
  check::positive("chips", in.chips);
  check::positive("hbm_bytes_per_chip", in.hbm_bytes_per_chip);
  check::positive("hbm_bytes_per_s", in.hbm_bytes_per_s);
  check::positive("flops_per_s", in.flops_per_s);
  // The slice's totals must be numbers too (1e300 chips of 16 GB is not).
  if (!std::isfinite(in.chips * in.hbm_bytes_per_chip) || !std::isfinite(in.chips * in.hbm_bytes_per_s) ||
      !std::isfinite(in.chips * in.flops_per_s))
    throw std::invalid_argument("chips = " + format_number(in.chips) + ": the slice's HBM, bandwidth or FLOPs overflow");
}

namespace {
// B·T·kv_bytes_per_token, which must stay finite.
double checked_kv_bytes(const DecodeInputs& in, double batch, double context) {
  const double bytes = batch * context * in.kv_bytes_per_token;
  if (!std::isfinite(bytes))
    throw std::invalid_argument("batch × context = " + format_number(batch) + " × " + format_number(context) +
                                ": the KV cache's bytes overflow");
  return bytes;
}
}  // namespace

DecodeInputs decode_inputs(const TransformerConfig& c, const Chip& chip, double chips, const InferenceDtypes& d) {
  check::positive("chips", chips);
  DecodeInputs in;
  in.param_bytes = param_bytes(c, d.weights);
  in.matmul_flops_per_token = forward_flops_per_token(c, 0).total;  // §4.1: 2 per active matmul weight
  in.kv_bytes_per_token = kv_bytes_per_token(c, d.kv);               // §7.1.6: 2·L·K·H·bytes
  in.attention_flops_per_key = forward_flops_per_token(c, 1).attention;
  in.chips = chips;
  in.hbm_bytes_per_chip = chip.hbm_bytes;
  in.hbm_bytes_per_s = chip.hbm_bytes_per_s;
  in.flops_per_s = peak_flops_per_s(chip, d.compute);
  in.layers = c.layers;
  in.d_model = c.d_model;
  validate(in);
  return in;
}

// §7.1.5, equation (4).
DecodeStep decode_step(const DecodeInputs& in, double batch, double context) {
  validate(in);
  check::positive("batch", batch);
  check::positive("context", context);
  DecodeStep s{};
  s.batch = batch;
  s.context = context;
  s.kv_bytes = checked_kv_bytes(in, batch, context);
  s.param_bytes = in.param_bytes;
  s.flops = batch * in.matmul_flops_per_token;
  const double bandwidth = in.chips * in.hbm_bytes_per_s, compute = in.chips * in.flops_per_s;
  s.t_kv_s = s.kv_bytes / bandwidth;
  s.t_params_s = s.param_bytes / bandwidth;
  s.t_flops_s = s.flops / compute;
  s.step_s = s.t_kv_s + std::max(s.t_flops_s, s.t_params_s);
  s.tokens_per_s = batch / s.step_s;
  s.tokens_per_s_per_chip = s.tokens_per_s / in.chips;
  s.mlp_compute_bound = s.t_flops_s > s.t_params_s;
  return s;
}

// §7.2–7.3.2: the header's rule. Activations are bf16 whatever the weights' dtype (the book's 2BD).
DecodeStep decode_step(const DecodeInputs& in, double batch, double context, const System& system) {
  DecodeStep s = decode_step(in, batch, context);
  check::positive("layers", in.layers);
  check::positive("d_model", in.d_model);
  const double n = chips(system);
  if (n != in.chips)
    throw std::invalid_argument("the system has " + format_number(n) + " chips, the decode inputs " +
                                format_number(in.chips));
  s.comms_collectives = 4 * in.layers;
  s.comms_bytes = batch * in.d_model * 2;
  double t_bw = 0, t_lat = 0, sum_w = 0, n_fast = 1, hops = 0;
  for (const auto& a : system.fast) {
    if (a.size <= 1) continue;
    check::positive("fast-axis bandwidth", a.bytes_per_s);
    n_fast *= a.size;
    sum_w += a.bytes_per_s;
    const double h = a.wraps ? std::floor(a.size / 2.0) : a.size - 1;
    hops += h;
    t_lat += h * a.hop_latency_s;
  }
  if (n_fast > 1) t_bw += (n_fast - 1) / n_fast * s.comms_bytes / sum_w;
  const double g = system.slow.groups;
  if (g > 1) {
    check::positive("slow-tier bandwidth", system.slow.bytes_per_s);
    t_bw += (g - 1) / g * s.comms_bytes / system.slow.bytes_per_s;
    hops += std::floor(g / 2);
    t_lat += std::floor(g / 2) * system.slow.latency_s;
  }
  s.comms_hops = hops;
  s.comms_latency_bound = t_lat > t_bw;
  s.t_comms_s = s.comms_collectives * std::max(t_bw, t_lat);
  s.step_s = s.t_kv_s + std::max({s.t_flops_s, s.t_params_s, s.t_comms_s});
  s.tokens_per_s = batch / s.step_s;
  s.tokens_per_s_per_chip = s.tokens_per_s / in.chips;
  return s;
}

const char* bound(const DecodeStep& s) {
  if (s.t_kv_s >= s.t_params_s && s.t_kv_s >= s.t_flops_s && s.t_kv_s >= s.t_comms_s) return "kv";
  if (s.t_params_s >= s.t_flops_s && s.t_params_s >= s.t_comms_s) return "params";
  if (s.t_flops_s >= s.t_comms_s) return "flops";
  return "comms";
}

// §7.1.5: memory-bandwidth bound in both attention and MLP.
double min_step_s(const DecodeInputs& in, double batch, double context) {
  validate(in);
  check::positive("batch", batch);
  check::positive("context", context);
  return (batch * context * in.kv_bytes_per_token + in.param_bytes) / (in.chips * in.hbm_bytes_per_s);
}

// §7.1.3: 2·B·P_active/C = bytes/W  ->  B* = bytes·C / (2·P_active·W).
double critical_batch(const DecodeInputs& in) {
  validate(in);
  return in.param_bytes * in.flops_per_s / (in.matmul_flops_per_token * in.hbm_bytes_per_s);
}

double kv_bytes(const DecodeInputs& in, double batch, double context) {
  check::non_negative("batch", batch);
  check::positive("context", context);
  return checked_kv_bytes(in, batch, context);
}

double hbm_bytes(const DecodeInputs& in) { return in.chips * in.hbm_bytes_per_chip; }

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
  return std::ceil((in.param_bytes + kv_bytes(in, batch, context)) / in.hbm_bytes_per_chip);
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

double qps_per_chip(const DecodeStep& s, double decode_len) {
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
  const double rate = in.chips * in.flops_per_s * mfu;
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
