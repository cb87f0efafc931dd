#pragma once
// A chapter's results as a readable walkthrough or as the JSON of DESIGN.md.
#include <string>
#include <vector>

#include "exercise.hpp"

namespace workbook {

std::string to_text(const ChapterResult& chapter);
// The JSON of DESIGN.md, as text (the JSON library stays out of this header: it is slow to compile).
std::string to_json(const ChapterResult& chapter);

// Answers whose status is a defect: unexplained disagreement with the book or the notes, or an
// erratum / difference claimed where the values agree. Each entry names the answer.
std::vector<std::string> defects(const ChapterResult& chapter);

}  // namespace workbook
