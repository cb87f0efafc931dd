// Independent checks of chapter 2: hand arithmetic from the book's raw figures (not the presets or the
// library), brute-force searches, and the simulator where a transfer is involved.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "registry.hpp"
#include "search.hpp"

INDEPENDENT("ch2.mxu-flops.int8_per_v5e_mxu", "twice the MXU's bf16 rate, 2·(2·8·128·128/8·1.5e9)", 0.01) {
  return 2 * (2.0 * 8 * 128 * 128 / 8 * 1.5e9);
}
INDEPENDENT("ch2.v5p-pod-flops.per_core", "4.59e14 / 2", 1e-12) { return 4.59e14 / 2; }
INDEPENDENT("ch2.vmem-intensity.vmem_bytes_per_s", "22 × 8.1e11", 1e-12) { return 22 * 8.1e11; }
// A second source, not the book: Google's Cloud TPU v5p documentation lists 2,765 GB/s of HBM bandwidth
// per chip. The book's table rounds it to 2.8e12; §2.2's 2.5e12 is 10% below it.
INDEPENDENT("ch2.v5p-bandwidths.hbm_bytes_per_s", "Cloud TPU v5p documentation: 2,765 GB/s", 0.02) {
  return 2765e9;
}
INDEPENDENT("ch2.v5p-bandwidths.ici_bytes_per_s_all_axes", "3 × 9e10", 1e-12) { return 3 * 9e10; }
INDEPENDENT("ch2.v5p-bandwidths.dcn_per_chip", "2.5e10 over the 2·2·1 chips of a v5p host", 1e-12) {
  return 2.5e10 / (2 * 2 * 1);
}
// A second source, not the book: vLLM's TPU backend (vllm-project/tpu-inference, tpu_inference/utils.py)
// sizes a "TPU v5e" device's HBM as 16 * GBYTES with GBYTES = 1024 * 1024 * 1024: binary gigabytes, as
// DRAM is built. It backs §2.1's "16GiB" and the §2.3 table's "16GB" read as binary gigabytes.
INDEPENDENT("ch2.spec-table.v5e_hbm_bytes", "vLLM tpu-inference get_device_hbm_limit('TPU v5e'): 16 * 1024^3 B",
            1e-12) {
  const double gbytes = 1024.0 * 1024.0 * 1024.0;
  return 16 * gbytes;
}
INDEPENDENT("ch2.spec-table.critical_batch_v5p", "4.59e14 / 2.8e12", 1e-12) { return 4.59e14 / 2.8e12; }
INDEPENDENT("ch2.spec-table.critical_batch_v6e", "9.2e14 / 1.6e12", 1e-12) { return 9.2e14 / 1.6e12; }
INDEPENDENT("ch2.ici-table.v5e_hbm_over_ici", "8.1e11 / 4.5e10", 1e-12) { return 8.1e11 / 4.5e10; }
INDEPENDENT("ch2.ici-table.v5e_ici_over_dcn_per_chip", "4·4.5e10 / (2.5e10 / 8)", 1e-12) {
  return 4 * 4.5e10 / (2.5e10 / 8);
}
INDEPENDENT("ex2.2.v5e_flops", "256 × 1.97e14", 1e-12) { return 256 * 1.97e14; }
INDEPENDENT("ex2.3.min_d_for_any_batch", "bisection on D for the existence of a crossover", 1e-6) {
  // The smallest D (F = 4D) for which some batch below 1e12 is FLOPs-bound over PCIe.
  return testing::bisect(1, 1e7, [](double D) { return testing::matmul_crossover(D, 4 * D, 2, 2, 2, 9.2e14, 1.5e10, 1e12) == 0; });
}
INDEPENDENT("ex2.3.critical_batch_d1m", "bisection on T_math − T_comms", 1e-9) {
  return testing::matmul_crossover(1 << 20, 4 << 20, 2, 2, 2, 9.2e14, 1.5e10, 1e12);
}
INDEPENDENT("ex2.3.has_critical_batch_d8192", "search up to B = 1e12", 0) {
  return testing::matmul_crossover(8192, 4 * 8192, 2, 2, 2, 9.2e14, 1.5e10, 1e12) > 0 ? 1 : 0;
}
INDEPENDENT("ex2.4.critical_batch", "bisection with the exact counts 2·4096·16384·B and 4096·16384 + 20480·B", 1e-9) {
  return testing::matmul_crossover(4096, 16384, 1, 1, 1, 3.94e14, 8.1e11, 1e9);
}
INDEPENDENT("ex2.5.t_total", "half of 2·8·128·8192 bytes out of each of the corner's two links at 4.5e10 B/s", 1e-12) {
  const double bytes = 8.0 * 128 * 8192 * 2;
  return (bytes / 2) / 4.5e10;
}
INDEPENDENT("ex2.5.t_total_with_latency", "2^24 / 9e10 + 6 hops × 1 µs", 1e-12) {
  return std::pow(2.0, 24) / 9e10 + 6e-6;
}
INDEPENDENT("ex2.6.array_bytes", "2^17 · 2^17", 1e-12) { return std::pow(2.0, 34); }
INDEPENDENT("ex2.6.t_pcie", "2^34 / 16 chips / 1.5e10", 1e-12) { return std::pow(2.0, 34) / 16 / 1.5e10; }
INDEPENDENT("ex2.6.t_ici", "(2^34 − 2^30) / (2 × 4.5e10)", 1e-12) { return (std::pow(2.0, 34) - std::pow(2.0, 30)) / 9e10; }
INDEPENDENT("ex2.6.t_hbm", "2^34 / 8.1e11", 1e-12) { return std::pow(2.0, 34) / 8.1e11; }
INDEPENDENT("ex2.6.t_flops", "2·8·2^34 / 1.97e14", 1e-12) { return 2 * 8 * std::pow(2.0, 34) / 1.97e14; }
INDEPENDENT("ex2.6.t_sequential", "sum of the four stage times by hand", 1e-12) {
  const double a = std::pow(2.0, 34);
  return a / 16 / 1.5e10 + (a - a / 16) / 9e10 + a / 8.1e11 + 16 * a / 1.97e14;
}
INDEPENDENT("ex2.6.per_host_bytes", "2^34 / 2 hosts", 1e-12) { return std::pow(2.0, 33); }
INDEPENDENT("ch2.vpu-alus.vreg_bytes", "32 · 8 · 128 · 4 bytes", 1e-12) { return 32.0 * 8 * 128 * 4; }


// Library facts the chapters lean on, checked against sources outside the library (kills mutants the
// chapter answers cannot see: a preset's host shape, an error message, a formatter's special case).
#include <stdexcept>
#include <string>

#include "scaling/base/format.hpp"
#include "scaling/hardware/chip.hpp"
#include "scaling/hardware/topology.hpp"
#include "scaling/notation/einsum.hpp"
#include "scaling/sim/stored_rows.hpp"

TEST_CASE("§2.3 table: every TPU host shape holds the chips the book lists") {
  // The book's table: v4p and v5p hosts are 2×2×1 = 4 chips, v5e and v6e hosts 4×2 = 8.
  CHECK(scaling::chips_in(scaling::chip("tpu-v4p").host_shape) == 4);
  CHECK(scaling::chips_in(scaling::chip("tpu-v5p").host_shape) == 4);
  CHECK(scaling::chips_in(scaling::chip("tpu-v5e").host_shape) == 8);
  CHECK(scaling::chips_in(scaling::chip("tpu-v6e").host_shape) == 8);
}

TEST_CASE("format_number writes whole numbers as themselves") {
  CHECK(scaling::format_number(0) == "0");
  CHECK(scaling::format_number(1) == "1");
  CHECK(scaling::format_number(-1) == "-1");
}

TEST_CASE("einsum: a letter without a size is named in the error") {
  try {
    scaling::einsum_flops("IJ,JK->IK", scaling::parse_letter_sizes("I=2,J=3"));
    FAIL("no error for the missing K");
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()).find("no size for letter K") != std::string::npos);
  }
}

TEST_CASE("stored rows accept exactly fp32, bf16 and int8") {
  CHECK_NOTHROW(scaling::sim::require_storable(scaling::Dtype::fp32));
  CHECK_NOTHROW(scaling::sim::require_storable(scaling::Dtype::bf16));
  CHECK_NOTHROW(scaling::sim::require_storable(scaling::Dtype::int8));
  CHECK_THROWS_AS(scaling::sim::require_storable(scaling::Dtype::fp8), std::invalid_argument);
  CHECK_THROWS_AS(scaling::sim::require_storable(scaling::Dtype::int4), std::invalid_argument);
}

// Google's TPU v5p page (cloud.google.com/tpu/docs/v5p-training, "Peak compute per chip (bf16)": 459 TFLOPs),
// not the preset: a multiply-add is a multiply and an add, 2 FLOPs.
INDEPENDENT("ch2.mxu-flops.multiply_adds_per_s", "Google Cloud TPU v5p page: 459 TFLOPs bf16 per chip, over 2", 1e-12) {
  const double peak_tflops = 459;
  return peak_tflops * 1e12 / 2;
}

// §2.3 table, v5e: 4.5e10 B/s one way per link; both directions of one link.
INDEPENDENT("ex2.6.ici_bidi_per_link", "2 × 4.5e10", 1e-12) { return 2 * 4.5e10; }
// §2.3 table: a v5p host is 2×2×1 chips; its 2.5e10 B/s of DCN shared by those four.
INDEPENDENT("ch2.v5p-bandwidths.dcn_per_chip_formula", "2.5e10 / (2·2·1)", 1e-12) { return 2.5e10 / 4; }
// §2.3: PCIe about 1.5e10 B/s per chip; footnote 10: the v6e's 32 GB/s. Their ratio from the printed figures.
INDEPENDENT("ch2.ici-table.v6e_pcie_4x_v5", "32e9 / 1.5e10 from the two printed figures", 1e-12) { return 32e9 / 1.5e10; }
INDEPENDENT("ch2.ici-table.v6e_over_v5_pcie", "32 GB/s over 15 GB/s, in GB/s", 1e-12) { return 32.0 / 15.0; }
