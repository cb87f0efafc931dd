#pragma once
// What a subcommand prints, listed once: each output is {key, label, value, unit}, and one function
// prints the list as a JSON object (SI units, counts as integers) or as a table of formatted values.
// Nothing is computed from the printed text, and nothing non-finite is printed: emit() refuses a result
// that is inf or NaN with a message naming the inputs responsible.
#include <nlohmann/json.hpp>

#include <string>
#include <variant>
#include <vector>

namespace cli {

// The unit of an output decides how it is printed: "s", "B", "B/s", "FLOPs", "FLOPs/s" scale to a
// readable prefix; kCount prints an integer (in JSON too: "max_batch": 208); "x" a ratio ("1.5x"); kPlain a
// number as it is. A row's label is escaped when printed, like every string value.
inline constexpr const char* kCount = "count";
inline constexpr const char* kPlain = "";

struct Output {
  std::string key;    // JSON key; empty: table only
  std::string label;  // table label; empty: JSON only
  std::variant<double, std::string, bool> value;
  std::string unit = kPlain;
  std::string note = {};  // appended to the table value, e.g. "(compute-bound above)"
  bool whole = false;     // a quantity with a unit (bytes) that JSON carries as an integer
};

struct Report {
  std::string heading;                  // the table's first line (escaped when printed)
  std::vector<Output> outputs;
  nlohmann::json extra = nlohmann::json::object();  // structured JSON-only parts (a timeline, a grid)
  std::string head;                     // printed between the heading and the table (notes; escaped by its maker)
  std::string tail;                     // printed after the table (already formatted, escaped by its maker)
  int label_width = 24;
  int value_width = 0;                  // > 0: values right-aligned in this many columns
  bool compact = false;                 // JSON on one line (an output of millions of numbers)
};

// The one way a JSON document reaches stdout: dumped with invalid UTF-8 replaced (U+FFFD, never a throw),
// then DEL and the C1 controls (U+0080 to U+009F), which JSON allows raw inside strings but a terminal
// obeys, written as \u escapes, so a config path or chip name holding them prints as text. The
// document means the same; stdout holds no control character. indent < 0: one line.
std::string json_text(const nlohmann::json& j, int indent = 2);

// A count as JSON: an integer when it is whole and fits 64 bits, else the number.
nlohmann::json count_json(double v);

// Refuses (std::invalid_argument) any number output that is not finite: "<label> is not a finite number
// for <inputs>", then prints the report as JSON or as a table.
void emit(const Report& r, bool json, const std::string& inputs);

}  // namespace cli
