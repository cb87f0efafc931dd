#pragma once
// §9.2.2: an array shape as XLA prints it in HLO, e.g. `bf16[32,32,4096]{2,1,0:T(8,128)(2,1)S(1)}` —
// the element type, the dimensions, and the layout: minor_to_major (the dimensions from the most minor to
// the most major in memory), the tiles applied in sequence (T(…)(…)), the element size in bits (E(n)) and
// the memory space (S(n): 0 is HBM, 1 VMEM on a TPU). No layout means row-major ({n−1,…,1,0}).
// Element types are XLA's, every one it prints; sizes are counted in int64 and an element count that
// overflows 64 bits is an error, never a wrap.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace scaling::hlo {

enum class ElementKind { boolean, signed_int, unsigned_int, floating, complex };

struct ElementType {
  std::string_view name;  // as HLO prints it: "pred", "s4", "bf16", "f8e4m3fn", …
  int bits;               // the width of one value
  int byte_width;         // what XLA stores per element without E(n): ⌈bits/8⌉ (pred: 1, s4: 1)
  ElementKind kind;
};

// Every element type XLA prints for an array, in a fixed order.
std::span<const ElementType> element_types();
// Throws std::invalid_argument naming the text (and saying when it is a non-array type: token, tuple).
const ElementType& element_type(std::string_view name);

struct Layout {
  std::vector<int64_t> minor_to_major;
  std::vector<std::vector<int64_t>> tiles;  // applied in order; each to the most minor dimensions
  int64_t memory_space = 0;                 // S(n)
  int64_t element_size_bits = 0;            // E(n); 0 = the element type's own storage
};

struct Shape {
  const ElementType* type = nullptr;
  std::vector<int64_t> dims;  // logical order, as printed
  Layout layout;
  bool layout_printed = false;  // false: no {…} was given (row-major by default)
};

// Parses one shape. Throws std::invalid_argument with a one-line message naming the shape and the part
// at fault: an unknown type, a dynamic dimension (`<=8`, `?`), a minor_to_major that is not a
// permutation of the dimensions, a tile that is not positive, an unsupported layout attribute, trailing
// text, or an element count beyond 64 bits. Bounds: at most 64 dimensions, 8 tiles, 16 dimensions a tile.
Shape parse_shape(std::string_view text);

// Prints the shape the way HLO does: `f32[3,5]{1,0:T(2,2)}`.
std::string to_string(const Shape& s);
std::string dims_text(const std::vector<int64_t>& dims);  // "[3,5]"

// The number of elements (1 for a scalar).
int64_t element_count(const Shape& s);

// The type JAX gives the result of combining two arrays (its type-promotion lattice, as jnp.einsum
// applies it before lowering to a dot): the wider float, a float over any integer, bf16 with f16 → f32.
// Throws for pairs JAX refuses to promote implicitly (float8/float4 and sub-byte integers with another
// type, u64 with a signed integer).
const ElementType& promote(const ElementType& a, const ElementType& b);

}  // namespace scaling::hlo
