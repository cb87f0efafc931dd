#pragma once
// Chips: the presets hold the numbers of the book's §2.3 tables (TPUs), §1.1 (H100) and the GPU chapter
// of the book's later edition (A100, H100 cluster figures, H200, B200), each with its source; a user's chip is the same struct, read from a JSON file (chip_file.hpp) or a preset with some
// figures overridden. Quantities are SI: bytes, bytes/s, FLOPs/s, seconds.
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "scaling/hardware/dtype.hpp"

namespace scaling {

// §2.2: which slice axes have wraparound links.
enum class WrapRule {
  cubes,      // v4p, v5p: optical switches wrap every axis of a slice built of whole 4×4×4 cubes
  full_axis,  // v5e, v6e (and v3 by the same 2-D rule): an axis wraps when it spans the pod's side
  none,       // no wraparound (or no ICI at all)
};
const char* to_string(WrapRule r);

struct Chip {
  std::string name;     // preset key, e.g. "tpu-v5e"
  std::string display;  // e.g. "TPU v5e"
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
  WrapRule wrap_rule;
  std::string source;               // where each figure comes from
  // Lower-precision peaks (0 where the chip has none): fp8 (GPUs from Hopper on) and fp4 (Blackwell).
  double fp8_flops_per_s = 0;
  double fp4_flops_per_s = 0;
  // A GPU node: the GPUs of one NVLink domain, each GPU's NVLink bandwidth one direction (what it can
  // send to the switch while receiving as much), and its InfiniBand bandwidth one direction (one NIC per
  // GPU). 0 on TPUs, whose slices are ICI meshes and whose pods talk over DCN per host.
  int gpus_per_node = 0;
  double nvlink_bytes_per_s = 0;
  double ib_bytes_per_s = 0;
};
// A GPU: a chip that comes in NVLink nodes rather than ICI slices.
bool is_gpu(const Chip& c);

std::span<const Chip> chips();
// Throws std::invalid_argument naming the text and the known names.
const Chip& chip(std::string_view name);

// A chip with some of its figures replaced ("your own chip": a preset with another bandwidth, say). Each
// given value must be a figure within [check::kMinFigure, check::kMaxFigure] (std::invalid_argument naming
// the field otherwise); `display`
// notes what changed.
struct ChipOverrides {
  std::optional<double> hbm_bytes, hbm_bytes_per_s, bf16_flops_per_s, int8_flops_per_s, ici_oneway_bytes_per_s;
  std::optional<double> nvlink_bytes_per_s, ib_bytes_per_s;
};
Chip with_overrides(Chip base, const ChipOverrides& o);

// Peak FLOPs/s when the MXU (or tensor core) computes in `compute`: the bf16, int8 or fp8 figure.
// Throws std::invalid_argument for a dtype the chip has no figure for.
double peak_flops_per_s(const Chip& c, Dtype compute);

double chips_in(const std::vector<int>& shape);  // product of the axis sizes
std::string shape_text(const std::vector<int>& shape);  // "16x20x28"

}  // namespace scaling
