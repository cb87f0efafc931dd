#pragma once
// §5's model of a Transformer for training: a stack of MLP blocks (attention and the gating matmul left
// out, as §5 does). Layer l maps In[B, D] to Out[B, D]:
//   Tmp = In ·_D W_in[D, F],   H = ReLU(Tmp),   Out = H ·_F W_out[F, D],
// and Out of layer l is In of layer l + 1. One training step on real numbers: the forward pass, the loss
// ½·Σ (Out_L − Target)², the backward pass (the §5 algorithms' dOut, dTmp, dW_out, dW_in, dIn), and an SGD
// or Adam update. This file holds the unsharded step, the reference every sharded execution
// (training_step.hpp, pipeline.hpp) must reproduce, and the dense kernels they share.
//
// Two kinds of example data:
//   integers: weights in {−1, 0, 1}, inputs and targets in {−2, …, 2}. Every product and sum of the step is
//     then a whole number far below 2^53, so it is exact in double precision whatever the order of
//     summation: a sharded step must give bit for bit the same gradients. With SGD and a power-of-two
//     learning rate the update is exact too.
//   gaussian: weights N(0, 1/fan_in), inputs and targets N(0, 1) (the book's example draws normals).
//     Summation order then matters at the level of rounding (see the tests for the bound).
// Both come from a fixed-seed generator (splitmix64 and Box–Muller written out here), so they are the same on
// every platform.
#include <cstdint>
#include <string_view>
#include <vector>

#include "scaling/cost/training.hpp"
#include "scaling/sim/ppermute.hpp"

namespace scaling::sim {

struct MlpShape {
  int layers = 0;
  long long batch = 0, d_model = 0, d_ff = 0;  // B (tokens), D, F
};

struct MlpWeights {
  std::vector<Block> w_in;   // per layer, [D, F]
  std::vector<Block> w_out;  // per layer, [F, D]
};

enum class InitKind { integers, gaussian };

struct MlpProblem {
  MlpShape shape;
  Block x;       // [B, D], the first layer's input
  Block target;  // [B, D]
  MlpWeights weights;
};

constexpr long long kMaxMlpValues = 1LL << 24;  // weights and activations of an example, in total

// Throws std::invalid_argument for a shape that is not positive or too large to hold.
void validate(const MlpShape& s);
MlpProblem example_problem(const MlpShape& s, InitKind kind, std::uint64_t seed);

// Which optimizer: the cost model's enum (cost/training.hpp), so memory and execution name it alike.
using OptimizerKind = scaling::Optimizer;

// One step of the optimizer from a fresh state (Adam: zero moments, step 1 with bias correction):
//   SGD:  w − lr·g
//   Adam: m = (1 − β1)·g, v = (1 − β2)·g², w − lr·(m / (1 − β1)) / (√(v / (1 − β2)) + ε)
struct Optimizer {
  OptimizerKind kind = OptimizerKind::sgd;
  double lr = 1.0 / 64;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
};
double updated_weight(double w, double g, const Optimizer& opt);
// w ← update(w, g) elementwise.
void apply_update(Block& w, const Block& g, const Optimizer& opt);

// Dense kernels (row-major Blocks with values). Each output element is a sum taken in index order:
// matmul over k, matmul_tn over the rows of a and b (the batch, for a weight gradient), matmul_nt over k.
Block matmul(const Block& a, const Block& b);     // a[m, k] · b[k, n]
Block matmul_tn(const Block& a, const Block& b);  // a[n, p]ᵀ · b[n, q] -> [p, q]
Block matmul_nt(const Block& a, const Block& b);  // a[m, k] · b[n, k]ᵀ -> [m, n]
// dTmp = dH where Tmp > 0, else 0 (the ReLU's derivative, 0 at 0).
Block relu_backward(const Block& d_h, const Block& tmp);

// One layer forward, keeping what its backward pass needs.
struct LayerForward {
  Block tmp, h, out;
};
LayerForward layer_forward(const Block& in, const Block& w_in, const Block& w_out);

// One layer backward from the saved forward values.
struct LayerBackward {
  Block d_w_in, d_w_out, d_in;
};
LayerBackward layer_backward(const Block& in, const LayerForward& fwd, const Block& w_in, const Block& w_out,
                             const Block& d_out);

// ½·Σ (out − target)² and its gradient out − target.
double half_squared_error(const Block& out, const Block& target);
Block loss_gradient(const Block& out, const Block& target);

struct StepOutput {
  MlpWeights updated;
  MlpWeights grads;  // summed over the batch
  double loss = 0;
};
StepOutput reference_step(const MlpProblem& p, const Optimizer& opt);

// Largest |a − b| over every weight of two weight sets of the same shape.
double max_abs_difference(const MlpWeights& a, const MlpWeights& b);

}  // namespace scaling::sim
