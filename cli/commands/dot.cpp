// `scaling dot SPEC --shapes S1 S2`: the dot_general XLA gets from a two-operand einsum (§9.1) — which
// operand goes first, the contracting and batch dimensions, the output shape and type, the FLOPs, and
// the HLO text.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "../options.hpp"
#include "../output.hpp"
#include "modules.hpp"
#include <memory>
#include "scaling/base/format.hpp"
#include "scaling/notation/dot_general.hpp"
#include "scaling/notation/hlo_shape.hpp"

namespace cli {

namespace {

struct Args {
  std::string spec;
  std::vector<std::string> shapes, dtypes;
  bool json = false;
};

// An operand: an HLO shape (its own type) or sizes "128,256" (the type from --dtypes, else f32).
scaling::hlo::Shape operand(const Args& a, size_t i) {
  using namespace scaling;
  const std::string& text = a.shapes.at(i);
  const std::string option = "--shapes '" + escape_for_message(text) + "'";
  const bool typed = text.find('[') != std::string::npos;
  const hlo::ElementType* dtype = nullptr;
  if (!a.dtypes.empty())
    dtype = &for_option("--dtypes '" + escape_for_message(a.dtypes.at(i)) + "'", [&]() -> const hlo::ElementType& {
      return hlo::element_type(a.dtypes.at(i));
    });
  if (typed) {
    auto s = for_option(option, [&] { return hlo::parse_shape(text); });
    if (dtype && dtype->name != s.type->name)
      throw std::invalid_argument("--dtypes '" + std::string(dtype->name) + "': operand " + std::to_string(i + 1) +
                                  " is already typed " + std::string(s.type->name) + " by --shapes");
    return s;
  }
  if (text.empty() || text.find_first_not_of("0123456789,") != std::string::npos)
    throw std::invalid_argument(option + ": expected sizes like 128,256 or an HLO shape like f32[128,256]");
  return for_option(option, [&] { return hlo::parse_shape(std::string(dtype ? dtype->name : "f32") + "[" + text + "]"); });
}

void run(const Args& a) {
  using namespace scaling;
  if (a.shapes.size() != 2) throw UsageError("--shapes takes two shapes");
  if (!a.dtypes.empty() && a.dtypes.size() != 2) throw UsageError("--dtypes takes two types");
  const auto first = operand(a, 0), second = operand(a, 1);
  // The einsum and the shapes disagree (a letter with two sizes): the refusal names --shapes as well.
  const auto d = for_option(given({{"--shapes", a.shapes[0] + " " + a.shapes[1]}}),
                            [&] { return hlo::lower_einsum(a.spec, first, second); });
  require_finite("the FLOPs", d.flops, given({{"--shapes", a.shapes[0] + " " + a.shapes[1]}}));
  std::vector<int64_t> out_shape;
  if (d.transpose.empty()) out_shape = d.output.dims;
  else
    for (int64_t k : d.transpose) out_shape.push_back(d.output.dims[static_cast<size_t>(k)]);

  // The outputs, listed once: scalars as rows; the dimension lists JSON-only, with a table line each.
  Report r;
  r.label_width = 20;
  r.heading = fmt::format("einsum '{}' on {} and {}", a.spec, hlo::to_string(first), hlo::to_string(second));
  r.outputs = {
      {"lhs", "", hlo::to_string(d.lhs.shape)},
      {"rhs", "", hlo::to_string(d.rhs.shape)},
      {"lhs_operand", "", double(d.lhs.einsum_input + 1), kCount},
      {"rhs_operand", "", double(d.rhs.einsum_input + 1), kCount},
      {"lhs_converted", "", d.lhs.converted},
      {"rhs_converted", "", d.rhs.converted},
      {"", "lhs", fmt::format("operand {} as {}{}", d.lhs.einsum_input + 1, hlo::to_string(d.lhs.shape),
                              d.lhs.converted ? " (converted)" : "")},
      {"", "rhs", fmt::format("operand {} as {}{}", d.rhs.einsum_input + 1, hlo::to_string(d.rhs.shape),
                              d.rhs.converted ? " (converted)" : "")},
      {"", "contracting dims",
       fmt::format("lhs {{{}}}, rhs {{{}}}", fmt::join(d.lhs_contracting, ","), fmt::join(d.rhs_contracting, ","))},
      {"", "batch dims",
       d.lhs_batch.empty() ? std::string("none")
                           : fmt::format("lhs {{{}}}, rhs {{{}}}", fmt::join(d.lhs_batch, ","), fmt::join(d.rhs_batch, ","))},
      {"", "output",
       hlo::to_string(d.output) +
           (d.transpose.empty() ? "" : fmt::format(", then transposed by {{{}}}", fmt::join(d.transpose, ",")))},
      {"output_dtype", "", std::string(d.output.type->name)},
      {"flops", "FLOPs", d.flops, "FLOPs"},
      {"hlo", "", d.hlo}};
  r.extra = {{"lhs_contracting", d.lhs_contracting}, {"rhs_contracting", d.rhs_contracting},
             {"batch_dims", {{"lhs", d.lhs_batch}, {"rhs", d.rhs_batch}}}, {"dot_output_shape", d.output.dims},
             {"transpose", d.transpose}, {"output_shape", out_shape}};
  r.tail = "HLO:\n" + d.hlo + "\n";
  emit(r, a.json, given({{"--shapes", a.shapes[0] + " " + a.shapes[1]}}));
}

}  // namespace

void add_dot(CLI::App& app) {
  auto a = std::make_shared<Args>();
  auto* sub = app.add_subcommand("dot", "the dot_general XLA gets from a two-operand einsum (§9.1)");
  // Named as the einsum parser names it in its messages ("einsum '…': …"), so every refusal reads alike.
  add_text(sub, "einsum", a->spec, "the einsum, e.g. 'bf,fd->db'")->required();
  sub->add_option("--shapes", a->shapes, "the two operands: HLO shapes (f32[128,256]) or sizes (128,256)")
      ->check(text_check("--shapes"))
      ->expected(2)
      ->required();
  sub->add_option("--dtypes", a->dtypes, "their element types, XLA's names (default f32, JAX's default)")
      ->check(text_check("--dtypes"))
      ->expected(2);
  sub->add_flag("--json", a->json, "print one JSON object");
  run_when_chosen(sub, [a] { run(*a); });
}

}  // namespace cli
