#include "scaling/hardware/chip.hpp"

#include <cmath>
#include <stdexcept>

#include "scaling/base/format.hpp"

namespace scaling {
namespace {

// §2.3 tables: pod size, host size, HBM capacity and bandwidth, bf16 and int8 FLOPs/s, ICI per link
// (one-way and bidirectional). TensorCores per chip: §2.1 (two per chip from v4 on, and on v3 as two
// separate accelerators; one on the inference chips v5e and v6e). ICI hop latency: 1 µs (§2.4, §3).
// PCIe: 1.5e10 B/s per chip (§2.3), 1.6e10 for v4 (§2.1), 3.2e10 for v6e (§2.3, footnote 10).
// DCN: 2.5e10 B/s per host (§2.2, §2.3). H100: §1.1 (9.89e14 bf16 FLOPs/s, 3.35e12 B/s) and 80 GB.
// A function-local static, so the table is ready even for other translation units' static initialisers.
const std::vector<Chip>& table() {
  static const std::vector<Chip> kChips{
    {"tpu-v3", "TPU v3", {32, 32}, {4, 2}, 2, 32e9, 9.0e11, 1.4e14, 1.4e14, 1e11, 2e11, 1e-6, 1.5e10, 2.5e10,
     WrapRule::full_axis, "§2.3 tables; cores §2.1"},
    {"tpu-v4p", "TPU v4p", {16, 16, 16}, {2, 2, 1}, 2, 32e9, 1.2e12, 2.75e14, 2.75e14, 4.5e10, 9e10, 1e-6,
     1.6e10, 2.5e10, WrapRule::cubes, "§2.3 tables; cores and PCIe §2.1"},
    {"tpu-v5p", "TPU v5p", {16, 20, 28}, {2, 2, 1}, 2, 96e9, 2.8e12, 4.59e14, 9.18e14, 9e10, 1.8e11, 1e-6,
     1.5e10, 2.5e10, WrapRule::cubes, "§2.3 tables; cores §2.1"},
    // HBM 16e9 B: the §2.3 table's "16GB" as printed. §2.1 says 16 GiB, which is what the part has; the
    // workbook records the two figures as finding v5e-hbm-gb-vs-gib (ch2.spec-table.v5e_hbm_bytes).
    {"tpu-v5e", "TPU v5e", {16, 16}, {4, 2}, 1, 16e9, 8.1e11, 1.97e14, 3.94e14, 4.5e10, 9e10, 1e-6, 1.5e10,
     2.5e10, WrapRule::full_axis, "§2.3 tables; cores §2.1"},
    {"tpu-v6e", "TPU v6e", {16, 16}, {4, 2}, 1, 32e9, 1.6e12, 9.20e14, 1.84e15, 9e10, 1.8e11, 1e-6, 3.2e10,
     2.5e10, WrapRule::full_axis, "§2.3 tables; PCIe §2.3 footnote 10"},
    {"h100", "NVIDIA H100", {}, {}, 1, 80e9, 3.35e12, 9.89e14, 0, 0, 0, 0, 0, 0,
     WrapRule::none, "§1.1 (bf16 dense FLOPs/s, HBM bandwidth); 80 GB HBM from the spec sheet §1.1 cites"},
  };
  return kChips;
}

}  // namespace

std::span<const Chip> chips() { return table(); }

const Chip& chip(std::string_view name) {
  require_printable("chip", name);
  for (const auto& c : table())
    if (c.name == name) return c;
  std::string known;
  for (const auto& c : table()) known += (known.empty() ? "" : ", ") + std::string(c.name);
  throw std::invalid_argument("unknown chip '" + std::string(name) + "' (known: " + known + ")");
}

double peak_flops_per_s(const Chip& c, Dtype compute) {
  const double peak = compute == Dtype::bf16 ? c.bf16_flops_per_s
                      : compute == Dtype::int8 ? c.int8_flops_per_s
                                               : 0.0;
  if (peak <= 0.0)
    throw std::invalid_argument("chip " + std::string(c.name) + " has no peak FLOPs/s for compute dtype " +
                                std::string(name(compute)) + " (the book gives bf16" +
                                (c.int8_flops_per_s > 0 ? " and int8" : " only") + ")");
  return peak;
}

const char* to_string(WrapRule r) {
  switch (r) {
    case WrapRule::cubes: return "cubes";
    case WrapRule::full_axis: return "full-axis";
    case WrapRule::none: return "none";
  }
  return "none";
}

Chip with_overrides(Chip c, const ChipOverrides& o) {
  std::string changed;
  auto apply = [&](const std::optional<double>& v, double& field, const char* what) {
    if (!v) return;
    if (!std::isfinite(*v) || *v <= 0)
      throw std::invalid_argument(std::string(what) + " = " + format_number(*v) + ": must be a positive number");
    field = *v;
    changed += (changed.empty() ? "" : ", ") + std::string(what) + " = " + format_number(*v);
  };
  apply(o.hbm_bytes, c.hbm_bytes, "hbm_bytes");
  apply(o.hbm_bytes_per_s, c.hbm_bytes_per_s, "hbm_bytes_per_s");
  apply(o.bf16_flops_per_s, c.bf16_flops_per_s, "bf16_flops_per_s");
  apply(o.int8_flops_per_s, c.int8_flops_per_s, "int8_flops_per_s");
  if (o.ici_oneway_bytes_per_s) {
    apply(o.ici_oneway_bytes_per_s, c.ici_oneway_bytes_per_s, "ici_oneway_bytes_per_s");
    c.ici_bidi_bytes_per_s = 2 * c.ici_oneway_bytes_per_s;  // §2.3: a link carries the same rate each way
  }
  if (!changed.empty()) {
    c.display += " (" + changed + ")";
    c.source += "; overridden: " + changed;
  }
  return c;
}

double chips_in(const std::vector<int>& shape) {
  double n = 1;
  for (int s : shape) n *= s;
  return n;
}

std::string shape_text(const std::vector<int>& shape) {
  std::string out;
  for (int s : shape) {
    if (!out.empty()) out += 'x';
    out += std::to_string(s);
  }
  return out;
}

}  // namespace scaling
