#include "scaling/notation/einsum.hpp"

#include <cctype>
#include <cmath>
#include <stdexcept>

#include "scaling/base/format.hpp"

namespace scaling {

namespace {
struct Parsed {
  std::string a, b, out;
};

// The spec as messages quote it: escaped and cut at 80 characters, like every echoed value.
std::string where(std::string_view spec) { return "einsum '" + escape_for_message(spec) + "'"; }

// The whole character at text[i] (a letter's test is on bytes; a message shows the character, never half
// of a UTF-8 sequence): the spec is printable, so valid UTF-8, when this is called.
std::string character_at(const std::string& text, size_t i) {
  const auto c = static_cast<unsigned char>(text[i]);
  const size_t n = c < 0x80 ? 1 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
  return text.substr(i, n);
}

Parsed parse(std::string_view spec) {
  require_printable("einsum", spec);
  std::string s;
  for (char c : spec)
    if (!std::isspace(static_cast<unsigned char>(c))) s += c;
  const auto arrow = s.find("->"), comma = s.find(',');
  if (arrow == std::string::npos || comma == std::string::npos || comma > arrow ||
      s.find(',', comma + 1) < arrow || s.find("->", arrow + 2) != std::string::npos)
    throw std::invalid_argument(where(spec) + ": expected two inputs and one output, like IJ,JK->IK");
  Parsed p{s.substr(0, comma), s.substr(comma + 1, arrow - comma - 1), s.substr(arrow + 2)};
  for (const std::string* operand : {&p.a, &p.b, &p.out}) {
    for (size_t i = 0; i < operand->size(); ++i) {
      const char c = (*operand)[i];
      if (!std::isalpha(static_cast<unsigned char>(c)))
        throw std::invalid_argument(where(spec) + ": '" + character_at(*operand, i) + "' is not a letter");
      if (operand->find(c, i + 1) != std::string::npos)
        throw std::invalid_argument(where(spec) + ": letter " + std::string(1, c) +
                                    " repeats within one operand");
    }
  }
  if (p.a.empty() || p.b.empty()) throw std::invalid_argument(where(spec) + ": an input has no dimensions");
  for (char c : p.out)
    if (p.a.find(c) == std::string::npos && p.b.find(c) == std::string::npos)
      throw std::invalid_argument(where(spec) + ": output letter " + std::string(1, c) +
                                  " is in neither input");
  return p;
}

std::string letters(const Parsed& p) {
  std::string all;
  for (char c : p.a + p.b)
    if (all.find(c) == std::string::npos) all += c;
  return all;
}
}  // namespace

EinsumDims classify_einsum(std::string_view spec) {
  const Parsed p = parse(spec);
  EinsumDims d;
  for (char c : letters(p)) {
    const bool in_a = p.a.find(c) != std::string::npos, in_b = p.b.find(c) != std::string::npos;
    const bool in_out = p.out.find(c) != std::string::npos;
    if (in_a && in_b) (in_out ? d.batch : d.contracting) += c;
    else d.free += c;
  }
  return d;
}

EinsumSpec parse_einsum(std::string_view spec) {
  const Parsed p = parse(spec);
  return {p.a, p.b, p.out};
}

double einsum_flops(std::string_view spec, const std::map<char, double>& sizes) {
  const Parsed p = parse(spec);
  const std::string all = letters(p);
  for (const auto& [letter, size] : sizes) {
    if (all.find(letter) == std::string::npos)
      throw std::invalid_argument(where(spec) + ": size given for unused letter " + std::string(1, letter));
    if (!std::isfinite(size) || size < 1 || size != std::floor(size))
      throw std::invalid_argument("letter " + std::string(1, letter) + " = " + format_number(size) +
                                  ": must be a positive whole number");
  }
  double product = 1;
  for (char c : all) {
    const auto it = sizes.find(c);
    if (it == sizes.end()) throw std::invalid_argument(where(spec) + ": no size for letter " + std::string(1, c));
    product *= it->second;
  }
  return (classify_einsum(spec).contracting.empty() ? 1 : 2) * product;
}

double einsum_flops_from_shapes(std::string_view spec, const std::vector<std::vector<double>>& input_shapes) {
  const Parsed p = parse(spec);
  if (input_shapes.size() != 2) throw std::invalid_argument("einsum: expected two input shapes");
  std::map<char, double> sizes;
  const std::string* operands[2] = {&p.a, &p.b};
  for (size_t i = 0; i < 2; ++i) {
    const std::string& op = *operands[i];
    if (input_shapes[i].size() != op.size())
      throw std::invalid_argument("einsum operand " + op + " has " + std::to_string(op.size()) + " letters but shape rank " +
                                  std::to_string(input_shapes[i].size()));
    for (size_t j = 0; j < op.size(); ++j) {
      const auto [it, inserted] = sizes.emplace(op[j], input_shapes[i][j]);
      if (!inserted && it->second != input_shapes[i][j])
        throw std::invalid_argument("einsum letter " + std::string(1, op[j]) + " has two sizes: " +
                                    format_number(it->second) + " and " + format_number(input_shapes[i][j]));
    }
  }
  return einsum_flops(spec, sizes);
}

std::map<char, double> parse_letter_sizes(std::string_view text) {
  require_printable("sizes", text);
  std::map<char, double> out;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = std::min(text.find(',', start), text.size());
    const std::string part(text.substr(start, end - start));
    const auto eq = part.find('=');
    if (eq != 1 || !std::isalpha(static_cast<unsigned char>(part[0])))
      throw std::invalid_argument("sizes '" + std::string(text) + "': expected LETTER=SIZE pairs like I=4,J=8");
    char* stop = nullptr;
    const double v = std::strtod(part.c_str() + 2, &stop);
    if (part.size() == 2 || *stop != '\0')
      throw std::invalid_argument("size of " + part.substr(0, 1) + " '" + part.substr(2) + "': not a number");
    if (!out.emplace(part[0], v).second)
      throw std::invalid_argument("letter " + part.substr(0, 1) + " has two sizes");
    start = end + 1;
  }
  return out;
}

}  // namespace scaling
