#include <charconv>
#include <cmath>
#include <stdexcept>

#include "commands.hpp"

namespace cli {

double parse_size(const std::string& option, const std::string& text) {
  double value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || text.empty())
    throw std::invalid_argument(option + " '" + text + "': not a number");
  if (!std::isfinite(value) || value <= 0)
    throw std::invalid_argument(option + " '" + text + "': must be positive");
  if (value != std::floor(value)) throw std::invalid_argument(option + " '" + text + "': must be a whole number");
  return value;
}

double parse_positive(const std::string& option, const std::string& text) {
  double value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || text.empty())
    throw std::invalid_argument(option + " '" + text + "': not a number");
  if (!std::isfinite(value) || value <= 0) throw std::invalid_argument(option + " '" + text + "': must be positive");
  return value;
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
  throw std::invalid_argument("--wrap '" + text + "': expected auto, yes or no");
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
      throw std::invalid_argument(option + " '" + text + "': expected axis numbers like 0 or 0,1");
    out.push_back(value);
    if (end == std::string::npos) return out;
    start = end + 1;
  }
}

}  // namespace cli
