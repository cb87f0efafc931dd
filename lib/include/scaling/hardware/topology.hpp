#pragma once
// §2.2–2.3: a slice is a chip type and a shape of ICI-connected chips; which axes wrap around; hop
// distances; host, PCIe and DCN arithmetic.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scaling/hardware/chip.hpp"

namespace scaling {

enum class WrapPolicy { automatic, yes, no };

struct Slice {
  Chip chip;
  std::vector<int> shape;   // chips per axis, e.g. {4, 4, 4}
  std::vector<bool> wraps;  // per axis: has a wraparound link
};

// Parses "4x4x4" (positive whole numbers separated by 'x'); throws std::invalid_argument naming the text.
std::vector<int> parse_shape(std::string_view text);

// §2.2, by the chip's wrap rule: v4p and v5p slices wrap every axis when built of full 4×4×4 cubes (3
// axes, each a multiple of 4); v5e and v6e wrap an axis only when it spans 16 chips; v3 (by the same 2D
// rule as v5e) when an axis spans its full pod side. `yes`/`no` override the rule for every axis.
Slice make_slice(const Chip& chip, const std::vector<int>& shape, WrapPolicy wrap = WrapPolicy::automatic);
Slice make_slice(std::string_view chip_name, std::string_view shape, WrapPolicy wrap = WrapPolicy::automatic);

double chips(const Slice& s);
double hosts(const Slice& s);        // chips / chips per host (a slice smaller than a host counts as one)
double tensorcores(const Slice& s);
double total_flops_per_s(const Slice& s, Dtype compute = Dtype::bf16);
double total_hbm_bytes(const Slice& s);

// Shortest hop count between two chips given as coordinates (per axis min(d, n − d) on a wrapped axis).
int hop_distance(const Slice& s, const std::vector<int>& from, const std::vector<int>& to);

// Host <-> chip over PCIe (per chip) and host <-> host over DCN (per host).
double pcie_transfer_s(const Chip& c, double bytes);
double dcn_transfer_s(const Chip& c, double bytes);

}  // namespace scaling
