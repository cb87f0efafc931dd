// Independent checks of chapter 7: the book's raw figures put through the §7.1.5 equations written out
// here by hand (not through cost/inference), brute-force searches for the largest batch and the Pareto set.
#include <doctest/doctest.h>

#include <cmath>

#include "registry.hpp"

INDEPENDENT("ch7.quiz-30b.step_b4", "(4·100e3·8192 + 30e9) / (16·8.1e11), memory-bound by hand", 1e-12) {
  return (4 * 100e3 * 8192 + 30e9) / (16 * 8.1e11);
}
