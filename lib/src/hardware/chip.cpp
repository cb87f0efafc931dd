#include "scaling/hardware/chip.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "scaling/base/format.hpp"
#include "scaling/base/validate.hpp"

namespace scaling {
namespace {

// §2.3 tables: pod size, host size, HBM capacity and bandwidth, bf16 and int8 FLOPs/s, ICI per link
// (one-way and bidirectional). TensorCores per chip: §2.1 (two per chip from v4 on, and on v3 as two
// separate accelerators; one on the inference chips v5e and v6e). ICI hop latency: 1 µs (§2.4, §3).
// PCIe: 1.5e10 B/s per chip (§2.3), 1.6e10 for v4 (§2.1), 3.2e10 for v6e (§2.3, footnote 10).
// DCN: 2.5e10 B/s per host (§2.2, §2.3). H100: §1.1 (9.89e14 bf16 FLOPs/s, 3.35e12 B/s) and 80 GB.
// §12 GPU anatomy (SMs, cores, clocks, on-chip memories), each from NVIDIA's architecture whitepapers for
// the SXM parts; §12's spec table rounds them (its clocks to 3 figures, its "kB" and "MB" binary).
constexpr double kKiB = 1024.0, kMiB = 1024.0 * 1024.0;
const GpuAnatomy& v100_figures() {
  static const GpuAnatomy a{80, 4, 64, 8, 1.245e9, 1.38e9, 128 * kKiB, 256 * kKiB, 0, 6 * kMiB, 64, 14e12,
                       "NVIDIA Tesla V100 whitepaper (GV100: 80 SMs, 64 FP32 cores and 8 Tensor Cores per SM, a "
                       "combined 128 KB L1 data cache / shared memory per SM of which up to 96 KB can be shared "
                       "memory, 256 KB registers per SM, 6144 KB L2, 64 warps per SM); "
                       "V100 PCIe: 1245 MHz base, 1380 MHz boost (TechPowerUp), 14 TFLOPs fp32 (NVIDIA datasheet)"};
  return a;
}
const GpuAnatomy& a100_figures() {
  static const GpuAnatomy a{108, 4, 64, 4, 1.095e9, 1.41e9, 192 * kKiB, 256 * kKiB, 0, 40 * kMiB, 64, 19.5e12,
                       "NVIDIA A100 Tensor Core GPU architecture whitepaper (108 SMs, 64 FP32 cores and 4 third-gen "
                       "Tensor Cores per SM, 192 KB combined L1/shared memory per SM, 256 KB registers per SM, 40 MB "
                       "L2, 64 warps per SM, 1410 MHz boost, 19.5 TFLOPs fp32); 1095 MHz base (TechPowerUp, A100 SXM4 40 GB; "
                       "the 80 GB part changes only the HBM)"};
  return a;
}
const GpuAnatomy& h100_figures() {
  static const GpuAnatomy a{132, 4, 128, 4, 1.59e9, 1.98e9, 256 * kKiB, 256 * kKiB, 0, 50 * kMiB, 64, 67e12,
                       "NVIDIA H100 Tensor Core GPU architecture whitepaper, H100 SXM5 (132 SMs, 128 FP32 cores and 4 "
                       "fourth-gen Tensor Cores per SM, 256 KB combined L1/shared memory per SM, 256 KB registers per "
                       "SM, 50 MB L2, 64 warps per SM); H100 datasheet (SXM: 67 TFLOPs fp32); 1590 MHz base, 1980 MHz "
                       "max boost (TechPowerUp, H100 SXM5)"};
  return a;
}
const GpuAnatomy& b200_figures() {
  static const GpuAnatomy a{148, 4, 128, 4, 0, 0, 256 * kKiB, 256 * kKiB, 256 * kKiB, 126 * kMiB, 64, 80e12,
                       "148 SMs: TechPowerUp's B200 entry (148 SMs, 592 Tensor Cores, a 1.86 GHz tensor clock); "
                       "256 KB registers per SM: CUDA C++ Programming Guide (64 K 32-bit registers per SM at compute "
                       "capability 10.0); 256 KB TMEM per SM: PTX ISA / NVIDIA's Tilus guide (Tensor Memory of 128 "
                       "lanes × 512 columns of 32-bit cells per CTA); 256 kB SMEM per SM and 126 MB L2: §12's own "
                       "figures, with no vendor figure found to check them (NVIDIA publishes no B200 whitepaper); "
                       "NVIDIA Blackwell datasheet, HGX B200 at 1,000 W: 80 TFLOPs fp32; 4 subpartitions of 32 fp32 "
                       "lanes as on Hopper (§12 Quiz 1 Question 1); NVIDIA publishes no clock"};
  return a;
}
// §12 NVLink table and NVIDIA's NVLink/NVSwitch pages: links per GPU × per-link bandwidth one way, and the
// node's switches (NVSwitch gen 2: 36 ports; gen 3: 64 NVLink4 ports; gen 4: 72 NVLink5 ports).
const NvlinkNode& ampere_node() {
  static const NvlinkNode n{3, 2, 12, 25e9, 6, 36, 25e9,
                             "§12 NVLink table (12 links × 25 GB/s, 6 NVSwitches per node); NVIDIA NVSwitch gen 2: "
                             "36 NVLink3 ports (DGX A100: 6 switches)"};
  return n;
}
const NvlinkNode& hopper_node() {
  static const NvlinkNode n{4, 3, 18, 25e9, 4, 64, 25e9,
                             "§12 'At the node level' (18 links × 25 GB/s each way, 4 NVSwitches of 64 ports, links "
                             "5+4+4+5); NVSwitch HotChips 2022 (64 NVLink4 ports, 3.2 TB/s full duplex per switch)"};
  return n;
}
const NvlinkNode& blackwell_node() {
  static const NvlinkNode n{5, 4, 18, 50e9, 2, 72, 50e9,
                                "§12 NVLink table (18 links × 50 GB/s, 2 NVSwitches per 8-GPU node, 18 per NVL72); "
                                "NVIDIA NVLink 5 switch: 72 ports, 1.8 TB/s per GPU both ways"};
  return n;
}

// A function-local static, so the table is ready even for other translation units' static initialisers.
const std::vector<Chip>& table() {
  static const std::vector<Chip> kChips = [] {
  std::vector<Chip> all{
    {"tpu-v3", "TPU v3", {32, 32}, {4, 2}, 2, 32e9, 9.0e11, 1.4e14, 1.4e14, 1e11, 2e11, 1e-6, 1.5e10, 2.5e10,
     WrapRule::full_axis, "§2.3 tables; cores §2.1"},
    {"tpu-v4p", "TPU v4p", {16, 16, 16}, {2, 2, 1}, 2, 32e9, 1.2e12, 2.75e14, 2.75e14, 4.5e10, 9e10, 1e-6,
     1.6e10, 2.5e10, WrapRule::cubes, "§2.3 tables; cores and PCIe §2.1"},
    {"tpu-v5p", "TPU v5p", {16, 20, 28}, {2, 2, 1}, 2, 96e9, 2.8e12, 4.59e14, 9.18e14, 9e10, 1.8e11, 1e-6,
     1.5e10, 2.5e10, WrapRule::cubes, "§2.3 tables; cores §2.1"},
    // HBM 16e9 B: the figure the book computes with (solution 2.2, §8). The part has 16 GiB: §2.1 says so,
    // and the §2.3 table's "16GB" is the same size in the memory industry's binary gigabytes (JEDEC), as
    // ch2.spec-table.v5e_hbm_bytes records; exercises that count in GiB (§7.1.7, §7.4.2) use 16 · 2^30 B.
    {"tpu-v5e", "TPU v5e", {16, 16}, {4, 2}, 1, 16e9, 8.1e11, 1.97e14, 3.94e14, 4.5e10, 9e10, 1e-6, 1.5e10,
     2.5e10, WrapRule::full_axis, "§2.3 tables; cores §2.1"},
    {"tpu-v6e", "TPU v6e", {16, 16}, {4, 2}, 1, 32e9, 1.6e12, 9.20e14, 1.84e15, 9e10, 1.8e11, 1e-6, 3.2e10,
     2.5e10, WrapRule::full_axis, "§2.3 tables; PCIe §2.3 footnote 10"},
    // GPUs (8 per NVLink node, one InfiniBand NIC per GPU). The H100 keeps the §1.1 figures the chapters
    // use (bf16 9.89e14, HBM 3.35e12 B/s); the rest are the vendor datasheets', which the GPU chapter of the
    // book's later edition (§12, "How to Think About GPUs": spec tables, NVLink table, node-egress table)
    // rounds to two figures. NVLink and InfiniBand are per GPU, one direction: NVIDIA quotes NVLink both
    // ways together (600 / 900 / 900 / 1800 GB/s), and §12 counts 12 / 18 / 18 / 18 links of 25 / 25 / 25 /
    // 50 GB/s each way; a DGX node has one NIC per GPU (A100: 200 Gb/s HDR; H100, H200, B200: 400 Gb/s NDR
    // ConnectX-7), §12's 400 GB/s of node egress over 8 GPUs for H100 and B200. Dense peaks (NVIDIA's
    // "with sparsity" figures are twice these).
    {"a100", "NVIDIA A100 80GB SXM", {}, {}, 1, 80e9, 2.039e12, 3.12e14, 6.24e14, 0, 0, 0, 0, 0, WrapRule::none,
     "NVIDIA A100 datasheet (80GB SXM: 312 TFLOPs bf16, 624 TOPs int8, 2,039 GB/s HBM2e, NVLink 600 GB/s "
     "bidirectional); DGX A100 datasheet (8 GPUs, 8 × 200 Gb/s HDR InfiniBand for compute); §12 tables",
     0, 0, 8, 3.0e11, 2.5e10},
    {"h100", "NVIDIA H100", {}, {}, 1, 80e9, 3.35e12, 9.89e14, 1.979e15, 0, 0, 0, 0, 0,
     WrapRule::none, "§1.1 (bf16 dense FLOPs/s, HBM bandwidth); 80 GB HBM from the spec sheet §1.1 cites; NVIDIA H100 "
     "datasheet (SXM: 1,979 TFLOPs fp8 and 1,979 TOPs int8 dense, NVLink 900 GB/s bidirectional); DGX H100 (8 GPUs, "
     "8 × 400 Gb/s ConnectX-7); §12: 18 NVLinks × 25 GB/s = 450 GB/s, node egress 400 GB/s",
     1.979e15, 0, 8, 4.5e11, 5e10},
    {"h200", "NVIDIA H200", {}, {}, 1, 141e9, 4.8e12, 9.895e14, 1.979e15, 0, 0, 0, 0, 0, WrapRule::none,
     "NVIDIA H200 datasheet (SXM: 141 GB HBM3e at 4.8 TB/s; with sparsity 1,979 TFLOPs bf16 and 3,958 fp8 / int8, "
     "so 989.5 and 1,979 dense; NVLink 900 GB/s bidirectional); DGX H200 (8 GPUs, 8 × 400 Gb/s ConnectX-7); §12 tables",
     1.979e15, 0, 8, 4.5e11, 5e10},
    {"b200", "NVIDIA B200", {}, {}, 1, 192e9, 8e12, 2.25e15, 4.5e15, 0, 0, 0, 0, 0, WrapRule::none,
     "§12 spec tables (192 GB, 8.0e12 B/s, 2.3e15 bf16, 4.5e15 fp8/int8, 9.0e15 fp4; 2250e12 bf16 in its "
     "Question 3); 192 GB is the part's eight HBM3e stacks (Glenn K. Lockwood's B200 notes, TechPowerUp's B200 "
     "entry), of which NVIDIA's DGX B200 datasheet exposes 1,440 GB over 8 GPUs (180 GB each); NVIDIA's Blackwell datasheet (dense: 2.25 PFLOPs bf16, 4.5 PFLOPs fp8, 9 PFLOPs fp4; NVLink 5 "
     "1.8 TB/s bidirectional); §12: 18 NVLinks × 50 GB/s = 900 GB/s, node egress 400 GB/s (DGX B200: 8 × 400 Gb/s)",
     4.5e15, 9e15, 8, 9e11, 5e10},
  };
    for (auto& c : all) {
      if (c.name == "a100") {
        c.anatomy = a100_figures();
        c.node = ampere_node();
      } else if (c.name == "h100" || c.name == "h200") {
        c.anatomy = h100_figures();  // H200: the same GH100 die and clocks, with more and faster HBM
        c.node = hopper_node();
      } else if (c.name == "b200") {
        c.anatomy = b200_figures();
        c.node = blackwell_node();
      }
    }
    return all;
  }();
  return kChips;
}

}  // namespace

std::span<const Chip> chips() { return table(); }

const Chip& chip(std::string_view name) {
  require_printable("chip", name);
  for (const auto& c : table())
    if (c.name == name) return c;
  std::string known;
  for (const auto& c : table()) known += (known.empty() ? "" : ", ") + std::string(c.name);
  throw std::invalid_argument("unknown chip '" + std::string(name) + "' (known: " + known + ")");
}

bool is_gpu(const Chip& c) { return c.gpus_per_node > 0; }

const GpuAnatomy& v100_anatomy() { return v100_figures(); }

namespace {
const GpuAnatomy& need_anatomy(const GpuAnatomy& a) {
  if (a.sms <= 0) throw std::invalid_argument("no GPU anatomy (SM count) for this chip: not a GPU preset");
  return a;
}
const Chip& need_node(const Chip& c) {
  if (c.node.links_per_gpu <= 0 || c.gpus_per_node <= 0)
    throw std::invalid_argument(c.name + ": no NVLink node figures (links per GPU, switches): not a GPU preset");
  return c;
}
}  // namespace

double cuda_cores(const GpuAnatomy& a) { return double(need_anatomy(a).sms) * a.fp32_cores_per_sm; }
double tensor_cores(const GpuAnatomy& a) { return double(need_anatomy(a).sms) * a.tensor_cores_per_sm; }
double smem_bytes(const GpuAnatomy& a) { return need_anatomy(a).sms * a.smem_bytes_per_sm; }
double register_bytes(const GpuAnatomy& a) { return need_anatomy(a).sms * a.register_bytes_per_sm; }

double flops_per_tensor_core_cycle(double peak_flops_per_s, const GpuAnatomy& a, double clock_hz) {
  check::positive("peak FLOPs/s", peak_flops_per_s);
  check::positive("clock (Hz)", clock_hz);
  return peak_flops_per_s / (tensor_cores(a) * clock_hz);
}

double cuda_core_flops_per_s(const GpuAnatomy& a, double clock_hz, double flops_per_op) {
  check::positive("clock (Hz)", clock_hz);
  check::positive("FLOPs per op", flops_per_op);
  return cuda_cores(a) * clock_hz * flops_per_op;
}

double node_gpu_bytes_per_s(const Chip& c) { return need_node(c).gpus_per_node * c.nvlink_bytes_per_s; }

double node_switch_bytes_per_s(const Chip& c) {
  need_node(c);
  return double(c.node.switches_per_node) * c.node.ports_per_switch * c.node.port_bytes_per_s;
}

double node_bisection_bytes_per_s(const Chip& c) {
  need_node(c);
  // Half the GPUs send to the other half while the other half sends back: 2 × (N/2) × W. The switches can
  // carry at most their own capacity across the cut.
  const double gpus_limited = 2.0 * (c.gpus_per_node / 2) * c.nvlink_bytes_per_s;
  return std::min(gpus_limited, node_switch_bytes_per_s(c));
}

double node_egress_bytes_per_s(const Chip& c, int gpus_per_node) {
  const int g = gpus_per_node > 0 ? gpus_per_node : c.gpus_per_node;
  if (g <= 0 || !(c.ib_bytes_per_s > 0))
    throw std::invalid_argument(c.name + ": no node size or InfiniBand bandwidth: not a GPU preset");
  return g * c.ib_bytes_per_s;
}

double peak_flops_per_s(const Chip& c, Dtype compute) {
  const double peak = compute == Dtype::bf16 ? c.bf16_flops_per_s
                      : compute == Dtype::int8 ? c.int8_flops_per_s
                      : compute == Dtype::fp8  ? c.fp8_flops_per_s
                                               : 0.0;
  if (peak <= 0.0) {
    std::string has = "bf16";
    if (c.int8_flops_per_s > 0) has += ", int8";
    if (c.fp8_flops_per_s > 0) has += ", fp8";
    throw std::invalid_argument(fmt::format("'{}': chip {} has no peak FLOPs/s for that compute dtype (it has {})",
                                            name(compute), c.name, has));
  }
  return peak;
}

const char* to_string(WrapRule r) {
  switch (r) {
    case WrapRule::cubes: return "cubes";
    case WrapRule::full_axis: return "full-axis";
    case WrapRule::none: return "none";
  }
  return "none";
}

void check_ici_figures(const Chip& c) {
  const double one = c.ici_oneway_bytes_per_s, both = c.ici_bidi_bytes_per_s;
  if (one == 0 && both == 0) return;
  if (one == 0)
    check::fail(check::subject("ici_oneway_bytes_per_s", one),
                fmt::format("must be given with ici_bidi_bytes_per_s = {} (half of it: a link carries the same rate "
                            "each way, §2.3)", format_number(both)));
  if (!(std::fabs(both - 2 * one) <= 1e-9 * 2 * one))
    check::fail(check::subject("ici_bidi_bytes_per_s", both),
                fmt::format("must be twice ici_oneway_bytes_per_s = {}, i.e. {} (a link carries the same rate each "
                            "way, §2.3)", format_number(one), format_number(2 * one)));
}

Chip with_overrides(Chip c, const ChipOverrides& o) {
  std::string changed;
  auto apply = [&](const std::optional<double>& v, double& field, const char* what) {
    if (!v) return;
    field = check::figure(what, *v);
    changed += (changed.empty() ? "" : ", ") + std::string(what) + " = " + format_number(*v);
  };
  apply(o.hbm_bytes, c.hbm_bytes, "hbm_bytes");
  apply(o.hbm_bytes_per_s, c.hbm_bytes_per_s, "hbm_bytes_per_s");
  apply(o.bf16_flops_per_s, c.bf16_flops_per_s, "bf16_flops_per_s");
  apply(o.int8_flops_per_s, c.int8_flops_per_s, "int8_flops_per_s");
  if (o.ici_oneway_bytes_per_s) {
    apply(o.ici_oneway_bytes_per_s, c.ici_oneway_bytes_per_s, "ici_oneway_bytes_per_s");
    c.ici_bidi_bytes_per_s = 2 * c.ici_oneway_bytes_per_s;  // §2.3: a link carries the same rate each way
  }
  apply(o.nvlink_bytes_per_s, c.nvlink_bytes_per_s, "nvlink_bytes_per_s");
  apply(o.ib_bytes_per_s, c.ib_bytes_per_s, "ib_bytes_per_s");
  if (!changed.empty()) {
    c.display += " (" + changed + ")";
    c.source += "; overridden: " + changed;
  }
  return c;
}

double chips_in(const std::vector<int>& shape) {
  double n = 1;
  for (int s : shape) n *= s;
  return n;
}

std::string shape_text(const std::vector<int>& shape) {
  std::string out;
  for (int s : shape) {
    if (!out.empty()) out += 'x';
    out += std::to_string(s);
  }
  return out;
}

}  // namespace scaling
