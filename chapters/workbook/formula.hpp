#pragma once
// A formula the book prints, checked as an answer in its own right: the book's expression, written as the
// book writes it, is evaluated at the book's own inputs and at a second, unrelated set of inputs, and
// compared each time with the exact computation (the library's). A formula that matches at the book's
// point only (the right number from a wrong expression) is a finding like a wrong number.
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "answer.hpp"

namespace workbook {

using Inputs = std::map<std::string, double>;
using Expression = std::function<double(const Inputs&)>;

// Reads one input by name; throws std::logic_error naming it when absent (a typo in a chapter).
double in(const Inputs& v, const std::string& name);

enum class FormulaStatus {
  agrees,         // equal to the exact computation (within the tolerance) at every point
  approximation,  // within a declared, reasoned approximation tolerance at every point
  erratum,        // differs at some point, and a finding explains it
  unexplained,    // differs at some point with no finding: a defect
  false_erratum,  // a finding is recorded but every point agrees: a defect
  incomplete,     // fewer than two points, or a second point sharing an input value with the first
};
const char* to_string(FormulaStatus s);

struct FormulaPoint {
  Inputs inputs;
  double book;   // the book's expression at these inputs
  double exact;  // the exact computation at these inputs
  bool agrees;
};

class Formula {
 public:
  Formula(std::string key, std::string book_text, Expression book, Expression exact);

  Formula& exact_text(std::string text);  // the exact expression, when it has a closed form worth showing
  // The first point is the book's own inputs; every later one is another, unrelated set (every input
  // takes a different value than at the book's point).
  Formula& at(Inputs point);
  // The book's expression is a stated simplification: it must hold within `t` (whose reason names the
  // dropped term and the regime) at every point, the second point chosen inside that regime.
  Formula& approximation(Tolerance t);
  Formula& erratum(const Finding& cause, std::string detail = "");
  Formula& explain(std::string text);
  // The units its value and its inputs are in ("s"; {"V", "B"}, {"W", "B/s"}), so the report prints its points as
  // quantities ("1.6 TB/s", "450 GB/s") rather than bare digits; an input left out prints as a plain number.
  Formula& units(std::string value_unit, std::map<std::string, std::string> input_units = {});

  const std::string& key() const { return key_; }
  const std::string& book_text() const { return book_text_; }
  const std::string& exact_text() const { return exact_text_; }
  const std::vector<FormulaPoint>& points() const { return points_; }
  const Tolerance& tolerance() const { return tolerance_; }
  const std::optional<Finding>& finding() const { return finding_; }
  const std::string& reason() const { return reason_; }
  const std::string& explanation() const { return explanation_; }
  const std::string& unit() const { return unit_; }
  // The unit of one input: empty when none was given.
  std::string input_unit(const std::string& name) const;
  FormulaStatus status() const;
  // What an independent check of this formula must reproduce: the exact value at the first point where
  // the book's expression disagrees, or at the second point when none does.
  double checked_value() const;

 private:
  std::string key_, book_text_, exact_text_;
  Expression book_, exact_;
  std::vector<FormulaPoint> points_;
  Tolerance tolerance_ = exact();
  bool approximation_ = false;
  std::optional<Finding> finding_;
  std::string reason_, explanation_;
  std::string unit_;
  std::map<std::string, std::string> input_units_;
};

}  // namespace workbook
