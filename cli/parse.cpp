// The command line's values, read through base/validate.hpp's one vocabulary: every message is
// "<option> '<text>': <rule>", the same in every subcommand.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <stdexcept>

#include "commands.hpp"
#include "limits.hpp"
#include "scaling/base/format.hpp"
#include "scaling/base/validate.hpp"

namespace cli {

namespace v = scaling::check;

double parse_size(const std::string& option, const std::string& text, double max) {
  return v::size(option, text, max);
}

double parse_positive(const std::string& option, const std::string& text) {
  const double value = v::number(option, text);
  if (!(value > 0)) v::fail(v::subject(option, text), v::kPositive);
  // A hardware figure's range (validate.hpp), the same as a chip file's: no 1e-320 peak or 1e308 link
  // reaches the arithmetic, so no time, ratio or count it enters is inf, NaN or 0.
  if (!(value >= v::kMinFigure && value <= v::kMaxFigure))
    v::fail(v::subject(option, text), v::within_rule(v::kMinFigure, v::kMaxFigure));
  return value;
}

std::string given(const std::vector<std::pair<std::string, std::string>>& options) {
  std::string out;
  for (const auto& [option, text] : options)
    if (!text.empty()) out += (out.empty() ? "" : ", ") + v::subject(option, text);
  return out;
}

std::vector<std::pair<std::string, std::string>> chip_overrides(const ChipArgs& a) {
  // A chip file's figures enter every result as the overrides do, so a result they make overflow names it.
  return {{"--chip-file", a.chip_file}, {"--hbm-bytes", a.hbm_bytes}, {"--hbm-bw", a.hbm_bw}, {"--flops", a.flops}, {"--flops-int8", a.flops_int8},
          {"--ici-bw", a.ici_bw}};
}

void require_finite(const std::string& what, double value, const std::string& inputs) {
  if (!std::isfinite(value))
    throw std::invalid_argument(what + " overflows a double for " + inputs + ": out of range");
}

// Splits at commas after checking the count, so no loop or allocation grows with an unchecked list.
std::vector<std::string> split_list(const std::string& option, const std::string& text, double max_entries) {
  const double n = 1 + static_cast<double>(std::count(text.begin(), text.end(), ','));
  v::entries(option, text, n, max_entries);
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t end = text.find(',', start);
    out.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) return out;
    start = end + 1;
  }
}

std::vector<double> parse_sizes(const std::string& option, const std::string& text) {
  std::vector<double> out;
  for (const auto& part : split_list(option, text, limits::kMaxDims)) out.push_back(parse_size(option, part));
  return out;
}

scaling::WrapPolicy parse_wrap(const std::string& text) {
  if (text == "auto") return scaling::WrapPolicy::automatic;
  if (text == "yes") return scaling::WrapPolicy::yes;
  if (text == "no") return scaling::WrapPolicy::no;
  v::fail(v::subject("--wrap", text), v::one_of_rule({"auto", "yes", "no"}));
}

std::vector<int> parse_indices(const std::string& option, const std::string& text) {
  std::vector<int> out;
  for (const auto& part : split_list(option, text, limits::kMaxDims)) {
    int value = -1;
    const auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), value);
    if (part.empty() || ec != std::errc() || ptr != part.data() + part.size() || value < 0)
      v::fail(v::subject(option, text), "expected axis numbers like 0 or 0,1");
    out.push_back(value);
  }
  return out;
}

}  // namespace cli
