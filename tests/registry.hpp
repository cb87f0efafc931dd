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

// An independent check: a second derivation, brute-force search or simulation of one answer.
struct IndependentCheck {
  std::string answer;  // "ex1.3.critical_batch_d4096"
  std::string method;  // what makes it independent
  std::function<double()> compute;
  double rel_tol;
};
std::vector<IndependentCheck>& independent_checks();
struct RegisterCheck {
  RegisterCheck(std::string answer, std::string method, double rel_tol, std::function<double()> compute);
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
