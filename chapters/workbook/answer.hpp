#pragma once
// One computed answer and what it is compared against. Statuses are derived here, never typed in.
#include <optional>
#include <string>
#include <vector>

namespace workbook {

// How the book (or a reader) rounded a printed value, or what a prose claim's wording allows.
//
// The rule (the "tolerance rule", enforced by tests/test_answers.cpp): a printed number is compared with
// half a unit in its last printed place (`sig(n)` with n at least the printed significant digits), an
// exact quantity exactly (`exact()`); anything wider needs a written reason (`.because("…")`), shown
// next to the value in the report. There is no other slack.
struct Tolerance {
  enum class Kind { relative, absolute, significant };
  Kind kind = Kind::relative;
  double amount = 0;    // relative fraction, absolute amount, or number of significant digits
  std::string reason;   // why a tolerance wider than the rule is right (wording, a stated regime, …)

  bool admits(double value, double printed) const;
  std::string describe() const;  // "±1%", "±0.5", "3 significant digits", "exact"
  // The same tolerance as a fraction of |printed|, for the JSON "tol" field.
  double relative_to(double printed) const;
  Tolerance because(std::string why) const;
};

Tolerance rel(double fraction);      // |v − p| ≤ fraction·|p|
Tolerance within(double amount);     // |v − p| ≤ amount
Tolerance sig(int digits);           // v rounds to p at `digits` significant digits ("~240", "2M")
Tolerance exact();                   // equal up to double rounding (relative 1e-12)

// Significant digits of a printed value as a double holds it, trailing zeros dropped: 240 -> 2,
// 16e9 -> 2, 1.01e-3 -> 3, 0 -> 1.
int printed_digits(double printed);
// Empty when `t` obeys the tolerance rule for `printed`; otherwise why not, in one line.
std::string tolerance_rule_violation(double printed, const Tolerance& t);
// How the tolerance was chosen, for the JSON "tol_rule" field and the report.
std::string tolerance_rule(double printed, const Tolerance& t);

// How serious a finding is, in terms a reader can use (DESIGN.md, "Errata policy"; report order: conclusion first).
enum class Severity {
  conclusion,  // it changes a conclusion the book draws (a bound, a choice, "fits", "compute-bound", …)
  slip,        // a wrong number, formula or constant that changes no conclusion
  unit,        // a unit label only (GB for GiB, bits for bytes, …): the number is right for another unit
};
const char* to_string(Severity s);

// One cause behind one or more errata: defined once in a chapter source and referenced by every answer,
// formula or claim it touches, so a single slip is listed once with the values it explains.
struct Finding {
  std::string id;      // stable within the chapter: "gib-as-gb"
  Severity severity;
  std::string title;   // one line: "16 GiB computed as 16e9 bytes"
  std::string reason;  // what the book did, in enough detail to reproduce the printed numbers
};

// The errata policy (DESIGN.md):
//   agrees        — the exact value rounded or truncated to the printed digits;
//   approximation — the printed value follows from an input the book states at that place (`stated_input`),
//                   or from hedged wording within a tolerance whose reason names the wording (`because`);
//                   shown with the exact value, never counted as an erratum;
//   erratum       — it follows from neither: a finding whose method reproduces the printed number
//                   (`reproduced_by`), or, for a bare arithmetic slip, the value the book's own inputs and
//                   formula give instead (`book_inputs_give`); and an independent check of ours.
enum class BookStatus {
  none,            // the book prints no value: an independent check in tests/ is required
  agrees,          // within the printed precision (rounded or truncated)
  approximation,   // follows from a stated input or hedged wording, not from the exact value
  erratum,         // follows from neither, and a finding is recorded
  unexplained,     // outside it with no reason: a defect (ours or an unrecorded erratum)
  false_erratum,   // a reason is recorded but the values agree: the erratum claim is wrong
};

enum class NoteStatus { agrees, differs, unexplained, false_difference };

struct NoteValue {
  std::string source;  // seed number: "000", "003"
  double value;
  Tolerance tolerance;
  std::string reason;  // why the reader's value differs; empty when it should agree
  NoteStatus status() const;
  double ours = 0;     // filled in by the Answer
};

// The printed value follows from an input the book states at that place ("we know the model has 70e9
// parameters"), not from the exact one: our computation with that stated input must agree with the print.
struct StatedInput {
  std::string input;   // the stated input and where: "§6.1: '70e9 parameters' (exact 70.55e9)"
  double from_stated;  // our computation with that input
};

// What the book's method gives when our code repeats its slip (the finding's reason, done in C++): an
// erratum is only recorded when this reproduces the printed number.
struct Reproduction {
  double value;
  std::string how;  // "1.6e10 = 4·D·F with F counted twice"
};

// An arithmetic slip that no method reproduces (the book's own printed parts add to 13.0e9, it prints
// 13.1e9): the book's stated inputs put through its own formula give `value`, which is not the print.
struct InputsGive {
  double value;
  std::string how;  // "8.5e9 + 4.2e9 + 0.3e9, the book's own parts"
};

// A value we evaluated from a formula the book prints (not a value it prints): kept apart from `book`.
struct Derived {
  double value;
  std::string formula;
};

// A value the book measured on hardware (a profile, a benchmark), not computed: a reference for our model,
// with what the model leaves out. It has no tolerance and no status; the report shows both side by side.
struct Measured {
  double value;
  std::string source;  // "§10.1.1, TPU v5e 2x4, profiled"
  std::string gap;     // why our model's value differs
};

class Answer {
 public:
  Answer(std::string key, double value, std::string unit);

  Answer& book(double printed, Tolerance tolerance);
  Answer& erratum(const Finding& cause, std::string detail = "");  // detail: what this value shows of it
  // The printed value follows from an input the book states (see StatedInput): status approximation.
  Answer& stated_input(std::string input, double from_stated);
  // For an erratum: the book's slip repeated in code gives `value`, which must agree with the print.
  Answer& reproduced_by(double value, std::string how);
  // For an erratum that is a bare arithmetic slip: what the book's own inputs and formula give instead.
  Answer& book_inputs_give(double value, std::string how);
  Answer& notes(std::string source, double value, Tolerance tolerance);
  Answer& differs(std::string reason);  // applies to the last notes() entry
  Answer& explain(std::string text);    // the assumption or model behind the value
  Answer& derived(double value, std::string formula);
  Answer& measured(double value, std::string source, std::string gap);
  // A byte count shown with binary prefixes (256 KiB, not 262 kB), where the book's text counts in powers of
  // two at that place; the value and its unit ("B") stay as they are.
  Answer& binary_prefixes();

  const std::string& key() const { return key_; }
  double value() const { return value_; }
  const std::string& unit() const { return unit_; }
  bool shows_binary_prefixes() const { return binary_prefixes_; }
  const std::optional<double>& book_value() const { return book_; }
  const Tolerance& book_tolerance() const { return book_tolerance_; }
  const std::string& erratum_reason() const { return erratum_; }  // the finding's reason (+ detail)
  const std::optional<Finding>& finding() const { return finding_; }
  const std::string& explanation() const { return explanation_; }
  const std::vector<NoteValue>& notes() const { return notes_; }
  const std::optional<Derived>& derived_value() const { return derived_; }
  const std::optional<Measured>& measured_value() const { return measured_; }
  const std::optional<StatedInput>& stated() const { return stated_; }
  const std::optional<Reproduction>& reproduction() const { return reproduction_; }
  const std::optional<InputsGive>& inputs_give() const { return inputs_give_; }
  BookStatus book_status() const;
  // Whether `v` is `printed` rounded or truncated to its printed digits (or within a reason-free
  // tolerance that is tighter): the "agrees" test, without the slack of a reasoned tolerance.
  bool agrees_strictly(double v) const;
  // Whether our value agrees only as the print truncated (not rounded) to its digits: 66.9e12 printed "66e12".
  // The report then says "truncated" where it would show the rounding band the value lies outside.
  bool agrees_by_truncation() const;

 private:
  std::string key_;
  double value_;
  std::string unit_;
  bool binary_prefixes_ = false;
  std::optional<double> book_;
  Tolerance book_tolerance_;
  std::string erratum_;
  std::optional<Finding> finding_;
  std::string explanation_;
  std::vector<NoteValue> notes_;
  std::optional<Derived> derived_;
  std::optional<Measured> measured_;
  std::optional<StatedInput> stated_;
  std::optional<Reproduction> reproduction_;
  std::optional<InputsGive> inputs_give_;
};

const char* to_string(BookStatus s);
const char* to_string(NoteStatus s);

}  // namespace workbook
