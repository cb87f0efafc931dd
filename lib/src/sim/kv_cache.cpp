#include "scaling/sim/kv_cache.hpp"

#include <stdexcept>
#include <string>

namespace scaling::sim {

namespace {
std::size_t slot(const KVCache& c, int b, int l) {
  if (b < 0 || b >= c.batch || l < 0 || l >= c.layers)
    throw std::out_of_range("KV cache slot (sequence " + std::to_string(b) + ", layer " + std::to_string(l) + ")");
  return static_cast<std::size_t>(b) * static_cast<std::size_t>(c.layers) + static_cast<std::size_t>(l);
}
}  // namespace

KVCache empty_cache(const DecoderShape& s, Dtype kv, int batch) {
  require_storable(kv);
  if (batch < 1) throw std::invalid_argument("batch = " + std::to_string(batch) + ": must be at least 1");
  KVCache c{kv, batch, s.L, s.K, s.H, {}, {}};
  const std::size_t slots = static_cast<std::size_t>(batch) * static_cast<std::size_t>(s.L);
  c.keys.assign(slots, empty_rows(kv, s.H));
  c.values.assign(slots, empty_rows(kv, s.H));
  return c;
}

int cached_tokens(const KVCache& c, int b) { return rows(c.keys[slot(c, b, 0)]) / c.kv_heads; }
StoredRows& keys(KVCache& c, int b, int l) { return c.keys[slot(c, b, l)]; }
StoredRows& values(KVCache& c, int b, int l) { return c.values[slot(c, b, l)]; }

ByteCount held_bytes(const KVCache& c) {
  ByteCount total;
  for (const auto* side : {&c.keys, &c.values})
    for (const auto& rows : *side) {
      const auto b = held_bytes(rows);
      total.value_bytes += b.value_bytes;
      total.scale_bytes += b.scale_bytes;
    }
  return total;
}

}  // namespace scaling::sim
