#pragma once
// Chip presets: the numbers of the book's §2.3 tables (TPUs) and §1.1 (H100), each with its source.
// Quantities are SI: bytes, bytes/s, FLOPs/s, seconds.
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "scaling/hardware/dtype.hpp"

namespace scaling {

struct Chip {
  std::string_view name;     // preset key, e.g. "tpu-v5e"
  std::string_view display;  // e.g. "TPU v5e"
  std::vector<int> pod_shape;   // chips per axis of the largest ICI-connected pod; empty when not a TPU
  std::vector<int> host_shape;  // chips attached to one CPU host
  int tensorcores_per_chip;
  double hbm_bytes;
  double hbm_bytes_per_s;
  double bf16_flops_per_s;
  double int8_flops_per_s;       // 0 when the book gives no int8 figure for this chip
  double ici_oneway_bytes_per_s;  // per link, one direction; 0 when not a TPU
  double ici_bidi_bytes_per_s;    // per link, both directions together
  double ici_hop_latency_s;
  double pcie_bytes_per_s;          // host <-> chip, per chip
  double dcn_bytes_per_s_per_host;  // host egress
  std::string_view source;          // where each figure comes from
};

std::span<const Chip> chips();
// Throws std::invalid_argument naming the text and the known names.
const Chip& chip(std::string_view name);

// Peak FLOPs/s when the MXU computes in `compute` (the bf16 or the int8 column of §2.3).
// Throws std::invalid_argument for a dtype the chip has no figure for.
double peak_flops_per_s(const Chip& c, Dtype compute);

double chips_in(const std::vector<int>& shape);  // product of the axis sizes
std::string shape_text(const std::vector<int>& shape);  // "16x20x28"

}  // namespace scaling
