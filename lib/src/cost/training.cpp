#include "scaling/cost/training.hpp"
#include "scaling/base/validate.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "scaling/base/format.hpp"
#include "scaling/model/tensors.hpp"

namespace scaling {

namespace {
// The ring factor the book drops: an AllGather or ReduceScatter over n devices moves (n − 1)/n of the array.
double ring(double n) { return (n - 1) / n; }
}  // namespace

// ----- memory -----

Optimizer parse_optimizer(std::string_view text) {
  if (text == "adam") return Optimizer::adam;
  if (text == "sgd") return Optimizer::sgd;
  check::not_one_of(text, {"adam", "sgd"});
}

const char* to_string(Optimizer o) { return o == Optimizer::adam ? "adam" : "sgd"; }

double saved_elements_per_layer_token(const SavedRule& r, const TransformerConfig& c) {
  validate(c);
  return r.d * c.d_model + r.f * c.d_ff + r.nh * c.q_heads * c.head_dim + r.kh * c.kv_heads * c.head_dim;
}

TrainingMemory training_memory(const TransformerConfig& c, double batch_tokens, const TrainingSetup& s) {
  check::positive("batch tokens", batch_tokens);
  const double n = param_counts(c).total;  // every stored parameter, all experts included
  TrainingMemory m;
  m.params = n * bytes_per_element(s.weights);
  m.grads = s.grads ? n * bytes_per_element(*s.grads) : 0;
  m.optimizer = s.optimizer == Optimizer::adam ? 2 * n * bytes_per_element(s.optimizer_state) : 0;
  m.master = s.fp32_master ? n * bytes_per_element(Dtype::fp32) : 0;
  // §5.3 (exercise 5.2): bytes per element × layers × tokens × elements saved per layer per token.
  m.activations = bytes_per_element(s.activations) * c.layers * batch_tokens * saved_elements_per_layer_token(s.saved, c);
  m.total = m.params + m.grads + m.optimizer + m.master + m.activations;
  if (!std::isfinite(m.total))
    throw std::invalid_argument("batch tokens = " + format_number(batch_tokens) + " with rule " + to_string(s.saved) +
                                ": the training memory overflows a double");
  return m;
}

TrainingMemory training_memory(const TransformerConfig& c, double tokens, const SavedRule& saved, Dtype params,
                               Dtype grads, Dtype optimizer, Dtype activation) {
  TrainingSetup s;
  s.weights = params;
  s.grads = grads;
  s.optimizer = Optimizer::adam;
  s.optimizer_state = optimizer;
  s.activations = activation;
  s.saved = saved;
  return training_memory(c, tokens, s);
}

double remat_extra_flops_per_token(const TransformerConfig& c, double context, Remat r) {
  const auto f = forward_flops_per_token(c, context);
  switch (r) {
    case Remat::none: return 0;
    case Remat::block: return f.total - f.unembedding;  // the layers' forward pass, once more
    case Remat::big_matmuls: return f.attention;
  }
  return 0;
}

TrainingMemory zero_memory_per_device(const TrainingMemory& whole, double devices, int zero_stage) {
  check::positive_whole("data-parallel devices", devices);
  if (zero_stage < 0 || zero_stage > 3)
    throw std::invalid_argument("ZeRO stage " + std::to_string(zero_stage) + ": must be 0, 1, 2 or 3");
  TrainingMemory m = whole;
  // ZeRO-1 shards the optimizer state (the master copy is part of it); ZeRO-2 the gradients too; ZeRO-3
  // the parameters too.
  if (zero_stage >= 1) m.optimizer /= devices, m.master /= devices;
  if (zero_stage >= 2) m.grads /= devices;
  if (zero_stage >= 3) m.params /= devices;
  m.activations /= devices;
  m.total = m.params + m.grads + m.optimizer + m.master + m.activations;
  return m;
}

// ----- compute and communication per layer -----

const char* to_string(Strategy s) {
  switch (s) {
    case Strategy::dp: return "DP";
    case Strategy::fsdp: return "FSDP";
    case Strategy::tp: return "TP";
    case Strategy::fsdp_tp: return "FSDP+TP";
  }
  return "?";
}

LayerCost layer_cost(const MlpLayer& l, Strategy s, double X, double Y) {
  check::positive("B", l.B);
  check::positive("D", l.D);
  check::positive("F", l.F);
  check::positive("bytes per element", l.bytes_per_element);
  if (s == Strategy::tp) X = 1;
  if (s == Strategy::dp || s == Strategy::fsdp) Y = 1;
  check::positive_whole("X", X);
  check::positive_whole("Y", Y);
  const double b = l.bytes_per_element, B = l.B, D = l.D, F = l.F, N = X * Y;
  LayerCost c;
  // §5.1.1: two matmuls of 2·(B/N)·D·F FLOPs forward, twice that backward (dIn and dW of each).
  c.flops_fwd = 2 * 2 * B * D * F / N;
  c.flops_bwd = 2 * 2 * 2 * B * D * F / N;
  const double weight = b * D * F / Y;  // one weight matrix's shard along Y, gathered over X
  const double act = b * B * D / X;     // one activation block's shard along X, gathered over Y
  switch (s) {
    case Strategy::dp:
      // Backward only: an AllReduce (= AllGather + ReduceScatter) of dW_in and of dW_out.
      c.comm_x_bwd = 2 * 2 * weight;
      break;
    case Strategy::fsdp:
    case Strategy::fsdp_tp:
      // Forward: AllGather W_in, W_out. Backward: AllGather each again and ReduceScatter each gradient.
      c.comm_x_fwd = 2 * weight;
      c.comm_x_bwd = 4 * weight;
      if (s == Strategy::fsdp) break;
      [[fallthrough]];
    case Strategy::tp:
      // Forward: AllGather In, ReduceScatter Out. Backward: AllGather dOut, ReduceScatter dIn (In's gather
      // is kept from the forward pass).
      c.comm_y_fwd = 2 * act;
      c.comm_y_bwd = 2 * act;
      break;
  }
  c.comm_x_fwd_exact = c.comm_x_fwd * ring(X);
  c.comm_x_bwd_exact = c.comm_x_bwd * ring(X);
  c.comm_y_fwd_exact = c.comm_y_fwd * ring(Y);
  c.comm_y_bwd_exact = c.comm_y_bwd * ring(Y);
  return c;
}

LayerTime layer_time(const LayerCost& c, Pass pass, double C, double W, double M_X, double M_Y, CommsModel model,
                     bool exact) {
  check::positive("C (FLOPs/s per chip)", C);
  check::positive("W (link bandwidth)", W);
  check::positive("M_X", M_X);
  check::positive("M_Y", M_Y);
  const bool fwd = pass != Pass::backward, bwd = pass != Pass::forward;
  const double flops = (fwd ? c.flops_fwd : 0) + (bwd ? c.flops_bwd : 0);
  const double x = (fwd ? (exact ? c.comm_x_fwd_exact : c.comm_x_fwd) : 0) +
                   (bwd ? (exact ? c.comm_x_bwd_exact : c.comm_x_bwd) : 0);
  const double y = (fwd ? (exact ? c.comm_y_fwd_exact : c.comm_y_fwd) : 0) +
                   (bwd ? (exact ? c.comm_y_bwd_exact : c.comm_y_bwd) : 0);
  LayerTime t;
  t.t_math_s = flops / C;
  t.t_x_s = x / (W * M_X);
  t.t_y_s = y / (W * M_Y);
  t.t_comms_s = model == CommsModel::summed ? t.t_x_s + t.t_y_s : std::max(t.t_x_s, t.t_y_s);
  t.t_s = std::max(t.t_math_s, t.t_comms_s);
  t.compute_bound = t.t_math_s >= t.t_comms_s;
  return t;
}

AxisSplit split_axes(const std::vector<int>& shape, double Y) {
  check::positive_whole("Y", Y);
  AxisSplit a;
  double left = Y;
  for (int n : shape) {
    double for_x = n;
    if (left > 1) {
      if (std::fmod(left, n) == 0) {
        a.m_y += 1, left /= n, for_x = 1;
      } else if (std::fmod(n, left) == 0) {
        a.m_y += 1, for_x = n / left, left = 1;
      } else {
        break;
      }
    }
    if (for_x > 1) a.m_x += 1;
  }
  if (left > 1)
    throw std::invalid_argument("Y = " + format_number(Y) + " does not map onto the slice " + shape_text(shape) +
                                " (whole axes and at most one sub-ring of an axis)");
  return a;
}

// ----- bounds -----

double ici_alpha(const Chip& c) {
  if (!(c.ici_bidi_bytes_per_s > 0))
    throw std::invalid_argument("chip " + c.name + " has no ICI bandwidth: the ICI bounds need one");
  return c.bf16_flops_per_s / c.ici_bidi_bytes_per_s;
}

double dp_min_batch_per_chip(double alpha, double axes) {
  check::positive("alpha", alpha);
  check::positive("axes", axes);
  return alpha / axes;
}

double tp_max_degree(double alpha, double F, double axes) {
  check::positive("alpha", alpha);
  check::positive("F", F);
  check::positive("axes", axes);
  return axes * F / alpha;
}

double mixed_min_batch_per_chip(double alpha, double F, double M_X, double M_Y, CommsModel model) {
  check::positive("alpha", alpha);
  check::positive("F", F);
  check::positive("M_X", M_X);
  check::positive("M_Y", M_Y);
  // At X_opt the two axes' times are equal, each sqrt(B·F / (M_X·M_Y·N)) in units of 4D/W; their sum is
  // twice that, their max once. Compute-bound needs it below B·F/(N·α): squaring gives the bound.
  const double factor = model == CommsModel::summed ? 4 : 1;
  return factor * alpha * alpha / (M_X * M_Y * F);
}

double x_opt(double B, double N, double F, double M_X, double M_Y) {
  check::positive("B", B);
  check::positive("N", N);
  check::positive("F", F);
  check::positive("M_X", M_X);
  check::positive("M_Y", M_Y);
  return std::sqrt(B * M_X * N / (F * M_Y));
}

double dcn_min_batch_per_pod(double pod_flops_per_s, double pod_dcn_bytes_per_s) {
  check::positive("pod FLOPs/s", pod_flops_per_s);
  check::positive("pod DCN bandwidth", pod_dcn_bytes_per_s);
  return pod_flops_per_s / pod_dcn_bytes_per_s;
}

// ----- pipelining -----

PipelineCost pipeline_cost(const MlpLayer& l, double layers, double stages, double microbatches) {
  check::positive_whole("layers", layers);
  check::positive_whole("pipeline stages", stages);
  check::positive_whole("microbatches", microbatches);
  if (stages > layers)
    throw std::invalid_argument(format_number(stages) + " pipeline stages exceed the " + format_number(layers) +
                                " layers");
  const auto per_layer = layer_cost(l, Strategy::dp, 1, 1);
  PipelineCost p;
  p.flops_per_stage_fwd = per_layer.flops_fwd * layers / stages;
  p.flops_per_stage_bwd = per_layer.flops_bwd * layers / stages;
  // One hop: every stage but the last sends its output activations on; every stage but the first sends
  // their gradients back. Per stage that is B·D elements each way.
  p.bytes_sent_per_stage_fwd = stages > 1 ? l.bytes_per_element * l.B * l.D : 0;
  p.bytes_sent_per_stage_bwd = p.bytes_sent_per_stage_fwd;
  p.bubble_fraction = (stages - 1) / (microbatches + stages - 1);
  return p;
}

// ----- training time -----

double training_time_s(double total_flops, double chips, double peak_flops_per_s, double mfu) {
  check::positive("total FLOPs", total_flops);
  check::positive("chips", chips);
  check::positive("peak FLOPs/s", peak_flops_per_s);
  if (!std::isfinite(mfu) || mfu <= 0 || mfu > 1)
    throw std::invalid_argument("MFU = " + format_number(mfu) + ": must be in (0, 1]");
  return total_flops / (chips * peak_flops_per_s * mfu);
}

}  // namespace scaling
