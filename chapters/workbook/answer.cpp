#include "answer.hpp"

#include <cmath>
#include <stdexcept>

#include "scaling/base/format.hpp"

namespace workbook {

namespace {
// Values at exactly the rounding edge (2.5 printed as 3) count as agreeing; the epsilon absorbs
// binary representation error of such edges.
constexpr double kEdge = 1e-12;

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
    case Kind::relative: return amount < 1e-9 ? "exact" : "±" + scaling::format_number(amount * 100) + "%";
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

Tolerance rel(double fraction) { return {Tolerance::Kind::relative, fraction}; }
Tolerance within(double amount) { return {Tolerance::Kind::absolute, amount}; }
Tolerance sig(int digits) { return {Tolerance::Kind::significant, static_cast<double>(digits)}; }

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
  book_ = printed;
  book_tolerance_ = tolerance;
  return *this;
}

Answer& Answer::erratum(std::string reason) {
  erratum_ = std::move(reason);
  return *this;
}

Answer& Answer::notes(std::string source, double value, Tolerance tolerance) {
  notes_.push_back({std::move(source), value, tolerance, "", value_});
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

BookStatus Answer::book_status() const {
  if (!book_) return erratum_.empty() ? BookStatus::none : BookStatus::false_erratum;
  const bool close = book_tolerance_.admits(value_, *book_);
  if (erratum_.empty()) return close ? BookStatus::agrees : BookStatus::unexplained;
  return close ? BookStatus::false_erratum : BookStatus::erratum;
}

const char* to_string(BookStatus s) {
  switch (s) {
    case BookStatus::none: return "no book answer";
    case BookStatus::agrees: return "agrees";
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
