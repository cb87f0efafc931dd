// The framework derives statuses from values; these cases pin down each rule.
#include <doctest/doctest.h>

#include <cmath>

#include "answer.hpp"
#include "exercise.hpp"

using namespace workbook;

TEST_CASE("tolerances match how a value was printed") {
  CHECK(sig(2).admits(240.24, 240));
  CHECK(sig(1).admits(2.5, 3));       // rounding edge counts as agreeing
  CHECK_FALSE(sig(1).admits(2.4, 3));
  CHECK(sig(1).admits(2097152, 2e6));  // "2M"
  CHECK(sig(3).admits(1.0111e-3, 1.01e-3));
  CHECK_FALSE(sig(3).admits(1.016e-3, 1.01e-3));
  CHECK(rel(0.01).admits(101, 100));
  CHECK_FALSE(rel(0.01).admits(102, 100));
  CHECK(within(1).admits(295.9, 295));
  CHECK(sig(2).relative_to(240) == doctest::Approx(5.0 / 240));
}

TEST_CASE("book statuses are derived, and contradictions are flagged") {
  CHECK(Answer("a", 240.2, "").book(240, sig(2)).book_status() == BookStatus::agrees);
  CHECK(Answer("a", 295.4, "").book(298, within(1)).erratum("why").book_status() == BookStatus::erratum);
  CHECK(Answer("a", 295.4, "").book(298, within(1)).book_status() == BookStatus::unexplained);
  CHECK(Answer("a", 298.1, "").book(298, within(1)).erratum("why").book_status() == BookStatus::false_erratum);
  CHECK(Answer("a", 1, "").book_status() == BookStatus::none);
}

TEST_CASE("reader-notes statuses") {
  Answer a("a", 120.1, "");
  a.notes("000", 120, sig(3)).notes("003", 121.6, rel(0.001)).differs("other bandwidth").notes("x", 130);
  CHECK(a.notes()[0].status() == NoteStatus::agrees);
  CHECK(a.notes()[1].status() == NoteStatus::differs);
  CHECK(a.notes()[2].status() == NoteStatus::unexplained);
}

TEST_CASE("answers must be finite and keys unique and well-formed") {
  CHECK_THROWS(Answer("a", std::nan(""), ""));
  Exercise ex("ex0", "t");
  ex.answer("k", 1, "");
  CHECK_THROWS(ex.answer("k", 2, ""));
  CHECK_THROWS(ex.answer("Bad Key", 2, ""));
  CHECK_THROWS(ex.table("t", {"a", "b"}).row({"only one"}));
}
