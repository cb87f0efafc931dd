#pragma once
// §4.4.2, §5.3: which activations a training step keeps for its backward pass, written the way the book
// counts them — elements saved per layer per token as a sum of terms in D, F, N·H and K·H:
//   "4D"             four [tokens, D] tensors per layer
//   "D+2F"           the outputs of the three big MLP matmuls (exercise 5.2)
//   "2D+2F+NH+2KH"   adds the attention projections
// Written NH and KH for N·H and K·H. Each term is an optional positive coefficient (a whole or decimal
// number: "2", "0.5") followed by one of D, F, NH, KH; terms are joined by '+'; spaces are ignored.
#include <string>
#include <string_view>

namespace scaling {

struct SavedRule {
  double d = 0, f = 0, nh = 0, kh = 0;  // coefficients of D, F, N·H and K·H
};

// Throws std::invalid_argument with one line naming the rule and what is wrong ("4Q", "D+", "-D", "").
SavedRule parse_saved_rule(std::string_view text);
// The rule in canonical form: "D+2F", "2D+2F+NH+2KH".
std::string to_string(const SavedRule& r);

}  // namespace scaling
