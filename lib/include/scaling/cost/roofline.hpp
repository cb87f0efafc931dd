#pragma once
// §1.1: time to compute, time to move bytes, and the bounds they give.
// All inputs are validated: a non-positive or non-finite value throws std::invalid_argument naming it.
#include <optional>

#include "scaling/hardware/dtype.hpp"

namespace scaling {

// §1.1: T_math = FLOPs / (FLOPs/s), T_comms = bytes / (bytes/s).
double t_math_s(double flops, double flops_per_s);
double t_comms_s(double bytes, double bytes_per_s);

// §1.1: arithmetic intensity = FLOPs per byte moved.
double intensity(double flops, double bytes);

// §1.1: the intensity at which a device reaches peak, peak FLOPs/s / bandwidth.
double critical_intensity(double flops_per_s, double bytes_per_s);

struct Roofline {
  double t_math_s;
  double t_comms_s;
  double t_lower_s;     // max(T_math, T_comms): perfect overlap
  double t_upper_s;     // T_math + T_comms: no overlap
  bool compute_bound;   // T_math >= T_comms
  double attainable_flops_per_s;  // FLOPs / T_lower = min(peak, intensity · bandwidth)
};

Roofline roofline(double flops, double bytes, double flops_per_s, double bytes_per_s);

// §1.1.2: X[B, D] ·_D Y[D, F] -> Z[B, F], each operand with its own dtype.
struct Matmul {
  double B, D, F;
  Dtype lhs = Dtype::bf16;
  Dtype rhs = Dtype::bf16;
  Dtype out = Dtype::bf16;
};

void validate(const Matmul& m);            // throws for non-positive, non-finite sizes
double flops(const Matmul& m);             // 2BDF (multiply and add counted separately, §1.1.2 fn 9)
double bytes_loaded(const Matmul& m);      // s_lhs·B·D + s_rhs·D·F
double bytes_stored(const Matmul& m);      // s_out·B·F
double bytes(const Matmul& m);             // loaded + stored
double intensity(const Matmul& m);

// The batch B* at which T_math = T_comms for fixed D, F and dtypes, exactly:
//   2·B·D·F / C = (s_lhs·B·D + s_rhs·D·F + s_out·B·F) / W
//   B* = s_rhs·D·F / (2·D·F / I − s_lhs·D − s_out·F),   I = C / W.
// Above B* the matmul is compute-bound. When the denominator is not positive, even B -> ∞ leaves
// intensity 2DF / (s_lhs·D + s_out·F) at or below I: no batch is compute-bound and the result is empty.
// The book's shortcut (B ≪ D, F) drops the B terms: B* ≈ s_rhs·I / 2.
std::optional<double> critical_batch(double D, double F, Dtype lhs, Dtype rhs, Dtype out, double chip_intensity);
double critical_batch_small_batch_limit(Dtype rhs, double chip_intensity);

// A matmul (m, k)·(k, n) computed in tiles of (bm, bk)·(bk, bn) that fit on-chip memory (§1.1.2, the
// tiling footnote of the chapter-1 translation). Every output tile (bm, bn) streams the k dimension
// in tm·tn·tk steps, reloading its input tiles each time; the output tile is written once.
struct TiledMatmul {
  double m, k, n;
  double bm, bk, bn;
  Dtype in = Dtype::bf16;
  // The MXU accumulates in fp32 (§2.1), but §1.1.2 models a matmul's output as cast down to bf16 before
  // it is copied back to HBM (2BF bytes written), so a tile's output is written in bf16 by default.
  Dtype out = Dtype::bf16;
};

void validate(const TiledMatmul& t);          // positive sizes, tiles dividing their dimension
double flops(const TiledMatmul& t);           // tm·tn·tk · 2·bm·bk·bn = 2mkn
double bytes(const TiledMatmul& t);           // s_in·tm·tn·tk·(bm·bk + bk·bn) + s_out·m·n
double input_bytes(const TiledMatmul& t);     // the first term alone
// With the output term dropped: 2·bm·bk·bn / (s_in·(bm·bk + bk·bn)) = bm·bn / (bm + bn) for bf16.
double input_intensity(const TiledMatmul& t);

}  // namespace scaling
