#pragma once
// §7.1: the KV cache — the keys and values of every token a sequence has seen, for every layer, so a new
// token attends to them without recomputing them. Stored in the KV dtype as one row per (position, KV
// head) of H values, so an int8 cache has one scale per stored vector (stored_rows.hpp).
#include <vector>

#include "scaling/sim/decoder_model.hpp"

namespace scaling::sim {

struct KVCache {
  Dtype dtype;
  int batch, layers, kv_heads, head_dim;
  std::vector<StoredRows> keys, values;  // index b·layers + l; row position·kv_heads + head
};

// An empty cache for `batch` sequences of a model of this shape. Throws for a dtype it cannot store.
KVCache empty_cache(const DecoderShape& s, Dtype kv, int batch);
// Positions cached for sequence b (the same in every layer).
int cached_tokens(const KVCache& c, int b);
StoredRows& keys(KVCache& c, int b, int l);
StoredRows& values(KVCache& c, int b, int l);
// Bytes the cache holds now, from the sizes of its storage.
ByteCount held_bytes(const KVCache& c);

}  // namespace scaling::sim
