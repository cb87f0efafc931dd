#include "output.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "scaling/base/format.hpp"

namespace workbook {

using scaling::format_quantity;

std::string to_text(const ChapterResult& chapter) {
  std::string out = fmt::format("Chapter {}: {}\n", chapter.def->number, chapter.def->title);
  for (const auto& ex : chapter.exercises) {
    out += fmt::format("\n{}  {}\n", ex.id(), ex.title());
    for (const auto& a : ex.answers()) {
      out += fmt::format("  {:<28} {}\n", a.key(), format_quantity(a.value(), a.unit()));
      if (a.book_value())
        out += fmt::format("  {:<28}   book {} ({}): {}\n", "", format_quantity(*a.book_value(), a.unit()),
                           a.book_tolerance().describe(), to_string(a.book_status()));
      else
        out += fmt::format("  {:<28}   book: none printed; checked independently in tests/\n", "");
      if (!a.erratum_reason().empty()) out += fmt::format("  {:<28}   why: {}\n", "", a.erratum_reason());
      for (const auto& n : a.notes()) {
        out += fmt::format("  {:<28}   notes {}: {} ({})\n", "", n.source, format_quantity(n.value, a.unit()),
                           to_string(n.status()));
        if (!n.reason.empty()) out += fmt::format("  {:<28}   why: {}\n", "", n.reason);
      }
      if (!a.explanation().empty()) out += fmt::format("  {:<28}   ({})\n", "", a.explanation());
    }
    for (const auto& t : ex.tables()) {
      out += fmt::format("  table {}\n", t.key);
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
    }
    for (const auto& s : ex.series()) {
      out += fmt::format("  series {} ({} vs {}):", s.key, s.y_label, s.x_label);
      for (const auto& l : s.lines) out += fmt::format(" '{}' {} points;", l.label, l.x.size());
      out += " (plotted in the report)\n";
    }
  }
  return out;
}

std::string to_json(const ChapterResult& chapter) {
  using nlohmann::json;
  json exercises = json::array();
  for (const auto& ex : chapter.exercises) {
    json answers = json::array();
    for (const auto& a : ex.answers()) {
      json entry = {{"key", a.key()}, {"value", a.value()}, {"unit", a.unit()}};
      if (a.book_value())
        entry["book"] = {{"value", *a.book_value()},
                         {"tol", a.book_tolerance().relative_to(*a.book_value())},
                         {"status", to_string(a.book_status())}};
      json notes = json::array();
      for (const auto& n : a.notes()) {
        json note = {{"source", n.source}, {"value", n.value}, {"status", to_string(n.status())}};
        if (!n.reason.empty()) note["reason"] = n.reason;
        notes.push_back(note);
      }
      entry["notes"] = notes;
      entry["explanation"] = a.erratum_reason().empty() ? a.explanation() : a.erratum_reason();
      answers.push_back(entry);
    }
    json tables = json::array();
    for (const auto& t : ex.tables()) tables.push_back({{"key", t.key}, {"columns", t.columns}, {"rows", t.rows}});
    json series = json::array();
    for (const auto& s : ex.series()) {
      json lines = json::array();
      for (const auto& l : s.lines) lines.push_back({{"label", l.label}, {"x", l.x}, {"y", l.y}});
      series.push_back({{"key", s.key}, {"x_label", s.x_label}, {"y_label", s.y_label}, {"lines", lines}});
    }
    exercises.push_back({{"id", ex.id()},
                         {"title", ex.title()},
                         {"answers", answers},
                         {"tables", tables},
                         {"series", series}});
  }
  const json doc = {{"chapter", chapter.def->number},
                    {"slug", chapter.def->slug},
                    {"title", chapter.def->title},
                    {"exercises", exercises}};
  return doc.dump(1);
}

std::vector<std::string> defects(const ChapterResult& chapter) {
  std::vector<std::string> out;
  for (const auto& ex : chapter.exercises)
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
  return out;
}

}  // namespace workbook
