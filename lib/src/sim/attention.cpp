#include "scaling/sim/attention.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace scaling {

namespace {
constexpr double kNegInf = -std::numeric_limits<double>::infinity();

size_t qi(const AttentionShape& a, int t, int n, int h) { return (static_cast<size_t>(t) * a.N + n) * a.H + h; }
size_t ki(const AttentionShape& a, int s, int kv, int h) { return (static_cast<size_t>(s) * a.K + kv) * a.H + h; }
bool visible(const AttentionShape& a, int t, int s) { return !a.causal || s <= t + (a.S - a.T); }

double score(const AttentionShape& a, const std::vector<double>& q, const std::vector<double>& k, int t, int n, int s) {
  const int kv = n / (a.N / a.K);
  double dot = 0;
  for (int h = 0; h < a.H; ++h) dot += q[qi(a, t, n, h)] * k[ki(a, s, kv, h)];
  return dot / std::sqrt(static_cast<double>(a.H));
}

void check_sizes(const AttentionShape& a, const std::vector<double>& q, const std::vector<double>& k,
                 const std::vector<double>* v) {
  validate(a);
  if (q.size() != static_cast<size_t>(a.T) * a.N * a.H) throw std::invalid_argument("q must hold T·N·H values");
  if (k.size() != static_cast<size_t>(a.S) * a.K * a.H) throw std::invalid_argument("k must hold S·K·H values");
  if (v && v->size() != k.size()) throw std::invalid_argument("v must hold S·K·H values");
}
}  // namespace

void validate(const AttentionShape& a) {
  if (a.T < 1 || a.S < 1 || a.N < 1 || a.K < 1 || a.H < 1)
    throw std::invalid_argument("attention sizes T, S, N, K, H must all be at least 1");
  if (a.N % a.K != 0)
    throw std::invalid_argument(std::to_string(a.K) + " KV heads do not divide " + std::to_string(a.N) + " query heads");
  if (a.causal && a.T > a.S) throw std::invalid_argument("causal attention needs T ≤ S");
}

std::vector<double> attention_probabilities(const AttentionShape& a, const std::vector<double>& q,
                                            const std::vector<double>& k) {
  check_sizes(a, q, k, nullptr);
  std::vector<double> p(static_cast<size_t>(a.T) * a.N * a.S, 0.0);
  for (int t = 0; t < a.T; ++t)
    for (int n = 0; n < a.N; ++n) {
      double* row = &p[(static_cast<size_t>(t) * a.N + n) * a.S];
      double m = kNegInf;
      for (int s = 0; s < a.S; ++s)
        if (visible(a, t, s)) m = std::max(m, row[s] = score(a, q, k, t, n, s));
      double sum = 0;
      for (int s = 0; s < a.S; ++s) sum += row[s] = visible(a, t, s) ? std::exp(row[s] - m) : 0.0;
      for (int s = 0; s < a.S; ++s) row[s] /= sum;
    }
  return p;
}

std::vector<double> naive_attention(const AttentionShape& a, const std::vector<double>& q, const std::vector<double>& k,
                                    const std::vector<double>& v) {
  check_sizes(a, q, k, &v);
  const auto p = attention_probabilities(a, q, k);
  std::vector<double> out(q.size(), 0.0);
  for (int t = 0; t < a.T; ++t)
    for (int n = 0; n < a.N; ++n) {
      const int kv = n / (a.N / a.K);
      for (int s = 0; s < a.S; ++s) {
        const double w = p[(static_cast<size_t>(t) * a.N + n) * a.S + s];
        for (int h = 0; h < a.H; ++h) out[qi(a, t, n, h)] += w * v[ki(a, s, kv, h)];
      }
    }
  return out;
}

SoftmaxState softmax_state(const std::vector<double>& scores, const std::vector<std::vector<double>>& values) {
  if (scores.size() != values.size() || scores.empty()) throw std::invalid_argument("one value row per score, at least one");
  SoftmaxState st{*std::max_element(scores.begin(), scores.end()), 0, std::vector<double>(values[0].size(), 0.0)};
  for (size_t i = 0; i < scores.size(); ++i) {
    const double e = std::exp(scores[i] - st.m);
    st.l += e;
    for (size_t h = 0; h < st.o.size(); ++h) st.o[h] += e * values[i][h];
  }
  return st;
}

// §4.7: rescale both partial sums to the larger of the two maxima, then add.
SoftmaxState combine(const SoftmaxState& a, const SoftmaxState& b) {
  if (a.m == kNegInf) return b;
  if (b.m == kNegInf) return a;
  const double m = std::max(a.m, b.m), wa = std::exp(a.m - m), wb = std::exp(b.m - m);
  SoftmaxState c{m, wa * a.l + wb * b.l, std::vector<double>(a.o.size())};
  for (size_t h = 0; h < c.o.size(); ++h) c.o[h] = wa * a.o[h] + wb * b.o[h];
  return c;
}

std::vector<double> flash_attention(const AttentionShape& a, const std::vector<double>& q, const std::vector<double>& k,
                                    const std::vector<double>& v, int block_q, int block_k) {
  check_sizes(a, q, k, &v);
  if (block_q < 1 || block_k < 1) throw std::invalid_argument("block sizes must be at least 1");
  std::vector<double> out(q.size(), 0.0);
  for (int t0 = 0; t0 < a.T; t0 += block_q)
    for (int n = 0; n < a.N; ++n) {
      const int kv = n / (a.N / a.K), t1 = std::min(a.T, t0 + block_q);
      std::vector<SoftmaxState> running(static_cast<size_t>(t1 - t0), SoftmaxState{kNegInf, 0, std::vector<double>(static_cast<size_t>(a.H), 0.0)});
      for (int s0 = 0; s0 < a.S; s0 += block_k) {
        const int s1 = std::min(a.S, s0 + block_k);
        for (int t = t0; t < t1; ++t) {
          std::vector<double> scores;
          std::vector<std::vector<double>> values;
          for (int s = s0; s < s1; ++s) {
            if (!visible(a, t, s)) continue;
            scores.push_back(score(a, q, k, t, n, s));
            values.emplace_back(v.begin() + static_cast<long>(ki(a, s, kv, 0)), v.begin() + static_cast<long>(ki(a, s, kv, 0) + a.H));
          }
          if (scores.empty()) continue;  // this key block is entirely in the future of query t
          auto& r = running[static_cast<size_t>(t - t0)];
          r = combine(r, softmax_state(scores, values));
        }
      }
      for (int t = t0; t < t1; ++t) {
        const auto& r = running[static_cast<size_t>(t - t0)];
        for (int h = 0; h < a.H; ++h) out[qi(a, t, n, h)] = r.o[static_cast<size_t>(h)] / r.l;
      }
    }
  return out;
}

}  // namespace scaling
