#pragma once
// Rows of numbers kept in a storage format, as a weight matrix or a KV cache holds them in HBM, and
// turned back into doubles when read (§7.2 "Quantization"). Computation happens in double; only the
// storage is narrow, so the bytes a reader touches are the bytes the format really takes.
//
// Formats:
//  - fp32: each value rounded to the nearest float (4 bytes).
//  - bf16: each value rounded to float, then to the nearest bfloat16 with ties to even (2 bytes: the top
//    half of the float's bits).
//  - int8: symmetric, one scale per row: s = float(max|x| / 127), q = clamp(round(x / s), −127, 127)
//    with round() taking halves away from zero (1 byte per value); a read gives q · s. An all-zero row
//    has s = 0 and reads back zeros. The scale is an fp32 number per row, counted apart from the values.
//
// Every read adds to a ByteCount, so no read of stored data escapes the count.
#include <cstdint>
#include <span>
#include <vector>

#include "scaling/hardware/dtype.hpp"

namespace scaling::sim {

// Throws std::invalid_argument unless d is fp32, bf16 or int8.
void require_storable(Dtype d);

struct StoredRows {
  Dtype dtype = Dtype::bf16;
  int cols = 0;
  std::vector<float> fp32;          // rows × cols when dtype is fp32
  std::vector<std::uint16_t> bf16;  // rows × cols when dtype is bf16
  std::vector<std::int8_t> int8;    // rows × cols when dtype is int8
  std::vector<float> int8_scales;   // one per row when dtype is int8
};

// Bytes of stored data: values (`cols` × bytes per element per row) and, for int8, the row scales.
struct ByteCount {
  double value_bytes = 0;
  double scale_bytes = 0;
};

StoredRows empty_rows(Dtype dtype, int cols);
int rows(const StoredRows& s);
// Rounds or quantizes `values` (exactly `cols` of them) into a new last row.
void append_row(StoredRows& s, std::span<const double> values);
// Reads row r back into `out` (exactly `cols` values) and adds what it read to `counter`.
void read_row(const StoredRows& s, int r, std::span<double> out, ByteCount& counter);
// Bytes the storage holds now, from the sizes of its vectors.
ByteCount held_bytes(const StoredRows& s);

}  // namespace scaling::sim
