#pragma once
// A chapter's results as a readable walkthrough or as the JSON of DESIGN.md.
#include <nlohmann/json.hpp>
#include <string>

#include "exercise.hpp"

namespace workbook {

std::string to_text(const ChapterResult& chapter);
nlohmann::json to_json(const ChapterResult& chapter);

// Answers whose status is a defect: unexplained disagreement with the book or the notes, or an
// erratum / difference claimed where the values agree. Each entry names the answer.
std::vector<std::string> defects(const ChapterResult& chapter);

}  // namespace workbook
