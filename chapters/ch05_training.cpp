// Chapter 5: how to parallelize a Transformer for training (§5.1–5.4 and the chapter-5 solutions).
// Memory from the tensor inventory and a saved-activations rule; compute and comms per layer for DP,
// FSDP, TP and FSDP+TP (cost/training.hpp); the bounds that follow; training time at an MFU.
//
// Assumptions the book leaves open, stated once: C is the v5p's §2.3 bf16 peak, 4.59e14 FLOPs/s (§5.1.1
// also writes 4.6e14; the answers use the table value and say where the other one matters); W_ici is the
// bidirectional bandwidth of one link, 1.8e11 B/s, so α = C/W = 2550; weights and activations are bf16;
// the §5 layer is the MLP alone, In[B, D]·W_in[D, F]·W_out[F, D], as §5.1 models it. The book's ring
// collectives drop the (n − 1)/n factor; the exact forms keep it where it is shown.
#include <cmath>
#include <string>
#include <vector>

#include "exercise.hpp"
#include "scaling/base/format.hpp"
#include "scaling/cost/training.hpp"
#include "scaling/hardware/chip.hpp"
#include "scaling/model/presets.hpp"
#include "scaling/model/tensors.hpp"

using namespace scaling;
using workbook::exact;
using workbook::Finding;
using workbook::in;
using workbook::Inputs;
using workbook::rel;
using workbook::Severity;
using workbook::sig;

static auto& chapter = workbook::define_chapter(5, "ch05", "How to Parallelize a Transformer for Training");

namespace {
const Chip& v5p() { return chip("tpu-v5p"); }
double v5p_alpha() { return ici_alpha(v5p()); }
constexpr double kV5pPodChips = 8960;  // §5.1.1: a full v5p pod (16×20×28)

// LLaMA-2 13B of §5.3, from its preset (D = 5120, F = 2.7·D = 13824, L = 40, N = K = 40, H = 128, V = 32000).
const TransformerConfig& llama2_13b() { return model("llama2-13b"); }

// Exercise 5.2's setup: bf16 weights, Adam with fp32 moments, no gradient buffer or master copy counted,
// three checkpoints per layer (after W_in1, W_in2 and W_out: D + 2F elements per token).
TrainingSetup ex52_setup() {
  TrainingSetup s;
  s.weights = Dtype::bf16;
  s.grads = std::nullopt;
  s.optimizer = Optimizer::adam;
  s.optimizer_state = Dtype::fp32;
  s.saved = parse_saved_rule("D+2F");
  return s;
}

const Finding kNineB{"dp-9b-truncated", Severity::rounding, "96 GB / 10 bytes per parameter printed as 9B",
                     "§5.1.1 divides the v5p's 96 GB of HBM by 10 bytes per parameter (bf16 weights, two fp32 Adam "
                     "moments): 96e9 / 10 = 9.6e9 parameters, which the text rounds down to 'about 9B'."};
const Finding kSum131{"ex51-sum", Severity::wrong, "8.5e9 + 4.2e9 + 0.3e9 printed as 13.1e9",
                      "Solution 5.1 adds its three rounded parts, 8.5e9 + 4.2e9 + 0.3e9, which make 13.0e9, and "
                      "prints 13.1e9; the exact parts (8.493e9 + 4.194e9 + 0.328e9, plus 0.4M norm weights) sum "
                      "to 13.016e9."};
}  // namespace

EXERCISE("ch5.dp-max-model", "Largest model under pure data parallelism") {
  ex.section("§5.1.1");
  // Every chip holds bf16 weights and two fp32 Adam moments: 2 + 4 + 4 bytes per parameter.
  TrainingSetup s;
  s.grads = std::nullopt;
  const auto& c = llama2_13b();  // any model: the bytes per parameter do not depend on it
  const double bytes_per_param = training_memory(c, 1, s).params / param_counts(c).total +
                                 training_memory(c, 1, s).optimizer / param_counts(c).total;
  ex.answer("bytes_per_param", bytes_per_param, "B").book(10, exact());
  ex.answer("max_params_v5p", v5p().hbm_bytes / bytes_per_param, "params")
      .book(9e9, sig(1))
      .erratum(kNineB)
      .explain("96e9 B of HBM per v5p chip over 10 B per parameter; gradients and activations ignored as in §5.1.1");
}

EXERCISE("ch5.dp-comms-bound", "Data-parallel comms bound") {
  ex.section("§5.1.1");
  const double alpha = v5p_alpha();
  ex.answer("alpha", alpha, "tokens").book(2550, sig(3))
      .explain("C/W_ici = 4.59e14 / 1.8e11 with the §2.3 table's C; §5.1.1's own 4.6e14 would give 2,556");
  ex.answer("per_chip_batch_1_axis", dp_min_batch_per_chip(alpha, 1), "tokens").book(2550, sig(3));
  ex.answer("per_chip_batch_3_axes", dp_min_batch_per_chip(alpha, 3), "tokens").book(850, sig(2));
  ex.answer("pod_batch_3_axes", dp_min_batch_per_chip(alpha, 3) * kV5pPodChips, "tokens").book(7.6e6, sig(2))
      .explain("850 tokens on each of the 8,960 chips of a v5p pod");
  // The per-layer times of the backward pass (the only one with DP comms): the library's layer_cost
  // counts the two AllReduces of the weight gradients.
  auto dp_time = [](const Inputs& v, bool comms) {
    const auto cost = layer_cost(MlpLayer{in(v, "B"), in(v, "D"), in(v, "F")}, Strategy::dp, in(v, "X"), 1);
    const auto t = layer_time(cost, Pass::backward, in(v, "C"), in(v, "W"), 1, 1);
    return comms ? t.t_comms_s : t.t_math_s;
  };
  const Inputs book_point{{"B", 1e6}, {"D", 8192}, {"F", 32768}, {"X", 256}, {"C", 4.59e14}, {"W", 1.8e11}};
  const Inputs other{{"B", 3e5}, {"D", 4096}, {"F", 14336}, {"X", 64}, {"C", 1.97e14}, {"W", 9e10}};
  ex.formula("t_comms", "T_comms = 2·2·2·D·F / W_ici",
             [](const Inputs& v) { return 2 * 2 * 2 * in(v, "D") * in(v, "F") / in(v, "W"); },
             [dp_time](const Inputs& v) { return dp_time(v, true); })
      .at(book_point).at(other);
  ex.formula("t_math", "T_math = 2·2·2·B·D·F / (X·C)",
             [](const Inputs& v) { return 8 * in(v, "B") * in(v, "D") * in(v, "F") / (in(v, "X") * in(v, "C")); },
             [dp_time](const Inputs& v) { return dp_time(v, false); })
      .at(book_point).at(other);
  ex.claim("hard_to_be_dp_bound", "§5.1.1: with all three axes of a v5p pod a batch of 7.6M tokens keeps pure "
           "data parallelism compute-bound, far below the batches of large training runs",
           dp_min_batch_per_chip(alpha, 3) * kV5pPodChips, "tokens")
      .below(16e6)
      .explain("16M tokens: the LLaMA-3 batch §5.1.2 uses");
}

EXERCISE("ex5.1", "LLaMA-2-13B parameter count") {
  ex.section("§5.3");
  const auto& c = llama2_13b();
  const auto p = param_counts(c);
  ex.answer("mlp_params", p.mlp, "params").book(8.5e9, sig(2)).explain("3·L·D·F: W_in1, W_in2, W_out per layer");
  ex.answer("attention_params", p.attention, "params").book(4.2e9, sig(2)).explain("4·D·N·H·L with N = K = 40");
  ex.answer("vocab_params", p.embedding + p.unembedding, "params").book(0.3e9, sig(1))
      .explain("2·V·D: untied embedding and unembedding");
  ex.answer("total_params", p.total, "params").book(13.1e9, sig(3)).erratum(kSum131)
      .explain("the tensor inventory, RMSNorm scales included (2 per layer and a final one)");
}

EXERCISE("ex5.2", "LLaMA-2-13B training memory") {
  ex.section("§5.3");
  const auto& c = llama2_13b();
  const double B = 16e6;
  const auto m = training_memory(c, B, ex52_setup());
  ex.answer("params_and_optimizer", m.params + m.optimizer, "B").book(130e9, sig(2))
      .explain("(2 + 4 + 4) bytes per parameter");
  ex.answer("activations", m.activations, "B").book(4.2e13, sig(2))
      .explain("2 bytes · L · B · (D + 2F): the outputs of the three big MLP matmuls, the rule 'D+2F'");
  TrainingSetup with_grads = ex52_setup();
  with_grads.grads = Dtype::bf16;
  ex.answer("total_with_grads", training_memory(c, B, with_grads).total, "B")
      .explain("adding a bf16 gradient buffer, which the book leaves out");
}
