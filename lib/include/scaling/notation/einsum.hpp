#pragma once
// §4.1: the FLOPs of a contraction written as an einsum, "IJKL,IJMNO->KLMNO". A letter in both inputs
// and the output is a batch dimension; in both inputs but not the output, a contracting one; in one
// input (and usually the output), free. Every distinct letter is counted once: FLOPs = 2 × the product
// of all sizes when something is contracted (a multiply and an add), else 1 × (an elementwise product).
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace scaling {

struct EinsumDims {
  std::string batch, contracting, free;  // letters, in order of first appearance
};

// Parses and classifies; throws std::invalid_argument for malformed specs (not two inputs and one
// output, a non-letter, a repeated letter within one operand, an output letter in no input).
EinsumDims classify_einsum(std::string_view spec);

// Sizes given per letter ("I=4,J=8" parsed by parse_letter_sizes, or a map). Throws for a letter without
// a size, a size that is not a positive whole number, or a size for a letter the spec does not use.
double einsum_flops(std::string_view spec, const std::map<char, double>& sizes);
// Sizes read off the operands' shapes; throws when a letter gets two different sizes.
double einsum_flops_from_shapes(std::string_view spec, const std::vector<std::vector<double>>& input_shapes);

std::map<char, double> parse_letter_sizes(std::string_view text);  // "I=4,J=8"

// The letters of each operand, spaces dropped: "bf,fd->db" -> {"bf", "fd", "db"}. Throws as classify_einsum.
struct EinsumSpec {
  std::string lhs, rhs, out;
};
EinsumSpec parse_einsum(std::string_view spec);

}  // namespace scaling
