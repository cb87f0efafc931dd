#include "formula.hpp"

#include <cmath>
#include <stdexcept>

namespace workbook {

double in(const Inputs& v, const std::string& name) {
  const auto it = v.find(name);
  if (it == v.end()) throw std::logic_error("formula input '" + name + "' is not given at this point");
  return it->second;
}

const char* to_string(FormulaStatus s) {
  switch (s) {
    case FormulaStatus::agrees: return "agrees";
    case FormulaStatus::approximation: return "approximation";
    case FormulaStatus::erratum: return "erratum";
    case FormulaStatus::unexplained: return "disagrees (unexplained)";
    case FormulaStatus::false_erratum: return "erratum claimed but agrees";
    case FormulaStatus::incomplete: return "incomplete (needs the book's point and an unrelated one)";
  }
  return "?";
}

Formula::Formula(std::string key, std::string book_text, Expression book, Expression exact)
    : key_(std::move(key)), book_text_(std::move(book_text)), book_(std::move(book)), exact_(std::move(exact)) {}

Formula& Formula::exact_text(std::string text) {
  exact_text_ = std::move(text);
  return *this;
}

Formula& Formula::at(Inputs point) {
  const double b = book_(point), e = exact_(point);
  if (!std::isfinite(b) || !std::isfinite(e))
    throw std::logic_error("formula " + key_ + ": not finite at one of its points");
  points_.push_back({std::move(point), b, e, false});
  for (auto& p : points_) p.agrees = tolerance_.admits(p.book, p.exact);
  return *this;
}

Formula& Formula::approximation(Tolerance t) {
  if (t.reason.empty())
    throw std::logic_error("formula " + key_ + ": an approximation needs a reason (the term dropped, the regime)");
  tolerance_ = std::move(t);
  approximation_ = true;
  for (auto& p : points_) p.agrees = tolerance_.admits(p.book, p.exact);
  return *this;
}

Formula& Formula::erratum(const Finding& cause, std::string detail) {
  finding_ = cause;
  reason_ = detail.empty() ? cause.reason : cause.reason + " " + detail;
  return *this;
}

Formula& Formula::units(std::string value_unit, std::map<std::string, std::string> input_units) {
  unit_ = std::move(value_unit);
  input_units_ = std::move(input_units);
  return *this;
}

std::string Formula::input_unit(const std::string& name) const {
  const auto it = input_units_.find(name);
  return it == input_units_.end() ? "" : it->second;
}

Formula& Formula::explain(std::string text) {
  explanation_ = std::move(text);
  return *this;
}

FormulaStatus Formula::status() const {
  if (points_.size() < 2) return FormulaStatus::incomplete;
  for (size_t i = 1; i < points_.size(); ++i)
    for (const auto& [name, value] : points_[0].inputs) {
      const auto it = points_[i].inputs.find(name);
      if (it == points_[i].inputs.end() || it->second == value) return FormulaStatus::incomplete;
    }
  bool all_agree = true;
  for (const auto& p : points_) all_agree = all_agree && p.agrees;
  if (finding_) return all_agree ? FormulaStatus::false_erratum : FormulaStatus::erratum;
  if (!all_agree) return FormulaStatus::unexplained;
  return approximation_ ? FormulaStatus::approximation : FormulaStatus::agrees;
}

double Formula::checked_value() const {
  if (points_.empty()) throw std::logic_error("formula " + key_ + " has no points");
  for (const auto& p : points_)
    if (!p.agrees) return p.exact;
  return points_.size() > 1 ? points_[1].exact : points_[0].exact;
}

}  // namespace workbook
