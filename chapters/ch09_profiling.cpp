// Chapter 9: profiling TPU programs (§9). The book reads HLO and profiles from a real TPU; here the same
// readings are computed: the dot XLA makes of an einsum (§9.1), HLO shapes and XLA's tiled layouts — where
// each element lands in memory and what padding costs (§9.2.2) — and the expected times of the profiled
// up-projection, ReduceScatter and Q projection (§9.2.4), set beside the times the book measured.
//
// Assumptions the book leaves open: jnp.ones makes float32 (JAX's default) unless told otherwise; §9.2.4's
// TPU v2 figures are the book's own (23e12 bf16 FLOPs/s per core, 1.2e11 B/s per ICI link, both directions
// together), since the §2.3 table has no TPU v2; an ICI hop costs 1 µs as on the §2.3 chips.
#include <algorithm>
#include <string>
#include <vector>

#include "exercise.hpp"
#include "scaling/base/format.hpp"
#include "scaling/cost/collectives.hpp"
#include "scaling/cost/matmul_plan.hpp"
#include "scaling/cost/roofline.hpp"
#include "scaling/hardware/chip.hpp"
#include "scaling/notation/dot_general.hpp"
#include "scaling/notation/hlo_shape.hpp"
#include "scaling/notation/sharding.hpp"
#include "scaling/notation/tiled_layout.hpp"

using namespace scaling;
using workbook::exact;
using workbook::in;
using workbook::sig;

static auto& chapter = workbook::define_chapter(9, "ch09", "How to Profile TPU Programs");

namespace {

// §9.2.4's hardware: 8 TPU v2 cores (a v2-8, 4 chips of 2 cores) on Colab.
constexpr double kV2CoreFlops = 23e12;   // bf16 FLOPs/s per core, the book's figure
constexpr double kV2IciBidi = 1.2e11;    // B/s per link, both directions together, the book's figure
constexpr double kHopLatency_s = 1e-6;   // as the §2.3 chips
constexpr int kCores = 8, kDataParallel = 4, kModelParallel = 2;
// §9.2.4's model: X[32, 1024, 8192] · W_in[8192, 32768], bf16; W_Q[8192, 32, 256].
constexpr int64_t kBatch = 32, kSeq = 1024, kDModel = 8192, kDff = 32768, kHeads = 32, kDqkv = 256;
// What the profile showed (§9.2.4): measurements, not computed answers.
constexpr double kMeasuredUpProj_s = 96e-3, kMeasuredReduceScatter_s = 1.13e-3;

std::string shape_of(const std::string& type, std::vector<int64_t> dims) {
  hlo::Shape s;
  s.type = &hlo::element_type(type);
  s.dims = std::move(dims);
  for (int64_t d = static_cast<int64_t>(s.dims.size()) - 1; d >= 0; --d) s.layout.minor_to_major.push_back(d);
  return hlo::to_string(s);
}

// The offsets of a 2-D shape as rows, and the first-level tile each element lies in (its colour).
struct Grid2d {
  std::vector<std::vector<double>> offsets, tiles;
};
Grid2d grid_of(const hlo::Shape& s) {
  const auto all = hlo::OffsetMap(s).all();
  int64_t tile_elements = 1;
  for (int64_t t : s.layout.tiles.at(0)) tile_elements *= t;
  Grid2d g;
  for (int64_t r = 0; r < s.dims[0]; ++r) {
    g.offsets.emplace_back();
    g.tiles.emplace_back();
    for (int64_t c = 0; c < s.dims[1]; ++c) {
      const int64_t o = all[static_cast<size_t>(r * s.dims[1] + c)];
      g.offsets.back().push_back(static_cast<double>(o));
      g.tiles.back().push_back(static_cast<double>(o / tile_elements));  // a first-level tile is contiguous
    }
  }
  return g;
}

std::string quantity(double v, const char* unit) { return format_quantity(v, unit); }

}  // namespace

// ---------------------------------------------------------------------------------------------------

EXERCISE("ch9.hlo-dot", "The HLO of a jitted einsum: operand order, contracting dimensions, output type") {
  ex.section("§9.1");
  // jnp.einsum('bf,fd->db', x, y) with x = jnp.ones((128, 256)) (float32) and y bf16[256, 16].
  const auto x = hlo::parse_shape("f32[128,256]"), y = hlo::parse_shape("bf16[256,16]");
  const auto d = hlo::lower_einsum("bf,fd->db", x, y);
  ex.answer("out_dim0", double(d.output.dims.at(0)), "").book(16, exact()).explain("the ROOT dot's f32[16,128]: d first");
  ex.answer("out_dim1", double(d.output.dims.at(1)), "").book(128, exact());
  ex.answer("out_bits", d.output.type->bits, "bits").book(32, exact())
      .explain("the output is f32: JAX promotes bf16 with f32 to f32 before the dot");
  ex.answer("lhs_operand", d.lhs.einsum_input + 1, "").book(2, exact())
      .explain("the dot's first operand is the einsum's second input, y: its free d must come first in 'db'");
  ex.answer("converted_operand", d.lhs.converted ? 2 : d.rhs.converted ? 1 : 0, "").book(2, exact())
      .explain("y is bf16 and is converted to f32 (convert.3 in the book's HLO)");
  ex.answer("lhs_contracting", double(d.lhs_contracting.at(0)), "").book(0, exact())
      .explain("f is dimension 0 of y's [256, 16]");
  ex.answer("rhs_contracting", double(d.rhs_contracting.at(0)), "").book(1, exact())
      .explain("f is dimension 1 of x's [128, 256]");
  ex.answer("transposes", double(d.transpose.size()), "").book(0, exact())
      .explain("no transpose follows: swapping the operands gives the 'db' order directly");
  ex.answer("flops", d.flops, "FLOPs").explain("2 per output element per contracted element: 2·16·128·256");
  auto& t = ex.table("hlo", {"lowered HLO (ours)"});
  size_t start = 0;
  while (start < d.hlo.size()) {
    const size_t end = std::min(d.hlo.find('\n', start), d.hlo.size());
    t.row({d.hlo.substr(start, end - start)});
    start = end + 1;
  }
}

static const workbook::Finding kUpProjOutputShape{
    "up-projection-output-global-batch", workbook::Severity::slip,
    "the up-projection's local output printed as bf16[32,1024,16384]",
    "§9.2.4 reads the profiled fusion's inputs as bf16[8,1024,8192] and bf16[8192,16384] — local blocks of a "
    "4-way data-parallel, 2-way model-parallel matmul — and its output as bf16[32,1024,16384]. A local matmul "
    "of [8,1024,8192] by [8192,16384] yields [8,1024,16384]: the printed 32 is the global batch (the 32 of X's "
    "bf16[32,1024,8192] a line later), mixed with the local 16384 (the global output is [32,1024,32768]). A slip: "
    "the expected time that follows is computed from the global shapes over 8 cores, which the slip does not touch."};

EXERCISE("ch9.tiling-padding", "Tile padding: f32[3,5]{1,0:T(2,2)} and the book's other layouts") {
  ex.section("§9.2.2");
  const auto s = hlo::parse_shape("f32[3,5]{1,0:T(2,2)}");
  const auto z = hlo::layout_sizes(s);
  const hlo::OffsetMap map(s);
  // minor_to_major {1, 0} read from the right: dimension 0 most major, then dimension 1.
  ex.answer("physical_major", double(z.tiled_shapes.at(0).at(0)), "").book(3, exact())
      .explain("the physical shape before tiling, most major first: [3, 5], the logical shape");
  ex.answer("physical_minor", double(z.tiled_shapes.at(0).at(1)), "").book(5, exact());
  ex.answer("padded_rows", double(z.padded_shape.at(0)), "").book(4, exact()).explain("3 rows rounded up to 2-row tiles");
  ex.answer("padded_cols", double(z.padded_shape.at(1)), "").book(6, exact()).explain("5 columns rounded up to 2-column tiles");
  ex.answer("growth", z.growth, "").book(1.6, sig(2)).explain("padded over unpadded bytes, 24/15: 'about 1.6x'");
  ex.answer("buffer_elements", double(z.buffer_elements), "").explain("six 2x2 tiles");
  ex.answer("bytes", double(z.bytes), "B").explain("15 f32 values");
  ex.answer("padded_bytes", double(z.padded_bytes), "B").explain("24 f32 slots, as XLA's ArraySize counts them");
  // §9.2.2: inside a tile, row-major: (0, 0), then (0, 1), then (1, 0) and (1, 1).
  auto at = [&](int64_t i, int64_t j) {
    const std::vector<int64_t> index{i, j};
    return double(map.offset(index));
  };
  ex.answer("offset_0_1", at(0, 1), "").book(1, exact()).explain("(0, 1) right after (0, 0)");
  ex.answer("offset_1_0", at(1, 0), "").book(2, exact()).explain("then (1, 0): the tile's second row");
  ex.answer("offset_1_1", at(1, 1), "").book(3, exact());
  ex.answer("offset_0_2", at(0, 2), "").explain("the first element of the second tile, after the 4 slots of the first");
  ex.answer("offset_2_4", at(2, 4), "").explain("the last element: first slot of the sixth tile, 5·4");
  const auto g = grid_of(s);
  ex.grid("offsets", "column", "row", g.offsets, g.tiles);

  // The layouts §9.2 prints, and some that pad: XLA's sizes for each.
  auto& t = ex.table("padding", {"shape", "padded shape", "elements", "buffer elements", "bytes", "padded bytes", "growth"});
  for (const char* text : {"f32[3,5]{1,0:T(2,2)}", "bf16[4,8]{1,0:T(2,4)(2,1)}", "bf16[32,32,8192]{2,1,0:T(8,128)(2,1)S(1)}",
                           "bf16[32,32,4096]{2,1,0:T(8,128)(2,1)S(1)}", "bf16[8,1024,4096]{2,1,0:T(8,128)(2,1)}",
                           "f32[1,100]{1,0:T(8,128)}", "bf16[3,200]{1,0:T(8,128)(2,1)}", "f32[100]{0:T(8,128)}",
                           "s8[5,130]{1,0:T(32,128)(4,1)}", "s4[3,300]{1,0:T(8,128)E(4)}"}) {
    const auto sh = hlo::parse_shape(text);
    const auto zz = hlo::layout_sizes(sh);
    t.row({text, hlo::dims_text(zz.padded_shape), format_number(double(zz.elements)), format_number(double(zz.buffer_elements)),
           quantity(double(zz.bytes), "B"), quantity(double(zz.padded_bytes), "B"), format_number(zz.growth, 3) + "x"});
  }
  // The book's fusion.3 output (§9.2.2): bf16, in VMEM, and an (8, 128) tile that divides it exactly.
  const auto f3 = hlo::parse_shape("bf16[32,32,4096]{2,1,0:T(8,128)(2,1)S(1)}");
  ex.answer("fusion3_bytes_per_element", f3.type->byte_width, "B").book(2, exact()).explain("'bf16 (2 bytes per parameter)'");
  ex.answer("fusion3_memory_space", double(f3.layout.memory_space), "").book(1, exact()).explain("S(1): VMEM");
  ex.answer("default_memory_space", double(s.layout.memory_space), "").book(0, exact())
      .explain("no S(n) printed: HBM, S(0), which the book says is often omitted");
  ex.answer("fusion3_growth", hlo::layout_sizes(f3).growth, "").explain("8 divides 32 and 128 divides 4096: no padding");
  // The (2, 1) sub-tile of bf16: two 2-byte values, one 4-byte word per load.
  const auto& sub = f3.layout.tiles.at(1);
  ex.claim("subtile_bytes", "§9.2.2: the inner (2, 1) tile of a bf16 array makes loads multiples of 4 bytes",
           double(sub.at(0) * sub.at(1) * f3.type->byte_width), "B")
      .about(4, exact())
      .explain("elements of one (2, 1) tile times 2 bytes");
  // A worst case for small arrays: one row in (8, 128) tiles.
  ex.answer("row_vector_growth", hlo::layout_sizes(hlo::parse_shape("f32[1,100]{1,0:T(8,128)}")).growth, "")
      .explain("f32[1,100] in (8, 128) tiles: one row of 100 fills 8 x 128 slots");
}

EXERCISE("ch9.tiling-bf16", "Two levels of tiles: bf16[4,8]{1,0:T(2,4)(2,1)}") {
  ex.section("§9.2.2");
  const auto s = hlo::parse_shape("bf16[4,8]{1,0:T(2,4)(2,1)}");
  const auto g = grid_of(s);
  // The book's grid, as printed (§9.2.2).
  const double book[4][8] = {{0, 2, 4, 6, 8, 10, 12, 14},
                             {1, 3, 5, 7, 9, 11, 13, 15},
                             {16, 18, 20, 22, 24, 26, 28, 30},
                             {17, 19, 21, 23, 25, 27, 29, 31}};
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 8; ++c)
      ex.answer("offset_" + std::to_string(r) + "_" + std::to_string(c), g.offsets[size_t(r)][size_t(c)], "")
          .book(book[r][c], exact());
  ex.grid("offsets", "column", "row", g.offsets, g.tiles);
  const auto z = hlo::layout_sizes(s);
  ex.answer("span_elements", double(z.span_elements), "")
      .explain("(2, 4) divides [4, 8] and (2, 1) divides (2, 4): no slot is padding");
  ex.answer("tiled_rank", double(z.tiled_shapes.back().size()), "")
      .explain("[4, 8] → [2, 2, 2, 4] → [2, 2, 1, 4, 2, 1]: tile rows, tile columns, then within a (2, 4) "
               "tile its (2, 1) sub-tiles and their two elements");
}

EXERCISE("ch9.ffw-matmul", "The profiled up-projection: expected time on 8 TPU v2 cores") {
  ex.section("§9.2.4");
  // X[B_X, T, D] · W_in[D, F_Y] on a 4 (X, data) × 2 (Y, model) mesh of cores.
  const int64_t b = kBatch / kDataParallel, f = kDff / kModelParallel;
  const auto local = hlo::lower_einsum("btd,df->btf", hlo::parse_shape(shape_of("bf16", {b, kSeq, kDModel})),
                                       hlo::parse_shape(shape_of("bf16", {kDModel, f})));
  ex.answer("local_batch", double(b), "").book(8, exact()).explain("the profiled input bf16[8,1024,8192]: 32 / 4");
  ex.answer("local_f", double(f), "").book(16384, exact()).explain("the profiled weight bf16[8192,16384]: 32768 / 2");
  ex.answer("local_out_batch", double(local.output.dims.at(0)), "")
      .book(32, exact())
      .erratum(kUpProjOutputShape, "Ours: " + hlo::to_string(local.output) + ".")
      .reproduced_by(double(kBatch), "the global batch of X, 32, written where the local block's 32 / 4 belongs")
      .explain("the local output's first dimension");
  ex.answer("tokens_per_shard", double(b * kSeq), "tokens").book(8192, exact()).explain("8 sequences of 1024");
  // Compute-bound: the local matmul's intensity against the ridge points of the §2.3 chips.
  const double tokens = double(b * kSeq);
  const Matmul m{tokens, double(kDModel), double(f)};
  double ridge = 0;
  std::string ridge_chip;
  for (const auto& c : chips())
    if (!c.pod_shape.empty() && critical_intensity(c.bf16_flops_per_s, c.hbm_bytes_per_s) > ridge) {
      ridge = critical_intensity(c.bf16_flops_per_s, c.hbm_bytes_per_s);
      ridge_chip = c.display;
    }
  ex.answer("local_intensity", intensity(m), "FLOPs/byte")
      .explain("[8192, 8192]·[8192, 16384] in bf16: 2BDF / 2(BD + DF + BF)");
  ex.claim("compute_bound", "§9.2.4: with 8192 tokens per data-parallel shard the up-projection is solidly "
                            "compute-bound", intensity(m), "FLOPs/byte")
      .above(ridge)
      .explain("above the highest bf16 ridge point (peak / HBM bandwidth) of the §2.3 TPUs, the " + ridge_chip +
               "'s " + format_number(ridge, 3) + " FLOPs/byte; TPU v2 is not in that table");
  ex.answer("flops", local.flops * kCores, "FLOPs").explain("the local dot's FLOPs on each of the 8 cores");
  const double t = local.flops / kV2CoreFlops;  // every core does the same local matmul at once
  ex.answer("time_s", t, "s")
      .book(95.6e-3, sig(3))
      .measured(kMeasuredUpProj_s, "§9.2.4, the profile on 8 TPU v2 cores",
                "the model assumes the MXUs at their peak for the whole fusion; the profile shows the "
                "fusion took what the peak allows, to the 2 digits printed")
      .explain("one core's local matmul at 23e12 FLOPs/s; the 8 cores run in parallel");
  ex.formula("time_formula", "2 · B · T · D · F / (C · 8)",
             [](const workbook::Inputs& v) {
               return 2 * in(v, "B") * in(v, "T") * in(v, "D") * in(v, "F") / (in(v, "C") * in(v, "cores"));
             },
             [](const workbook::Inputs& v) {
               // Exact: the largest local dot over the mesh of cores, shapes as XLA shards them.
               const auto dp = int64_t(in(v, "dp")), mp = int64_t(in(v, "cores")) / dp;
               const auto l = hlo::lower_einsum(
                   "btd,df->btf", hlo::parse_shape(shape_of("bf16", {int64_t(in(v, "B")) / dp, int64_t(in(v, "T")), int64_t(in(v, "D"))})),
                   hlo::parse_shape(shape_of("bf16", {int64_t(in(v, "D")), int64_t(in(v, "F")) / mp})));
               return l.flops / in(v, "C");
             })
      .exact_text("the local dot's FLOPs (2 · B/dp · T · D · F/mp) / C per core")
      .at({{"B", kBatch}, {"T", kSeq}, {"D", kDModel}, {"F", kDff}, {"C", kV2CoreFlops}, {"cores", kCores}, {"dp", kDataParallel}})
      .at({{"B", 64}, {"T", 2048}, {"D", 4096}, {"F", 16384}, {"C", 1.97e14}, {"cores", 16}, {"dp", 8}})
      .explain("the total FLOPs over all cores' peak equal one core's share over its peak when the split is even");
  ex.answer("measured_over_model", kMeasuredUpProj_s / t, "")
      .explain("the profile's 96 ms over the model's time: the MXUs near their peak ('fantastic FLOPs utilization')");
  ex.claim("matches_profile", "§9.2.4: the up-projection takes pretty much exactly the expected time (96 ms "
                              "against 95.6 ms)", kMeasuredUpProj_s / t, "")
      .about(1, sig(2))
      .explain("measured over modelled");
}

EXERCISE("ch9.reduce-scatter", "The profiled ReduceScatter after W_out: expected time on a TPU v2 4x2") {
  ex.section("§9.2.4");
  // fusion.1: bf16[8,1024,8192] → bf16[8,1024,4096], a ReduceScatter over the 2-way model axis of the
  // local partial sums Out[B_X, T, D]{U_Y} → Out[B_X, T, D_Y].
  const auto in_shape = hlo::parse_shape("bf16[8,1024,8192]{2,1,0:T(8,128)(2,1)}");
  const auto out_shape = hlo::parse_shape("bf16[8,1024,4096]{2,1,0:T(8,128)(2,1)}");
  const double v = double(hlo::layout_sizes(in_shape).padded_bytes);
  ex.answer("shard_bytes", v, "B").book(134e6, sig(3)).explain("the local input 2·8·1024·8192 bytes (no tile padding)");
  ex.answer("scattered_d", double(in_shape.dims[2] / kModelParallel), "")
      .book(double(out_shape.dims[2]), exact())
      .explain("each of the 2 model-parallel cores keeps half of D: the HLO's output bf16[8,1024,4096]");
  const Link link{kV2IciBidi / 2, kV2IciBidi, kHopLatency_s};
  const auto cost = collective_cost(Collective::reduce_scatter, {{kModelParallel, false}}, v, link);
  ex.answer("hops", cost.hops, "").book(1, exact()).explain("two cores, one link between them");
  ex.answer("time_s", cost.t_s, "s")
      .book(1.1e-3, sig(2))
      .measured(kMeasuredReduceScatter_s, "§9.2.4, the profile on a TPU v2 4x2",
                "the model counts only the link's bandwidth (and 1 µs of hop latency, which is not binding); "
                "the profile also pays the reduction's adds and the collective's set-up")
      .explain("(n − 1)/n · V / W with n = 2: each core sends the half it does not keep, 67 MB, over one "
               "direction of the link (6e10 B/s, half of the 1.2e11 both ways)");
  ex.formula("time_formula", "2 · B · T · D / 1.2e11 (the local shard over the bidirectional bandwidth)",
             [](const workbook::Inputs& x) { return 2 * in(x, "B") * in(x, "T") * in(x, "D") / in(x, "W_bidi"); },
             [](const workbook::Inputs& x) {
               const Link l{in(x, "W_bidi") / 2, in(x, "W_bidi"), 0};
               return collective_cost(Collective::reduce_scatter, {{2, false}},
                                      2 * in(x, "B") * in(x, "T") * in(x, "D"), l).t_s;
             })
      .exact_text("(n − 1)/n · V / W_one-way at n = 2, V = 2·B·T·D bytes")
      .at({{"B", 8}, {"T", kSeq}, {"D", kDModel}, {"W_bidi", kV2IciBidi}})
      .at({{"B", 16}, {"T", 4096}, {"D", 4096}, {"W_bidi", 9e10}})
      .explain("exact for a ReduceScatter between two devices: half of V crosses one direction of the link");
  ex.answer("measured_over_model", kMeasuredReduceScatter_s / cost.t_s, "")
      .explain("the profile's 1.13 ms over the model's bandwidth time");
  ex.claim("close_to_roofline", "§9.2.4: the measured ReduceScatter (1.13 ms) is really close to the roofline",
           kMeasuredReduceScatter_s / cost.t_s, "")
      .at_most(1.05)
      .explain("measured over modelled time: within 5%, what we take 'really close' to mean");
}

EXERCISE("ch9.qproj-time", "The Q projection on 8 TPU v2 cores, sharded over heads") {
  ex.section("§9.2.4");
  // Q[B_X, T, N_Y, H] = X[B_X, T, D] · W_Q[D, N_Y, H]: Megatron sharding over the heads needs X whole
  // along Y, which it is (X is sharded over the batch only), so no communication precedes or follows.
  const int64_t b = kBatch / kDataParallel, n = kHeads / kModelParallel;
  const auto x = hlo::parse_shape(shape_of("bf16", {b, kSeq, kDModel}));
  const auto w = hlo::parse_shape(shape_of("bf16", {kDModel, n, kDqkv}));
  const auto d = hlo::lower_einsum("btd,dnh->btnh", x, w);
  ex.answer("local_heads", double(n), "").explain("32 heads over the 2-way model axis");
  ex.answer("local_out_elements", double(hlo::element_count(d.output)), "")
      .explain("the local Q, " + hlo::to_string(d.output));
  ex.answer("local_weight_bytes", double(hlo::layout_sizes(w).bytes), "B").explain("W_Q's local block [8192, 16, 256] in bf16");
  ex.answer("lhs_contracting", double(d.lhs_contracting.at(0)), "").explain("D is X's dimension 2");
  ex.answer("rhs_contracting", double(d.rhs_contracting.at(0)), "").explain("and W_Q's dimension 0");
  ex.answer("flops_per_core", d.flops, "FLOPs").explain("2 · 8 · 1024 · 8192 · 16 · 256");
  const double t = d.flops / kV2CoreFlops;
  ex.answer("time_s", t, "s").explain("at 23e12 FLOPs/s per core; every core runs its share at once");
  const Matmul m{double(b * kSeq), double(kDModel), double(n * kDqkv)};
  ex.answer("local_intensity", intensity(m), "FLOPs/byte")
      .explain("[8192, 8192]·[8192, 4096] in bf16: compute-bound, as the up-projection");
  // §3's planner on the flattened projection X[T_X, D] · W_Q[D, Q_Y] (T: batch × sequence, Q: heads × H).
  const Mesh mesh = parse_mesh("X=4,Y=2");
  const auto plan = plan_matmul(parse_sharding("X[T_X, D]", mesh), parse_sharding("W[D, Q_Y]", mesh), mesh,
                                {{"T", double(kBatch * kSeq)}, {"D", double(kDModel)}, {"Q", double(kHeads * kDqkv)}},
                                Dtype::bf16);
  double comm = 0;
  for (const auto& step : plan.steps) comm += step.bytes;
  ex.answer("plan_case", plan.case_number, "").explain("§3's case 1: neither operand shards the contracting D");
  ex.answer("comm_bytes", comm, "B").explain("heads are independent: no collective before or after the projection");
  ex.answer("time_vs_up_projection", t / (2.0 * b * kSeq * kDModel * (kDff / kModelParallel) / kV2CoreFlops), "")
      .explain("N·H = 8192 output columns against the up-projection's 32768: a quarter of its time");
}
