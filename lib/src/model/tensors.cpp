#include "scaling/model/tensors.hpp"

namespace scaling {

const char* to_string(Component c) {
  switch (c) {
    case Component::embedding: return "embedding";
    case Component::unembedding: return "unembedding";
    case Component::attention: return "attention";
    case Component::mlp: return "mlp";
    case Component::norm: return "norm";
    case Component::router: return "router";
    case Component::projection: return "projection";
  }
  return "?";
}

const char* to_string(Repeat r) {
  switch (r) {
    case Repeat::once: return "once";
    case Repeat::per_layer: return "per layer";
    case Repeat::per_expert: return "per expert";
    case Repeat::per_shared_expert: return "per shared expert";
  }
  return "?";
}

namespace {

// One MLP of width f (a dense layer's, or one expert's): W_in1 (and the gate W_in2 when gated) and W_out.
void add_mlp(std::vector<Tensor>& out, const TransformerConfig& c, double f, Repeat repeat, const std::string& prefix) {
  const double D = c.d_model;
  out.push_back({prefix + "W_in1", {D, f}, Component::mlp, repeat});
  if (c.gated_mlp) out.push_back({prefix + "W_in2", {D, f}, Component::mlp, repeat});
  out.push_back({prefix + "W_out", {f, D}, Component::mlp, repeat});
  if (c.mlp_bias) {
    out.push_back({prefix + "b_in1", {f}, Component::mlp, repeat, false, false});
    if (c.gated_mlp) out.push_back({prefix + "b_in2", {f}, Component::mlp, repeat, false, false});
    out.push_back({prefix + "b_out", {D}, Component::mlp, repeat, false, false});
  }
}

void add_norm(std::vector<Tensor>& out, const TransformerConfig& c, const std::string& name, Repeat repeat) {
  out.push_back({name + ".scale", {c.d_model}, Component::norm, repeat, false, false});
  if (c.norm_bias) out.push_back({name + ".bias", {c.d_model}, Component::norm, repeat, false, false});
}

}  // namespace

std::vector<Tensor> tensor_inventory(const TransformerConfig& c) {
  validate(c);
  const double D = c.d_model, N = c.q_heads, K = c.kv_heads, H = c.head_dim, V = c.vocab;
  // The width tokens are looked up at: D, or OPT-350m's narrower P, projected to D and back.
  const bool projected = c.embed_proj_dim > 0;
  const double P = projected ? c.embed_proj_dim : D;
  std::vector<Tensor> out;
  // The embedding is a lookup (one row per token), not a matmul; so is a learned position table, whose
  // row for each position is added to the token's embedding (GPT-2, OPT).
  out.push_back({"embedding", {V, P}, Component::embedding, Repeat::once, false, false});
  if (c.learned_positions > 0)
    out.push_back({"positions", {c.learned_positions, D}, Component::embedding, Repeat::once, false, false});
  if (projected) out.push_back({"W_proj_in", {P, D}, Component::projection, Repeat::once});
  for (int i = 0; i < static_cast<int>(c.norms_per_layer); ++i)
    add_norm(out, c, "norm" + std::to_string(i + 1), Repeat::per_layer);
  // §4.3: W_Q and W_O are D·N·H, W_K and W_V are D·K·H.
  out.push_back({"W_Q", {D, N, H}, Component::attention, Repeat::per_layer});
  out.push_back({"W_K", {D, K, H}, Component::attention, Repeat::per_layer});
  out.push_back({"W_V", {D, K, H}, Component::attention, Repeat::per_layer});
  out.push_back({"W_O", {N, H, D}, Component::attention, Repeat::per_layer});
  if (c.attention_bias) {
    out.push_back({"b_Q", {N, H}, Component::attention, Repeat::per_layer, false, false});
    out.push_back({"b_K", {K, H}, Component::attention, Repeat::per_layer, false, false});
    out.push_back({"b_V", {K, H}, Component::attention, Repeat::per_layer, false, false});
    out.push_back({"b_O", {D}, Component::attention, Repeat::per_layer, false, false});
  }
  if (is_moe(c)) {
    // §4.4.1: a router of D·E picks k experts per token; shared experts see every token.
    out.push_back({"router", {D, c.experts}, Component::router, Repeat::per_layer});
    const double f = c.expert_d_ff > 0 ? c.expert_d_ff : c.d_ff;
    add_mlp(out, c, f, Repeat::per_expert, "expert.");
    if (c.shared_experts > 0) add_mlp(out, c, f, Repeat::per_shared_expert, "shared_expert.");
  } else {
    add_mlp(out, c, c.d_ff, Repeat::per_layer, "");
  }
  if (c.final_norm) add_norm(out, c, "final_norm", Repeat::once);
  if (projected) out.push_back({"W_proj_out", {D, P}, Component::projection, Repeat::once});
  // Tied: the output projection reuses the embedding's storage but is still a matmul of every token.
  out.push_back({"unembedding", {P, V}, Component::unembedding, Repeat::once, c.tied_embeddings, true});
  return out;
}

double elements(const Tensor& t) {
  double n = 1;
  for (double d : t.shape) n *= d;
  return n;
}

namespace {
double repeats(const Tensor& t, const TransformerConfig& c, double experts) {
  switch (t.repeat) {
    case Repeat::once: return 1;
    case Repeat::per_layer: return c.layers;
    case Repeat::per_expert: return c.layers * experts;
    case Repeat::per_shared_expert: return c.layers * c.shared_experts;
  }
  return 0;
}
}  // namespace

double copies(const Tensor& t, const TransformerConfig& c) { return t.tied ? 0 : repeats(t, c, c.experts); }
double active_copies(const Tensor& t, const TransformerConfig& c) { return repeats(t, c, c.experts_per_token); }

std::vector<Activation> activation_inventory(const TransformerConfig& c) {
  validate(c);
  // The MLP's hidden width per token as a multiple of F: k routed experts (and the shared ones) of width
  // F_e in an MoE layer, one MLP of F in a dense one.
  double f = 1;
  if (is_moe(c)) {
    const double fe = c.expert_d_ff > 0 ? c.expert_d_ff : c.d_ff;
    f = (c.experts_per_token + c.shared_experts) * fe / c.d_ff;
  }
  const auto D = [](double x) { return SavedRule{x, 0, 0, 0}; };
  const auto Fw = [&](double x) { return SavedRule{0, x * f, 0, 0}; };
  using K = ActivationKind;
  std::vector<Activation> out{{"x (layer input)", D(1), K::layer_input},
                              {"norm1 output", D(1), K::other},
                              {"Q", {0, 0, 1, 0}, K::matmul_output},
                              {"K", {0, 0, 0, 1}, K::matmul_output},
                              {"V", {0, 0, 0, 1}, K::matmul_output},
                              {"P·V (attention output)", {0, 0, 1, 0}, K::other},
                              {"W_O output", D(1), K::matmul_output, false}};
  // A sequential block normalises the residual after attention for the MLP; a parallel block normalises
  // the layer input itself, so there is no intermediate residual to keep.
  if (!c.parallel_blocks) out.push_back({"residual after attention", D(1), K::other});
  out.push_back({"norm2 output", D(1), K::other});
  if (c.gated_mlp) {
    out.push_back({"W_in1 output", Fw(1), K::matmul_output});
    out.push_back({"W_in2 output", Fw(1), K::matmul_output});
    out.push_back({"σ(in1)·in2", Fw(1), K::other});
  } else {
    out.push_back({"W_in output", Fw(1), K::matmul_output});
    out.push_back({"σ(in)", Fw(1), K::other});
  }
  out.push_back({"W_out output", D(1), K::matmul_output, false});
  return out;
}

namespace {
// The sum of the inventory's tensors that `keep` selects.
template <class Keep>
SavedRule sum_of(const TransformerConfig& c, Keep keep) {
  SavedRule sum;
  for (const auto& a : activation_inventory(c)) {
    if (!keep(a)) continue;
    sum.d += a.per_token.d, sum.f += a.per_token.f, sum.nh += a.per_token.nh, sum.kh += a.per_token.kh;
  }
  return sum;
}
}  // namespace

SavedRule saved_of_kind(const TransformerConfig& c, ActivationKind kind) {
  return sum_of(c, [&](const Activation& a) { return a.kind == kind; });
}

SavedRule saved_for_backward(const TransformerConfig& c) {
  return sum_of(c, [](const Activation& a) { return a.read_by_backward; });
}

double param_bytes(const TransformerConfig& c, Dtype weights) {
  return param_counts(c).total * bytes_per_element(weights);
}

}  // namespace scaling
