// Chapter 8, a second reading for slips (issue 18): §8.2's code for the latency–throughput rooflines. As
// printed it stops before plotting anything, twice, and a third slip would cut the plotted batches short.
// The code is described here, not copied: what it assigns, what it reads, how it calls, and the sizes it uses.
#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "exercise.hpp"
#include "scaling/base/format.hpp"

using scaling::format_number;
using scaling::format_quantity;
using workbook::exact;
using workbook::Finding;
using workbook::Severity;

static auto& chapter = workbook::define_chapter(8, "ch08", "Serving LLaMA 3-70B on TPUs");

namespace {

const Finding kUndefinedNames{
    "roofline-code-undefined-names", Severity::slip,
    "§8.2's roofline code reads bytes_per_param and param_count, which it never defines",
    "§8.2's code sets param_size = 70e9 (int8 bytes), then reassigns it as the product of bytes_per_param and "
    "param_count, and later computes the FLOPs time from param_count: neither name is assigned anywhere in the "
    "block, so Python stops at the reassignment with a NameError. Defining param_count = 70e9 and "
    "bytes_per_param = 1 (what the comments say) makes both lines mean what the text intends."};

const Finding kCallArity{
    "roofline-code-call-arity", Severity::slip,
    "§8.2's roofline code calls get_max_batch_size with three arguments; it takes one",
    "The function get_max_batch_size is defined with one parameter, max_num_chips (16 by default), and reads "
    "the sequence length and the parameter bytes from the enclosing scope; the code then calls it with three "
    "arguments (the chip count, the sequence length and the parameter size), which Python rejects with a "
    "TypeError. Called with the chip count alone it does what the comment says."};

const Finding kWrongArray{
    "roofline-code-index-wrong-array", Severity::slip,
    "§8.2's roofline code slices 1…511 by an index into 1, 5, 9, …",
    "get_max_batch_size returns max_idx, a position in its candidate batches 1, 5, 9, … (a step of 4), the "
    "last one that fits on 16 chips. The caller uses it to cut a different array, the batches 1, 2, …, 511, "
    "keeping its first max_idx entries. At 8k context (163,840 bytes of int8 KV per token, 70e9 bytes of "
    "parameters, 16e9 per chip) the last fitting candidate is 137, at position 34, so the plot would stop at "
    "batch 34 instead of 137. Slicing the candidates themselves, or 1…511 up to the batch at max_idx, fixes it."};

// The §8.2 code's inputs (stated in its assignments and comments).
constexpr double kParamBytes = 70e9, kChips = 16, kChipHbm = 16e9, kSeq = 8192;
constexpr double kKvBytesPerToken = 2.0 * 128 * 8 * 80;  // K and V, H = 128, K = 8 heads, L = 80, int8

// One statement of the code at top level or in a function body, in order: the names it assigns and the
// names it reads (np and Python built-ins are left out, being imported or built in).
struct Statement {
  std::vector<std::string> assigns, reads;
};
const std::vector<Statement>& statements() {
  static const std::vector<Statement> s = {
      {{"num_chips"}, {}},
      {{"param_size"}, {}},
      {{"sequence_length"}, {}},
      {{"hbm_bandwidth"}, {}},
      {{"flops"}, {}},
      {{"param_size"}, {"bytes_per_param", "param_count"}},
      {{"kv_cache_size"}, {}},  // def: its body reads only its argument
      {{"min_topology"}, {}},   // def: likewise
      {{"get_max_batch_size"}, {}},  // def: its body runs at the call, after every assignment above
      {{"max_idx"}, {"get_max_batch_size", "num_chips", "sequence_length", "param_size", "kv_cache_size",
                     "min_topology"}},
      {{"batch_sizes"}, {"max_idx"}},
      {{"kv_sizes"}, {"kv_cache_size", "sequence_length", "batch_sizes"}},
      {{"kv_comms_time"}, {"kv_sizes", "num_chips", "hbm_bandwidth"}},
      {{"param_comms_time"}, {"param_size", "num_chips", "hbm_bandwidth"}},
      {{"param_comms_time"}, {"param_comms_time", "batch_sizes"}},
      {{"flops_time"}, {"param_count", "batch_sizes", "num_chips", "flops"}},
      {{"mlp_time"}, {"flops_time", "param_comms_time"}},
      {{"attn_time"}, {"kv_comms_time"}},
      {{"latency"}, {"mlp_time", "attn_time"}},
      {{"throughput"}, {"batch_sizes", "latency", "num_chips"}},
  };
  return s;
}

// Names read before any statement has assigned them, in order (each counted once).
std::vector<std::string> read_before_assigned() {
  std::set<std::string> bound, reported;
  std::vector<std::string> out;
  for (const auto& st : statements()) {
    for (const auto& r : st.reads)
      if (!bound.count(r) && reported.insert(r).second) out.push_back(r);
    for (const auto& a : st.assigns) bound.insert(a);
  }
  return out;
}

// The chips the code's min_topology gives for `bytes`: the next power of two of bytes / 16e9.
double min_topology(double bytes) { return std::pow(2.0, std::ceil(std::log2(bytes / kChipHbm))); }

}  // namespace

EXERCISE("ch8.roofline-code", "§8.2's roofline code as printed") {
  ex.section("§8.2");
  const auto missing = read_before_assigned();
  std::string names;
  for (const auto& n : missing) names += (names.empty() ? "" : ", ") + n;
  ex.claim("undefined_names", "§8.2's code defines every name it reads (names read but never assigned)",
           double(missing.size()), "names")
      .about(0, exact())
      .erratum(kUndefinedNames, "Read but never assigned: " + names + ".")
      .explain("the statements in order, each name read checked against those assigned before it");

  // The call: the definition's parameters against the arguments passed.
  constexpr int kParameters = 1;  // max_num_chips
  constexpr int kArguments = 3;   // the chip count, the sequence length, the parameter size
  ex.claim("surplus_arguments", "§8.2's code calls get_max_batch_size with the arguments it takes (arguments "
                                "beyond its parameters)",
           double(kArguments - kParameters), "arguments")
      .about(0, exact())
      .erratum(kCallArity, "Defined with " + std::to_string(kParameters) + " parameter, called with " +
                               std::to_string(kArguments) + " arguments.")
      .explain("positional arguments passed minus parameters declared (none of them variadic)");

  // Were both fixed: the index the function returns, and what the caller does with it.
  std::vector<double> candidates;
  for (double b = 1; b < 1024; b += 4) candidates.push_back(b);
  int max_idx = -1;
  for (size_t i = 0; i < candidates.size(); ++i)
    if (min_topology(candidates[i] * kSeq * kKvBytesPerToken + kParamBytes) <= kChips) max_idx = static_cast<int>(i);
  std::vector<double> plotted;
  for (double b = 1; b < 512 && static_cast<int>(plotted.size()) < max_idx; b += 1) plotted.push_back(b);
  ex.answer("max_idx", max_idx, "").explain("the last position among 1, 5, 9, … whose KV caches and weights fit in "
                                            "16 chips of 16e9 bytes at 8k context");
  ex.answer("largest_fitting_candidate", candidates[static_cast<size_t>(max_idx)], "tokens")
      .explain("the batch at that position: " + format_number(candidates[static_cast<size_t>(max_idx)]) +
               " sequences of 8k take " +
               format_quantity(candidates[static_cast<size_t>(max_idx)] * kSeq * kKvBytesPerToken + kParamBytes, "B"));
  ex.claim("largest_plotted_batch", "§8.2's code plots up to the largest batch that fits (the comment at the call: "
                                    "the largest batch size that can fit)",
           plotted.back(), "tokens")
      .about(candidates[static_cast<size_t>(max_idx)], exact())
      .erratum(kWrongArray, "The first " + std::to_string(max_idx) + " of 1…511 end at " + format_number(plotted.back()) +
                                ".")
      .explain("the last batch the plot would show, with the names and the call fixed");
}
