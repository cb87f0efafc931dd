// Independent checks of chapter 5's executed part (chapters/ch05/executed_step.cpp, chapters/ch05/pipeline.cpp).
// Nothing here calls the library. Bytes come from §5's table of communication per layer written out from the
// book, with the ring factor (n − 1)/n of §3; bubbles from the fill-and-drain argument; the example data is
// regenerated from its documented recipe and the training step redone in 128-bit integers
// (exact_mlp_step.hpp). A weight difference that should be zero is checked by showing why it must be: every
// value of the step is a whole number below 2^53, so double precision holds every sum exactly in any order,
// and the sharded and unsharded steps must both land on the integer step's weights.
#include <cstdint>

#include "exact_mlp_step.hpp"
#include "registry.hpp"

namespace {

// The executed step's setup: three layers, B = 32, D = 8, F = 16, seed 2024; a 2×4 mesh.
constexpr double kB = 32, kD = 8, kF = 16;
constexpr double kBytes = 2;  // bf16
double ring(double n) { return (n - 1) / n; }

// Zero when the example's step is exact in double precision (every sum below 2^53); otherwise the
// magnitude by which it is not, so that the check fails.
double exactness_gap(int layers, long long batch, long long d, long long f, std::uint64_t seed) {
  const auto s = exact_mlp::step(exact_mlp::integer_example(layers, batch, d, f, seed));
  const double largest = static_cast<double>(s.largest);
  return largest < exact_mlp::two_to_53() ? 0.0 : largest;
}

}  // namespace

// ---- One step under DP, FSDP, TP, FSDP+TP: §5's table, each term times (n − 1)/n of its axis ----
// DP (X = 8): backward 2 AllReduces of DF, each 2·2DF bytes.
INDEPENDENT("ch5.executed-step.dp_forward_bytes", "§5 table: DP moves nothing forward", 0) { return 0; }
INDEPENDENT("ch5.executed-step.dp_backward_bytes", "§5 table 8DF, ring factor 7/8 on X = 8", 0) {
  return 8 * kD * kF * ring(8);
}
// FSDP (X = 8): forward AllGathers W_in, W_out (4DF); backward gathers both again and reduce-scatters both
// gradients (8DF).
INDEPENDENT("ch5.executed-step.fsdp_forward_bytes", "§5 table 4DF, ring factor 7/8", 0) { return 4 * kD * kF * ring(8); }
INDEPENDENT("ch5.executed-step.fsdp_backward_bytes", "§5 table 8DF, ring factor 7/8", 0) { return 8 * kD * kF * ring(8); }
// TP (Y = 8): AllGather In and ReduceScatter Out forward, AllGather dOut and ReduceScatter dIn backward.
INDEPENDENT("ch5.executed-step.tp_forward_bytes", "§5 table 4BD, ring factor 7/8 on Y = 8", 0) { return 4 * kB * kD * ring(8); }
INDEPENDENT("ch5.executed-step.tp_backward_bytes", "§5 table 4BD, ring factor 7/8", 0) { return 4 * kB * kD * ring(8); }
// FSDP+TP (X = 2, Y = 4): forward 4BD/X over Y plus 4DF/Y over X.
INDEPENDENT("ch5.executed-step.fsdp_tp_forward_bytes", "§5 table 4BD/X + 4DF/Y, ring factors 3/4 (Y) and 1/2 (X)", 0) {
  return 4 * kB * kD / 2 * ring(4) + 4 * kD * kF / 4 * ring(2);
}
// Backward: the §5.1.4 listing's collectives, counted one by one (step 7's gather of In is shared with the
// forward pass): AllGather_Y dOut and ReduceScatter_Y dIn, 2BD/X bytes each; ReduceScatter_X dW_out,
// AllGather_X W_out, ReduceScatter_X dW_in, AllGather_X W_in, 2DF/Y bytes each.
INDEPENDENT("ch5.executed-step.fsdp_tp_backward_bytes", "the §5.1.4 backward listing, collective by collective", 0) {
  const double activation = kBytes * kB * kD / 2, weight = kBytes * kD * kF / 4;
  return 2 * activation * ring(4) + 4 * weight * ring(2);
}
INDEPENDENT("ch5.executed-step.fsdp_tp_backward_activation_coefficient",
            "the §5.1.4 backward listing: two activation collectives (steps 2, 12) of 2 bytes per element", 0) {
  const int activation_collectives = 2;  // AllGather_Y(dOut), ReduceScatter_Y(dIn); step 7 is shared
  return activation_collectives * kBytes;
}

// The updated weights: every strategy must reproduce the exact integer step.
INDEPENDENT_WITHIN("ch5.executed-step.dp_max_weight_diff", "exact arithmetic: int128 step below 2^53", 0) {
  return exactness_gap(3, 32, 8, 16, 2024);
}
INDEPENDENT_WITHIN("ch5.executed-step.fsdp_max_weight_diff", "exact arithmetic: int128 step below 2^53", 0) {
  return exactness_gap(3, 32, 8, 16, 2024);
}
INDEPENDENT_WITHIN("ch5.executed-step.tp_max_weight_diff", "exact arithmetic: int128 step below 2^53", 0) {
  return exactness_gap(3, 32, 8, 16, 2024);
}
INDEPENDENT_WITHIN("ch5.executed-step.fsdp_tp_max_weight_diff", "exact arithmetic: int128 step below 2^53", 0) {
  return exactness_gap(3, 32, 8, 16, 2024);
}
INDEPENDENT_WITHIN("ch5.executed-step.fsdp_tp_adam_max_weight_diff",
                   "exact gradients (int128 step below 2^53) make Adam's elementwise update identical", 0) {
  return exactness_gap(3, 32, 8, 16, 2024);
}

// ---- The pipeline: four stages of one layer, B = 32, D = 8, F = 16, seed 5 ----
INDEPENDENT_WITHIN("ch5.pipeline-code.max_weight_diff_m1", "exact arithmetic: int128 step below 2^53", 0) {
  return exactness_gap(4, 32, 8, 16, 5);
}
INDEPENDENT_WITHIN("ch5.pipeline-code.max_weight_diff_m8", "exact arithmetic: int128 step below 2^53", 0) {
  return exactness_gap(4, 32, 8, 16, 5);
}
// Fill and drain: each stage is busy M forward slots of 1 and M backward slots of 2, and the last
// microbatch's backward leaves stage 0 after (M + S − 1) forward and (M + S − 1) backward slots.
INDEPENDENT("ch5.pipeline-code.bubble_m1", "fill and drain: (S − 1)/(M + S − 1), S = 4, M = 1", 1e-12) {
  const double S = 4, M = 1;
  return 1 - (M * 3) / ((M + S - 1) * 3);
}
INDEPENDENT("ch5.pipeline-code.bubble_m8", "fill and drain: (S − 1)/(M + S − 1), S = 4, M = 8", 1e-12) {
  const double S = 4, M = 8;
  return (S - 1) / (M + S - 1);
}
INDEPENDENT("ch5.pipeline-code.stage_bytes_sent", "one [B, D] bf16 block forward and one back, one hop each", 0) {
  return 2 * kB * kD * kBytes;
}
// Python: for i in range(0, 4, -1) runs while i > 4, starting at 0.
INDEPENDENT("ch5.pipeline-code.backward_loop_iterations", "Python's range semantics, stepped out", 0) {
  int count = 0;
  for (int i = 0; i > 4; i += -1) ++count;
  return count;
}
// The loop fixed, the vjp taken at each layer's output: the weights' largest gap to the exact step is the
// largest |g_at_output − g| / 64 (SGD with learning rate 1/64; both steps exact).
INDEPENDENT("ch5.pipeline-code.vjp_point_weight_error", "int128 step linearised at each output, against the exact one", 1e-12) {
  const auto p = exact_mlp::integer_example(4, 32, 8, 16, 5);
  const auto right = exact_mlp::step(p), wrong = exact_mlp::step(p, true);
  exact_mlp::Int largest = 0;
  for (size_t l = 0; l < right.grad_in.size(); ++l)
    for (const auto* pair : {&right.grad_in, &right.grad_out}) {
      const auto& g = (*pair)[l];
      const auto& h = (pair == &right.grad_in ? wrong.grad_in : wrong.grad_out)[l];
      for (size_t i = 0; i < g.size(); ++i)
        for (size_t j = 0; j < g[i].size(); ++j) {
          const auto d = g[i][j] - h[i][j];
          largest = std::max(largest, d < 0 ? -d : d);
        }
    }
  return static_cast<double>(largest) / 64;
}
