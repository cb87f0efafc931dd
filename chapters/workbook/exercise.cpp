#include "exercise.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace workbook {

Table& Table::row(std::vector<std::string> cells) {
  if (cells.size() != columns.size())
    throw std::logic_error("table " + key + ": row has " + std::to_string(cells.size()) + " cells, expected " +
                           std::to_string(columns.size()));
  rows.push_back(std::move(cells));
  return *this;
}

namespace {
// Figures go to JSON, where a NaN or an infinity would become null: refuse them where they are made.
void require_finite(const std::vector<double>& v, const std::string& what) {
  for (double x : v)
    if (!std::isfinite(x)) throw std::logic_error(what + ": a value is not finite");
}
}  // namespace

const char* to_string(Mode m) {
  switch (m) {
    case Mode::line: return "line";
    case Mode::points: return "points";
    case Mode::both: return "both";
  }
  return "line";
}

Series& Series::line(std::string label, std::vector<double> x, std::vector<double> y, Mode mode) {
  if (x.size() != y.size()) throw std::logic_error("series " + key + ": x and y differ in length");
  require_finite(x, "series " + key);
  require_finite(y, "series " + key);
  lines.push_back({std::move(label), std::move(x), std::move(y), mode});
  return *this;
}

Bars& Bars::stack(std::string label, std::vector<double> values) {
  if (values.size() != categories.size())
    throw std::logic_error("bars " + key + ": stack '" + label + "' has " + std::to_string(values.size()) +
                           " values for " + std::to_string(categories.size()) + " categories");
  require_finite(values, "bars " + key);
  stacks.push_back({std::move(label), std::move(values)});
  return *this;
}

Timeline& Timeline::lane(std::string label, std::vector<TimelineBar> bars) {
  for (const auto& b : bars)
    if (!std::isfinite(b.start) || !std::isfinite(b.duration) || b.duration < 0)
      throw std::logic_error("timeline " + key + ": a bar with a non-finite start or a negative duration");
  lanes.push_back({std::move(label), std::move(bars)});
  return *this;
}

void Exercise::claim_key(const std::string& key) {
  auto allowed = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-'; };
  const bool valid = !key.empty() && key[0] != '_' && key[0] != '-' && std::all_of(key.begin(), key.end(), allowed);
  if (!valid)
    throw std::logic_error(id_ + ": key '" + key + "' must be lower-case letters, digits, '_' or '-'");
  if (std::find(keys_.begin(), keys_.end(), key) != keys_.end())
    throw std::logic_error(id_ + ": key '" + key + "' registered twice");
  keys_.push_back(key);
}

Answer& Exercise::answer(const std::string& key, double value, const std::string& unit) {
  claim_key(key);
  answers_.emplace_back(key, value, unit);
  return answers_.back();
}

Exercise& Exercise::section(std::string where) {
  section_ = std::move(where);
  return *this;
}

Formula& Exercise::formula(const std::string& key, std::string book_text, Expression book, Expression exact) {
  claim_key(key);
  formulas_.emplace_back(key, std::move(book_text), std::move(book), std::move(exact));
  return formulas_.back();
}

Claim& Exercise::claim(const std::string& key, std::string text, double value, std::string unit) {
  claim_key(key);
  claims_.emplace_back(key, std::move(text), value, std::move(unit));
  return claims_.back();
}

Bars& Exercise::bars(const std::string& key, std::string x_label, std::string y_label,
                     std::vector<std::string> categories) {
  claim_key(key);
  bars_.push_back({key, std::move(x_label), std::move(y_label), std::move(categories), {}});
  return bars_.back();
}

Grid& Exercise::grid(const std::string& key, std::string x_label, std::string y_label,
                     std::vector<std::vector<double>> values, std::vector<std::vector<double>> groups) {
  claim_key(key);
  if (values.size() != groups.size()) throw std::logic_error("grid " + key + ": values and groups differ in rows");
  for (size_t r = 0; r < values.size(); ++r) {
    if (values[r].size() != groups[r].size() || values[r].size() != values[0].size())
      throw std::logic_error("grid " + key + ": rows differ in length");
    require_finite(values[r], "grid " + key);
    require_finite(groups[r], "grid " + key);
  }
  grids_.push_back({key, std::move(x_label), std::move(y_label), std::move(values), std::move(groups)});
  return grids_.back();
}

Timeline& Exercise::timeline(const std::string& key, std::string x_label) {
  claim_key(key);
  timelines_.push_back({key, std::move(x_label), {}});
  return timelines_.back();
}

Table& Exercise::table(const std::string& key, std::vector<std::string> columns) {
  claim_key(key);
  tables_.push_back({key, std::move(columns), {}});
  return tables_.back();
}

Series& Exercise::series(const std::string& key, std::string x_label, std::string y_label) {
  claim_key(key);
  series_.push_back({key, std::move(x_label), std::move(y_label), {}});
  return series_.back();
}

std::deque<ChapterDef>& chapters() {
  static std::deque<ChapterDef> all;
  return all;
}

ChapterDef& define_chapter(int number, std::string slug, std::string title) {
  auto& all = chapters();
  // A chapter split into parts (chapters/chNN/*.cpp) is declared once per part: the same chapter.
  for (auto& ch : all)
    if (ch.slug == slug) {
      if (ch.number != number || ch.title != title)
        throw std::logic_error("chapter " + slug + " declared twice with different numbers or titles");
      return ch;
    }
  all.push_back({std::move(slug), number, std::move(title), {}});
  return all.back();
}

Registrar::Registrar(ChapterDef& chapter, std::string id, std::string title, ExerciseFn fn) {
  for (const auto& ch : chapters())
    for (const auto& e : ch.exercises)
      if (e.id == id) throw std::logic_error("exercise " + id + " registered twice");
  chapter.exercises.push_back({std::move(id), std::move(title), std::move(fn)});
}

ChapterResult run(const ChapterDef& chapter) {
  ChapterResult result{&chapter, {}};
  for (const auto& def : chapter.exercises) {
    Exercise ex(def.id, def.title);
    def.fn(ex);
    result.exercises.push_back(std::move(ex));
  }
  return result;
}

}  // namespace workbook
