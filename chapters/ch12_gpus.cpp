// Chapter 12: how a GPU works and how GPUs are networked (§12.1–12.3 and the appendices, the hardware half
// of "How to Think About GPUs"); the collectives and parallelism rooflines are parts in chapters/ch12/.
//
// Section numbers follow the headings of the chapter's page (gpus.md): §12.1 What Is a GPU? (§12.1.1
// Memory, §12.1.2 Summary of GPU specs, §12.1.3 GPUs vs. TPUs, §12.1.4 Quiz 1), §12.2 Networking (§12.2.1
// At the node level, §12.2.2 Quiz 2), §12.3 Beyond the node level (§12.3.1 Quiz 3), §12.4 collectives
// (§12.4.2 cross-node), §12.5 rooflines, §12.7 Appendix A (GB200), §12.8 Appendix B (networking details).
#include <string>
#include <vector>

#include "exercise.hpp"
#include "scaling/base/format.hpp"
#include "scaling/cost/collectives.hpp"
#include "scaling/cost/roofline.hpp"
#include "scaling/hardware/chip.hpp"
#include "scaling/hardware/fat_tree.hpp"
#include "scaling/hardware/system.hpp"

using namespace scaling;
using workbook::exact;
using workbook::rel;
using workbook::sig;

static auto& chapter = workbook::define_chapter(12, "ch12", "How to Think About GPUs");

namespace {
constexpr double kKiB = 1024.0, kMiB = 1024.0 * 1024.0;
// §12.1: the book's clock for the H100 Tensor Core arithmetic, and its B200 clock. 1.76 GHz is the H100
// PCIe's boost clock (1755 MHz: TechPowerUp's H100 PCIe entry), not that of the SXM part whose 132 SMs the
// sentence counts: the SXM runs its low-precision Tensor Core work at 1.83 GHz and reaches 1.98 GHz on
// fp32/fp64 (Glenn K. Lockwood's H100 notes, glennklockwood.com/garden/processors/h100), and
// 989.4e12 / (528 × 1024) = 1.830 GHz. NVIDIA publishes no B200 clock; TechPowerUp's B200 entry lists a
// 1.86 GHz tensor clock, the book's figure.
constexpr double kBookH100TcClockHz = 1.76e9;
constexpr double kBookB200ClockHz = 1.86e9;
// NVIDIA Volta whitepaper: each V100 Tensor Core does 64 fp16 FMAs per clock (128 FLOPs).
constexpr double kV100FmasPerTensorCoreCycle = 64;
// NVIDIA V100 datasheet (SXM2 32 GB): 32 GB HBM2 at 900 GB/s. V100 is no preset (no bf16 peak).
constexpr double kV100HbmBytes = 32e9, kV100HbmBytesPerS = 900e9;
// §12.1.1: the L2 bandwidth the book quotes, measured by Chips and Cheese on an H100 (not a vendor figure).
constexpr double kMeasuredH100L2BytesPerS = 5.5e12;
// §2 (Appendix C) and ch2.vpu-alus: a TPU VPU is (8, 128) lanes with 4 ALU slots; 32 vector registers of
// 8×128 32-bit words per TensorCore. VMEM: 128 MiB on v5e (§2.1), the figure §12.1.3's table gives v5p.
constexpr double kVpuSublanes = 8, kVpuLanes = 128, kVpuAluSlots = 4, kVregsPerCore = 32;
constexpr double kTpuVmemBytes = 128 * kMiB;
// §12.1.3: Google Cloud on-demand prices the book quotes (about $10/hour H200, $4/hour v5p), as stated.
constexpr double kH200DollarsPerHour = 10, kV5pDollarsPerHour = 4;
// NVIDIA GB200 NVL72: 18 compute trays, each with two GB200 superchips (1 Grace + 2 B200 each).
constexpr double kNvl72ComputeTrays = 18, kSuperchipsPerTray = 2, kB200PerGb200 = 2;

const GpuAnatomy& h100a() { return chip("h100").anatomy; }
}  // namespace

// ---------------------------------------------------------------------------------------------------
// §12.1 What Is a GPU?

EXERCISE("ch12.tc-flops-per-cycle", "Tensor Core FLOPs per cycle") {
  ex.section("§12.1");
  const auto& h100 = chip("h100");
  const auto& a = h100.anatomy;
  ex.answer("h100_flops_per_sm", h100.bf16_flops_per_s / a.sms, "FLOPs/s").book(7.5e12, sig(2))
      .explain("9.89e14 bf16 FLOPs/s over 132 SMs");
  ex.answer("h100_flops_per_tc_cycle", flops_per_tensor_core_cycle(h100.bf16_flops_per_s, a, kBookH100TcClockHz),
            "FLOPs/cycle")
      .book(1024, rel(0.05).because("'~1024', an 8x8x8 matmul: the book's 1.76 GHz is the H100 PCIe's boost "
                                    "clock; at the SXM's 1.83 GHz tensor clock the same arithmetic gives 1024"))
      .explain("the book's stated 1.76 GHz (the PCIe card's 1755 MHz boost) gives 1065; the SXM part runs its "
               "bf16 Tensor Core work at 1.83 GHz, and 9.89e14 / (528 × 1.83e9) = 1024, the figure the book names");
  ex.answer("matmul_8x8x8_flops", 2.0 * 8 * 8 * 8, "FLOPs").book(1024, exact())
      .explain("2·M·N·K for M = N = K = 8: the H100 Tensor Core's work per cycle");
  const auto& a100 = chip("a100");
  ex.answer("a100_flops_per_tc_cycle", flops_per_tensor_core_cycle(a100.bf16_flops_per_s, a100.anatomy,
                                                                    a100.anatomy.boost_clock_hz), "FLOPs/cycle")
      .book(512, sig(3)).explain("3.12e14 / (108 SMs × 4 Tensor Cores × 1.41 GHz)");
  const auto& v100 = v100_anatomy();
  ex.answer("v100_flops_per_subpartition_cycle",
            2 * kV100FmasPerTensorCoreCycle * v100.tensor_cores_per_sm / v100.subpartitions_per_sm, "FLOPs/cycle")
      .book(256, exact())
      .explain("a V100 SM has 8 Tensor Cores of 64 FMAs per clock, two per subpartition: 256 FLOPs per "
               "subpartition, the unit the book calls one Tensor Core");
  const auto& b200 = chip("b200");
  ex.answer("b200_flops_per_tc_cycle", flops_per_tensor_core_cycle(b200.bf16_flops_per_s, b200.anatomy,
                                                                    kBookB200ClockHz), "FLOPs/cycle")
      .book(2048, rel(0.01).because("'about 2048': the book names the power of two its 2250e12 / (148·4·1.86e9) "
                                    "is close to"))
      .explain("2.25e15 / (148 × 4 × 1.86e9) at the book's assumed clock");
}

EXERCISE("ch12.cuda-core-flops", "CUDA-core vs Tensor Core FLOPs on H100") {
  ex.section("§12.1");
  const auto& h100 = chip("h100");
  const double cuda = cuda_core_flops_per_s(h100.anatomy, h100.anatomy.boost_clock_hz, 2);
  ex.answer("cuda_core_flops_per_s", cuda, "FLOPs/s").book(66e12, sig(2))
      .explain("16,896 fp32 lanes × 1.98 GHz × 2 FLOPs per FMA = 66.9e12 (NVIDIA: 67 TFLOPs); the book's 66 is it "
               "truncated");
  ex.answer("tc_bf16_flops_per_s", h100.bf16_flops_per_s, "FLOPs/s").book(990e12, sig(2));
  ex.answer("tc_over_cuda", h100.bf16_flops_per_s / cuda, "").explain("how much of the chip's arithmetic is matmul");
}

// §12.1.1 Memory

EXERCISE("ch12.register-file", "Register file size and resident warps") {
  ex.section("§12.1.1");
  const auto& a = h100a();
  constexpr double kWordsPerSubpartition = 16384, kBytesPerWord = 4, kThreadsPerWarp = 32;
  // Shown in KiB, as §12.1.1 counts it ("4 * 16384 * 4 = 256kiB"); its "256kB" elsewhere (and NVIDIA's "256 KB")
  // is the same 262,144 bytes, so a decimal "262 kB" would read as a different number.
  ex.answer("register_bytes_per_sm", a.register_bytes_per_sm, "B").binary_prefixes().book(256 * kKiB, exact())
      .explain("4 subpartitions × 16,384 words × 4 bytes = 256 KiB (262,144 bytes), the book's '256kiB'; its "
               "'256kB' and NVIDIA's '256 KB' per SM are the same bytes in binary units");
  ex.answer("register_words_per_subpartition", a.register_bytes_per_sm / a.subpartitions_per_sm / kBytesPerWord, "words")
      .book(kWordsPerSubpartition, exact());
  constexpr double kRegistersPerThread = 256;
  ex.answer("warps_at_256_registers", a.register_bytes_per_sm / (kBytesPerWord * kThreadsPerWarp * kRegistersPerThread),
            "warps")
      .book(8, exact()).explain("256 KiB / (4 bytes × 32 threads × 256 registers)");
  ex.answer("max_resident_warps", a.max_resident_warps_per_sm, "warps").book(64, exact());
}

EXERCISE("ch12.l2-vs-hbm", "L2 bandwidth and size vs HBM and TPU VMEM") {
  ex.section("§12.1.1");
  const auto& h100 = chip("h100");
  const double ratio = kMeasuredH100L2BytesPerS / h100.hbm_bytes_per_s;
  ex.answer("l2_over_hbm", ratio, "").book(1.6, sig(2)).explain("5.5 TB/s measured over 3.35e12 B/s");
  ex.answer("l2_both_ways_over_hbm", 2 * ratio, "").book(3, sig(1))
      .explain("5.5 TB/s each way, 11 TB/s counting both, over HBM's 3.35e12 (which is shared by reads and writes)");
  ex.answer("l2_half_mib", h100.anatomy.l2_bytes / 2 / kMiB, "MiB").book(25, exact())
      .explain("the 50 MB L2 in two halves, each serving half the SMs");
  ex.claim("vmem_twice_l2", "§12.1.1: a TPU's VMEM is twice the H100's L2 or more (128 MiB over 50 MiB)",
           kTpuVmemBytes / h100.anatomy.l2_bytes, "")
      .at_least(2);
}

EXERCISE("ch12.hbm-bandwidth", "HBM capacity and bandwidth quoted in the Memory section") {
  ex.section("§12.1.1");
  const auto& b200 = chip("b200");
  ex.answer("v100_hbm_bytes", kV100HbmBytes, "B").book(32e9, exact());
  ex.answer("b200_hbm_bytes", b200.hbm_bytes, "B").book(192e9, exact());
  ex.answer("hbm_growth", b200.hbm_bytes / kV100HbmBytes, "").explain("192 GB over 32 GB, Volta to Blackwell");
  ex.answer("h100_hbm_bytes_per_s", chip("h100").hbm_bytes_per_s, "B/s").book(3.35e12, sig(3));
  ex.answer("b200_hbm_bytes_per_s", b200.hbm_bytes_per_s, "B/s")
      .book(9e12, sig(1))
      .erratum(workbook::Finding{"b200-hbm-9tb", workbook::Severity::slip,
                                 "B200 HBM bandwidth 9 TB/s in §12.1.1, 8.0e12 in the §12.1.2 table and Quiz 1",
                                 "§12.1.1 quotes 'about 9TB/s' for the B200; the chapter's own spec table gives 8.0e12 "
                                 "B/s and Quiz 1 Questions 3 and 4 compute with 8e12. The book disagrees with itself "
                                 "by 12%, and NVIDIA's B200 figure (8 TB/s, HGX and DGX B200) sides with the table. "
                                 "Where the 9 comes from is unknown: nothing the chapter states gives it, and it "
                                 "contradicts the chapter's own table. No conclusion rests on it."})
      .book_inputs_give(8e12, "the §12.1.2 table's 8.0e12 B/s, the figure Quiz 1 Questions 3 and 4 compute with; "
                              "the 9 follows from nothing the chapter states");
}

// §12.1.2 Summary of GPU specs

namespace {
struct SpecRow {
  const char* key;  // "v100"
  const char* display;
  const GpuAnatomy* anatomy;
  double hbm_bytes, hbm_bytes_per_s, bf16, fp8, fp4;
  // the book's printed cells (0 = "?" or "—")
  double base_ghz, boost_ghz, sms, smem_kb, l2_mb, hbm_gb;
  double p_hbm_bw, p_bf16, p_fp8, p_fp4;
};

std::vector<SpecRow> spec_rows() {
  std::vector<SpecRow> rows;
  rows.push_back({"v100", "V100", &v100_anatomy(), kV100HbmBytes, kV100HbmBytesPerS, 0, 0, 0,
                  1.25, 1.38, 80, 96, 6, 32, 9.0e11, 0, 0, 0});
  for (const char* name : {"a100", "h100", "h200", "b200"}) {
    const auto& c = chip(name);
    SpecRow r{name, c.display.c_str(), &c.anatomy, c.hbm_bytes, c.hbm_bytes_per_s, c.bf16_flops_per_s,
              c.fp8_flops_per_s > 0 ? c.fp8_flops_per_s : c.int8_flops_per_s, c.fp4_flops_per_s,
              0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    rows.push_back(r);
  }
  // The book's cells, as printed in §12.1.2's two tables.
  const double printed[4][10] = {
      {1.10, 1.41, 108, 192, 40, 80, 2.0e12, 3.1e14, 6.2e14, 0},
      {1.59, 1.98, 132, 256, 50, 80, 3.4e12, 9.9e14, 2.0e15, 0},
      {1.59, 1.98, 132, 256, 50, 141, 4.8e12, 9.9e14, 2.0e15, 0},
      {0, 0, 148, 256, 126, 192, 8.0e12, 2.3e15, 4.5e15, 9.0e15},
  };
  for (int i = 0; i < 4; ++i) {
    auto& r = rows[i + 1];
    const double* p = printed[i];
    r.base_ghz = p[0], r.boost_ghz = p[1], r.sms = p[2], r.smem_kb = p[3], r.l2_mb = p[4], r.hbm_gb = p[5];
    r.p_hbm_bw = p[6], r.p_bf16 = p[7], r.p_fp8 = p[8], r.p_fp4 = p[9];
  }
  return rows;
}

std::string cell(double v, const char* unit) { return v > 0 ? format_quantity(v, unit) : std::string("-"); }
}  // namespace

// NVIDIA Volta whitepaper: of the V100 SM's 128 KB L1 data cache / shared memory, up to 96 KB can be shared memory.
constexpr double kV100SharedMemoryMaxKiB = 96;
static const workbook::Finding kV100Smem{
    "v100-smem-shared-max", workbook::Severity::slip,
    "The spec table's V100 SMEM (96kB) is the shared-memory maximum; the other rows give the whole L1/SMEM array",
    "§12.1.1 defines SMEM as the SM's whole on-chip L1 array, usable as shared memory or as cache (256kB on an "
    "H100), and the table's A100, H100 and B200 cells are that array (192, 256, 256 kB). The V100's array is "
    "128 KB (Volta whitepaper); the 96kB printed is how much of it can be shared memory, a different quantity "
    "(the A100's and H100's would be 164 and 228 KB). The figure is a real V100 figure in the wrong column; "
    "no conclusion of the chapter uses it."};

EXERCISE("ch12.spec-table-memory", "GPU memory and clock spec table") {
  ex.section("§12.1.2");
  auto& t = ex.table("memory", {"GPU", "base / boost clock", "SMs", "SMEM / SM", "registers / SM", "TMEM / SM",
                                "L2", "HBM"});
  for (const auto& r : spec_rows()) {
    const auto& a = *r.anatomy;
    const std::string k = r.key;
    t.row({r.display,
           a.boost_clock_hz > 0 ? format_number(a.base_clock_hz / 1e9) + " / " + format_number(a.boost_clock_hz / 1e9) + " GHz"
                                : "-",
           format_number(a.sms), format_quantity(a.smem_bytes_per_sm / kKiB, "KiB"),
           format_quantity(a.register_bytes_per_sm / kKiB, "KiB"),
           a.tmem_bytes_per_sm > 0 ? format_quantity(a.tmem_bytes_per_sm / kKiB, "KiB") : "-",
           format_quantity(a.l2_bytes / kMiB, "MiB"), format_quantity(r.hbm_bytes, "B")});
    if (r.boost_ghz > 0) {
      ex.answer(k + "_base_clock_ghz", a.base_clock_hz / 1e9, "GHz").book(r.base_ghz, sig(3));
      ex.answer(k + "_boost_clock_ghz", a.boost_clock_hz / 1e9, "GHz").book(r.boost_ghz, sig(3));
    }
    ex.answer(k + "_sms", a.sms, "SMs").book(r.sms, exact());
    // The B200's SMEM and L2 are the book's own figures in our preset (no vendor figure found): comparing
    // them with the book would compare the book with itself, so the table shows them and nothing is checked.
    if (k == "v100") {
      ex.answer(k + "_smem_kib_per_sm", a.smem_bytes_per_sm / kKiB, "KiB").book(r.smem_kb, exact())
          .erratum(kV100Smem)
          .reproduced_by(kV100SharedMemoryMaxKiB, "the V100's shared-memory maximum, 96 of its 128 KB L1/shared "
                                                  "array (Volta whitepaper)");
      ex.answer(k + "_l2_mib", a.l2_bytes / kMiB, "MiB").book(r.l2_mb, exact());
    } else if (k != "b200") {
      ex.answer(k + "_smem_kib_per_sm", a.smem_bytes_per_sm / kKiB, "KiB").book(r.smem_kb, exact());
      ex.answer(k + "_l2_mib", a.l2_bytes / kMiB, "MiB").book(r.l2_mb, exact());
    }
    ex.answer(k + "_register_kib_per_sm", a.register_bytes_per_sm / kKiB, "KiB").book(256, exact());
    ex.answer(k + "_hbm_bytes", r.hbm_bytes, "B").book(r.hbm_gb * 1e9, exact());
  }
  ex.answer("b200_tmem_kib_per_sm", chip("b200").anatomy.tmem_bytes_per_sm / kKiB, "KiB").book(256, exact())
      .explain("PTX's Tensor Memory: 128 lanes × 512 columns of 4-byte cells per SM");
}

EXERCISE("ch12.spec-table-flops", "GPU FLOPs and bandwidth spec table") {
  ex.section("§12.1.2");
  auto& t = ex.table("flops", {"GPU", "HBM BW", "bf16/fp16 FLOPs/s", "fp8/int8 FLOPs/s", "fp4 FLOPs/s",
                               "critical intensity (bf16)"});
  for (const auto& r : spec_rows()) {
    const std::string k = r.key;
    t.row({r.display, cell(r.hbm_bytes_per_s, "B/s"), cell(r.bf16, "FLOPs/s"), cell(r.fp8, "FLOPs/s"),
           cell(r.fp4, "FLOPs/s"), r.bf16 > 0 ? format_number(critical_intensity(r.bf16, r.hbm_bytes_per_s)) : "-"});
    ex.answer(k + "_hbm_bytes_per_s", r.hbm_bytes_per_s, "B/s").book(r.p_hbm_bw, sig(2));
    if (r.p_bf16 > 0) ex.answer(k + "_bf16_flops_per_s", r.bf16, "FLOPs/s").book(r.p_bf16, sig(2));
    if (r.p_fp8 > 0) ex.answer(k + "_fp8_int8_flops_per_s", r.fp8, "FLOPs/s").book(r.p_fp8, sig(2));
    if (r.p_fp4 > 0) ex.answer(k + "_fp4_flops_per_s", r.fp4, "FLOPs/s").book(r.p_fp4, sig(2));
  }
  const auto& h100 = chip("h100");
  const auto& b200 = chip("b200");
  // "Exactly 2x": the tolerance is what the two figures' own digits allow, half a unit in the last place of
  // 1.979e15 (0.025%) plus of 9.89e14 (0.051%), not the "2"'s one digit.
  const double fp8_digits = 0.0005 / 1.979 + 0.005 / 9.89;
  ex.answer("h100_fp8_over_bf16", h100.fp8_flops_per_s / h100.bf16_flops_per_s, "")
      .book(2, rel(fp8_digits).because("'exactly 2x' (Quiz 1 Question 3): 1.979e15 over 9.89e14, each known to "
                                       "its last digit; NVIDIA's 1,978.9 over 989.4 is 2.0001"))
      .explain("1,979 over 989 TFLOPs/s (the preset keeps §1.1's 9.89e14): the book's 'exactly 2x'");
  ex.answer("b200_fp8_over_bf16", b200.fp8_flops_per_s / b200.bf16_flops_per_s, "").book(2, exact());
  ex.answer("b200_fp4_over_fp8", b200.fp4_flops_per_s / b200.fp8_flops_per_s, "").book(2, exact());
  // The text computes with more digits than the table prints: the same figures, each within the table's.
  ex.answer("h100_bf16_in_text", h100.bf16_flops_per_s, "FLOPs/s").book(990e12, sig(2));
  ex.answer("b200_bf16_in_text", b200.bf16_flops_per_s, "FLOPs/s").book(2250e12, sig(3));
  ex.answer("b200_hbm_in_text", b200.hbm_bytes_per_s, "B/s").book(8e12, sig(1));
}

// §12.1.3 GPUs vs. TPUs at the chip level

static const workbook::Finding kSmem32MB{
    "h100-smem-32mb", workbook::Severity::slip, "H100 SMEM and registers '32MB' in the §12.1.3 table",
    "The table gives the H100 32MB of SMEM and 32MB of registers. Its own inputs, 132 SMs × 256 kB (the §12.1.2 "
    "table), give 33,792 kB = 33 MiB (34.6e6 bytes), and Quiz 1 Question 5 says 'about 33MB' from the same product. "
    "The 32 is neither the product rounded nor truncated; the comparison the table makes (tens of MB on the GPU "
    "against 128MB of VMEM and 256kB of vector registers) stands."};

EXERCISE("ch12.gpu-vs-tpu-table", "GPU vs TPU v5p component counts") {
  ex.section("§12.1.3");
  const auto& a = h100a();
  const auto& v5p = chip("tpu-v5p");
  const double cores = v5p.tensorcores_per_chip;
  ex.answer("h100_sms", a.sms, "SMs").book(132, exact());
  ex.answer("h100_warp_schedulers", double(a.sms) * a.subpartitions_per_sm, "").book(528, exact());
  ex.answer("h100_smem_mib", smem_bytes(a) / kMiB, "MiB")
      .book(32, sig(2))
      .erratum(kSmem32MB)
      .book_inputs_give(132 * 256 * kKiB / kMiB, "132 SMs × 256 kB, the §12.1.2 table's own figures: 33 MiB");
  ex.answer("h100_register_mib", register_bytes(a) / kMiB, "MiB")
      .book(32, sig(2))
      .erratum(kSmem32MB)
      .book_inputs_give(132 * 256 * kKiB / kMiB, "132 SMs × 256 kB of registers (§12.1.2): 33 MiB");
  ex.answer("h100_tensor_cores", tensor_cores(a), "").book(528, exact());
  ex.answer("v5p_tensorcores", cores, "").book(2, exact());
  ex.answer("v5p_vpu_slots", cores * kVpuAluSlots, "").book(8, exact());
  ex.answer("v5p_vmem_mib", kTpuVmemBytes / kMiB, "MiB").book(128, exact());
  ex.answer("v5p_vreg_kib", cores * kVregsPerCore * kVpuSublanes * kVpuLanes * 4 / kKiB, "KiB").book(256, exact())
      .explain("2 TensorCores × 32 registers × 8 × 128 lanes × 4 bytes");
  ex.answer("v5p_mxus", cores * 4, "").book(8, exact()).explain("4 MXUs per TensorCore (§2)");
  ex.answer("tpu_vpu_alus", kVpuAluSlots * kVpuSublanes * kVpuLanes, "ALUs").book(4096, exact());
  ex.answer("h100_alus", cuda_cores(a), "ALUs").book(16e3, sig(2))
      .explain("528 SIMD units × 32 lanes = 16,896: the book's '16k' truncated");
}

EXERCISE("ch12.h200-vs-v5p", "H200 vs TPU v5p per chip") {
  ex.section("§12.1.3");
  const auto& h200 = chip("h200");
  const auto& v5p = chip("tpu-v5p");
  ex.answer("flops_ratio", h200.bf16_flops_per_s / v5p.bf16_flops_per_s, "").book(2, sig(1))
      .explain("989.5e12 over 4.59e14: 'close to 2x'");
  ex.answer("hbm_ratio", h200.hbm_bytes / v5p.hbm_bytes, "").book(1.5, sig(2)).explain("141 GB over 96 GB");
  ex.answer("price_ratio", kH200DollarsPerHour / kV5pDollarsPerHour, "").explain("the book's $10/hour over $4/hour");
  ex.answer("flops_per_dollar_v5p_over_h200",
            (v5p.bf16_flops_per_s / kV5pDollarsPerHour) / (h200.bf16_flops_per_s / kH200DollarsPerHour), "")
      .explain("at those prices a v5p buys more peak FLOPs per dollar than an H200");
}

// §12.1.4 Quiz 1

EXERCISE("ex12.1", "CUDA core counts (H100, B200, TPU v5p)") {
  ex.section("§12.1.4");
  const double h100 = cuda_cores(chip("h100").anatomy);
  const double b200 = cuda_cores(chip("b200").anatomy);
  const double v5p = chip("tpu-v5p").tensorcores_per_chip * kVpuAluSlots * kVpuSublanes * kVpuLanes;
  ex.answer("h100_cuda_cores", h100, "cores").book(16896, exact());
  ex.answer("b200_cuda_cores", b200, "cores").book(18944, exact());
  ex.answer("v5p_alus", v5p, "ALUs").book(8192, exact());
  ex.answer("v5p_over_h100", v5p / h100, "").book(0.5, sig(1)).explain("8192 / 16896 = 0.48: 'roughly half'");
}

EXERCISE("ex12.2", "H100 vector fp32 FLOPs/s") {
  ex.section("§12.1.4");
  const auto& h100 = chip("h100");
  const auto& a = h100.anatomy;
  const double base = cuda_core_flops_per_s(a, a.base_clock_hz, 1);
  const double boost = cuda_core_flops_per_s(a, a.boost_clock_hz, 1);
  ex.answer("fp32_flops_per_s", base, "FLOPs/s").book(26.9e12, sig(3)).explain("132 × 4 × 32 × 1.59e9");
  ex.answer("fp32_flops_per_s_boost", boost, "FLOPs/s").book(33.5e12, sig(3)).explain("at 1.98 GHz");
  ex.answer("spec_over_one_op", a.fp32_vector_flops_per_s / boost, "").book(2, sig(1))
      .explain("NVIDIA's 67 TFLOPs counts an FMA as two FLOPs per lane per cycle");
  ex.answer("tensor_over_vector", h100.bf16_flops_per_s / boost, "").book(30, sig(1))
      .explain("9.89e14 over 33.5e12: 'around 30x'");
}

EXERCISE("ex12.3", "Peak matmul intensity (H100, B200, fp8)") {
  ex.section("§12.1.4");
  const auto& h100 = chip("h100");
  const auto& b200 = chip("b200");
  const double h = critical_intensity(h100.bf16_flops_per_s, h100.hbm_bytes_per_s);
  const double b = critical_intensity(b200.bf16_flops_per_s, b200.hbm_bytes_per_s);
  ex.answer("h100_intensity", h, "FLOPs/byte").book(295, sig(3)).explain("9.89e14 / 3.35e12");
  ex.answer("b200_intensity", b, "FLOPs/byte").book(281, sig(3)).explain("2.25e15 / 8e12");
  ex.answer("h100_fp8_intensity", critical_intensity(h100.fp8_flops_per_s, h100.hbm_bytes_per_s), "FLOPs/byte")
      .book(590, sig(2)).explain("1.979e15 / 3.35e12 = 590.7");
  ex.answer("b200_fp8_intensity", critical_intensity(b200.fp8_flops_per_s, b200.hbm_bytes_per_s), "FLOPs/byte")
      .book(562, sig(3)).explain("4.5e15 / 8e12 = 562.5");
  const auto& v5e = chip("tpu-v5e");
  ex.answer("tpu_v5e_intensity", critical_intensity(v5e.bf16_flops_per_s, v5e.hbm_bytes_per_s), "FLOPs/byte")
      .book(240, sig(2));
  ex.claim("batch_about_280", "§12.1.4 Q3: a matmul needs a batch of around 280 to be compute-bound (B200's ratio)",
           b, "tokens")
      .about(280, sig(2));
}

EXERCISE("ex12.4", "B200 matmul runtimes") {
  ex.section("§12.1.4");
  const auto& b200 = chip("b200");
  // fp16 operands: 2 bytes each, as bf16.
  const Matmul small{64, 4096, 8192};
  const Matmul large{512, 4096, 8192};
  const auto rs = roofline(flops(small), bytes(small), b200.bf16_flops_per_s, b200.hbm_bytes_per_s);
  const auto rl = roofline(flops(large), bytes(large), b200.bf16_flops_per_s, b200.hbm_bytes_per_s);
  ex.answer("small_bytes", bytes(small), "B").book(69e6, sig(2)).explain("2BD + 2DF + 2BF at B = 64");
  ex.answer("small_time_s", rs.t_lower_s, "s").book(8.6e-6, sig(2)).explain("memory-bound: bytes / 8e12 B/s");
  ex.answer("small_compute_bound", rs.compute_bound ? 1 : 0, "").book(0, exact());
  ex.answer("large_time_s", rl.t_lower_s, "s").book(15e-6, sig(2))
      .explain("compute-bound: 2·512·4096·8192 / 2.25e15 = 15.3 µs (the book's 2.3e15 gives 14.9)");
  ex.answer("large_compute_bound", rl.compute_bound ? 1 : 0, "").book(1, exact());
}

EXERCISE("ex12.5", "Total SMEM and register capacity") {
  ex.section("§12.1.4");
  const auto& a = h100a();
  const double smem = smem_bytes(a) / kMiB, regs = register_bytes(a) / kMiB;
  ex.answer("smem_mib", smem, "MiB").book(33, sig(2)).explain("132 × 256 KiB");
  ex.answer("register_mib", regs, "MiB").book(33, sig(2));
  ex.answer("together_mib", smem + regs, "MiB").book(66, sig(2));
  ex.answer("over_tpu_vmem", (smem + regs) / 120, "").book(0.5, sig(1))
      .explain("66 MiB over the 120 MB of VMEM the question quotes: 0.55, 'about half' (truncated)");
  ex.answer("tpu_register_kib", chip("tpu-v5p").tensorcores_per_chip * kVregsPerCore * kVpuSublanes * kVpuLanes * 4 /
                                    kKiB, "KiB")
      .book(256, exact());
}

EXERCISE("ex12.6", "B200 clock from vector FLOPs") {
  ex.section("§12.1.4");
  const auto& a = chip("b200").anatomy;
  ex.answer("cuda_cores", cuda_cores(a), "cores").book(18944, exact());
  ex.answer("flops_per_cycle", 2 * cuda_cores(a), "FLOPs/cycle").book(37888, exact());
  ex.answer("clock_hz", a.fp32_vector_flops_per_s / (2 * cuda_cores(a)), "Hz").book(2.1e9, sig(2))
      .explain("80e12 fp32 FLOPs/s (NVIDIA, HGX B200) over 37,888 FLOPs per cycle");
}

static const workbook::Finding kVectorIntensityConstant{
    "vector-intensity-mixed-fma", workbook::Severity::slip,
    "Q7's footnote: the vector intensity 'stays constant' (33.5 / 3.5 on H100, 80 / 8 on B200) mixes FLOP conventions",
    "A footnote to Quiz 1 Question 7 says the fp32 vector intensity stays constant across generations: 33.5 / 3.5 for "
    "the H100 and 80 / 8 for the B200, both about 10. The 33.5 TFLOPs is Question 2's count, one op per lane per "
    "cycle ('ignoring FMA'); the 80 TFLOPs is NVIDIA's B200 figure, which counts an FMA as two (Question 6 "
    "derives its 2.1 GHz clock from it that way). Under one convention the ratio halves: 33.5 / 3.35 = 10 against "
    "40 / 8 = 5 one op per lane, or 67 / 3.35 = 20 against 80 / 8 = 10 with FMAs counted twice. The printed pair "
    "reproduces when the H100 is counted one way and the B200 the other (and 3.35 TB/s is written 3.5). Nothing "
    "else in the chapter rests on the footnote."};

EXERCISE("ex12.7", "H100 fp32 vector add roofline") {
  ex.section("§12.1.4");
  const auto& h100 = chip("h100");
  const double vector = cuda_core_flops_per_s(h100.anatomy, h100.anatomy.boost_clock_hz, 1);
  const double bw = h100.hbm_bytes_per_s;
  auto add = [&](double n) { return roofline(n, 3 * 4 * n, vector, bw); };  // read a, b; write c: 4 bytes each
  ex.answer("intensity", intensity(1, 12), "FLOPs/byte").book(1.0 / 12, exact());
  ex.answer("hardware_intensity", critical_intensity(vector, bw), "FLOPs/byte").book(10, sig(2))
      .explain("33.5e12 FLOPs/s (one op per lane) over 3.35e12 B/s");
  // The footnote's "constant across generations", with both chips counted the same way (an FMA as two FLOPs,
  // NVIDIA's convention for both datasheet figures).
  const auto& b200 = chip("b200");
  const double h100_fma_intensity = critical_intensity(h100.anatomy.fp32_vector_flops_per_s, bw);
  const double b200_fma_intensity = critical_intensity(b200.anatomy.fp32_vector_flops_per_s, b200.hbm_bytes_per_s);
  ex.answer("h100_fp32_fma_intensity", h100_fma_intensity, "FLOPs/byte")
      .explain("NVIDIA's 67e12 fp32 FLOPs/s (an FMA counted as two) over 3.35e12 B/s");
  ex.answer("b200_fp32_fma_intensity", b200_fma_intensity, "FLOPs/byte").book(10, exact())
      .explain("the footnote's 80 / 8: NVIDIA's 80e12 fp32 FLOPs/s (an FMA counted as two) over 8e12 B/s");
  ex.claim("vector_intensity_constant",
           "§12.1.4 Q7 footnote: the fp32 vector intensity stays constant from H100 to B200 (B200's over H100's, "
           "both with an FMA counted as two FLOPs)",
           b200_fma_intensity / h100_fma_intensity, "")
      .about(1, rel(0.1).because("'stays constant': the book's own pair, 33.5 / 3.5 = 9.6 and 80 / 8 = 10, "
                                 "differs by 4%, so about as loose a constancy as it claims"))
      .erratum(kVectorIntensityConstant)
      .explain("67e12 / 3.35e12 = 20 FLOPs/byte on an H100 against 80e12 / 8e12 = 10 on a B200: the intensity halves");
  ex.answer("elements_per_s", bw / 12, "elements/s").book(2.8e11, sig(2)).explain("T = 12N / 3.35e12 = N / 2.8e11");
  ex.answer("t_65536_s", add(65536).t_lower_s, "s").book(0.23e-6, sig(2))
      .measured(1.5e-6, "§12.1.4 Q7, JAX on an H100", "a kernel launch and its latency, not bandwidth, at 768 kB");
  ex.answer("t_2_30_s", add(1 << 30).t_lower_s, "s").book(3.84e-3, sig(3))
      .measured(4.1e-3, "§12.1.4 Q7, JAX on an H100", "HBM rarely sustains its full 3.35e12 B/s");
  const double lanes_per_sm = h100.anatomy.fp32_cores_per_sm;
  const double sms_used = 1024 / lanes_per_sm;
  ex.answer("sms_at_1024", sms_used, "SMs").book(8, exact()).explain("1024 elements over 128 lanes per SM");
  ex.answer("slowdown_at_1024", h100.anatomy.sms / sms_used, "").book(16, sig(2))
      .explain("132 SMs over the 8 in use: 16.5 if compute-bound, the book's 'roughly 16x' truncated");
}

// ---------------------------------------------------------------------------------------------------
// §12.2 Networking, §12.2.1 At the node level

EXERCISE("ch12.nvlink-bandwidth", "H100 NVLink and NVSwitch bandwidth") {
  ex.section("§12.2.1");
  const auto& h100 = chip("h100");
  const auto& n = h100.node;
  ex.answer("gpu_nvlink_bytes_per_s", n.links_per_gpu * n.link_bytes_per_s, "B/s").book(450e9, exact())
      .explain("18 links × 25 GB/s each way");
  ex.answer("link_both_ways_bytes_per_s", 2 * n.link_bytes_per_s, "B/s").book(50e9, exact());
  const std::vector<int> pattern{5, 4, 4, 5};  // §12.2.1: a GPU's links to the 4 NVSwitches
  double links = 0;
  for (int l : pattern) links += l;
  ex.answer("links_in_pattern", links, "links").book(18, exact());
  ex.answer("node_switch_bytes_per_s", node_switch_bytes_per_s(h100), "B/s").book(6.4e12, exact())
      .explain("4 switches × 64 ports × 25 GB/s");
  ex.answer("b200_link_bytes_per_s", chip("b200").node.link_bytes_per_s, "B/s").book(50e9, exact());
}

EXERCISE("ch12.nvlink-table", "NVLink generations table") {
  ex.section("§12.2.1");
  auto& t = ex.table("generations", {"NVLink", "NVSwitch", "GPU", "per link (each way)", "links / GPU",
                                     "GPU to GPU", "node size", "NVSwitches / node"});
  struct Gen {
    const char* chip;
    const char* gen;
    double gpu_bw, size, switches;  // printed
  };
  for (const Gen g : {Gen{"a100", "ampere", 300e9, 8, 6}, Gen{"h100", "hopper", 450e9, 8, 4},
                      Gen{"b200", "blackwell", 900e9, 8, 2}}) {
    const auto& c = chip(g.chip);
    const auto& n = c.node;
    t.row({format_number(n.nvlink_generation), format_number(n.nvswitch_generation), c.display,
           format_quantity(n.link_bytes_per_s, "B/s"), format_number(n.links_per_gpu),
           format_quantity(c.nvlink_bytes_per_s, "B/s"), format_number(c.gpus_per_node),
           format_number(n.switches_per_node)});
    const std::string k = g.gen;
    ex.answer(k + "_gpu_bytes_per_s", n.links_per_gpu * n.link_bytes_per_s, "B/s").book(g.gpu_bw, exact());
    ex.answer(k + "_preset_matches_links", c.nvlink_bytes_per_s, "B/s").book(g.gpu_bw, exact())
        .explain("the preset's per-GPU NVLink figure, which the collectives use");
    ex.answer(k + "_node_size", c.gpus_per_node, "GPUs").book(g.size, exact());
    ex.answer(k + "_switches", n.switches_per_node, "NVSwitches").book(g.switches, exact());
  }
  // NVL72: 72 GPUs' links spread over 72-port NVLink 5 switches.
  const auto& b = chip("b200").node;
  const double nvl72_switches = 72.0 * b.links_per_gpu / b.ports_per_switch;
  t.row({"5", "4", "GB200 NVL72", format_quantity(b.link_bytes_per_s, "B/s"), format_number(b.links_per_gpu),
         format_quantity(chip("b200").nvlink_bytes_per_s, "B/s"), "72", format_number(nvl72_switches)});
  ex.answer("nvl72_switches", nvl72_switches, "NVSwitches").book(18, exact())
      .explain("72 GPUs × 18 links over 72 ports per NVLink 5 switch");
  ex.answer("b200_node_switches_from_ports", 8.0 * b.links_per_gpu / b.ports_per_switch, "NVSwitches")
      .book(2, exact()).explain("8 GPUs × 18 links over 72 ports");
}

// §12.2.2 Quiz 2

EXERCISE("ex12.8", "Total bandwidth of an 8xH100 node") {
  ex.section("§12.2.2");
  const auto& h100 = chip("h100");
  ex.answer("per_switch_bytes_per_s", h100.node.ports_per_switch * h100.node.port_bytes_per_s, "B/s")
      .book(1.6e12, exact());
  ex.answer("switch_level_bytes_per_s", node_switch_bytes_per_s(h100), "B/s").book(6.4e12, exact());
  ex.answer("gpu_level_bytes_per_s", node_gpu_bytes_per_s(h100), "B/s").book(3.6e12, exact());
  ex.answer("peak_bytes_per_s", std::min(node_switch_bytes_per_s(h100), node_gpu_bytes_per_s(h100)), "B/s")
      .book(3.6e12, exact()).explain("the GPUs' links, not the switches, limit the node");
}

EXERCISE("ex12.9", "Bisection bandwidth of an 8xH100 node") {
  ex.section("§12.2.2");
  ex.answer("bisection_bytes_per_s", node_bisection_bytes_per_s(chip("h100")), "B/s").book(3.6e12, exact())
      .explain("4 GPUs × 450 GB/s each way across the cut, both directions counted");
}

EXERCISE("ex12.10", "AllGather of bf16[4096, 65536] on 8xH100") {
  ex.section("§12.2.2");
  const auto node = gpu_cluster(chip("h100"), 1);
  const double bytes = 2.0 * 4096 * 65536;
  ex.answer("array_bytes", bytes, "B").book(536e6, sig(3));
  ex.answer("t_allgather_s", gpu_collective_cost(Collective::all_gather, node, bytes).time_s, "s")
      .book(1.04e-3, sig(3)).measured(1.5e-3, "§12.2.2 Q3, NCCL on an 8xH100 node", "latency and protocol overhead")
      .explain("ring over the switch: B · 7 / (8 · 450e9)");
  ex.answer("t_b_over_w_s", bytes / node.fast[0].bytes_per_s, "s").book(1.19e-3, sig(3))
      .explain("the book's B / W approximation, dropping (N − 1) / N");
}

// ---------------------------------------------------------------------------------------------------
// §12.3 Beyond the node level

EXERCISE("ch12.superpod-topology", "1024-GPU DGX H100 SuperPod switch counts") {
  ex.section("§12.3");
  const auto pod = dgx_superpod(chip("h100"), 4);
  ex.answer("gpus", gpus(pod), "GPUs").book(1024, exact());
  ex.answer("nodes", nodes(pod), "nodes").book(128, exact());
  ex.answer("gpus_per_su", double(pod.nodes_per_su) * pod.gpu.gpus_per_node, "GPUs").book(256, exact());
  ex.answer("nvswitches", nvswitches(pod), "switches").book(512, exact());
  ex.answer("leaf_switches", pod.levels[0].switches, "switches").book(32, exact());
  ex.answer("leaf_per_su", pod.levels[0].switches / pod.sus, "switches").book(8, exact());
  ex.answer("spine_switches", pod.levels[1].switches, "switches").book(16, exact());
  ex.answer("all_switches", all_switches(pod), "switches").book(560, exact());
  const auto& n = pod.gpu.node;
  ex.answer("ib_over_nvswitch", (pod.radix * pod.port_bytes_per_s) / (n.ports_per_switch * n.port_bytes_per_s), "")
      .book(2, exact()).explain("64 ports × 50 GB/s against 64 × 25 GB/s");
  ex.answer("ndr_port_bytes_per_s", pod.port_bytes_per_s, "B/s").book(50e9, exact()).explain("400 Gb/s / 8");
}

EXERCISE("ch12.fat-tree-table", "H100 SuperPod fat-tree bandwidth table") {
  ex.section("§12.3");
  const auto pod = dgx_superpod(chip("h100"), 4);
  const auto& h100 = pod.gpu;
  const double su_gpus = double(pod.nodes_per_su) * h100.gpus_per_node;
  auto& t = ex.table("levels", {"level", "GPUs", "switches per unit", "switch", "bandwidth per unit",
                                "per GPU", "per node (fat tree)"});
  const double node_bw = node_gpu_bytes_per_s(h100);
  const double leaf_bw = down_cable_bytes_per_s(pod, 0) / pod.sus;  // one SU's NICs into its leaves
  const double spine_bw = down_cable_bytes_per_s(pod, 1);
  t.row({"node", format_number(h100.gpus_per_node), format_number(h100.node.switches_per_node), "NVLink",
         format_quantity(node_bw, "B/s"), format_quantity(h100.nvlink_bytes_per_s, "B/s"),
         format_quantity(h100.nvlink_bytes_per_s, "B/s")});
  t.row({"leaf", format_number(su_gpus), format_number(pod.levels[0].switches / pod.sus), "InfiniBand",
         format_quantity(leaf_bw, "B/s"), format_quantity(leaf_bw / su_gpus, "B/s"),
         format_quantity(per_node_bytes_per_s(pod, 0), "B/s")});
  t.row({"spine", format_number(gpus(pod)), format_number(pod.levels[1].switches), "InfiniBand",
         format_quantity(spine_bw, "B/s"), format_quantity(spine_bw / gpus(pod), "B/s"),
         format_quantity(per_node_bytes_per_s(pod, 1), "B/s")});
  ex.answer("node_bytes_per_s", node_bw, "B/s").book(3.6e12, exact());
  ex.answer("node_per_gpu_bytes_per_s", h100.nvlink_bytes_per_s, "B/s").book(450e9, exact());
  ex.answer("leaf_bytes_per_s", leaf_bw, "B/s").book(12.8e12, exact());
  ex.answer("leaf_per_gpu_bytes_per_s", leaf_bw / su_gpus, "B/s").book(50e9, exact());
  ex.answer("leaf_per_node_bytes_per_s", per_node_bytes_per_s(pod, 0), "B/s").book(400e9, exact());
  ex.answer("spine_bytes_per_s", spine_bw, "B/s").book(51.2e12, exact());
  ex.answer("spine_per_gpu_bytes_per_s", spine_bw / gpus(pod), "B/s").book(50e9, exact());
  ex.answer("spine_per_node_bytes_per_s", per_node_bytes_per_s(pod, 1), "B/s").book(400e9, exact());
}

EXERCISE("ch12.tpu-v5p-egress", "TPU v5p ICI egress for comparison") {
  ex.section("§12.3");
  const auto& v5p = chip("tpu-v5p");
  const double links = 2.0 * v5p.pod_shape.size();  // a 3D torus: two directions per axis
  ex.answer("per_link_bytes_per_s", v5p.ici_oneway_bytes_per_s, "B/s").book(90e9, exact());
  ex.answer("links", links, "links").book(6, exact());
  ex.answer("egress_bytes_per_s", links * v5p.ici_oneway_bytes_per_s, "B/s").book(540e9, exact());
  ex.answer("pod_chips", chips_in(v5p.pod_shape), "chips").book(8960, exact());
}

static const workbook::Finding kNvl72Host{
    "nvl72-8-gpus-per-host", workbook::Severity::slip, "GB200 NVL72 said to have 8 GPUs per host",
    "A §12.2 footnote says an NVL72 rack still has only 8 GPUs attached to each host. An NVL72 is 18 compute trays, "
    "each a host with two GB200 superchips, and a GB200 is one Grace CPU with two B200s (as Appendix A itself says): "
    "4 GPUs per host, 2 per CPU. The 8 is the 8-GPU DGX/HGX node carried over. The footnote's point, that the NVLink "
    "domain is larger than a host, holds either way."};

EXERCISE("ch12.gb200-node-egress", "GB200 NVL72 node egress and node types") {
  ex.section("§12.3");
  const auto& h100 = chip("h100");
  const auto& b200 = chip("b200");
  const double nvl72 = node_egress_bytes_per_s(b200, 72);
  ex.answer("nvl72_egress_bytes_per_s", nvl72, "B/s").book(3.6e12, exact())
      .explain("72 GPUs, one 400 Gb/s NIC each (the book: 4 rails × 18 × 400 Gb/s)");
  ex.answer("over_h100_node", nvl72 / node_egress_bytes_per_s(h100), "").book(9, exact());
  ex.answer("gpus_over_h100_node", 72.0 / h100.gpus_per_node, "").book(9, exact());
  auto& t = ex.table("node-types", {"node", "GPUs per node", "GPU egress", "node egress"});
  struct Row {
    const char* key;
    const Chip* c;
    int gpus;
    double p_gpu, p_node;
  };
  for (const Row r : {Row{"h100", &h100, 8, 450e9, 400e9}, Row{"b200", &b200, 8, 900e9, 400e9},
                      Row{"gb200_nvl72", &b200, 72, 900e9, 3600e9}}) {
    const double node = node_egress_bytes_per_s(*r.c, r.gpus);
    t.row({r.gpus == 72 ? "GB200 NVL72" : r.c->display, format_number(r.gpus),
           format_quantity(r.c->nvlink_bytes_per_s, "B/s"), format_quantity(node, "B/s")});
    const std::string k = r.key;
    ex.answer(k + "_gpu_egress_bytes_per_s", r.c->nvlink_bytes_per_s, "B/s").book(r.p_gpu, exact());
    ex.answer(k + "_node_egress_bytes_per_s", node, "B/s").book(r.p_node, exact());
  }
  ex.answer("nvl72_gpus_per_host", kSuperchipsPerTray * kB200PerGb200, "GPUs")
      .book(8, exact())
      .erratum(kNvl72Host)
      .reproduced_by(b200.gpus_per_node, "the GPUs of an 8-GPU HGX/DGX B200 node, taken for an NVL72 host");
}

// §12.3.1 Quiz 3

static const workbook::Finding kLeafExpression{
    "leaf-expression-one-switch", workbook::Severity::slip,
    "Quiz 3 Q1 writes one leaf's ports for the whole SU: '32 * 400 / 8 = 12.8TB/s'",
    "The answer counts 32 node-facing ports of 400 Gb/s per leaf switch and writes 32 · 400 / 8 = 12.8 TB/s for "
    "the SU; the expression is 1.6 TB/s, one leaf's. The SU has 8 leaves, 8 · 32 · 400 / 8 = 12.8 TB/s, as "
    "Appendix B writes it. The printed result and the 400 GB/s per node are right; only the expression drops the "
    "8 leaves."};

static const workbook::Finding kGbpsLabel{
    "leaf-links-gbps-label", workbook::Severity::unit, "Quiz 3 Q1 labels a leaf switch's links '400 GBps'",
    "The answer gives each leaf switch 3.2TB/s as '(64 400 GBps links)'. Read as written, 64 × 400 GB/s is "
    "25.6 TB/s; the 3.2 TB/s it prints is 64 × 400 Gb/s / 8, the NDR rate the same answer gives the node's "
    "cables ('400Gbps NDR IB'). The number is right for gigabits per second; only the unit is bytes."};

EXERCISE("ex12.11", "Fat-tree bisection of the 1024-GPU pod") {
  ex.section("§12.3.1");
  const auto pod = dgx_superpod(chip("h100"), 4);
  const auto& leaf = pod.levels[0];
  const double leaves_per_su = leaf.switches / pod.sus;
  ex.answer("node_uplink_bytes_per_s", node_egress_bytes_per_s(pod), "B/s").book(400e9, exact())
      .explain("8 NICs × 400 Gb/s / 8 bits");
  ex.answer("leaf_switch_bytes_per_s", pod.radix * pod.port_bytes_per_s, "B/s").book(3.2e12, exact());
  ex.answer("leaf_down_ports", leaf.down_ports, "ports").book(32, exact());
  const double su_in = leaves_per_su * leaf.down_ports * pod.port_bytes_per_s;
  ex.answer("su_leaf_bytes_per_s", su_in, "B/s").book(12.8e12, exact());
  {
    using workbook::Inputs;
    using workbook::in;
    ex.formula("su_leaf_expression", "32 · 400 / 8 (GB/s): ports × Gb/s / bits per byte, for the SU",
               [](const Inputs& v) { return in(v, "ports") * in(v, "gbps") / 8 * 1e9; },
               [](const Inputs& v) { return in(v, "leaves") * in(v, "ports") * in(v, "gbps") / 8 * 1e9; })
        .units("B/s", {{"gbps", "Gb/s"}})
        .at({{"ports", 32}, {"gbps", 400}, {"leaves", 8}})
        .at({{"ports", 16}, {"gbps", 200}, {"leaves", 4}})
        .erratum(kLeafExpression);
    ex.formula("leaf_switch_label", "3.2TB/s per leaf switch, '(64 400 GBps links)'",
               [](const Inputs& v) { return in(v, "ports") * in(v, "rate") * 1e9; },
               [](const Inputs& v) { return in(v, "ports") * in(v, "rate") * 1e9 / 8; })
        .exact_text("ports × rate in Gb/s / 8 bits per byte")
        .units("B/s")
        .at({{"ports", 64}, {"rate", 400}})
        .at({{"ports", 36}, {"rate", 200}})
        .erratum(kGbpsLabel);
  }
  ex.answer("su_per_node_bytes_per_s", su_in / pod.nodes_per_su, "B/s").book(400e9, exact());
  ex.answer("su_spine_cables", leaves_per_su * pod.levels[1].switches * pod.cables_per_leaf_spine, "cables")
      .book(8 * 16 * 2, exact());
  const double su_up = up_cable_bytes_per_s(pod, 0) / pod.sus;
  ex.answer("su_spine_bytes_per_s", su_up, "B/s").book(12.8e12, exact());
  ex.answer("su_spine_per_node_bytes_per_s", su_up / pod.nodes_per_su, "B/s").book(400e9, exact());
  ex.answer("spine_bytes_per_s", switch_bytes_per_s(pod, 1), "B/s").book(51.2e12, exact());
  ex.answer("spine_per_node_bytes_per_s", switch_bytes_per_s(pod, 1) / nodes(pod), "B/s").book(400e9, exact());
  ex.answer("bisection_per_node_bytes_per_s", fat_tree_bytes_per_node(pod), "B/s").book(400e9, exact())
      .explain("the smallest level's per-node share: every level carries 400 GB/s per node");
  ex.answer("pod_bisection_bytes_per_s", bisection_bytes_per_s(pod), "B/s")
      .explain("64 nodes each way across the cut at 400 GB/s, both directions counted");
}

EXERCISE("ex12.12", "Scaling the SuperPod to 2048 and 4096 GPUs") {
  ex.section("§12.3.1");
  const auto& h100 = chip("h100");
  const auto p2048 = dgx_superpod(h100, 8);
  const auto p4096 = dgx_superpod(h100, 16);
  ex.answer("sus_2048", p2048.sus, "SUs").book(8, exact());
  ex.answer("spines_2048", p2048.levels[1].switches, "switches").book(32, exact());
  ex.answer("cables_per_pair_2048", p2048.cables_per_leaf_spine, "cables").book(1, exact());
  ex.answer("leaf_ports_used_2048", ports_used(p2048, 0), "ports").book(64, exact())
      .explain("32 down and 32 up: every port of the 64 in use");
  ex.answer("levels_4096", double(p4096.levels.size()), "levels").book(3, exact());
  ex.answer("spines_4096", p4096.levels[1].switches, "switches").book(128, exact());
  ex.answer("core_4096", p4096.levels[2].switches, "switches").book(64, exact());
  ex.answer("per_node_4096_bytes_per_s", fat_tree_bytes_per_node(p4096), "B/s")
      .explain("still 400 GB/s per node: the three-level tree keeps full bisection");
  ex.answer("per_node_2048_bytes_per_s", fat_tree_bytes_per_node(p2048), "B/s");
  // The InfiniBand switches each size needs: a step where the tree gains its third level.
  std::vector<double> xs, ib;
  for (int sus = 1; sus <= 16; ++sus) {
    const auto p = dgx_superpod(h100, sus);
    xs.push_back(gpus(p));
    ib.push_back(ib_switches(p));
  }
  ex.series("switches", "GPUs in the SuperPod", "InfiniBand switches (leaf + spine + core)")
      .line("full-bisection fat tree of 64-port switches", xs, ib, workbook::Mode::both);
  auto& t = ex.table("sizes", {"GPUs", "SUs", "leaf", "spine", "core", "cables per leaf-spine pair", "per node"});
  for (const int sus : {1, 2, 4, 8, 16}) {
    const auto p = dgx_superpod(h100, sus);
    t.row({format_number(gpus(p)), format_number(sus), format_number(p.levels[0].switches),
           format_number(p.levels[1].switches), p.levels.size() > 2 ? format_number(p.levels[2].switches) : "-",
           p.cables_per_leaf_spine > 0 ? format_number(p.cables_per_leaf_spine) : "-",
           format_quantity(fat_tree_bytes_per_node(p), "B/s")});
  }
}

// ---------------------------------------------------------------------------------------------------
// §12.4.2 Cross-node collectives: the SuperPod summary

static const workbook::Finding kBisectionTwoOverN{
    "collective-bisection-one-way", workbook::Severity::slip,
    "§12.4.2's 'collective bandwidth = bisection × 2 / N' needs a one-way bisection; the chapter counts both ways",
    "Below the SuperPod summary table the chapter says the collective bandwidth is also the bisection bandwidth "
    "× 2 / N. Its own bisection counts both directions (Quiz 2 Question 2: 3.6 TB/s for an 8xH100 node; "
    "Quiz 3 Question 1: 51.2 TB/s for the pod), and with those the rule gives 3.6e12 × 2 / 8 = 900 GB/s and "
    "51.2e12 × 2 / 128 = 800 GB/s, twice the table's 450 and 400. The × 2 / N is the rule for a bisection "
    "counted one way: N/2 members each send W across the cut, so a one-way bisection is N·W/2 and W = "
    "bisection × 2 / N (1.8e12 × 2 / 8 = 450 GB/s). Counted both ways it is bisection / N. The table's values "
    "are right; only the rule's factor of 2 does not match the chapter's definition."};

EXERCISE("ch12.superpod-summary-table", "DGX H100 SuperPod summary table") {
  ex.section("§12.4.2");
  const auto pod = dgx_superpod(chip("h100"), 4);
  const auto& h100 = pod.gpu;
  const double su_gpus = double(pod.nodes_per_su) * h100.gpus_per_node;
  auto& t = ex.table("summary", {"level", "GPUs", "degree", "switch bandwidth", "cable bandwidth",
                                 "collective bandwidth"});
  struct Level {
    const char* key;
    double gpus, degree, switch_bw, cable_bw, collective;
    double p_switch, p_cable, p_collective, p_degree;
  };
  const std::vector<Level> levels{
      {"node", double(h100.gpus_per_node), double(h100.gpus_per_node), node_switch_bytes_per_s(h100),
       node_gpu_bytes_per_s(h100), h100.nvlink_bytes_per_s, 6.4e12, 3.6e12, 450e9, 8},
      {"leaf", su_gpus, double(pod.nodes_per_su), switch_bytes_per_s(pod, 0) / pod.sus,
       down_cable_bytes_per_s(pod, 0) / pod.sus, per_node_bytes_per_s(pod, 0), 25.6e12, 12.8e12, 400e9, 32},
      {"spine", gpus(pod), double(pod.sus), switch_bytes_per_s(pod, 1), down_cable_bytes_per_s(pod, 1),
       per_node_bytes_per_s(pod, 1), 51.2e12, 51.2e12, 400e9, 4},
  };
  for (const auto& l : levels) {
    t.row({l.key, format_number(l.gpus), format_number(l.degree), format_quantity(l.switch_bw, "B/s"),
           format_quantity(l.cable_bw, "B/s"), format_quantity(l.collective, "B/s")});
    const std::string k = l.key;
    ex.answer(k + "_degree", l.degree, "children").book(l.p_degree, exact());
    ex.answer(k + "_switch_bytes_per_s", l.switch_bw, "B/s").book(l.p_switch, exact());
    ex.answer(k + "_cable_bytes_per_s", l.cable_bw, "B/s").book(l.p_cable, exact());
    ex.answer(k + "_collective_bytes_per_s", l.collective, "B/s").book(l.p_collective, exact());
  }
  // "Collective bandwidth is also bisection × 2 / N". The chapter counts a bisection both ways (Quiz 2
  // Question 2's 3.6 TB/s, ex12.9; the pod's 51.2 TB/s, ex12.11): under that count the rule is bisection / N.
  {
    using workbook::Inputs;
    using workbook::in;
    ex.formula("collective_from_bisection",
               "collective bandwidth = bisection bandwidth × 2 / N (N = GPUs in the node, nodes in the pod)",
               [](const Inputs& v) { return in(v, "bisection") * 2 / in(v, "N"); },
               [](const Inputs& v) { return in(v, "bisection") / in(v, "N"); })
        .exact_text("bisection (both directions) / N: each of the N members sends its share across the cut, "
                    "and each direction carries half of them")
        .units("B/s", {{"bisection", "B/s"}})
        .at({{"bisection", node_bisection_bytes_per_s(h100)}, {"N", double(h100.gpus_per_node)}})
        .at({{"bisection", bisection_bytes_per_s(pod)}, {"N", nodes(pod)}})
        .erratum(kBisectionTwoOverN);
  }
}

// ---------------------------------------------------------------------------------------------------
// §12.7 Appendix A: GB200; §12.8 Appendix B: more networking details

EXERCISE("ch12.gb200-appendix", "Appendix A: GB200 NVL72 changes") {
  ex.section("§12.7");
  const auto& h100 = chip("h100");
  const auto& b200 = chip("b200");
  ex.answer("nvlink5_bytes_per_s", b200.nvlink_bytes_per_s, "B/s").book(900e9, exact());
  ex.answer("nvlink5_over_nvlink4", b200.nvlink_bytes_per_s / h100.nvlink_bytes_per_s, "").book(2, exact());
  const double nvl72 = node_egress_bytes_per_s(b200, 72), h100_node = node_egress_bytes_per_s(h100);
  ex.answer("nvl72_egress_bytes_per_s", nvl72, "B/s").book(3.6e12, exact());
  ex.answer("h100_egress_bytes_per_s", h100_node, "B/s").book(400e9, exact());
  ex.answer("flops_ratio", b200.bf16_flops_per_s / h100.bf16_flops_per_s, "").book(2, sig(1))
      .explain("2.25e15 over 9.89e14 = 2.3: the FLOPs 'also double'");
  // §12.5's data-parallel bound: per-GPU batch above C / W_node (FLOPs/s per GPU over node egress).
  const double h100_batch = h100.bf16_flops_per_s / h100_node, nvl72_batch = b200.bf16_flops_per_s / nvl72;
  ex.answer("h100_dp_batch", h100_batch, "tokens").explain("9.89e14 / 400e9");
  ex.answer("nvl72_dp_batch", nvl72_batch, "tokens").explain("2.25e15 / 3.6e12");
  ex.answer("roofline_improvement", h100_batch / nvl72_batch, "").book(4, sig(1))
      .explain("9× the egress against 2.3× the FLOPs: 3.96, 'about 4x'");
  auto& t = ex.table("superchips", {"system", "GPUs", "Grace CPUs"});
  t.row({"GH200", "1 H200", "1"});
  t.row({"GB200", format_number(kB200PerGb200) + " B200", "1"});
  ex.answer("nvl72_gpus", kNvl72ComputeTrays * kSuperchipsPerTray * kB200PerGb200, "GPUs").book(72, exact())
      .explain("18 compute trays × 2 GB200 superchips × 2 B200");
}

EXERCISE("ch12.appendix-b-switching", "Appendix B: link vs switch limits per level") {
  ex.section("§12.8");
  const auto pod = dgx_superpod(chip("h100"), 4);
  const auto& h100 = pod.gpu;
  const double leaves_per_su = pod.levels[0].switches / pod.sus;
  ex.answer("node_switch_bytes_per_s", node_switch_bytes_per_s(h100), "B/s").book(6.4e12, exact());
  ex.answer("node_gpu_bytes_per_s", node_gpu_bytes_per_s(h100), "B/s").book(3.6e12, exact());
  const double su_links = leaves_per_su * pod.nodes_per_su * pod.port_bytes_per_s;
  const double su_switch = leaves_per_su * pod.levels[0].down_ports * pod.port_bytes_per_s;
  ex.answer("su_link_bytes_per_s", su_links, "B/s").book(12.8e12, exact()).explain("8 × 32 × 400 Gb/s / 8");
  ex.answer("su_switch_bytes_per_s", su_switch, "B/s").book(12.8e12, exact())
      .explain("8 leaves × their 32 node-facing ports (1.6 TB/s each)");
  ex.answer("leaf_half_bytes_per_s", pod.levels[0].down_ports * pod.port_bytes_per_s, "B/s").book(1.6e12, exact());
  ex.answer("spine_link_bytes_per_s", up_cable_bytes_per_s(pod, 0), "B/s").book(51.2e12, exact())
      .explain("32 leaves × 16 spines × 2 cables × 400 Gb/s / 8");
  ex.answer("spine_per_switch_bytes_per_s", pod.radix * pod.port_bytes_per_s, "B/s").book(3.2e12, exact());
  ex.answer("spine_switch_bytes_per_s", switch_bytes_per_s(pod, 1), "B/s").book(51.2e12, exact());
  ex.answer("per_gpu_node_bytes_per_s", h100.nvlink_bytes_per_s, "B/s").book(450e9, exact());
  ex.answer("per_gpu_su_bytes_per_s", su_links / (pod.nodes_per_su * h100.gpus_per_node), "B/s").book(50e9, exact());
  ex.answer("per_gpu_spine_bytes_per_s", switch_bytes_per_s(pod, 1) / gpus(pod), "B/s").book(50e9, exact());
}
