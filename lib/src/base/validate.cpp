#include "scaling/base/validate.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <stdexcept>

#include "scaling/base/format.hpp"

namespace scaling::check {

std::string subject(std::string_view name, std::string_view text) {
  return fmt::format("{} '{}'", name, escape_for_message(text));
}

std::string subject(std::string_view name, double value) {
  // %.17g keeps every digit a double holds, so 4096.5 and 9007199254740993 read back as given; whole
  // numbers below 1e15 keep format_number's separators, huge ones stay in scientific notation.
  if (std::isfinite(value) && value == std::floor(value) && std::fabs(value) < 1e15)
    return fmt::format("{} = {}", name, format_number(value));
  return fmt::format("{} = {}", name, std::isfinite(value) ? fmt::format("{:.17g}", value) : format_number(value));
}

std::string one_of_rule(const std::vector<std::string>& names) {
  std::string list;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) list += i + 1 == names.size() ? " or " : ", ";
    list += names[i];
  }
  return "expected " + list;
}

void not_one_of(std::string_view text, const std::vector<std::string>& names) {
  throw std::invalid_argument(fmt::format("'{}': {}", escape_for_message(text), one_of_rule(names)));
}

void fail(std::string_view subject, std::string_view rule) {
  throw std::invalid_argument(fmt::format("{}: {}", subject, rule));
}

namespace {
// A bound as a reader checks it: whole numbers up to 2^53 in full with separators (9,007,199,254,740,992,
// not 9.007e15, which would hide whether 2^53 + 1 is allowed), anything else as format_number prints it.
std::string bound(double x) {
  if (!(std::fabs(x) >= 1e15 && std::fabs(x) <= 9007199254740992.0 && x == std::floor(x))) return format_number(x);
  return format_with_separators(x);
}
}  // namespace

std::string within_rule(double lo, double hi) {
  return fmt::format("must be within [{}, {}]", bound(lo), bound(hi));
}
std::string at_most_rule(double hi) { return fmt::format("must be at most {}", bound(hi)); }
std::string entries_rule(double n, double max) {
  return fmt::format("has {} entries: at most {}", format_number(n), format_number(max));
}

double finite(std::string_view name, double v) {
  if (!std::isfinite(v)) fail(subject(name, v), kFinite);
  return v;
}
double positive(std::string_view name, double v) {
  if (!(finite(name, v) > 0)) fail(subject(name, v), kPositive);
  return v;
}
double non_negative(std::string_view name, double v) {
  if (finite(name, v) < 0) fail(subject(name, v), kNonNegative);
  return v;
}
double positive_whole(std::string_view name, double v) {
  if (positive(name, v) != std::floor(v)) fail(subject(name, v), kWhole);
  return v;
}
double within(std::string_view name, double v, double lo, double hi) {
  if (!(finite(name, v) >= lo && v <= hi)) fail(subject(name, v), within_rule(lo, hi));
  return v;
}
double at_most(std::string_view name, double v, double hi) {
  if (!(finite(name, v) <= hi)) fail(subject(name, v), at_most_rule(hi));
  return v;
}
double figure(std::string_view name, double v) {
  if (!(positive(name, v) >= kMinFigure && v <= kMaxFigure)) fail(subject(name, v), within_rule(kMinFigure, kMaxFigure));
  return v;
}
void entries(std::string_view name, std::string_view text, double n, double max) {
  if (n > max) fail(subject(name, text), entries_rule(n, max));
}

namespace {

// The number `text` spells, refused naming `shown` (what was typed: a size's digits are parsed without
// their suffix, but the message quotes the whole value).
double number_shown(std::string_view name, std::string_view text, std::string_view shown) {
  if (text.empty()) fail(subject(name, shown), kEmpty);
  double value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec == std::errc::result_out_of_range && ptr == end) fail(subject(name, shown), kOutOfRange);
  if (ec != std::errc() || ptr != end) fail(subject(name, shown), kNotANumber);
  if (!std::isfinite(value)) fail(subject(name, shown), kFinite);
  // Plain digits beyond 2^53 may name a whole number no double holds (2^53 + 1): refused, not rounded.
  if (value >= 9007199254740992.0 && text.find_first_not_of("0123456789") == std::string_view::npos) {
    std::string_view digits = text.substr(std::min(text.find_first_not_of('0'), text.size()));
    if (digits != fmt::format("{:.0f}", value)) fail(subject(name, shown), kInexact);
  }
  return value;
}

}  // namespace

double number(std::string_view name, std::string_view text) { return number_shown(name, text, text); }

double size(std::string_view name, std::string_view text, double max) {
  double scale = 1;
  std::string_view digits = text;
  if (!text.empty()) {
    switch (text.back()) {
      case 'k': scale = 1e3; break;
      case 'M': scale = 1e6; break;
      case 'G': scale = 1e9; break;
      case 'T': scale = 1e12; break;
      case 'P': scale = 1e15; break;
      default: break;
    }
    if (scale != 1) digits.remove_suffix(1);
  }
  if (scale != 1 && digits.empty()) fail(subject(name, text), kNotANumber);
  const double value = number_shown(name, digits.empty() ? text : digits, text) * scale;
  if (!std::isfinite(value)) fail(subject(name, text), kOutOfRange);
  if (!(value > 0)) fail(subject(name, text), kPositive);
  if (value != std::floor(value)) fail(subject(name, text), kWhole);
  if (value > max) fail(subject(name, text), at_most_rule(max));
  return value;
}

std::string_view text(std::string_view name, std::string_view value) {
  if (value.empty()) fail(subject(name, value), kEmpty);
  require_printable(name, value);
  if (value.front() == ' ' || value.back() == ' ') fail(subject(name, value), "has a leading or trailing space");
  return value;
}

}  // namespace scaling::check
