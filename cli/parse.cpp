#include <charconv>
#include <cmath>
#include <stdexcept>

#include "commands.hpp"
#include "scaling/base/format.hpp"

namespace cli {

namespace {

// "--B '1e309'": the option and its value, quoted with control characters escaped and long text cut.
std::string quoted(const std::string& option, const std::string& text) {
  return option + " '" + scaling::escape_for_message(text) + "'";
}

// A finite positive number, or a one-line refusal that says which rule the text breaks.
double positive_number(const std::string& option, const std::string& text) {
  if (text.empty()) throw std::invalid_argument(option + " '': empty value");
  double value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec == std::errc::result_out_of_range && ptr == end)
    throw std::invalid_argument(quoted(option, text) + ": out of range (a double holds magnitudes from about "
                                                       "2.2e-308 to 1.8e308)");
  if (ec != std::errc() || ptr != end) throw std::invalid_argument(quoted(option, text) + ": not a number");
  if (!std::isfinite(value)) throw std::invalid_argument(quoted(option, text) + ": must be a finite number");
  if (value <= 0) throw std::invalid_argument(quoted(option, text) + ": must be positive");
  return value;
}

}  // namespace

double parse_size(const std::string& option, const std::string& text) {
  const double value = positive_number(option, text);
  if (value != std::floor(value)) throw std::invalid_argument(quoted(option, text) + ": must be a whole number");
  return value;
}

double parse_positive(const std::string& option, const std::string& text) { return positive_number(option, text); }

std::string given(const std::vector<std::pair<std::string, std::string>>& options) {
  std::string out;
  for (const auto& [option, text] : options)
    if (!text.empty()) out += (out.empty() ? "" : ", ") + quoted(option, text);
  return out;
}

std::vector<std::pair<std::string, std::string>> chip_overrides(const ChipArgs& a) {
  return {{"--hbm-bytes", a.hbm_bytes}, {"--hbm-bw", a.hbm_bw}, {"--flops", a.flops}, {"--flops-int8", a.flops_int8},
          {"--ici-bw", a.ici_bw}};
}

void require_finite(const std::string& what, double value, const std::string& inputs) {
  if (!std::isfinite(value))
    throw std::invalid_argument(what + " overflows a double for " + inputs + ": out of range");
}

std::vector<double> parse_sizes(const std::string& option, const std::string& text) {
  std::vector<double> out;
  size_t start = 0;
  while (true) {
    const size_t end = text.find(',', start);
    out.push_back(parse_size(option, text.substr(start, end == std::string::npos ? std::string::npos : end - start)));
    if (end == std::string::npos) return out;
    start = end + 1;
  }
}

scaling::WrapPolicy parse_wrap(const std::string& text) {
  if (text == "auto") return scaling::WrapPolicy::automatic;
  if (text == "yes") return scaling::WrapPolicy::yes;
  if (text == "no") return scaling::WrapPolicy::no;
  throw std::invalid_argument(quoted("--wrap", text) + ": expected auto, yes or no");
}

std::vector<int> parse_indices(const std::string& option, const std::string& text) {
  std::vector<int> out;
  size_t start = 0;
  while (true) {
    const size_t end = text.find(',', start);
    const std::string part = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    int value = -1;
    const auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), value);
    if (part.empty() || ec != std::errc() || ptr != part.data() + part.size() || value < 0)
      throw std::invalid_argument(quoted(option, text) + ": expected axis numbers like 0 or 0,1");
    out.push_back(value);
    if (end == std::string::npos) return out;
    start = end + 1;
  }
}

}  // namespace cli
