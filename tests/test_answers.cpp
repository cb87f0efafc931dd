// The answer check: every registered answer of every chapter, against the book and the reader notes
// as its status says; every answer without a book value, and every erratum, must have an independent
// check (independent_*.cpp), and that check must agree with our value.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "registry.hpp"

using workbook::BookStatus;
using workbook::NoteStatus;

namespace {
const testing::IndependentCheck* find_check(const std::string& name) {
  for (const auto& c : testing::independent_checks())
    if (c.answer == name) return &c;
  return nullptr;
}
bool close(double a, double b, double rel_tol) { return std::fabs(a - b) <= rel_tol * std::fabs(b) + 1e-12; }
}  // namespace

TEST_CASE("every answer agrees with the book or is an explained erratum") {
  const auto answers = testing::all_answers();
  REQUIRE(!answers.empty());
  for (const auto& [name, a] : answers) {
    INFO(name);
    const auto status = a->book_status();
    CHECK_MESSAGE((status == BookStatus::agrees || status == BookStatus::erratum || status == BookStatus::none),
                  name << ": " << workbook::to_string(status));
    if (status == BookStatus::erratum) CHECK_MESSAGE(a->erratum_reason().size() > 20, name << ": erratum needs a reason");
  }
}

TEST_CASE("every reader-notes value agrees or its difference is explained") {
  for (const auto& [name, a] : testing::all_answers())
    for (const auto& n : a->notes()) {
      INFO(name << " (notes " << n.source << ")");
      const auto status = n.status();
      CHECK_MESSAGE((status == NoteStatus::agrees || status == NoteStatus::differs), workbook::to_string(status));
    }
}

TEST_CASE("answers without a book value, and errata, have an independent check") {
  for (const auto& [name, a] : testing::all_answers()) {
    const auto status = a->book_status();
    if (status != BookStatus::none && status != BookStatus::erratum) continue;
    INFO(name);
    const auto* check = find_check(name);
    CHECK_MESSAGE(check != nullptr, name << " (" << std::string(workbook::to_string(status)) << ") has no independent check");
    if (check && status == BookStatus::erratum) {
      // The independent value must back ours against the book: it too lies outside the book's precision.
      CHECK_MESSAGE(!a->book_tolerance().admits(check->compute(), *a->book_value()),
                    name << ": the independent check agrees with the book, not with the erratum");
    }
  }
}

TEST_CASE("independent checks agree with the registered answers") {
  REQUIRE(!testing::independent_checks().empty());
  for (const auto& c : testing::independent_checks()) {
    INFO(c.answer << " by " << c.method);
    const workbook::Answer* a = nullptr;
    CHECK_NOTHROW(a = &testing::answer(c.answer));
    if (!a) continue;
    const double independent = c.compute();
    CHECK_MESSAGE(close(a->value(), independent, c.rel_tol),
                  c.answer << " = " << a->value() << ", independent " << c.method << " gives " << independent);
  }
}

TEST_CASE("no two independent checks claim the same answer") {
  std::vector<std::string> names;
  for (const auto& c : testing::independent_checks()) names.push_back(c.answer);
  std::sort(names.begin(), names.end());
  CHECK(std::adjacent_find(names.begin(), names.end()) == names.end());
}
