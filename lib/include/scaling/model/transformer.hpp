#pragma once
// §4.2–4.4: a decoder-only Transformer (dense or mixture-of-experts) and its accounting — parameters
// by component, FLOPs per token and KV cache (training memory: cost/training.hpp).
//
// Letters follow §4: D = d_model, F = d_ff, L = layers, N = query heads, K = KV heads, H = head dim,
// V = vocab, E = experts, k = experts per token. Counts are doubles (they pass 2^53 for big models).
#include <string>

#include "scaling/hardware/dtype.hpp"

namespace scaling {

struct TransformerConfig {
  std::string name;
  double d_model = 0, d_ff = 0, layers = 0, q_heads = 0, kv_heads = 0, head_dim = 0, vocab = 0;
  bool gated_mlp = true;         // 3 matrices (W_in1, W_in2, W_out) or plain (2)
  bool tied_embeddings = false;  // unembedding shares the embedding matrix
  double norms_per_layer = 2;    // RMSNorm/LayerNorm scales of D each
  bool final_norm = true;
  bool norm_bias = false;        // LayerNorm with a bias (doubles each norm's parameters)
  bool attention_bias = false;   // biases on Q, K, V and O
  bool mlp_bias = false;         // biases on the MLP matrices
  // GPT-style blocks (config.json model_type gpt2, gpt_neox, opt):
  // Rows of a learned position table added to the token embedding before the first layer: GPT-2 stores
  // n_positions rows, OPT max_position_embeddings + 2 (its positions start at an offset of 2). 0: none
  // (rotary or no position parameters). A lookup like the embedding: parameters, no matmul FLOPs.
  double learned_positions = 0;
  // The longest sequence that table can index: GPT-2's n_positions, OPT's max_position_embeddings (its two
  // offset rows are not positions). 0: no learned table, no such bound. Read by the CLI's --seq/--context note.
  double max_learned_seq = 0;
  // OPT-350m looks tokens up at a narrower width P and projects them to D before the first layer (W_proj_in,
  // P·D) and back to P before the unembedding (W_proj_out, D·P); the embedding and unembedding are then V·P.
  // 0: no projections (the embedding is D wide).
  double embed_proj_dim = 0;
  // Attention and MLP read the same layer input and their outputs join the residual together,
  // x + attn(norm1(x)) + mlp(norm2(x)) (GPT-J, GPT-NeoX's use_parallel_residual, PaLM). Parameters and
  // FLOPs are those of a sequential block; what changes is tensor-parallel communication (see
  // tp_reductions_per_layer) and what the backward pass keeps (no residual between the two halves).
  bool parallel_blocks = false;
  // Mixture of experts: experts == 0 means dense. Each MoE layer holds `experts` routed MLPs of width
  // expert_d_ff (0: d_ff) plus `shared_experts` always-on MLPs, and a router of D·E weights.
  double experts = 0, experts_per_token = 0, shared_experts = 0, expert_d_ff = 0;
};

// Throws std::invalid_argument naming a missing, non-positive or inconsistent size
// (e.g. KV heads that do not divide the query heads).
void validate(const TransformerConfig& c);
bool is_moe(const TransformerConfig& c);

struct ParamCounts {
  // embedding: the token table and any learned position table; projection: OPT's W_proj_in and W_proj_out.
  double embedding, unembedding, attention, mlp, norms, router, projection;
  double total;
  double active;  // used by one token: only k routed experts of each MoE layer
  double once = 0;  // stored once, outside the layers: the embedding, the final norm, the unembedding
};
ParamCounts param_counts(const TransformerConfig& c);

// Forward FLOPs for one token that attends to `context` keys (§4.3): every matmul weight costs 2 FLOPs
// per token; the dot-product attention costs 2·2·N·H·context per layer (QKᵀ and the product with V).
struct TokenFlops {
  double mlp, qkvo, attention, unembedding, router, projection;
  double total;
};
TokenFlops forward_flops_per_token(const TransformerConfig& c, double context);
// Training = forward + backward = 3 × forward (§4.1.1).
double training_flops_per_token(const TransformerConfig& c, double context);
// The one 6N rule (§4.1, §5.1.2, §6.2): a training step costs about 6 FLOPs per parameter per token (2 in
// the forward pass, 4 in the backward), N = the parameters one token uses (ParamCounts::active: every
// stored parameter of a dense model, only the k routed experts of an MoE layer), the embedding table
// included, as §5 and §6 count LLaMA-3 70B's 70e9. A reading that leaves out weights doing no matmul (§4.5's
// table drops the embedding lookup) states it at the call: six_active_flops_per_token(c) − 6 · embedding.
double six_active_flops_per_token(const TransformerConfig& c);

// Megatron-style tensor parallelism (§5; Shoeybi et al. 2019, §3 "Model Parallel Transformers") splits
// attention by heads and the MLP by its hidden width, so each half of a layer ends in a partial sum that
// one AllReduce over the tensor axis completes: 2 per layer in the forward pass, and 2 more for the input
// gradients in the backward pass. A parallel block adds both halves' partial outputs to the residual
// together, so one AllReduce serves both (Chowdhery et al. 2022, PaLM, §2 "Parallel Layers"); the backward
// pass likewise needs one, since a norm's backward pass is linear in the incoming gradient and the two
// branches' gradients with respect to the layer input can be summed before they are reduced. Under sequence
// parallelism the reduction is a ReduceScatter (one per block in a parallel block too); the AllGathers that
// bring the normalised input back depend on whether the two branches share one norm (PaLM) or not
// (GPT-NeoX), which is the step model's to count.
// Returns the AllReduces one layer needs in its forward pass (the backward pass needs as many): 2, or 1
// for parallel blocks.
double tp_reductions_per_layer(const TransformerConfig& c);

// §4.4.3: K and V for every layer, K·H values each.
double kv_bytes_per_token(const TransformerConfig& c, Dtype kv);

// Training memory and rematerialisation (§4.4.2) are in cost/training.hpp.

}  // namespace scaling
