#include "scaling/notation/tiled_layout.hpp"

#include <stdexcept>
#include <string>

namespace scaling::hlo {

namespace {

int64_t checked_mul(int64_t a, int64_t b, const Shape& s, const char* what) {
  int64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out))
    throw std::invalid_argument(std::string(what) + " of " + to_string(s) + " overflows 64 bits");
  return out;
}
// The product of dims, refused when the product of its non-zero dims overflows: a zero dimension makes the
// array empty but does not shrink the strides of the others, which are partial products of them.
int64_t checked_extent(const std::vector<int64_t>& dims, const Shape& s, const char* what) {
  int64_t nonzero = 1;
  bool empty = false;
  for (int64_t d : dims) {
    if (d == 0) empty = true;
    else nonzero = checked_mul(nonzero, d, s, what);
  }
  return empty ? 0 : nonzero;
}

int64_t round_up(int64_t d, int64_t t, const Shape& s) {
  const int64_t tiles = d / t + (d % t != 0);
  return checked_mul(tiles, t, s, "the padded size");
}

// The physical dimensions, most major first.
std::vector<int64_t> physical_order(const Shape& s) {
  std::vector<int64_t> out(s.dims.size());
  const size_t r = s.dims.size();
  for (size_t i = 0; i < r; ++i) out[i] = s.layout.minor_to_major[r - 1 - i];
  return out;
}

// One tile applied to a shape (XLA tiled layout): (…, d) → (…, ⌈d/t⌉, t) on the minor dimensions.
std::vector<int64_t> apply_tile(std::vector<int64_t> shape, const std::vector<int64_t>& tile, const Shape& s) {
  if (tile.size() > shape.size()) shape.insert(shape.begin(), tile.size() - shape.size(), 1);
  const size_t lead = shape.size() - tile.size();
  std::vector<int64_t> out(shape.begin(), shape.begin() + static_cast<std::ptrdiff_t>(lead));
  for (size_t j = 0; j < tile.size(); ++j) {
    const int64_t d = shape[lead + j];
    out.push_back(d / tile[j] + (d % tile[j] != 0));
  }
  out.insert(out.end(), tile.begin(), tile.end());
  checked_extent(out, s, "the tiled buffer");
  return out;
}

}  // namespace

LayoutSizes layout_sizes(const Shape& s) {
  LayoutSizes z;
  z.elements = element_count(s);
  z.padded_shape = s.dims;
  const auto& m2m = s.layout.minor_to_major;
  z.buffer_elements = z.elements;
  if (!s.layout.tiles.empty()) {
    // ArraySize: the first tile rounds up the dimensions it covers, counted from the most minor.
    const auto& t = s.layout.tiles.front();
    const size_t k = t.size();
    int64_t n = 1;
    for (size_t j = 0; j < k; ++j) {
      const int64_t tile = t[k - 1 - j];
      if (j < m2m.size()) {
        auto& d = z.padded_shape[static_cast<size_t>(m2m[j])];
        d = round_up(d, tile, s);
        n = checked_mul(n, d, s, "the padded buffer");
      } else {
        n = checked_mul(n, tile, s, "the padded buffer");  // a dimension beyond the rank: 1, padded to the tile
      }
    }
    for (size_t j = k; j < m2m.size(); ++j) n = checked_mul(n, s.dims[static_cast<size_t>(m2m[j])], s, "the padded buffer");
    checked_extent(z.padded_shape, s, "the padded buffer");
    z.buffer_elements = n;
  }
  std::vector<int64_t> shape;
  for (int64_t d : physical_order(s)) shape.push_back(s.dims[static_cast<size_t>(d)]);
  z.tiled_shapes.push_back(shape);
  for (const auto& t : s.layout.tiles) z.tiled_shapes.push_back(shape = apply_tile(shape, t, s));
  z.span_elements = checked_extent(shape, s, "the tiled buffer");
  if (z.elements == 0) z.span_elements = 0;
  const int64_t bits = s.layout.element_size_bits;
  auto bytes_of = [&](int64_t n) {
    if (bits == 0) return checked_mul(n, s.type->byte_width, s, "the byte size");
    const int64_t total = checked_mul(n, bits, s, "the bit size");
    return total / 8 + (total % 8 != 0);
  };
  z.bytes = bytes_of(z.elements);
  z.padded_bytes = bytes_of(z.buffer_elements);
  z.growth = z.bytes == 0 ? 1.0 : static_cast<double>(z.padded_bytes) / static_cast<double>(z.bytes);
  return z;
}

OffsetMap::OffsetMap(const Shape& s) : dims_(s.dims), physical_(physical_order(s)), tiles_(s.layout.tiles) {
  element_count(s);
  std::vector<int64_t> shape;
  for (int64_t d : physical_) shape.push_back(s.dims[static_cast<size_t>(d)]);
  for (const auto& t : tiles_) shape = apply_tile(shape, t, s);
  // Every stride is a partial product of the non-zero dims, which checked_extent bounds.
  checked_extent(shape, s, "the tiled buffer");
  strides_.assign(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) strides_[i - 1] = checked_mul(strides_[i], shape[i], s, "a stride");
  span_ = shape.empty() ? 1 : strides_[0] * shape[0];
}

int64_t OffsetMap::unchecked(std::span<const int64_t> index, std::vector<int64_t>& e) const {
  e.clear();
  for (int64_t d : physical_) e.push_back(index[static_cast<size_t>(d)]);
  for (const auto& t : tiles_) {
    if (t.size() > e.size()) e.insert(e.begin(), t.size() - e.size(), 0);
    const size_t lead = e.size() - t.size();
    for (size_t j = 0; j < t.size(); ++j) {
      const int64_t v = e[lead + j];
      e[lead + j] = v / t[j];  // which tile
      e.push_back(v % t[j]);   // where in it
    }
  }
  int64_t offset = 0;
  for (size_t i = 0; i < e.size(); ++i) offset += e[i] * strides_[i];
  return offset;
}

int64_t OffsetMap::offset(std::span<const int64_t> index) const {
  if (index.size() != dims_.size())
    throw std::invalid_argument("index has " + std::to_string(index.size()) + " coordinates for a shape of rank " +
                                std::to_string(dims_.size()));
  for (size_t i = 0; i < index.size(); ++i)
    if (index[i] < 0 || index[i] >= dims_[i])
      throw std::invalid_argument("index " + std::to_string(index[i]) + " of dimension " + std::to_string(i) +
                                  " is outside 0.." + std::to_string(dims_[i] - 1));
  std::vector<int64_t> work;
  return unchecked(index, work);
}

std::vector<int64_t> OffsetMap::all() const {
  int64_t n = 1;
  for (int64_t d : dims_) n *= d;  // the constructor checked it
  std::vector<int64_t> out;
  if (n == 0) return out;
  out.reserve(static_cast<size_t>(n));
  std::vector<int64_t> index(dims_.size(), 0), work;
  work.reserve(dims_.size() * (tiles_.size() + 2) + 8);
  for (int64_t k = 0; k < n; ++k) {
    out.push_back(unchecked(index, work));
    for (size_t i = index.size(); i-- > 0;) {  // the next logical index, row-major
      if (++index[i] < dims_[i]) break;
      index[i] = 0;
    }
  }
  return out;
}

}  // namespace scaling::hlo
