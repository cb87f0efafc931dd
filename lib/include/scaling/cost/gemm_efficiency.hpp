#pragma once
// Achieved matmul throughput by shape, measured (issue 17's calibrated model): the ideal model charges
// every GEMM 2·M·K·N / peak, but a small or skinny GEMM is limited by reading its weights from HBM and by
// filling the chip, so it runs far below peak. These tables hold what y[M,N] = x[M,K]·W[N,K]^T achieved
// on a real GPU (validation/gemm/measure.py; method and meaning in validation/gemm/README.md). The JSON
// files are embedded in the library at build time, so nothing is read at run time.
//
// Lookup: the measured (K, N) pairs come from real layers, so they are scattered, not a grid. For each
// pair the achieved FLOPs/s is interpolated in M (log rate linear in log M between measured points; below
// the smallest M the rate scales with M, because a memory-bound GEMM takes the same time whatever M is;
// above the largest M it stays at the last value). The pairs are then combined by inverse-square-distance
// weights of their log rates in (log2 K, log2 N), over the four nearest; an exact (K, N) returns that
// pair's curve unchanged.
#include <string>
#include <string_view>
#include <vector>

#include "scaling/hardware/dtype.hpp"

namespace scaling {

struct GemmCurve {
  double k = 0, n = 0;
  std::vector<double> flops_per_s;  // one per GemmTable::m, same order
};

struct GemmTable {
  std::string card;                // the GPU's name as the driver reports it ("NVIDIA H200")
  Dtype dtype = Dtype::bf16;
  bool fast_accum = false;         // fp8 only: torch._scaled_mm's use_fast_accum
  double peak_flops_per_s = 0;     // the datasheet dense peak that efficiencies are relative to
  std::string peak_source;
  std::string measured;            // date, torch and CUDA versions of the run
  std::vector<double> m;           // the M values, ascending (the same for every curve)
  std::vector<GemmCurve> curves;
};

// One memory-bound kernel of the run: bytes it must move (inputs read once, outputs written once) / time.
struct MemoryKernel {
  std::string op;  // "copy", "layernorm", "rmsnorm", "softmax", "gelu_tanh", "adamw_fused_step", ...
  std::string dtype;
  std::vector<double> shape;
  double bytes_per_s = 0;
};

// Parse a measure.py JSON file's text. `section` is "gemm_bf16", "gemm_fp8" or "gemm_fp8_fast_accum".
// Throws std::invalid_argument naming what is missing or malformed.
GemmTable gemm_table_from_json(std::string_view json_text, std::string_view section = "gemm_bf16");
std::vector<MemoryKernel> memory_kernels_from_json(std::string_view json_text);

// The tables embedded at build time, by short card name: "h100", "h200".
std::vector<std::string> measured_cards();
const GemmTable& measured_gemm_table(std::string_view card, Dtype dtype = Dtype::bf16, bool fast_accum = false);
const std::vector<MemoryKernel>& measured_memory_kernels(std::string_view card);

// Achieved FLOPs/s of an (M, K, N) GEMM, and that over the table's peak. M may be fractional (tokens per
// chip); all three must be positive and finite, else std::invalid_argument naming the value.
double achieved_flops_per_s(const GemmTable& table, double m, double k, double n);
double gemm_efficiency(const GemmTable& table, double m, double k, double n);

// The median bytes/s of the card's kernels named `op` (e.g. both LayerNorm widths); throws for an unknown op.
double measured_bytes_per_s(std::string_view card, std::string_view op);

}  // namespace scaling
