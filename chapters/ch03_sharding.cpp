// Chapter 3: sharded arrays, the four matmul cases and the collectives that implement them
// (§3.1–3.5 and the chapter-3 solutions).
//
// The book prices collectives with simplified rules (V / W per AllGather, hop counts of |X|/2). Here
// every collective is priced twice: by the book's rule (book_collective_time_s, checked against the
// book's printed numbers) and by the exact model (collective_cost, checked against the virtual mesh).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "exercise.hpp"
#include "scaling/cost/collectives.hpp"
#include "scaling/base/format.hpp"
#include "scaling/cost/matmul_plan.hpp"
#include "scaling/sim/mesh_sim.hpp"
#include "scaling/cost/roofline.hpp"
#include "scaling/notation/sharding.hpp"
#include "scaling/hardware/topology.hpp"

using namespace scaling;
using workbook::rel;
using workbook::sig;
using workbook::within;

static auto& chapter = workbook::define_chapter(3, "ch03", "Sharded matrices and how to multiply them");

namespace {

ShardedArray shard(const char* sharding, const char* mesh, std::vector<double> shape, Dtype dtype) {
  const Mesh m = parse_mesh(mesh);
  return evaluate(parse_sharding(sharding, m), m, shape, dtype);
}

// A two-dimensional array on a mesh X=x,Y=y[,Z=z] (§3.1), for formulas evaluated at arbitrary sizes.
ShardedArray shard_on(const char* sharding, int x, int y, int z, std::vector<double> shape, Dtype dtype) {
  const std::string mesh = z > 0 ? fmt::format("X={},Y={},Z={}", x, y, z) : fmt::format("X={},Y={}", x, y);
  return shard(sharding, mesh.c_str(), std::move(shape), dtype);
}

std::string describe(const MatmulPlan& p) {
  std::string out = fmt::format("case {}:", p.case_number);
  for (const auto& s : p.steps) {
    std::string axes;
    for (const auto& a : s.axes) axes += a;
    out += fmt::format(" {} over {} ({} -> {}, {});", name(s.op), axes, s.before, s.after, format_quantity(s.bytes, "B"));
  }
  if (p.steps.empty()) out += " no communication;";
  return fmt::format("{} result {}", out, to_string(p.result));
}

// Time of every communication step of a plan on a slice whose mesh axes have the given wraparound.
double comms_time_s(const MatmulPlan& p, const Mesh& mesh, const std::map<std::string, bool>& wraps, const Link& link) {
  double t = 0;
  for (const auto& s : p.steps) t += collective_cost(s.op, mesh_axes(mesh, s.axes, wraps), s.bytes, link).t_s;
  return t;
}


// One finding for both places that round half a ring up: §3.2's hop count and solution 3.10's largest
// AllToAll distance. Severity slip: TPU axes are even, where ⌈|X|/2⌉ = ⌊|X|/2⌋, and no time depends on it.
const workbook::Finding kCeilHalfRing{
    "ceil-half-ring", workbook::Severity::slip, "hops of a bidirectional ring rounded up instead of down",
    "Footnote 3 of §3.2 (and the hop count just above it) corrects |X|/2 to ⌈|X|/2⌉; on a ring of 7 that is "
    "⌈3.5⌉ = 4, but the farthest device is min(k, 7 − k) ≤ 3 hops away either way, so 3 hops suffice: the count is "
    "⌊|X|/2⌋, which equals the book's value only for even |X|. Solution 3.10 (part 5) repeats it for the "
    "bidirectional AllToAll, whose blocks move 'a maximum distance of ceil(D/2)': ⌊D/2⌋ again. A slip: TPU axes "
    "are even, T_total = V/W_ici does not depend on the count, and the AllToAll's D²/8 is a large-D limit."};
}  // namespace

EXERCISE("ch3.local-shape", "Local shape of a sharded array") {
  const auto a = shard("A[I_X, J_Y]", "X=2,Y=2", {4, 128}, Dtype::bf16);
  ex.answer("local_rows", a.local_shape[0], "").book(2, rel(1e-12));
  ex.answer("local_cols", a.local_shape[1], "").book(64, rel(1e-12));
  ex.answer("fraction_per_device", a.bytes_per_device / (4 * 128 * bytes_per_element(Dtype::bf16)), "")
      .book(0.25, rel(1e-12))
      .explain("bytes per device over the bytes of the whole array");
  {
    using workbook::Inputs;
    using workbook::in;
    auto size = [](const Inputs& v, const char* k) { return static_cast<int>(in(v, k)); };
    const Inputs book_point{{"X", 2}, {"Y", 2}, {"I", 4}, {"J", 128}};
    const Inputs other{{"X", 4}, {"Y", 8}, {"I", 96}, {"J", 40}};
    ex.formula("fraction_formula", "A[I_X, J_Y]: each shard holds 1/(|X|·|Y|) of the array (§3.1.1)",
               [](const Inputs& v) { return 1 / (in(v, "X") * in(v, "Y")); },
               [size](const Inputs& v) {
                 const auto a = shard_on("A[I_X, J_Y]", size(v, "X"), size(v, "Y"), 0, {in(v, "I"), in(v, "J")},
                                         Dtype::bf16);
                 return a.bytes_per_device / (in(v, "I") * in(v, "J") * bytes_per_element(Dtype::bf16));
               })
        .at(book_point).at(other);
    ex.formula("local_rows_xy", "A[I_XY, J]: local shape (|I|/(|X|·|Y|), |J|), first entry (§3.1.1)",
               [](const Inputs& v) { return in(v, "I") / (in(v, "X") * in(v, "Y")); },
               [size](const Inputs& v) {
                 return shard_on("A[I_XY, J]", size(v, "X"), size(v, "Y"), 0, {in(v, "I"), in(v, "J")}, Dtype::bf16)
                     .local_shape[0];
               })
        .at(book_point).at(other);
  }
}

EXERCISE("ch3.quiz-memory", "Memory of int8[128, 2048] sharded A[I_XY, J]") {
  const auto a = shard("A[I_XY, J]", "X=2,Y=8,Z=2", {128, 2048}, Dtype::int8);
  ex.answer("local_rows", a.local_shape[0], "").book(8, rel(1e-12));
  ex.answer("bytes_per_device", a.bytes_per_device, "B").book(16384, rel(1e-12)).notes("000", 16384, rel(1e-12));
  ex.answer("total_bytes", a.total_bytes, "B").book(512 * 1024, rel(1e-12)).notes("000", 524288, rel(1e-12))
      .explain("one copy per Z-plane, two planes: 512 KiB");
  {
    using workbook::Inputs;
    using workbook::in;
    auto size = [](const Inputs& v, const char* k) { return static_cast<int>(in(v, k)); };
    ex.formula("total_formula", "total = 128 · 2048 · 2: one int8 copy per Z-plane (§3.1 pop quiz)",
               [](const Inputs& v) { return in(v, "I") * in(v, "J") * in(v, "Z"); },
               [size](const Inputs& v) {
                 return shard_on("A[I_XY, J]", size(v, "X"), size(v, "Y"), size(v, "Z"), {in(v, "I"), in(v, "J")},
                                 Dtype::int8).total_bytes;
               })
        .at({{"X", 2}, {"Y", 8}, {"Z", 2}, {"I", 128}, {"J", 2048}})
        .at({{"X", 4}, {"Y", 2}, {"Z", 3}, {"I", 64}, {"J", 100}});
  }
}

EXERCISE("ch3.jax-local-shapes", "Local shapes in the §3.1.2 JAX snippet") {
  // P('X', 'Y') is A[I_X, J_Y]; P(None, 'Y') is B[J, K_Y]; the mesh is 4x2.
  const auto a = shard("A[I_X, J_Y]", "X=4,Y=2", {8, 2048}, Dtype::bf16);
  const auto b = shard("B[J, K_Y]", "X=4,Y=2", {2048, 8192}, Dtype::bf16);
  ex.answer("a_local_rows", a.local_shape[0], "").book(2, rel(1e-12));
  ex.answer("a_local_cols", a.local_shape[1], "").book(1024, rel(1e-12));
  ex.answer("b_local_rows", b.local_shape[0], "").book(2048, rel(1e-12));
  ex.answer("b_local_cols", b.local_shape[1], "").book(4096, rel(1e-12));
  const Mesh m = parse_mesh("X=4,Y=2");
  const auto plan = plan_matmul(parse_sharding("A[I_X, J_Y]", m), parse_sharding("B[J, K_Y]", m), m,
                                {{"I", 8}, {"J", 2048}, {"K", 8192}}, Dtype::bf16);
  ex.table("plan", {"einsum BD,DF->BF with out_shardings P('X', 'Y')"}).row({describe(plan)});
  ex.answer("plan_case", plan.case_number, "")
      .explain("J is sharded in A only, so A is gathered over Y first (case 2); the result C[I_X, K_Y] already "
               "has the requested out_shardings");
}

EXERCISE("ch3.allgather-cost", "How long an AllGather takes") {
  // One axis of a v5e 16x16 (wrapped), 1 GiB gathered; then both axes.
  const auto s = make_slice("tpu-v5e", "16x16");
  const Link link = ici_link(s.chip);
  const double v = std::pow(2.0, 30);
  const auto one = slice_axes(s, {0}), both = slice_axes(s, {0, 1});
  ex.answer("t_book_rule", book_collective_time_s(Collective::all_gather, one, v, link), "s")
      .explain("the book's V / W_bidir, 1 GiB over one 16-chip axis");
  ex.answer("t_exact", collective_cost(Collective::all_gather, one, v, link).t_s, "s")
      .explain("(n − 1)/n · V / W_bidir: the book's rule leaves out the shard each device already has");
  ex.answer("t_exact_two_axes", collective_cost(Collective::all_gather, both, v, link).t_s, "s")
      .explain("both axes: twice the links, (256 − 1)/256 of V to move");
  ex.answer("hops_one_axis", collective_cost(Collective::all_gather, one, v, link).hops, "").book(8, rel(1e-12))
      .explain("|X|/2 hops on a ring of 16");
  {
    using workbook::Inputs;
    using workbook::in;
    auto ring_cost = [](Collective op, const Inputs& p) {
      const Link l{in(p, "W") / 2, in(p, "W"), 0};  // bandwidth term only: the rule's regime
      return collective_cost(op, {{static_cast<int>(in(p, "n")), true}}, in(p, "V"), l).t_s;
    };
    ex.formula("t_all_gather", "T_AllGather = V / W_ici (bidirectional ring, bandwidth-bound)",
               [](const Inputs& p) { return in(p, "V") / in(p, "W"); },
               [ring_cost](const Inputs& p) { return ring_cost(Collective::all_gather, p); })
        .at({{"V", v}, {"n", 16}, {"W", link.bidi_bytes_per_s}}).at({{"V", 3e8}, {"n", 64}, {"W", 1.8e11}})
        .approximation(workbook::rel(0.07).because("drops the (n − 1)/n of the shard each device already holds: "
                                                   "6.3% at n = 16, 1.6% at n = 64"));
    ex.formula("t_all_reduce", "T_AllReduce = 2·V / W_ici",
               [](const Inputs& p) { return 2 * in(p, "V") / in(p, "W"); },
               [ring_cost](const Inputs& p) { return ring_cost(Collective::all_reduce, p); })
        .at({{"V", v}, {"n", 16}, {"W", link.bidi_bytes_per_s}}).at({{"V", 3e8}, {"n", 64}, {"W", 1.8e11}})
        .approximation(workbook::rel(0.07).because("the same (n − 1)/n, in both halves"));
    ex.formula("t_all_to_all", "T_AllToAll = V / (4·W_ici) (bidirectional ring)",
               [](const Inputs& p) { return in(p, "V") / (4 * in(p, "W")); },
               [ring_cost](const Inputs& p) { return ring_cost(Collective::all_to_all, p); })
        .at({{"V", v}, {"n", 16}, {"W", link.bidi_bytes_per_s}}).at({{"V", 3e8}, {"n", 64}, {"W", 1.8e11}})
        .approximation(workbook::rel(0.07).because("exact chunk-hops ⌊n²/4⌋ over n(n − 1) against 1/4: "
                                                   "6.7% at n = 16, 1.6% at n = 64"));
  }
  {
    using workbook::Inputs;
    using workbook::in;
    // §3.2: the exact model, bandwidth and latency, on one wrapped ring (or several) of the inputs' size.
    auto ring = [](Collective op, const Inputs& p, int axes) {
      const Link l{in(p, "W") / 2, in(p, "W"), in(p, "T")};
      const std::vector<Axis> rings(axes, Axis{static_cast<int>(in(p, "n")), true});
      return collective_cost(op, rings, in(p, "V"), l);
    };
    ex.formula("hops_bidir", "a bidirectional AllGather needs ⌈|X|/2⌉ hops (§3.2, footnote 3)",
               [](const Inputs& p) { return std::ceil(in(p, "n") / 2); },
               [ring](const Inputs& p) { return double(ring(Collective::all_gather, p, 1).hops); })
        .at({{"V", v}, {"n", 8}, {"W", link.bidi_bytes_per_s}, {"T", link.hop_latency_s}})
        .at({{"V", 3e8}, {"n", 7}, {"W", 1.8e11}, {"T", 2e-6}})
        .erratum(kCeilHalfRing);
    ex.formula("t_hop", "T_hop = 2·V / (|X|·W_ici) (bidirectional ring, §3.2)",
               [](const Inputs& p) { return 2 * in(p, "V") / (in(p, "n") * in(p, "W")); },
               [ring](const Inputs& p) {
                 const auto c = ring(Collective::all_gather, p, 1);
                 return c.t_bandwidth_s / c.hops;
               })
        .at({{"V", v}, {"n", 16}, {"W", link.bidi_bytes_per_s}, {"T", link.hop_latency_s}})
        .at({{"V", 3e8}, {"n", 64}, {"W", 1.8e11}, {"T", 2e-6}})
        .approximation(workbook::rel(0.07).because("the same (n − 1)/n: each hop forwards shards the receiver "
                                                   "lacks, 6.3% at n = 16, 1.6% at n = 64"));
    ex.formula("t_latency_floor", "T_total = max[T_min·|X|/2, V/W_ici] (§3.2, with the per-hop latency)",
               [](const Inputs& p) {
                 return std::max(in(p, "T") * in(p, "n") / 2, in(p, "V") / in(p, "W"));
               },
               [ring](const Inputs& p) { return ring(Collective::all_gather, p, 1).t_s; })
        .at({{"V", 1e5}, {"n", 16}, {"W", link.bidi_bytes_per_s}, {"T", link.hop_latency_s}})
        .at({{"V", 3e9}, {"n", 64}, {"W", 1.8e11}, {"T", 2e-6}})
        .approximation(workbook::rel(0.02).because("latency-bound at the first point (exact), bandwidth-bound at "
                                                   "the second, where it drops the (n − 1)/n = 63/64: 1.6%"));
    ex.formula("t_multi_axis", "T_total = max[T_min·Σ|X_i|/2, V/(W_ici·n_axes)] (§3.2, two axes)",
               [](const Inputs& p) {
                 return std::max(in(p, "T") * 2 * in(p, "n") / 2, in(p, "V") / (in(p, "W") * 2));
               },
               [ring](const Inputs& p) { return ring(Collective::all_gather, p, 2).t_s; })
        .at({{"V", v}, {"n", 16}, {"W", link.bidi_bytes_per_s}, {"T", link.hop_latency_s}})
        .at({{"V", 1e5}, {"n", 8}, {"W", 1.8e11}, {"T", 2e-6}})
        .approximation(workbook::rel(0.005).because("drops (n² − 1)/n² of the data each device already holds: "
                                                    "0.4% on 16×16; the second point is latency-bound, exact"));
    ex.formula("t_reduce_scatter", "T_ReduceScatter = V / W_ici (bidirectional ring, §3.2)",
               [](const Inputs& p) { return in(p, "V") / in(p, "W"); },
               [ring](const Inputs& p) { return ring(Collective::reduce_scatter, p, 1).t_bandwidth_s; })
        .at({{"V", v}, {"n", 16}, {"W", link.bidi_bytes_per_s}, {"T", link.hop_latency_s}})
        .at({{"V", 3e8}, {"n", 64}, {"W", 1.8e11}, {"T", 2e-6}})
        .approximation(workbook::rel(0.07).because("as the AllGather: (n − 1)/n dropped, 6.3% at n = 16"));
    const auto exact_n = [&](int n) {
      return collective_cost(Collective::all_gather, {{n, true}}, v, link).t_s;
    };
    ex.claim("independent_of_ring_size", "§3.2 takeaway: a bandwidth-bound AllGather's time does not depend on the "
             "number of devices (1 GiB, exact time on a ring of 16 over a ring of 4)", exact_n(16) / exact_n(4), "")
        .about(1, sig(1))
        .explain("(15/16)/(3/4) = 1.25: independent of |X| to the wording's one digit, not exactly");
  }
  // The book's claim: in the bandwidth-bound regime the time does not depend on |X|.
  auto& t = ex.table("independent-of-n", {"ring size", "exact AllGather of 1 GiB", "the book's rule V / W, evaluated"});
  for (int n : {2, 4, 8, 16}) {
    const std::vector<Axis> ring{{n, true}};
    t.row({std::to_string(n), format_quantity(collective_cost(Collective::all_gather, ring, v, link).t_s, "s"),
           format_quantity(book_collective_time_s(Collective::all_gather, ring, v, link), "s")});
  }
}

EXERCISE("ch3.latency-threshold", "Buffer size below which an ICI hop is latency-bound") {
  const auto& v5e = chip("tpu-v5e");
  ex.answer("per_hop_bytes", v5e.ici_oneway_bytes_per_s * v5e.ici_hop_latency_s, "B").book(45e3, rel(1e-12))
      .explain("4.5e10 B/s × 1 µs: a hop carrying less than this takes the latency, not the bandwidth");
  // Exactly, for a bidirectional AllGather on a wrapped ring of 16: t_lat = 8 µs equals
  // t_bw = 15/16 · V / 9e10 at V = 8e-6 · 9e10 · 16/15; per shard that is V / 16.
  const int n = 16;
  const double v_star = (n / 2) * v5e.ici_hop_latency_s * v5e.ici_bidi_bytes_per_s * n / (n - 1.0);
  ex.answer("shard_bytes_ring16", v_star / n, "B")
      .explain("the shard size at which an AllGather over a wrapped 16-ring turns latency-bound");
  {
    using workbook::Inputs;
    using workbook::in;
    ex.formula("per_hop_threshold", "a buffer under W_uni · T_min = 4.5e10 · 1e-6 = 45 kB is latency-bound (§3.2)",
               [](const Inputs& v) { return in(v, "W") * in(v, "T"); },
               [](const Inputs& v) {
                 // one hop: an open pair, each sending its shard V/2 one way; latency and bandwidth meet at V*.
                 const Link l{in(v, "W"), 2 * in(v, "W"), in(v, "T")};
                 const auto c = collective_cost(Collective::all_gather, {{2, false}}, 1.0, l);
                 return c.t_latency_s / c.t_bandwidth_s / 2;
               })
        .at({{"W", v5e.ici_oneway_bytes_per_s}, {"T", v5e.ici_hop_latency_s}}).at({{"W", 9e10}, {"T", 2.5e-6}})
        .explain("the shard one device sends over one hop, where its bandwidth time equals the hop latency");
  }
}

EXERCISE("ch3.quiz-allgather", "AllGather_Y([E_Y, F]) on a v5e mesh X=8, Y=4") {
  // Y has 4 chips: no wraparound on a v5e (only axes of 16 wrap).
  const auto& v5e = chip("tpu-v5e");
  const Link link = ici_link(v5e);
  const double E = 2048, F = 8192;
  const auto a = shard("A[E_Y, F]", "X=8,Y=4", {E, F}, Dtype::bf16);
  const double v = E * F * 2;
  const std::vector<Axis> y_open{{4, false}}, y_wrapped{{4, true}};
  ex.answer("bytes_per_device", a.bytes_per_device, "B").book(8.4e6, sig(2));
  ex.answer("total_bytes", v, "B").book(34e6, sig(2));
  ex.answer("t_if_wrapped_book_rule", book_collective_time_s(Collective::all_gather, y_wrapped, v, link), "s")
      .book(377e-6, sig(3))
      .stated_input("Pop quiz 2: the array stated as '34MB' (exact 2048·8192·2 = 33.55e6 bytes), divided as 34e6 "
                    "by 9e10 B/s", 34e6 / link.bidi_bytes_per_s)
      .notes("000", 3.73e-4, sig(3))
      .explain("the array's own size gives 372.8 µs; the stated 34e6 bytes give 377.8 µs, printed truncated as 377");
  const auto exact = collective_cost(Collective::all_gather, y_open, v, link);
  ex.answer("t_no_wraparound", exact.t_s, "s")
      .book(560e-6, sig(2))
      .notes("000", 5.58e-6, sig(3))
      .differs("The notes' second attempt writes 3 × 1.86 as 5.58e-6 s, a slip of 100: 3 × 1.86e-4 s is 5.58e-4 s.")
      .explain("open axis: every shard crosses the middle links one way, (4 − 1)/4 · V / 4.5e10");
  ex.claim("not_latency_bound", "Pop quiz 2: at most 3 hops, a latency floor of about 3 µs, so the gather is not "
           "close to latency-bound (bandwidth time over latency time)", exact.t_bandwidth_s / exact.t_latency_s, "")
      .at_least(10);
  ex.claim("profile_slower_than_model", "Pop quiz 2: the authors' measured 680 µs is reasonable, since a real "
           "collective reaches less than the full bandwidth (our model's time is at most the measurement)",
           exact.t_s, "s")
      .at_most(680e-6);
  {
    using workbook::Inputs;
    using workbook::in;
    ex.formula("t_open_axis_formula", "T_comms = (|Y| − 1) · (V/|Y|) / W_uni (open axis: 3 · 8.4e6 / 4.5e10)",
               [](const Inputs& p) { return (in(p, "n") - 1) * (in(p, "V") / in(p, "n")) / in(p, "W"); },
               [](const Inputs& p) {
                 const Link l{in(p, "W"), 2 * in(p, "W"), 0};
                 return collective_cost(Collective::all_gather, {{static_cast<int>(in(p, "n")), false}}, in(p, "V"), l).t_s;
               })
        .at({{"V", v}, {"n", 4}, {"W", link.oneway_bytes_per_s}}).at({{"V", 1e7}, {"n", 8}, {"W", 9e10}});
  }
  ex.claim("no_wrap_doubles", "§2.2 / §3: without wraparound links a collective takes about twice as long "
           "(AllGather over the open Y axis of 4 against the same axis wrapped)",
           exact.t_s / collective_cost(Collective::all_gather, y_wrapped, v, link).t_s, "")
      .about(2, sig(1));
  ex.answer("fraction_of_measured", exact.t_s / 680e-6, "")
      .explain("our model over the authors' measured 680 µs: the profile reaches this fraction of the bandwidth");
  // E = F = 256: tiny shards, latency-bound.
  const double v_small = 256.0 * 256 * 2;
  const auto small = collective_cost(Collective::all_gather, y_open, v_small, link);
  ex.answer("small_shard_bytes", v_small / 4, "B").book(64 * 256 * 2, rel(1e-12))
      .explain("the book's '32kB' is its own 64·256·2 = 32,768 bytes (32 KiB)");
  ex.answer("small_hop_time", v_small / 4 / link.oneway_bytes_per_s, "s").book(0.7e-6, sig(1))
      .notes("000", 7.3e-7, sig(2));
  ex.answer("small_t", small.t_s, "s").book(3e-6, sig(1)).notes("000", 3e-6, sig(1))
      .explain("3 hops of 1 µs; the bandwidth term is only " + format_quantity(small.t_bandwidth_s, "s"));
  ex.answer("small_latency_bound", small.latency_bound ? 1 : 0, "").book(1, rel(1e-12));
}

EXERCISE("ch3.allreduce-cost", "ReduceScatter and AllReduce against AllGather") {
  const Link link = ici_link(chip("tpu-v5e"));
  const std::vector<Axis> ring{{16, true}};
  const double v = 1e9;
  const double ag = collective_cost(Collective::all_gather, ring, v, link).t_s;
  ex.answer("reduce_scatter_over_all_gather", collective_cost(Collective::reduce_scatter, ring, v, link).t_s / ag, "")
      .book(1, rel(1e-12));
  ex.answer("all_reduce_over_all_gather", collective_cost(Collective::all_reduce, ring, v, link).t_s / ag, "")
      .book(2, rel(1e-12))
      .explain("a ReduceScatter followed by an AllGather");
}

EXERCISE("ch3.alltoall-cost", "Why an AllToAll costs a quarter of an AllGather") {
  // On an even bidirectional ring of N, the blocks one device sends travel 1, 2, …, N/2 hops one way
  // and 1, …, N/2 − 1 the other (§3.3.1, footnote): summing the distances counts the chunk-hops.
  const int N = 8;
  double chunk_hops = 0;
  for (int k = 1; k < N; ++k) chunk_hops += std::min(k, N - k);
  ex.answer("chunk_hops_per_device", chunk_hops, "").book(N * N / 4.0, rel(1e-12)).explain("N = 8: N²/4");
  const Link link = ici_link(chip("tpu-v5e"));
  auto ratio = [&](int n) {
    const std::vector<Axis> ring{{n, true}};
    return collective_cost(Collective::all_to_all, ring, 1e9, link).t_s / collective_cost(Collective::all_gather, ring, 1e9, link).t_s;
  };
  ex.answer("ratio_n8", ratio(8), "").explain("exactly N²/4 / (N(N − 1)) = 2/7 for N = 8");
  ex.answer("ratio_n1024", ratio(1024), "").book(0.25, sig(2)).explain("the quarter holds for large rings");
  // The typed notes' aside: on a fully connected 8-device node every pair has its own link, so an
  // AllGather puts V/8 on each link and an AllToAll V/64.
  const double nodes = 8;
  ex.answer("fully_connected_gain_n8", (1 / nodes) / (1 / (nodes * nodes)), "").notes("000", 8, rel(1e-12))
      .explain("AllGather bytes per link over AllToAll bytes per link on a switch-connected 8-GPU node");
}

EXERCISE("ch3.collective-table", "The collective cost rules (§3.4 table)") {
  const auto s = make_slice("tpu-v5e", "16x16");
  const Link link = ici_link(s.chip);
  const double v = 1e8;
  auto& t = ex.table("rules", {"operation", "axes", "the book's rule, evaluated", "exact model", "exact / rule"});
  for (auto op : {Collective::all_gather, Collective::reduce_scatter, Collective::all_reduce, Collective::all_to_all})
    for (const std::vector<int>& axes : {std::vector<int>{0}, std::vector<int>{0, 1}}) {
      const auto ax = slice_axes(s, axes);
      const double book = book_collective_time_s(op, ax, v, link), exact = collective_cost(op, ax, v, link).t_s;
      t.row({std::string(name(op)), std::to_string(axes.size()), format_quantity(book, "s"),
             format_quantity(exact, "s"), format_number(exact / book, 3)});
    }
  const double one = collective_cost(Collective::all_gather, slice_axes(s, {0}), v, link).t_s;
  const double two = collective_cost(Collective::all_gather, slice_axes(s, {0, 1}), v, link).t_s;
  ex.answer("two_axes_speedup", one / two, "").book(2, sig(1))
      .explain("AllGather of the same 100 MB over one axis vs both: 1.88 exactly, since both axes move 255/256 of V");
  {
    using workbook::Inputs;
    using workbook::in;
    // §3.2's four cases, priced by the planner on a wrapped axis X of n chips (bandwidth term only).
    auto plan_time = [](const char* a, const char* b, const Inputs& p) {
      const Mesh m = parse_mesh(fmt::format("X={}", static_cast<int>(in(p, "n"))));
      const auto plan = plan_matmul(parse_sharding(a, m), parse_sharding(b, m), m,
                                    {{"I", in(p, "I")}, {"J", in(p, "J")}, {"K", in(p, "K")}}, Dtype::bf16);
      return comms_time_s(plan, m, {{"X", true}}, Link{in(p, "W") / 2, in(p, "W"), 0});
    };
    ex.formula("t_unidirectional", "unidirectional AllGather: T = V/W · (|X| − 1)/|X| (§3.4 takeaways)",
               [](const Inputs& p) { return in(p, "V") / in(p, "W") * (in(p, "n") - 1) / in(p, "n"); },
               [](const Inputs& p) {
                 // bf16 elements through the busiest link of a one-way ring on the virtual mesh
                 const auto r = sim::simulate(sim::ring(static_cast<int>(in(p, "n")), sim::Direction::uni),
                                              {Collective::all_gather, {0}, in(p, "V") / 2, true});
                 return r.max_link_elements * 2 / in(p, "W");
               })
        .at({{"V", v}, {"n", 16}, {"W", link.oneway_bytes_per_s}}).at({{"V", 6e7}, {"n", 12}, {"W", 9e10}});
    const Inputs book_point{{"I", 8192}, {"J", 4096}, {"K", 16384}, {"n", 16}, {"W", link.bidi_bytes_per_s}};
    const Inputs other{{"I", 1000}, {"J", 6000}, {"K", 3000}, {"n", 64}, {"W", 1.8e11}};
    ex.formula("case1_comms", "case 1, A[I_X, J]·B[J, K] → C[I_X, K]: no communication (§3.2)",
               [](const Inputs&) { return 0.0; },
               [plan_time](const Inputs& p) { return plan_time("A[I_X, J]", "B[J, K]", p); })
        .at(book_point).at(other);
    ex.formula("case2_comms", "case 2, A[I, J_X]·B[J, K]: AllGather A first, T = bytes(A) / W_ici (§3.2)",
               [](const Inputs& p) { return 2 * in(p, "I") * in(p, "J") / in(p, "W"); },
               [plan_time](const Inputs& p) { return plan_time("A[I, J_X]", "B[J, K]", p); })
        .at(book_point).at(other)
        .approximation(workbook::rel(0.07).because("the AllGather's (n − 1)/n: 6.3% at n = 16, 1.6% at n = 64"));
    ex.formula("case3_comms", "case 3, A[I, J_X]·B[J_X, K]: AllReduce C, T = 2·bytes(C) / W_ici (§3.2)",
               [](const Inputs& p) { return 2 * (2 * in(p, "I") * in(p, "K")) / in(p, "W"); },
               [plan_time](const Inputs& p) { return plan_time("A[I, J_X]", "B[J_X, K]", p); })
        .at(book_point).at(other)
        .approximation(workbook::rel(0.07).because("(n − 1)/n in both halves of the AllReduce"));
    ex.formula("case4_comms", "case 4, A[I_X, J]·B[J, K_X]: AllGather one operand first (here the smaller, as the planner does), "
               "T = min(bytes(A), bytes(B)) / W_ici (§3.2)",
               [](const Inputs& p) { return 2 * in(p, "J") * std::min(in(p, "I"), in(p, "K")) / in(p, "W"); },
               [plan_time](const Inputs& p) { return plan_time("A[I_X, J]", "B[J, K_X]", p); })
        .at(book_point).at(other)
        .approximation(workbook::rel(0.07).because("the AllGather's (n − 1)/n: 6.3% at n = 16"));
  }
}

EXERCISE("ex3.1", "Replication factor") {
  const auto a = shard("A[I_X, J, K]", "X=4,Y=8,Z=2", {64, 32, 16}, Dtype::bf16);
  ex.answer("replication", a.replication, "").book(16, rel(1e-12)).notes("000", 16, rel(1e-12))
      .explain("replicated over Y and Z: 8 × 2 (the shape, 64×32×16, does not matter)");
  {
    using workbook::Inputs;
    using workbook::in;
    ex.formula("replication_formula", "total size / one chip's size = Y·Z·sizeof(A) / sizeof(A) (solution 3.1)",
               [](const Inputs& v) { return in(v, "Y") * in(v, "Z"); },
               [](const Inputs& v) {
                 const auto a = shard_on("A[I_X, J]", static_cast<int>(in(v, "X")), static_cast<int>(in(v, "Y")),
                                         static_cast<int>(in(v, "Z")), {in(v, "I"), in(v, "J")}, Dtype::bf16);
                 return a.replication;
               })
        .at({{"X", 4}, {"Y", 8}, {"Z", 2}, {"I", 64}, {"J", 32}})
        .at({{"X", 2}, {"Y", 3}, {"Z", 5}, {"I", 10}, {"J", 7}})
        .explain("sizeof(A) here is one copy of the whole array, as the question asks; one chip's shard is "
                 "sizeof(A)/|X|");
  }
}

EXERCISE("ex3.2", "AllGather and AllReduce on a v4p 4x4x4") {
  const auto s = make_slice("tpu-v4p", "4x4x4");  // a full cube: every axis wraps
  const Link link = ici_link(s.chip);
  const Mesh mesh = parse_mesh("X=4,Y=4,Z=4");
  const double B = 1024, D = 4096;
  const auto x = slice_axes(s, {0}), xy = slice_axes(s, {0, 1}), z = slice_axes(s, {2});
  // AllGather_X([B_X, D_Y]) -> [B, D_Y]: V is the gathered array on one device.
  const double v_x = evaluate(parse_sharding("[B, D_Y]", mesh), mesh, {B, D}, Dtype::bf16).bytes_per_device;
  ex.answer("ag_x_book_rule", book_collective_time_s(Collective::all_gather, x, v_x, link), "s")
      .book(23e-6, sig(2)).notes("000", 2.33e-5, sig(3));
  ex.answer("ag_x_exact", collective_cost(Collective::all_gather, x, v_x, link).t_s, "s")
      .explain("3/4 of the book's rule: each device already holds a quarter");
  const double v_xy = evaluate(parse_sharding("[B, D]", mesh), mesh, {B, D}, Dtype::bf16).bytes_per_device;
  ex.answer("ag_xy_book_rule", book_collective_time_s(Collective::all_gather, xy, v_xy, link), "s")
      .book(46e-6, sig(2)).notes("000", 4.66e-5, sig(3))
      .explain("46.6 µs, which solution 3.2 prints truncated as 46 µs");
  ex.answer("ag_xy_exact", collective_cost(Collective::all_gather, xy, v_xy, link).t_s, "s")
      .explain("15/16 of the book's rule");
  ex.answer("ag_xy_hops", collective_cost(Collective::all_gather, xy, v_xy, link).hops, "").book(4, rel(1e-12))
      .explain("two hops per wrapped axis of 4: the latency floor of 4 µs");
  const double v_z = evaluate(parse_sharding("[B_X, D_Y]{U_Z}", mesh), mesh, {B, D}, Dtype::bf16).bytes_per_device;
  ex.answer("ar_z_book_rule", book_collective_time_s(Collective::all_reduce, z, v_z, link), "s")
      .book(11.6e-6, sig(3))
      .notes("000", 1.16e-5, sig(3)).differs("the notes cut 11.65 µs to 11.6 as the book does (the notes' values are "
                                             "compared rounded)")
      .explain("twice 5.83 µs = 11.65 µs; the solution and the notes print it truncated as 11.6");
  ex.answer("ar_z_exact", collective_cost(Collective::all_reduce, z, v_z, link).t_s, "s");
  {
    const auto c = collective_cost(Collective::all_gather, xy, v_xy, link);
    ex.claim("far_from_latency_floor", "Solution 3.2: the 46 µs AllGather over XY is far from its 4 µs latency "
             "floor (bandwidth time over latency time)", c.t_bandwidth_s / c.t_latency_s, "")
        .at_least(10);
  }
  {
    using workbook::Inputs;
    using workbook::in;
    // Bandwidth term of the exact model on wrapped axes of the inputs' sizes (the cube's axes all wrap).
    auto exact = [](Collective op, std::vector<Axis> axes, double bytes, const Inputs& v) {
      return collective_cost(op, axes, bytes, Link{in(v, "W") / 2, in(v, "W"), 0}).t_bandwidth_s;
    };
    auto n = [](const Inputs& v, const char* k) { return static_cast<int>(in(v, k)); };
    const Inputs book_point{{"B", B}, {"D", D}, {"X", 4}, {"Y", 4}, {"Z", 4}, {"W", link.bidi_bytes_per_s}};
    const Inputs other{{"B", 640}, {"D", 3000}, {"X", 8}, {"Y", 2}, {"Z", 16}, {"W", 1.8e11}};
    const auto factor = workbook::rel(0.34).because("the book's rule drops (n − 1)/n: 3/4 on an axis of 4, so the "
                                                    "rule is 4/3 of the exact time, 33% above it");
    ex.formula("ag_x_formula", "AllGather_X([B_X, D_Y]): T = 2BD / (W·Y) (solution 3.2)",
               [](const Inputs& v) { return 2 * in(v, "B") * in(v, "D") / (in(v, "W") * in(v, "Y")); },
               [exact, n](const Inputs& v) {
                 return exact(Collective::all_gather, {{n(v, "X"), true}}, 2 * in(v, "B") * in(v, "D") / in(v, "Y"), v);
               })
        .at(book_point).at(other).approximation(factor);
    ex.formula("ag_xy_formula", "AllGather_XY([B_X, D_Y]): T = 2BD / (2·W) (solution 3.2)",
               [](const Inputs& v) { return 2 * in(v, "B") * in(v, "D") / (2 * in(v, "W")); },
               [exact, n](const Inputs& v) {
                 return exact(Collective::all_gather, {{n(v, "X"), true}, {n(v, "Y"), true}},
                              2 * in(v, "B") * in(v, "D"), v);
               })
        .at(book_point).at(other)
        .approximation(workbook::rel(0.07).because("(XY − 1)/XY dropped: 15/16 on 4×4 (6.3%), 15/16 again at "
                                                   "the second point's 8×2"));
    ex.formula("ar_z_formula", "AllReduce_Z([B_X, D_Y]{U_Z}): T = 4BD / (X·Y·W) (solution 3.2)",
               [](const Inputs& v) { return 4 * in(v, "B") * in(v, "D") / (in(v, "X") * in(v, "Y") * in(v, "W")); },
               [exact, n](const Inputs& v) {
                 return exact(Collective::all_reduce, {{n(v, "Z"), true}},
                              2 * in(v, "B") * in(v, "D") / (in(v, "X") * in(v, "Y")), v);
               })
        .at(book_point).at(other).approximation(factor);
  }
}

EXERCISE("ex3.3", "A latency-bound AllGather") {
  const auto s = make_slice("tpu-v4p", "4x4x4");
  const Link link = ici_link(s.chip);
  const double B = 128, v = B * bytes_per_element(Dtype::bf16);
  const auto c = collective_cost(Collective::all_gather, slice_axes(s, {0}), v, link);
  ex.answer("total_bytes", v, "B").book(256, rel(1e-12));
  ex.answer("bytes_per_device", v / 4, "B").book(64, rel(1e-12));
  ex.answer("hop_time_bandwidth", v / 4 / link.oneway_bytes_per_s, "s").notes("000", 1.4e-9, sig(2))
      .explain("64 bytes at 4.5e10 B/s: about a nanosecond");
  ex.answer("hops", c.hops, "").book(2, rel(1e-12));
  ex.answer("t", c.t_s, "s").book(2e-6, sig(1)).notes("000", 2e-6, sig(1));
  ex.claim("definitely_latency_bound", "Solution 3.3: each hop's 64 bytes take about nothing, so the gather is "
           "definitely latency-bound (latency time over bandwidth time)", c.t_latency_s / c.t_bandwidth_s, "")
      .at_least(100);
}

EXERCISE("ex3.4", "Gather then multiply, or multiply then AllReduce?") {
  // X[B, D] ·_D Y[D_X, F] -> Z[B, F] on a v5p axis of 4 (wrapped). Strategy 1 gathers Y and multiplies
  // the whole thing on every chip; strategy 2 shards X's D too, multiplies locally and AllReduces Z.
  const auto& v5p = chip("tpu-v5p");
  const Link link = ici_link(v5p);
  const double c = v5p.bf16_flops_per_s, w = v5p.ici_bidi_bytes_per_s;
  ex.answer("c_over_w", c / w, "FLOPs/byte").book(2550, sig(3)).explain("4.59e14 / 1.8e11");
  const double D = 8192;
  ex.answer("max_x_s2_compute_bound_d8192", D / (2 * (c / w)), "").book(2, sig(1))
      .explain("strategy 2 is compute-bound only while X < D / (2·C/W): about 1.6 for D = 8192");
  ex.answer("d_threshold_large_batch", 2 * c / w, "").book(5100, sig(3))
      .explain("for B > C/W, strategy 2's AllReduce beats strategy 1's compute when D > 2·C/W");

  // A concrete case with the planner and the exact cost model: B = 1024, D = 8192, F = 32768, X = 4.
  const Mesh mesh = parse_mesh("X=4");
  const std::map<std::string, double> sizes{{"B", 1024}, {"D", D}, {"F", 32768}};
  const std::map<std::string, bool> wraps{{"X", true}};
  const auto s1 = plan_matmul(parse_sharding("X[B, D]", mesh), parse_sharding("Y[D_X, F]", mesh), mesh, sizes, Dtype::bf16);
  const auto s2 = plan_matmul(parse_sharding("X[B, D_X]", mesh), parse_sharding("Y[D_X, F]", mesh), mesh, sizes, Dtype::bf16);
  const double t1 = std::max(t_math_s(s1.flops_per_device, c), comms_time_s(s1, mesh, wraps, link));
  const double t2 = std::max(t_math_s(s2.flops_per_device, c), comms_time_s(s2, mesh, wraps, link));
  ex.table("plans", {"strategy", "plan", "FLOPs per chip", "comms"})
      .row({"1", describe(s1), format_quantity(s1.flops_per_device, "FLOPs"), format_quantity(comms_time_s(s1, mesh, wraps, link), "s")})
      .row({"2", describe(s2), format_quantity(s2.flops_per_device, "FLOPs"), format_quantity(comms_time_s(s2, mesh, wraps, link), "s")});
  // The exercise names the two strategies by §3.2's cases: strategy 1 is case 2, as it says; strategy 2,
  // both operands sharded along the contracting D, is case 3 by §3.2's own list, not the "Case 4" it prints.
  ex.claim("strategy1_case_label", "Exercise 3.4 calls strategy 1, AllGather_X(Y[D_X, F]) then a replicated "
           "multiply, 'Case 2' (the planner's case number shown)", s1.case_number, "")
      .about(2, workbook::exact());
  ex.claim("strategy2_case_label", "Exercise 3.4 calls strategy 2, X[B, D_X]·Y[D_X, F] -> Z[B, F]{U_X} then "
           "AllReduce_X, 'Case 4' (the planner's case number shown)", s2.case_number, "")
      .about(4, workbook::exact())
      .erratum(workbook::Finding{"ex3.4-case-4-label", workbook::Severity::slip,
                                 "Exercise 3.4 labels its strategy 2 'Case 4'; by §3.2's list it is case 3",
                                 "§3.2 lists case 3 as both inputs sharded along the contracting dimension (multiply "
                                 "the local shards, then AllReduce) and case 4 as both inputs with a non-contracting "
                                 "dimension sharded along the same axis. Strategy 2, X[B, D_X]·Y[D_X, F] followed by "
                                 "AllReduce_X, shards the contracting D in both operands and no non-contracting "
                                 "dimension at all: case 3. Only the label is off; the exercise's own description "
                                 "and solution 3.4 treat it as case 3 (an AllReduce of 2BF bytes)."});
  ex.answer("t_strategy1_example", t1, "s").explain("B = 1024, D = 8192, F = 32768, X = 4: max(T_math, T_comms)");
  ex.answer("t_strategy2_example", t2, "s").explain("same shapes: a quarter of the FLOPs, an AllReduce of 2BF bytes");
  ex.answer("s2_cheaper_comms_below_batch", D / 2, "tokens").notes("000", D / 2, rel(1e-12))
      .explain("with both comms-bound, strategy 2 sends less when B < D/2 (the AllReduce's 4BF vs the gather's 2DF)");
  {
    using workbook::Inputs;
    using workbook::in;
    // Both strategies through the planner and the exact model, on a wrapped axis X of the inputs' size.
    auto strategy = [](const char* x_sharding, const Inputs& v) {
      const Mesh m = parse_mesh(fmt::format("X={}", static_cast<int>(in(v, "X"))));
      const std::map<std::string, double> dims{{"B", in(v, "B")}, {"D", in(v, "D")}, {"F", in(v, "F")}};
      const auto plan = plan_matmul(parse_sharding(x_sharding, m), parse_sharding("Y[D_X, F]", m), m, dims, Dtype::bf16);
      return std::max(t_math_s(plan.flops_per_device, in(v, "C")),
                      comms_time_s(plan, m, {{"X", true}}, Link{in(v, "W") / 2, in(v, "W"), 0}));
    };
    const Inputs book_point{{"B", 1024}, {"D", D}, {"F", 32768}, {"X", 4}, {"C", c}, {"W", w}};
    const Inputs other{{"B", 4096}, {"D", 2048}, {"F", 6000}, {"X", 16}, {"C", 1.97e14}, {"W", 9e10}};
    ex.formula("t_strategy1_formula", "T_total(strategy 1) = max(2BDF/C, 2DF/W_ici) (solution 3.4)",
               [](const Inputs& v) {
                 const double B = in(v, "B"), D = in(v, "D"), F = in(v, "F");
                 return std::max(2 * B * D * F / in(v, "C"), 2 * D * F / in(v, "W"));
               },
               [strategy](const Inputs& v) { return strategy("X[B, D]", v); })
        .at(book_point).at(other)
        .approximation(workbook::rel(0.34).because("comms-bound at the book's point, where the gather's (n − 1)/n "
                                                   "= 3/4 on X = 4 is dropped (33%); compute-bound (exact) at the second"));
    ex.formula("t_strategy2_formula", "T_total(strategy 2) = max(2BDF/(X·C), 4BF/W_ici) (solution 3.4)",
               [](const Inputs& v) {
                 const double B = in(v, "B"), D = in(v, "D"), F = in(v, "F");
                 return std::max(2 * B * D * F / (in(v, "X") * in(v, "C")), 4 * B * F / in(v, "W"));
               },
               [strategy](const Inputs& v) { return strategy("X[B, D_X]", v); })
        .at(book_point).at(other)
        .approximation(workbook::rel(0.34).because("the AllReduce's (n − 1)/n: 3/4 at X = 4 (33%), 15/16 at X = 16"));
  }
}

EXERCISE("ex3.5", "The lowest-latency matmul on a v5p 4x4x4") {
  // Assumptions (the book prints no answer): both inputs start replicated and the output must end up
  // replicated. Then the best plan computes C[B_X, F_YZ] locally (no input communication, a 64th of the
  // FLOPs each) and AllGathers C over all three axes; or, for thin D, every chip computes everything.
  const auto s = make_slice("tpu-v5p", "4x4x4");
  const Link link = ici_link(s.chip);
  const double c = s.chip.bf16_flops_per_s, n = chips(s);
  const double gather_per_byte = collective_cost(Collective::all_gather, slice_axes(s, {0, 1, 2}), 1, link).t_bandwidth_s;
  // sharded: max(2BDF / (n·C), 2BF · g) with g the AllGather time per byte: equal when D = n·C·g
  ex.answer("d_crossover", n * c * gather_per_byte, "")
      .notes("000", 54400, sig(3))
      .differs("The notes divide 2BF by 3·1.8e11 without the (n − 1)/n = 63/64 factor of the AllGather.")
      .explain("sharded compute equals the AllGather of C at this D; above it the matmul is compute-bound");
  // replicated: 2BDF / C beats the sharded plan's AllGather (when comms-bound) while D < C·g
  ex.answer("d_replication_pays", c * gather_per_byte, "")
      .notes("000", 850, sig(2))
      .differs("Same missing 63/64 factor.")
      .explain("below this D, computing the whole product on every chip is faster than sharding and gathering");
}

EXERCISE("ex3.6", "Three shardings on a v5e 4x4") {
  // v5e 4x4: no wraparound. Sizes are left open by the book; we take I = J = K = 8192 in bf16.
  const Mesh mesh = parse_mesh("X=4,Y=4");
  const std::map<std::string, double> sizes{{"I", 8192}, {"J", 8192}, {"K", 8192}};
  const std::map<std::string, bool> wraps{{"X", false}, {"Y", false}};
  const auto& v5e = chip("tpu-v5e");
  const Link link = ici_link(v5e);
  const double I = 8192, J = 8192, K = 8192;
  const double notes_compute = I * J * K * 2 / (16 * 1.97e14);  // the notes' 2IJK / (16 · 1.97e14)
  // notes_comms < 0: the notes give no communication time for this sharding.
  auto record = [&](const std::string& key, const char* a, const char* b, const char* what, double notes_comms) {
    const auto p = plan_matmul(parse_sharding(a, mesh), parse_sharding(b, mesh), mesh, sizes, Dtype::bf16);
    ex.table(key + "-plan", {std::string(a) + " · " + b}).row({describe(p)});
    auto& comms = ex.answer(key + "_comms", comms_time_s(p, mesh, wraps, link), "s").explain(what);
    if (notes_comms >= 0) comms.notes("000", notes_comms, workbook::exact());
    ex.answer(key + "_compute", t_math_s(p.flops_per_device, v5e.bf16_flops_per_s), "s")
        .notes("000", notes_compute, workbook::exact())
        .explain("2IJK over 16 chips at 1.97e14 FLOPs/s");
  };
  record("base", "A[I_X, J_Y]", "B[J_Y, K]", "AllReduce_Y of C[I_X, K]{U_Y} over an open axis of 4",
         3 * I * K / (4 * 4.5e10));
  record("training", "A[I_X, J]", "B[J_X, K_Y]", "AllGather_X of B's contracting dimension", 3 * J * K / (8 * 4.5e10));
  record("inference", "A[I_X, J]", "B[J, K_Y]", "nothing to communicate (case 1)", -1);
}

EXERCISE("ex3.7", "Sharding an FFN block under a memory cap on a v5e 2x2") {
  // x[B, D] · W_in[D, F] · W_out[F, D], D = 8192, F = 32768, B = 128, bf16, 300 MB free per chip.
  // Shard F over both axes: x·W_in needs no communication (case 1) and h[B, F_XY]·W_out[F_XY, D] leaves
  // partial sums, AllReduced over XY (case 3).
  const Mesh mesh = parse_mesh("X=2,Y=2");
  const std::map<std::string, double> sizes{{"B", 128}, {"D", 8192}, {"F", 32768}};
  const std::map<std::string, bool> wraps{{"X", false}, {"Y", false}};
  const auto& v5e = chip("tpu-v5e");
  const Link link = ici_link(v5e);
  const auto first = plan_matmul(parse_sharding("x[B, D]", mesh), parse_sharding("Win[D, F_XY]", mesh), mesh, sizes, Dtype::bf16);
  const auto second = plan_matmul(parse_sharding("h[B, F_XY]", mesh), parse_sharding("Wout[F_XY, D]", mesh), mesh, sizes, Dtype::bf16);
  auto local = [&](const char* s, std::vector<double> shape) {
    return evaluate(parse_sharding(s, mesh), mesh, shape, Dtype::bf16).bytes_per_device;
  };
  const double weights = local("Win[D, F_XY]", {8192, 32768}) + local("Wout[F_XY, D]", {32768, 8192});
  ex.table("plans", {"step", "plan"}).row({"x · W_in", describe(first)}).row({"h · W_out", describe(second)});
  ex.answer("weight_bytes_per_chip", weights, "B")
      .notes("000", 128 * std::pow(2.0, 20), workbook::exact())
      .differs("The notes count one weight shard (128 MiB) where each chip holds two, W_in's and W_out's.")
      .explain("a quarter of each 512 MiB matrix");
  ex.answer("free_after_weights", 300e6 - weights, "B")
      .explain("what is left of the 300 MB for x, h and the output (about 2 MB each at B = 128)");
  const double compute = t_math_s(first.flops_per_device + second.flops_per_device, v5e.bf16_flops_per_s);
  ex.answer("t_compute", compute, "s").notes("000", 174e-6, sig(3));
  const double comms = comms_time_s(second, mesh, wraps, link);
  ex.answer("t_comms", comms, "s")
      .notes("000", 46.6e-6, sig(3))
      .differs("The notes price the AllReduce as V/W_uni, without the (n − 1)/n = 3/4 of a 4-chip group.");
  ex.answer("compute_bound", compute > comms ? 1 : 0, "").notes("000", 1, rel(1e-12));
}

EXERCISE("ex3.8", "The four collectives on the virtual mesh") {
  // One wrapped axis of 16 v5e chips; bf16 arrays from 8 KiB to 512 MiB. Small sizes run on real data,
  // large ones count only.
  const System v5e_16 = tpu_pods(chip("tpu-v5e"), {16}, 1);  // its link figures; the ring is wrapped below
  const auto ring = sim::ring(16, sim::Direction::bi);
  auto& s = ex.series("collectives", "array size V (bytes)", "simulated time (s)");
  double first_bw_bound_ag = 0, crossover_ag = 0;
  for (auto op : {Collective::all_gather, Collective::reduce_scatter, Collective::all_reduce, Collective::all_to_all}) {
    std::vector<double> x, y;
    for (double v = 8192; v <= 512.0 * 1024 * 1024; v *= 4) {
      const double elements = v / 2;
      const bool small = elements * 16 <= 4e6;
      const auto r = sim::simulate(ring, {op, {0}, elements, !small});
      if (small && !r.correct) throw std::logic_error("simulated " + std::string(name(op)) + " gave a wrong result");
      const auto t = sim::to_time(r, 2, v5e_16);
      x.push_back(v);
      y.push_back(t.t_s);
      if (op == Collective::all_gather && first_bw_bound_ag == 0 && t.t_bandwidth_s > t.t_latency_s) first_bw_bound_ag = v;
    }
    // The knee, solved exactly: the simulated latency is fixed and its bandwidth time linear in V, so the
    // two meet at V* = t_latency · V / t_bandwidth; the plot gets that point, not just the sweep's.
    const double v_big = x.back();
    const auto t_big = sim::to_time(sim::simulate(ring, {op, {0}, v_big / 2, true}), 2, v5e_16);
    const double knee = t_big.t_latency_s * v_big / t_big.t_bandwidth_s;
    const auto at = std::lower_bound(x.begin(), x.end(), knee) - x.begin();
    x.insert(x.begin() + at, knee);
    y.insert(y.begin() + at, t_big.t_latency_s);
    if (op == Collective::all_gather) crossover_ag = knee;
    s.line(std::string(name(op)), x, y);
  }
  auto sim_time = [&](Collective op, double v) {
    return sim::to_time(sim::simulate(ring, {op, {0}, v / 2, true}), 2, v5e_16).t_s;
  };
  const double big = 512.0 * 1024 * 1024;
  ex.answer("all_gather_512mib", sim_time(Collective::all_gather, big), "s");
  ex.answer("reduce_scatter_512mib", sim_time(Collective::reduce_scatter, big), "s");
  ex.answer("all_reduce_512mib", sim_time(Collective::all_reduce, big), "s");
  ex.answer("all_to_all_512mib", sim_time(Collective::all_to_all, big), "s");
  ex.answer("all_gather_crossover", crossover_ag, "B")
      .explain("the array size at which the AllGather's bandwidth time equals its latency: bandwidth-bound above");
  ex.answer("all_gather_bandwidth_bound_from", first_bw_bound_ag, "B")
      .explain("the smallest array of the sweep (powers of 4) whose AllGather is bandwidth-bound");
}

EXERCISE("ex3.9", "Multiply shards, then AllReduce or ReduceScatter") {
  // A[N, M] sharded A[I, J_X] over 4 devices, B[M, K] replicated. Device d owns A's columns
  // [d·M/4, (d+1)·M/4) and computes O_d = A[:, J_d] · B[J_d, :], a full N×K partial sum; an AllReduce
  // on the virtual mesh sums them. Integer-valued entries keep every sum exact.
  const int N = 8, M = 16, K = 12, devices = 4;
  auto a = [](int i, int j) { return double((3 * i + 5 * j) % 7) - 3; };
  auto b = [](int i, int j) { return double((2 * i + 7 * j) % 5) - 2; };
  std::vector<std::vector<double>> partial(devices, std::vector<double>(N * K));
  for (int d = 0; d < devices; ++d)
    for (int n = 0; n < N; ++n)
      for (int k = 0; k < K; ++k)
        for (int m = d * M / devices; m < (d + 1) * M / devices; ++m) partial[d][n * K + k] += a(n, m) * b(m, k);
  auto reduced = partial;
  const auto ring = sim::ring(devices, sim::Direction::bi);
  sim::run_on(ring, {Collective::all_reduce, {0}, double(N * K)}, reduced);
  auto scattered = partial;
  sim::run_on(ring, {Collective::reduce_scatter, {0}, double(N * K)}, scattered);
  double err_all_reduce = 0, err_scatter = 0;
  for (int n = 0; n < N; ++n)
    for (int k = 0; k < K; ++k) {
      double full = 0;
      for (int m = 0; m < M; ++m) full += a(n, m) * b(m, k);
      for (int d = 0; d < devices; ++d) err_all_reduce = std::max(err_all_reduce, std::fabs(reduced[d][n * K + k] - full));
      const int owner = n / (N / devices);  // ReduceScatter over N: rows [r·N/4, (r+1)·N/4) end on device r
      err_scatter = std::max(err_scatter, std::fabs(scattered[owner][n * K + k] - full));
    }
  ex.answer("max_error_all_reduce", err_all_reduce, "").explain("largest difference from the unsharded product, any device");
  ex.answer("max_error_reduce_scatter", err_scatter, "").explain("the same for the ReduceScatter onto N");
  // Communication: gathering A moves N·M per device group, reduce-scattering O moves N·K: ratio M/K.
  const auto gather_a = sim::simulate(ring, {Collective::all_gather, {0}, double(N * M)});
  const auto scatter_o = sim::simulate(ring, {Collective::reduce_scatter, {0}, double(N * K)});
  ex.answer("comms_ratio_gather_over_scatter", gather_a.max_link_elements / scatter_o.max_link_elements, "")
      .book(double(M) / K, rel(1e-12))
      .explain("busiest-link elements of AllGather(A) over ReduceScatter(O) on the virtual ring: M/K for M = 16, K = 12");
}

EXERCISE("ex3.10", "Where the AllToAll's factor of 4 comes from") {
  // An N×N matrix sharded over a ring of D devices; counts of scalars on one link, from the simulator.
  const double N = 64;
  const int D = 8;
  const double e = N * N;
  auto busiest = [&](sim::Op op, sim::Direction links, int d) {
    return sim::simulate(sim::ring(d, links), {op, {0}, d == D ? e : double(d) * d * 4, d != D}).max_link_elements;
  };
  const double ag_uni = busiest(Collective::all_gather, sim::Direction::uni, D);
  const double a2a_uni = busiest(Collective::all_to_all, sim::Direction::uni, D);
  const double ag_bi = busiest(Collective::all_gather, sim::Direction::bi, D);
  const double a2a_bi = busiest(Collective::all_to_all, sim::Direction::bi, D);
  {
    using workbook::Inputs;
    using workbook::in;
    auto uni = [](sim::Op op, const Inputs& v) {
      const int d = static_cast<int>(in(v, "D"));
      return sim::simulate(sim::ring(d, sim::Direction::uni), {op, {0}, in(v, "N") * in(v, "N"), true}).max_link_elements;
    };
    ex.formula("ag_uni_formula", "AllGather, unidirectional ring: N²(D − 1)/D scalars per link",
               [](const Inputs& v) { return in(v, "N") * in(v, "N") * (in(v, "D") - 1) / in(v, "D"); },
               [uni](const Inputs& v) { return uni(Collective::all_gather, v); })
        .at({{"N", N}, {"D", D}}).at({{"N", 60}, {"D", 6}});
    ex.formula("a2a_uni_formula", "AllToAll, unidirectional ring: N²(D − 1)/(2D) scalars per link",
               [](const Inputs& v) { return in(v, "N") * in(v, "N") * (in(v, "D") - 1) / (2 * in(v, "D")); },
               [uni](const Inputs& v) { return uni(Collective::all_to_all, v); })
        .at({{"N", N}, {"D", D}}).at({{"N", 60}, {"D", 6}});
  }
  ex.answer("ag_uni_link_scalars", ag_uni, "").derived(N * N * (D - 1) / D, "N²(D − 1)/D, solution 3.10 part 1")
      .notes("000", (D - 1) * (N / D) * N, rel(1e-12)).explain("N = 64, D = 8");
  ex.answer("a2a_uni_link_scalars", a2a_uni, "").derived(N * N * (D - 1) / (2.0 * D), "N²(D − 1)/(2D), part 2")
      .notes("000", N * N * (D - 1) / (2.0 * D), rel(1e-12));
  ex.answer("a2a_over_ag_uni", a2a_uni / ag_uni, "").book(0.5, rel(1e-12));
  ex.answer("bi_over_uni_ag", ag_bi / ag_uni, "").book(0.5, rel(1e-12))
      .explain("both directions carry half each; with D even the antipodal shard is split in two");
  ex.answer("a2a_gain_bi_d8", a2a_uni / a2a_bi, "").explain("D = 8: (D − 1)·D / (D²/4) = 3.5");
  ex.answer("ag_over_a2a_bi_d8", ag_bi / a2a_bi, "").explain("D = 8: also 3.5");
  const int big = 256;
  const double gain_big = busiest(Collective::all_to_all, sim::Direction::uni, big) / busiest(Collective::all_to_all, sim::Direction::bi, big);
  ex.answer("a2a_gain_bi_d256", gain_big, "").book(4, sig(1)).notes("000", 4, sig(1))
      .explain("the factor of 4 (D²/2 against D²/8 chunk-hops) appears as D grows");
  const double ratio_big = busiest(Collective::all_gather, sim::Direction::bi, big) / busiest(Collective::all_to_all, sim::Direction::bi, big);
  ex.answer("ag_over_a2a_bi_d256", ratio_big, "").book(4, sig(1)).notes("000", 4, sig(1));
  {
    using workbook::Inputs;
    using workbook::in;
    ex.formula("a2a_bi_max_distance", "largest distance a block moves in a bidirectional AllToAll = ceil(D/2) "
               "(solution 3.10 part 5)",
               [](const Inputs& v) { return std::ceil(in(v, "D") / 2); },
               [](const Inputs& v) {
                 const Link l = ici_link(chip("tpu-v5e"));
                 return double(collective_cost(Collective::all_to_all, {{static_cast<int>(in(v, "D")), true}}, 1e6, l).hops);
               })
        .at({{"D", D}}).at({{"D", 7}})
        .erratum(kCeilHalfRing, "right for even D (the first point), one too many for odd D");
    ex.formula("a2a_bi_blocks", "bidirectional AllToAll: D/2 + (D/2 − 1) + … = (D/2)(D/2 + 1)/2 blocks of N²/D² per "
               "link, D²/8 for large D (solution 3.10 part 5)",
               [](const Inputs& v) { return in(v, "D") / 2 * (in(v, "D") / 2 + 1) / 2; },
               [](const Inputs& v) {
                 const int d = static_cast<int>(in(v, "D"));
                 const double e = double(d) * d * 4;  // N = 2D: blocks of 4 scalars
                 return sim::simulate(sim::ring(d, sim::Direction::bi), {Collective::all_to_all, {0}, e, true})
                            .max_link_elements / (e / (double(d) * d));
               })
        .at({{"D", D}}).at({{"D", 64}})
        .approximation(rel(0.26).because("the sum counts the antipodal block whole on one side; split between "
                                         "the two directions the busiest link carries D²/8 exactly, so the sum is "
                                         "D/4 blocks high: 25% at D = 8, 3% at D = 64 (the book's 'large D' limit)"));
  }
}
