#include "scaling/sim/decode_loop.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

namespace scaling::sim {

namespace {
constexpr int kMaxBatch = 1024;
constexpr int kMaxContext = 4096;
constexpr int kMaxBatchTokens = 65536;
constexpr std::uint64_t kChapterSeed = 7;

using Rows = std::vector<double>;  // M rows of some width, row-major

// What one call has read, written and computed so far.
struct Tally {
  ByteCount params, kv_read, kv_written;
  double matmul_flops = 0, attention_flops = 0;
};

std::span<double> row(Rows& x, std::size_t r, std::size_t width) { return {x.data() + r * width, width}; }
std::span<const double> row(const Rows& x, std::size_t r, std::size_t width) { return {x.data() + r * width, width}; }
// Head n of a row that holds heads of `dim` values side by side.
std::span<double> head(std::span<double> r, std::size_t n, std::size_t dim) { return r.subspan(n * dim, dim); }
std::span<const double> head(std::span<const double> r, std::size_t n, std::size_t dim) {
  return r.subspan(n * dim, dim);
}

double dot(std::span<const double> a, std::span<const double> b) {
  double sum = 0;
  for (std::size_t i = 0; i < a.size(); ++i) sum += a[i] * b[i];
  return sum;
}

// y[i][o] = Σ_c x[i][c]·W[o][c] for all M input rows. Each weight row is read once and used M times, as
// a batched matmul reads a weight once for the whole batch (§7.1.3).
Rows matmul(const StoredRows& w, const Rows& x, std::size_t M, Tally& tally) {
  const auto in = static_cast<std::size_t>(w.cols), out = static_cast<std::size_t>(rows(w));
  Rows y(M * out);
  std::vector<double> weight(in);
  for (std::size_t o = 0; o < out; ++o) {
    read_row(w, static_cast<int>(o), weight, tally.params);
    for (std::size_t i = 0; i < M; ++i) {
      y[i * out + o] = dot(row(x, i, in), weight);
      tally.matmul_flops += 2.0 * static_cast<double>(in);
    }
  }
  return y;
}

// RMSNorm of every row: x / √(mean(x²) + ε) ⊙ g, the gain read once.
Rows rms_norm(const StoredRows& gain, const Rows& x, std::size_t M, Tally& tally) {
  const auto d = static_cast<std::size_t>(gain.cols);
  std::vector<double> g(d);
  read_row(gain, 0, g, tally.params);
  Rows y(x.size());
  for (std::size_t i = 0; i < M; ++i) {
    const auto xi = row(x, i, d);
    const double inv = 1 / std::sqrt(dot(xi, xi) / static_cast<double>(d) + 1e-6);
    auto yi = row(y, i, d);
    for (std::size_t c = 0; c < d; ++c) yi[c] = xi[c] * inv * g[c];
  }
  return y;
}

// Rotary positions: pair (2i, 2i+1) of a head turns by position·10000^(−2i/H); an odd last element stays.
void rotate(std::span<double> h, std::size_t position) {
  const double H = static_cast<double>(h.size());
  for (std::size_t i = 0; 2 * i + 1 < h.size(); ++i) {
    const double angle = static_cast<double>(position) * std::pow(10000.0, -2.0 * static_cast<double>(i) / H);
    const double c = std::cos(angle), s = std::sin(angle), a = h[2 * i], b = h[2 * i + 1];
    h[2 * i] = a * c - b * s;
    h[2 * i + 1] = a * s + b * c;
  }
}

// Causal attention of sequence b's new tokens over its cache, which already holds their keys. Each
// cached key and value vector is read once per KV head and shared by the N/K query heads of its group;
// each query keeps a running max, denominator and output (online softmax, §4.7), so one pass over the
// keys suffices. q and out hold the B·T new tokens' rows of N·H.
void attend(const DecoderShape& s, KVCache& cache, std::size_t b, std::size_t l, std::size_t past, std::size_t T,
            const Rows& q, Rows& out, Tally& tally) {
  const auto N = static_cast<std::size_t>(s.N), K = static_cast<std::size_t>(s.K), H = static_cast<std::size_t>(s.H);
  const std::size_t group = N / K;
  const double tau = 1 / std::sqrt(static_cast<double>(H));
  const StoredRows &key_rows = keys(cache, static_cast<int>(b), static_cast<int>(l)),
                   &value_rows = values(cache, static_cast<int>(b), static_cast<int>(l));
  std::vector<double> k(H), v(H);
  for (std::size_t kv = 0; kv < K; ++kv) {
    // Running state of query (t, j): j-th query head of this group, new token t.
    std::vector<double> max(T * group, -std::numeric_limits<double>::infinity()), denom(T * group, 0.0),
        acc(T * group * H, 0.0);
    for (std::size_t pos = 0; pos < past + T; ++pos) {
      read_row(key_rows, static_cast<int>(pos * K + kv), k, tally.kv_read);
      read_row(value_rows, static_cast<int>(pos * K + kv), v, tally.kv_read);
      for (std::size_t t = pos > past ? pos - past : 0; t < T; ++t)  // new token t sits at position past + t
        for (std::size_t j = 0; j < group; ++j) {
          const std::size_t i = t * group + j;
          const double score = tau * dot(head(row(q, b * T + t, N * H), kv * group + j, H), k);
          const double new_max = std::max(max[i], score);
          const double rescale = std::exp(max[i] - new_max), weight = std::exp(score - new_max);
          max[i] = new_max;
          denom[i] = denom[i] * rescale + weight;
          for (std::size_t h = 0; h < H; ++h) acc[i * H + h] = acc[i * H + h] * rescale + weight * v[h];
          tally.attention_flops += 2.0 * static_cast<double>(H) + 2.0 * static_cast<double>(H);  // q·k, then p·v
        }
    }
    for (std::size_t t = 0; t < T; ++t)
      for (std::size_t j = 0; j < group; ++j) {
        const std::size_t i = t * group + j;
        auto o = head(row(out, b * T + t, N * H), kv * group + j, H);
        for (std::size_t h = 0; h < H; ++h) o[h] = acc[i * H + h] / denom[i];
      }
  }
}

// The limits of what the executed decoder takes: a batch, a context (keys the last token attends to) and
// their product, which bounds the stored cache and the work of one call.
void check_size(long batch, long context) {
  if (batch < 1 || batch > kMaxBatch)
    throw std::invalid_argument("batch = " + std::to_string(batch) + ": must lie in 1…" + std::to_string(kMaxBatch));
  if (context < 1 || context > kMaxContext)
    throw std::invalid_argument("context = " + std::to_string(context) + ": must lie in 1…" +
                                std::to_string(kMaxContext));
  if (batch * context > kMaxBatchTokens)
    throw std::invalid_argument("batch × context = " + std::to_string(batch * context) + ": must be at most " +
                                std::to_string(kMaxBatchTokens));
}

void check_request(const DecoderModel& m, const KVCache& cache, const std::vector<std::vector<int>>& tokens) {
  if (cache.batch != static_cast<int>(tokens.size()))
    throw std::invalid_argument("the cache holds " + std::to_string(cache.batch) + " sequences, the call gives " +
                                std::to_string(tokens.size()));
  if (cache.layers != m.shape.L || cache.kv_heads != m.shape.K || cache.head_dim != m.shape.H)
    throw std::invalid_argument("the cache was made for another model shape");
  const int past = cached_tokens(cache, 0);
  for (int b = 0; b < cache.batch; ++b) {
    const auto& seq = tokens[static_cast<std::size_t>(b)];
    if (seq.empty() || seq.size() != tokens[0].size())
      throw std::invalid_argument("every sequence needs the same number of new tokens, at least one");
    if (cached_tokens(cache, b) != past)
      throw std::invalid_argument("every sequence's cache must hold the same number of tokens");
    for (int t : seq)
      if (t < 0 || t >= m.shape.V)
        throw std::invalid_argument("token " + std::to_string(t) + ": must lie in 0…" + std::to_string(m.shape.V - 1));
  }
  check_size(cache.batch, past + static_cast<long>(tokens[0].size()));
}
}  // namespace

ForwardOutput forward_with_cache(const DecoderModel& m, KVCache& cache, const std::vector<std::vector<int>>& tokens) {
  check_request(m, cache, tokens);
  const auto D = static_cast<std::size_t>(m.shape.D), N = static_cast<std::size_t>(m.shape.N),
             K = static_cast<std::size_t>(m.shape.K), H = static_cast<std::size_t>(m.shape.H);
  const auto B = static_cast<std::size_t>(cache.batch), T = tokens[0].size(), M = B * T;
  const auto past = static_cast<std::size_t>(cached_tokens(cache, 0));
  Tally tally;

  // Embedding lookup: one row of D per token; row b·T + t of x is sequence b's new token t.
  Rows x(M * D);
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t t = 0; t < T; ++t) read_row(m.embedding, tokens[b][t], row(x, b * T + t, D), tally.params);

  for (std::size_t l = 0; l < m.layers.size(); ++l) {
    const auto& layer = m.layers[l];
    const Rows a = rms_norm(layer.attention_norm, x, M, tally);
    Rows q = matmul(layer.w_q, a, M, tally), k = matmul(layer.w_k, a, M, tally);
    const Rows v = matmul(layer.w_v, a, M, tally);
    for (std::size_t i = 0; i < M; ++i) {
      for (std::size_t n = 0; n < N; ++n) rotate(head(row(q, i, N * H), n, H), past + i % T);
      for (std::size_t kv = 0; kv < K; ++kv) rotate(head(row(k, i, K * H), kv, H), past + i % T);
    }
    // Append the new keys and values: one stored row per (position, KV head). What is written is what the
    // storage grew by.
    for (std::size_t b = 0; b < B; ++b) {
      StoredRows &key_rows = keys(cache, static_cast<int>(b), static_cast<int>(l)),
                 &value_rows = values(cache, static_cast<int>(b), static_cast<int>(l));
      const ByteCount before_k = held_bytes(key_rows), before_v = held_bytes(value_rows);
      for (std::size_t t = 0; t < T; ++t)
        for (std::size_t kv = 0; kv < K; ++kv) {
          append_row(key_rows, head(row(std::as_const(k), b * T + t, K * H), kv, H));
          append_row(value_rows, head(row(v, b * T + t, K * H), kv, H));
        }
      const ByteCount after_k = held_bytes(key_rows), after_v = held_bytes(value_rows);
      tally.kv_written.value_bytes +=
          after_k.value_bytes - before_k.value_bytes + after_v.value_bytes - before_v.value_bytes;
      tally.kv_written.scale_bytes +=
          after_k.scale_bytes - before_k.scale_bytes + after_v.scale_bytes - before_v.scale_bytes;
    }
    Rows attended(q.size());
    for (std::size_t b = 0; b < B; ++b) attend(m.shape, cache, b, l, past, T, q, attended, tally);
    const Rows o = matmul(layer.w_o, attended, M, tally);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] += o[i];

    const Rows h = rms_norm(layer.mlp_norm, x, M, tally);
    Rows up = matmul(layer.w_in1, h, M, tally);
    const Rows gate = matmul(layer.w_in2, h, M, tally);
    for (std::size_t i = 0; i < up.size(); ++i) up[i] *= gate[i] / (1 + std::exp(-gate[i]));  // u ⊙ silu(g)
    const Rows down = matmul(layer.w_out, up, M, tally);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] += down[i];
  }

  // Only each sequence's last new token needs logits.
  Rows last(B * D);
  for (std::size_t b = 0; b < B; ++b)
    std::ranges::copy(row(std::as_const(x), b * T + T - 1, D), row(last, b, D).begin());
  const Rows logits = matmul(logits_matrix(m), rms_norm(m.final_norm, last, B, tally), B, tally);

  ForwardOutput result;
  const auto V = static_cast<std::size_t>(m.shape.V);
  for (std::size_t b = 0; b < B; ++b)
    result.logits.emplace_back(logits.begin() + static_cast<long>(b * V),
                               logits.begin() + static_cast<long>((b + 1) * V));
  auto& c = result.counts;
  c.batch = cache.batch;
  c.new_tokens = static_cast<int>(T);
  c.context = static_cast<int>(past + T);
  c.param_bytes = tally.params.value_bytes;
  c.param_scale_bytes = tally.params.scale_bytes;
  c.kv_bytes_read = tally.kv_read.value_bytes;
  c.kv_scale_bytes_read = tally.kv_read.scale_bytes;
  c.kv_bytes_written = tally.kv_written.value_bytes;
  c.kv_scale_bytes_written = tally.kv_written.scale_bytes;
  c.matmul_flops = tally.matmul_flops;
  c.attention_flops = tally.attention_flops;
  c.flops = c.matmul_flops + c.attention_flops;
  return result;
}

int greedy_token(std::span<const double> logits) {
  if (logits.empty()) throw std::invalid_argument("greedy_token needs at least one logit");
  std::size_t best = 0;
  for (std::size_t i = 1; i < logits.size(); ++i)
    if (logits[i] > logits[best]) best = i;
  return static_cast<int>(best);
}

Generation generate_greedy(const DecoderModel& m, Dtype kv, const std::vector<std::vector<int>>& prompts, int steps) {
  if (steps < 0) throw std::invalid_argument("steps = " + std::to_string(steps) + ": must not be negative");
  if (prompts.empty()) throw std::invalid_argument("generate_greedy needs at least one prompt");
  KVCache cache = empty_cache(m.shape, kv, static_cast<int>(prompts.size()));
  Generation g;
  auto out = forward_with_cache(m, cache, prompts);
  g.prefill = out.counts;
  std::vector<std::vector<int>> next;
  for (const auto& logits : out.logits) {
    g.tokens.push_back({greedy_token(logits)});
    next.push_back({g.tokens.back().back()});
  }
  g.logits.push_back(std::move(out.logits));
  for (int step = 0; step < steps; ++step) {
    out = forward_with_cache(m, cache, next);
    g.steps.push_back(out.counts);
    for (std::size_t b = 0; b < next.size(); ++b) {
      g.tokens[b].push_back(greedy_token(out.logits[b]));
      next[b] = {g.tokens[b].back()};
    }
    g.logits.push_back(std::move(out.logits));
  }
  return g;
}

namespace {
// Fixed prompts: sequence b, position t holds token (7b + 3t + 1) mod V.
std::vector<std::vector<int>> fixed_prompts(int batch, int length, int vocab) {
  std::vector<std::vector<int>> p(static_cast<std::size_t>(batch));
  for (int b = 0; b < batch; ++b)
    for (int t = 0; t < length; ++t) p[static_cast<std::size_t>(b)].push_back((7 * b + 3 * t + 1) % vocab);
  return p;
}
}  // namespace

StepCounts executed_decode_step(const TransformerConfig& c, int batch, int context, Dtype weights, Dtype kv) {
  check_size(batch, context);
  const DecoderModel m = random_decoder(c, weights, kChapterSeed);
  KVCache cache = empty_cache(m.shape, kv, batch);
  const auto prompts = fixed_prompts(batch, context, m.shape.V);
  std::vector<std::vector<int>> prefix, last;
  for (const auto& p : prompts) {
    prefix.emplace_back(p.begin(), p.end() - 1);
    last.push_back({p.back()});
  }
  if (context > 1) forward_with_cache(m, cache, prefix);
  return forward_with_cache(m, cache, last).counts;
}

StepCounts executed_recompute_step(const TransformerConfig& c, int batch, int context, Dtype weights, Dtype kv) {
  check_size(batch, context);
  const DecoderModel m = random_decoder(c, weights, kChapterSeed);
  KVCache cache = empty_cache(m.shape, kv, batch);
  return forward_with_cache(m, cache, fixed_prompts(batch, context, m.shape.V)).counts;
}

}  // namespace scaling::sim
