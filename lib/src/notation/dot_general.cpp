#include "scaling/notation/dot_general.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <stdexcept>

#include "scaling/base/format.hpp"
#include "scaling/notation/einsum.hpp"

namespace scaling::hlo {

namespace {

std::string list(const std::vector<int64_t>& v) { return fmt::format("{}", fmt::join(v, ",")); }

Shape row_major(const ElementType& type, std::vector<int64_t> dims) {
  Shape s;
  s.type = &type;
  s.dims = std::move(dims);
  for (int64_t d = static_cast<int64_t>(s.dims.size()) - 1; d >= 0; --d) s.layout.minor_to_major.push_back(d);
  return s;
}

int64_t position(const std::string& letters, char c) { return static_cast<int64_t>(letters.find(c)); }

}  // namespace

DotGeneral lower_einsum(std::string_view spec, const Shape& first, const Shape& second) {
  const EinsumSpec e = parse_einsum(spec);
  const std::string where = "einsum '" + escape_for_message(spec) + "'";
  const Shape* inputs[2] = {&first, &second};
  const std::string* letters[2] = {&e.lhs, &e.rhs};
  std::map<char, int64_t> size;
  for (int i = 0; i < 2; ++i) {
    const auto& dims = inputs[i]->dims;
    if (dims.size() != letters[i]->size())
      throw std::invalid_argument(where + ": operand " + std::to_string(i + 1) + " '" + *letters[i] + "' has " +
                                  std::to_string(letters[i]->size()) + " letters but its shape " + to_string(*inputs[i]) +
                                  " has rank " + std::to_string(dims.size()));
    for (size_t j = 0; j < dims.size(); ++j) {
      const char c = (*letters[i])[j];
      const auto [it, inserted] = size.emplace(c, dims[j]);
      if (!inserted && it->second != dims[j])
        throw std::invalid_argument(where + ": letter " + std::string(1, c) + " has two sizes, " +
                                    std::to_string(it->second) + " and " + std::to_string(dims[j]));
    }
  }
  for (int i = 0; i < 2; ++i)
    for (char c : *letters[i])
      if (letters[1 - i]->find(c) == std::string::npos && e.out.find(c) == std::string::npos)
        throw std::invalid_argument(where + ": letter " + std::string(1, c) + " is in one input only and not in the "
                                    "output, a reduction before the dot (not modelled)");
  const ElementType& type = promote(*first.type, *second.type);

  // Batch letters in the output's order; contracting in the lhs's; free in each operand's.
  auto in = [](const std::string& s, char c) { return s.find(c) != std::string::npos; };
  std::string batch;
  for (char c : e.out)
    if (in(e.lhs, c) && in(e.rhs, c)) batch += c;
  auto free_of = [&](const std::string& op, const std::string& other) {
    std::string f;
    for (char c : op)
      if (!in(other, c)) f += c;
    return f;
  };
  const std::string natural = batch + free_of(e.lhs, e.rhs) + free_of(e.rhs, e.lhs);
  const std::string swapped = batch + free_of(e.rhs, e.lhs) + free_of(e.lhs, e.rhs);
  const bool swap = natural != e.out && swapped == e.out;

  DotGeneral d;
  const int l = swap ? 1 : 0, r = 1 - l;
  d.lhs = {l, *letters[l], row_major(type, inputs[l]->dims), inputs[l]->type->name != type.name};
  d.rhs = {r, *letters[r], row_major(type, inputs[r]->dims), inputs[r]->type->name != type.name};
  for (char c : batch) {
    d.lhs_batch.push_back(position(d.lhs.letters, c));
    d.rhs_batch.push_back(position(d.rhs.letters, c));
  }
  for (char c : d.lhs.letters)
    if (in(d.rhs.letters, c) && !in(e.out, c)) {
      d.lhs_contracting.push_back(position(d.lhs.letters, c));
      d.rhs_contracting.push_back(position(d.rhs.letters, c));
    }
  d.output_letters = batch + free_of(d.lhs.letters, d.rhs.letters) + free_of(d.rhs.letters, d.lhs.letters);
  std::vector<int64_t> out_dims;
  for (char c : d.output_letters) out_dims.push_back(size.at(c));
  d.output = row_major(type, out_dims);
  try {
    element_count(d.output);
  } catch (const std::invalid_argument&) {
    throw std::invalid_argument(where + ": the element count of the output " + dims_text(out_dims) + " overflows 64 bits");
  }
  if (d.output_letters != e.out)
    for (char c : e.out) d.transpose.push_back(position(d.output_letters, c));

  // 2 FLOPs per output element per contracted element.
  d.flops = 2;
  for (char c : d.output_letters) d.flops *= static_cast<double>(size.at(c));
  for (int64_t k : d.lhs_contracting) d.flops *= static_cast<double>(d.lhs.shape.dims[static_cast<size_t>(k)]);

  std::string h;
  for (int i = 0; i < 2; ++i)
    h += "%arg" + std::to_string(i) + " = " + to_string(row_major(*inputs[i]->type, inputs[i]->dims)) + " parameter(" +
         std::to_string(i) + ")\n";
  auto operand = [&](const DotOperand& o) {
    const std::string arg = "%arg" + std::to_string(o.einsum_input);
    if (!o.converted) return arg;
    const std::string name = "%convert" + std::to_string(o.einsum_input);
    h += name + " = " + to_string(o.shape) + " convert(" + to_string(row_major(*inputs[o.einsum_input]->type, o.shape.dims)) +
         " " + arg + ")\n";
    return name;
  };
  const std::string lhs_name = operand(d.lhs), rhs_name = operand(d.rhs);
  h += std::string(d.transpose.empty() ? "ROOT " : "") + "%dot = " + to_string(d.output) + " dot(" + to_string(d.lhs.shape) +
       " " + lhs_name + ", " + to_string(d.rhs.shape) + " " + rhs_name + ")";
  if (!batch.empty()) h += ", lhs_batch_dims={" + list(d.lhs_batch) + "}, rhs_batch_dims={" + list(d.rhs_batch) + "}";
  h += ", lhs_contracting_dims={" + list(d.lhs_contracting) + "}, rhs_contracting_dims={" + list(d.rhs_contracting) + "}";
  if (!d.transpose.empty()) {
    std::vector<int64_t> final_dims;
    for (char c : e.out) final_dims.push_back(size.at(c));
    h += "\nROOT %transpose = " + to_string(row_major(type, final_dims)) + " transpose(" + to_string(d.output) +
         " %dot), dimensions={" + list(d.transpose) + "}";
  }
  d.hlo = h;
  return d;
}

}  // namespace scaling::hlo
