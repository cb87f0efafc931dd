#pragma once
// An exercise records answers, tables and series; a chapter is a list of exercises registered at
// static-initialisation time by the EXERCISE macro (see registry below).
#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "answer.hpp"

namespace workbook {

struct Table {
  std::string key;
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
  Table& row(std::vector<std::string> cells);
};

struct Line {
  std::string label;
  std::vector<double> x, y;
};

struct Series {
  std::string key, x_label, y_label;
  std::vector<Line> lines;
  Series& line(std::string label, std::vector<double> x, std::vector<double> y);
};

class Exercise {
 public:
  Exercise(std::string id, std::string title) : id_(std::move(id)), title_(std::move(title)) {}

  Answer& answer(const std::string& key, double value, const std::string& unit);
  Table& table(const std::string& key, std::vector<std::string> columns);
  Series& series(const std::string& key, std::string x_label, std::string y_label);

  const std::string& id() const { return id_; }
  const std::string& title() const { return title_; }
  const std::vector<Answer>& answers() const { return answers_; }
  const std::vector<Table>& tables() const { return tables_; }
  const std::vector<Series>& series() const { return series_; }

 private:
  void claim_key(const std::string& key);
  std::string id_, title_;
  std::vector<std::string> keys_;
  std::vector<Answer> answers_;
  std::vector<Table> tables_;
  std::vector<Series> series_;
};

using ExerciseFn = std::function<void(Exercise&)>;

struct ExerciseDef {
  std::string id, title;
  ExerciseFn fn;
};

struct ChapterDef {
  std::string slug;  // "ch01"; also the JSON file name
  int number;
  std::string title;
  std::vector<ExerciseDef> exercises;
};

// All chapters linked into this program, in order of registration.
std::deque<ChapterDef>& chapters();  // a deque: references stay valid as chapters are added
ChapterDef& define_chapter(int number, std::string slug, std::string title);

struct ChapterResult {
  const ChapterDef* def;
  std::vector<Exercise> exercises;
};
ChapterResult run(const ChapterDef& chapter);

struct Registrar {
  Registrar(ChapterDef& chapter, std::string id, std::string title, ExerciseFn fn);
};

}  // namespace workbook

#define WORKBOOK_CAT2(a, b) a##b
#define WORKBOOK_CAT(a, b) WORKBOOK_CAT2(a, b)
// In a chapter source, after `static auto& chapter = workbook::define_chapter(...)`:
//   EXERCISE("ex1.1", "int8 matmul roofline") { ex.answer(...); }
#define EXERCISE(id, title)                                                                              \
  static void WORKBOOK_CAT(exercise_, __LINE__)(workbook::Exercise & ex);                               \
  static const workbook::Registrar WORKBOOK_CAT(registrar_, __LINE__){chapter, id, title,                \
                                                                      &WORKBOOK_CAT(exercise_, __LINE__)}; \
  static void WORKBOOK_CAT(exercise_, __LINE__)(workbook::Exercise & ex)
