#pragma once
// §4.2–4.3, §6.1: a Transformer as a list of weight tensors. Every count the workbook makes of a model —
// total and active parameters, bytes per dtype, matmul FLOPs per token, what each device holds when the
// weights are sharded — is a sum over this one inventory; nothing recounts parameters by a second formula.
//
// Letters follow §4: D = d_model, F = d_ff, L = layers, N = query heads, K = KV heads, H = head dim,
// V = vocab, E = routed experts, k = experts per token, F_e = expert width.
#include <string>
#include <vector>

#include "scaling/hardware/dtype.hpp"
#include "scaling/model/transformer.hpp"
#include "scaling/notation/saved_rule.hpp"

namespace scaling {

// embedding: the token table and a learned position table (lookups); projection: OPT's W_proj_in / W_proj_out.
enum class Component { embedding, unembedding, attention, mlp, norm, router, projection };
const char* to_string(Component c);

// How often a tensor occurs in the model.
enum class Repeat {
  once,               // the embedding, positions, projections, the final norm, the unembedding
  per_layer,          // attention, norms, a dense MLP, the router
  per_expert,         // one per routed expert in every MoE layer (L·E copies; a token uses L·k)
  per_shared_expert,  // one per always-on shared expert in every MoE layer
};
const char* to_string(Repeat r);

struct Tensor {
  std::string name;           // "W_Q", "W_in1", "embedding", …
  std::vector<double> shape;  // e.g. {D, N, H}
  Component component;
  Repeat repeat;
  bool tied = false;   // shares its storage with the embedding: counted once, there
  bool matmul = true;  // multiplies every token's activations: 2 FLOPs per element per token (§4.1)
};

// The tensors of one model, in forward order. Validates the config (throws std::invalid_argument).
std::vector<Tensor> tensor_inventory(const TransformerConfig& c);

double elements(const Tensor& t);                                 // product of the shape
double copies(const Tensor& t, const TransformerConfig& c);       // how many the model stores (tied: 0)
double active_copies(const Tensor& t, const TransformerConfig& c);  // how many one token uses

// Bytes of every stored parameter in `weights` dtype.
double param_bytes(const TransformerConfig& c, Dtype weights);

// The activation inventory beside the weight inventory (§4.4.2): what one layer's forward pass produces
// per token that its backward pass can keep, by tensor, each as elements per token in D, F, N·H and K·H
// (notation/saved_rule.hpp). The named saved-activation rules of the step model (cost/layout.hpp) are
// sums over it: `input` keeps the layer input, `matmuls` the outputs of the big weight matmuls.
enum class ActivationKind {
  layer_input,    // the block's input (what full rematerialisation keeps)
  matmul_output,  // the output of a weight matmul: Q, K, V, W_O, the MLP's input matrices, W_out
  other,          // norms, the attention's P·V, the gated product, residual sums: rerun or kept by `all`
};
struct Activation {
  std::string name;
  SavedRule per_token;  // elements per token, in D, F, N·H, K·H
  ActivationKind kind;
  // Whether the layer's backward pass reads it when nothing is rerun. The outputs of W_O and W_out only
  // feed a residual add, whose backward reads nothing; the sums they make are kept instead (the residual
  // after attention, and the next layer's input).
  bool read_by_backward = true;
};
// One layer (an MoE layer counts the k routed experts a token uses, and its shared experts, as fractions
// of F). Validates the config.
std::vector<Activation> activation_inventory(const TransformerConfig& c);
// The sum of the inventory's tensors of one kind.
SavedRule saved_of_kind(const TransformerConfig& c, ActivationKind kind);
// The sum of the tensors a layer's backward pass reads with nothing rerun: the `all` rule. For a GPT block
// (LayerNorm, F = 4D, N·H = K·H = D) that is 16D, the count of Korthikanti et al. 2022 eq. 1 (34·s·b·h bytes
// besides the attention scores, less its two residual-dropout masks of one byte an element, at 2 bytes an
// element). The inventory has no dropout: a model that uses it keeps those masks too.
SavedRule saved_for_backward(const TransformerConfig& c);

}  // namespace scaling
