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

}  // namespace cli
