#include "output.hpp"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <utility>
#include <nlohmann/json.hpp>

#include "scaling/base/format.hpp"

namespace workbook {

using scaling::format_quantity;

namespace {

std::string text_table(const Table& t) {
  std::string out = fmt::format("  table {}\n", t.key);
  std::vector<size_t> width(t.columns.size());
  for (size_t c = 0; c < t.columns.size(); ++c) {
    width[c] = t.columns[c].size();
    for (const auto& r : t.rows) width[c] = std::max(width[c], r[c].size());
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string s = "    ";
    for (size_t c = 0; c < cells.size(); ++c) s += fmt::format("{:<{}}  ", cells[c], width[c]);
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s + "\n";
  };
  out += line(t.columns);
  for (const auto& r : t.rows) out += line(r);
  return out;
}

// A formula's input or value at one point: with its unit where the formula names one, else a plain number, from a
// million up in scientific notation ("1.97e14", not "197,000,000,000,000"), as the answers print theirs.
std::string formula_quantity(double v, const std::string& unit, int digits = 3) {
  if (!unit.empty()) return format_quantity(v, unit, digits);
  return std::fabs(v) >= 1e6 ? scaling::format_alike({v}, "", digits).front() : scaling::format_number(v, digits + 1);
}

// The book's expression and the exact value at one point, as text: where they differ, with as many digits as it
// takes for the two texts to differ too (a slip in the fifth digit is not printed as two equal numbers).
std::pair<std::string, std::string> formula_point_texts(const Formula& f, const FormulaPoint& p) {
  for (int digits = 3;; ++digits) {
    std::string book = formula_quantity(p.book, f.unit(), digits), exact = formula_quantity(p.exact, f.unit(), digits);
    if (p.agrees || book != exact || digits >= 16) return {book, exact};
  }
}

std::string inputs_text(const Formula& f, const Inputs& in) {
  std::string s;
  for (const auto& [k, v] : in) s += (s.empty() ? "" : ", ") + k + " = " + formula_quantity(v, f.input_unit(k));
  return s;
}

// An answer's value as text: its unit's usual prefixes, or binary ones where the answer asks (binary_prefixes()).
std::string answer_quantity(const Answer& a, double v) {
  return a.shows_binary_prefixes() ? scaling::format_binary_bytes(v) : format_quantity(v, a.unit());
}

}  // namespace

std::string to_text(const ChapterResult& chapter) {
  std::string out = fmt::format("Chapter {}: {}\n", chapter.def->number, chapter.def->title);
  for (const auto& ex : chapter.exercises) {
    out += fmt::format("\n{}  {}{}\n", ex.id(), ex.title(), ex.section().empty() ? "" : "  (" + ex.section() + ")");
    for (const auto& a : ex.answers()) {
      out += fmt::format("  {:<28} {}\n", a.key(), answer_quantity(a, a.value()));
      if (a.book_value())
        out += fmt::format("  {:<28}   book {} ({}): {}\n", "", answer_quantity(a, *a.book_value()),
                           a.book_tolerance().describe(), to_string(a.book_status()));
      else
        out += fmt::format("  {:<28}   book: none printed; checked independently in tests/\n", "");
      if (a.derived_value())
        out += fmt::format("  {:<28}   from the book's formula {}: {}\n", "", a.derived_value()->formula,
                           answer_quantity(a, a.derived_value()->value));
      if (a.measured_value())
        out += fmt::format("  {:<28}   measured ({}): {}; the gap: {}\n", "", a.measured_value()->source,
                           answer_quantity(a, a.measured_value()->value), a.measured_value()->gap);
      if (a.stated())
        out += fmt::format("  {:<28}   from the book's stated input {}: {}\n", "", a.stated()->input,
                           answer_quantity(a, a.stated()->from_stated));
      if (a.reproduction())
        out += fmt::format("  {:<28}   the book's number, reproduced ({}): {}\n", "", a.reproduction()->how,
                           answer_quantity(a, a.reproduction()->value));
      if (a.inputs_give())
        out += fmt::format("  {:<28}   the book's own inputs give ({}): {}\n", "", a.inputs_give()->how,
                           answer_quantity(a, a.inputs_give()->value));
      if (!a.erratum_reason().empty()) out += fmt::format("  {:<28}   why: {}\n", "", a.erratum_reason());
      for (const auto& n : a.notes()) {
        out += fmt::format("  {:<28}   notes {}: {} ({})\n", "", n.source, answer_quantity(a, n.value),
                           to_string(n.status()));
        if (!n.reason.empty()) out += fmt::format("  {:<28}   why: {}\n", "", n.reason);
      }
      if (!a.explanation().empty()) out += fmt::format("  {:<28}   ({})\n", "", a.explanation());
    }
    for (const auto& f : ex.formulas()) {
      out += fmt::format("  formula {}: {}  — {}\n", f.key(), f.book_text(), to_string(f.status()));
      for (const auto& p : f.points())
        out += fmt::format("    at {}: book's expression {}, exact {}{}\n", inputs_text(f, p.inputs),
                           formula_point_texts(f, p).first, formula_point_texts(f, p).second,
                           p.agrees ? "" : "  (differs)");
      if (!f.reason().empty()) out += fmt::format("    why: {}\n", f.reason());
      if (f.status() == FormulaStatus::approximation) out += fmt::format("    ({})\n", f.tolerance().reason);
    }
    for (const auto& c : ex.claims()) {
      out += fmt::format("  claim {}: {}\n    ours {}; the wording says {} — {}\n", c.key(), c.text(),
                         format_quantity(c.value(), c.unit()), c.describe(), to_string(c.status()));
      if (!c.reason().empty()) out += fmt::format("    why: {}\n", c.reason());
    }
    for (const auto& t : ex.tables()) out += text_table(t);
    auto figure = [&](const char* kind, const std::string& key) {
      out += fmt::format("  {} {} (drawn in the report)\n", kind, key);
    };
    for (const auto& s : ex.series()) {
      out += fmt::format("  series {} ({} vs {}):", s.key, s.y_label, s.x_label);
      for (const auto& l : s.lines) out += fmt::format(" '{}' {} points;", l.label, l.x.size());
      out += " (plotted in the report)\n";
    }
    for (const auto& b : ex.bars()) figure("bars", b.key);
    for (const auto& g : ex.grids()) figure("grid", g.key);
    for (const auto& t : ex.timelines()) figure("timeline", t.key);
  }
  return out;
}

namespace {
using nlohmann::json;

// The report prints these texts as they are: every number is formatted once, here (scaling/base/format).
// A tolerance as the card shows it: "exact", or "±0.21 %" of the printed value.
std::string tolerance_text(double relative, const std::string& rule) {
  if (relative <= 1e-9 || rule == "exact") return "exact";
  return "±" + scaling::format_number(relative * 100, 2) + " %";
}

// How far the book's value is from ours, as a signed percentage ("+1.3 %", "−0.52 %"); "—" when ours is 0.
std::string off_text(double book, double ours) {
  if (ours == 0 || book == ours) return "—";
  const double pct = (book - ours) / ours * 100;
  return (pct > 0 ? "+" : "−") + scaling::format_number(std::fabs(pct), 2) + " %";
}

// The chapter JSON's schema (DESIGN.md) knows two verdicts on a printed value, agrees and erratum, and the
// shared catalog tool checks that: an approximation is on the agrees side of that line (it is no erratum, by
// the policy) and is marked `"approximation": true` beside its status.
std::string json_status(BookStatus s) {
  return s == BookStatus::approximation ? to_string(BookStatus::agrees) : to_string(s);
}

json finding_json(const Finding& f) {
  return {{"id", f.id}, {"severity", to_string(f.severity)}, {"title", f.title}, {"reason", f.reason}};
}

json erratum_json(const std::optional<Finding>& f, const std::string& reason, const std::string& fallback_id) {
  return {{"finding", f ? f->id : fallback_id},
          {"severity", f ? to_string(f->severity) : "unclassified"},
          {"reason", reason}};
}
}  // namespace

std::string to_json(const ChapterResult& chapter) {
  json exercises = json::array();
  // Findings in order of first appearance, each with every record it explains.
  std::vector<std::string> finding_order;
  std::map<std::string, json> findings;
  auto note_finding = [&](const std::optional<Finding>& f, const std::string& name, const std::string& reason) {
    const std::string id = f ? f->id : name;
    if (!findings.count(id)) {
      findings[id] = f ? finding_json(*f)
                       : json{{"id", id}, {"severity", "unclassified"}, {"title", ""}, {"reason", reason}};
      findings[id]["answers"] = json::array();
      finding_order.push_back(id);
    }
    findings[id]["answers"].push_back(name);
  };

  for (const auto& ex : chapter.exercises) {
    json answers = json::array();
    for (const auto& a : ex.answers()) {
      const std::string name = ex.id() + "." + a.key();
      const auto text = [&](double v) { return answer_quantity(a, v); };
      json entry = {{"key", a.key()}, {"value", a.value()}, {"unit", a.unit()},
                    {"value_text", text(a.value())}, {"number_text", scaling::format_number(a.value())}};
      // A fraction as a reader says it ({{ID.KEY:percent}}: "9.73 %" for 0.09733).
      if (a.unit().empty()) entry["percent_text"] = scaling::format_number(100 * a.value(), 3) + " %";
      if (a.book_value()) {
        const double tol = a.book_tolerance().relative_to(*a.book_value());
        const std::string rule = tolerance_rule(*a.book_value(), a.book_tolerance());
        // Agreeing as the print truncated, ours lies outside the rounding band: the card says so instead of
        // showing a ± band the value is not in (the errata policy counts truncation as agreement).
        const bool truncated = a.agrees_by_truncation();
        const int digits = printed_digits(*a.book_value());
        entry["book"] = {{"value", *a.book_value()},
                         {"tol", tol},
                         {"tol_rule", truncated ? fmt::format("truncated to its {} printed significant digit{}: ours "
                                                              "lies between the print and one unit above in its "
                                                              "last place", digits, digits == 1 ? "" : "s")
                                                : rule},
                         {"status", json_status(a.book_status())},
                         {"value_text", text(*a.book_value())},
                         {"tol_text", truncated ? std::string("truncated") : tolerance_text(tol, rule)},
                         {"off_text", off_text(*a.book_value(), a.value())}};
        if (a.book_status() == BookStatus::approximation) entry["book"]["approximation"] = true;
        // An erratum's size is the print against what the book's own inputs give, when they are recorded: the
        // rest of the gap to the exact value comes from those stated inputs (an approximation), not the slip.
        if (a.inputs_give())
          entry["book"]["off_text"] = off_text(*a.book_value(), a.inputs_give()->value) + " vs its own inputs' " +
                                      text(a.inputs_give()->value);
      }
      if (a.measured_value())
        entry["measured"] = {{"value", a.measured_value()->value},
                             {"source", a.measured_value()->source},
                             {"gap", a.measured_value()->gap},
                             {"value_text", text(a.measured_value()->value)}};
      if (a.stated())
        entry["stated_input"] = {{"input", a.stated()->input}, {"value", a.stated()->from_stated},
                                 {"value_text", text(a.stated()->from_stated)}};
      if (a.reproduction())
        entry["reproduction"] = {{"value", a.reproduction()->value}, {"how", a.reproduction()->how},
                                 {"value_text", text(a.reproduction()->value)}};
      if (a.inputs_give())
        entry["book_inputs_give"] = {{"value", a.inputs_give()->value}, {"how", a.inputs_give()->how},
                                     {"value_text", text(a.inputs_give()->value)}};
      if (a.derived_value())
        entry["derived"] = {{"value", a.derived_value()->value}, {"formula", a.derived_value()->formula},
                            {"value_text", text(a.derived_value()->value)}};
      if (a.book_status() == BookStatus::erratum) {
        entry["erratum"] = erratum_json(a.finding(), a.erratum_reason(), name);
        note_finding(a.finding(), name, a.erratum_reason());
      }
      json notes = json::array();
      for (const auto& n : a.notes()) {
        const double tol = n.tolerance.relative_to(n.value);
        const std::string rule = tolerance_rule(n.value, n.tolerance);
        json note = {{"source", n.source}, {"value", n.value}, {"status", to_string(n.status())},
                     {"tol", tol}, {"tol_rule", rule}, {"value_text", text(n.value)},
                     {"tol_text", tolerance_text(tol, rule)}};
        if (!n.reason.empty()) note["reason"] = n.reason;
        notes.push_back(note);
      }
      entry["notes"] = notes;
      entry["explanation"] = a.erratum_reason().empty() ? a.explanation() : a.erratum_reason();
      answers.push_back(entry);
    }
    json formulas = json::array();
    for (const auto& f : ex.formulas()) {
      const std::string name = ex.id() + "." + f.key();
      json points = json::array();
      for (const auto& p : f.points()) {
        json inputs_text = json::object();
        for (const auto& [k, v] : p.inputs) inputs_text[k] = formula_quantity(v, f.input_unit(k));
        const auto [book_text, exact_text] = formula_point_texts(f, p);
        points.push_back({{"inputs", p.inputs}, {"book", p.book}, {"exact", p.exact}, {"agrees", p.agrees},
                          {"inputs_text", inputs_text}, {"book_text", book_text},
                          {"exact_text", exact_text}});
      }
      json entry = {{"key", f.key()},
                    {"book_text", f.book_text()},
                    {"exact_text", f.exact_text()},
                    {"points", points},
                    {"status", to_string(f.status())},
                    {"tol", f.tolerance().relative_to(1)},
                    {"tol_rule", tolerance_rule(1, f.tolerance())},
                    {"reason", f.reason()},
                    {"explanation", f.explanation()}};
      if (f.finding()) {
        entry["finding"] = f.finding()->id;
        entry["severity"] = to_string(f.finding()->severity);
        if (f.status() == FormulaStatus::erratum) note_finding(f.finding(), name, f.reason());
      }
      formulas.push_back(entry);
    }
    json claims = json::array();
    for (const auto& c : ex.claims()) {
      const std::string name = ex.id() + "." + c.key();
      const auto claim_texts = scaling::format_alike(
          c.relation() == Relation::between ? std::vector<double>{c.value(), c.bound(), c.bound_high()}
                                            : std::vector<double>{c.value(), c.bound()},
          c.unit());
      json entry = {{"key", c.key()},
                    {"text", c.text()},
                    {"value", c.value()},
                    {"unit", c.unit()},
                    {"relation", c.relation() ? to_string(*c.relation()) : "none"},
                    {"bound", c.bound()},
                    {"describe", c.describe()},
                    // The value and the bound its wording asks, in one style (format_alike).
                    {"value_text", claim_texts[0]},
                    {"bound_text", claim_texts[1]},
                    {"status", to_string(c.status())},
                    {"reason", c.reason()},
                    {"explanation", c.explanation()}};
      if (c.relation() == Relation::between) {
        entry["bound_high"] = c.bound_high();
        entry["bound_high_text"] = claim_texts[2];
      }
      if (c.relation() == Relation::about) {
        entry["tol"] = c.tolerance().relative_to(c.bound());
        entry["tol_rule"] = tolerance_rule(c.bound(), c.tolerance());
        entry["tol_text"] = tolerance_text(entry["tol"].get<double>(), entry["tol_rule"].get<std::string>());
      }
      if (c.finding()) {
        entry["finding"] = c.finding()->id;
        entry["severity"] = to_string(c.finding()->severity);
        if (c.status() == ClaimStatus::erratum) note_finding(c.finding(), name, c.reason());
      }
      claims.push_back(entry);
    }
    json tables = json::array();
    for (const auto& t : ex.tables()) tables.push_back({{"key", t.key}, {"columns", t.columns}, {"rows", t.rows}});
    json series = json::array();
    for (const auto& s : ex.series()) {
      json lines = json::array();
      for (const auto& l : s.lines)
        lines.push_back({{"label", l.label}, {"x", l.x}, {"y", l.y}, {"mode", to_string(l.mode)}});
      series.push_back({{"key", s.key}, {"x_label", s.x_label}, {"y_label", s.y_label}, {"lines", lines}});
    }
    json bars = json::array();
    for (const auto& b : ex.bars()) {
      json stacks = json::array();
      for (const auto& st : b.stacks) stacks.push_back({{"label", st.label}, {"values", st.values}});
      bars.push_back({{"key", b.key}, {"x_label", b.x_label}, {"y_label", b.y_label}, {"categories", b.categories},
                      {"stacks", stacks}});
    }
    json grids = json::array();
    for (const auto& g : ex.grids())
    {
      json values_text = json::array();
      for (const auto& row : g.values) {
        json r = json::array();
        for (const double v : row) r.push_back(scaling::format_number(v));
        values_text.push_back(r);
      }
      grids.push_back({{"key", g.key}, {"x_label", g.x_label}, {"y_label", g.y_label}, {"values", g.values},
                       {"values_text", values_text}, {"groups", g.groups}});
    }
    json timelines = json::array();
    for (const auto& t : ex.timelines()) {
      json lanes = json::array();
      for (const auto& l : t.lanes) {
        json bs = json::array();
        for (const auto& b : l.bars)
          bs.push_back({{"start", b.start}, {"duration", b.duration}, {"kind", b.kind}, {"label", b.label}});
        lanes.push_back({{"label", l.label}, {"bars", bs}});
      }
      timelines.push_back({{"key", t.key}, {"x_label", t.x_label}, {"lanes", lanes}});
    }
    exercises.push_back({{"id", ex.id()},
                         {"title", ex.title()},
                         {"section", ex.section()},
                         {"answers", answers},
                         {"formulas", formulas},
                         {"claims", claims},
                         {"tables", tables},
                         {"series", series},
                         {"bars", bars},
                         {"grids", grids},
                         {"timelines", timelines}});
  }
  json finding_list = json::array();
  for (const auto& id : finding_order) finding_list.push_back(findings[id]);
  const json doc = {{"chapter", chapter.def->number},
                    {"slug", chapter.def->slug},
                    {"title", chapter.def->title},
                    {"exercises", exercises},
                    {"findings", finding_list}};
  return doc.dump(1);
}

std::vector<std::string> defects(const ChapterResult& chapter) {
  std::vector<std::string> out;
  for (const auto& ex : chapter.exercises) {
    for (const auto& a : ex.answers()) {
      const std::string name = ex.id() + "." + a.key();
      const auto s = a.book_status();
      if (s == BookStatus::unexplained || s == BookStatus::false_erratum) out.push_back(name + ": book " + to_string(s));
      for (const auto& n : a.notes()) {
        const auto ns = n.status();
        if (ns == NoteStatus::unexplained || ns == NoteStatus::false_difference)
          out.push_back(name + ": notes " + n.source + " " + to_string(ns));
      }
    }
    for (const auto& f : ex.formulas()) {
      const auto s = f.status();
      if (s == FormulaStatus::unexplained || s == FormulaStatus::false_erratum || s == FormulaStatus::incomplete)
        out.push_back(ex.id() + "." + f.key() + ": formula " + to_string(s));
    }
    for (const auto& c : ex.claims()) {
      const auto s = c.status();
      if (s == ClaimStatus::unexplained || s == ClaimStatus::false_erratum || s == ClaimStatus::incomplete)
        out.push_back(ex.id() + "." + c.key() + ": claim " + to_string(s));
    }
  }
  return out;
}

}  // namespace workbook
