// Number and size parsing: the CLI's sizes, positive figures, lists and axis indices (cli/parse.cpp),
// slice shapes, dtypes, collectives and einsum letter sizes. Input: one text, as typed after an option.
#include <fmt/format.h>

#include "../cli/commands.hpp"
#include "contract.hpp"
#include "scaling/cost/collectives.hpp"
#include "scaling/hardware/dtype.hpp"
#include "scaling/hardware/topology.hpp"
#include "scaling/notation/einsum.hpp"

namespace {

// A refusal must name the option it was given to.
template <class Fn>
bool parsed(const char* option, Fn&& f) {
  try {
    f();
    return true;
  } catch (const std::invalid_argument& e) {
    fuzz::require(fuzz::one_line(e.what()), std::string("message is not one line: ") + e.what());
    fuzz::require(std::string_view(e.what()).find(option) != std::string_view::npos,
                  std::string("message does not name ") + option + ": " + e.what());
    return false;
  } catch (const std::exception& e) {
    fuzz::broken(std::string("escaped ") + e.what());
  }
}

void whole_positive(double v, const std::string& what) {
  fuzz::finite(v, what);
  fuzz::require(v > 0 && v == std::floor(v), what + " is not a positive whole number");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;
  const std::string text(reinterpret_cast<const char*>(data), size);

  double v = 0;
  if (parsed("--size", [&] { v = cli::parse_size("--size", text); })) {
    whole_positive(v, "parse_size");
    // Canonical form: the shortest text that round-trips parses back to the same value.
    fuzz::require(cli::parse_size("--size", fmt::format("{}", v)) == v, "parse_size does not round-trip");
  }
  if (parsed("--figure", [&] { v = cli::parse_positive("--figure", text); })) {
    fuzz::finite(v, "parse_positive");
    fuzz::require(v > 0, "parse_positive returned a non-positive value");
    fuzz::require(cli::parse_positive("--figure", fmt::format("{}", v)) == v, "parse_positive does not round-trip");
  }
  std::vector<double> sizes;
  if (parsed("--shape", [&] { sizes = cli::parse_sizes("--shape", text); })) {
    std::string canonical;
    for (double s : sizes) {
      whole_positive(s, "parse_sizes");
      canonical += (canonical.empty() ? "" : ",") + fmt::format("{}", s);
    }
    fuzz::require(cli::parse_sizes("--shape", canonical) == sizes, "parse_sizes does not round-trip");
  }
  std::vector<int> indices;
  if (parsed("--axes", [&] { indices = cli::parse_indices("--axes", text); })) {
    std::string canonical;
    for (int i : indices) {
      fuzz::require(i >= 0, "parse_indices returned a negative index");
      canonical += (canonical.empty() ? "" : ",") + std::to_string(i);
    }
    fuzz::require(cli::parse_indices("--axes", canonical) == indices, "parse_indices does not round-trip");
  }
  parsed("--wrap", [&] { cli::parse_wrap(text); });

  std::vector<int> shape;
  if (parsed("slice shape", [&] { shape = scaling::parse_shape(text); })) {
    for (int s : shape) fuzz::require(s >= 1, "parse_shape returned an axis below 1");
    fuzz::require(scaling::parse_shape(scaling::shape_text(shape)) == shape, "slice shape does not round-trip");
    fuzz::finite(scaling::chips_in(shape), "chips in the shape");
  }
  scaling::Dtype dtype{};
  if (fuzz::accepted([&] { dtype = scaling::parse_dtype(text); }))
    fuzz::require(scaling::parse_dtype(scaling::name(dtype)) == dtype, "dtype does not round-trip");
  scaling::Collective op{};
  if (fuzz::accepted([&] { op = scaling::parse_collective(text); }))
    fuzz::require(scaling::parse_collective(scaling::name(op)) == op, "collective does not round-trip");
  std::map<char, double> letters;
  if (fuzz::accepted([&] { letters = scaling::parse_letter_sizes(text); }))
    for (const auto& [letter, s] : letters) fuzz::require(std::isalpha(static_cast<unsigned char>(letter)), "letter");
  return 0;
}
