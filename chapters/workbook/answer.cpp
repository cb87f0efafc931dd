#include "answer.hpp"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

#include "scaling/base/format.hpp"

namespace workbook {

namespace {
// A value exactly on a rounding edge (2.5 printed as 3) counts as agreeing. The factor absorbs the
// binary representation error of such an edge and nothing more: it is relative to the tolerance itself,
// so it never adds an absolute floor.
constexpr double kEdge = 1e-12;
constexpr double kExact = 1e-12;  // "exact": equal up to the rounding of a few double operations

// Half a unit in the last of `digits` significant digits of `printed`: how far a value may lie from it
// and still round to it.
double half_unit(double printed, double digits) {
  return 0.5 * std::pow(10.0, std::floor(std::log10(std::fabs(printed))) - (digits - 1));
}
}  // namespace

bool Tolerance::admits(double value, double printed) const {
  const double diff = std::fabs(value - printed);
  switch (kind) {
    case Kind::relative: return diff <= amount * std::fabs(printed) * (1 + kEdge);
    case Kind::absolute: return diff <= amount * (1 + kEdge);
    case Kind::significant:
      if (printed == 0) return value == 0;
      return diff <= half_unit(printed, amount) * (1 + kEdge);
  }
  return false;
}

std::string Tolerance::describe() const {
  switch (kind) {
    case Kind::relative: return amount <= kExact ? "exact" : "±" + scaling::format_number(amount * 100) + "%";
    case Kind::absolute: return "±" + scaling::format_number(amount);
    case Kind::significant:
      return scaling::format_number(amount) + " significant digit" + (amount == 1 ? "" : "s");
  }
  return "";
}

double Tolerance::relative_to(double printed) const {
  if (printed == 0) return amount;
  switch (kind) {
    case Kind::relative: return amount;
    case Kind::absolute: return amount / std::fabs(printed);
    case Kind::significant: return half_unit(printed, amount) / std::fabs(printed);
  }
  return amount;
}

Tolerance Tolerance::because(std::string why) const {
  Tolerance t = *this;
  t.reason = std::move(why);
  return t;
}

Tolerance rel(double fraction) { return {Tolerance::Kind::relative, fraction, ""}; }
Tolerance within(double amount) { return {Tolerance::Kind::absolute, amount, ""}; }
Tolerance sig(int digits) { return {Tolerance::Kind::significant, static_cast<double>(digits), ""}; }
Tolerance exact() { return rel(kExact); }

int printed_digits(double printed) {
  if (printed == 0 || !std::isfinite(printed)) return 1;
  // The shortest decimal that reads back as this double ("16000000000", "0.00101", "1e+22"): its
  // digits before any exponent, without leading and trailing zeros.
  const std::string shortest = fmt::format("{}", std::fabs(printed));
  std::string digits;
  for (char c : shortest.substr(0, shortest.find_first_of("eE")))
    if (c >= '0' && c <= '9' && !(digits.empty() && c == '0')) digits += c;
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  return digits.empty() ? 1 : static_cast<int>(digits.size());
}

std::string tolerance_rule_violation(double printed, const Tolerance& t) {
  if (!t.reason.empty()) return "";
  switch (t.kind) {
    case Tolerance::Kind::significant:
      if (t.amount >= printed_digits(printed)) return "";
      return fmt::format("{} significant digit(s) for a value printed with {}: wider than half a unit in its last "
                         "place, and no reason is given",
                         t.amount, printed_digits(printed));
    case Tolerance::Kind::relative:
      if (t.amount <= kExact) return "";
      return fmt::format("a relative tolerance of {} without a reason: use sig(n) for the printed digits, exact() "
                         "for an exact value, or .because(\"why\")",
                         t.amount);
    case Tolerance::Kind::absolute:
      if (t.amount == 0) return "";
      return fmt::format("an absolute tolerance of {} without a reason: use sig(n), exact() or .because(\"why\")",
                         t.amount);
  }
  return "";
}

std::string tolerance_rule(double printed, const Tolerance& t) {
  if (!t.reason.empty()) return t.describe() + ": " + t.reason;
  if (t.kind == Tolerance::Kind::relative && t.amount <= kExact) return "exact";
  if (t.kind == Tolerance::Kind::significant)
    return t.describe() + " (half a unit in the last printed place)";
  (void)printed;
  return t.describe();
}

const char* to_string(Severity s) {
  switch (s) {
    case Severity::conclusion: return "conclusion";
    case Severity::slip: return "slip";
    case Severity::unit: return "unit";
  }
  return "?";
}

NoteStatus NoteValue::status() const {
  const bool close = tolerance.admits(ours, value);
  if (reason.empty()) return close ? NoteStatus::agrees : NoteStatus::unexplained;
  return close ? NoteStatus::false_difference : NoteStatus::differs;
}

Answer::Answer(std::string key, double value, std::string unit)
    : key_(std::move(key)), value_(value), unit_(std::move(unit)) {
  if (!std::isfinite(value_)) throw std::invalid_argument("answer " + key_ + " is not a finite number");
}

Answer& Answer::book(double printed, Tolerance tolerance) {
  if (!std::isfinite(printed)) throw std::logic_error(key_ + ": the book value must be finite");
  book_ = printed;
  book_tolerance_ = std::move(tolerance);
  return *this;
}

Answer& Answer::erratum(const Finding& cause, std::string detail) {
  finding_ = cause;
  erratum_ = detail.empty() ? cause.reason : cause.reason + " " + detail;
  return *this;
}

Answer& Answer::stated_input(std::string input, double from_stated) {
  if (!std::isfinite(from_stated)) throw std::logic_error(key_ + ": a value from a stated input must be finite");
  if (input.size() < 10) throw std::logic_error(key_ + ": name the stated input and where the book states it");
  stated_ = StatedInput{std::move(input), from_stated};
  return *this;
}

Answer& Answer::reproduced_by(double value, std::string how) {
  if (!std::isfinite(value)) throw std::logic_error(key_ + ": a reproduction must be finite");
  if (how.size() < 10) throw std::logic_error(key_ + ": say how the book's number is reproduced");
  reproduction_ = Reproduction{value, std::move(how)};
  return *this;
}

Answer& Answer::notes(std::string source, double value, Tolerance tolerance) {
  notes_.push_back({std::move(source), value, std::move(tolerance), "", value_});
  return *this;
}

Answer& Answer::differs(std::string reason) {
  if (notes_.empty()) throw std::logic_error(key_ + ": differs() without a notes() value");
  notes_.back().reason = std::move(reason);
  return *this;
}

Answer& Answer::explain(std::string text) {
  explanation_ = std::move(text);
  return *this;
}

Answer& Answer::derived(double value, std::string formula) {
  if (!std::isfinite(value)) throw std::logic_error(key_ + ": a derived value must be finite");
  derived_ = Derived{value, std::move(formula)};
  return *this;
}

Answer& Answer::measured(double value, std::string source, std::string gap) {
  if (!std::isfinite(value)) throw std::logic_error(key_ + ": a measured value must be finite");
  if (source.empty() || gap.empty()) throw std::logic_error(key_ + ": a measured value needs its source and the gap");
  measured_ = Measured{value, std::move(source), std::move(gap)};
  return *this;
}

namespace {
// `printed` truncated (toward zero) from `v` at `digits` significant digits: v lies in [p, p + unit) on
// p's side of zero, the unit being p's last printed place ("4377" from 4377.8).
bool truncates_to(double v, double printed, double digits) {
  if (printed == 0 || (v < 0) != (printed < 0)) return false;
  const double unit = 2 * half_unit(printed, digits);
  const double a = std::fabs(v), p = std::fabs(printed);
  return a >= p * (1 - kEdge) && a < p + unit * (1 - kEdge);
}
}  // namespace

bool Answer::agrees_strictly(double v) const {
  if (!book_) return false;
  const double p = *book_;
  // The tolerance itself, when it carries no reason (printed digits, exact, or tighter).
  if (book_tolerance_.reason.empty() && book_tolerance_.admits(v, p)) return true;
  const double digits = book_tolerance_.kind == Tolerance::Kind::significant && book_tolerance_.reason.empty()
                            ? book_tolerance_.amount
                            : printed_digits(p);
  return sig(static_cast<int>(digits)).admits(v, p) || truncates_to(v, p, digits);
}

bool Answer::agrees_by_truncation() const {
  if (!book_ || !agrees_strictly(value_)) return false;
  const double p = *book_;
  if (book_tolerance_.reason.empty() && book_tolerance_.admits(value_, p)) return false;
  const double digits = book_tolerance_.kind == Tolerance::Kind::significant && book_tolerance_.reason.empty()
                            ? book_tolerance_.amount
                            : printed_digits(p);
  return !sig(static_cast<int>(digits)).admits(value_, p);
}

Answer& Answer::binary_prefixes() {
  if (unit_ != "B") throw std::logic_error(key_ + ": binary prefixes are for a byte count (unit \"B\")");
  binary_prefixes_ = true;
  return *this;
}

Answer& Answer::book_inputs_give(double value, std::string how) {
  if (!std::isfinite(value)) throw std::logic_error(key_ + ": the value from the book's inputs must be finite");
  if (how.size() < 10) throw std::logic_error(key_ + ": say which of the book's inputs give it");
  inputs_give_ = InputsGive{value, std::move(how)};
  return *this;
}

BookStatus Answer::book_status() const {
  if (!book_) return erratum_.empty() && !stated_ ? BookStatus::none : BookStatus::false_erratum;
  if (agrees_strictly(value_)) return erratum_.empty() && !stated_ ? BookStatus::agrees : BookStatus::false_erratum;
  const bool follows = (stated_ && agrees_strictly(stated_->from_stated)) ||
                       (!book_tolerance_.reason.empty() && book_tolerance_.admits(value_, *book_));
  if (follows) return erratum_.empty() ? BookStatus::approximation : BookStatus::false_erratum;
  if (stated_) return BookStatus::unexplained;  // a stated input that does not give the print explains nothing
  return erratum_.empty() ? BookStatus::unexplained : BookStatus::erratum;
}

const char* to_string(BookStatus s) {
  switch (s) {
    case BookStatus::none: return "no book answer";
    case BookStatus::agrees: return "agrees";
    case BookStatus::approximation: return "approximation";
    case BookStatus::erratum: return "erratum";
    case BookStatus::unexplained: return "disagrees (unexplained)";
    case BookStatus::false_erratum: return "erratum claimed but agrees";
  }
  return "?";
}

const char* to_string(NoteStatus s) {
  switch (s) {
    case NoteStatus::agrees: return "agrees";
    case NoteStatus::differs: return "differs";
    case NoteStatus::unexplained: return "differs (unexplained)";
    case NoteStatus::false_difference: return "difference claimed but agrees";
  }
  return "?";
}

}  // namespace workbook
