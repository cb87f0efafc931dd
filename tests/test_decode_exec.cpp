// §7.1: a decode loop with a KV cache, executed on a small random decoder and checked two ways.
//  1. Its counted bytes and FLOPs equal the step-time model's terms for MHA, GQA and MQA, bf16 and int8
//     KV, bf16 and int8 weights, several batches and contexts: KV bytes read B·T·2·L·K·H·bytes, parameter
//     bytes from param_counts (embedding lookups: one row per token), FLOPs 2·B·(matmul parameters) +
//     B·L·4·N·H·T.
//  2. Its outputs equal a recomputation without any cache: the forward pass over the whole prefix, written
//     here from the definition (sharing no code with the cached decoder but the stored weights), for every
//     step: logits within 1e-12 and the same greedy tokens, each with a top-two margin wider than that bound.
//     (The two paths add in different orders — an online softmax against a two-pass one — so they agree to
//     rounding, not bit for bit; the largest difference seen is below 1e-14 for logits of order 1.)
//     The cache stores K and V rounded (bf16) or quantized (int8, one scale per vector), so the
//     recomputation rounds or quantizes its K and V the same way, again written here from the definition.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "scaling/cost/inference.hpp"
#include "scaling/hardware/chip.hpp"
#include "scaling/model/tensors.hpp"
#include "scaling/model/transformer.hpp"
#include "scaling/sim/decode_loop.hpp"

using namespace scaling;
using scaling::sim::DecoderModel;
using scaling::sim::StoredRows;

namespace {
constexpr double kLogitBound = 1e-12;

TransformerConfig tiny(int kv_heads, bool tied = false, int head_dim = 6) {
  TransformerConfig c;
  c.name = "tiny-K" + std::to_string(kv_heads) + "-H" + std::to_string(head_dim);
  c.d_model = 24, c.d_ff = 40, c.layers = 2, c.q_heads = 4, c.kv_heads = kv_heads, c.head_dim = head_dim, c.vocab = 37;
  c.tied_embeddings = tied;
  return c;
}

// ---- The recomputation without a cache, from the definitions in decoder_model.hpp and stored_rows.hpp ----
using Matrix = std::vector<std::vector<double>>;

// bfloat16 keeps 8 significant bits of a float: round f·2^(8−e) to an integer, ties to even (the default
// rounding mode of nearbyint), where f = m·2^e with m in [0.5, 1).
double round_to_bf16(double x) {
  const float f = static_cast<float>(x);
  if (f == 0) return 0;
  int e = 0;
  std::frexp(f, &e);
  return std::ldexp(std::nearbyint(std::ldexp(static_cast<double>(f), 8 - e)), e - 8);
}

// int8 with one scale per vector: s = float(max|x|/127), q = round(x/s) clamped to ±127, read back as q·s.
std::vector<double> int8_round_trip(const std::vector<double>& x) {
  double max_abs = 0;
  for (double v : x) max_abs = std::max(max_abs, std::fabs(v));
  const double s = static_cast<float>(max_abs / 127.0);
  std::vector<double> out;
  for (double v : x) out.push_back(s == 0 ? 0.0 : std::clamp(std::round(v / s), -127.0, 127.0) * s);
  return out;
}

// What the KV cache gives back for a row of KV heads, H values each, every head's vector stored on its own.
void as_stored(Dtype kv, std::vector<double>& x, std::size_t H) {
  for (std::size_t from = 0; from < x.size(); from += H) {
    std::vector<double> vec;
    for (std::size_t i = from; i < from + H; ++i) vec.push_back(x[i]);
    if (kv == Dtype::int8) vec = int8_round_trip(vec);
    for (double& v : vec) v = kv == Dtype::bf16 ? round_to_bf16(v) : kv == Dtype::fp32 ? static_cast<float>(v) : v;
    for (std::size_t i = 0; i < vec.size(); ++i) x[from + i] = vec[i];
  }
}

// The stored weights read straight from their storage.
Matrix weights(const StoredRows& s) {
  const auto cols = static_cast<std::size_t>(s.cols);
  const std::size_t n = s.fp32.size() + s.bf16.size() + s.int8.size();
  Matrix m(n / cols, std::vector<double>(cols));
  for (std::size_t i = 0; i < n; ++i) {
    double v = 0;
    if (s.dtype == Dtype::fp32) v = s.fp32[i];
    if (s.dtype == Dtype::bf16) v = std::bit_cast<float>(static_cast<std::uint32_t>(s.bf16[i]) << 16);
    if (s.dtype == Dtype::int8) v = s.int8[i] * static_cast<double>(s.int8_scales[i / cols]);
    m[i / cols][i % cols] = v;
  }
  return m;
}

std::vector<double> matvec(const Matrix& w, const std::vector<double>& x) {  // W·x, one output per row of W
  std::vector<double> y;
  for (const auto& r : w) {
    double s = 0;
    for (std::size_t c = 0; c < x.size(); ++c) s += r[c] * x[c];
    y.push_back(s);
  }
  return y;
}

std::vector<double> rms(const StoredRows& gain, const std::vector<double>& x) {
  const auto g = weights(gain)[0];
  double ss = 0;
  for (double v : x) ss += v * v;
  std::vector<double> y;
  for (std::size_t i = 0; i < x.size(); ++i)
    y.push_back(x[i] / std::sqrt(ss / static_cast<double>(x.size()) + 1e-6) * g[i]);
  return y;
}

// Rotary position p on every head of H values in x: pair (2i, 2i+1) turns by the angle p/10000^(2i/H).
void rope(std::vector<double>& x, std::size_t H, std::size_t p) {
  for (std::size_t at = 0; at < x.size(); at += H)
    for (std::size_t i = 0; 2 * i + 1 < H; ++i) {
      const double theta =
          static_cast<double>(p) / std::pow(10000.0, 2.0 * static_cast<double>(i) / static_cast<double>(H));
      const double a = x[at + 2 * i], b = x[at + 2 * i + 1];
      x[at + 2 * i] = a * std::cos(theta) - b * std::sin(theta);
      x[at + 2 * i + 1] = a * std::sin(theta) + b * std::cos(theta);
    }
}

// Logits of the last position after a full forward pass over `tokens`, every position recomputed.
std::vector<double> recompute_last_logits(const DecoderModel& m, Dtype kv, const std::vector<int>& tokens) {
  const auto N = static_cast<std::size_t>(m.shape.N), K = static_cast<std::size_t>(m.shape.K),
             H = static_cast<std::size_t>(m.shape.H), S = tokens.size();
  const Matrix embedding = weights(m.embedding);
  Matrix x;
  for (int t : tokens) x.push_back(embedding[static_cast<std::size_t>(t)]);
  for (const auto& layer : m.layers) {
    const Matrix wq = weights(layer.w_q), wk = weights(layer.w_k), wv = weights(layer.w_v), wo = weights(layer.w_o);
    Matrix q, k, v;  // per position: N·H, K·H, K·H
    for (std::size_t p = 0; p < S; ++p) {
      const auto a = rms(layer.attention_norm, x[p]);
      q.push_back(matvec(wq, a));
      k.push_back(matvec(wk, a));
      v.push_back(matvec(wv, a));
      rope(q.back(), H, p);
      rope(k.back(), H, p);
      as_stored(kv, k.back(), H);  // each KV head's vector as the cache stores it
      as_stored(kv, v.back(), H);
    }
    const Matrix w1 = weights(layer.w_in1), w2 = weights(layer.w_in2), w3 = weights(layer.w_out);
    for (std::size_t p = 0; p < S; ++p) {
      std::vector<double> heads(N * H, 0.0);
      for (std::size_t n = 0; n < N; ++n) {
        const std::size_t g = n / (N / K);  // the KV head query head n reads
        std::vector<double> score;
        for (std::size_t s = 0; s <= p; ++s) {
          double d = 0;
          for (std::size_t h = 0; h < H; ++h) d += q[p][n * H + h] * k[s][g * H + h];
          score.push_back(d / std::sqrt(static_cast<double>(H)));
        }
        const double top = *std::max_element(score.begin(), score.end());
        double z = 0;
        for (double& e : score) z += e = std::exp(e - top);
        for (std::size_t s = 0; s <= p; ++s)
          for (std::size_t h = 0; h < H; ++h) heads[n * H + h] += score[s] / z * v[s][g * H + h];
      }
      const auto o = matvec(wo, heads);
      for (std::size_t i = 0; i < o.size(); ++i) x[p][i] += o[i];
      const auto h = rms(layer.mlp_norm, x[p]);
      auto lin = matvec(w1, h);
      const auto gate = matvec(w2, h);  // W_in2 gates: silu(g) = g·sigmoid(g)
      for (std::size_t i = 0; i < lin.size(); ++i) lin[i] *= gate[i] / (1 + std::exp(-gate[i]));
      const auto out = matvec(w3, lin);
      for (std::size_t i = 0; i < out.size(); ++i) x[p][i] += out[i];
    }
  }
  const Matrix u = weights(m.config.tied_embeddings ? m.embedding : m.unembedding);
  return matvec(u, rms(m.final_norm, x.back()));
}

std::vector<std::vector<int>> prompts(int batch, int length, int vocab) {
  std::vector<std::vector<int>> p(static_cast<std::size_t>(batch));
  for (int b = 0; b < batch; ++b)
    for (int t = 0; t < length; ++t) p[static_cast<std::size_t>(b)].push_back((11 * b + 5 * t + 2) % vocab);
  return p;
}

double max_abs_difference(const std::vector<double>& a, const std::vector<double>& b) {
  double d = 0;
  for (std::size_t i = 0; i < a.size(); ++i) d = std::max(d, std::fabs(a[i] - b[i]));
  return d;
}

double top_two_margin(std::vector<double> logits) {
  std::partial_sort(logits.begin(), logits.begin() + 2, logits.end(), std::greater<>());
  return logits[0] - logits[1];
}

// ---- The step-time model's terms, written out from §7.1.5 and §7.1.6 ----
struct Expected {
  double kv_read, kv_written, kv_scales_read, kv_scales_written, param_bytes, matmul_flops, attention_flops;
};

// One call of B sequences, T_new new tokens each, after `past` cached ones (a decode step: T_new = 1).
Expected model_terms(const TransformerConfig& c, double B, double past, double T_new, Dtype w, Dtype kv) {
  const double L = c.layers, K = c.kv_heads, N = c.q_heads, H = c.head_dim, D = c.d_model, V = c.vocab;
  const auto p = param_counts(c);
  const double kv_bytes_per_token = 2 * L * K * H * bytes_per_element(kv);   // §7.1.6
  const double kv_scales_per_token = kv == Dtype::int8 ? 2 * L * K * 4 : 0;  // an fp32 scale per stored vector
  const double T = past + T_new;
  // Matmul weights: Q, K, V, O, the MLP, and the unembedding (the embedding matrix when tied) for the last token.
  const double per_token_matmul = p.attention + p.mlp;
  // Causal: new token i (1-based) attends to past + i keys.
  const double keys_attended = T_new * past + T_new * (T_new + 1) / 2;
  return {B * T * kv_bytes_per_token,
          B * T_new * kv_bytes_per_token,
          B * T * kv_scales_per_token,
          B * T_new * kv_scales_per_token,
          (p.attention + p.mlp + p.norms + V * D + B * T_new * D) * bytes_per_element(w),
          2 * B * T_new * per_token_matmul + 2 * B * V * D,
          B * L * 4 * N * H * keys_attended};
}

void check_counts(const sim::StepCounts& got, const Expected& want) {
  CHECK(got.kv_bytes_read == want.kv_read);
  CHECK(got.kv_bytes_written == want.kv_written);
  CHECK(got.kv_scale_bytes_read == want.kv_scales_read);
  CHECK(got.kv_scale_bytes_written == want.kv_scales_written);
  CHECK(got.param_bytes == want.param_bytes);
  CHECK(got.matmul_flops == want.matmul_flops);
  CHECK(got.attention_flops == want.attention_flops);
  CHECK(got.flops == want.matmul_flops + want.attention_flops);
}
}  // namespace

TEST_CASE("decode with a KV cache: counts equal the step-time model, outputs equal a recomputation without a cache") {
  // MHA, GQA (2 query heads per KV head), MQA; and an odd head dim, whose last element no rotation pairs.
  for (const auto& [K, H] : {std::pair{4, 6}, {2, 6}, {1, 6}, {2, 5}})
    for (bool tied : {false, true})
      for (Dtype w : {Dtype::bf16, Dtype::int8})
        for (Dtype kv : {Dtype::bf16, Dtype::int8})
          for (int B : {1, 3})
            for (int P : {1, 4}) {
              const auto c = tiny(K, tied, H);
              const int steps = 5;
              INFO("K " << K << ", H " << H << (tied ? " tied" : "") << ", weights " << name(w) << ", KV " << name(kv)
                        << ", B " << B << ", prompt " << P);
              const auto m = sim::random_decoder(c, w, static_cast<std::uint64_t>(2024 + 10 * K + H));
              const auto ps = prompts(B, P, m.shape.V);
              const auto gen = sim::generate_greedy(m, kv, ps, steps);

              // Counts: the prefill, then each decode step whose token attends to T = P + step keys.
              check_counts(gen.prefill, model_terms(c, B, 0, P, w, kv));
              REQUIRE(gen.steps.size() == static_cast<std::size_t>(steps));
              for (int s = 1; s <= steps; ++s) {
                const auto& got = gen.steps[static_cast<std::size_t>(s - 1)];
                const double T = P + s;
                CHECK(got.context == P + s);
                check_counts(got, model_terms(c, B, P + s - 1, 1, w, kv));
                // The same terms through the library's accounting (the model chapter 7 uses).
                CHECK(got.kv_bytes_read == B * T * kv_bytes_per_token(c, kv));
                CHECK(got.kv_bytes_read == B * T * 2 * c.layers * c.kv_heads * c.head_dim * bytes_per_element(kv));
                CHECK(got.flops == B * forward_flops_per_token(c, T).total);
                // Against the book's "parameter size" (every parameter once): the lookup reads B rows, not
                // the embedding matrix, whose V·D parameters are read only when they double as the unembedding.
                const auto p = param_counts(c);
                CHECK(got.param_bytes - p.total * bytes_per_element(w) ==
                      (B * c.d_model - (tied ? 0 : c.vocab * c.d_model)) * bytes_per_element(w));
                // int8 weights: one fp32 scale per output row read (the KV scales are in check_counts).
                const double weight_rows =
                    c.layers * (c.q_heads * c.head_dim + 2 * c.kv_heads * c.head_dim + 2 * c.d_model + 2 * c.d_ff + 2) +
                    1 + c.vocab + B;
                CHECK(got.param_scale_bytes == (w == Dtype::int8 ? 4 * weight_rows : 0));
              }

              // Outputs: every call's logits against a full forward pass over the prefix it had.
              double worst = 0;
              for (int b = 0; b < B; ++b) {
                auto prefix = ps[static_cast<std::size_t>(b)];
                for (int call = 0; call <= steps; ++call) {
                  const auto want = recompute_last_logits(m, kv, prefix);
                  const auto& got = gen.logits[static_cast<std::size_t>(call)][static_cast<std::size_t>(b)];
                  worst = std::max(worst, max_abs_difference(got, want));
                  const int token = gen.tokens[static_cast<std::size_t>(b)][static_cast<std::size_t>(call)];
                  CHECK(token == static_cast<int>(std::max_element(want.begin(), want.end()) - want.begin()));
                  CHECK(top_two_margin(want) > 2 * kLogitBound);  // so equal tokens are implied, not luck
                  prefix.push_back(token);
                }
              }
              CHECK(worst <= kLogitBound);
            }
}

TEST_CASE("a prompt prefilled in chunks gives the logits and the counts of one prefill") {
  for (int K : {4, 1})
    for (Dtype kv : {Dtype::bf16, Dtype::int8}) {
      INFO("K " << K << ", KV " << name(kv));
      const auto c = tiny(K);
      const auto m = sim::random_decoder(c, Dtype::bf16, 77);
      const auto whole = prompts(2, 7, m.shape.V);
      std::vector<std::vector<int>> first, second;
      for (const auto& p : whole) {
        first.emplace_back(p.begin(), p.begin() + 3);
        second.emplace_back(p.begin() + 3, p.end());
      }
      auto cache = sim::empty_cache(m.shape, kv, 2);
      check_counts(sim::forward_with_cache(m, cache, first).counts, model_terms(c, 2, 0, 3, Dtype::bf16, kv));
      const auto chunked = sim::forward_with_cache(m, cache, second);
      check_counts(chunked.counts, model_terms(c, 2, 3, 4, Dtype::bf16, kv));
      for (std::size_t b = 0; b < 2; ++b)
        CHECK(max_abs_difference(chunked.logits[b], recompute_last_logits(m, kv, whole[b])) <= kLogitBound);
    }
}

TEST_CASE("the KV cache holds B·T·2·L·K·H·bytes, and int8 and bf16 really round what they store") {
  const auto c = tiny(2);
  const auto m = sim::random_decoder(c, Dtype::bf16, 5);
  for (Dtype kv : {Dtype::fp32, Dtype::bf16, Dtype::int8}) {
    INFO("KV " << name(kv));
    auto cache = sim::empty_cache(m.shape, kv, 3);
    sim::forward_with_cache(m, cache, prompts(3, 6, m.shape.V));
    sim::forward_with_cache(m, cache, prompts(3, 1, m.shape.V));
    const auto held = sim::held_bytes(cache);
    CHECK(held.value_bytes == 3 * 7 * kv_bytes_per_token(c, kv));
    CHECK(held.scale_bytes == (kv == Dtype::int8 ? 3 * 7 * 2 * c.layers * c.kv_heads * 4 : 0));
  }
  // The weights take their dtype's bytes: the decoder stores exactly the inventory, param_bytes of it
  // (tied: no unembedding of its own).
  for (bool tied : {false, true})
    for (Dtype w : {Dtype::fp32, Dtype::bf16, Dtype::int8}) {
      const auto ct = tiny(2, tied);
      const auto mw = sim::random_decoder(ct, w, 5);
      const double unembedding = sim::held_bytes(mw.unembedding).value_bytes;
      double held =
          sim::held_bytes(mw.embedding).value_bytes + unembedding + sim::held_bytes(mw.final_norm).value_bytes;
      for (const auto& l : mw.layers)
        for (const auto* s :
             {&l.attention_norm, &l.mlp_norm, &l.w_q, &l.w_k, &l.w_v, &l.w_o, &l.w_in1, &l.w_in2, &l.w_out})
          held += sim::held_bytes(*s).value_bytes;
      CHECK(held == param_bytes(ct, w));
      CHECK(held == param_counts(ct).total * bytes_per_element(w));
      CHECK(unembedding == (tied ? 0 : ct.vocab * ct.d_model * bytes_per_element(w)));
    }
  // Quantization is real: the int8 cache changes the logits by far more than the comparison's bound, so
  // the recomputation agrees only because it quantizes K and V the same way.
  const auto prompt = prompts(1, 8, m.shape.V);
  const auto exact = sim::generate_greedy(m, Dtype::fp32, prompt, 0).logits[0][0];
  const auto int8 = sim::generate_greedy(m, Dtype::int8, prompt, 0).logits[0][0];
  const auto bf16 = sim::generate_greedy(m, Dtype::bf16, prompt, 0).logits[0][0];
  CHECK(max_abs_difference(exact, int8) > 1e-4);
  CHECK(max_abs_difference(exact, bf16) > 1e-5);
  CHECK(max_abs_difference(int8, recompute_last_logits(m, Dtype::int8, prompt[0])) <= kLogitBound);
  CHECK(max_abs_difference(int8, recompute_last_logits(m, Dtype::fp32, prompt[0])) > 1e-4);
  // Same seed, same model; another seed, another model.
  CHECK(sim::generate_greedy(sim::random_decoder(c, Dtype::bf16, 5), Dtype::bf16, prompt, 0).logits[0][0] == bf16);
  CHECK(sim::generate_greedy(sim::random_decoder(c, Dtype::bf16, 6), Dtype::bf16, prompt, 0).logits[0][0] != bf16);
}

TEST_CASE("stored rows read back what their format defines: bf16 to nearest even, int8 per-row scale") {
  // Exact ties between two bfloat16 neighbours go to the even one: 1 + 2^-8 lies halfway between 1 and
  // 1 + 2^-7 (odd), 1 + 3·2^-8 halfway between 1 + 2^-7 (odd) and 1 + 2^-6 (even).
  std::vector<double> row{1 + 0x1p-8, 1 + 3 * 0x1p-8, -(1 + 0x1p-8), 0.1, -3.3e-5, 1e4 / 3, 0, 65504.5};
  std::uint64_t state = 12345;
  for (int i = 0; i < 56; ++i) {  // and random values over many binades
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const double u = static_cast<double>(state >> 11) * 0x1p-53;
    row.push_back((i % 2 ? -1 : 1) * std::ldexp(0.5 + u, i % 40 - 20));
  }
  CHECK(round_to_bf16(row[0]) == 1.0);
  CHECK(round_to_bf16(row[1]) == 1 + 0x1p-6);
  for (Dtype d : {Dtype::fp32, Dtype::bf16, Dtype::int8}) {
    INFO(name(d));
    auto stored = sim::empty_rows(d, static_cast<int>(row.size()));
    sim::append_row(stored, row);
    sim::append_row(stored, std::vector<double>(row.size(), 0.0));  // an all-zero row reads back zeros
    std::vector<double> got(row.size());
    sim::ByteCount read;
    sim::read_row(stored, 0, got, read);
    auto want = row;
    as_stored(d, want, want.size());
    CHECK(got == want);
    CHECK(read.value_bytes == static_cast<double>(row.size()) * bytes_per_element(d));
    CHECK(read.scale_bytes == (d == Dtype::int8 ? 4 : 0));
    sim::read_row(stored, 1, got, read);
    CHECK(got == std::vector<double>(row.size(), 0.0));
    CHECK(sim::rows(stored) == 2);
    CHECK_THROWS_AS(sim::read_row(stored, 2, got, read), std::out_of_range);
    // One column is a row too (a head dim of 1).
    auto single = sim::empty_rows(d, 1);
    sim::append_row(single, std::vector<double>{0.3});
    CHECK(sim::rows(single) == 1);
  }
  CHECK_THROWS_AS(sim::empty_rows(Dtype::bf16, 0), std::invalid_argument);
  // int8 of a row so small that its scale is a subnormal float: s = max/127 rounds to one step of 2^-149,
  // far below max/127, and the clamp keeps q within ±127.
  const double a = 1.49 * 127 * 0x1p-149;
  auto tiny_row = sim::empty_rows(Dtype::int8, 2);
  sim::append_row(tiny_row, std::vector<double>{a, -a});
  std::vector<double> back(2);
  sim::ByteCount ignored;
  sim::read_row(tiny_row, 0, back, ignored);
  CHECK(back == std::vector<double>{127 * 0x1p-149, -127 * 0x1p-149});
  CHECK(back == int8_round_trip({a, -a}));
}

TEST_CASE("the random decoder: uniform weights in the ranges it states, and its parameter limit exactly") {
  const auto c = tiny(2);
  const auto m = sim::random_decoder(c, Dtype::fp32, 9);
  auto extent = [](const StoredRows& s) {
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (const auto& r : weights(s))
      for (double v : r) lo = std::min(lo, v), hi = std::max(hi, v);
    return std::pair{lo, hi};
  };
  // Embedding in ±1; a matrix in ±1/√fan_in; norm gains in 1 ± 0.1 — each range nearly filled (fp32 rounding).
  const auto [e_lo, e_hi] = extent(m.embedding);
  CHECK(e_lo >= -1.0000001);
  CHECK(e_hi <= 1.0000001);
  CHECK(e_hi - e_lo > 1.9);
  for (const auto& layer : m.layers)
    for (const auto* w : {&layer.w_q, &layer.w_o, &layer.w_out}) {
      const double bound = 1 / std::sqrt(static_cast<double>(w->cols));
      const auto [lo, hi] = extent(*w);
      CHECK(lo >= -bound * 1.0000001);
      CHECK(hi <= bound * 1.0000001);
      CHECK(hi - lo > 1.8 * bound);
    }
  const auto [g_lo, g_hi] = extent(m.final_norm);
  CHECK(g_lo >= 0.8999999);
  CHECK(g_hi <= 1.1000001);
  // The limit is 2^22 parameters: a tied model of exactly that many is taken, one more vocabulary row is
  // not. (D = 64 makes every term a multiple of 64, so a vocabulary size reaches 2^22 exactly.)
  TransformerConfig big;
  big.d_model = 64, big.d_ff = 4096, big.layers = 5, big.q_heads = 4, big.kv_heads = 4, big.head_dim = 16;
  big.vocab = 1, big.tied_embeddings = true;
  big.vocab = 1 + (0x1p22 - param_counts(big).total) / 64;
  REQUIRE(param_counts(big).total == 0x1p22);
  CHECK_NOTHROW(sim::executable_shape(big));
  big.vocab += 1;
  CHECK_THROWS_WITH_AS(sim::executable_shape(big), doctest::Contains("parameters"), std::invalid_argument);
}

TEST_CASE("executed counts for chapter 7: a decode step against recomputing the prefix without a cache") {
  for (int K : {4, 2, 1})
    for (Dtype kv : {Dtype::bf16, Dtype::int8})
      for (int B : {1, 2, 8})
        for (int T : {1, 2, 16, 33}) {
          INFO("K " << K << ", KV " << name(kv) << ", B " << B << ", T " << T);
          const auto c = tiny(K);
          const auto step = sim::executed_decode_step(c, B, T, Dtype::bf16, kv);
          CHECK(step.context == T);
          CHECK(step.new_tokens == 1);
          check_counts(step, model_terms(c, B, T - 1, 1, Dtype::bf16, kv));
          const auto again = sim::executed_recompute_step(c, B, T, Dtype::bf16, kv);
          CHECK(again.new_tokens == T);
          check_counts(again, model_terms(c, B, 0, T, Dtype::bf16, kv));
          // Without a cache every weight matmul runs on all T tokens and attention is the causal triangle.
          const auto p = param_counts(c);
          CHECK(again.flops == 2 * B * T * (p.attention + p.mlp) + 2 * B * c.vocab * c.d_model +
                                   B * c.layers * 4 * c.q_heads * c.head_dim * T * (T + 1) / 2.0);
          if (T > 1) CHECK(again.flops > step.flops);
        }
}

TEST_CASE("the executed decoder rejects what it cannot run, naming the rule") {
  const auto c = tiny(2);
  // The decoder runs its tensor inventory; a tensor it has no code for, or lacks, is named; so is a size
  // beyond its limits.
  const std::vector<std::pair<std::function<void(TransformerConfig&)>, std::string>> rejected{
      {[](auto& x) { x.experts = 4, x.experts_per_token = 2; }, "tensor 'router'"},
      {[](auto& x) { x.attention_bias = true; }, "tensor 'b_Q'"},
      {[](auto& x) { x.gated_mlp = false; }, "no 'W_in2'"},
      {[](auto& x) { x.norms_per_layer = 4; }, "tensor 'norm3.scale'"},
      {[](auto& x) { x.final_norm = false; }, "no 'final_norm.scale'"},
      {[](auto& x) { x.d_model = 4096, x.d_ff = 4096; }, "parameters"},
      {[](auto& x) { x.vocab = 1e9; }, "vocab = "},
  };
  for (const auto& [change, message] : rejected) {
    auto bad = c;
    change(bad);
    CHECK_THROWS_WITH_AS(sim::random_decoder(bad, Dtype::bf16, 1), doctest::Contains(message.c_str()),
                         std::invalid_argument);
  }
  CHECK_THROWS_WITH_AS(sim::random_decoder(c, Dtype::fp8, 1), doctest::Contains("fp8"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(sim::executed_decode_step(c, 1, 8, Dtype::bf16, Dtype::int4), doctest::Contains("int4"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(sim::executed_decode_step(c, 0, 8, Dtype::bf16, Dtype::bf16), doctest::Contains("batch = 0"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(sim::executed_decode_step(c, 1, 0, Dtype::bf16, Dtype::bf16), doctest::Contains("context = 0"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(sim::executed_recompute_step(c, 1, 4097, Dtype::bf16, Dtype::bf16),
                       doctest::Contains("context = 4097"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(sim::executed_decode_step(c, 1025, 1, Dtype::bf16, Dtype::bf16),
                       doctest::Contains("batch = 1025"), std::invalid_argument);
  CHECK(sim::executed_decode_step(c, 1024, 1, Dtype::bf16, Dtype::bf16).batch == 1024);  // the largest batch runs
  CHECK_THROWS_WITH_AS(sim::executed_decode_step(c, 1024, 4096, Dtype::bf16, Dtype::bf16),
                       doctest::Contains("batch × context"), std::invalid_argument);
  const auto m = sim::random_decoder(c, Dtype::bf16, 1);
  auto cache = sim::empty_cache(m.shape, Dtype::bf16, 2);
  CHECK_THROWS_WITH_AS(sim::forward_with_cache(m, cache, {{1, 2}, {3}}), doctest::Contains("same number"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(sim::forward_with_cache(m, cache, {{1}, {37}}), doctest::Contains("token 37"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(sim::forward_with_cache(m, cache, {{1}}), doctest::Contains("2 sequences"),
                       std::invalid_argument);
  CHECK_THROWS_AS(sim::generate_greedy(m, Dtype::bf16, {{1}}, -1), std::invalid_argument);
  CHECK_THROWS_AS(sim::empty_cache(m.shape, Dtype::bf16, 0), std::invalid_argument);
  CHECK_THROWS_AS(sim::keys(cache, 2, 0), std::out_of_range);
  CHECK_THROWS_AS(sim::values(cache, 0, c.layers), std::out_of_range);
  CHECK_THROWS_AS(sim::keys(cache, -1, 0), std::out_of_range);
  // Greedy picks the largest logit, the first on a tie.
  CHECK(sim::greedy_token(std::vector<double>{1, 3, 3, 2}) == 1);
  CHECK(sim::greedy_token(std::vector<double>{-2}) == 0);
  CHECK_THROWS_AS(sim::greedy_token(std::vector<double>{}), std::invalid_argument);
}

TEST_CASE("executed decode steps against chapter 7's step model (cost/inference.hpp): t_kv, t_params, t_flops") {
  // The executed loop is the independent side: its bytes and FLOPs are counted where the decoder reads and
  // multiplies. The library's terms must be those counts over the slice's bandwidth and FLOPs, with the one
  // documented gap: §7's parameter bytes count every stored weight once, while the decoder reads B rows of
  // the embedding instead of the whole matrix (which it reads in full only when it doubles as the unembedding).
  const auto& v5e = chip("tpu-v5e");
  for (int K : {4, 2, 1})  // MHA, GQA, MQA
    for (Dtype w : {Dtype::bf16, Dtype::int8})
      for (Dtype kv : {Dtype::bf16, Dtype::int8})
        for (bool tied : {false, true})
          for (const auto& [B, T] : {std::pair{1, 1}, {3, 9}, {8, 33}}) {
            const auto c = tiny(K, tied);
            INFO("K " << K << ", weights " << name(w) << ", KV " << name(kv) << (tied ? " tied" : "") << ", B " << B
                      << ", T " << T);
            const auto got = sim::executed_decode_step(c, B, T, w, kv);
            const double chips = 4;
            const auto in = decode_inputs(c, v5e, chips, {w, kv, Dtype::bf16});
            const auto s = decode_terms(in, B, T);
            CHECK(s.kv_bytes == got.kv_bytes_read);
            CHECK(s.flops == got.matmul_flops);
            const double D = c.d_model, V = c.vocab, lookup_gap = ((tied ? 0 : V) - B) * D * bytes_per_element(w);
            CHECK(s.param_bytes - lookup_gap == got.param_bytes);
            // The times are those counts over the slice's figures.
            CHECK(s.t_kv_s == doctest::Approx(got.kv_bytes_read / (chips * 8.1e11)).epsilon(1e-14));
            CHECK(s.t_flops_s == doctest::Approx(got.matmul_flops / (chips * 1.97e14)).epsilon(1e-14));
            CHECK(s.t_params_s ==
                  doctest::Approx((got.param_bytes + lookup_gap) / (chips * 8.1e11)).epsilon(1e-14));
            // Attention FLOPs are left out of the step (§7.1.4: the KV read bounds attention), but the
            // library's per-key figure is what the decoder does: 4·L·N·H per visible key.
            CHECK(got.attention_flops == B * T * in.attention_flops_per_key);
          }
}
