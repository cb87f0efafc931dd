#pragma once
// One computed answer and what it is compared against. Statuses are derived here, never typed in.
#include <optional>
#include <string>
#include <vector>

namespace workbook {

// How the book (or a reader) rounded a printed value.
struct Tolerance {
  enum class Kind { relative, absolute, significant };
  Kind kind = Kind::relative;
  double amount = 0.01;  // relative fraction, absolute amount, or number of significant digits

  bool admits(double value, double printed) const;
  std::string describe() const;  // "±1%", "±0.5", "3 significant digits"
  // The same tolerance as a fraction of |printed|, for the JSON "tol" field.
  double relative_to(double printed) const;
};

Tolerance rel(double fraction);      // |v − p| ≤ fraction·|p|
Tolerance within(double amount);     // |v − p| ≤ amount
Tolerance sig(int digits);           // v rounds to p at `digits` significant digits ("~240", "2M")

enum class BookStatus {
  none,            // the book prints no value: an independent check in tests/ is required
  agrees,          // within the printed precision
  erratum,         // outside it, and a reason is recorded
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

class Answer {
 public:
  Answer(std::string key, double value, std::string unit);

  Answer& book(double printed, Tolerance tolerance);
  Answer& erratum(std::string reason);
  Answer& notes(std::string source, double value, Tolerance tolerance = rel(0.01));
  Answer& differs(std::string reason);  // applies to the last notes() entry
  Answer& explain(std::string text);    // the assumption or model behind the value

  const std::string& key() const { return key_; }
  double value() const { return value_; }
  const std::string& unit() const { return unit_; }
  const std::optional<double>& book_value() const { return book_; }
  const Tolerance& book_tolerance() const { return book_tolerance_; }
  const std::string& erratum_reason() const { return erratum_; }
  const std::string& explanation() const { return explanation_; }
  const std::vector<NoteValue>& notes() const { return notes_; }
  BookStatus book_status() const;

 private:
  std::string key_;
  double value_;
  std::string unit_;
  std::optional<double> book_;
  Tolerance book_tolerance_;
  std::string erratum_;
  std::string explanation_;
  std::vector<NoteValue> notes_;
};

const char* to_string(BookStatus s);
const char* to_string(NoteStatus s);

}  // namespace workbook
