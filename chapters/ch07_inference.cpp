// Chapter 7: all about Transformer inference (§7.1–7.6 and the chapter-7 exercises). The decode-step model
// of §7.1.5 lives in lib/include/scaling/cost/inference.hpp; this chapter feeds it the book's inputs, once
// with the book's own round constants (to match each printed cell) and once exactly.
#include <cmath>
#include <string>
#include <vector>

#include "exercise.hpp"
#include "scaling/base/format.hpp"
#include "scaling/cost/frontier.hpp"
#include "scaling/cost/inference.hpp"
#include "scaling/cost/inference_sharding.hpp"
#include "scaling/hardware/chip.hpp"
#include "scaling/model/presets.hpp"
#include "scaling/model/transformer.hpp"

using namespace scaling;
using workbook::exact;
using workbook::rel;
using workbook::sig;

static auto& chapter = workbook::define_chapter(7, "ch07", "All About Transformer Inference");

namespace {
const Chip& v5e() { return chip("tpu-v5e"); }
}  // namespace

static const workbook::Finding kQuizTruncated{
    "quiz-truncated", workbook::Severity::rounding, "2.57 ms printed as 2.5 ms",
    "§7.1.5's quiz evaluates (4·819e6 + 30e9)/(16·8.1e11) = 3.328e10/1.296e13 = 2.568e-3 s and prints "
    "2.5 ms: the third digit was cut off rather than rounded (2.6 ms at two digits)."};

EXERCISE("ch7.quiz-30b", "A 30B dense model decoding on a v5e 4x4") {
  ex.section("§7.1.5");
  // The quiz's inputs: 30e9 bytes of int8 weights (30e9 parameters, 2 FLOPs each per token), 100 kB of KV
  // per token, 8192 tokens of context, 16 chips with the quiz's 8.1e11 B/s and 1.97e14 bf16 FLOPs/s.
  DecodeInputs in;
  in.param_bytes = 30e9;
  in.matmul_flops_per_token = 2 * 30e9;
  in.kv_bytes_per_token = 100e3;
  in.chips = 16;
  in.hbm_bytes_per_chip = v5e().hbm_bytes;
  in.hbm_bytes_per_s = v5e().hbm_bytes_per_s;
  in.flops_per_s = v5e().bf16_flops_per_s;
  ex.answer("kv_per_sequence", kv_bytes(in, 1, 8192), "B").book(819e6, sig(3)).explain("100 kB × 8192 tokens");
  const auto s4 = decode_step(in, 4, 8192);
  ex.answer("step_b4", s4.step_s, "s").book(2.5e-3, sig(2)).erratum(kQuizTruncated).explain("memory-bound: (4·819 MB + 30 GB)/(16·8.1e11 B/s)");
  const auto s256 = decode_step(in, 256, 8192);
  ex.answer("step_b256", s256.step_s, "s").book(21e-3, sig(2))
      .explain("KV read plus the MLP's FLOPs, which exceed its weight loading at this batch");
}
