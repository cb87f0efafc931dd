// Chapter 12, "How to Think About GPUs" (the book's current edition; see ../shared/sources/README.md).
// This file is a placeholder that declares the chapter so that its parts in chapters/ch12/ build; the
// hardware sections (§12.1–§12.3, Appendix A) live in helper ch12a's version of this file, which replaces it.
#include "exercise.hpp"

static auto& chapter = workbook::define_chapter(12, "ch12", "How to Think About GPUs");
