// Library unit tests: hand-worked cases, limits and symmetries, rejected input.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

#include "scaling/hardware/dtype.hpp"
#include "scaling/base/format.hpp"
#include "scaling/hardware/chip.hpp"
#include "scaling/cost/roofline.hpp"

using namespace scaling;
using doctest::Approx;

TEST_CASE("dtype sizes and parsing") {
  CHECK(bytes_per_element(Dtype::fp32) == 4);
  CHECK(bytes_per_element(Dtype::bf16) == 2);
  CHECK(bytes_per_element(Dtype::fp8) == 1);
  CHECK(bytes_per_element(Dtype::int8) == 1);
  CHECK(bytes_per_element(Dtype::int4) == 0.5);
  CHECK(parse_dtype("int8") == Dtype::int8);
  CHECK_THROWS_WITH_AS(parse_dtype("bfloat17"), doctest::Contains("'bfloat17': expected fp32, bf16"), std::invalid_argument);
}

TEST_CASE("chip presets carry the §2.3 table values") {
  const auto& v5e = chip("tpu-v5e");
  CHECK(v5e.bf16_flops_per_s == 1.97e14);
  CHECK(v5e.int8_flops_per_s == 3.94e14);
  CHECK(v5e.hbm_bytes_per_s == 8.1e11);
  CHECK(v5e.ici_bidi_bytes_per_s == 2 * v5e.ici_oneway_bytes_per_s);
  CHECK(chips_in(v5e.pod_shape) == 256);
  CHECK(chips_in(chip("tpu-v5p").pod_shape) == 8960);
  CHECK(shape_text(chip("tpu-v5p").pod_shape) == "16x20x28");
  CHECK(chip("h100").bf16_flops_per_s == 9.89e14);
  for (const auto& c : chips()) {
    INFO(c.name);
    CHECK(c.bf16_flops_per_s > 0);
    CHECK(c.hbm_bytes_per_s > 0);
    CHECK(!c.source.empty());
    if (!c.pod_shape.empty()) CHECK(c.ici_bidi_bytes_per_s == 2 * c.ici_oneway_bytes_per_s);
  }
  CHECK_THROWS_WITH_AS(chip("tpu-v9"), doctest::Contains("unknown chip 'tpu-v9'"), std::invalid_argument);
  CHECK(peak_flops_per_s(v5e, Dtype::int8) == 3.94e14);
  CHECK_THROWS_WITH_AS(peak_flops_per_s(chip("a100"), Dtype::fp8), doctest::Contains("fp8"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(peak_flops_per_s(v5e, Dtype::fp8), doctest::Contains("it has bf16, int8"), std::invalid_argument);
  CHECK_THROWS_AS(peak_flops_per_s(v5e, Dtype::fp32), std::invalid_argument);
}

TEST_CASE("roofline times and bounds, hand-worked") {
  // 1e12 FLOPs and 1e9 bytes on a 1e14 FLOPs/s, 1e12 B/s device: 10 ms of math, 1 ms of transfer.
  const auto r = roofline(1e12, 1e9, 1e14, 1e12);
  CHECK(r.t_math_s == Approx(1e-2));
  CHECK(r.t_comms_s == Approx(1e-3));
  CHECK(r.t_lower_s == Approx(1e-2));
  CHECK(r.t_upper_s == Approx(1.1e-2));
  CHECK(r.compute_bound);
  CHECK(r.attainable_flops_per_s == Approx(1e14));
  const auto m = roofline(1e9, 1e9, 1e14, 1e12);  // intensity 1 < 100: bandwidth-bound at 1e12 FLOPs/s
  CHECK_FALSE(m.compute_bound);
  CHECK(m.attainable_flops_per_s == Approx(1e12));
  // upper bound is never more than twice the lower bound (§1.1)
  CHECK(m.t_upper_s <= 2 * m.t_lower_s);
}

TEST_CASE("matmul counts, hand-worked") {
  const Matmul bf16{2, 3, 5};  // all bf16
  CHECK(flops(bf16) == 60);
  CHECK(bytes_loaded(bf16) == 2 * 6 + 2 * 15);
  CHECK(bytes_stored(bf16) == 2 * 10);
  const Matmul mixed{2, 3, 5, Dtype::bf16, Dtype::int4, Dtype::fp32};
  CHECK(bytes(mixed) == 2 * 6 + 0.5 * 15 + 4 * 10);
}

TEST_CASE("matmul intensity tends to B when B << D, F (bf16), and to 2B for int8 weights") {
  for (double b : {1.0, 8.0, 64.0}) {
    CHECK(intensity(Matmul{b, 1e9, 1e9}) == Approx(b).epsilon(1e-5));
    CHECK(intensity(Matmul{b, 1e9, 1e9, Dtype::bf16, Dtype::int8, Dtype::bf16}) == Approx(2 * b).epsilon(1e-5));
  }
  // and to 2DF / (s_lhs·D + s_out·F) as B -> ∞
  CHECK(intensity(Matmul{1e12, 128, 128}) == Approx(2.0 * 128 * 128 / (2 * 128 + 2 * 128)).epsilon(1e-6));
}

TEST_CASE("exact critical batch: T_math equals T_comms there, and the shortcut is its large-D limit") {
  const double c = 1.97e14, w = 8.2e11, i = c / w;
  for (double d : {1024.0, 4096.0, 8192.0}) {
    const auto b = critical_batch(d, 2 * d, Dtype::bf16, Dtype::int8, Dtype::bf16, i);
    REQUIRE(b);
    const Matmul m{*b, d, 2 * d, Dtype::bf16, Dtype::int8, Dtype::bf16};
    CHECK(t_math_s(flops(m), c) == Approx(t_comms_s(bytes(m), w)).epsilon(1e-12));
  }
  const auto huge = critical_batch(1e9, 1e9, Dtype::bf16, Dtype::bf16, Dtype::bf16, i);
  CHECK(*huge == Approx(critical_batch_small_batch_limit(Dtype::bf16, i)).epsilon(1e-5));
  // D = F = 128 in bf16 never reaches intensity 240: no critical batch
  CHECK_FALSE(critical_batch(128, 128, Dtype::bf16, Dtype::bf16, Dtype::bf16, i).has_value());
}

TEST_CASE("tiled matmul: FLOPs equal the untiled count, and intensity without output is bm·bn/(bm+bn)") {
  const TiledMatmul t{1024, 2048, 512, 128, 256, 64};
  CHECK(flops(t) == 2.0 * 1024 * 2048 * 512);
  CHECK(input_intensity(t) == Approx(128.0 * 64 / (128 + 64)));
  CHECK_THROWS_WITH_AS(validate(TiledMatmul{1000, 1024, 1024, 128, 128, 128}), doctest::Contains("does not divide"),
                       std::invalid_argument);
}

TEST_CASE("invalid roofline input is rejected with the value named") {
  CHECK_THROWS_WITH_AS(t_math_s(-1, 1e14), doctest::Contains("FLOPs = -1"), std::invalid_argument);
  CHECK_THROWS_AS(t_comms_s(1, 0), std::invalid_argument);
  CHECK_THROWS_AS(t_comms_s(1, NAN), std::invalid_argument);
  CHECK_THROWS_WITH_AS(flops(Matmul{0, 1, 1}), doctest::Contains("B = 0"), std::invalid_argument);
  CHECK_THROWS_AS(critical_batch(-5, 1, Dtype::bf16, Dtype::bf16, Dtype::bf16, 240), std::invalid_argument);
}

TEST_CASE("human formatting") {
  CHECK(format_quantity(1.0111e-3, "s") == "1.01 ms");
  CHECK(format_quantity(7.06e10, "B") == "70.6 GB");
  CHECK(format_quantity(4.2e11, "FLOPs") == "4.2e11 FLOPs");
  CHECK(format_quantity(16384, "tokens") == "16,384 tokens");
  CHECK(format_quantity(240.2439, "FLOPs/byte") == "240.2 FLOPs/byte");
  CHECK(format_quantity(2.5e-7, "s") == "250 ns");
  CHECK(format_number(0.5) == "0.5");
  // Thousands separated whether or not the number is whole: a table never shows "1524" beside "1,634".
  CHECK(format_quantity(1524.3, "GiB") == "1,524 GiB");
  CHECK(format_number(76666.67) == "76,667");
  CHECK(format_number(-4377.8) == "-4,378");
  CHECK(format_quantity(3.94e14, "OPs/s") == "3.94e14 OPs/s");
  // Binary prefixes where the text counts in powers of two: 4 · 16,384 · 4 bytes is 256 KiB, not "262 kB".
  CHECK(format_binary_bytes(4.0 * 16384 * 4) == "256 KiB");
  CHECK(format_binary_bytes(50.0 * 1024 * 1024) == "50 MiB");
  CHECK(format_binary_bytes(1536) == "1.5 KiB");
  CHECK(format_binary_bytes(1000) == "1,000 B");
  // A claim's value and bound in one style.
  CHECK(format_alike({3.94e14, 4e14}, "OPs/s") == std::vector<std::string>{"3.94e14 OPs/s", "4e14 OPs/s"});
  CHECK(format_alike({4.08e6, 1.5e6}, "tokens") == std::vector<std::string>{"4.08e6 tokens", "1.5e6 tokens"});
  CHECK(format_alike({9.638, 19}, "") == std::vector<std::string>{"9.638", "19"});
  CHECK(format_alike({0, 4}, "iterations") == std::vector<std::string>{"0 iterations", "4 iterations"});
  CHECK(format_alike({7.99e12, 3.93216e14}, "B") == std::vector<std::string>{"7.99 TB", "393 TB"});
}
