#include "scaling/notation/saved_rule.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <stdexcept>

#include "scaling/base/format.hpp"

namespace scaling {

namespace {
[[noreturn]] void reject(std::string_view text, const std::string& why) {
  // Led by the quoted rule, so a CLI option in front reads "--saved 'rule': why" (cli/commands.hpp).
  throw std::invalid_argument("'" + escape_for_message(text) + "': " + why +
                              " (a saved-activations rule: a sum of terms in D, F, NH, KH with optional positive "
                              "coefficients, e.g. 4D, D+2F, 2D+2F+NH+2KH)");
}
// 'text', shortened and escaped for a one-line message (built by appending: GCC 12 warns falsely on a
// chain of operator+ here).
std::string quoted(std::string_view text) {
  std::string out(1, '\'');
  out.append(escape_for_message(text, 24));
  out.push_back('\'');
  return out;
}
}  // namespace

SavedRule parse_saved_rule(std::string_view text) {
  std::string s;
  for (char ch : text)
    if (!std::isspace(static_cast<unsigned char>(ch))) s += ch;
  if (s.empty()) reject(text, "empty");
  SavedRule r;
  size_t pos = 0;
  while (true) {
    // One term: [coefficient] letter(s).
    double coefficient = 1;
    size_t digits = pos;
    while (digits < s.size() && (std::isdigit(static_cast<unsigned char>(s[digits])) || s[digits] == '.')) ++digits;
    if (digits > pos) {
      const auto [ptr, ec] = std::from_chars(s.data() + pos, s.data() + digits, coefficient);
      if (ec != std::errc() || ptr != s.data() + digits) reject(text, quoted(std::string_view(s).substr(pos, digits - pos)) + " is not a number");
      if (!std::isfinite(coefficient) || coefficient <= 0) reject(text, "coefficients must be positive");
      pos = digits;
    }
    if (pos >= s.size()) reject(text, s.empty() || digits > 0 ? "a coefficient without a term" : "a '+' without a term");
    double* slot = nullptr;
    if (s.compare(pos, 2, "NH") == 0) {
      slot = &r.nh, pos += 2;
    } else if (s.compare(pos, 2, "KH") == 0) {
      slot = &r.kh, pos += 2;
    } else if (s[pos] == 'D') {
      slot = &r.d, pos += 1;
    } else if (s[pos] == 'F') {
      slot = &r.f, pos += 1;
    } else if (s[pos] == '-') {
      reject(text, "terms cannot be negative or subtracted");
    } else {
      reject(text, "unknown term at " + quoted(std::string_view(s).substr(pos)));
    }
    *slot += coefficient;
    if (pos == s.size()) return r;
    if (s[pos] != '+') reject(text, "expected '+' before " + quoted(std::string_view(s).substr(pos)));
    ++pos;
    if (pos == s.size()) reject(text, "a '+' without a term");
  }
}

std::string to_string(const SavedRule& r) {
  std::string out;
  auto term = [&out](double coefficient, const char* letter) {
    if (coefficient == 0) return;
    if (!out.empty()) out += "+";
    if (coefficient != 1) out += format_number(coefficient);
    out += letter;
  };
  term(r.d, "D");
  term(r.f, "F");
  term(r.nh, "NH");
  term(r.kh, "KH");
  return out.empty() ? "0" : out;
}

}  // namespace scaling
