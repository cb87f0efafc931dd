#pragma once
// §7.1: sampling with a KV cache — prefill the prompt, then generate one token per step — executed on a
// small random decoder (decoder_model.hpp) and instrumented: every stored byte read or written and every
// FLOP is counted where the code does it, so the step-time model of §7.1.5 can be checked by execution.
//
// What a call counts (the batch runs in lockstep: B sequences, the same number of new tokens each):
//  - param_bytes: weight values read. Each matrix and norm gain is read once per call and applied to all
//    B·T_new tokens (a batched matmul); the embedding is a lookup that reads one row of D per token, not
//    the matrix; the unembedding (or, tied, the embedding matrix) is read whole to make the logits. So a
//    decode step reads param_counts(c).total − V·D·[untied] + B·D values. The book's "parameter size"
//    (§7.1.5: every parameter once) exceeds that by (V − B)·D values untied, and falls short by B·D tied.
//  - kv_bytes_read: every cached key and value vector, read once per call per (sequence, layer, KV head)
//    and used by all N/K query heads of its group. A new token's own K and V are written to the cache
//    first and read back with the rest, so a decode step whose token attends to T keys (itself included)
//    reads B·T·2·L·K·H·bytes and writes B·2·L·K·H·bytes.
//  - matmul_flops: 2 per multiply-add of every weight matmul (W_Q, W_K, W_V, W_O, the MLP, and the
//    unembedding of each sequence's last token only, since only its logits are needed).
//  - attention_flops: Q·Kᵀ and P·V, 2·H each per (query head, visible key); causal, so in a call over
//    T_new tokens the i-th new token sees the cached keys and the new ones up to itself.
//  - Not counted: norms, rotary positions, softmax, SiLU, residual adds, argmax — small next to the above.
//  - int8 storage keeps an fp32 scale per row; those bytes are counted apart (the *_scale_bytes fields).
#include <span>
#include <vector>

#include "scaling/sim/kv_cache.hpp"

namespace scaling::sim {

struct StepCounts {
  int batch = 0;       // sequences
  int new_tokens = 0;  // tokens each sequence ran in this call: 1 for a decode step, the prompt for a prefill
  int context = 0;     // keys the last new token attends to, itself included
  double param_bytes = 0, param_scale_bytes = 0;
  double kv_bytes_read = 0, kv_scale_bytes_read = 0;
  double kv_bytes_written = 0, kv_scale_bytes_written = 0;
  double matmul_flops = 0, attention_flops = 0;
  double flops = 0;  // matmul_flops + attention_flops
};

struct ForwardOutput {
  std::vector<std::vector<double>> logits;  // [sequence][V], for each sequence's last new token
  StepCounts counts;
};

// Runs tokens[b] (the same number, at least one, for every sequence) through the model after the
// positions the cache holds for sequence b (all sequences must hold the same number), appends their keys
// and values to the cache and returns the logits of each sequence's last new token with the counts.
ForwardOutput forward_with_cache(const DecoderModel& m, KVCache& cache, const std::vector<std::vector<int>>& tokens);

// The largest logit's index; the lowest such index on a tie.
int greedy_token(std::span<const double> logits);

struct Generation {
  std::vector<std::vector<int>> tokens;                  // [sequence]: steps + 1 tokens, the first from the prefill
  std::vector<std::vector<std::vector<double>>> logits;  // [call][sequence][V]: the prefill, then each step
  StepCounts prefill;
  std::vector<StepCounts> steps;
};

// Prefills the prompts (one per sequence, all the same length) into a `kv` cache, then runs `steps` decode
// steps, each feeding back the previous greedy token.
Generation generate_greedy(const DecoderModel& m, Dtype kv, const std::vector<std::vector<int>>& prompts, int steps);

// For chapter 7, on a random model of config c (a fixed seed, fixed prompts): the counts of one decode
// step of `batch` sequences whose new token attends to `context` keys (a prompt of context − 1 tokens is
// prefilled first), and the counts of producing that same token without a cache, by a forward pass over
// all `context` tokens of each sequence. Throws std::invalid_argument for a config the decoder cannot run,
// a dtype it cannot store, batch outside 1…1024, context outside 1…4096, or batch·context above 65536.
StepCounts executed_decode_step(const TransformerConfig& c, int batch, int context, Dtype weights, Dtype kv);
StepCounts executed_recompute_step(const TransformerConfig& c, int batch, int context, Dtype weights, Dtype kv);

}  // namespace scaling::sim
