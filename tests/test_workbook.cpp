// The framework derives statuses from values; these cases pin down each rule.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "answer.hpp"
#include "exercise.hpp"
#include "output.hpp"

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
  const Finding why{"why", Severity::slip, "a slip", "The book adds 3 where the sum needs none."};
  CHECK(Answer("a", 295.4, "").book(298, within(1)).erratum(why).book_status() == BookStatus::erratum);
  CHECK(Answer("a", 295.4, "").book(298, within(1)).book_status() == BookStatus::unexplained);
  CHECK(Answer("a", 298.1, "").book(298, within(1)).erratum(why).book_status() == BookStatus::false_erratum);
  CHECK(Answer("a", 1, "").book_status() == BookStatus::none);
}

// DESIGN.md, "Errata policy": truncation agrees; a stated input or hedged wording is an approximation.
TEST_CASE("the errata policy: truncated agrees, stated inputs and hedges are approximations") {
  const Finding why{"why", Severity::slip, "a slip", "The book truncates early and then adds 5."};
  // 4377.8 printed as 4377 (truncated at 4 digits) agrees; 4376 does not.
  CHECK(Answer("a", 4377.8, "").book(4377, sig(4)).book_status() == BookStatus::agrees);
  CHECK(Answer("a", 453.6, "").book(453, sig(3)).book_status() == BookStatus::agrees);
  CHECK(Answer("a", 4378.0, "").book(4377, sig(4)).book_status() == BookStatus::unexplained);
  CHECK(Answer("a", -2.58, "").book(-2.5, sig(2)).book_status() == BookStatus::agrees);
  CHECK(Answer("a", 2.58, "").book(-2.5, sig(2)).book_status() == BookStatus::unexplained);
  // Agreeing by truncation is told apart from agreeing by rounding (the card says "truncated", not a ± band the
  // value lies outside): 4377.8 is 4377 truncated, 4377.2 is 4377 rounded.
  CHECK(Answer("a", 4377.8, "").book(4377, sig(4)).agrees_by_truncation());
  CHECK_FALSE(Answer("a", 4377.2, "").book(4377, sig(4)).agrees_by_truncation());
  CHECK_FALSE(Answer("a", 4378.0, "").book(4377, sig(4)).agrees_by_truncation());
  CHECK_FALSE(Answer("a", 8.3, "").book(9, rel(0.1).because("'about 9 s'")).agrees_by_truncation());
  CHECK_THROWS(Answer("a", 1, "s").binary_prefixes());  // binary prefixes are for bytes only
  // Truncated and then flagged is a false erratum.
  CHECK(Answer("a", 4377.8, "").book(4377, sig(4)).erratum(why).book_status() == BookStatus::false_erratum);
  // The book computes from its stated 160e3 bytes of KV per token: 160e3·32768 = 5.24e9 printed, where the
  // exact 163,840 B gives 5.369e9.
  Answer stated("a", 163840.0 * 32768, "");
  stated.book(5.24e9, sig(3)).stated_input("§8: '160e3 bytes per token' (exact 163,840)", 160e3 * 32768);
  CHECK(stated.book_status() == BookStatus::approximation);
  // A stated input that does not give the printed value explains nothing.
  Answer wrong_input("a", 163840.0 * 32768, "");
  wrong_input.book(5.1e9, sig(2)).stated_input("§8: '160e3 bytes per token' (exact 163,840)", 160e3 * 32768);
  CHECK(wrong_input.book_status() == BookStatus::unexplained);
  // Hedged wording within a reasoned tolerance: an approximation, not an agreement.
  CHECK(Answer("a", 8.3, "").book(9, rel(0.1).because("'about 9 s'")).book_status() == BookStatus::approximation);
  CHECK(Answer("a", 9.7, "").book(9, rel(0.1).because("'about 9 s'")).book_status() == BookStatus::agrees);
  CHECK(Answer("a", 9.04, "").book(9, rel(0.1).because("'about 9 s'")).book_status() == BookStatus::agrees);
  // An erratum keeps its reproduction of the printed number.
  Answer slip("a", 100, "");
  slip.book(120, sig(2)).erratum(why).reproduced_by(120.4, "the early truncation, then + 5");
  CHECK(slip.book_status() == BookStatus::erratum);
  CHECK(slip.agrees_strictly(slip.reproduction()->value));
}

TEST_CASE("reader-notes statuses") {
  Answer a("a", 120.1, "");
  a.notes("000", 120, sig(3)).notes("003", 121.6, sig(4)).differs("other bandwidth").notes("x", 130, sig(2));
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

TEST_CASE("the tolerance rule: half a unit in the last printed place, exact, or a reason") {
  CHECK(printed_digits(240) == 2);
  CHECK(printed_digits(16e9) == 2);
  CHECK(printed_digits(1.01e-3) == 3);
  CHECK(printed_digits(3.8e6) == 2);
  CHECK(printed_digits(8192) == 4);
  CHECK(printed_digits(0) == 1);
  CHECK(tolerance_rule_violation(240, sig(2)).empty());
  CHECK(tolerance_rule_violation(240, sig(3)).empty());      // stricter than the rule is fine
  CHECK_FALSE(tolerance_rule_violation(243, sig(2)).empty());  // 243 was printed with 3 digits
  CHECK(tolerance_rule_violation(243, exact()).empty());
  CHECK_FALSE(tolerance_rule_violation(243, rel(0.01)).empty());
  CHECK(tolerance_rule_violation(243, rel(0.01).because("the text says 'about'")).empty());
  CHECK_FALSE(tolerance_rule_violation(243, within(1)).empty());
  CHECK(tolerance_rule(240, sig(2)).find("half a unit") != std::string::npos);
  // No absolute floor: a declared exact tolerance fails at 1e-9 relative, however small the values.
  CHECK_FALSE(exact().admits(1e-15 * (1 + 1e-9), 1e-15));
  CHECK(exact().admits(1e-15 * (1 + 1e-13), 1e-15));
}

TEST_CASE("errata name a finding with a severity") {
  const Finding gib{"gib", Severity::unit, "GiB as GB", "The table divides by 2^30."};
  Answer a("a", 17.2, "GB");
  a.book(16, sig(2)).erratum(gib, "Here: 16 GiB.");
  CHECK(a.book_status() == BookStatus::erratum);
  REQUIRE(a.finding());
  CHECK(a.finding()->severity == Severity::unit);
  CHECK(a.erratum_reason() == "The table divides by 2^30. Here: 16 GiB.");
}

TEST_CASE("a printed formula is checked at the book's point and at an unrelated one") {
  // The exact count is a·b + a; a book that drops the "+ a" agrees at large b only if the tolerance allows.
  auto exact_fn = [](const Inputs& v) { return in(v, "a") * in(v, "b") + in(v, "a"); };
  auto book_fn = [](const Inputs& v) { return in(v, "a") * in(v, "b"); };
  Formula same("same", "ab + a", exact_fn, exact_fn);
  same.at({{"a", 3}, {"b", 1000}}).at({{"a", 7}, {"b", 5}});
  CHECK(same.status() == FormulaStatus::agrees);

  Formula dropped("dropped", "ab", book_fn, exact_fn);
  dropped.at({{"a", 3}, {"b", 1000}}).at({{"a", 7}, {"b", 5}});
  CHECK(dropped.status() == FormulaStatus::unexplained);
  CHECK(dropped.checked_value() == 3 * 1000 + 3);  // the first point where it differs

  Formula approx("approx", "ab", book_fn, exact_fn);
  approx.approximation(rel(0.01).because("drops a against ab: good for b >= 100"))
      .at({{"a", 3}, {"b", 1000}}).at({{"a", 7}, {"b", 500}});
  CHECK(approx.status() == FormulaStatus::approximation);

  // Right at the book's point by coincidence, wrong elsewhere: a finding.
  const Finding f{"f", Severity::conclusion, "wrong formula", "The book writes 2a where a·b belongs."};
  auto coincidence = [](const Inputs& v) { return 2 * in(v, "a"); };
  Formula wrong("wrong", "2a", coincidence, [](const Inputs& v) { return in(v, "a") * in(v, "b"); });
  wrong.at({{"a", 3}, {"b", 2}}).at({{"a", 5}, {"b", 7}});
  CHECK(wrong.status() == FormulaStatus::unexplained);
  CHECK(wrong.points()[0].agrees);
  CHECK_FALSE(wrong.points()[1].agrees);
  wrong.erratum(f);
  CHECK(wrong.status() == FormulaStatus::erratum);

  Formula one_point("one", "ab", book_fn, book_fn);
  one_point.at({{"a", 1}, {"b", 2}});
  CHECK(one_point.status() == FormulaStatus::incomplete);
  one_point.at({{"a", 1}, {"b", 3}});  // shares a = 1 with the book's point: not unrelated
  CHECK(one_point.status() == FormulaStatus::incomplete);
  CHECK_THROWS(Formula("x", "x", book_fn, book_fn).at({{"a", 1}}));  // b missing
  CHECK_THROWS(Formula("x", "x", book_fn, exact_fn).approximation(rel(0.1)));  // no reason
}

TEST_CASE("prose claims are checked with the bound their wording implies") {
  CHECK(Claim("c", "", 2550, "").at_least(2550).status() == ClaimStatus::holds);
  CHECK(Claim("c", "", 2549, "").at_least(2550).status() == ClaimStatus::unexplained);
  CHECK(Claim("c", "", 2549, "").above(2549).status() == ClaimStatus::unexplained);
  CHECK(Claim("c", "", 243, "").about(240, sig(2)).status() == ClaimStatus::holds);
  CHECK(Claim("c", "", 246, "").about(240, sig(2)).status() == ClaimStatus::unexplained);
  CHECK(Claim("c", "", 30, "").order_of(10).status() == ClaimStatus::holds);
  CHECK(Claim("c", "", 32, "").order_of(10).status() == ClaimStatus::unexplained);
  CHECK(Claim("c", "", 5, "").between(4, 6).status() == ClaimStatus::holds);
  CHECK(Claim("c", "", 5, "").status() == ClaimStatus::incomplete);
  const Finding f{"f", Severity::conclusion, "t", "The book compares with the wrong threshold."};
  CHECK(Claim("c", "", 1, "").below(0.5).erratum(f).status() == ClaimStatus::erratum);
  CHECK(Claim("c", "", 0.1, "").below(0.5).erratum(f).status() == ClaimStatus::false_erratum);
}

TEST_CASE("figures refuse values JSON cannot carry, and findings are grouped in the chapter JSON") {
  Exercise ex("ex0", "t");
  CHECK_THROWS(ex.series("s", "x", "y").line("l", {1, 2}, {1, std::nan("")}));
  CHECK_THROWS(ex.bars("b", "x", "y", {"a", "b"}).stack("s", {1}));
  CHECK_THROWS(ex.grid("g", "x", "y", {{1, 2}}, {{1}}));
  CHECK_THROWS(ex.timeline("t", "time").lane("d0", {{0, -1, "compute", ""}}));

  static ChapterDef def{"ch99", 99, "test", {}};
  def.exercises.clear();
  def.exercises.push_back({"ex99.1", "t", [](Exercise& e) {
                             static const Finding f{"slip", Severity::slip, "one slip", "Rounded 1.37 down to 1.2 early."};
                             e.section("§9.9");
                             // 1.2 is neither 1.37 rounded (1.4) nor truncated (1.3): an erratum.
                             e.answer("a", 1.37, "ms").book(1.2, sig(2)).erratum(f);
                             e.answer("b", 2.74, "ms").book(2.4, sig(2)).erratum(f, "Doubled.");
                             e.claim("c", "about 1.4", 1.37, "ms").about(1.4, sig(2));
                           }});
  const auto json = to_json(run(def));
  CHECK(json.find("\"findings\"") != std::string::npos);
  CHECK(json.find("\"slip\"") != std::string::npos);
  CHECK(json.find("ex99.1.b") != std::string::npos);
  CHECK(json.find("\"§9.9\"") != std::string::npos);
  // A formula that names its units prints its points as quantities; one that does not, its large numbers in
  // scientific notation; where the book's expression and the exact value differ, their texts differ too.
  static ChapterDef fdef{"ch98", 98, "test", {}};
  fdef.exercises.clear();
  fdef.exercises.push_back({"ex98.1", "t", [](Exercise& e) {
                              auto exact_fn = [](const Inputs& v) { return in(v, "V") / in(v, "W"); };
                              e.formula("t", "T = V/W", exact_fn, exact_fn).units("s", {{"V", "B"}, {"W", "B/s"}})
                                  .at({{"V", 1e9}, {"W", 4.5e11}}).at({{"V", 3e8}, {"W", 9e11}});
                              e.formula("n", "n = 1.00001·V/W",
                                        [](const Inputs& v) { return in(v, "V") / in(v, "W") * 1.00001; }, exact_fn)
                                  .at({{"V", 1.97e14}, {"W", 4.5e10}}).at({{"V", 3e6}, {"W", 7}});
                            }});
  const auto formulas = nlohmann::json::parse(to_json(run(fdef)))["exercises"][0]["formulas"];
  const auto& t = formulas[0]["points"][0];
  CHECK(t["inputs_text"]["V"] == "1 GB");
  CHECK(t["inputs_text"]["W"] == "450 GB/s");
  CHECK(t["book_text"] == "2.22 ms");
  const auto& n = formulas[1]["points"][0];
  CHECK(n["inputs_text"]["V"] == "1.97e14");  // no unit: scientific, not 197,000,000,000,000
  CHECK_FALSE(n["agrees"].get<bool>());
  CHECK(n["book_text"] != n["exact_text"]);  // 4,377.82 against 4,377.78: they differ in the sixth digit

  CHECK(defects(run(def)).empty());
}

// Its own name must obey the rule too: a name holding a semicolon is split by doctest_discover_tests into
// two filters that match nothing, and the test would pass without running.
TEST_CASE("test names have no semicolon (doctest_discover_tests would split them into filters that match nothing)") {
  namespace fs = std::filesystem;
  for (const auto& entry : fs::directory_iterator(TEST_SOURCE_DIR)) {
    if (entry.path().extension() != ".cpp") continue;
    std::ifstream f(entry.path());
    std::string line;
    for (int n = 1; std::getline(f, line); ++n) {
      const auto at = line.find("TEST_CASE(\"");
      if (at == std::string::npos) continue;
      const auto end = line.find("\")", at);
      const std::string name = line.substr(at, end == std::string::npos ? std::string::npos : end - at);
      CHECK_MESSAGE(name.find(';') == std::string::npos, entry.path().filename().string() << ":" << n);
    }
  }
}
