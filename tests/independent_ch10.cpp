// Independent checks of chapter 10. Nothing here calls the library: shapes and bytes are worked by hand,
// the slice-and-average mean is written out, every executed output is rebuilt from the documented input
// entries by a plain matmul written here from the definition, and every modelled time is re-derived from
// the timing rules stated in sim/collective_matmul.hpp (the roofline of each step's matmul, the busiest
// link and the longest route of each ppermute, lockstep steps, the exact ring collective of §3) with the
// TPU v5e's numbers typed in.
#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "registry.hpp"

namespace {

// TPU v5e (§2.3): bf16 peak, HBM bandwidth, one-way ICI bandwidth per link; 1 µs per hop.
struct Chip {
  double peak = 1.97e14, hbm = 8.1e11, ici = 4.5e10, hop = 1e-6, bytes = 2;
};
const Chip kV5e{};

double roof(const Chip& c, double flops, double elements) {
  return std::max(flops / c.peak, elements * c.bytes / c.hbm);
}
// A ppermute round: the busiest link's bytes at one-way bandwidth, or the longest route's hops.
double round_s(const Chip& c, double busiest_elements, int hops) {
  return std::max(busiest_elements * c.bytes / c.ici, hops * c.hop);
}
// §3's ring AllGather (or ReduceScatter) of V bytes over n chips: both directions and ⌊n/2⌋ hops when the
// axis wraps, one direction and n − 1 hops when it does not.
double ring_collective_s(const Chip& c, int n, bool wrapped, double v) {
  return std::max((n - 1.0) / n * v / (wrapped ? 2 * c.ici : c.ici), (wrapped ? n / 2 : n - 1) * c.hop);
}

struct Times {
  double overlapped, blocking, ideal, blocking_comm, step_compute, step_comm;
};

// A cyclic shift's round on a Y axis of n: one hop on a ring, n − 1 for the end-to-end message on a line;
// a chunk of e elements loads the busiest link fully unless it goes half each way round a ring.
double shift_s(const Chip& c, int n, bool wrapped, bool bi, double e) {
  return round_s(c, wrapped && bi ? e / 2 : e, wrapped ? 1 : n - 1);
}

// A[B_X, D_Y]·W[D, F_Y]: n steps; chunk matmul [b, D/n]·[D/n, F/n]; the accumulator [b, F/n] is written by
// the first step and read and rewritten by the others; n − 1 shifts of a [b, D/n] chunk.
Times all_gather(const Chip& ch, int X, int n, bool wrapped, bool bi, double B, double D, double F) {
  const double b = B / X, c = D / n, f = F / n;
  const double first = roof(ch, 2 * b * c * f, b * c + c * f + b * f);
  const double later = roof(ch, 2 * b * c * f, b * c + c * f + 2 * b * f);
  const double comm = shift_s(ch, n, wrapped, bi, b * c);
  Times t{};
  t.overlapped = std::max(first, comm) + (n - 2) * std::max(later, comm) + later;
  t.ideal = roof(ch, 2 * b * D * f, b * D + D * f + b * f);
  t.blocking_comm = ring_collective_s(ch, n, wrapped, b * D * ch.bytes);
  t.blocking = t.ideal + t.blocking_comm;
  t.step_compute = later;
  t.step_comm = comm;
  return t;
}

// Tmp[B_X, F_Y]·W2[F_Y, D]: n steps; [b, F/n]·[F/n, D/n] into an accumulator [b, D/n] that moves after
// every step but the last.
Times reduce_scatter(const Chip& ch, int X, int n, bool wrapped, bool bi, double B, double D, double F) {
  const double b = B / X, c = D / n, f = F / n;
  const double first = roof(ch, 2 * b * f * c, b * f + f * c + b * c);
  const double later = roof(ch, 2 * b * f * c, b * f + f * c + 2 * b * c);
  const double comm = shift_s(ch, n, wrapped, bi, b * c);
  Times t{};
  t.overlapped = first + (n - 1) * std::max(later, comm);
  t.ideal = roof(ch, 2 * b * f * D, b * f + f * D + b * D);
  t.blocking_comm = ring_collective_s(ch, n, wrapped, b * D * ch.bytes);
  t.blocking = t.ideal + t.blocking_comm;
  return t;
}

// A[B_X, D_Y]·W[D_Y, F] in n tiles of F/n columns; a tile's psum is 2(n − 1) shifts of pieces [b, F/n²].
Times all_reduce(const Chip& ch, int X, int n, bool wrapped, bool bi, double B, double D, double F) {
  const double b = B / X, c = D / n, w = F / n, piece = w / n;
  const double compute = roof(ch, 2 * b * c * w, b * c + c * w + b * w);
  const double psum = 2 * (n - 1) * shift_s(ch, n, wrapped, bi, b * piece);
  Times t{};
  t.overlapped = compute + (n - 1) * std::max(compute, psum) + psum;
  t.ideal = roof(ch, 2 * b * c * F, b * c + c * F + b * F);
  t.blocking_comm = 2 * ring_collective_s(ch, n, wrapped, b * F * ch.bytes);  // AllReduce = 2 × AllGather
  t.blocking = t.ideal + t.blocking_comm;
  return t;
}

Times ffn(const Chip& ch, int X, int n, bool wrapped, bool bi, double B, double D, double F) {
  const auto g = all_gather(ch, X, n, wrapped, bi, B, D, F), s = reduce_scatter(ch, X, n, wrapped, bi, B, D, F);
  return {g.overlapped + s.overlapped, g.blocking + s.blocking, g.ideal + s.ideal, g.blocking_comm + s.blocking_comm, 0, 0};
}

// The §10 example: B = 1024, D = 2048, F = 8192 on a v5e 2x4 (no wraparound on either axis).
constexpr double kB = 1024, kD = 2048, kF = 8192;
Times book_ag() { return all_gather(kV5e, 2, 4, false, false, kB, kD, kF); }

// The entries sim::example_inputs documents, and the plain computation from the definition.
double lhs_at(long i, long k) { return double((3 * i + 5 * k) % 7) - 3; }
double w_at(long k, long j) { return double((2 * k + 7 * j) % 5) - 2; }
double w_out_at(long j, long k) { return double((5 * j + 3 * k) % 9) - 4; }

enum class Kind { all_gather, reduce_scatter, all_reduce, ffn };

// Σ (1 + i + B·j)·Out[i][j] of the plain computation.
double checksum(Kind kind, long B, long D, long F) {
  const long inner = kind == Kind::reduce_scatter ? F : D, cols = kind == Kind::reduce_scatter ? D : F;
  std::vector<double> out(static_cast<size_t>(B * cols));
  for (long i = 0; i < B; ++i)
    for (long j = 0; j < cols; ++j) {
      double s = 0;
      for (long k = 0; k < inner; ++k) s += lhs_at(i, k) * w_at(k, j);
      out[static_cast<size_t>(i * cols + j)] = s;
    }
  long out_cols = cols;
  if (kind == Kind::ffn) {  // Out = ReLU(H)·W_out, H = [B, F]
    std::vector<double> o2(static_cast<size_t>(B * D));
    for (long i = 0; i < B; ++i)
      for (long k = 0; k < D; ++k) {
        double s = 0;
        for (long j = 0; j < F; ++j) s += std::max(out[static_cast<size_t>(i * F + j)], 0.0) * w_out_at(j, k);
        o2[static_cast<size_t>(i * D + k)] = s;
      }
    out = std::move(o2);
    out_cols = D;
  }
  double sum = 0;
  for (long i = 0; i < B; ++i)
    for (long j = 0; j < out_cols; ++j) sum += (1 + double(i) + double(B) * double(j)) * out[static_cast<size_t>(i * out_cols + j)];
  return sum;
}

constexpr double kTol = 1e-9;

}  // namespace

// --- ch10.jit-sharded-matmul -------------------------------------------------------------------------
namespace {
// The mesh axes each entry of a PartitionSpec names, read from the spec as §10.1.1's code writes it:
// "P('Y', None)" gives {{"Y"}, {}}; a tuple entry such as ('x', 'y') gives both names. No library parser.
std::vector<std::vector<std::string>> spec_entries(const std::string& spec) {
  const auto open = spec.find('('), close = spec.rfind(')');
  std::vector<std::vector<std::string>> entries(1);
  std::string name;
  bool quoted = false;
  int depth = 0;
  for (char ch : spec.substr(open + 1, close - open - 1)) {
    if (ch == '\'') {
      if (quoted) entries.back().push_back(name), name.clear();
      quoted = !quoted;
    } else if (quoted) {
      name += ch;
    } else if (ch == '(') {
      ++depth;
    } else if (ch == ')') {
      --depth;
    } else if (ch == ',' && depth == 0) {
      entries.emplace_back();
    }
  }
  return entries;
}
const std::map<std::string, int> kMesh2x2{{"X", 2}, {"Y", 2}};  // jax.make_mesh((2, 2), ('X', 'Y'))
// Into how many pieces the mesh axis `axis` cuts dimension `dim` of an array created with `spec`.
int pieces_along(const std::string& spec, size_t dim, const std::string& axis) {
  int pieces = 1;
  const auto entries = spec_entries(spec);  // kept alive: a range over .at() of a temporary would dangle
  for (const auto& a : entries.at(dim))
    if (a == axis) pieces *= kMesh2x2.at(a);
  return pieces;
}
}  // namespace

INDEPENDENT("ch10.jit-sharded-matmul.w_named_d_x", "W's spec P('Y', None) parsed: how many pieces X cuts D (entry 0) into", 0) {
  return pieces_along("P('Y', None)", 0, "X");
}
INDEPENDENT("ch10.jit-sharded-matmul.plan_case", "§3's cases counted from the specs: In P('X', 'Y') and W P('Y', None) both shard D", 0) {
  // §3.2: case 1 shards the contracting D in neither operand, case 2 in one, case 3 in both (same axis).
  const bool in_d = !spec_entries("P('X', 'Y')").at(1).empty(), w_d = !spec_entries("P('Y', None)").at(0).empty();
  if (in_d && w_d && spec_entries("P('X', 'Y')").at(1) != spec_entries("P('Y', None)").at(0))
    throw std::logic_error("D sharded over different axes: not one of §3's cases");
  return 1 + (in_d ? 1 : 0) + (w_d ? 1 : 0);
}
INDEPENDENT("ch10.jit-sharded-matmul.allreduce_bytes", "local [8/2, 8192] partial sums × 2 bytes", 0) {
  return 4.0 * 8192 * 2;
}
INDEPENDENT("ch10.jit-sharded-matmul.allreduce_s", "2 × max((1/2)·V/W_uni, 1 hop) on an open axis of 2", kTol) {
  return 2 * ring_collective_s(kV5e, 2, false, 4.0 * 8192 * 2);
}
INDEPENDENT("ch10.jit-sharded-matmul.executed_checksum", "plain matmul of the documented entries, B = 8, D = 2048, F = 1024", 0) {
  return checksum(Kind::all_reduce, 8, 2048, 1024);
}

// --- ch10.slice-and-average ----------------------------------------------------------------------------
INDEPENDENT("ch10.slice-and-average.local_elements", "512 values over 2 × 4 devices", 0) { return 512.0 / (2 * 4); }
static double mean_of_shards(long k) {
  double s = 0;
  for (long shard = 0; shard < 8; ++shard) s += double(64 * shard + k);  // x[64s + k] of arange(512)
  return s / 8;
}
INDEPENDENT("ch10.slice-and-average.out_0", "mean of x[0], x[64], …, x[448]", 0) { return mean_of_shards(0); }
INDEPENDENT("ch10.slice-and-average.out_1", "mean of x[1], x[65], …, x[449]", 0) { return mean_of_shards(1); }
INDEPENDENT("ch10.slice-and-average.out_2", "mean of x[2], x[66], …, x[450]", 0) { return mean_of_shards(2); }
INDEPENDENT("ch10.slice-and-average.out_3", "mean of x[3], x[67], …, x[451]", 0) { return mean_of_shards(3); }

// --- ch10.collective-matmul ----------------------------------------------------------------------------
INDEPENDENT("ch10.collective-matmul.checksum_uni", "plain matmul of the documented entries, B = 64, D = 128, F = 256", 0) {
  return checksum(Kind::all_gather, 64, 128, 256);
}
INDEPENDENT("ch10.collective-matmul.checksum_bi", "the same plain matmul", 0) { return checksum(Kind::all_gather, 64, 128, 256); }
INDEPENDENT("ch10.collective-matmul.checksum_bi_wrapped", "the same plain matmul", 0) {
  return checksum(Kind::all_gather, 64, 128, 256);
}
INDEPENDENT("ch10.collective-matmul.ideal_s", "roofline of [512, 2048]·[2048, 2048] in bf16", kTol) { return book_ag().ideal; }
INDEPENDENT("ch10.collective-matmul.blocking_s", "ring AllGather on an open axis of 4, plus the ideal", kTol) {
  return book_ag().blocking;
}
INDEPENDENT("ch10.collective-matmul.blocking_comm_s", "3/4 · 512·2048·2 B / 4.5e10 B/s", kTol) { return book_ag().blocking_comm; }
INDEPENDENT("ch10.collective-matmul.overlapped_s", "lockstep steps by hand", kTol) { return book_ag().overlapped; }
INDEPENDENT("ch10.collective-matmul.step_compute_s", "roofline of a chunk adding into its accumulator", kTol) {
  return book_ag().step_compute;
}
INDEPENDENT("ch10.collective-matmul.step_comm_s", "512·512·2 B over one link, or 3 hops", kTol) { return book_ag().step_comm; }
INDEPENDENT("ch10.collective-matmul.speedup", "blocking over overlapped, by hand", kTol) {
  return book_ag().blocking / book_ag().overlapped;
}
INDEPENDENT("ch10.collective-matmul.overlapped_over_ideal", "overlapped over ideal, by hand", kTol) {
  return book_ag().overlapped / book_ag().ideal;
}
INDEPENDENT("ch10.collective-matmul.measured_rate_flops_per_s", "2·512·2048·2048 / 224 µs", kTol) {
  return 2.0 * 512 * 2048 * 2048 / 224e-6;
}
INDEPENDENT("ch10.collective-matmul.measured_rate_fraction_of_peak", "the rate over 1.97e14", kTol) {
  return 2.0 * 512 * 2048 * 2048 / 224e-6 / 1.97e14;
}
INDEPENDENT("ch10.collective-matmul.blocking_comm_int32_s", "3/4 · 512·2048·4 B / 4.5e10 B/s", kTol) {
  return 0.75 * 512 * 2048 * 4 / 4.5e10;
}
static Times calibrated() {
  Chip c;
  c.bytes = 4;
  c.peak = 2.0 * 512 * 2048 * 2048 / 224e-6;
  return all_gather(c, 2, 4, false, false, kB, kD, kF);
}
INDEPENDENT("ch10.collective-matmul.calibrated_overlapped_s", "lockstep steps, int32, at the measured rate", kTol) {
  return calibrated().overlapped;
}
INDEPENDENT("ch10.collective-matmul.calibrated_blocking_s", "224 µs plus the int32 AllGather", kTol) {
  return calibrated().blocking;
}
INDEPENDENT("ch10.collective-matmul.calibrated_step_comm_s", "512·512·4 B over one link", kTol) {
  return 512.0 * 512 * 4 / 4.5e10;
}
INDEPENDENT("ch10.collective-matmul.calibrated_step_compute_s", "a quarter of the measured 224 µs", kTol) { return 224e-6 / 4; }
INDEPENDENT("ch10.collective-matmul.measured_allgather_s", "311 µs − 224 µs", kTol) { return 87e-6; }
INDEPENDENT("ch10.collective-matmul.gap_jit_s", "311 µs − (224 µs + 3/4 · 512·2048·4 B / 4.5e10 B/s)", kTol) {
  return 311e-6 - (224e-6 + 0.75 * 512 * 2048 * 4 / 4.5e10);
}
INDEPENDENT("ch10.collective-matmul.gap_collective_s", "244 µs − 4 chunks at the measured rate", kTol) {
  return 244e-6 - calibrated().overlapped;
}
INDEPENDENT("ch10.collective-matmul.latency_bound_ratio", "by hand at B = 8, D = 256, F = 1024", kTol) {
  const auto t = all_gather(kV5e, 2, 4, false, false, 8, 256, 1024);
  return t.overlapped / t.blocking;
}
INDEPENDENT("ch10.collective-matmul.wrapped_uni_ratio", "by hand, Y wrapped, one direction", kTol) {
  const auto t = all_gather(kV5e, 2, 4, true, false, kB, kD, kF);
  return t.overlapped / t.blocking;
}
INDEPENDENT("ch10.collective-matmul.wrapped_bi_ratio", "by hand, Y wrapped, half each way", kTol) {
  const auto t = all_gather(kV5e, 2, 4, true, true, kB, kD, kF);
  return t.overlapped / t.blocking;
}

// --- ex10.1 ------------------------------------------------------------------------------------------
INDEPENDENT("ex10.1.checksum_uni", "plain matmul of the documented entries, B = 32, D = 128, F = 96", 0) {
  return checksum(Kind::all_reduce, 32, 128, 96);
}
INDEPENDENT("ex10.1.checksum_bi_wrapped", "the same plain matmul", 0) { return checksum(Kind::all_reduce, 32, 128, 96); }
static Times book_ar() { return all_reduce(kV5e, 2, 4, false, false, kB, kD, kF); }
INDEPENDENT("ex10.1.ideal_s", "roofline of [512, 512]·[512, 8192]", kTol) { return book_ar().ideal; }
INDEPENDENT("ex10.1.blocking_s", "the ideal plus 2 ring AllGathers of 512·8192·2 B", kTol) { return book_ar().blocking; }
INDEPENDENT("ex10.1.overlapped_s", "tiles against psums of 6 rounds, by hand", kTol) { return book_ar().overlapped; }
INDEPENDENT("ex10.1.speedup", "by hand", kTol) { return book_ar().blocking / book_ar().overlapped; }
INDEPENDENT("ex10.1.wrapped_uni_ratio", "by hand, Y wrapped, one direction", kTol) {
  const auto t = all_reduce(kV5e, 2, 4, true, false, kB, kD, kF);
  return t.overlapped / t.blocking;
}

// --- ex10.2 ------------------------------------------------------------------------------------------
INDEPENDENT("ex10.2.checksum_uni", "plain matmul of the documented entries, B = 32, D = 64, F = 128", 0) {
  return checksum(Kind::reduce_scatter, 32, 64, 128);
}
INDEPENDENT("ex10.2.checksum_bi", "the same plain matmul", 0) { return checksum(Kind::reduce_scatter, 32, 64, 128); }
INDEPENDENT("ex10.2.moved_per_step_bytes", "one [1024/2, 2048/4] accumulator in bf16", 0) { return 512.0 * 512 * 2; }
static Times book_rs() { return reduce_scatter(kV5e, 2, 4, false, false, kB, kD, kF); }
INDEPENDENT("ex10.2.ideal_s", "roofline of [512, 2048]·[2048, 2048]", kTol) { return book_rs().ideal; }
INDEPENDENT("ex10.2.blocking_s", "the ideal plus a ring ReduceScatter of 512·2048·2 B", kTol) { return book_rs().blocking; }
INDEPENDENT("ex10.2.overlapped_s", "lockstep steps by hand", kTol) { return book_rs().overlapped; }
INDEPENDENT("ex10.2.speedup", "by hand", kTol) { return book_rs().blocking / book_rs().overlapped; }

// --- ex10.3 ------------------------------------------------------------------------------------------
INDEPENDENT("ex10.3.checksum_uni", "ReLU(In·W_in)·W_out of the documented entries, B = 32, D = 64, F = 128", 0) {
  return checksum(Kind::ffn, 32, 64, 128);
}
INDEPENDENT("ex10.3.checksum_bi", "the same plain computation", 0) { return checksum(Kind::ffn, 32, 64, 128); }
static Times book_ffn() { return ffn(kV5e, 2, 4, false, false, kB, kD, kF); }
INDEPENDENT("ex10.3.ideal_s", "both rooflines", kTol) { return book_ffn().ideal; }
INDEPENDENT("ex10.3.blocking_s", "AllGather, both matmuls, ReduceScatter", kTol) { return book_ffn().blocking; }
INDEPENDENT("ex10.3.overlapped_s", "the two collective matmuls by hand", kTol) { return book_ffn().overlapped; }
INDEPENDENT("ex10.3.speedup_vs_jit", "by hand", kTol) { return book_ffn().blocking / book_ffn().overlapped; }

// --- ex10.4 ------------------------------------------------------------------------------------------
INDEPENDENT("ex10.4.speedup_all_reduce_wrapped", "by hand on a wrapped ring of 16", kTol) {
  return all_reduce(kV5e, 1, 16, true, false, kB, kD, kF).overlapped / all_reduce(kV5e, 1, 16, true, true, kB, kD, kF).overlapped;
}
INDEPENDENT("ex10.4.speedup_reduce_scatter_wrapped", "by hand on a wrapped ring of 16", kTol) {
  return reduce_scatter(kV5e, 1, 16, true, false, kB, kD, kF).overlapped /
         reduce_scatter(kV5e, 1, 16, true, true, kB, kD, kF).overlapped;
}
INDEPENDENT("ex10.4.speedup_all_gather_wrapped", "by hand on a wrapped ring of 16", kTol) {
  return all_gather(kV5e, 1, 16, true, false, kB, kD, kF).overlapped / all_gather(kV5e, 1, 16, true, true, kB, kD, kF).overlapped;
}
INDEPENDENT("ex10.4.speedup_all_reduce_open", "by hand on an open axis of 4", kTol) {
  return all_reduce(kV5e, 2, 4, false, false, kB, kD, kF).overlapped / all_reduce(kV5e, 2, 4, false, true, kB, kD, kF).overlapped;
}
INDEPENDENT("ex10.4.speedup_reduce_scatter_open", "by hand on an open axis of 4", kTol) {
  return reduce_scatter(kV5e, 2, 4, false, false, kB, kD, kF).overlapped /
         reduce_scatter(kV5e, 2, 4, false, true, kB, kD, kF).overlapped;
}
INDEPENDENT("ex10.4.speedup_reduce_scatter_latency_bound", "by hand on a wrapped 16x16", kTol) {
  return reduce_scatter(kV5e, 16, 16, true, false, kB, kD, kF).overlapped /
         reduce_scatter(kV5e, 16, 16, true, true, kB, kD, kF).overlapped;
}
