#include "scaling/sim/decoder_model.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "scaling/base/format.hpp"

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

StoredRows random_matrix(SplitMix64& g, Dtype dtype, int rows, int fan_in) {
  return random_rows(g, dtype, rows, fan_in, 0, 1 / std::sqrt(static_cast<double>(fan_in)));
}
StoredRows random_gain(SplitMix64& g, Dtype dtype, int d) { return random_rows(g, dtype, 1, d, 1, 0.1); }
}  // namespace

DecoderShape executable_shape(const TransformerConfig& c) {
  validate(c);
  const std::string m = c.name.empty() ? "model" : c.name;
  if (is_moe(c)) throw std::invalid_argument(m + ": the executed decoder runs dense models only, not experts");
  if (!c.gated_mlp) throw std::invalid_argument(m + ": the executed decoder runs a gated MLP only");
  if (c.attention_bias || c.mlp_bias || c.norm_bias)
    throw std::invalid_argument(m + ": the executed decoder has no biases (attention, MLP or norm)");
  if (c.norms_per_layer != 2 || !c.final_norm)
    throw std::invalid_argument(m + ": the executed decoder has 2 norms per layer and a final norm, not " +
                                format_number(c.norms_per_layer) + (c.final_norm ? " and a final norm" : " and none"));
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

DecoderModel random_decoder(const TransformerConfig& c, Dtype weights, std::uint64_t seed) {
  require_storable(weights);
  DecoderModel m{c, executable_shape(c), weights, {}, {}, {}, {}};
  const auto [D, F, L, N, K, H, V] = m.shape;
  SplitMix64 g{seed};
  m.embedding = random_rows(g, weights, V, D, 0, 1);
  m.unembedding = c.tied_embeddings ? empty_rows(weights, D) : random_matrix(g, weights, V, D);
  for (int l = 0; l < L; ++l) {
    DecoderLayer layer;
    layer.attention_norm = random_gain(g, weights, D);
    layer.w_q = random_matrix(g, weights, N * H, D);
    layer.w_k = random_matrix(g, weights, K * H, D);
    layer.w_v = random_matrix(g, weights, K * H, D);
    layer.w_o = random_matrix(g, weights, D, N * H);
    layer.mlp_norm = random_gain(g, weights, D);
    layer.w_in1 = random_matrix(g, weights, F, D);
    layer.w_in2 = random_matrix(g, weights, F, D);
    layer.w_out = random_matrix(g, weights, D, F);
    m.layers.push_back(std::move(layer));
  }
  m.final_norm = random_gain(g, weights, D);
  return m;
}

const StoredRows& logits_matrix(const DecoderModel& m) {
  return m.config.tied_embeddings ? m.embedding : m.unembedding;
}

}  // namespace scaling::sim
