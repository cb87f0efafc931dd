#pragma once
// Every chapter linked into the test binary, run once, with answers addressable as "ex1.3.key".
#include <functional>
#include <string>
#include <vector>

#include "exercise.hpp"

namespace testing {

const std::vector<workbook::ChapterResult>& results();
const workbook::Answer& answer(const std::string& id_dot_key);  // throws when absent
std::vector<std::pair<std::string, const workbook::Answer*>> all_answers();

// Every formula and claim of every chapter, by "ID.KEY".
std::vector<std::pair<std::string, const workbook::Formula*>> all_formulas();
std::vector<std::pair<std::string, const workbook::Claim*>> all_claims();
// The value an independent check of "ID.KEY" must reproduce: an answer's value, a claim's value, or a
// formula's checked_value(). Throws when no record has that name.
double checked_value(const std::string& id_dot_key);

// An independent check: a second derivation, brute-force search or simulation of one answer, formula or
// claim. It agrees when |ours − check| ≤ rel_tol·|check| or, for a check declared absolute, ≤ abs_tol.
// No other slack.
struct IndependentCheck {
  std::string answer;  // "ex1.3.critical_batch_d4096"
  std::string method;  // what makes it independent
  std::function<double()> compute;
  double rel_tol;
  double abs_tol = 0;
};
std::vector<IndependentCheck>& independent_checks();
struct RegisterCheck {
  RegisterCheck(std::string answer, std::string method, double rel_tol, std::function<double()> compute,
                double abs_tol = 0);
};

}  // namespace testing

#define INDEPENDENT_CAT2(a, b) a##b
#define INDEPENDENT_CAT(a, b) INDEPENDENT_CAT2(a, b)
// INDEPENDENT("ex1.3.critical_batch_d4096", "bisection on T_math − T_comms", 1e-9) { return ...; }
#define INDEPENDENT(answer, method, rel_tol)                                                              \
  static double INDEPENDENT_CAT(check_, __LINE__)();                                                     \
  static const testing::RegisterCheck INDEPENDENT_CAT(reg_, __LINE__){answer, method, rel_tol,           \
                                                                      &INDEPENDENT_CAT(check_, __LINE__)}; \
  static double INDEPENDENT_CAT(check_, __LINE__)()

// INDEPENDENT_WITHIN("ch4.x.max_abs_difference", "…", 1e-12) { return …; }: an absolute tolerance, for
// values whose scale is zero (a maximum error, a difference).
#define INDEPENDENT_WITHIN(answer, method, abs_tol)                                                       \
  static double INDEPENDENT_CAT(check_, __LINE__)();                                                     \
  static const testing::RegisterCheck INDEPENDENT_CAT(reg_, __LINE__){answer, method, 0,                 \
                                                                      &INDEPENDENT_CAT(check_, __LINE__), \
                                                                      abs_tol};                          \
  static double INDEPENDENT_CAT(check_, __LINE__)()
