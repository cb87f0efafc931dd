// Chapter 7, a second reading for slips (issue 18): §7.1.3's displayed intensity of a bf16 matmul, whose
// denominator loses a factor in the line that simplifies it.
#include <string>

#include "exercise.hpp"
#include "scaling/cost/roofline.hpp"

using namespace scaling;
using workbook::Finding;
using workbook::in;
using workbook::Inputs;
using workbook::Severity;

static auto& chapter = workbook::define_chapter(7, "ch07", "All About Transformer Inference");

namespace {
const Finding kBfFactor{
    "intensity-denominator-bf", Severity::slip,
    "§7.1.3: the intensity's denominator restated as 2BD + 2DF + BF",
    "§7.1.3 counts the bytes of a bf16[B, D] · bf16[D, F] matmul as 2BD + 2FD + 2BF (both operands read, the "
    "bf16[B, F] result written) and requires 2BDF / (2BD + 2DF + 2BF) ≥ 240. The display that simplifies it "
    "restates the left side as 2BDF / (2BD + 2DF + BF): the output's term has lost its factor 2 (2 bytes per "
    "element). A slip in the display: its next step approximates the whole denominator by 2DF, which drops "
    "that term anyway, so B ≥ 240 stands."};
}  // namespace

EXERCISE("ch7.intensity-denominator", "The intensity of a bf16 matmul as §7.1.3 restates it") {
  ex.section("§7.1.3");
  ex.formula("restated_intensity", "2BDF / (2BD + 2DF + BF)",
             [](const Inputs& v) {
               const double B = in(v, "B"), D = in(v, "D"), F = in(v, "F");
               return 2 * B * D * F / (2 * B * D + 2 * D * F + B * F);
             },
             [](const Inputs& v) { return intensity(Matmul{in(v, "B"), in(v, "D"), in(v, "F")}); })
      .exact_text("2BDF / (2BD + 2DF + 2BF): every operand and the result 2 bytes per element")
      // B = 240, the critical batch the display derives, with §7.6.1's layer (D = 8192, F = 32768); then a
      // small batch on a smaller layer.
      .at({{"B", 240}, {"D", 8192}, {"F", 32768}})
      .at({{"B", 64}, {"D", 4096}, {"F", 16384}})
      .erratum(kBfFactor, "The restated denominator is short by B·F bytes.")
      .explain("FLOPs over bytes of one bf16 matmul; the library counts the bytes as read and written");
}
