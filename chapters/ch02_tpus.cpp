// Chapter 2: how a TPU works and how TPUs are wired together (§2.1–2.5 and the chapter-2 solutions).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "exercise.hpp"
#include "scaling/base/format.hpp"
#include "scaling/hardware/chip.hpp"
#include "scaling/cost/roofline.hpp"
#include "scaling/hardware/topology.hpp"

using namespace scaling;
using workbook::rel;
using workbook::sig;
using workbook::within;

static auto& chapter = workbook::define_chapter(2, "ch02", "All about TPUs");

namespace {
// §2.1 / §2.5.2: one MXU does bf16[8,128] @ bf16[128,128] every 8 cycles; v4 and v5 have 4 MXUs per core.
constexpr double kMxuRows = 8, kMxuSide = 128, kCyclesPerMatmul = 8, kClockHz = 1.5e9, kMxusPerCore = 4;
constexpr double kVmemOverHbm = 22;  // §2.1: VMEM bandwidth is about 22× HBM's (v5e)
}  // namespace

EXERCISE("ch2.mxu-flops", "Throughput of one MXU") {
  const double flops_per_matmul = 2 * kMxuRows * kMxuSide * kMxuSide;  // a multiply and an add per term
  const double per_mxu = flops_per_matmul / kCyclesPerMatmul * kClockHz;
  ex.answer("bf16_per_mxu", per_mxu, "FLOPs/s").book(5e13, sig(1)).notes("000", 4.915e13, rel(1e-3))
      .explain("2·8·128·128 FLOPs every 8 cycles at 1.5 GHz");
  ex.answer("bf16_per_v5e", per_mxu * kMxusPerCore, "FLOPs/s").book(2e14, sig(1))
      .explain("four MXUs (§2.5.2); the §2.3 table's 1.97e14 is the same figure to 3 digits");
  const double int8_per_mxu = peak_flops_per_s(chip("tpu-v5e"), Dtype::int8) / kMxusPerCore;
  ex.answer("int8_per_v5e_mxu", int8_per_mxu, "FLOPs/s")
      .book(4e14, sig(1))
      .erratum("4e14 int8 OPs/s is the whole v5e chip (3.94e14 in the §2.3 table), shared by its four MXUs; "
               "one MXU does about 1e14.");
}

EXERCISE("ch2.v5p-pod-flops", "Peak of a v5p core, chip and pod") {
  const auto& v5p = chip("tpu-v5p");
  const auto pod = make_slice(v5p, v5p.pod_shape);
  ex.answer("per_chip", v5p.bf16_flops_per_s, "FLOPs/s").book(5e14, sig(1)).explain("§2.3 table: 4.59e14");
  ex.answer("per_core", v5p.bf16_flops_per_s / v5p.tensorcores_per_chip, "FLOPs/s")
      .book(2.5e14, sig(2))
      .erratum("§2.1 halves the rounded 5e14; the §2.3 table's 4.59e14 over two TensorCores is 2.3e14 per core.");
  ex.answer("per_pod", total_flops_per_s(pod), "FLOPs/s").book(4e18, sig(1)).explain("8960 chips");
}

EXERCISE("ch2.vmem-intensity", "Intensity needed when the MXU reads from VMEM") {
  const auto& v5e = chip("tpu-v5e");
  const double vmem_bw = kVmemOverHbm * v5e.hbm_bytes_per_s;
  ex.answer("vmem_bytes_per_s", vmem_bw, "B/s").notes("000", 1.78e13, rel(0.005)).explain("22 × 8.1e11 B/s");
  ex.answer("critical_intensity", critical_intensity(v5e.bf16_flops_per_s, vmem_bw), "FLOPs/byte")
      .book(15, within(5))
      .explain("the book gives a range, 10–20, entered as 15 ± 5");
}

EXERCISE("ch2.pcie-vs-hbm", "How much slower PCIe is than HBM on v4") {
  const auto& v4 = chip("tpu-v4p");
  ex.answer("pcie_bytes_per_s", v4.pcie_bytes_per_s, "B/s").book(16e9, rel(1e-12)).explain("§2.1, each way");
  ex.answer("hbm_over_pcie", v4.hbm_bytes_per_s / v4.pcie_bytes_per_s, "")
      .book(100, sig(1))
      .explain("1.2e12 / 1.6e10 = 75: 'close to 100' only at the book's one-digit precision");
}

EXERCISE("ch2.v5p-bandwidths", "The v5p's bandwidth hierarchy") {
  const auto& v5p = chip("tpu-v5p");
  const double chips_per_host = chips_in(v5p.host_shape);
  ex.answer("hbm_bytes_per_s", v5p.hbm_bytes_per_s, "B/s")
      .book(2.5e12, sig(2))
      .erratum("§2.2 quotes 2.5e12 B/s for the v5p's HBM, the §2.3 table 2.8e12: the book disagrees with itself; "
               "the preset keeps the table's value.");
  ex.answer("ici_bytes_per_s_per_axis", v5p.ici_oneway_bytes_per_s, "B/s").book(9e10, rel(1e-12))
      .notes("000", 9e10, rel(1e-12));
  ex.answer("ici_bytes_per_s_all_axes", 3 * v5p.ici_oneway_bytes_per_s, "B/s")
      .explain("three axes, one way each: what a chip can push out along all of them");
  ex.answer("dcn_per_chip_8_per_host", v5p.dcn_bytes_per_s_per_host / 8, "B/s").book(3.1e9, sig(2))
      .explain("the book's route: 2.5e10 B/s per host over 8 TPUs");
  ex.answer("dcn_per_chip", v5p.dcn_bytes_per_s_per_host / chips_per_host, "B/s")
      .book(3.1e9, sig(2))
      .erratum("A v5p host is 2×2×1 = 4 chips (§2.3 table), so each chip gets 2.5e10/4 = 6.25e9 B/s of DCN; the 8 "
               "in §2.2 counts TensorCores, not chips.");
}

EXERCISE("ch2.spec-table", "Per-chip specifications (§2.3)") {
  auto& t = ex.table("chips", {"chip", "pod", "host", "HBM", "HBM BW", "bf16 FLOPs/s", "int8 FLOPs/s",
                               "critical batch (bf16)"});
  for (const auto& c : chips()) {
    if (c.pod_shape.empty()) continue;
    t.row({std::string(c.display), shape_text(c.pod_shape), shape_text(c.host_shape), format_quantity(c.hbm_bytes, "B"),
           format_quantity(c.hbm_bytes_per_s, "B/s"), format_quantity(c.bf16_flops_per_s, "FLOPs/s"),
           format_quantity(c.int8_flops_per_s, "FLOPs/s"),
           format_number(critical_intensity(c.bf16_flops_per_s, c.hbm_bytes_per_s))});
  }
  // §1.1.2 says a bf16 matmul needs about 240 tokens per chip "on most TPUs"; the table says otherwise.
  ex.answer("critical_batch_v5p", critical_intensity(chip("tpu-v5p").bf16_flops_per_s, chip("tpu-v5p").hbm_bytes_per_s),
            "tokens")
      .explain("the v5p needs only 164 tokens per chip");
  ex.answer("critical_batch_v6e", critical_intensity(chip("tpu-v6e").bf16_flops_per_s, chip("tpu-v6e").hbm_bytes_per_s),
            "tokens")
      .explain("the v6e needs 575");
}

EXERCISE("ch2.ici-table", "Interconnect figures (§2.3)") {
  auto& t = ex.table("links", {"chip", "ICI one-way / link", "ICI bidirectional / link", "PCIe / chip", "DCN / host"});
  for (const auto& c : chips()) {
    if (c.pod_shape.empty()) continue;
    t.row({std::string(c.display), format_quantity(c.ici_oneway_bytes_per_s, "B/s"),
           format_quantity(c.ici_bidi_bytes_per_s, "B/s"), format_quantity(c.pcie_bytes_per_s, "B/s"),
           format_quantity(c.dcn_bytes_per_s_per_host, "B/s")});
  }
  const auto& v5e = chip("tpu-v5e");
  ex.answer("v5e_hbm_over_ici", v5e.hbm_bytes_per_s / v5e.ici_oneway_bytes_per_s, "")
      .explain("HBM bandwidth over one ICI link, one way: how much faster local memory is");
  ex.answer("v5e_ici_over_dcn_per_chip",
            v5e.ici_oneway_bytes_per_s * 4 / (v5e.dcn_bytes_per_s_per_host / chips_in(v5e.host_shape)), "")
      .explain("a v5e chip's four ICI links, one way, against its share of the host's DCN");
}

EXERCISE("ex2.1", "Streaming a 200B-parameter model from HBM") {
  const auto& v4 = chip("tpu-v4p");
  const double params = 200e9, chips_n = 32;
  const double bytes_per_chip = params * bytes_per_element(Dtype::bf16) / chips_n;
  ex.answer("bytes_per_chip", bytes_per_chip, "B").book(12.5e9, rel(1e-12));
  ex.answer("t_load", t_comms_s(bytes_per_chip, v4.hbm_bytes_per_s), "s")
      .book(10e-3, sig(1))
      .notes("000", 10.4e-3, sig(3))
      .explain("at the §2.3 table's 1.2e12 B/s; a lower bound on the time per sampling step");
  ex.answer("t_load_book_bw", t_comms_s(bytes_per_chip, 1.23e12), "s")
      .book(10e-3, sig(1))
      .explain("at the 1.23e12 B/s the solution quotes");
}

EXERCISE("ex2.2", "Totals of full v5e and v5p pods") {
  const auto& v5e = chip("tpu-v5e");
  const auto& v5p = chip("tpu-v5p");
  const auto e = make_slice(v5e, v5e.pod_shape), p = make_slice(v5p, v5p.pod_shape);
  ex.answer("v5e_hosts", hosts(e), "").book(32, rel(1e-12)).notes("000", 32, rel(1e-12));
  ex.answer("v5e_tensorcores", tensorcores(e), "").book(256, rel(1e-12));
  ex.answer("v5e_flops", total_flops_per_s(e), "FLOPs/s")
      .book(5.1e16, sig(2))
      .erratum("The solution multiplies 256 chips by a rounded 2e14 FLOPs/s; with the table's 1.97e14 the pod does "
               "5.04e16, not 5.1e16.")
      .notes("000", 5.04e16, sig(3));
  ex.answer("v5e_hbm", total_hbm_bytes(e), "B").book(4e12, sig(1)).notes("000", 4096e9, rel(1e-12));
  ex.answer("v5p_hosts", hosts(p), "").book(2240, rel(1e-12)).notes("000", 2240, rel(1e-12));
  ex.answer("v5p_tensorcores", tensorcores(p), "").book(17920, rel(1e-12));
  ex.answer("v5p_flops", total_flops_per_s(p), "FLOPs/s").book(4e18, sig(1)).notes("000", 4.11e18, sig(3));
  ex.answer("v5p_hbm", total_hbm_bytes(p), "B").book(860e12, sig(2)).notes("000", 860160e9, rel(1e-12));
}

EXERCISE("ex2.3", "A matmul streamed over PCIe from host memory") {
  // bf16 A[D, 4D] and x[B, D] both in host DRAM, one v6e at 9.2e14 FLOPs/s, PCIe at 1.5e10 B/s (as given).
  const double c = chip("tpu-v6e").bf16_flops_per_s, w_pcie = 1.5e10;
  const double chip_i = critical_intensity(c, w_pcie);
  const auto bf16 = Dtype::bf16;
  ex.answer("critical_batch_small_b", critical_batch_small_batch_limit(bf16, chip_i), "tokens")
      .book(61000, sig(2))
      .notes("000", 6.13e4, sig(3))
      .explain("B ≪ D shortcut: intensity ≈ B, so B* = 9.2e14 / 1.5e10");
  // Exactly, with F = 4D: B* = 8D / (8D/I − 10), which exists only when D > 10·I/8.
  ex.answer("min_d_for_any_batch", 10 * chip_i / 8, "")
      .explain("below this D no batch is FLOPs-bound over PCIe, because the activations alone are too many bytes");
  ex.answer("critical_batch_d1m", *critical_batch(1 << 20, 4 << 20, bf16, bf16, bf16, chip_i), "tokens")
      .explain("exact crossover for D = 2^20 (F = 4D): still well above the shortcut's 61,333");
  ex.answer("has_critical_batch_d8192", critical_batch(8192, 4 * 8192, bf16, bf16, bf16, chip_i) ? 1.0 : 0.0, "")
      .explain("1 if some batch makes D = 8192 FLOPs-bound over PCIe, else 0");
}

EXERCISE("ex2.4", "An int8 matmul on one v5e, from HBM and from VMEM") {
  // int8[B, 4096] · int8[4096, 16384] -> int8[B, 16384], 3.94e14 int8 OPs/s, 8.1e11 B/s (v5e).
  const auto& v5e = chip("tpu-v5e");
  const double c = peak_flops_per_s(v5e, Dtype::int8), w = v5e.hbm_bytes_per_s;
  const double D = 4096, F = 16384;
  const auto i8 = Dtype::int8;
  ex.answer("flops_per_token", flops(Matmul{1, D, F, i8, i8, i8}), "FLOPs").book(1.3e8, sig(2))
      .notes("000", 1.34e8, sig(3));
  ex.answer("weight_bytes", D * F * bytes_per_element(i8), "B").book(6.7e7, sig(2)).notes("000", 6.71e7, sig(3));
  ex.answer("bytes_per_token", (D + F) * bytes_per_element(i8), "B").book(2e4, sig(1)).notes("000", 20480, rel(1e-12));
  // The book's own route: its rounded coefficients 1.3e8, 6.7e7 and 2e4.
  const double book_route = (6.7e7 / w) / (1.3e8 / c - 2e4 / w);
  ex.answer("critical_batch_book_model", book_route, "tokens").book(271, within(1))
      .explain("solving 1.3e8·B/3.94e14 = (6.7e7 + 2e4·B)/8.1e11 with the rounded coefficients");
  ex.answer("critical_batch", *critical_batch(D, F, i8, i8, i8, critical_intensity(c, w)), "tokens")
      .book(271, within(1))
      .erratum("The solution rounds the 1.34e8 FLOPs per token down to 1.3e8, which moves the crossover from 263 to "
               "271; the exact counts give 263.")
      .notes("000", 263, within(1));
  ex.answer("critical_batch_vmem", *critical_batch(D, F, i8, i8, i8, critical_intensity(c, kVmemOverHbm * w)), "tokens")
      .book(11, sig(2))
      .notes("000", 11, sig(2))
      .explain("the same with 22× the bandwidth (VMEM)");
  auto& s = ex.series("runtime", "batch B (tokens)", "lower-bound runtime (s)");
  std::vector<double> x, hbm, vmem, batches;
  for (double b = 1; b <= 1024 * 1.0001; b *= std::pow(2.0, 0.125)) batches.push_back(b);
  // The two knees, exactly: the plot draws its corners on the crossovers it marks.
  for (const double w_bytes_per_s : {w, kVmemOverHbm * w})
    batches.push_back(*critical_batch(D, F, i8, i8, i8, critical_intensity(c, w_bytes_per_s)));
  std::sort(batches.begin(), batches.end());
  for (const double b : batches) {
    const Matmul m{b, D, F, i8, i8, i8};
    x.push_back(b);
    hbm.push_back(roofline(flops(m), bytes(m), c, w).t_lower_s);
    vmem.push_back(roofline(flops(m), bytes(m), c, kVmemOverHbm * w).t_lower_s);
  }
  s.line("weights in HBM", x, hbm).line("weights in VMEM", x, vmem);
}

EXERCISE("ex2.5", "Sending an array across a v5e 4x4") {
  const auto s = make_slice("tpu-v5e", "4x4");  // no axis of 16: no wraparound
  const int hops = hop_distance(s, {0, 0}, {3, 3});
  const double latency = s.chip.ici_hop_latency_s;
  const double bytes = 8.0 * 128 * 8192 * bytes_per_element(Dtype::bf16);
  const double t_bw = bytes / (2 * s.chip.ici_oneway_bytes_per_s);  // out of both of the corner's links
  ex.answer("hops", hops, "").book(6, rel(1e-12)).notes("000", 6, rel(1e-12));
  ex.answer("t_first_byte", hops * latency, "s").book(6e-6, sig(1)).notes("000", 6e-6, sig(1));
  ex.answer("bytes", bytes, "B").book(1.7e7, sig(2)).notes("000", 16777216, rel(1e-12));
  ex.answer("t_total", t_bw, "s")
      .book(188e-6, sig(3))
      .erratum("The solution rounds the 1.678e7 bytes up to 1.7e7 and prints 188 µs; the exact size gives 186 µs.")
      .notes("000", 0.186e-3, sig(3));
  ex.answer("t_total_with_latency", t_bw + hops * latency, "s").notes("000", 0.192e-3, sig(3))
      .explain("adding the 6 µs for the first byte to arrive");
}

EXERCISE("ex2.6", "Gathering a host-offloaded int8 matrix to one chip") {
  // int8[128Ki, 128Ki] spread over the host memory of a v5e 4x4 (2 hosts), brought to TPU{0,0} and
  // multiplied by bf16[8, 128Ki].
  const auto s = make_slice("tpu-v5e", "4x4");
  const auto& v5e = s.chip;
  const double n = 128.0 * 1024;
  const double array_bytes = n * n * bytes_per_element(Dtype::int8);
  const double per_host = array_bytes / hosts(s), per_chip = array_bytes / chips(s);
  ex.answer("array_bytes", array_bytes, "B").book(16e9, sig(2))
      .erratum("128Ki × 128Ki bytes is 16 GiB = 1.72e10 bytes; the solution computes with 16e9.");
  const double t_pcie = pcie_transfer_s(v5e, per_chip);  // each chip's share over its own PCIe link, in parallel
  ex.answer("t_pcie", t_pcie, "s").book(66e-3, sig(2))
      .erratum("Same GiB/GB slip: 8 GiB per host over 8 links of 1.5e10 B/s takes 71.6 ms, not 66 ms.")
      .notes("000", 71.3e-3, rel(0.005));
  // TPU{0,0} receives everything but its own shard, through its two links (no wraparound on 4x4).
  const double t_ici = (array_bytes - per_chip) / (2 * v5e.ici_oneway_bytes_per_s);
  ex.answer("t_ici", t_ici, "s").book(167e-3, sig(3))
      .erratum("Same slip: 15 GiB in over two 4.5e10 B/s links takes 179 ms, not 167 ms.")
      .notes("000", 178e-3, rel(0.01));
  const double t_hbm = t_comms_s(array_bytes, v5e.hbm_bytes_per_s);
  ex.answer("t_hbm", t_hbm, "s").book(19e-3, sig(2))
      .erratum("Same slip: 1.72e10 bytes at 8.1e11 B/s take 21 ms, not 19 ms.")
      .notes("000", 21.2e-3, rel(0.01));
  const Matmul mv{8, n, n, Dtype::bf16, Dtype::int8, Dtype::bf16};
  const double t_flops = t_math_s(flops(mv), v5e.bf16_flops_per_s);
  ex.answer("flops", flops(mv), "FLOPs").book(2.7e11, sig(2)).notes("000", 2.749e11, sig(4));
  ex.answer("t_flops", t_flops, "s").book(1.3e-3, sig(2))
      .erratum("2.7e11 / 1.97e14 is 1.37 ms, which rounds to 1.4 ms; the solution prints 1.3 ms (and the exact "
               "2.75e11 FLOPs give 1.40 ms).")
      .notes("000", 1.4e-3, sig(2));
  const double t_bound = std::max({t_pcie, t_ici, t_hbm, t_flops});
  ex.answer("t_pipelined", t_bound, "s").book(175e-3, within(25e-3))
      .explain("the slowest stage when all overlap: ICI; the book's range 150–200 ms entered as 175 ± 25 ms");
  ex.answer("t_sequential", t_pcie + t_ici + t_hbm + t_flops, "s").explain("upper bound: no overlap at all");
  ex.answer("per_host_bytes", per_host, "B").explain("each of the 2 hosts holds half");
}

EXERCISE("ch2.systolic-array", "Size of the systolic array") {
  ex.answer("alus", kMxuSide * kMxuSide, "").book(16384, rel(1e-12));
  ex.answer("v6e_gain", (2 * kMxuSide) * (2 * kMxuSide) / (kMxuSide * kMxuSide), "").book(4, rel(1e-12))
      .explain("256×256 against 128×128 multiply-adds per cycle");
}

EXERCISE("ch2.vpu-alus", "ALUs and registers of the VPU") {
  const double sublanes = 8, lanes = 128, alus_per_lane = 2, vregs = 32;
  ex.answer("alus", sublanes * lanes * alus_per_lane, "").book(2048, rel(1e-12)).explain("v4: 2 ALUs per (sublane, lane)");
  ex.answer("vreg_bytes", vregs * sublanes * lanes * bytes_per_element(Dtype::fp32), "B")
      .explain("32 VREGs of (8, 128) fp32 values: the register file");
}
