#pragma once
// §9.2.2: where each element of a tiled array lives in memory, after XLA's tiled-layout semantics. The
// dimensions are first put in physical order (minor_to_major read from the most major), then each tile
// of T(…)(…) is applied in turn to the most minor dimensions of the shape the previous one produced: a
// dimension d tiled by t becomes ⌈d/t⌉ tiles (the major part) and t elements within a tile (the minor
// part), the tile counts ahead of the within-tile positions. An element's offset is its row-major index
// in the final shape. Padding fills each partial tile. A tile with more dimensions than the shape it
// applies to sees leading dimensions of size 1.
//
// Sizes as XLA computes them (ShapeUtil::ArraySize): only the first tile pads — each of the dimensions
// it covers is rounded up to a multiple of its tile size, a dimension beyond the shape's rank counting as
// 1 — and the later tiles are assumed to add none. With E(bits) the bytes are ⌈elements·bits/8⌉, else
// elements × the type's byte width (so s4 without E(4) takes a byte per element).
#include <cstdint>
#include <span>
#include <vector>

#include "scaling/notation/hlo_shape.hpp"

namespace scaling::hlo {

struct LayoutSizes {
  std::vector<int64_t> padded_shape;  // logical order, each dimension rounded up by the first tile
  int64_t elements = 0;               // of the logical shape
  int64_t buffer_elements = 0;        // XLA's count: the first tile's padding
  int64_t span_elements = 0;          // one past the largest offset the full tile sequence gives
  int64_t bytes = 0;                  // the logical elements, unpadded
  int64_t padded_bytes = 0;           // buffer_elements as XLA stores them
  double growth = 1;                  // padded_bytes / bytes (1 for an empty array)
  std::vector<std::vector<int64_t>> tiled_shapes;  // the physical shape before and after each tile
};

// Throws std::invalid_argument when a padded size or the tiled extent overflows 64 bits.
LayoutSizes layout_sizes(const Shape& s);

// The offset (in elements) of each logical index, precomputed once for a shape.
class OffsetMap {
 public:
  explicit OffsetMap(const Shape& s);
  // Throws std::invalid_argument for an index of the wrong rank or out of bounds.
  int64_t offset(std::span<const int64_t> index) const;
  // Every element's offset, in row-major order of the logical index.
  std::vector<int64_t> all() const;
  int64_t span() const { return span_; }

 private:
  int64_t unchecked(std::span<const int64_t> index, std::vector<int64_t>& work) const;
  std::vector<int64_t> dims_, physical_;  // physical_[i]: the logical dimension at physical position i
  std::vector<std::vector<int64_t>> tiles_;
  std::vector<int64_t> strides_;          // of the final tiled shape
  int64_t span_ = 0;
};

}  // namespace scaling::hlo
