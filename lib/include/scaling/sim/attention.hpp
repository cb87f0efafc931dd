#pragma once
// §4.7 (Appendix A): attention computed naively and by blocks with an online softmax (flash attention).
//
// Arrays are flat, row-major: q[T][N][H], k[S][K][H], v[S][K][H], out[T][N][H]. Query head n reads KV
// head n / G with G = N / K (grouped-query attention; K = N is multi-head, K = 1 multi-query). With
// `causal`, query t sees keys s ≤ t + (S − T), i.e. the queries are the last T positions.
#include <vector>

namespace scaling {

struct AttentionShape {
  int T, S, N, K, H;
  bool causal = false;
};

void validate(const AttentionShape& a);

// softmax(τ·q·kᵀ)·v with τ = 1/√H, materialising every score.
std::vector<double> naive_attention(const AttentionShape& a, const std::vector<double>& q, const std::vector<double>& k,
                                    const std::vector<double>& v);
// The probabilities themselves, p[T][N][S] (0 where masked), for checking identities.
std::vector<double> attention_probabilities(const AttentionShape& a, const std::vector<double>& q,
                                            const std::vector<double>& k);

// Blocked: queries in blocks of `block_q`, keys in blocks of `block_k`; only a block of scores exists at
// a time, and each query row carries a running max m, denominator ℓ and unnormalised output o.
std::vector<double> flash_attention(const AttentionShape& a, const std::vector<double>& q, const std::vector<double>& k,
                                    const std::vector<double>& v, int block_q, int block_k);

// The running state for one query row over some keys: m = max score, l = Σ exp(score − m),
// o = Σ exp(score − m)·v. Two states over disjoint key sets combine exactly into the state over both.
struct SoftmaxState {
  double m;
  double l;
  std::vector<double> o;
};
SoftmaxState softmax_state(const std::vector<double>& scores, const std::vector<std::vector<double>>& values);
SoftmaxState combine(const SoftmaxState& a, const SoftmaxState& b);

}  // namespace scaling
