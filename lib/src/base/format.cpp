#include "scaling/base/format.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <utility>

namespace scaling {
namespace {

std::string scientific(double value, int digits);

// `digits` significant digits, trailing zeros dropped: 240.24 -> "240.2", 1.5 -> "1.5"; from 1e6 up
// (a time of 1e300 s, an exabyte in PB) scientific, never hundreds of digits.
std::string significant(double value, int digits) {
  if (std::fabs(value) >= 1e6) return scientific(value, digits);
  const double magnitude = std::floor(std::log10(std::fabs(value)));
  const int decimals = std::max(0, digits - 1 - static_cast<int>(magnitude));
  std::string s = fmt::format("{:.{}f}", value, decimals);
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  // Thousands separated as whole numbers are ("76,667", "1,524.5"), so a column never mixes the two styles.
  const size_t point = std::min(s.find('.'), s.size());
  const bool negative = s[0] == '-';
  const std::string whole = format_with_separators(std::stod(s.substr(negative ? 1 : 0, point - (negative ? 1 : 0))));
  return (negative ? "-" : "") + whole + s.substr(point);
}

std::string scientific(double value, int digits) {
  std::string s = fmt::format("{:.{}e}", value, digits - 1);  // "4.200e+11"
  const auto e = s.find('e');
  std::string mantissa = s.substr(0, e);
  if (mantissa.find('.') != std::string::npos) {
    while (mantissa.back() == '0') mantissa.pop_back();
    if (mantissa.back() == '.') mantissa.pop_back();
  }
  const int exponent = std::stoi(s.substr(e + 1));
  return mantissa + "e" + std::to_string(exponent);
}

// Scale by decimal prefixes so that the mantissa lies in [1, 1000).
std::string prefixed(double value, std::string_view unit, int digits) {
  // Below a thousandth of the unit there is no prefix to scale by: scientific, not hundreds of zeros.
  if (std::fabs(value) < 1e-3) return scientific(value, digits) + " " + std::string(unit);
  static constexpr std::array<std::pair<double, const char*>, 6> prefixes{
      {{1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}, {1, ""}}};
  for (const auto& [scale, prefix] : prefixes)
    if (std::fabs(value) >= scale) return significant(value / scale, digits) + " " + prefix + std::string(unit);
  return significant(value, digits) + " " + std::string(unit);
}

std::string seconds(double value, int digits) {
  static constexpr std::array<std::pair<double, const char*>, 4> units{
      {{1, "s"}, {1e-3, "ms"}, {1e-6, "µs"}, {1e-9, "ns"}}};
  for (const auto& [scale, name] : units)
    if (std::fabs(value) >= scale) return significant(value / scale, digits) + " " + name;
  return scientific(value, digits) + " s";
}

}  // namespace

std::string format_number(double value, int digits) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  if (value == 0) return "0";
  if (value == std::round(value) && std::fabs(value) < 1e15) return format_with_separators(value);
  const double a = std::fabs(value);
  if (a >= 1e-3 && a < 1e6) return significant(value, digits);
  return scientific(value, digits);
}

std::string format_with_separators(double whole) {
  const std::string digits = fmt::format("{:.0f}", std::fabs(whole));
  std::string out = whole < 0 ? "-" : "";
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string format_whole(double value) {
  if (std::isfinite(value) && value == std::round(value) && std::fabs(value) < 1e15) return fmt::format("{:.0f}", value);
  return format_number(value);
}

std::string format_quantity(double value, std::string_view unit, int digits) {
  if (!std::isfinite(value) || value == 0)
    return unit.empty() ? format_number(value) : fmt::format("{} {}", format_number(value), unit);
  if (unit == "s") return seconds(value, digits);
  if (unit == "B" || unit == "B/s") return prefixed(value, unit, digits);
  if (unit == "FLOPs" || unit == "FLOPs/s" || unit == "OPs" || unit == "OPs/s")
    return (std::fabs(value) >= 1e6 ? scientific(value, digits) : format_number(value, digits)) + " " +
           std::string(unit);
  const std::string number = format_number(value, digits + 1);
  return unit.empty() ? number : number + " " + std::string(unit);
}

std::string format_binary_bytes(double bytes, int digits) {
  if (!std::isfinite(bytes) || bytes == 0) return format_number(bytes) + " B";
  static constexpr std::array<std::pair<double, const char*>, 4> prefixes{
      {{1099511627776.0, "TiB"}, {1073741824.0, "GiB"}, {1048576.0, "MiB"}, {1024.0, "KiB"}}};
  for (const auto& [scale, name] : prefixes)
    if (std::fabs(bytes) >= scale) return significant(bytes / scale, digits) + " " + name;
  return significant(bytes, digits) + " B";
}

std::vector<std::string> format_alike(const std::vector<double>& values, std::string_view unit, int digits) {
  std::vector<std::string> out;
  for (const double v : values) out.push_back(format_quantity(v, unit, digits));
  if (unit == "s" || unit == "B" || unit == "B/s") return out;
  bool scientific_style = false;
  for (size_t i = 0; i < values.size(); ++i) {
    const double a = std::fabs(values[i]);
    const std::string number = out[i].substr(0, out[i].find(' '));  // not the unit: "iterations" has an e
    if (std::isfinite(a) && a != 0 && (a >= 1e6 || number.find('e') != std::string::npos)) scientific_style = true;
  }
  if (!scientific_style) return out;
  for (size_t i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i]) || values[i] == 0) continue;
    std::string text = scientific(values[i], digits + 1);
    if (!unit.empty()) text.append(" ").append(unit);
    out[i] = text;
  }
  return out;
}

namespace {

// The length of the well-formed UTF-8 sequence at text[i] (1 to 4), or 0 when the bytes there are not one
// (a stray continuation byte, an overlong form, a surrogate, a value beyond U+10FFFF, a cut sequence).
size_t utf8_length(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return k < text.size() ? static_cast<unsigned char>(text[k]) : 0u; };
  const unsigned c = byte(i);
  if (c < 0x80) return 1;
  size_t n = 0;
  unsigned lo = 0x80, hi = 0xbf;  // the allowed range of the second byte
  if (c >= 0xc2 && c <= 0xdf) n = 2;
  else if (c == 0xe0) n = 3, lo = 0xa0;
  else if ((c >= 0xe1 && c <= 0xec) || c == 0xee || c == 0xef) n = 3;
  else if (c == 0xed) n = 3, hi = 0x9f;
  else if (c == 0xf0) n = 4, lo = 0x90;
  else if (c >= 0xf1 && c <= 0xf3) n = 4;
  else if (c == 0xf4) n = 4, hi = 0x8f;
  else return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k)
    if (byte(i + k) < 0x80 || byte(i + k) > 0xbf) return 0;
  return n;
}

// A C1 control (U+0080 to U+009F) is the two bytes C2 80 to C2 9F in UTF-8.
bool is_c1(std::string_view text, size_t i) {
  return static_cast<unsigned char>(text[i]) == 0xc2 && i + 1 < text.size() &&
         static_cast<unsigned char>(text[i + 1]) <= 0x9f;
}

}  // namespace

std::string escape_for_message(std::string_view text, size_t max_chars) {
  std::string out;
  size_t shown = 0;  // characters written, a multi-byte character or an escape counting as one
  for (size_t i = 0; i < text.size();) {
    if (shown >= max_chars) return out + "…";
    ++shown;
    const unsigned char c = static_cast<unsigned char>(text[i]);
    const size_t n = utf8_length(text, i);
    if (c == '\n') out += "\\n", i += 1;
    else if (c == '\r') out += "\\r", i += 1;
    else if (c == '\t') out += "\\t", i += 1;
    else if (c < 0x20 || c == 0x7f) out += fmt::format("\\x{:02x}", c), i += 1;
    else if (n == 0) out += fmt::format("\\x{:02x}", c), i += 1;  // not UTF-8: the byte, escaped
    else if (n == 2 && is_c1(text, i)) out += fmt::format("\\u{:04x}", static_cast<unsigned char>(text[i + 1])), i += 2;
    else out.append(text.substr(i, n)), i += n;
  }
  return out;
}

bool is_printable(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    const size_t n = utf8_length(text, i);
    if (c < 0x20 || c == 0x7f || n == 0 || (n == 2 && is_c1(text, i))) return false;
    i += n;
  }
  return true;
}

void require_printable(std::string_view what, std::string_view text) {
  if (!is_printable(text))
    throw std::invalid_argument(std::string(what) + " '" + escape_for_message(text) +
                                "': holds a control character or invalid UTF-8");
}

}  // namespace scaling
