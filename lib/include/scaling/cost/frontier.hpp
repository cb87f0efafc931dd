#pragma once
// §7.1.5 (Figure 20), §8.3: the latency–throughput trade of decoding. Every batch from 1 to the largest
// that fits gives one point (step latency, tokens/s per chip); a point is Pareto-optimal when no other
// point is at least as fast and at least as productive, and strictly better in one of the two.
#include <vector>

#include "scaling/cost/inference.hpp"

namespace scaling {

struct FrontierPoint {
  double batch;
  double step_s;                 // latency of one token
  double tokens_per_s_per_chip;  // throughput
  bool pareto;
};

// Every batch 1 … max_batch(in, context) (empty when the weights alone do not fit). `max_points` caps the
// work for absurd inputs: more batches than that throws std::invalid_argument.
// Each step under `cost_model` (inference.hpp's decode_terms; ideal and calibrated include the collectives).
std::vector<FrontierPoint> frontier(const DecodeInputs& in, double context, CostModel cost_model = CostModel::book,
                                    double max_points = 1e7);

// Marks `pareto` on points given in any order (ties: equal points are all kept).
void mark_pareto(std::vector<FrontierPoint>& points);

}  // namespace scaling
