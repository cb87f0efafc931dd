#pragma once
// A small decoder-only Transformer with random weights, built from the model's tensor inventory
// (model/tensors.hpp) — the same description every parameter, byte and FLOP count sums over — so the
// tensors it executes are exactly the tensors the formulas count (§4.1–4.3).
//
// Per layer: RMSNorm → W_Q [N·H], W_K, W_V [K·H] (query head n reads KV head n / (N/K): GQA; K = N is MHA,
// K = 1 MQA) → rotary positions on q and k → causal softmax attention with τ = 1/√H → W_O [D] → residual;
// RMSNorm → gated MLP (x·W_in1) ⊙ silu(x·W_in2), W_in2 being the gate → W_out [D] → residual. Then a final
// RMSNorm and the unembedding [V, D] (or the embedding matrix itself when tied). RMSNorm: x/√(mean(x²)+1e-6)⊙g.
//
// Every matrix is stored with one row per output feature (W_Q is N·H rows of D), so an int8 row scale is
// a per-output-channel scale. All parameters — the norm gains too — use the one weight dtype, so the bytes
// of the whole model are param_bytes(config, dtype) (plus int8 row scales).
//
// Only what the decoder runs is accepted: an inventory of exactly its tensors (a dense model, a gated MLP,
// no biases, two pre-norms per layer and a final norm), every size at most 4096, at most 2^22 parameters.
#include <cstdint>
#include <vector>

#include "scaling/model/transformer.hpp"
#include "scaling/sim/stored_rows.hpp"

namespace scaling::sim {

struct DecoderShape {
  int D, F, L, N, K, H, V;
};

// The config's sizes as integers, checked against the limits above. Throws std::invalid_argument naming
// the field and the rule.
DecoderShape executable_shape(const TransformerConfig& c);

struct DecoderLayer {
  StoredRows attention_norm, mlp_norm;  // 1 row of D
  StoredRows w_q;                       // N·H rows of D
  StoredRows w_k, w_v;                  // K·H rows of D
  StoredRows w_o;                       // D rows of N·H
  StoredRows w_in1, w_in2;              // F rows of D (linear, gate)
  StoredRows w_out;                     // D rows of F
};

struct DecoderModel {
  TransformerConfig config;
  DecoderShape shape;
  Dtype weights;
  StoredRows embedding;    // V rows of D
  StoredRows unembedding;  // V rows of D; no rows when the config ties it to the embedding
  std::vector<DecoderLayer> layers;
  StoredRows final_norm;  // 1 row of D
};

// One stored tensor per copy in tensor_inventory(c), drawn uniformly from a deterministic generator seeded
// with `seed` (the same seed gives the same model on every platform): matrices in ±1/√fan_in, the
// embedding in ±1, norm gains in 1 ± 0.1. Throws std::invalid_argument naming the first tensor the decoder
// does not run (a router, an expert, a bias, a third norm) or the first it needs and the inventory lacks.
DecoderModel random_decoder(const TransformerConfig& c, Dtype weights, std::uint64_t seed);

// The matrix the logits are read from: the unembedding, or the embedding when tied.
const StoredRows& logits_matrix(const DecoderModel& m);

}  // namespace scaling::sim
