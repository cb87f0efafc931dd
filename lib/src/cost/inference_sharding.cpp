#include "scaling/cost/inference_sharding.hpp"
#include "scaling/base/validate.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "scaling/base/format.hpp"

namespace scaling {
// §7.3.2: 2BD/W_ici > 2DF/(Y·W_hbm)  <=>  Y > F/(B·β).
double model_parallel_limit(double F, double batch, double hbm_bytes_per_s, double ici_bytes_per_s) {
  check::positive("F", F);
  check::positive("batch", batch);
  check::positive("hbm_bytes_per_s", hbm_bytes_per_s);
  check::positive("ici_bytes_per_s", ici_bytes_per_s);
  return F / (batch * (hbm_bytes_per_s / ici_bytes_per_s));
}

double latency_bound_buffer_bytes(double shards, double ici_bytes_per_s, double hop_latency_s) {
  check::positive("shards", shards);
  check::positive("ici_bytes_per_s", ici_bytes_per_s);
  check::positive("hop_latency_s", hop_latency_s);
  return shards * ici_bytes_per_s * hop_latency_s;
}

bool latency_bound(double bytes, double shards, double ici_bytes_per_s, double hop_latency_s) {
  check::positive("bytes", bytes);
  return bytes < latency_bound_buffer_bytes(shards, ici_bytes_per_s, hop_latency_s);
}

double latency_bound_shards(double batch, double D, double bytes_per_element, double ici_bytes_per_s,
                            double hop_latency_s) {
  check::positive("batch", batch);
  check::positive("D", D);
  check::positive("bytes_per_element", bytes_per_element);
  return batch * D * bytes_per_element / latency_bound_buffer_bytes(1, ici_bytes_per_s, hop_latency_s);
}

double mlp_t_math_s(double batch, double D, double F, double chips, double flops_per_s) {
  check::positive("batch", batch);
  check::positive("D", D);
  check::positive("F", F);
  check::positive("chips", chips);
  check::positive("flops_per_s", flops_per_s);
  return 4 * batch * D * F / (chips * flops_per_s);
}

// Ex. 7.7: steps 1 and 5 (over YZ, two axes) and step 3 (AllReduce over X).
double weight_stationary_2d_comms_s(double batch, double D, double F, double X, double YZ, double ici_bytes_per_s) {
  check::positive("batch", batch);
  check::positive("D", D);
  check::positive("F", F);
  check::positive("X", X);
  check::positive("YZ", YZ);
  check::positive("ici_bytes_per_s", ici_bytes_per_s);
  return 2 * batch * D / (X * ici_bytes_per_s) + 4 * batch * F / (YZ * ici_bytes_per_s);
}

// d/dX [2BD/X + 4BF·X/N] = 0  ->  X² = N·D/(2F).
double weight_stationary_2d_best_x(double D, double F, double chips) {
  check::positive("D", D);
  check::positive("F", F);
  check::positive("chips", chips);
  return std::sqrt(chips * D / (2 * F));
}

double weight_stationary_2d_min_comms_s(double batch, double D, double F, double chips, double ici_bytes_per_s) {
  const double X = weight_stationary_2d_best_x(D, F, chips);
  return weight_stationary_2d_comms_s(batch, D, F, X, chips / X, ici_bytes_per_s);
}

double weight_stationary_1d_comms_s(double batch, double D, double ici_bytes_per_s) {
  check::positive("batch", batch);
  check::positive("D", D);
  check::positive("ici_bytes_per_s", ici_bytes_per_s);
  return 4 * batch * D / (3 * ici_bytes_per_s);
}

// (4·sqrt(2)·sqrt(DF/N))² < (4D/3)²  <=>  N > 32·F·9/(16·D) = 18·F/D.
double weight_stationary_2d_crossover_chips(double D, double F) {
  check::positive("D", D);
  check::positive("F", F);
  return 18 * F / D;
}

}  // namespace scaling
