#pragma once
// §9.1: the dot XLA gets from a two-operand einsum. jnp.einsum('bf,fd->db', x, y) becomes
//   f32[16,128] dot(f32[256,16] convert(y), f32[128,256] x), lhs_contracting_dims={0}, rhs_contracting_dims={1}
// A dot_general's output lists the batch dimensions, then the lhs's free ones, then the rhs's: the operands
// are ordered so that this is the einsum's output order when either order gives it (the operands swap,
// as in §9.1, rather than transposing the result); otherwise they keep their order and a transpose follows.
// Both operands are converted to the promoted element type (hlo::promote), which is the output's.
// FLOPs as XLA's cost analysis counts a dot: 2 (a multiply and an add) per output element per
// contracted element.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "scaling/notation/hlo_shape.hpp"

namespace scaling::hlo {

struct DotOperand {
  int einsum_input = 0;   // 0: the einsum's first input, 1: its second
  std::string letters;    // its einsum letters
  Shape shape;            // as the dot sees it: after any convert, row-major
  bool converted = false; // a convert to the output type precedes the dot
};

struct DotGeneral {
  DotOperand lhs, rhs;
  std::vector<int64_t> lhs_batch, rhs_batch, lhs_contracting, rhs_contracting;
  Shape output;                     // the dot's own output, row-major
  std::string output_letters;       // in the dot's order
  std::vector<int64_t> transpose;   // empty when the dot already gives the einsum's order; else the permutation
  double flops = 0;
  std::string hlo;                  // the lowered computation as HLO text
};

// Throws std::invalid_argument for a malformed spec, a shape whose rank differs from its letters, a letter
// with two sizes, a letter in one input only that is not in the output (a reduction before the dot, not
// modelled), or element types JAX does not promote implicitly.
DotGeneral lower_einsum(std::string_view spec, const Shape& first, const Shape& second);

}  // namespace scaling::hlo
