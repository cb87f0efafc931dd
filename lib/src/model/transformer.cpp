#include "scaling/model/transformer.hpp"

#include <cmath>
#include <stdexcept>

#include "scaling/base/format.hpp"
#include "scaling/base/validate.hpp"
#include "scaling/model/tensors.hpp"

namespace scaling {

namespace {
// A count of the model (layers, heads, …): the one positive-whole-number rule of base/validate.hpp, named
// "<model>: <what>".
void require_positive(double v, const char* what, const std::string& model) {
  check::positive_whole(model + ": " + what, v);
}

}  // namespace

bool is_moe(const TransformerConfig& c) { return c.experts > 0; }

void validate(const TransformerConfig& c) {
  const std::string m = c.name.empty() ? "model" : c.name;
  require_positive(c.d_model, "d_model", m);
  require_positive(c.d_ff, "d_ff", m);
  require_positive(c.layers, "layers", m);
  require_positive(c.q_heads, "query heads", m);
  require_positive(c.kv_heads, "KV heads", m);
  require_positive(c.head_dim, "head dim", m);
  require_positive(c.vocab, "vocab", m);
  if (std::fmod(c.q_heads, c.kv_heads) != 0)
    throw std::invalid_argument(m + ": " + format_number(c.kv_heads) + " KV heads do not divide " +
                                format_number(c.q_heads) + " query heads");
  if (c.norms_per_layer < 0) throw std::invalid_argument(m + ": norms per layer must not be negative");
  // 0 means "none" for both; otherwise a count of rows or a width.
  if (c.learned_positions != 0) require_positive(c.learned_positions, "learned positions", m);
  if (c.embed_proj_dim != 0) require_positive(c.embed_proj_dim, "embedding projection width", m);
  if (is_moe(c)) {
    require_positive(c.experts_per_token, "experts per token", m);
    if (c.experts_per_token > c.experts)
      throw std::invalid_argument(m + ": " + format_number(c.experts_per_token) + " experts per token exceed the " +
                                  format_number(c.experts) + " experts");
    if (c.shared_experts < 0) throw std::invalid_argument(m + ": shared experts must not be negative");
  }
}

ParamCounts param_counts(const TransformerConfig& c) {
  ParamCounts p{};
  for (const auto& t : tensor_inventory(c)) {
    const double stored = elements(t) * copies(t, c);
    switch (t.component) {
      case Component::embedding: p.embedding += stored; break;
      case Component::unembedding: p.unembedding += stored; break;
      case Component::attention: p.attention += stored; break;
      case Component::mlp: p.mlp += stored; break;
      case Component::norm: p.norms += stored; break;
      case Component::router: p.router += stored; break;
      case Component::projection: p.projection += stored; break;
    }
    p.total += stored;
    if (t.repeat == Repeat::once) p.once += stored;
    // A token uses k routed experts of each MoE layer; a tied unembedding is the embedding, counted there.
    p.active += t.tied ? 0 : elements(t) * active_copies(t, c);
  }
  return p;
}

TokenFlops forward_flops_per_token(const TransformerConfig& c, double context) {
  if (!std::isfinite(context) || context < 0)
    throw std::invalid_argument("context = " + format_number(context) + ": must be a non-negative number");
  // §4.1: every matmul weight a token meets costs a multiply and an add. Lookups, norms and biases are
  // elementwise work and left out, as §4.3 leaves them out.
  TokenFlops f{};
  for (const auto& t : tensor_inventory(c)) {
    if (!t.matmul) continue;
    const double flops = 2 * elements(t) * active_copies(t, c);
    switch (t.component) {
      case Component::attention: f.qkvo += flops; break;
      case Component::mlp: f.mlp += flops; break;
      case Component::router: f.router += flops; break;
      case Component::unembedding: f.unembedding += flops; break;
      case Component::projection: f.projection += flops; break;
      case Component::embedding:
      case Component::norm: break;
    }
  }
  const double L = c.layers, N = c.q_heads, H = c.head_dim;
  f.attention = L * 2 * 2 * N * H * context;  // Q·Kᵀ and P·V, each 2·N·H per key
  f.total = f.mlp + f.qkvo + f.router + f.attention + f.unembedding + f.projection;
  return f;
}

double training_flops_per_token(const TransformerConfig& c, double context) {
  return 3 * forward_flops_per_token(c, context).total;
}

double six_active_flops_per_token(const TransformerConfig& c) { return 6 * param_counts(c).active; }

double tp_reductions_per_layer(const TransformerConfig& c) {
  validate(c);
  return c.parallel_blocks ? 1 : 2;
}

double kv_bytes_per_token(const TransformerConfig& c, Dtype kv) {
  validate(c);
  return 2 * c.layers * c.kv_heads * c.head_dim * bytes_per_element(kv);
}

}  // namespace scaling
