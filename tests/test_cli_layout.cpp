// `scaling layout` and `scaling dot`, run as a user would: the book's grids, padding and HLO dot (§9),
// values worked by hand, and every rejection (one line naming the value, exit 1; usage, exit 2).
#include <doctest/doctest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_run.hpp"

namespace {
nlohmann::json json_of(const std::string& args) {
  const auto r = testing::run(args + " --json");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  return nlohmann::json::parse(r.out);
}
}  // namespace

TEST_CASE("scaling layout: §9.2.2's bf16[4,8] grid and f32[3,5] padding") {
  const auto j = json_of("layout 'bf16[4,8]{1,0:T(2,4)(2,1)}' --grid");
  for (const char* k : {"dtype", "dims", "minor_to_major", "tiles", "memory_space", "padded_shape", "elements",
                        "buffer_elements", "bytes", "padded_bytes", "growth", "offsets"})
    CHECK_MESSAGE(j.contains(k), k);
  // The book's grid as printed (§9.2.2), row by row.
  const std::vector<std::vector<int>> book{{0, 2, 4, 6, 8, 10, 12, 14},
                                           {1, 3, 5, 7, 9, 11, 13, 15},
                                           {16, 18, 20, 22, 24, 26, 28, 30},
                                           {17, 19, 21, 23, 25, 27, 29, 31}};
  CHECK(j["offsets"] == nlohmann::json(book));
  CHECK(j["dtype"] == "bf16");
  CHECK(j["tiles"] == nlohmann::json::parse("[[2,4],[2,1]]"));
  CHECK(j["tiled_shapes"] == nlohmann::json::parse("[[4,8],[2,2,2,4],[2,2,1,4,2,1]]"));
  CHECK(j["bytes"] == 64);
  CHECK(j["growth"] == 1.0);
  CHECK(!j.contains("offset"));

  // f32[3,5] in 2x2 tiles: padded to [4,6], 24 elements of 4 bytes against 15, growth 24/15.
  const auto f = json_of("layout 'f32[3,5]{1,0:T(2,2)}'");
  CHECK(f["padded_shape"] == nlohmann::json::parse("[4,6]"));
  CHECK(f["elements"] == 15);
  CHECK(f["buffer_elements"] == 24);
  CHECK(f["bytes"] == 60);
  CHECK(f["padded_bytes"] == 96);
  CHECK(f["growth"].get<double>() == doctest::Approx(1.6));
  CHECK(!f.contains("offsets"));
  // (1, 0) follows (0, 0) and (0, 1) inside the first tile; (2, 4) sits in the sixth tile's first slot.
  CHECK(json_of("layout 'f32[3,5]{1,0:T(2,2)}' --index 1,0")["offset"] == 2);
  CHECK(json_of("layout 'f32[3,5]{1,0:T(2,2)}' --index 2,4")["offset"] == 20);
  // The book's fusion.3: VMEM, and an (8, 128) tile that fits exactly.
  const auto v = json_of("layout 'bf16[32,32,4096]{2,1,0:T(8,128)(2,1)S(1)}' --index 31,31,4095");
  CHECK(v["memory_space"] == 1);
  CHECK(v["growth"] == 1.0);
  CHECK(v["offset"] == 32LL * 32 * 4096 - 1);
  // A scalar, a nested 3-D grid, and the readable output.
  CHECK(json_of("layout 'f32[]' --grid")["offsets"] == 0);
  CHECK(json_of("layout 'f32[2,1,2]{2,1,0:T(2,2)}' --grid")["offsets"] == nlohmann::json::parse("[[[0,1]],[[4,5]]]"));
  const auto text = testing::run("layout 'bf16[4,8]{1,0:T(2,4)(2,1)}' --grid");
  CHECK(text.exit_code == 0);
  CHECK(text.out.find("17 19 21 23 25 27 29 31") != std::string::npos);
  CHECK(text.out.find("growth") != std::string::npos);
}

TEST_CASE("scaling layout --grid of a 1024 x 1024 tiled array: every offset once") {
  const auto j = json_of("layout 'bf16[1024,1024]{1,0:T(8,128)(2,1)}' --grid");
  const auto& rows = j["offsets"];
  REQUIRE(rows.size() == 1024);
  std::vector<bool> seen(1024 * 1024, false);
  for (const auto& row : rows)
    for (const auto& o : row) seen.at(o.get<size_t>()) = true;
  CHECK(std::find(seen.begin(), seen.end(), false) == seen.end());
  // Element (9, 130): tile (1, 1) of 8 x 128 → 1·8 + 1 = tile 9 of 1024 elements; inside it row 1, column 2:
  // the (2, 1) sub-tile (0, 2) → 2·2 + 1 = 5.
  CHECK(rows[9][130] == 9 * 1024 + 5);
}

TEST_CASE("scaling layout rejects bad shapes and indices with one line naming them, exit 1") {
  testing::expect_rejected({
      {"layout 'f32[<=3]'", "dimension 0 '<=3' is dynamic"},
      {"layout 'f32[3,5]{1,1}'", "minor_to_major {1,1} is not a permutation"},
      {"layout 'f32[3,5]{1,0:T(0,2)}'", "tile dimension 0 is not positive"},
      {"layout 'f32[3,5]{1,0:T(2,-1)}'", "is not positive"},
      {"layout 'f32[3,5] junk'", "trailing text 'junk'"},
      {"layout 'f32[3,5]{1,0:P(8)}'", "layout attribute 'P'"},
      {"layout 'q32[3,5]'", "unknown element type 'q32'"},
      {"layout 'f32[4294967296,4294967296]'", "overflows 64 bits"},
      {"layout 'f32[4611686018427387903,2]{1,0:T(2,2)}'", "overflows 64 bits"},
      {"layout 'f32[3,5]' --index 3,0", "--index '3,0': index 3 of dimension 0 is outside 0..2"},
      {"layout 'f32[3,5]' --index 1", "rank 2"},
      {"layout 'f32[3,5]' --index a,b", "--index 'a,b': coordinate 'a'"},
      {"layout 'f32[3,5]' --index=-1,0", "coordinate '-1'"},
      {"layout 'f32[4096,4096]' --grid", "--grid 'f32[4096,4096]{1,0}': 16,777,216 elements and slice headings to print: must be at most 1,048,576"},
  });
  for (const std::string args : {"layout", "layout 'f32[3]' --grid --index 0", "layout 'f32[3]' --tiles 2"}) {
    INFO(args);
    const auto r = testing::run(args);
    CHECK(r.exit_code == 2);
    CHECK(testing::lines(r.err) == 1);
  }
}

TEST_CASE("scaling dot: §9.1's einsum('bf,fd->db') on f32[128,256] and bf16[256,16]") {
  const auto j = json_of("dot 'bf,fd->db' --shapes 128,256 256,16 --dtypes f32 bf16");
  for (const char* k : {"lhs", "rhs", "lhs_contracting", "rhs_contracting", "batch_dims", "output_shape",
                        "output_dtype", "flops", "hlo"})
    CHECK_MESSAGE(j.contains(k), k);
  // The book's HLO: dot(f32[256,16] convert(y), f32[128,256] x), lhs_contracting_dims={0}, rhs_contracting_dims={1}.
  CHECK(j["lhs"] == "f32[256,16]{1,0}");
  CHECK(j["rhs"] == "f32[128,256]{1,0}");
  CHECK(j["lhs_converted"] == true);
  CHECK(j["lhs_contracting"] == nlohmann::json::parse("[0]"));
  CHECK(j["rhs_contracting"] == nlohmann::json::parse("[1]"));
  CHECK(j["output_shape"] == nlohmann::json::parse("[16,128]"));
  CHECK(j["output_dtype"] == "f32");
  CHECK(j["flops"].get<double>() == 2.0 * 128 * 256 * 16);
  CHECK(j["hlo"].get<std::string>().find("lhs_contracting_dims={0}, rhs_contracting_dims={1}") != std::string::npos);
  // The same with typed HLO shapes; a batched einsum; one needing a transpose.
  CHECK(json_of("dot 'bf,fd->db' --shapes 'f32[128,256]' 'bf16[256,16]'")["lhs"] == "f32[256,16]{1,0}");
  const auto b = json_of("dot 'bij,bjk->bik' --shapes 3,4,5 3,5,6 --dtypes bf16 bf16");
  CHECK(b["batch_dims"]["lhs"] == nlohmann::json::parse("[0]"));
  CHECK(b["batch_dims"]["rhs"] == nlohmann::json::parse("[0]"));
  CHECK(b["output_dtype"] == "bf16");
  CHECK(b["flops"].get<double>() == 2.0 * 3 * 4 * 5 * 6);
  const auto t = json_of("dot 'ij,jk->ki' --shapes 2,3 3,4 --dtypes s8 s32");
  CHECK(t["output_shape"] == nlohmann::json::parse("[4,2]"));
  CHECK(t["output_dtype"] == "s32");
  const auto text = testing::run("dot 'bf,fd->db' --shapes 128,256 256,16 --dtypes f32 bf16");
  CHECK(text.exit_code == 0);
  CHECK(text.out.find("ROOT %dot = f32[16,128]{1,0}") != std::string::npos);
}

TEST_CASE("scaling dot rejects bad specs, shapes and types with one line naming them, exit 1") {
  testing::expect_rejected({
      {"dot 'ij,jk->ik' --shapes 2,3 5,4", "letter j has two sizes, 3 and 5"},
      {"dot 'ij,jk->ik' --shapes 2,3 3,4 --dtypes f32 f99", "--dtypes 'f99': unknown element type 'f99'"},
      {"dot 'ij,jk->ik' --shapes 'f32[2,3]' 3,4 --dtypes bf16 f32", "--dtypes 'bf16': operand 1 is already typed f32"},
      {"dot 'ij,jk->ik' --shapes 2,x 3,4", "--shapes '2,x'"},
      {"dot 'ij,jk->ik' --shapes 'f32[2,<=3]' 3,4", "dynamic"},
      {"dot 'ij,jk' --shapes 2,3 3,4", "expected two inputs and one output"},
      {"dot 'ij,jk->k' --shapes 2,3 3,4", "letter i is in one input only"},
      {"dot 'ijk,jk->ik' --shapes 2,3 3,4", "rank 2"},
      {"dot 'ij,jk->ik' --shapes 2,3 3,4 --dtypes f8e4m3fn bf16", "no implicit promotion between f8e4m3fn and bf16"},
      {"dot 'ij,jk->ik' --shapes 4294967296,2 2,4294967296", "overflows 64 bits"},
  });
  for (const std::string args : {"dot 'ij,jk->ik' --shapes 2,3", "dot --shapes 2,3 3,4", "dot 'ij,jk->ik' --shapes 2,3 3,4 --dtypes f32"}) {
    INFO(args);
    const auto r = testing::run(args);
    CHECK(r.exit_code == 2);
    CHECK(testing::lines(r.err) == 1);
  }
}
