#include "scaling/cost/gpu_rooflines.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace scaling {

namespace {
void positive(const char* what, double v) {
  if (!(v > 0) || !std::isfinite(v)) throw std::invalid_argument(fmt::format("{} = {} must be positive and finite", what, v));
}
}  // namespace

GpuRates gpu_rates(const System& s) {
  if (s.fast.size() != 1 || s.fast_name != "NVLink") throw std::invalid_argument(s.name + ": not a GPU cluster");
  GpuRates r;
  r.c_flops_per_s = s.chip.bf16_flops_per_s;
  r.w_gpu_bytes_per_s = s.fast[0].bytes_per_s;
  r.gpus_per_node = s.fast[0].size;
  r.w_node_bytes_per_s = r.gpus_per_node * s.slow.bytes_per_s;
  positive("C", r.c_flops_per_s), positive("W_gpu", r.w_gpu_bytes_per_s), positive("W_node", r.w_node_bytes_per_s);
  return r;
}

double w_collective(const GpuRates& r, bool across_nodes) {
  return across_nodes ? r.w_node_bytes_per_s : r.w_gpu_bytes_per_s;
}

RooflineTerms gpu_dp_terms(const GpuRates& r, double b, double d, double f, double x, bool across, double e, double k,
                       int small_x_nodes) {
  positive("B", b), positive("D", d), positive("F", f), positive("X", x), positive("E", e), positive("k", k);
  if (small_x_nodes < 0) throw std::invalid_argument("small_x_nodes must be 0 or more");
  const double ring = small_x_nodes > 0 ? double(small_x_nodes - 1) / small_x_nodes : 1.0;
  return {8 * k * b * d * f / (x * r.c_flops_per_s), 8 * e * d * f * ring / w_collective(r, across)};
}

double gpu_dp_critical_tokens_per_gpu(const GpuRates& r, bool across, double e, double k, int small_x_nodes) {
  positive("E", e), positive("k", k);
  const double ring = small_x_nodes > 0 ? double(small_x_nodes - 1) / small_x_nodes : 1.0;
  return e / k * r.c_flops_per_s / w_collective(r, across) * ring;
}

RooflineTerms gpu_tp_terms(const GpuRates& r, double b, double d, double f, double y, bool across) {
  positive("B", b), positive("D", d), positive("F", f), positive("Y", y);
  return {4 * b * d * f / (y * r.c_flops_per_s), 4 * b * d / w_collective(r, across)};
}

double gpu_tp_max_degree(const GpuRates& r, double f, bool across) {
  positive("F", f);
  return f * w_collective(r, across) / r.c_flops_per_s;
}

double gpu_tp_two_node_max_degree(const GpuRates& r, double f) {
  positive("F", f);
  return r.gpus_per_node + f * r.w_node_bytes_per_s / r.c_flops_per_s;
}

RooflineTerms gpu_ep_terms(const GpuRates& r, double b, double d, double f, double z, double k) {
  positive("B", b), positive("D", d), positive("F", f), positive("k", k);
  const double g = r.gpus_per_node;
  if (!(z > g)) throw std::invalid_argument(fmt::format("Z = {} must span more than one node of {} GPUs", z, g));
  return {4 * b * k * d * f / (z * r.c_flops_per_s),
          4 * b * d * (z - g) / (r.w_node_bytes_per_s * z) * std::min(g * k / z, 1.0)};
}

double gpu_ep_min_f(const GpuRates& r, double z, double k) {
  positive("k", k);
  const double g = r.gpus_per_node, alpha = r.c_flops_per_s / r.w_node_bytes_per_s;
  if (!(z > g)) throw std::invalid_argument(fmt::format("Z = {} must span more than one node of {} GPUs", z, g));
  return g * k >= z ? alpha * (z - g) / k : g * alpha * (z - g) / z;
}

double gpu_pp_total_comms_s(double b, double d, double w, double mb, double stages) {
  positive("B", b), positive("D", d), positive("W", w), positive("microbatches", mb), positive("stages", stages);
  return 2 * b * d / (w * mb) * (mb + stages - 2);
}

double gpu_pp_per_layer_comms_book_s(double b, double d, double w, double layers) {
  positive("B", b), positive("D", d), positive("W", w), positive("layers", layers);
  return 1.5 * 2 * b * d / (w * layers);
}

}  // namespace scaling
