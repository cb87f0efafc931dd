#include "scaling/sim/decoder_model.hpp"

#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include "scaling/base/format.hpp"
#include "scaling/model/tensors.hpp"

namespace scaling::sim {

namespace {
constexpr double kMaxSize = 4096;
constexpr double kMaxParams = 4194304;  // 2^22: a few tens of MB once computed in double

int size_of(double v, const char* what, const std::string& model) {
  if (v > kMaxSize)
    throw std::invalid_argument(model + ": " + what + " = " + format_number(v) +
                                ": the executed decoder takes at most " + format_number(kMaxSize));
  return static_cast<int>(v);
}

// SplitMix64: a tiny generator whose output is fixed by its definition, unlike std::uniform_real_distribution.
struct SplitMix64 {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform(double lo, double hi) { return lo + (hi - lo) * static_cast<double>(next() >> 11) * 0x1.0p-53; }
};

StoredRows random_rows(SplitMix64& g, Dtype dtype, int rows, int cols, double centre, double half_width) {
  StoredRows s = empty_rows(dtype, cols);
  std::vector<double> row(static_cast<std::size_t>(cols));
  for (int r = 0; r < rows; ++r) {
    for (double& x : row) x = g.uniform(centre - half_width, centre + half_width);
    append_row(s, row);
  }
  return s;
}

}  // namespace

DecoderShape executable_shape(const TransformerConfig& c) {
  validate(c);
  const std::string m = c.name.empty() ? "model" : c.name;
  const DecoderShape s{size_of(c.d_model, "d_model", m),   size_of(c.d_ff, "d_ff", m),
                       size_of(c.layers, "layers", m),     size_of(c.q_heads, "query heads", m),
                       size_of(c.kv_heads, "KV heads", m), size_of(c.head_dim, "head dim", m),
                       size_of(c.vocab, "vocab", m)};
  const double params = param_counts(c).total;
  if (params > kMaxParams)
    throw std::invalid_argument(m + ": " + format_number(params) + " parameters: the executed decoder takes at most " +
                                format_number(kMaxParams));
  return s;
}

namespace {
// Where an inventory tensor lives in the decoder, as `out` rows of `in` values: a model-wide tensor in the
// model, a per-layer one in `layer`. No rows when the decoder does not run it.
struct Placement {
  StoredRows* rows = nullptr;
  int out = 0, in = 0;
};

Placement place(DecoderModel& m, DecoderLayer* layer, const std::string& name) {
  const auto [D, F, L, N, K, H, V] = m.shape;
  if (!layer) {
    if (name == "embedding") return {&m.embedding, V, D};
    if (name == "unembedding") return {&m.unembedding, V, D};
    if (name == "final_norm.scale") return {&m.final_norm, 1, D};
    return {};
  }
  if (name == "norm1.scale") return {&layer->attention_norm, 1, D};
  if (name == "norm2.scale") return {&layer->mlp_norm, 1, D};
  if (name == "W_Q") return {&layer->w_q, N * H, D};
  if (name == "W_K") return {&layer->w_k, K * H, D};
  if (name == "W_V") return {&layer->w_v, K * H, D};
  if (name == "W_O") return {&layer->w_o, D, N * H};
  if (name == "W_in1") return {&layer->w_in1, F, D};
  if (name == "W_in2") return {&layer->w_in2, F, D};
  if (name == "W_out") return {&layer->w_out, D, F};
  return {};
}

const std::string kRuns =
    "the executed decoder runs a dense model with 2 RMSNorms per layer and a final one, a gated MLP and no biases";
}  // namespace

DecoderModel random_decoder(const TransformerConfig& c, Dtype weights, std::uint64_t seed) {
  require_storable(weights);
  DecoderModel m{c, executable_shape(c), weights, {}, {}, {}, {}};
  const std::string model = c.name.empty() ? "model" : c.name;
  const auto inventory = tensor_inventory(c);
  SplitMix64 g{seed};
  // One stored tensor for every copy the inventory lists: matrices in ±1/√fan_in, the embedding in ±1,
  // norm gains in 1 ± 0.1.
  auto draw = [&](const Tensor& t, DecoderLayer* layer) {
    const Placement p = place(m, layer, t.name);
    if (!p.rows)
      throw std::invalid_argument(model + ": tensor '" + t.name + "' (" + to_string(t.repeat) + "): " + kRuns);
    if (elements(t) != static_cast<double>(p.out) * p.in)
      throw std::logic_error("tensor '" + t.name + "': the inventory and the executed decoder disagree on its size");
    const double centre = t.component == Component::norm ? 1 : 0;
    const double half_width = t.component == Component::norm        ? 0.1
                              : t.component == Component::embedding ? 1
                                                                    : 1 / std::sqrt(static_cast<double>(p.in));
    *p.rows = random_rows(g, weights, p.out, p.in, centre, half_width);
  };
  m.unembedding = empty_rows(weights, m.shape.D);  // stays empty when tied: the logits read the embedding
  for (const auto& t : inventory)
    if (t.repeat == Repeat::once && !t.tied) draw(t, nullptr);
  m.layers.resize(static_cast<std::size_t>(m.shape.L));
  for (auto& layer : m.layers)
    for (const auto& t : inventory)
      if (t.repeat != Repeat::once) draw(t, &layer);
  // Every tensor the decoder runs must have come from the inventory.
  auto require = [&](const StoredRows& r, const char* name) {
    if (rows(r) == 0) throw std::invalid_argument(model + ": the inventory has no '" + name + "': " + kRuns);
  };
  require(m.embedding, "embedding");
  require(m.final_norm, "final_norm.scale");
  if (!c.tied_embeddings) require(m.unembedding, "unembedding");
  for (const auto& l : m.layers)
    for (const auto& [r, name] : {std::pair{&l.attention_norm, "norm1.scale"},
                                  {&l.mlp_norm, "norm2.scale"},
                                  {&l.w_q, "W_Q"},
                                  {&l.w_k, "W_K"},
                                  {&l.w_v, "W_V"},
                                  {&l.w_o, "W_O"},
                                  {&l.w_in1, "W_in1"},
                                  {&l.w_in2, "W_in2"},
                                  {&l.w_out, "W_out"}})
      require(*r, name);
  return m;
}

const StoredRows& logits_matrix(const DecoderModel& m) {
  return m.config.tied_embeddings ? m.embedding : m.unembedding;
}

}  // namespace scaling::sim
