#include "scaling/sim/stored_rows.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <stdexcept>
#include <string>

namespace scaling::sim {

namespace {
// Round to nearest, ties to even, on the float's bits: add 0x7FFF plus the lowest kept bit, drop 16 bits.
std::uint16_t to_bf16(double x) {
  const auto bits = std::bit_cast<std::uint32_t>(static_cast<float>(x));
  return static_cast<std::uint16_t>((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
}
double from_bf16(std::uint16_t b) { return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16); }

void require_width(const StoredRows& s, std::size_t n) {
  if (n != static_cast<std::size_t>(s.cols))
    throw std::invalid_argument("a stored row holds " + std::to_string(s.cols) + " values, not " + std::to_string(n));
}
}  // namespace

void require_storable(Dtype d) {
  if (d != Dtype::fp32 && d != Dtype::bf16 && d != Dtype::int8)
    throw std::invalid_argument("dtype " + std::string(name(d)) + ": stored rows hold fp32, bf16 or int8");
}

StoredRows empty_rows(Dtype dtype, int cols) {
  require_storable(dtype);
  if (cols < 1) throw std::invalid_argument("stored rows need at least one column, got " + std::to_string(cols));
  StoredRows s;
  s.dtype = dtype;
  s.cols = cols;
  return s;
}

int rows(const StoredRows& s) {
  if (s.cols == 0) return 0;  // a default-made StoredRows holds nothing
  const std::size_t n = s.dtype == Dtype::fp32 ? s.fp32.size() : s.dtype == Dtype::bf16 ? s.bf16.size() : s.int8.size();
  return static_cast<int>(n / static_cast<std::size_t>(s.cols));
}

void append_row(StoredRows& s, std::span<const double> values) {
  require_width(s, values.size());
  switch (s.dtype) {
    case Dtype::fp32:
      for (double x : values) s.fp32.push_back(static_cast<float>(x));
      return;
    case Dtype::bf16:
      for (double x : values) s.bf16.push_back(to_bf16(x));
      return;
    case Dtype::int8: {
      double max_abs = 0;
      for (double x : values) max_abs = std::max(max_abs, std::abs(x));
      const float scale = static_cast<float>(max_abs / 127.0);
      s.int8_scales.push_back(scale);
      // |x| ≤ 127·s up to s's rounding, so the clamp binds only when s is a subnormal float, whose few
      // significant bits can leave s far below max|x|/127.
      for (double x : values) {
        const double q = scale == 0 ? 0.0 : std::clamp(std::round(x / scale), -127.0, 127.0);
        s.int8.push_back(static_cast<std::int8_t>(q));
      }
      return;
    }
    default:
      require_storable(s.dtype);
  }
}

void read_row(const StoredRows& s, int r, std::span<double> out, ByteCount& counter) {
  require_width(s, out.size());
  if (r < 0 || r >= rows(s))
    throw std::out_of_range("row " + std::to_string(r) + " of " + std::to_string(rows(s)) + " stored rows");
  const std::size_t at = static_cast<std::size_t>(r) * static_cast<std::size_t>(s.cols);
  switch (s.dtype) {
    case Dtype::fp32:
      for (std::size_t i = 0; i < out.size(); ++i) out[i] = s.fp32[at + i];
      counter.value_bytes += static_cast<double>(out.size() * sizeof(float));
      return;
    case Dtype::bf16:
      for (std::size_t i = 0; i < out.size(); ++i) out[i] = from_bf16(s.bf16[at + i]);
      counter.value_bytes += static_cast<double>(out.size() * sizeof(std::uint16_t));
      return;
    case Dtype::int8: {
      const double scale = s.int8_scales[static_cast<std::size_t>(r)];
      for (std::size_t i = 0; i < out.size(); ++i) out[i] = s.int8[at + i] * scale;
      counter.value_bytes += static_cast<double>(out.size() * sizeof(std::int8_t));
      counter.scale_bytes += sizeof(float);
      return;
    }
    default:
      require_storable(s.dtype);
  }
}

ByteCount held_bytes(const StoredRows& s) {
  return {static_cast<double>(s.fp32.size() * sizeof(float) + s.bf16.size() * sizeof(std::uint16_t) +
                              s.int8.size() * sizeof(std::int8_t)),
          static_cast<double>(s.int8_scales.size() * sizeof(float))};
}

}  // namespace scaling::sim
