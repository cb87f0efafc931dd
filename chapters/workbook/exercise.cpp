#include "exercise.hpp"

#include <algorithm>
#include <stdexcept>

namespace workbook {

Table& Table::row(std::vector<std::string> cells) {
  if (cells.size() != columns.size())
    throw std::logic_error("table " + key + ": row has " + std::to_string(cells.size()) + " cells, expected " +
                           std::to_string(columns.size()));
  rows.push_back(std::move(cells));
  return *this;
}

Series& Series::line(std::string label, std::vector<double> x, std::vector<double> y) {
  if (x.size() != y.size()) throw std::logic_error("series " + key + ": x and y differ in length");
  lines.push_back({std::move(label), std::move(x), std::move(y)});
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
