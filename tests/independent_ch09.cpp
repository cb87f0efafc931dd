// Independent checks of chapter 9. Nothing here calls the library: FLOPs are counted by looping over the
// multiply-adds, offsets come from placing the elements tile by tile in an explicit memory image, sizes
// from the shapes' numbers worked by hand, and times from the book's raw figures (23e12 FLOPs/s per TPU v2
// core, 1.2e11 B/s per link both ways) with each device's share written out.
#include <cstdint>
#include <string>
#include <vector>

#include "registry.hpp"

namespace {

// Memory image of a 2-D array in one level of (tr, tc) tiles, tiles row-major and row-major inside:
// walk the tiles in memory order and hand out slots; returns the slot of (row, col).
int64_t slot_by_walking(int64_t rows, int64_t cols, int64_t tr, int64_t tc, int64_t row, int64_t col) {
  int64_t next = 0;
  for (int64_t ti = 0; ti * tr < rows; ++ti)
    for (int64_t tj = 0; tj * tc < cols; ++tj)
      for (int64_t i = 0; i < tr; ++i)
        for (int64_t j = 0; j < tc; ++j, ++next)
          if (ti * tr + i == row && tj * tc + j == col) return next;
  return -1;
}

// Slots handed out in the same walk, padding included.
int64_t slots_by_walking(int64_t rows, int64_t cols, int64_t tr, int64_t tc) {
  int64_t n = 0;
  for (int64_t ti = 0; ti * tr < rows; ++ti)
    for (int64_t tj = 0; tj * tc < cols; ++tj) n += tr * tc;
  return n;
}

constexpr double kCore = 23e12;  // §9.2.4: bf16 FLOPs/s of one TPU v2 core

}  // namespace

// ---- ch9.hlo-dot -----------------------------------------------------------------------------------

INDEPENDENT("ch9.hlo-dot.flops", "multiply-adds counted one by one over out[d][b] += y[f][d]·x[b][f]", 0) {
  double count = 0;
  for (int d = 0; d < 16; ++d)
    for (int b = 0; b < 128; ++b)
      for (int f = 0; f < 256; ++f) count += 2;  // one multiply, one add
  return count;
}

// ---- ch9.tiling-padding ------------------------------------------------------------------------------

INDEPENDENT("ch9.tiling-padding.buffer_elements", "slots handed out walking 2x2 tiles over [3, 5]", 0) {
  return double(slots_by_walking(3, 5, 2, 2));
}
INDEPENDENT("ch9.tiling-padding.bytes", "15 values × 4 bytes", 0) { return 3 * 5 * 4; }
INDEPENDENT("ch9.tiling-padding.padded_bytes", "[4, 6] slots × 4 bytes", 0) { return 4 * 6 * 4; }
INDEPENDENT("ch9.tiling-padding.offset_0_2", "slot of (0, 2) in the walk of 2x2 tiles", 0) {
  return double(slot_by_walking(3, 5, 2, 2, 0, 2));
}
INDEPENDENT("ch9.tiling-padding.offset_2_4", "slot of (2, 4) in the walk of 2x2 tiles", 0) {
  return double(slot_by_walking(3, 5, 2, 2, 2, 4));
}
INDEPENDENT("ch9.tiling-padding.fusion3_growth", "32 % 8 = 0 and 4096 % 128 = 0: slots equal values", 0) {
  return double(slots_by_walking(32, 4096, 8, 128)) / (32.0 * 4096);
}
INDEPENDENT("ch9.tiling-padding.row_vector_growth", "one 8x128 tile holds the 100 values", 0) {
  return double(slots_by_walking(1, 100, 8, 128)) / 100.0;
}

// ---- ch9.tiling-bf16 ---------------------------------------------------------------------------------

INDEPENDENT("ch9.tiling-bf16.span_elements", "4 (2,4) tiles of 8 slots, each exactly 4 (2,1) sub-tiles", 0) {
  return double(slots_by_walking(4, 8, 2, 4));
}
INDEPENDENT("ch9.tiling-bf16.tiled_rank", "2 dims, +2 for the (2,4) tile, +2 for the (2,1) tile", 0) { return 2 + 2 + 2; }

// ---- ch9.ffw-matmul ----------------------------------------------------------------------------------

INDEPENDENT("ch9.ffw-matmul.local_out_batch", "the batch 32 split 4 ways by data parallelism", 0) { return 32 / 4; }
INDEPENDENT("ch9.ffw-matmul.local_intensity", "FLOPs over bf16 bytes of [8192,8192]·[8192,16384] → [8192,16384]", 1e-12) {
  const double B = 8 * 1024, D = 8192, F = 16384;
  return 2 * B * D * F / (2 * B * D + 2 * D * F + 2 * B * F);
}
INDEPENDENT("ch9.ffw-matmul.flops", "the whole product X[32,1024,8192]·W_in[8192,32768] at 2 FLOPs per multiply-add", 1e-12) {
  return 2.0 * 32 * 1024 * 8192 * 32768;
}
INDEPENDENT("ch9.ffw-matmul.measured_over_model", "96 ms over the book's own expression's time", 1e-12) {
  return 96e-3 / (2.0 * 32 * 1024 * 8192 * 32768 / (23e12 * 8));
}

// ---- ch9.reduce-scatter ------------------------------------------------------------------------------

INDEPENDENT("ch9.reduce-scatter.measured_over_model", "1.13 ms over 67,108,864 bytes at 6e10 B/s one way", 1e-12) {
  const double half = 2.0 * 8 * 1024 * 8192 / 2;  // what each core sends to the other
  return 1.13e-3 / (half / 6e10);
}

// ---- ch9.qproj-time ----------------------------------------------------------------------------------

INDEPENDENT("ch9.qproj-time.local_heads", "32 heads / 2", 0) { return 32 / 2; }
INDEPENDENT("ch9.qproj-time.local_out_elements", "8·1024 tokens × 16 heads × 256", 0) { return 8.0 * 1024 * 16 * 256; }
INDEPENDENT("ch9.qproj-time.local_weight_bytes", "8192 × 16 × 256 × 2 bytes", 0) { return 8192.0 * 16 * 256 * 2; }
INDEPENDENT("ch9.qproj-time.lhs_contracting", "position of d in X's subscripts 'btd'", 0) {
  return double(std::string("btd").find('d'));
}
INDEPENDENT("ch9.qproj-time.rhs_contracting", "position of d in W_Q's subscripts 'dnh'", 0) {
  return double(std::string("dnh").find('d'));
}
INDEPENDENT("ch9.qproj-time.flops_per_core", "the whole Q projection's 2·32·1024·8192·32·256 over 8 cores", 1e-12) {
  return 2.0 * 32 * 1024 * 8192 * 32 * 256 / 8;
}
INDEPENDENT("ch9.qproj-time.time_s", "the whole projection's FLOPs over 8 cores' peak", 1e-12) {
  return 2.0 * 32 * 1024 * 8192 * 32 * 256 / (8 * kCore);
}
INDEPENDENT("ch9.qproj-time.local_intensity", "FLOPs over bf16 bytes of [8192,8192]·[8192,4096]", 1e-12) {
  const double B = 8 * 1024, D = 8192, F = 16 * 256;
  return 2 * B * D * F / (2 * B * D + 2 * D * F + 2 * B * F);
}
// §3's rule read off the two shardings by hand: communication is needed only when the contracting
// dimension D carries a mesh subscript in some operand (an AllGather or an AllReduce of it). Here D is
// bare in both, so nothing moves.
namespace {
bool d_sharded(const std::string& sharding) { return sharding.find("D_") != std::string::npos; }
}  // namespace
INDEPENDENT("ch9.qproj-time.comm_bytes", "D bare in X[T_X, D] and W[D, Q_Y]: no collective, 0 bytes", 0) {
  const double local_x_bytes = 32.0 * 1024 / 4 * 8192 * 2;  // what an AllGather of X's D would move at most
  return (d_sharded("X[T_X, D]") || d_sharded("W[D, Q_Y]")) ? local_x_bytes : 0;
}
INDEPENDENT("ch9.qproj-time.plan_case", "§3's cases counted from the operands that shard D: none is case 1", 0) {
  // §3.2: case 1 shards D in neither operand, case 2 in one, case 3 in both (same axis).
  return 1 + (d_sharded("X[T_X, D]") ? 1 : 0) + (d_sharded("W[D, Q_Y]") ? 1 : 0);
}
INDEPENDENT("ch9.qproj-time.time_vs_up_projection", "N·H / F = 32·256 / 32768", 1e-12) { return 32.0 * 256 / 32768; }
