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

// §12 "What Is a GPU?" and "Memory": what one GPU is made of. An SM (streaming multiprocessor) has
// subpartitions, each with a warp scheduler driving a row of fp32 lanes (NVIDIA's "CUDA cores") and a
// register file; the Tensor Cores are the matmul units; SMEM is the SM's programmable L1; every SM shares
// one L2; Blackwell adds TMEM per SM to feed its larger Tensor Cores. 0 where the vendor publishes no figure.
// Bytes are binary where NVIDIA's "KB"/"MB" are (a 256 KB register file is 2^18 bytes; L2 is quoted in MB
// of 2^20 bytes), since SRAM comes in powers of two.
struct GpuAnatomy {
  int sms = 0;
  int subpartitions_per_sm = 0;
  int fp32_cores_per_sm = 0;      // CUDA cores: fp32 lanes, one op per cycle each (an FMA counts 2 FLOPs)
  int tensor_cores_per_sm = 0;
  double base_clock_hz = 0;
  double boost_clock_hz = 0;
  double smem_bytes_per_sm = 0;   // the combined L1 / shared-memory array
  double register_bytes_per_sm = 0;
  double tmem_bytes_per_sm = 0;   // Blackwell only
  double l2_bytes = 0;
  int max_resident_warps_per_sm = 0;
  double fp32_vector_flops_per_s = 0;  // the vendor's non-Tensor-Core fp32 peak (FMA as 2 FLOPs)
  std::string source;
};

// §12 "At the node level": how a GPU node's NVLink domain is built. Each GPU has `links_per_gpu` NVLinks of
// `link_bytes_per_s` each way (full duplex) into the node's NVSwitches; each switch has `ports_per_switch`
// ports of `port_bytes_per_s` each way. The GPU's total (links × per-link) is Chip::nvlink_bytes_per_s.
struct NvlinkNode {
  int nvlink_generation = 0;
  int nvswitch_generation = 0;
  int links_per_gpu = 0;
  double link_bytes_per_s = 0;     // one direction
  int switches_per_node = 0;
  int ports_per_switch = 0;
  double port_bytes_per_s = 0;     // one direction
  std::string source;
};

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
  // ICI per link: one direction, and both together. One figure in two units: a link carries the same rate
  // each way (§2.3), so ici_bidi = 2 · ici_oneway always (check_ici_figures; a chip file that says otherwise
  // is refused). The System and so every cost model and the simulator read the bidirectional figure alone
  // (system.hpp), converted to a link's one-way rate by axis_link's one rule (cost/collectives.hpp).
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
  // GPUs only (sms == 0 / links_per_gpu == 0 elsewhere): the chip's anatomy and its node's NVLink build.
  GpuAnatomy anatomy{};
  NvlinkNode node{};
};
// A GPU: a chip that comes in NVLink nodes rather than ICI slices.
bool is_gpu(const Chip& c);

// The ICI rule above: both figures 0 (no ICI), or ici_bidi_bytes_per_s = 2 · ici_oneway_bytes_per_s (to
// one part in 1e9). Throws std::invalid_argument naming the field, its value and the rule.
void check_ici_figures(const Chip& c);

std::span<const Chip> chips();

// The V100's anatomy alone: §12's generation tables start at Volta, but a V100 has no bf16 Tensor Core
// peak, which every chip preset needs, so it is not a preset.
const GpuAnatomy& v100_anatomy();

// §12 arithmetic on a GPU's anatomy. Throw std::invalid_argument when the figures are missing (a TPU).
double cuda_cores(const GpuAnatomy& a);            // SMs × fp32 cores per SM
double tensor_cores(const GpuAnatomy& a);          // SMs × Tensor Cores per SM
double smem_bytes(const GpuAnatomy& a);            // SMs × SMEM per SM
double register_bytes(const GpuAnatomy& a);        // SMs × register file per SM
// Peak Tensor Core FLOPs per Tensor Core per cycle: peak / (Tensor Cores × clock).
double flops_per_tensor_core_cycle(double peak_flops_per_s, const GpuAnatomy& a, double clock_hz);
// Vector fp32 FLOPs/s from the CUDA cores: cores × clock × FLOPs per op (1 for one op, 2 counting an FMA).
double cuda_core_flops_per_s(const GpuAnatomy& a, double clock_hz, double flops_per_op);

// §12 node arithmetic (one direction unless said). Throw std::invalid_argument for a chip without a node.
double node_gpu_bytes_per_s(const Chip& c);      // GPUs × per-GPU NVLink: what the GPUs can push into the switches
double node_switch_bytes_per_s(const Chip& c);   // switches × ports × port bandwidth
// §12 Quiz 2: bytes/s crossing an even split of the node, both directions counted: each half's GPUs send
// at their NVLink rate to the other half, limited by what the switches can carry.
double node_bisection_bytes_per_s(const Chip& c);
// The node's scale-out egress: one NIC per GPU (Chip::ib_bytes_per_s each), for a node of `gpus_per_node`
// GPUs (0: the preset's; 72 for a GB200 NVL72 rack of B200s).
double node_egress_bytes_per_s(const Chip& c, int gpus_per_node = 0);
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
