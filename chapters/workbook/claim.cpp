#include "claim.hpp"

#include <cmath>
#include <stdexcept>

#include "scaling/base/format.hpp"

namespace workbook {

const char* to_string(Relation r) {
  switch (r) {
    case Relation::about: return "about";
    case Relation::at_least: return "at_least";
    case Relation::at_most: return "at_most";
    case Relation::above: return "above";
    case Relation::below: return "below";
    case Relation::order_of: return "order_of";
    case Relation::between: return "between";
  }
  return "?";
}

const char* to_string(ClaimStatus s) {
  switch (s) {
    case ClaimStatus::holds: return "holds";
    case ClaimStatus::erratum: return "erratum";
    case ClaimStatus::unexplained: return "fails (unexplained)";
    case ClaimStatus::false_erratum: return "erratum claimed but holds";
    case ClaimStatus::incomplete: return "incomplete (no relation)";
  }
  return "?";
}

Claim::Claim(std::string key, std::string text, double value, std::string unit)
    : key_(std::move(key)), text_(std::move(text)), value_(value), unit_(std::move(unit)) {
  if (!std::isfinite(value_)) throw std::invalid_argument("claim " + key_ + " is not a finite number");
}

Claim& Claim::set(Relation r, double bound, double high) {
  if (relation_) throw std::logic_error("claim " + key_ + ": a second relation");
  if (!std::isfinite(bound) || !std::isfinite(high)) throw std::logic_error("claim " + key_ + ": bound not finite");
  relation_ = r;
  bound_ = bound;
  high_ = high;
  return *this;
}

Claim& Claim::about(double bound, Tolerance t) {
  tolerance_ = std::move(t);
  return set(Relation::about, bound);
}
Claim& Claim::at_least(double bound) { return set(Relation::at_least, bound); }
Claim& Claim::at_most(double bound) { return set(Relation::at_most, bound); }
Claim& Claim::above(double bound) { return set(Relation::above, bound); }
Claim& Claim::below(double bound) { return set(Relation::below, bound); }
Claim& Claim::order_of(double bound) {
  if (!(bound > 0)) throw std::logic_error("claim " + key_ + ": order_of needs a positive bound");
  return set(Relation::order_of, bound);
}
Claim& Claim::between(double low, double high) {
  if (!(low <= high)) throw std::logic_error("claim " + key_ + ": between needs low <= high");
  return set(Relation::between, low, high);
}

Claim& Claim::erratum(const Finding& cause, std::string detail) {
  finding_ = cause;
  reason_ = detail.empty() ? cause.reason : cause.reason + " " + detail;
  return *this;
}

Claim& Claim::explain(std::string text) {
  explanation_ = std::move(text);
  return *this;
}

bool Claim::satisfied() const {
  if (!relation_) return false;
  switch (*relation_) {
    case Relation::about: return tolerance_.admits(value_, bound_);
    case Relation::at_least: return value_ >= bound_;
    case Relation::at_most: return value_ <= bound_;
    case Relation::above: return value_ > bound_;
    case Relation::below: return value_ < bound_;
    case Relation::order_of: {
      const double r = std::sqrt(10.0);
      return value_ >= bound_ / r && value_ <= bound_ * r;
    }
    case Relation::between: return value_ >= bound_ && value_ <= high_;
  }
  return false;
}

ClaimStatus Claim::status() const {
  if (!relation_) return ClaimStatus::incomplete;
  const bool ok = satisfied();
  if (finding_) return ok ? ClaimStatus::false_erratum : ClaimStatus::erratum;
  return ok ? ClaimStatus::holds : ClaimStatus::unexplained;
}

std::string Claim::describe() const {
  using scaling::format_number;
  if (!relation_) return "?";
  switch (*relation_) {
    case Relation::about: return "≈ " + format_number(bound_) + " (" + tolerance_.describe() + ")";
    case Relation::at_least: return "≥ " + format_number(bound_);
    case Relation::at_most: return "≤ " + format_number(bound_);
    case Relation::above: return "> " + format_number(bound_);
    case Relation::below: return "< " + format_number(bound_);
    case Relation::order_of: return "~ " + format_number(bound_) + " (same order of magnitude)";
    case Relation::between: return format_number(bound_) + " … " + format_number(high_);
  }
  return "?";
}

}  // namespace workbook
