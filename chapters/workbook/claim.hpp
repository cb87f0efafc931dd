#pragma once
// A quantitative statement the book makes in prose ("about 240", "at least 2,550 per chip", "an order of
// magnitude slower", "compute-bound beyond 480 tokens"), registered with the bound its wording implies and
// checked against our computed value.
#include <optional>
#include <string>

#include "answer.hpp"

namespace workbook {

enum class Relation { about, at_least, at_most, above, below, order_of, between };
const char* to_string(Relation r);

enum class ClaimStatus {
  holds,          // our value satisfies the wording
  erratum,        // it does not, and a finding explains why the book says so
  unexplained,    // it does not, with no finding: a defect
  false_erratum,  // a finding is recorded but the claim holds: a defect
  incomplete,     // no relation given
};
const char* to_string(ClaimStatus s);

class Claim {
 public:
  // `text`: the statement in our own words, with its section ("§5.1.2: FSDP stays compute-bound when …").
  Claim(std::string key, std::string text, double value, std::string unit);

  Claim& about(double bound, Tolerance t);  // "about x": within t (printed digits, or a reason from the wording)
  Claim& at_least(double bound);            // value ≥ bound
  Claim& at_most(double bound);             // value ≤ bound
  Claim& above(double bound);               // value > bound
  Claim& below(double bound);               // value < bound
  Claim& order_of(double bound);            // same order of magnitude: bound/√10 ≤ value ≤ bound·√10
  Claim& between(double low, double high);  // low ≤ value ≤ high
  Claim& erratum(const Finding& cause, std::string detail = "");
  Claim& explain(std::string text);

  const std::string& key() const { return key_; }
  const std::string& text() const { return text_; }
  double value() const { return value_; }
  const std::string& unit() const { return unit_; }
  std::optional<Relation> relation() const { return relation_; }
  double bound() const { return bound_; }
  double bound_high() const { return high_; }
  const Tolerance& tolerance() const { return tolerance_; }
  const std::optional<Finding>& finding() const { return finding_; }
  const std::string& reason() const { return reason_; }
  const std::string& explanation() const { return explanation_; }
  bool satisfied() const;
  ClaimStatus status() const;
  std::string describe() const;  // "≈ 240 (2 significant digits)", "≥ 2,550", …

 private:
  Claim& set(Relation r, double bound, double high = 0);
  std::string key_, text_;
  double value_;
  std::string unit_;
  std::optional<Relation> relation_;
  double bound_ = 0, high_ = 0;
  Tolerance tolerance_ = exact();
  std::optional<Finding> finding_;
  std::string reason_, explanation_;
};

}  // namespace workbook
