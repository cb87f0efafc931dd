// `scaling layout SHAPE`: an HLO shape's tiled layout (§9.2.2) — its padded shape, buffer size and
// growth as XLA computes them, and the memory offset of one element (--index) or of every one (--grid).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>
#include <iterator>
#include <cstdint>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>
#include <memory>

#include "../options.hpp"
#include "../output.hpp"
#include "modules.hpp"
#include "scaling/base/validate.hpp"
#include "scaling/base/format.hpp"
#include "scaling/notation/hlo_shape.hpp"
#include "scaling/notation/tiled_layout.hpp"

namespace cli {

namespace {

using scaling::escape_for_message;
namespace check = scaling::check;

struct Args {
  std::string shape, index;
  bool grid = false, json = false;
};

// What --grid prints: every element once, and a "[i,j,…,:,:]" heading per 2-D slice of rank - 2 numbers.
// Both are bounded (limits::kMaxGridElements) before anything is allocated, so a 64-dimension shape of
// 2s and 1s is refused by its slice headings, not by the memory it would take.
double grid_cells(const std::vector<int64_t>& dims, double elements) {
  const double rank = static_cast<double>(dims.size());
  double per_slice = 1;
  for (size_t i = dims.size() >= 2 ? dims.size() - 2 : 0; i < dims.size(); ++i) per_slice *= static_cast<double>(dims[i]);
  const double slices = per_slice > 0 ? elements / per_slice : 0;
  return elements + (rank > 2 ? slices * (rank - 2) : 0);
}

// "2,5" -> {2, 5}: non-negative whole numbers of 64 bits, one per dimension.
std::vector<int64_t> parse_coordinates(const std::string& option, const std::string& text) {
  std::vector<int64_t> out;
  if (text.empty()) return out;  // a scalar's index
  for (const auto& part : split_list(option, text, limits::kMaxDims)) {
    int64_t v = -1;
    const auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (part.empty() || ec != std::errc() || ptr != part.data() + part.size() || v < 0)
      check::fail(check::subject(option, text),
                     "coordinate '" + escape_for_message(part) + "' is not a non-negative whole number");
    out.push_back(v);
  }
  return out;
}

std::string memory_space_name(int64_t s) {
  if (s == 0) return "HBM";
  if (s == 1) return "VMEM on a TPU";
  return "another memory space";
}

// Offsets (row-major over the logical index) nested like the shape.
nlohmann::json nested(const std::vector<int64_t>& dims, const std::vector<int64_t>& offsets, size_t dim, size_t& next) {
  if (dim == dims.size()) return offsets[next++];
  nlohmann::json a = nlohmann::json::array();
  for (int64_t i = 0; i < dims[dim]; ++i) a.push_back(nested(dims, offsets, dim + 1, next));
  return a;
}

void print_grid(const std::vector<int64_t>& dims, const std::vector<int64_t>& offsets) {
  if (dims.empty()) {
    fmt::print("{}\n", offsets.at(0));
    return;
  }
  const int64_t cols = dims.back();
  const int64_t rows = dims.size() >= 2 ? dims[dims.size() - 2] : 1;
  const int64_t per_slice = rows * cols;
  int64_t widest = 1;
  for (int64_t o : offsets) widest = std::max<int64_t>(widest, static_cast<int64_t>(std::to_string(o).size()));
  fmt::memory_buffer out;
  std::vector<int64_t> lead(dims.size() > 2 ? dims.size() - 2 : 0, 0);
  for (size_t start = 0; start < offsets.size(); start += static_cast<size_t>(per_slice)) {
    if (!lead.empty()) {
      fmt::format_to(std::back_inserter(out), "[{},:,:]\n", fmt::join(lead, ","));
      for (size_t i = lead.size(); i-- > 0;) {
        if (++lead[i] < dims[i]) break;
        lead[i] = 0;
      }
    }
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c)
        fmt::format_to(std::back_inserter(out), "{}{:>{}}", c ? " " : "", offsets[start + static_cast<size_t>(r * cols + c)],
                       widest);
      out.push_back('\n');
    }
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
}

void run(const Args& a) {
  using namespace scaling;
  const auto shape = hlo::parse_shape(std::string(check::text("shape", a.shape)));
  const auto z = hlo::layout_sizes(shape);
  if (a.grid) {
    const double cells = grid_cells(shape.dims, double(z.elements));
    if (cells > limits::kMaxGridElements)
      check::fail(check::subject("--grid", hlo::to_string(shape)),
                     fmt::format("{} elements and slice headings to print: {}", format_number(cells),
                                 check::at_most_rule(limits::kMaxGridElements)));
  }
  const hlo::OffsetMap map(shape);
  std::vector<int64_t> offsets;
  int64_t offset = 0;
  if (a.grid) offsets = map.all();
  if (!a.index.empty()) {
    const auto index = parse_coordinates("--index", a.index);
    offset = for_option("--index '" + escape_for_message(a.index) + "'", [&] { return map.offset(index); });
  }

  if (a.json) {
    nlohmann::json out{{"dtype", shape.type->name},
                       {"dims", shape.dims},
                       {"minor_to_major", shape.layout.minor_to_major},
                       {"tiles", shape.layout.tiles},
                       {"memory_space", shape.layout.memory_space},
                       {"element_size_bits", shape.layout.element_size_bits ? shape.layout.element_size_bits
                                                                            : int64_t{shape.type->byte_width} * 8},
                       {"padded_shape", z.padded_shape},
                       {"elements", z.elements},
                       {"buffer_elements", z.buffer_elements},
                       {"span_elements", z.span_elements},
                       {"tiled_shapes", z.tiled_shapes},
                       {"bytes", z.bytes},
                       {"padded_bytes", z.padded_bytes},
                       {"growth", check::finite("growth", z.growth)}};
    if (a.grid) {
      size_t next = 0;
      out["offsets"] = nested(shape.dims, offsets, 0, next);
    }
    if (!a.index.empty()) out["offset"] = offset;
    std::cout << out.dump() << "\n";
    return;
  }
  fmt::print("{}\n", hlo::to_string(shape));
  fmt::print("  {:<18} {} ({}-bit elements{})\n", "element type", shape.type->name,
             shape.layout.element_size_bits ? shape.layout.element_size_bits : shape.type->byte_width * 8,
             shape.layout.element_size_bits ? ", E(n)" : "");
  fmt::print("  {:<18} {}\n", "dims", hlo::dims_text(shape.dims));
  fmt::print("  {:<18} {{{}}} (most minor first)\n", "minor_to_major", fmt::join(shape.layout.minor_to_major, ","));
  std::string tiles;
  for (const auto& t : shape.layout.tiles) tiles += fmt::format("({})", fmt::join(t, ","));
  fmt::print("  {:<18} {}\n", "tiles", tiles.empty() ? "none" : tiles);
  fmt::print("  {:<18} S({}) {}\n", "memory space", shape.layout.memory_space, memory_space_name(shape.layout.memory_space));
  std::string steps;
  for (const auto& t : z.tiled_shapes) steps += (steps.empty() ? "" : " → ") + hlo::dims_text(t);
  fmt::print("  {:<18} {}\n", "physical, tiled", steps);
  fmt::print("  {:<18} {}\n", "padded shape", hlo::dims_text(z.padded_shape));
  fmt::print("  {:<18} {}\n", "elements", format_number(double(z.elements)));
  fmt::print("  {:<18} {}{}\n", "buffer elements", format_number(double(z.buffer_elements)),
             z.span_elements > z.buffer_elements ? fmt::format(" (the later tiles pad further, to {}; XLA does not count it)",
                                                               format_number(double(z.span_elements)))
                                                 : "");
  fmt::print("  {:<18} {}\n", "bytes", format_quantity(double(z.bytes), "B"));
  fmt::print("  {:<18} {}\n", "padded bytes", format_quantity(double(z.padded_bytes), "B"));
  fmt::print("  {:<18} {}x\n", "growth", format_number(z.growth));
  if (!a.index.empty())
    fmt::print("  {:<18} {} (elements from the start)\n", "offset [" + escape_for_message(a.index) + "]", offset);
  if (a.grid) {
    fmt::print("offsets (elements from the start of the buffer):\n");
    print_grid(shape.dims, offsets);
  }
}

}  // namespace

void add_layout(CLI::App& app) {
  auto a = std::make_shared<Args>();
  auto* sub = app.add_subcommand("layout", "an HLO shape's tiled layout: where each element lands in memory (§9.2.2)");
  add_text(sub, "shape", a->shape, "an HLO shape, e.g. 'bf16[4,8]{1,0:T(2,4)(2,1)}'")->required();
  auto* index = add_text(sub, "--index", a->index, "one element i,j,…: its offset");
  auto* grid = sub->add_flag("--grid", a->grid, "every element's offset, laid out like the shape (at most 4,194,304 "
                                                "elements and slice headings)");
  index->excludes(grid);
  grid->excludes(index);
  sub->add_flag("--json", a->json, "print one JSON object");
  run_when_chosen(sub, [a] { run(*a); });
}

}  // namespace cli
