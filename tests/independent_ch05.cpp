// Independent checks of chapter 5, written from the book's raw figures: the LLaMA-2 13B shape typed in,
// parameter and byte counts multiplied out by hand, bounds found by brute-force search over layouts
// rather than by the closed forms the library uses.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "registry.hpp"
#include "search.hpp"

namespace {
// LLaMA-2 13B (§5.3's table): L, D, F = 2.7·D, N = K, H, V.
constexpr double L13 = 40, D13 = 5120, F13 = 13824, N13 = 40, H13 = 128, V13 = 32000;
// Every weight of LLaMA-2 13B: per layer 3 MLP matrices, Q/K/V/O, two RMSNorm scales; untied vocabulary;
// a final norm.
constexpr double kParams13 = L13 * (3 * D13 * F13 + 4 * D13 * N13 * H13 + 2 * D13) + 2 * V13 * D13 + D13;
}  // namespace

INDEPENDENT("ch5.dp-max-model.max_params_v5p", "96 GB / (2 + 4 + 4) bytes", 1e-12) { return 96e9 / (2 + 4 + 4); }
INDEPENDENT("ex5.1.total_params", "LLaMA-2 13B's weights written out", 1e-12) { return kParams13; }
INDEPENDENT("ex5.2.total_with_grads", "(2 + 2 + 8) bytes × params + 2 · L · B · (D + 2F)", 1e-12) {
  return 12 * kParams13 + 2 * L13 * 16e6 * (D13 + 2 * F13);
}
