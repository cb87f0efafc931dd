// HLO shapes (§9.2.2): parsing, printing and every rejection; XLA's tiled layouts against a second,
// independent construction written here (pad, reshape, transpose on a real array of element numbers);
// the sizes XLA computes; and the einsum → dot lowering of §9.1.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <numeric>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "scaling/notation/dot_general.hpp"
#include "scaling/notation/hlo_shape.hpp"
#include "scaling/notation/tiled_layout.hpp"

using namespace scaling;
using std::int64_t;

TEST_CASE("HLO shapes: parsed as XLA prints them") {
  const auto s = hlo::parse_shape("bf16[32,32,4096]{2,1,0:T(8,128)(2,1)S(1)}");
  CHECK(s.type->name == "bf16");
  CHECK(s.dims == std::vector<int64_t>{32, 32, 4096});
  CHECK(s.layout.minor_to_major == std::vector<int64_t>{2, 1, 0});
  CHECK(s.layout.tiles == std::vector<std::vector<int64_t>>{{8, 128}, {2, 1}});
  CHECK(s.layout.memory_space == 1);
  CHECK(hlo::to_string(s) == "bf16[32,32,4096]{2,1,0:T(8,128)(2,1)S(1)}");
  // The book's spaced form, a scalar, no layout (row-major), element size, column-major.
  CHECK(hlo::to_string(hlo::parse_shape("f32[3, 5]{1, 0: T(2, 2)}")) == "f32[3,5]{1,0:T(2,2)}");
  CHECK(hlo::to_string(hlo::parse_shape("f32[]")) == "f32[]{}");
  CHECK(hlo::parse_shape("f32[]").dims.empty());
  CHECK(hlo::parse_shape("s8[2,3,4]").layout.minor_to_major == std::vector<int64_t>{2, 1, 0});
  CHECK(!hlo::parse_shape("s8[2,3,4]").layout_printed);
  CHECK(hlo::parse_shape("s4[1024]{0:T(1024)E(4)}").layout.element_size_bits == 4);
  CHECK(hlo::to_string(hlo::parse_shape("s4[1024]{0:E(4)S(2)}")) == "s4[1024]{0:E(4)S(2)}");
  CHECK(hlo::parse_shape("f32[3,5]{0,1}").layout.minor_to_major == std::vector<int64_t>{0, 1});
  CHECK(hlo::parse_shape("u8[0,7]").dims == std::vector<int64_t>{0, 7});
  // Every element type XLA prints parses, and prints back.
  for (const auto& t : hlo::element_types()) {
    const std::string text = std::string(t.name) + "[2]{0}";
    CHECK(hlo::to_string(hlo::parse_shape(text)) == text);
  }
  CHECK(hlo::element_types().size() == 30);
  CHECK(hlo::element_type("pred").byte_width == 1);
  CHECK(hlo::element_type("s4").bits == 4);
  CHECK(hlo::element_type("c128").byte_width == 16);
}

TEST_CASE("HLO shapes: every malformed part rejected in one line that names it") {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"f32[<=10,5]", "dynamic"},
      {"f32[?]", "dynamic"},
      {"f32[3,5]{1,1}", "not a permutation"},
      {"f32[3,5]{0}", "not a permutation"},
      {"f32[3,5]{2,0}", "not a permutation"},
      {"f32[3,5]{1,0,2}", "not a permutation"},
      {"f32[3,5]{1,0:T(0,2)}", "not positive"},
      {"f32[3,5]{1,0:T(2,-2)}", "not positive"},
      {"f32[3,5]{1,0:T(2,*)}", "'*'"},
      {"f32[3,5]{1,0:T()}", "tile dimension"},
      {"f32[3,5]{1,0:T(2,2)} x", "trailing text"},
      {"f32[3,5]]", "trailing text"},
      {"f32[3,5]{1,0:T(2,2)(2,2)T(1)}", "given twice"},
      {"f32[3,5]{1,0:L(8)}", "not supported"},
      {"f32[3,5]{1,0:E(0)}", "E(0)"},
      {"f32[3,5]{1,0:S(1)S(2)}", "given twice"},
      {"f32[3,5]{1,0", "expected '}'"},
      {"f33[3,5]", "unknown element type 'f33'"},
      {"token[]", "not an array type"},
      {"f32[3,x]", "dimension 1 'x'"},
      {"f32[-3]", "negative"},
      {"f32[99999999999999999999]", "64 bits"},
      {"f32[4294967296,4294967296]", "overflows 64 bits"},
      {"f32", "TYPE[dims]"},
      {"", "TYPE[dims]"},
      {"f32[3,5", "expected ']'"},
      {"f32[3,5]{1,0:T(2,2", "expected ')'"},
      {"f32[3]{0:T(1)(1)(1)(1)(1)(1)(1)(1)(1)}", "more than 8 tiles"},
      {"f32[3]{0:T(1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1)}", "at most 16"},
      {[] {  // 65 dimensions of 1
         std::string s = "f32[1";
         for (int i = 0; i < 64; ++i) s += ",1";
         return s + "]";
       }(),
       "more than 64 dimensions"},
  };
  for (const auto& [text, named] : cases) {
    INFO(text);
    try {
      hlo::parse_shape(text);
      FAIL("accepted");
    } catch (const std::invalid_argument& e) {
      const std::string m = e.what();
      CHECK(m.find(named) != std::string::npos);
      CHECK(m.find('\n') == std::string::npos);
      CHECK(m.rfind("HLO shape '", 0) == 0);
    }
  }
  // Mutated and truncated shape strings: parsed or rejected with std::invalid_argument, nothing else.
  std::mt19937 rng(99);
  const std::string seeds[] = {"bf16[32,32,4096]{2,1,0:T(8,128)(2,1)S(1)}", "f32[3,5]{1,0:T(2,2)}", "s4[7]{0:E(4)}", "f32[]"};
  const std::string alphabet = "0123456789[]{}(),:TSE*-?<=fbsu ";
  int rejected = 0, accepted = 0;
  for (int trial = 0; trial < 5000; ++trial) {
    std::string t = seeds[trial % 4];
    const int edits = 1 + trial % 3;
    for (int e = 0; e < edits && !t.empty(); ++e) {
      const size_t at = std::uniform_int_distribution<size_t>(0, t.size() - 1)(rng);
      switch (trial % 3) {
        case 0: t[at] = alphabet[at * 7 % alphabet.size()]; break;
        case 1: t.erase(at, 1); break;
        default: t.insert(at, 1, alphabet[(at + static_cast<size_t>(trial)) % alphabet.size()]);
      }
    }
    try {
      const auto s = hlo::parse_shape(t);
      hlo::layout_sizes(s);
      const hlo::OffsetMap m(s);
      if (hlo::element_count(s) <= 4096) m.all();
      ++accepted;
    } catch (const std::invalid_argument& e) {
      CHECK(std::string(e.what()).find('\n') == std::string::npos);
      ++rejected;
    }
  }
  CHECK(rejected > 1000);
  CHECK(accepted > 100);
  // Control characters in the text come back escaped, never raw.
  CHECK_THROWS_WITH_AS(hlo::parse_shape("f32[3]\n"), doctest::Contains("\\n"), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------------
// The second construction: build the memory image of the array itself. Start from a row-major array of
// element numbers, transpose it into physical order, then for each tile pad the minor dimensions to
// multiples of the tile, reshape each into (tiles, within) and transpose the within-tile axes behind all
// the tile axes. The flat result holds, at each memory position, the element stored there (or −1 for
// padding); inverting it gives each element's offset. Nothing here calls the library.

namespace {

struct NdArray {
  std::vector<int64_t> shape;
  std::vector<int64_t> data;  // row-major
};

int64_t product(const std::vector<int64_t>& v) {
  return std::accumulate(v.begin(), v.end(), int64_t{1}, std::multiplies<>());
}

// out[i_perm[0], …] = in[i_0, …]: numpy's transpose(in, perm).
NdArray transpose(const NdArray& in, const std::vector<size_t>& perm) {
  const size_t r = in.shape.size();
  NdArray out{std::vector<int64_t>(r), std::vector<int64_t>(in.data.size())};
  for (size_t i = 0; i < r; ++i) out.shape[i] = in.shape[perm[i]];
  std::vector<int64_t> in_stride(r, 1);
  int64_t stride = 1;
  for (size_t i = r; i > 0; --i) {
    in_stride[i - 1] = stride;
    stride *= in.shape[i - 1];
  }
  for (size_t k = 0; k < out.data.size(); ++k) {
    auto rest = static_cast<int64_t>(k);
    int64_t src = 0;
    for (size_t i = r; i > 0; --i) {  // k's coordinates in the output, from the most minor
      src += rest % out.shape[i - 1] * in_stride[perm[i - 1]];
      rest /= out.shape[i - 1];
    }
    out.data[k] = in.data[static_cast<size_t>(src)];
  }
  return out;
}

// Pads the last dimensions (with −1) up to `target`, same rank.
NdArray pad(const NdArray& in, const std::vector<int64_t>& target) {
  NdArray out{target, std::vector<int64_t>(static_cast<size_t>(product(target)), -1)};
  const size_t r = in.shape.size();
  std::vector<int64_t> idx(r, 0);
  for (size_t k = 0; k < in.data.size(); ++k) {
    int64_t dst = 0;
    for (size_t i = 0; i < r; ++i) dst = dst * target[i] + idx[i];
    out.data[static_cast<size_t>(dst)] = in.data[k];
    for (size_t i = r; i-- > 0;) {
      if (++idx[i] < in.shape[i]) break;
      idx[i] = 0;
    }
  }
  return out;
}

std::vector<int64_t> offsets_by_construction(const std::vector<int64_t>& dims, const std::vector<int64_t>& minor_to_major,
                                             const std::vector<std::vector<int64_t>>& tiles) {
  NdArray a{dims, std::vector<int64_t>(static_cast<size_t>(product(dims)))};
  std::iota(a.data.begin(), a.data.end(), 0);
  std::vector<size_t> to_physical;
  for (size_t i = minor_to_major.size(); i-- > 0;) to_physical.push_back(static_cast<size_t>(minor_to_major[i]));
  a = transpose(a, to_physical);
  for (const auto& t : tiles) {
    while (a.shape.size() < t.size()) a.shape.insert(a.shape.begin(), 1);  // reshape: leading 1s
    const size_t lead = a.shape.size() - t.size();
    std::vector<int64_t> target = a.shape;
    for (size_t j = 0; j < t.size(); ++j) target[lead + j] = (a.shape[lead + j] + t[j] - 1) / t[j] * t[j];
    a = pad(a, target);
    // Reshape each minor dimension d into (d/t, t): the data does not move.
    std::vector<int64_t> split(a.shape.begin(), a.shape.begin() + static_cast<std::ptrdiff_t>(lead));
    for (size_t j = 0; j < t.size(); ++j) {
      split.push_back(a.shape[lead + j] / t[j]);
      split.push_back(t[j]);
    }
    a.shape = split;
    // Transpose: the leading dimensions, then every tile count, then every within-tile position.
    std::vector<size_t> perm;
    for (size_t i = 0; i < lead; ++i) perm.push_back(i);
    for (size_t j = 0; j < t.size(); ++j) perm.push_back(lead + 2 * j);
    for (size_t j = 0; j < t.size(); ++j) perm.push_back(lead + 2 * j + 1);
    a = transpose(a, perm);
  }
  std::vector<int64_t> offset(static_cast<size_t>(product(dims)), -1);
  for (size_t pos = 0; pos < a.data.size(); ++pos)
    if (a.data[pos] >= 0) offset[static_cast<size_t>(a.data[pos])] = static_cast<int64_t>(pos);
  return offset;
}

std::string layout_text(const std::string& type, const std::vector<int64_t>& dims, const std::vector<int64_t>& m2m,
                        const std::vector<std::vector<int64_t>>& tiles) {
  std::ostringstream s;
  auto list = [&s](const std::vector<int64_t>& v) {
    for (size_t i = 0; i < v.size(); ++i) s << (i ? "," : "") << v[i];
  };
  s << type << "[";
  list(dims);
  s << "]{";
  list(m2m);
  if (!tiles.empty()) s << ":T";
  for (const auto& t : tiles) {
    s << "(";
    list(t);
    s << ")";
  }
  s << "}";
  return s.str();
}

}  // namespace

TEST_CASE("tiled layouts: the book's bf16[4,8]{1,0:T(2,4)(2,1)} grid and f32[3,5]{1,0:T(2,2)}") {
  // §9.2.2's grid, as printed, row by row.
  const std::vector<int64_t> book{0,  2,  4,  6,  8,  10, 12, 14, 1,  3,  5,  7,  9,  11, 13, 15,
                                  16, 18, 20, 22, 24, 26, 28, 30, 17, 19, 21, 23, 25, 27, 29, 31};
  CHECK(hlo::OffsetMap(hlo::parse_shape("bf16[4,8]{1,0:T(2,4)(2,1)}")).all() == book);
  CHECK(offsets_by_construction({4, 8}, {1, 0}, {{2, 4}, {2, 1}}) == book);
  // f32[3,5] in 2x2 tiles: within a tile row-major (§9.2.2), tiles row-major, 6 tiles of 4.
  const std::vector<int64_t> f32{0, 1, 4, 5, 8, 2, 3, 6, 7, 10, 12, 13, 16, 17, 20};
  CHECK(hlo::OffsetMap(hlo::parse_shape("f32[3,5]{1,0:T(2,2)}")).all() == f32);
  const auto z = hlo::layout_sizes(hlo::parse_shape("f32[3,5]{1,0:T(2,2)}"));
  CHECK(z.padded_shape == std::vector<int64_t>{4, 6});
  CHECK(z.elements == 15);
  CHECK(z.buffer_elements == 24);
  CHECK(z.bytes == 60);
  CHECK(z.padded_bytes == 96);
  CHECK(z.growth == doctest::Approx(1.6));
  CHECK(z.span_elements == 24);
}

TEST_CASE("tiled layouts: the offset map equals the pad-reshape-transpose construction on many shapes") {
  std::mt19937 rng(9);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int compared = 0;
  for (int trial = 0; trial < 600; ++trial) {
    const int rank = pick(0, 4);
    std::vector<int64_t> dims;
    for (int i = 0; i < rank; ++i) dims.push_back(pick(1, rank >= 3 ? 5 : 9));
    std::vector<int64_t> m2m(static_cast<size_t>(rank));
    std::iota(m2m.begin(), m2m.end(), 0);
    std::shuffle(m2m.begin(), m2m.end(), rng);
    std::vector<std::vector<int64_t>> tiles;
    int current_rank = rank;
    const int levels = pick(0, 3);
    for (int l = 0; l < levels; ++l) {
      const int k = pick(1, std::min(current_rank + 1, 3));
      std::vector<int64_t> t;
      for (int j = 0; j < k; ++j) t.push_back(pick(1, 4));
      current_rank = std::max(current_rank, k) + k;
      tiles.push_back(t);
    }
    const std::string text = layout_text("f32", dims, m2m, tiles);
    INFO(text);
    const auto shape = hlo::parse_shape(text);
    const hlo::OffsetMap map(shape);
    const auto expected = offsets_by_construction(dims, m2m, tiles);
    CHECK(map.all() == expected);
    // The span is the constructed image's length: every tile pads.
    int64_t image = 1;
    {
      std::vector<int64_t> s;
      for (size_t i = m2m.size(); i-- > 0;) s.push_back(dims[static_cast<size_t>(m2m[i])]);
      for (const auto& t : tiles) {
        while (s.size() < t.size()) s.insert(s.begin(), 1);
        const size_t lead = s.size() - t.size();
        for (size_t j = 0; j < t.size(); ++j) s[lead + j] = (s[lead + j] + t[j] - 1) / t[j] * t[j];
        std::vector<int64_t> next(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(lead));
        for (size_t j = 0; j < t.size(); ++j) next.push_back(s[lead + j] / t[j]);
        next.insert(next.end(), t.begin(), t.end());
        s = next;
      }
      image = product(s);
    }
    CHECK(map.span() == image);
    // Offsets are distinct and inside the image.
    auto sorted = expected;
    std::sort(sorted.begin(), sorted.end());
    CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end());
    if (!sorted.empty()) CHECK(sorted.back() < image);
    ++compared;
  }
  CHECK(compared == 600);
}

TEST_CASE("tiled layouts: sizes as XLA computes them (the first tile pads, sub-tiles add nothing)") {
  // The book's fusion.3 output: 8 x 128 tiles divide 32 x 4096 exactly, no growth.
  const auto big = hlo::layout_sizes(hlo::parse_shape("bf16[32,32,4096]{2,1,0:T(8,128)(2,1)S(1)}"));
  CHECK(big.buffer_elements == 32LL * 32 * 4096);
  CHECK(big.padded_bytes == 2LL * 32 * 32 * 4096);
  CHECK(big.growth == 1);
  // A row vector in (8, 128) tiles: 100 → 128 columns and the missing major dimension 1 → 8.
  const auto row = hlo::layout_sizes(hlo::parse_shape("f32[100]{0:T(8,128)}"));
  CHECK(row.padded_shape == std::vector<int64_t>{128});
  CHECK(row.buffer_elements == 1024);
  CHECK(row.padded_bytes == 4096);
  CHECK(row.growth == doctest::Approx(4096.0 / 400));
  // Column-major: the first tile's minor dimension pads dimension 0.
  const auto col = hlo::layout_sizes(hlo::parse_shape("f32[3,5]{0,1:T(2,2)}"));
  CHECK(col.padded_shape == std::vector<int64_t>{4, 6});
  // A sub-tile that does not divide its tile pads more than XLA counts: the span says so.
  const auto odd = hlo::layout_sizes(hlo::parse_shape("f32[3,4]{1,0:T(3,4)(2,1)}"));
  CHECK(odd.buffer_elements == 12);
  CHECK(odd.span_elements == 16);
  // Element size: s4 packs two to a byte only with E(4); pred takes a byte.
  CHECK(hlo::layout_sizes(hlo::parse_shape("s4[1000]")).bytes == 1000);
  CHECK(hlo::layout_sizes(hlo::parse_shape("s4[1000]{0:E(4)}")).bytes == 500);
  CHECK(hlo::layout_sizes(hlo::parse_shape("s4[1001]{0:E(4)}")).bytes == 501);
  CHECK(hlo::layout_sizes(hlo::parse_shape("s4[1000]{0:T(1024)E(4)}")).padded_bytes == 512);
  CHECK(hlo::layout_sizes(hlo::parse_shape("pred[10]")).bytes == 10);
  // Scalars and empty arrays.
  const auto scalar = hlo::layout_sizes(hlo::parse_shape("f32[]"));
  CHECK(scalar.elements == 1);
  CHECK(scalar.bytes == 4);
  CHECK(hlo::OffsetMap(hlo::parse_shape("f32[]")).all() == std::vector<int64_t>{0});
  const auto empty = hlo::layout_sizes(hlo::parse_shape("f32[0,5]{1,0:T(2,2)}"));
  CHECK(empty.bytes == 0);
  CHECK(empty.growth == 1);
  CHECK(hlo::OffsetMap(hlo::parse_shape("f32[0,5]{1,0:T(2,2)}")).all().empty());
  // Padding that overflows is an error, never a wrap.
  CHECK_THROWS_WITH_AS(hlo::layout_sizes(hlo::parse_shape("f32[4611686018427387903,2]{1,0:T(2,2)}")),
                       doctest::Contains("overflows 64 bits"), std::invalid_argument);
}

TEST_CASE("tiled layouts: single offsets, and indices out of range rejected") {
  const hlo::OffsetMap m(hlo::parse_shape("bf16[4,8]{1,0:T(2,4)(2,1)}"));
  const std::vector<int64_t> i{2, 5};
  CHECK(m.offset(i) == 26);
  const std::vector<int64_t> bad{4, 0}, short_index{1};
  CHECK_THROWS_WITH_AS(m.offset(bad), doctest::Contains("outside 0..3"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(m.offset(short_index), doctest::Contains("rank 2"), std::invalid_argument);
}

TEST_CASE("einsum to dot: §9.1's 'bf,fd->db' swaps the operands and converts the bf16 one") {
  const auto d = hlo::lower_einsum("bf,fd->db", hlo::parse_shape("f32[128,256]"), hlo::parse_shape("bf16[256,16]"));
  CHECK(d.lhs.einsum_input == 1);
  CHECK(d.rhs.einsum_input == 0);
  CHECK(d.lhs.converted);
  CHECK(!d.rhs.converted);
  CHECK(d.lhs_contracting == std::vector<int64_t>{0});
  CHECK(d.rhs_contracting == std::vector<int64_t>{1});
  CHECK(d.lhs_batch.empty());
  CHECK(hlo::to_string(d.output) == "f32[16,128]{1,0}");
  CHECK(d.transpose.empty());
  CHECK(d.flops == 2.0 * 128 * 256 * 16);
  CHECK(d.hlo.find("ROOT %dot = f32[16,128]{1,0} dot(f32[256,16]{1,0} %convert1, f32[128,256]{1,0} %arg0), "
                   "lhs_contracting_dims={0}, rhs_contracting_dims={1}") != std::string::npos);
  // Kept order when the output already matches; batch dimensions; a transpose when no order fits.
  const auto kept = hlo::lower_einsum("bf,fd->bd", hlo::parse_shape("bf16[8,4]"), hlo::parse_shape("bf16[4,2]"));
  CHECK(kept.lhs.einsum_input == 0);
  CHECK(hlo::to_string(kept.output) == "bf16[8,2]{1,0}");
  // A matrix-vector product fits either order ("i" both ways): the operands keep theirs.
  CHECK(hlo::lower_einsum("ij,j->i", hlo::parse_shape("f32[2,3]"), hlo::parse_shape("f32[3]")).lhs.einsum_input == 0);
  CHECK(hlo::lower_einsum("j,ij->i", hlo::parse_shape("f32[3]"), hlo::parse_shape("f32[2,3]")).lhs.einsum_input == 0);
  const auto batched = hlo::lower_einsum("bij,bjk->bik", hlo::parse_shape("f32[3,4,5]"), hlo::parse_shape("f32[3,5,6]"));
  CHECK(batched.lhs_batch == std::vector<int64_t>{0});
  CHECK(batched.rhs_batch == std::vector<int64_t>{0});
  CHECK(batched.lhs_contracting == std::vector<int64_t>{2});
  CHECK(batched.rhs_contracting == std::vector<int64_t>{1});
  CHECK(batched.flops == 2.0 * 3 * 4 * 5 * 6);
  const auto t = hlo::lower_einsum("bij,bjk->kbi", hlo::parse_shape("f32[3,4,5]"), hlo::parse_shape("f32[3,5,6]"));
  CHECK(t.output_letters == "bik");
  CHECK(t.transpose == std::vector<int64_t>{2, 0, 1});
  CHECK(t.hlo.find("ROOT %transpose = f32[6,3,4]{2,1,0}") != std::string::npos);
  // Promotion: bf16 with f16 gives f32, an integer with a float the float.
  CHECK(hlo::promote(hlo::element_type("bf16"), hlo::element_type("f16")).name == "f32");
  CHECK(hlo::promote(hlo::element_type("s32"), hlo::element_type("bf16")).name == "bf16");
  CHECK(hlo::promote(hlo::element_type("u8"), hlo::element_type("s8")).name == "s16");
  CHECK(hlo::promote(hlo::element_type("u8"), hlo::element_type("s32")).name == "s32");
  CHECK(hlo::promote(hlo::element_type("pred"), hlo::element_type("f16")).name == "f16");
  CHECK(hlo::promote(hlo::element_type("c64"), hlo::element_type("f64")).name == "c128");
  CHECK_THROWS_AS(hlo::promote(hlo::element_type("f8e4m3fn"), hlo::element_type("bf16")), std::invalid_argument);
  CHECK_THROWS_AS(hlo::promote(hlo::element_type("u64"), hlo::element_type("s64")), std::invalid_argument);
}

TEST_CASE("einsum to dot: rejections") {
  const auto a = hlo::parse_shape("f32[2,3]"), b = hlo::parse_shape("f32[3,4]"), c = hlo::parse_shape("f32[5,4]");
  CHECK_THROWS_WITH_AS(hlo::lower_einsum("ij,jk->ik", a, c), doctest::Contains("letter j has two sizes, 3 and 5"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(hlo::lower_einsum("ijk,jk->ik", a, b), doctest::Contains("rank 2"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(hlo::lower_einsum("ij,jk->k", a, b), doctest::Contains("letter i is in one input only"),
                       std::invalid_argument);
  CHECK_THROWS_AS(hlo::lower_einsum("ij->j", a, b), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------------
// The lowered dot executed: evaluate the dot_general exactly as its fields describe it (operand order,
// batch and contracting dimensions, output order, the transpose after it) and compare with the einsum
// evaluated from its definition, on random specs and whole-number data.

namespace {

struct Tensor {
  std::vector<int64_t> dims;
  std::vector<double> data;
  double at(const std::vector<int64_t>& index) const {
    int64_t flat = 0;
    for (size_t i = 0; i < dims.size(); ++i) flat = flat * dims[i] + index[i];
    return data[static_cast<size_t>(flat)];
  }
};

// Calls f on every index of `dims`, row-major (once, with an empty index, for a scalar).
template <class F>
void for_each_index(const std::vector<int64_t>& dims, F f) {
  std::vector<int64_t> index(dims.size(), 0);
  for (int64_t d : dims)
    if (d == 0) return;
  while (true) {
    f(index);
    size_t i = dims.size();
    while (i > 0 && ++index[i - 1] == dims[i - 1]) index[--i] = 0;
    if (i == 0) return;
  }
}

Tensor einsum_by_definition(const std::string& a, const std::string& b, const std::string& out, const Tensor& x,
                            const Tensor& y, const std::map<char, int64_t>& size) {
  std::string letters;
  for (char c : a + b)
    if (letters.find(c) == std::string::npos) letters += c;
  Tensor r;
  for (char c : out) r.dims.push_back(size.at(c));
  r.data.assign(static_cast<size_t>(product(r.dims)), 0);
  std::vector<int64_t> all_dims;
  for (char c : letters) all_dims.push_back(size.at(c));
  for_each_index(all_dims, [&](const std::vector<int64_t>& v) {
    auto pick = [&](const std::string& s) {
      std::vector<int64_t> idx;
      for (char c : s) idx.push_back(v[letters.find(c)]);
      return idx;
    };
    int64_t flat = 0;
    const auto o = pick(out);
    for (size_t i = 0; i < o.size(); ++i) flat = flat * r.dims[i] + o[i];
    r.data[static_cast<size_t>(flat)] += x.at(pick(a)) * y.at(pick(b));
  });
  return r;
}

Tensor run_dot(const hlo::DotGeneral& d, const Tensor& first, const Tensor& second) {
  const Tensor& lhs = d.lhs.einsum_input == 0 ? first : second;
  const Tensor& rhs = d.rhs.einsum_input == 0 ? first : second;
  auto free_dims = [](const Tensor& t, const std::vector<int64_t>& batch, const std::vector<int64_t>& contract) {
    std::vector<int64_t> f;
    for (int64_t i = 0; i < static_cast<int64_t>(t.dims.size()); ++i)
      if (std::find(batch.begin(), batch.end(), i) == batch.end() && std::find(contract.begin(), contract.end(), i) == contract.end())
        f.push_back(i);
    return f;
  };
  const auto lf = free_dims(lhs, d.lhs_batch, d.lhs_contracting), rf = free_dims(rhs, d.rhs_batch, d.rhs_contracting);
  Tensor out;
  for (int64_t i : d.lhs_batch) out.dims.push_back(lhs.dims[static_cast<size_t>(i)]);
  for (int64_t i : lf) out.dims.push_back(lhs.dims[static_cast<size_t>(i)]);
  for (int64_t i : rf) out.dims.push_back(rhs.dims[static_cast<size_t>(i)]);
  std::vector<int64_t> k_dims;
  for (int64_t i : d.lhs_contracting) k_dims.push_back(lhs.dims[static_cast<size_t>(i)]);
  out.data.assign(static_cast<size_t>(product(out.dims)), 0);
  size_t flat = 0;
  for_each_index(out.dims, [&](const std::vector<int64_t>& o) {
    std::vector<int64_t> li(lhs.dims.size()), ri(rhs.dims.size());
    size_t p = 0;
    for (size_t j = 0; j < d.lhs_batch.size(); ++j, ++p) {
      li[static_cast<size_t>(d.lhs_batch[j])] = o[p];
      ri[static_cast<size_t>(d.rhs_batch[j])] = o[p];
    }
    for (int64_t i : lf) li[static_cast<size_t>(i)] = o[p++];
    for (int64_t i : rf) ri[static_cast<size_t>(i)] = o[p++];
    double sum = 0;
    for_each_index(k_dims, [&](const std::vector<int64_t>& k) {
      for (size_t j = 0; j < k.size(); ++j) {
        li[static_cast<size_t>(d.lhs_contracting[j])] = k[j];
        ri[static_cast<size_t>(d.rhs_contracting[j])] = k[j];
      }
      sum += lhs.at(li) * rhs.at(ri);
    });
    out.data[flat++] = sum;
  });
  if (d.transpose.empty()) return out;
  Tensor t;
  for (int64_t k : d.transpose) t.dims.push_back(out.dims[static_cast<size_t>(k)]);
  for_each_index(t.dims, [&](const std::vector<int64_t>& i) {
    std::vector<int64_t> j(i.size());
    for (size_t k = 0; k < i.size(); ++k) j[static_cast<size_t>(d.transpose[k])] = i[k];
    t.data.push_back(out.at(j));
  });
  return t;
}

}  // namespace

TEST_CASE("einsum to dot: the lowered dot, executed, equals the einsum on random specs") {
  std::mt19937 rng(10);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int swapped = 0, transposed = 0;
  for (int trial = 0; trial < 300; ++trial) {
    // Letters: batch (both inputs and the output), contracting (both inputs), free (one input and the output).
    std::string pool = "abcdefgh";
    std::shuffle(pool.begin(), pool.end(), rng);
    const int nb = pick(0, 2), nk = pick(0, 2), nl = pick(0, 2), nr = pick(0, 2);
    if (nb + nk + nl == 0 || nb + nk + nr == 0) continue;
    size_t at = 0;
    auto take = [&](int n) { std::string s = pool.substr(at, static_cast<size_t>(n)); at += static_cast<size_t>(n); return s; };
    const std::string batch = take(nb), contract = take(nk), lfree = take(nl), rfree = take(nr);
    std::string a = batch + contract + lfree, b = batch + contract + rfree, out = batch + lfree + rfree;
    std::shuffle(a.begin(), a.end(), rng);
    std::shuffle(b.begin(), b.end(), rng);
    std::shuffle(out.begin(), out.end(), rng);
    std::map<char, int64_t> size;
    for (char c : a + b) size[c] = pick(1, 3);
    auto tensor = [&](const std::string& s) {
      Tensor t;
      for (char c : s) t.dims.push_back(size[c]);
      for (int64_t k = 0; k < product(t.dims); ++k) t.data.push_back(pick(-3, 3));
      return t;
    };
    const Tensor x = tensor(a), y = tensor(b);
    auto shape = [](const std::string& type, const std::vector<int64_t>& dims) {
      std::string s = type + "[";
      for (size_t i = 0; i < dims.size(); ++i) {
        if (i) s += ",";
        s += std::to_string(dims[i]);
      }
      return hlo::parse_shape(s + "]");
    };
    const std::string spec = a + "," + b + "->" + out;
    INFO(spec);
    const auto d = hlo::lower_einsum(spec, shape("f32", x.dims), shape("bf16", y.dims));
    const Tensor want = einsum_by_definition(a, b, out, x, y, size);
    const Tensor got = run_dot(d, x, y);
    CHECK(got.dims == want.dims);
    CHECK(got.data == want.data);
    CHECK(hlo::to_string(d.output).rfind("f32[", 0) == 0);
    CHECK(d.lhs.converted == (d.lhs.einsum_input == 1));
    double mults = 2;
    for (const auto& [c, n] : size) mults *= static_cast<double>(n);
    CHECK(d.flops == mults);
    swapped += d.lhs.einsum_input == 1;
    transposed += !d.transpose.empty();
  }
  CHECK(swapped > 10);
  CHECK(transposed > 10);
}
