// The answer check: every registered answer, formula and claim of every chapter, against the book and the
// reader notes as its status says; every answer without a book value, and every erratum, must have an
// independent check (independent_*.cpp), and that check must agree with our value with no hidden slack.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

#include "registry.hpp"

using workbook::BookStatus;
using workbook::ClaimStatus;
using workbook::FormulaStatus;
using workbook::NoteStatus;

namespace {
const testing::IndependentCheck* find_check(const std::string& name) {
  for (const auto& c : testing::independent_checks())
    if (c.answer == name) return &c;
  return nullptr;
}
bool close(double ours, double check, const testing::IndependentCheck& c) {
  const double diff = std::fabs(ours - check);
  return c.abs_tol > 0 ? diff <= c.abs_tol : diff <= c.rel_tol * std::fabs(check);
}
// Chapters whose errata are still being re-audited under the errata policy (DESIGN.md): each erratum there
// may still lack its reproduction of the printed number. The re-audit empties this list.
const std::set<int> kReauditPending{1, 2, 3, 4, 5, 6, 9, 10};
bool pending(const std::string& name) {
  for (const auto& chapter : testing::results())
    for (const auto& ex : chapter.exercises)
      if (name.rfind(ex.id() + ".", 0) == 0) return kReauditPending.count(chapter.def->number) > 0;
  return false;
}
}  // namespace

TEST_CASE("every answer agrees with the book, is an approximation it states, or is an explained erratum") {
  const auto answers = testing::all_answers();
  REQUIRE(!answers.empty());
  for (const auto& [name, a] : answers) {
    INFO(name);
    const auto status = a->book_status();
    CHECK_MESSAGE((status == BookStatus::agrees || status == BookStatus::approximation ||
                   status == BookStatus::erratum || status == BookStatus::none),
                  name << ": " << workbook::to_string(status));
    if (status == BookStatus::erratum) CHECK_MESSAGE(a->erratum_reason().size() > 20, name << ": erratum needs a reason");
  }
}

TEST_CASE("every erratum names its finding and severity") {
  for (const auto& [name, a] : testing::all_answers())
    if (a->book_status() == BookStatus::erratum)
      CHECK_MESSAGE(a->finding().has_value(), name << ": erratum without a finding (use .erratum(Finding, …))");
}

// The policy's test of an erratum: the printed number does not follow from the book's own inputs. Either
// the slip the finding describes, repeated in code, gives the print (`reproduced_by`), or — a bare
// arithmetic slip — the book's own inputs and formula give another value (`book_inputs_give`).
TEST_CASE("every erratum reproduces the printed number, or shows the book's own inputs give another") {
  for (const auto& [name, a] : testing::all_answers()) {
    if (a->book_status() != BookStatus::erratum || pending(name)) continue;
    INFO(name);
    CHECK_MESSAGE((a->reproduction().has_value() || a->inputs_give().has_value()),
                  name << ": erratum without .reproduced_by(value, how) or .book_inputs_give(value, how)");
    if (a->reproduction())
      CHECK_MESSAGE(a->agrees_strictly(a->reproduction()->value),
                    name << ": the reproduction " << a->reproduction()->value << " does not give the printed "
                         << *a->book_value());
    if (a->inputs_give())
      CHECK_MESSAGE(!a->agrees_strictly(a->inputs_give()->value),
                    name << ": the book's own inputs give " << a->inputs_give()->value << ", which is the print");
  }
}

TEST_CASE("a reproduction or a stated input is only recorded where it explains something") {
  for (const auto& [name, a] : testing::all_answers()) {
    if (a->reproduction() || a->inputs_give())
      CHECK_MESSAGE(a->book_status() == BookStatus::erratum,
                    name << ": reproduced_by() or book_inputs_give() on a value that is not an erratum");
    if (a->stated())
      CHECK_MESSAGE(a->book_status() == BookStatus::approximation,
                    name << ": stated_input() on a value that is not an approximation");
  }
}

TEST_CASE("every tolerance obeys the rule: printed digits, exact, or a written reason") {
  for (const auto& [name, a] : testing::all_answers()) {
    if (a->book_value())
      CHECK_MESSAGE(workbook::tolerance_rule_violation(*a->book_value(), a->book_tolerance()).empty(),
                    name << " (book): " << workbook::tolerance_rule_violation(*a->book_value(), a->book_tolerance()));
    for (const auto& n : a->notes())
      CHECK_MESSAGE(workbook::tolerance_rule_violation(n.value, n.tolerance).empty(),
                    name << " (notes " << n.source << "): " << workbook::tolerance_rule_violation(n.value, n.tolerance));
  }
  for (const auto& [name, c] : testing::all_claims())
    if (c->relation() == workbook::Relation::about)
      CHECK_MESSAGE(workbook::tolerance_rule_violation(c->bound(), c->tolerance()).empty(),
                    name << " (claim): " << workbook::tolerance_rule_violation(c->bound(), c->tolerance()));
}

TEST_CASE("every reader-notes value agrees or its difference is explained") {
  for (const auto& [name, a] : testing::all_answers())
    for (const auto& n : a->notes()) {
      INFO(name << " (notes " << n.source << ")");
      const auto status = n.status();
      CHECK_MESSAGE((status == NoteStatus::agrees || status == NoteStatus::differs), workbook::to_string(status));
    }
}

TEST_CASE("every printed formula agrees, is a reasoned approximation, or is an explained erratum") {
  for (const auto& [name, f] : testing::all_formulas()) {
    const auto s = f->status();
    CHECK_MESSAGE((s == FormulaStatus::agrees || s == FormulaStatus::approximation || s == FormulaStatus::erratum),
                  name << ": " << workbook::to_string(s));
  }
}

TEST_CASE("every prose claim holds or is an explained erratum") {
  for (const auto& [name, c] : testing::all_claims()) {
    const auto s = c->status();
    CHECK_MESSAGE((s == ClaimStatus::holds || s == ClaimStatus::erratum), name << ": " << workbook::to_string(s));
  }
}

TEST_CASE("answers without a book value, and errata, have an independent check") {
  auto require_check = [](const std::string& name, const char* why, const workbook::Tolerance* tol,
                          const double* printed) {
    INFO(name);
    const auto* check = find_check(name);
    CHECK_MESSAGE(check != nullptr, name << " (" << why << ") has no independent check");
    // For an erratum the independent value must back ours against the book: it too lies outside the
    // book's precision.
    if (check && tol && printed)
      CHECK_MESSAGE(!tol->admits(check->compute(), *printed),
                    name << ": the independent check agrees with the book, not with the erratum");
  };
  for (const auto& [name, a] : testing::all_answers()) {
    const auto status = a->book_status();
    if (status == BookStatus::none) require_check(name, "no book answer", nullptr, nullptr);
    if (status == BookStatus::erratum) require_check(name, "erratum", &a->book_tolerance(), &*a->book_value());
    // The exact value shown beside an approximation from a stated input is checked like any other.
    if (status == BookStatus::approximation && a->stated()) require_check(name, "approximation", nullptr, nullptr);
  }
  for (const auto& [name, f] : testing::all_formulas())
    if (f->status() == FormulaStatus::erratum) require_check(name, "formula erratum", nullptr, nullptr);
  for (const auto& [name, c] : testing::all_claims())
    if (c->status() == ClaimStatus::erratum) require_check(name, "claim erratum", nullptr, nullptr);
}

TEST_CASE("independent checks agree with the registered answers") {
  REQUIRE(!testing::independent_checks().empty());
  for (const auto& c : testing::independent_checks()) {
    INFO(c.answer << " by " << c.method);
    double ours = 0;
    bool found = true;
    try {
      ours = testing::checked_value(c.answer);
    } catch (const std::out_of_range&) {
      found = false;
    }
    CHECK_MESSAGE(found, "no registered record " << c.answer);
    if (!found) continue;
    const double independent = c.compute();
    CHECK_MESSAGE(close(ours, independent, c),
                  c.answer << " = " << ours << ", independent " << c.method << " gives " << independent);
  }
}

TEST_CASE("no two independent checks claim the same answer") {
  std::vector<std::string> names;
  for (const auto& c : testing::independent_checks()) names.push_back(c.answer);
  std::sort(names.begin(), names.end());
  CHECK(std::adjacent_find(names.begin(), names.end()) == names.end());
}
