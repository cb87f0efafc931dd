// Independent checks of chapter 12's hardware half (chapters/ch12_gpus.cpp): hand arithmetic from vendor
// figures and the book's raw numbers, not the presets or the library; the fat tree's switch counts by a
// the textbook capacity of a folded Clos network, not the SU-by-SU sizing in hardware/fat_tree.cpp.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <vector>

#include "registry.hpp"

// NVIDIA H100 SXM5 datasheet: 989.4 TFLOPs dense bf16 (the §1.1 figure 9.89e14); 132 SMs × 128 fp32 lanes.
INDEPENDENT("ch12.cuda-core-flops.tc_over_cuda", "9.89e14 / (132·128·2·1.98e9)", 1e-12) {
  return 9.89e14 / (132.0 * 128 * 2 * 1.98e9);
}
// NVIDIA's B200 datasheet: 8 TB/s of HBM3e per GPU (HGX B200, DGX B200 at 64 TB/s for 8 GPUs).
INDEPENDENT("ch12.hbm-bandwidth.b200_hbm_bytes_per_s", "DGX B200: 64 TB/s of HBM over 8 GPUs", 1e-12) {
  return 64e12 / 8;
}
INDEPENDENT("ch12.hbm-bandwidth.hbm_growth", "192 GB (B200) / 32 GB (V100 SXM2 32GB)", 1e-12) { return 192.0 / 32; }
INDEPENDENT("ch12.h200-vs-v5p.price_ratio", "$10 / $4 per hour", 1e-12) { return 10.0 / 4; }
INDEPENDENT("ch12.h200-vs-v5p.flops_per_dollar_v5p_over_h200", "(459 TFLOPs / $4) / (989.5 TFLOPs / $10)", 1e-12) {
  return (459.0 / 4) / (989.5 / 10);
}
// The SMEM and register totals the table prints as 32MB: 132 SMs of 262,144 bytes, counted in 2^20-byte MiB.
INDEPENDENT("ch12.gpu-vs-tpu-table.h100_smem_mib", "132 · 262144 B / 1048576", 1e-12) { return 132.0 * 262144 / 1048576; }
INDEPENDENT("ch12.gpu-vs-tpu-table.h100_register_mib", "132 · 4 · 16384 · 4 B / 1048576", 1e-12) {
  return 132.0 * 4 * 16384 * 4 / 1048576;
}
// NVIDIA GB200 NVL72: 72 Blackwell GPUs and 36 Grace CPUs in 18 compute trays.
INDEPENDENT("ch12.gb200-node-egress.nvl72_gpus_per_host", "72 GPUs / 18 compute trays", 1e-12) { return 72.0 / 18; }
// One leaf's 32 node-facing NDR ports times the 8 leaves of an SU (Appendix B's 8·32·400/8 GB/s).
INDEPENDENT("ex12.11.su_leaf_expression", "8 leaves · 32 ports · 400e9 / 8 B/s", 1e-12) { return 8 * 32 * 400e9 / 8; }
INDEPENDENT("ex12.11.pod_bisection_bytes_per_s", "128 nodes · 8 NICs · 50e9, both ways over the cut", 1e-12) {
  return 64 * (8 * 50e9) * 2;
}

namespace {
// The textbook sizing of a full-bisection fat tree (a folded Clos network) of k-port switches: L levels hold
// up to 2·(k/2)^L endpoints; every level but the top has one switch per k/2 endpoints (half its ports down,
// half up), the top one per k (all ports down). Returns the switch count per level, bottom first.
std::vector<double> clos_levels(double nics, int k) {
  int levels = 1;
  double capacity = 2.0 * (k / 2);
  while (capacity < nics) {
    ++levels;
    capacity *= k / 2;
  }
  std::vector<double> out(static_cast<size_t>(levels - 1), nics / (k / 2));
  out.push_back(nics / k);
  return out;
}
}  // namespace

INDEPENDENT("ex12.12.per_node_2048_bytes_per_s", "textbook Clos sizing: 2048 NICs, 64-port switches", 1e-12) {
  const auto l = clos_levels(2048, 64);
  // Every level passes on every NIC's 50 GB/s: the narrowest level carries leaves · 32 up-ports · 50e9.
  const double up = l[0] * 32 * 50e9;
  return std::min(8 * 50e9, up / 256);
}
INDEPENDENT("ex12.12.per_node_4096_bytes_per_s", "textbook Clos sizing: 4096 NICs, 64-port switches", 1e-12) {
  const auto l = clos_levels(4096, 64);
  const double narrowest = std::min({l[0] * 32, l[1] * 32, l[2] * 64}) * 50e9;
  return std::min(8 * 50e9, narrowest / 512);
}
// §12.5's data-parallel bound, C / W_node, by hand.
INDEPENDENT("ch12.gb200-appendix.h100_dp_batch", "9.89e14 / (8 · 400e9 / 8)", 1e-12) { return 9.89e14 / 400e9; }
INDEPENDENT("ch12.gb200-appendix.nvl72_dp_batch", "2.25e15 / (72 · 400e9 / 8)", 1e-12) { return 2.25e15 / (72 * 50e9); }

TEST_CASE("independent: the textbook Clos sizing gives the book's and NVIDIA's switch counts") {
  CHECK(clos_levels(1024, 64) == std::vector<double>{32, 16});
  CHECK(clos_levels(2048, 64) == std::vector<double>{64, 32});
  CHECK(clos_levels(4096, 64) == std::vector<double>{128, 128, 64});
}
// §12.4.2's collective bandwidth at the node from the bisection counted both ways (Quiz 2): 4 GPUs on each side
// of the cut send 18 links × 25 GB/s each, in both directions; per GPU that is the total over the 8 GPUs.
INDEPENDENT("ch12.superpod-summary-table.collective_from_bisection", "2 · 4 · 18 · 25e9 B/s over 8 GPUs", 1e-12) {
  return 2.0 * 4 * 18 * 25e9 / 8;
}
// NVIDIA Quantum-2 QM9700 (the SuperPod's NDR switch): 64 ports of 400 Gb/s, 51.2 Tb/s counted both ways.
INDEPENDENT("ex12.11.leaf_switch_label", "QM9700: 51.2e12 bit/s both ways / 2 / 8", 1e-12) { return 51.2e12 / 2 / 8; }
// Q7's footnote with one convention: the datasheets' fp32 figures (both count an FMA as two FLOPs), B200 (80 TFLOPs,
// 8 TB/s, HGX B200) over H100 SXM (67 TFLOPs, 3.35 TB/s).
INDEPENDENT("ex12.7.vector_intensity_constant", "(80e12 / 8e12) / (67e12 / 3.35e12)", 1e-12) {
  return (80e12 / 8e12) / (67e12 / 3.35e12);
}
// NVIDIA Tesla V100 whitepaper: each SM has a combined 128 KB L1 data cache / shared memory (the array §12.1.1 calls SMEM).
INDEPENDENT("ch12.spec-table-memory.v100_smem_kib_per_sm", "Volta whitepaper: 128 KB combined L1/shared per SM", 1e-12) {
  return 128.0;
}
INDEPENDENT("ex12.7.h100_fp32_fma_intensity", "H100 SXM datasheet: 67 TFLOPs fp32 / 3.35 TB/s", 1e-12) {
  return 67e12 / 3.35e12;
}
