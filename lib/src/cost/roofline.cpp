#include "scaling/cost/roofline.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <tuple>

#include "scaling/base/format.hpp"

namespace scaling {
namespace {
double positive(double value, const char* what) {
  if (!std::isfinite(value) || value <= 0.0)
    throw std::invalid_argument(std::string(what) + " = " + format_number(value) +
                                ": must be a positive, finite number");
  return value;
}
}  // namespace

double t_math_s(double flops, double flops_per_s) {
  return positive(flops, "FLOPs") / positive(flops_per_s, "FLOPs/s");
}

double t_comms_s(double bytes, double bytes_per_s) {
  return positive(bytes, "bytes") / positive(bytes_per_s, "bandwidth (bytes/s)");
}

double intensity(double flops, double bytes) { return positive(flops, "FLOPs") / positive(bytes, "bytes"); }

double critical_intensity(double flops_per_s, double bytes_per_s) {
  return positive(flops_per_s, "FLOPs/s") / positive(bytes_per_s, "bandwidth (bytes/s)");
}

Roofline roofline(double flops, double bytes, double flops_per_s, double bytes_per_s) {
  Roofline r{};
  r.t_math_s = t_math_s(flops, flops_per_s);
  r.t_comms_s = t_comms_s(bytes, bytes_per_s);
  r.t_lower_s = std::max(r.t_math_s, r.t_comms_s);
  r.t_upper_s = r.t_math_s + r.t_comms_s;
  r.compute_bound = r.t_math_s >= r.t_comms_s;
  r.attainable_flops_per_s = flops / r.t_lower_s;
  return r;
}

void validate(const Matmul& m) {
  positive(m.B, "B");
  positive(m.D, "D");
  positive(m.F, "F");
}

double flops(const Matmul& m) {
  validate(m);
  return 2.0 * m.B * m.D * m.F;
}

double bytes_loaded(const Matmul& m) {
  validate(m);
  return bytes_per_element(m.lhs) * m.B * m.D + bytes_per_element(m.rhs) * m.D * m.F;
}

double bytes_stored(const Matmul& m) {
  validate(m);
  return bytes_per_element(m.out) * m.B * m.F;
}

double bytes(const Matmul& m) { return bytes_loaded(m) + bytes_stored(m); }

double intensity(const Matmul& m) { return intensity(flops(m), bytes(m)); }

std::optional<double> critical_batch(double D, double F, Dtype lhs, Dtype rhs, Dtype out, double chip_intensity) {
  positive(D, "D");
  positive(F, "F");
  positive(chip_intensity, "chip intensity");
  const double denominator =
      2.0 * D * F / chip_intensity - bytes_per_element(lhs) * D - bytes_per_element(out) * F;
  if (denominator <= 0.0) return std::nullopt;
  return bytes_per_element(rhs) * D * F / denominator;
}

double critical_batch_small_batch_limit(Dtype rhs, double chip_intensity) {
  return bytes_per_element(rhs) * positive(chip_intensity, "chip intensity") / 2.0;
}

void validate(const TiledMatmul& t) {
  for (auto [dim, tile, name] : {std::tuple{t.m, t.bm, "m"}, {t.k, t.bk, "k"}, {t.n, t.bn, "n"}}) {
    positive(dim, name);
    positive(tile, name);
    const double tiles = dim / tile;
    if (tiles != std::floor(tiles))
      throw std::invalid_argument(std::string("tile ") + format_number(tile) + " does not divide " + name + " = " +
                                  format_number(dim));
  }
}

double flops(const TiledMatmul& t) {
  validate(t);
  const double tiles = (t.m / t.bm) * (t.n / t.bn) * (t.k / t.bk);
  return tiles * 2.0 * t.bm * t.bk * t.bn;
}

double input_bytes(const TiledMatmul& t) {
  validate(t);
  const double tiles = (t.m / t.bm) * (t.n / t.bn) * (t.k / t.bk);
  return bytes_per_element(t.in) * tiles * (t.bm * t.bk + t.bk * t.bn);
}

double bytes(const TiledMatmul& t) { return input_bytes(t) + bytes_per_element(t.out) * t.m * t.n; }

double input_intensity(const TiledMatmul& t) { return intensity(flops(t), input_bytes(t)); }

}  // namespace scaling
