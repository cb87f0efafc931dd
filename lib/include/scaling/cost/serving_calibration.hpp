#pragma once
// The constants of the calibrated serving model (cost/inference.hpp, CostModel::calibrated): what a real
// chip achieves where the ideal model assumes its datasheet. Every figure is data with its source, the same
// for every model and batch: nothing here is fitted to the serving validation table (validation/serving-runs.json).
//
//   achieved HBM rate    H100, H200: the copy kernel measured in validation/gemm (read + write of 1 GiB);
//                        A100 80GB: "about 1700 GB/s" measured by the gpt-fast authors on their 330 W A100s
//                        (github.com/pytorch-labs/gpt-fast README at c5d3454, Speculative Sampling note,
//                        line 130);
//                        TPUs: no published figure found — the datasheet rate, and `measured` says so.
//   matmul time          H100, H200: the measured GEMM tables (cost/gemm_efficiency.hpp) of the weights'
//                        dtype (bf16; fp8 for 1-byte weights). A GPU without its own table (A100) is taken
//                        to sit as far above its own roofline as the H100 sits above the H100's at the same
//                        (M, K, N): time = r · max(FLOPs / peak, weight bytes / achieved HBM), r = the H100's
//                        measured time over max(FLOPs / its peak, bytes / its copy rate) — the small-GEMM
//                        floor and the shape's inefficiency, carried over. TPUs: r = 1 (no measurement).
//   prefill attention    H100, H200: the measured causal flash-attention (SDPA) forward rate, median over the
//                        run's sequence lengths; other chips: the peak.
//   non-matmul kernels   H100, H200: the measured memory-bound kernels (median bytes/s of each op: rmsnorm,
//                        layernorm, add, silu_mul, gelu_tanh, copy); the A100 takes the H100's rates scaled
//                        by its achieved HBM rate over the H100's copy rate; TPUs: the datasheet HBM rate.
//   AllReduce latency    NVLink (any GPU): the small-message (512 B) latency of vLLM's custom AllReduce
//                        measured on H100 at 2 / 4 / 8 GPUs: 9.5 / 9.1 / 10.1 µs (sgl-project/sglang pull
//                        request 2904, "unit test performance in H100"); the A100 uses the same figures (no
//                        A100 measurement found). TPU ICI: the hop latency of the System (§2.4's 1 µs) per
//                        hop of a ReduceScatter and an AllGather.
#include <string>

#include "scaling/cost/gemm_efficiency.hpp"
#include "scaling/hardware/system.hpp"

namespace scaling {

struct ServingCalibration {
  double hbm_bytes_per_s = 0;        // achieved, per chip
  std::string hbm_source;
  const GemmTable* gemm_bf16 = nullptr;  // measured tables; null where the chip has none
  const GemmTable* gemm_8bit = nullptr;  // fp8 (no fast accumulation), for 1-byte weights
  // A GPU without its own table: the sibling card whose table gives the ratio r above, and its figures.
  const GemmTable* proxy_bf16 = nullptr;
  const GemmTable* proxy_8bit = nullptr;
  double proxy_hbm_bytes_per_s = 0;
  double attention_flops_per_s = 0;      // causal prefill attention, per chip
  // Achieved bytes/s of the non-matmul kernels (read + write counted once each).
  double norm_bytes_per_s = 0, layer_norm_bytes_per_s = 0, add_bytes_per_s = 0, silu_mul_bytes_per_s = 0,
         gelu_bytes_per_s = 0, copy_bytes_per_s = 0;
  bool measured = false;                 // false: no achieved figures for this chip (datasheet used)
};
ServingCalibration serving_calibration(const Chip& chip);

// The latency of one AllReduce among `n` GPUs of an NVLink domain (the table above; n beyond 8 takes the
// 8-GPU figure, n ≤ 1 none).
double nvlink_allreduce_latency_s(double n);

}  // namespace scaling
