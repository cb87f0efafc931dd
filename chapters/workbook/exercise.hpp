#pragma once
// An exercise records answers, tables and series; a chapter is a list of exercises registered at
// static-initialisation time by the EXERCISE macro (see registry below).
#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "answer.hpp"
#include "claim.hpp"
#include "formula.hpp"

namespace workbook {

struct Table {
  std::string key;
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
  Table& row(std::vector<std::string> cells);
};

// How a line is drawn: a curve, its points alone (a sampled set, a Pareto set), or both.
enum class Mode { line, points, both };
const char* to_string(Mode m);

struct Line {
  std::string label;
  std::vector<double> x, y;
  Mode mode = Mode::line;
};

// A line plot (figure kind "series").
struct Series {
  std::string key, x_label, y_label;
  std::vector<Line> lines;
  Series& line(std::string label, std::vector<double> x, std::vector<double> y, Mode mode = Mode::line);
};

// Stacked bars (figure kind "bars"): one bar per category, one stack segment per label.
struct Stack {
  std::string label;
  std::vector<double> values;  // one per category
};
struct Bars {
  std::string key, x_label, y_label;
  std::vector<std::string> categories;
  std::vector<Stack> stacks;
  Bars& stack(std::string label, std::vector<double> values);
};

// A 2-D grid of numbers (figure kind "grid"), each cell coloured by its group (e.g. the tile an
// element lands in); rows top to bottom.
struct Grid {
  std::string key, x_label, y_label;
  std::vector<std::vector<double>> values;
  std::vector<std::vector<double>> groups;
};

// A Gantt chart (figure kind "timeline"): one lane per device, bars of kind "compute" or "comm".
struct TimelineBar {
  double start, duration;
  std::string kind, label;
};
struct Lane {
  std::string label;
  std::vector<TimelineBar> bars;
};
struct Timeline {
  std::string key, x_label;
  std::vector<Lane> lanes;
  Timeline& lane(std::string label, std::vector<TimelineBar> bars);
};

class Exercise {
 public:
  Exercise(std::string id, std::string title) : id_(std::move(id)), title_(std::move(title)) {}

  // Where the item sits in the book ("§5.1.4"), shown and linked in the report.
  Exercise& section(std::string where);

  Answer& answer(const std::string& key, double value, const std::string& unit);
  // A formula the book prints: its expression as printed, and the exact computation (formula.hpp).
  Formula& formula(const std::string& key, std::string book_text, Expression book, Expression exact);
  // A quantitative statement in the book's prose, in our words (claim.hpp).
  Claim& claim(const std::string& key, std::string text, double value, std::string unit);
  Table& table(const std::string& key, std::vector<std::string> columns);
  Series& series(const std::string& key, std::string x_label, std::string y_label);
  Bars& bars(const std::string& key, std::string x_label, std::string y_label, std::vector<std::string> categories);
  Grid& grid(const std::string& key, std::string x_label, std::string y_label, std::vector<std::vector<double>> values,
             std::vector<std::vector<double>> groups);
  Timeline& timeline(const std::string& key, std::string x_label);

  const std::string& id() const { return id_; }
  const std::string& title() const { return title_; }
  const std::string& section() const { return section_; }
  // Deques: a reference to a record stays valid while later ones are added.
  const std::deque<Answer>& answers() const { return answers_; }
  const std::deque<Formula>& formulas() const { return formulas_; }
  const std::deque<Claim>& claims() const { return claims_; }
  const std::deque<Table>& tables() const { return tables_; }
  const std::deque<Series>& series() const { return series_; }
  const std::deque<Bars>& bars() const { return bars_; }
  const std::deque<Grid>& grids() const { return grids_; }
  const std::deque<Timeline>& timelines() const { return timelines_; }

 private:
  void claim_key(const std::string& key);
  std::string id_, title_, section_;
  std::vector<std::string> keys_;
  std::deque<Answer> answers_;
  std::deque<Formula> formulas_;
  std::deque<Claim> claims_;
  std::deque<Table> tables_;
  std::deque<Series> series_;
  std::deque<Bars> bars_;
  std::deque<Grid> grids_;
  std::deque<Timeline> timelines_;
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
