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
#include <cstdio>
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
  const auto shape = hlo::parse_shape(std::string(check::text("HLO shape", a.shape)));
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

  // The outputs, listed once: scalars as rows (table and JSON), arrays as JSON-only parts with a table line
  // each (key "") that prints them in HLO's notation.
  const int64_t bits = shape.layout.element_size_bits ? shape.layout.element_size_bits : int64_t{shape.type->byte_width} * 8;
  std::string tiles, steps;
  for (const auto& t : shape.layout.tiles) tiles += fmt::format("({})", fmt::join(t, ","));
  for (const auto& t : z.tiled_shapes) steps += (steps.empty() ? "" : " → ") + hlo::dims_text(t);
  Report r;
  r.label_width = 18;
  r.compact = true;  // a grid of millions of offsets stays one line
  r.heading = hlo::to_string(shape);
  r.outputs = {
      {"dtype", "element type", std::string(shape.type->name),  kPlain,
       fmt::format("({}-bit elements{})", bits, shape.layout.element_size_bits ? ", E(n)" : "")},
      {"", "dims", hlo::dims_text(shape.dims)},
      {"", "minor_to_major", fmt::format("{{{}}}", fmt::join(shape.layout.minor_to_major, ",")), kPlain, "(most minor first)"},
      {"", "tiles", tiles.empty() ? std::string("none") : tiles},
      {"memory_space", "", double(shape.layout.memory_space), kCount},
      {"", "memory space", fmt::format("S({}) {}", shape.layout.memory_space, memory_space_name(shape.layout.memory_space))},
      {"element_size_bits", "", double(bits), kCount},
      {"", "physical, tiled", steps},
      {"", "padded shape", hlo::dims_text(z.padded_shape)},
      {"elements", "elements", double(z.elements), kCount},
      {"buffer_elements", "buffer elements", double(z.buffer_elements), kCount,
       z.span_elements > z.buffer_elements
           ? fmt::format("(the later tiles pad further, to {}; XLA does not count it)", format_number(double(z.span_elements)))
           : ""},
      {"span_elements", "", double(z.span_elements), kCount},
      {"bytes", "bytes", double(z.bytes), "B", "", true},
      {"padded_bytes", "padded bytes", double(z.padded_bytes), "B", "", true},
      {"growth", "growth", z.growth, "x"}};
  // Whole numbers of 64 bits go to JSON as they are (a double would round above 2^53).
  r.extra = {{"dims", shape.dims},           {"minor_to_major", shape.layout.minor_to_major},
             {"tiles", shape.layout.tiles},  {"padded_shape", z.padded_shape},
             {"tiled_shapes", z.tiled_shapes}, {"elements", z.elements},
             {"buffer_elements", z.buffer_elements}, {"span_elements", z.span_elements},
             {"bytes", z.bytes},             {"padded_bytes", z.padded_bytes}};
  if (!a.index.empty()) {
    r.outputs.push_back({"", "offset [" + a.index + "]", std::to_string(offset), kPlain, "(elements from the start)"});
    r.extra["offset"] = offset;
  }
  if (a.grid) {
    if (a.json) {
      size_t next = 0;
      r.extra["offsets"] = nested(shape.dims, offsets, 0, next);
    } else {
      r.tail = "offsets (elements from the start of the buffer):\n";
    }
  }
  emit(r, a.json, check::subject("HLO shape", a.shape));
  if (a.grid && !a.json) {
    std::fflush(stdout);
    print_grid(shape.dims, offsets);
  }
}

}  // namespace

void add_layout(CLI::App& app) {
  auto a = std::make_shared<Args>();
  auto* sub = app.add_subcommand("layout", "an HLO shape's tiled layout: where each element lands in memory (§9.2.2)");
  // Its refusals say "HLO shape '…'", as the shape parser's own do.
  sub->add_option("shape", a->shape, "an HLO shape, e.g. 'bf16[4,8]{1,0:T(2,4)(2,1)}'")
      ->check(text_check("HLO shape"))
      ->required();
  auto* index = add_text(sub, "--index", a->index, "one element i,j,…: its offset");
  auto* grid = sub->add_flag("--grid", a->grid, "every element's offset, laid out like the shape (at most 1,048,576 "
                                                "elements and slice headings)");
  index->excludes(grid);
  grid->excludes(index);
  sub->add_flag("--json", a->json, "print one JSON object");
  run_when_chosen(sub, [a] { run(*a); });
}

}  // namespace cli
