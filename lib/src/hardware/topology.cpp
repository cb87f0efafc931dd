#include "scaling/hardware/topology.hpp"

#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "scaling/base/format.hpp"

namespace scaling {

std::vector<int> parse_shape(std::string_view text) {
  require_printable("slice shape", text);
  std::vector<int> shape;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find('x', start), text.size());
    const std::string part(text.substr(start, end - start));
    // Plain digits only, as the CLI's strict_shape: strtol alone would take ' 4', '+4' and a tab.
    const bool digits = !part.empty() && part.size() <= 7 && part.find_first_not_of("0123456789") == std::string::npos;
    const long v = digits ? std::strtol(part.c_str(), nullptr, 10) : 0;
    if (!digits || v <= 0 || v > 1'000'000)
      throw std::invalid_argument("slice shape '" + escape_for_message(text) +
                                  "': expected positive whole numbers joined by 'x', like 4x4x4");
    shape.push_back(static_cast<int>(v));
    if (shape.size() > 8)
      throw std::invalid_argument("slice shape '" + escape_for_message(text) + "': more than 8 axes");
    start = end + 1;
  }
  return shape;
}

static bool wraps_automatically(const Chip& chip, const std::vector<int>& shape, size_t axis) {
  if (chip.wrap_rule == WrapRule::none) return false;
  if (chip.wrap_rule == WrapRule::cubes) {
    // §2.2: wraparound comes from the optical switches, available only on whole 4×4×4 cubes.
    if (shape.size() != 3) return false;
    for (int s : shape)
      if (s % 4 != 0) return false;
    return true;
  }
  // §2.2: v5e/v6e wrap an axis of 16 (the full pod side); the same rule applied to v3's 32.
  return !chip.pod_shape.empty() && axis < chip.pod_shape.size() && shape[axis] == chip.pod_shape[axis];
}

Slice make_slice(const Chip& chip, const std::vector<int>& shape, WrapPolicy wrap) {
  if (chip.pod_shape.empty())
    throw std::invalid_argument("chip " + std::string(chip.name) + " has no ICI slices (only TPUs do)");
  if (shape.size() != chip.pod_shape.size())
    throw std::invalid_argument("slice " + shape_text(shape) + " has " + std::to_string(shape.size()) +
                                " axes; a " + std::string(chip.display) + " pod has " +
                                std::to_string(chip.pod_shape.size()));
  for (size_t a = 0; a < shape.size(); ++a)
    if (shape[a] > chip.pod_shape[a])
      throw std::invalid_argument("slice " + shape_text(shape) + " exceeds the " + std::string(chip.display) +
                                  " pod " + shape_text(chip.pod_shape) + " on axis " + std::to_string(a));
  Slice s{chip, shape, std::vector<bool>(shape.size())};
  for (size_t a = 0; a < shape.size(); ++a)
    s.wraps[a] = wrap == WrapPolicy::yes ? shape[a] > 1
                 : wrap == WrapPolicy::no ? false
                                          : wraps_automatically(chip, shape, a);
  return s;
}

Slice make_slice(std::string_view chip_name, std::string_view shape, WrapPolicy wrap) {
  return make_slice(chip(chip_name), parse_shape(shape), wrap);
}

double chips(const Slice& s) { return chips_in(s.shape); }

double hosts(const Slice& s) { return std::ceil(chips(s) / chips_in(s.chip.host_shape)); }

double tensorcores(const Slice& s) { return chips(s) * s.chip.tensorcores_per_chip; }

double total_flops_per_s(const Slice& s, Dtype compute) { return chips(s) * peak_flops_per_s(s.chip, compute); }

double total_hbm_bytes(const Slice& s) { return chips(s) * s.chip.hbm_bytes; }

int hop_distance(const Slice& s, const std::vector<int>& from, const std::vector<int>& to) {
  if (from.size() != s.shape.size() || to.size() != s.shape.size())
    throw std::invalid_argument("chip coordinates must have one entry per slice axis (" +
                                std::to_string(s.shape.size()) + ")");
  int hops = 0;
  for (size_t a = 0; a < s.shape.size(); ++a) {
    if (from[a] < 0 || from[a] >= s.shape[a] || to[a] < 0 || to[a] >= s.shape[a])
      throw std::invalid_argument("chip coordinate out of range on axis " + std::to_string(a));
    const int d = std::abs(from[a] - to[a]);
    hops += s.wraps[a] ? std::min(d, s.shape[a] - d) : d;
  }
  return hops;
}

double pcie_transfer_s(const Chip& c, double bytes) {
  if (c.pcie_bytes_per_s <= 0) throw std::invalid_argument("chip " + std::string(c.name) + " has no PCIe figure");
  if (!(bytes >= 0) || !std::isfinite(bytes))
    throw std::invalid_argument("bytes = " + format_number(bytes) + ": must be a non-negative number");
  return bytes / c.pcie_bytes_per_s;
}

double dcn_transfer_s(const Chip& c, double bytes) {
  if (c.dcn_bytes_per_s_per_host <= 0)
    throw std::invalid_argument("chip " + std::string(c.name) + " has no DCN figure");
  if (!(bytes >= 0) || !std::isfinite(bytes))
    throw std::invalid_argument("bytes = " + format_number(bytes) + ": must be a non-negative number");
  return bytes / c.dcn_bytes_per_s_per_host;
}

}  // namespace scaling
