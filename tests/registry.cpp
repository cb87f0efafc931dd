#include "registry.hpp"

#include <stdexcept>

namespace testing {

const std::vector<workbook::ChapterResult>& results() {
  static const std::vector<workbook::ChapterResult> all = [] {
    std::vector<workbook::ChapterResult> out;
    for (const auto& chapter : workbook::chapters()) out.push_back(workbook::run(chapter));
    return out;
  }();
  return all;
}

std::vector<std::pair<std::string, const workbook::Answer*>> all_answers() {
  std::vector<std::pair<std::string, const workbook::Answer*>> out;
  for (const auto& chapter : results())
    for (const auto& ex : chapter.exercises)
      for (const auto& a : ex.answers()) out.emplace_back(ex.id() + "." + a.key(), &a);
  return out;
}

std::vector<std::pair<std::string, const workbook::Formula*>> all_formulas() {
  std::vector<std::pair<std::string, const workbook::Formula*>> out;
  for (const auto& chapter : results())
    for (const auto& ex : chapter.exercises)
      for (const auto& f : ex.formulas()) out.emplace_back(ex.id() + "." + f.key(), &f);
  return out;
}

std::vector<std::pair<std::string, const workbook::Claim*>> all_claims() {
  std::vector<std::pair<std::string, const workbook::Claim*>> out;
  for (const auto& chapter : results())
    for (const auto& ex : chapter.exercises)
      for (const auto& c : ex.claims()) out.emplace_back(ex.id() + "." + c.key(), &c);
  return out;
}

double checked_value(const std::string& id_dot_key) {
  for (const auto& [name, a] : all_answers())
    if (name == id_dot_key) return a->value();
  for (const auto& [name, f] : all_formulas())
    if (name == id_dot_key) return f->checked_value();
  for (const auto& [name, c] : all_claims())
    if (name == id_dot_key) return c->value();
  throw std::out_of_range("no registered answer, formula or claim " + id_dot_key);
}

const workbook::Answer& answer(const std::string& id_dot_key) {
  for (const auto& [name, a] : all_answers())
    if (name == id_dot_key) return *a;
  throw std::out_of_range("no registered answer " + id_dot_key);
}

std::vector<IndependentCheck>& independent_checks() {
  static std::vector<IndependentCheck> all;
  return all;
}

RegisterCheck::RegisterCheck(std::string answer, std::string method, double rel_tol, std::function<double()> compute,
                             double abs_tol) {
  independent_checks().push_back({std::move(answer), std::move(method), std::move(compute), rel_tol, abs_tol});
}

}  // namespace testing
