// Chapter 10: programming TPUs in JAX (§10). jit's sharded matmul and shard_map's slice-and-average,
// then the collective matmuls of §10 and its four worked problems, executed on the virtual mesh
// (sim/collective_matmul.hpp) against the plain matmul and timed step by step on a TPU v5e.
//
// Execution runs on small sizes (real numbers, every device's block compared exactly); the times use
// the book's sizes on shapes alone. Assumptions the book leaves open: bf16 elements (the dtype of its
// jit example), the chip's §2.3 peak and HBM bandwidth, one-way ICI bandwidth per link per direction,
// 1 µs per hop, and wraparound by §2.2's rules (a v5e wraps an axis only at 16 chips, so the 2x4 mesh of
// the §10 example is open on both axes).
#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "exercise.hpp"
#include "scaling/base/format.hpp"
#include "scaling/cost/collectives.hpp"
#include "scaling/cost/matmul_plan.hpp"
#include "scaling/notation/sharding.hpp"
#include "scaling/sim/collective_matmul.hpp"
#include "scaling/sim/mesh_sim.hpp"

using namespace scaling;
using sim::CmKind;
using sim::Direction;
using workbook::exact;
using workbook::rel;

static auto& chapter = workbook::define_chapter(10, "ch10", "Programming TPUs in JAX");

namespace {

// The §10 example: A[B_X, D_Y]·W[D, F_Y] on a TPU v5e with the mesh X = 2, Y = 4.
constexpr double kB = 1024, kD = 2048, kF = 8192;
constexpr int kX = 2, kY = 4;
// What §10 measured for that example (its profiles): jit with a blocking AllGather, the collective
// matmul, and the same local matmul with no sharded contracting dimension. Measurements, not computed
// answers: the model below is compared with them in a table, with the reasons they differ.
constexpr double kMeasuredJit_s = 311e-6, kMeasuredCollective_s = 244e-6, kMeasuredNoComms_s = 224e-6;

const Chip& v5e() { return chip("tpu-v5e"); }

sim::CmProblem problem(CmKind kind, int X, int Y, WrapPolicy wrap, double B, double D, double F, Direction dir,
                       int tiles = 0) {
  sim::CmProblem p;
  p.kind = kind;
  p.mesh = sim::from_slice(make_slice(v5e(), {X, Y}, wrap));
  p.x_axis = 0;
  p.y_axis = 1;
  p.B = B, p.D = D, p.F = F;
  p.direction = dir;
  p.tiles = tiles;
  return p;
}

// Timed on the v5e slice the mesh is cut from: the chip's peak and HBM, the Y axis's link (axis_link).
sim::CmTimes model(const sim::CmProblem& p, const sim::CmExecution& e = {}) {
  return sim::times(p, sim::run(p, sim::shape_inputs(p)), tpu_pods(v5e(), p.mesh.shape, 1), e);
}

// Runs `p` on real numbers (sim::example_inputs) and returns Σ (1 + i + B·j)·Out[i][j] over the whole
// output, read from the devices' blocks: a block in the wrong place changes it. A run whose blocks differ
// from the plain matmul is a defect, not an answer.
double executed_checksum(const sim::CmProblem& p) {
  const auto r = sim::run(p, sim::example_inputs(p));
  if (!r.correct || !*r.correct)
    throw std::logic_error(std::string(sim::name(p.kind)) + ": the collective matmul differs from the plain matmul");
  const long long b = static_cast<long long>(p.B) / sim::x_size(p);
  double sum = 0;
  for (int d = 0; d < sim::device_count(p.mesh); ++d) {
    const auto c = sim::device_coords(p.mesh, d);
    const int x = c[static_cast<size_t>(p.x_axis)], y = c[static_cast<size_t>(p.y_axis)];
    if (p.kind == CmKind::all_reduce && y != 0) continue;  // Out[B_X, F] is replicated over Y: one copy
    const auto& o = r.outputs[static_cast<size_t>(d)];
    const long long col0 = p.kind == CmKind::all_reduce ? 0 : y * o.cols;
    for (long long i = 0; i < o.rows; ++i)
      for (long long j = 0; j < o.cols; ++j)
        sum += (1 + static_cast<double>(x * b + i) + p.B * static_cast<double>(col0 + j)) * o.at(i, j);
  }
  return sum;
}

std::string us(double seconds) { return format_quantity(seconds, "s"); }

}  // namespace

// ---------------------------------------------------------------------------------------------------

static const workbook::Finding kWNamedDX{
    "w-named-d-x", workbook::Severity::slip, "W = P('Y', None) described as W[D_X, F]",
    "§10.1.1 creates W with the partition spec P('Y', None): its first (contracting) dimension is split over "
    "the mesh axis Y and nothing over X. The prose calls this W[D_X, F]; the lines that follow (In[B_X, D_Y] "
    "·_D W[D_Y, F] and the AllReduce over Y) use D_Y, which is what the spec says. On the 2x2 mesh both axes "
    "have size 2, so the local shapes in the HLO cannot tell the two apart. A slip in notation: the plan the book "
    "then draws (local matmul, AllReduce over Y) is the one P('Y', None) gives, so no conclusion changes."};

EXERCISE("ch10.jit-sharded-matmul", "jit's sharded matmul on a v5e 2x2: local shapes and the AllReduce") {
  ex.section("§10.1.1");
  const Mesh mesh = parse_mesh("X=2,Y=2");
  const double B = 8, D = 2048, F = 8192;
  const std::map<std::string, double> sizes{{"B", B}, {"D", D}, {"F", F}};
  const auto in = parse_sharding("In[B_X, D_Y]", mesh);  // P('X', 'Y')
  const auto w = parse_sharding("W[D_Y, F]", mesh);      // P('Y', None)
  const auto in_local = evaluate(in, mesh, {B, D}, Dtype::bf16).local_shape;
  const auto w_local = evaluate(w, mesh, {D, F}, Dtype::bf16).local_shape;
  const auto plan = plan_matmul(in, w, mesh, sizes, Dtype::bf16);
  const auto out_local = evaluate(plan.result, mesh, {B, F}, Dtype::bf16).local_shape;

  ex.answer("in_local_b", in_local[0], "").book(4, exact()).explain("the HLO parameter bf16[4,1024]: B / |X|");
  ex.answer("in_local_d", in_local[1], "").book(1024, exact()).explain("D / |Y|");
  ex.answer("w_local_d", w_local[0], "").book(1024, exact())
      .explain("W's local block is [D/Y, F] = [1024, 8192]; the HLO prints it as bf16[8192,1024], the block "
               "transposed by a copy (copy-done) so that D, the contracting dimension, is the minor one");
  ex.answer("w_local_f", w_local[1], "").book(8192, exact()).explain("the first dimension of the HLO's bf16[8192,1024]");
  ex.answer("out_local_b", out_local[0], "").book(4, exact()).explain("the fusion's output bf16[4,8192]");
  ex.answer("out_local_f", out_local[1], "").book(8192, exact());
  ex.answer("in_shards", shards(in.dims[0], mesh) * shards(in.dims[1], mesh), "").book(4, exact())
      .explain("'In is sharded 4 ways': B over X and D over Y");
  ex.answer("w_shards", shards(w.dims[0], mesh) * shards(w.dims[1], mesh), "").book(2, exact())
      .explain("'W is sharded 2 ways along the contracting dimension'");
  const auto& w_d_axes = w.dims[0].axes;  // the mesh axes that split W's D
  const bool d_over_x = std::find(w_d_axes.begin(), w_d_axes.end(), "X") != w_d_axes.end();
  ex.claim("w_named_d_x", "§10.1.1: W, created with P('Y', None), is W[D_X, F] — its D split 2 ways over X",
           d_over_x ? mesh.size_of("X") : 1, "")
      .about(2, exact())
      .erratum(kWNamedDX, "P('Y', None) splits D over Y and leaves it whole along X (1 way)")
      .explain("the number of pieces W's D is cut into along the mesh axis X");
  ex.answer("plan_case", plan.case_number, "")
      .explain("§3's case 3: both operands shard the contracting D over Y, so each device forms Out[B_X, F]{U_Y} "
               "and an AllReduce over Y finishes it — the two steps §10 lists and the HLO shows");
  const auto& step = plan.steps.at(0);
  ex.answer("allreduce_bytes", step.bytes, "B").explain("V of the AllReduce: the local [4, 8192] bf16 partial sums");
  const auto slice = make_slice(v5e(), {2, 2});
  const auto cost = collective_cost(step.op, {{2, slice.wraps[1]}}, step.bytes, ici_link(v5e()));
  ex.answer("allreduce_s", cost.t_s, "s")
      .explain("on a v5e 2x2 (no wraparound) it is latency-bound: " + us(cost.t_latency_s) + " of hops against " +
               us(cost.t_bandwidth_s) + " of bandwidth");
  auto& t = ex.table("plan", {"step", "collective", "over", "before", "after", "V"});
  t.row({"1", "(local matmul)", "", to_string(in) + " · " + to_string(w), step.before, ""});
  t.row({"2", std::string(name(step.op)), step.axes.at(0), step.before, step.after, format_quantity(step.bytes, "B")});

  // Executed: the jit version is the all-reduce collective matmul with a single tile (multiply, then
  // psum). B and D as in the book; F cut to 1024 to keep the run small. jnp.square is elementwise and
  // local, so it changes neither the shapes nor the communication; it is left out.
  ex.answer("executed_checksum", executed_checksum(problem(CmKind::all_reduce, 2, 2, WrapPolicy::automatic, B, D, 1024,
                                                           Direction::uni, 1)), "")
      .explain("Σ (1 + i + B·j)·Out[i][j] of In[B_X, D_Y]·W[D_Y, F] run on a virtual 2x2 mesh (B = 8, D = 2048, "
               "F = 1024, entries of sim::example_inputs), every device's block equal to the plain matmul");
}

EXERCISE("ch10.slice-and-average", "shard_map: the first four local elements, averaged over the mesh") {
  ex.section("§10.1.2");
  // x = arange(512) over P(('x', 'y')) on a 2x4 mesh: device (x, y) holds shard 4x + y, 64 values.
  const Mesh mesh = parse_mesh("X=2,Y=4");
  const auto local = evaluate(parse_sharding("x[N_XY]", mesh), mesh, {512}, Dtype::fp32).local_shape;
  const auto n_local = static_cast<long long>(local.at(0));
  ex.answer("local_elements", local.at(0), "")
      .derived(512 / 8, "512 // 8, the local shape the code asserts")
      .explain("x[N_XY]: 512 values over the 8 devices");
  constexpr int kTaken = 4;
  // pmean over ('x', 'y') = an AllReduce over both mesh axes on the virtual mesh, then ÷ 8. The mesh's
  // AllReduce splits the array into one shard per device, so the 4 values ride in an array of 8 (zeros after).
  const auto topo = sim::from_slice(make_slice(v5e(), {2, 4}));
  const int devices = sim::device_count(topo);
  std::vector<std::vector<double>> data(static_cast<size_t>(devices), std::vector<double>(static_cast<size_t>(devices)));
  for (int d = 0; d < devices; ++d) {
    const auto c = sim::device_coords(topo, d);
    const long long shard = c[0] * 4 + c[1];
    for (int k = 0; k < kTaken; ++k) data[static_cast<size_t>(d)][static_cast<size_t>(k)] = double(shard * n_local + k);
  }
  sim::run_on(topo, {Collective::all_reduce, {0, 1}, double(devices)}, data);
  for (int d = 1; d < devices; ++d)
    if (data[static_cast<size_t>(d)] != data[0]) throw std::logic_error("pmean: the devices disagree");
  ex.answer("out_len", kTaken, "").book(4, exact()).explain("the output spec P(None,): one replicated (4,) array");
  for (int k = 0; k < kTaken; ++k)
    ex.answer("out_" + std::to_string(k), data[0][static_cast<size_t>(k)] / devices, "")
        .explain("mean of x[64s + " + std::to_string(k) + "] over the 8 shards s");
}

EXERCISE("ch10.collective-matmul", "The AllGather collective matmul of §10: executed, timed, and the measured times") {
  ex.section("§10.1.2");
  // Executed on small sizes on the same 2x4 mesh: uni (the book's loop), bi, and bi with wraparound forced.
  const double b = 64, d = 128, f = 256;
  ex.answer("checksum_uni", executed_checksum(problem(CmKind::all_gather, kX, kY, WrapPolicy::automatic, b, d, f, Direction::uni)), "")
      .explain("A[B_X, D_Y]·W[D, F_Y] with B = 64, D = 128, F = 256 on a virtual v5e 2x4, the book's leftward ring");
  ex.answer("checksum_bi", executed_checksum(problem(CmKind::all_gather, kX, kY, WrapPolicy::automatic, b, d, f, Direction::bi)), "")
      .explain("the same, half of each chunk going each way");
  ex.answer("checksum_bi_wrapped", executed_checksum(problem(CmKind::all_gather, kX, kY, WrapPolicy::yes, b, d, f, Direction::bi)), "")
      .explain("the same with wraparound links on Y");

  // Timed at the book's sizes, bf16 at the v5e's peak.
  const auto p = problem(CmKind::all_gather, kX, kY, WrapPolicy::automatic, kB, kD, kF, Direction::uni);
  const auto t = model(p);
  ex.answer("ideal_s", t.ideal_s, "s").explain("A[512, 2048]·W[2048, 2048] on one v5e, bf16: compute-bound");
  ex.answer("blocking_s", t.blocking_s, "s").explain("AllGather over Y (open, 4 chips), then the whole local matmul");
  ex.answer("blocking_comm_s", t.blocking_comm_s, "s").explain("(n − 1)/n · V / W_uni with V = 512·2048·2 bytes");
  ex.answer("overlapped_s", t.overlapped_s, "s").explain("4 lockstep steps: chunk matmuls against 3 ppermutes");
  ex.answer("step_compute_s", t.step_compute_s, "s")
      .explain("one [512, 512]·[512, 2048] chunk adding into an accumulator kept in HBM: memory-bound");
  ex.answer("step_comm_s", t.step_comm_s, "s").explain("a [512, 512] bf16 chunk over one link");
  ex.answer("speedup", t.blocking_s / t.overlapped_s, "").explain("blocking over overlapped, bf16 model");
  ex.claim("faster_than_jit", "§10.1.2: the collective matmul is clearly faster than jit's version with its "
                              "blocking AllGather (measured 244 µs against 311 µs)",
           t.blocking_s / t.overlapped_s, "")
      .above(1)
      .explain("our model's ratio of blocking to overlapped time at the example's shapes, bf16");
  ex.answer("overlapped_over_ideal", t.overlapped_s / t.ideal_s, "")
      .explain("in bf16 each chunk's ppermute (" + us(t.step_comm_s) + ") outlasts its matmul (" + us(t.step_compute_s) +
               "), so the ppermutes set the pace");

  // The book's arrays are int32 (jnp.arange) and its no-communication matmul took 224 µs: the rate that
  // implies, and the model re-run with 4-byte elements at that rate.
  const double local_flops = 2 * (kB / kX) * kD * (kF / kY);
  const double rate = local_flops / kMeasuredNoComms_s;
  ex.answer("measured_rate_flops_per_s", rate, "FLOPs/s")
      .explain("2·512·2048·2048 FLOPs in the measured 224 µs");
  ex.answer("measured_rate_fraction_of_peak", rate / v5e().bf16_flops_per_s, "")
      .explain("of the v5e's bf16 peak: the int32 matmul runs at about a tenth of it");
  sim::CmExecution int32;
  int32.element_bytes = 4;  // the book's int32 arrays, at the chip's bf16 peak
  ex.answer("blocking_comm_int32_s", model(p, int32).blocking_comm_s, "s")
      .explain("the AllGather with 4-byte elements, against the measured_allgather_s the book's profiles imply");
  sim::CmExecution calibrated = int32;
  calibrated.measured_flops_per_s = rate;
  const auto tc = model(p, calibrated);
  ex.answer("calibrated_overlapped_s", tc.overlapped_s, "s")
      .explain("int32 elements, compute at the measured rate: every ppermute hides under its chunk");
  ex.answer("calibrated_step_comm_s", tc.step_comm_s, "s").explain("one int32 chunk over one link");
  ex.answer("calibrated_step_compute_s", tc.step_compute_s, "s").explain("one chunk matmul at the measured rate");
  ex.answer("measured_allgather_s", kMeasuredJit_s - kMeasuredNoComms_s, "s")
      .explain("what the book's profiles leave for jit's AllGather: 311 µs with it, 224 µs without");
  ex.answer("gap_jit_s", kMeasuredJit_s - tc.blocking_s, "s")
      .explain("measured jit time minus the calibrated model's: the AllGather's unmodelled costs");
  ex.answer("gap_collective_s", kMeasuredCollective_s - tc.overlapped_s, "s")
      .explain("measured collective-matmul time minus the calibrated model's: the per-step costs left out");
  ex.answer("calibrated_blocking_s", tc.blocking_s, "s").explain("the measured 224 µs plus the int32 AllGather");
  ex.claim("close_to_ideal", "§10.1.2: the collective matmul comes close to the matmul without communication "
                             "(244 µs against 224 µs, within 10%)",
           tc.overlapped_s / tc.ideal_s, "")
      .at_most(1.1)
      .explain("our ratio at the book's measured compute rate with int32 elements; at bf16 speed the ratio "
               "would be overlapped_over_ideal: the closeness depends on the slow int32 matmul");

  auto& m = ex.table("measured", {"version", "book (measured, §10)", "model, bf16 at peak",
                                  "model, int32 at the measured rate", "what the model leaves out"});
  m.row({"jit: AllGather, then matmul", us(kMeasuredJit_s), us(t.blocking_s), us(tc.blocking_s),
         "The measured AllGather took " + us(kMeasuredJit_s - kMeasuredNoComms_s) + " against " +
             us(tc.blocking_comm_s) + " for a perfect one-way ring: synchronisation, DMA set-up and links below "
             "their peak are not modelled."});
  m.row({"collective matmul", us(kMeasuredCollective_s), us(t.overlapped_s), us(tc.overlapped_s),
         "Per-step costs: issuing each ppermute, smaller matmuls running below the full-matmul rate, and the "
         "ppermute's DMA competing with the matmul for HBM; the model gives none of these a cost."});
  m.row({"no communication", us(kMeasuredNoComms_s), us(t.ideal_s), us(tc.ideal_s),
         "The book's arrays are int32 (jnp.arange), which the MXU does not multiply natively (§2.3 gives bf16 "
         "and int8 peaks only): the measured rate is a tenth of the bf16 peak. Calibrated, by construction."});

  auto& steps = ex.table("timeline", {"step", "start", "compute", "ppermute", "chunk of A on device y"});
  for (size_t i = 0; i < t.timeline.size(); ++i) {
    const auto& s = t.timeline[i];
    steps.row({std::to_string(i), us(s.start_s), us(s.compute_s), us(s.comm_s), "(y + " + std::to_string(i) + ") mod 4"});
  }

  // A Gantt chart of the four devices of one Y ring, the collective matmul against the blocking version.
  auto& g = ex.timeline("gantt", "time (µs)");
  for (int y = 0; y < kY; ++y) {
    std::vector<workbook::TimelineBar> bars;
    for (size_t i = 0; i < t.timeline.size(); ++i) {
      const auto& s = t.timeline[i];
      const int chunk = static_cast<int>((static_cast<size_t>(y) + i) % kY);  // the book's leftward ring
      bars.push_back({s.start_s * 1e6, s.device_compute_s[static_cast<size_t>(y)] * 1e6, "compute",
                      "A chunk " + std::to_string(chunk)});
      if (s.comm_s > 0) bars.push_back({s.start_s * 1e6, s.comm_s * 1e6, "comm", "ppermute"});
    }
    g.lane("device (0, " + std::to_string(y) + ") collective matmul", bars);
  }
  for (int y = 0; y < kY; ++y) {
    std::vector<workbook::TimelineBar> bars;
    for (const auto& ph : t.blocking)
      bars.push_back({ph.start_s * 1e6, ph.duration_s * 1e6, ph.comm ? "comm" : "compute", ph.label});
    g.lane("device (0, " + std::to_string(y) + ") jit, blocking", bars);
  }

  // Where the overlapped version loses. Latency: tiny shapes pay a 3-hop end-to-end message per step.
  const auto tiny = model(problem(CmKind::all_gather, kX, kY, WrapPolicy::automatic, 8, 256, 1024, Direction::uni));
  ex.answer("latency_bound_ratio", tiny.overlapped_s / tiny.blocking_s, "")
      .explain("overlapped over blocking at B = 8, D = 256, F = 1024: three ppermutes of 3 hops each against one "
               "AllGather of 3 hops");
  // Bandwidth: with wraparound the blocking AllGather uses both directions; the book's one-way ring does not.
  const auto wrapped_uni = model(problem(CmKind::all_gather, kX, kY, WrapPolicy::yes, kB, kD, kF, Direction::uni));
  const auto wrapped_bi = model(problem(CmKind::all_gather, kX, kY, WrapPolicy::yes, kB, kD, kF, Direction::bi));
  ex.answer("wrapped_uni_ratio", wrapped_uni.overlapped_s / wrapped_uni.blocking_s, "")
      .explain("the §10 sizes with wraparound on Y: the one-way ring moves each chunk over one direction only, "
               "the AllGather over both, so the blocking version wins");
  ex.answer("wrapped_bi_ratio", wrapped_bi.overlapped_s / wrapped_bi.blocking_s, "")
      .explain("the same with half of each chunk going each way: the overlapped version wins again");

  // Overlapped over blocking as F grows (B = 1024, D = 2048, v5e 2x4).
  auto& s = ex.series("ratio_vs_f", "F", "overlapped / blocking time");
  struct Variant {
    const char* label;
    WrapPolicy wrap;
    Direction dir;
    bool vmem;
  };
  for (const auto& v : {Variant{"uni, Y open", WrapPolicy::automatic, Direction::uni, false},
                        Variant{"bi, Y open", WrapPolicy::automatic, Direction::bi, false},
                        Variant{"uni, Y wrapped", WrapPolicy::yes, Direction::uni, false},
                        Variant{"bi, Y wrapped", WrapPolicy::yes, Direction::bi, false},
                        Variant{"bi, Y wrapped, accumulator in VMEM", WrapPolicy::yes, Direction::bi, true}}) {
    std::vector<double> xs, ys;
    for (double F = 64; F <= 65536; F *= 2) {
      sim::CmExecution e;
      e.accumulator_in_vmem = v.vmem;
      const auto tv = model(problem(CmKind::all_gather, kX, kY, v.wrap, kB, kD, F, v.dir), e);
      xs.push_back(F);
      ys.push_back(tv.overlapped_s / tv.blocking_s);
    }
    s.line(v.label, xs, ys, workbook::Mode::both);
  }
}

EXERCISE("ex10.1", "The AllReduce collective matmul") {
  ex.section("§10.2");
  // Executed: Out[B_X, F] tiled over F, each tile summed over Y by ppermutes while the next one multiplies.
  ex.answer("checksum_uni", executed_checksum(problem(CmKind::all_reduce, kX, kY, WrapPolicy::automatic, 32, 128, 96,
                                                      Direction::uni)), "")
      .explain("A[B_X, D_Y]·W[D_Y, F], B = 32, D = 128, F = 96 on a virtual v5e 2x4, 4 tiles");
  ex.answer("checksum_bi_wrapped", executed_checksum(problem(CmKind::all_reduce, kX, kY, WrapPolicy::yes, 32, 128, 96,
                                                             Direction::bi, 5)), "")
      .explain("the same with wraparound, both directions and 5 uneven tiles");
  const auto t = model(problem(CmKind::all_reduce, kX, kY, WrapPolicy::automatic, kB, kD, kF, Direction::uni));
  ex.answer("ideal_s", t.ideal_s, "s").explain("A[512, 512]·W[512, 8192] on one v5e");
  ex.answer("blocking_s", t.blocking_s, "s").explain("the local matmul, then an AllReduce of Out[512, 8192] over Y (open)");
  ex.answer("overlapped_s", t.overlapped_s, "s")
      .explain("4 tiles of 2048 columns: a tile's psum (6 ppermute rounds) against the next tile's matmul");
  ex.answer("speedup", t.blocking_s / t.overlapped_s, "")
      .explain("small: the AllReduce of the output dwarfs the matmul, so there is little compute to hide it under");
  const auto w = model(problem(CmKind::all_reduce, kX, kY, WrapPolicy::yes, kB, kD, kF, Direction::uni));
  ex.answer("wrapped_uni_ratio", w.overlapped_s / w.blocking_s, "")
      .explain("with wraparound the blocking AllReduce runs both ways round the ring, the one-way tiles do not: the "
               "overlapped version is slower, as §10 warns it may be");
}

EXERCISE("ex10.2", "The ReduceScatter collective matmul") {
  ex.section("§10.2");
  ex.answer("checksum_uni", executed_checksum(problem(CmKind::reduce_scatter, kX, kY, WrapPolicy::automatic, 32, 64, 128,
                                                      Direction::uni)), "")
      .explain("Tmp[B_X, F_Y]·W2[F_Y, D], B = 32, D = 64, F = 128 on a virtual v5e 2x4");
  ex.answer("checksum_bi", executed_checksum(problem(CmKind::reduce_scatter, kX, kY, WrapPolicy::yes, 32, 64, 128,
                                                     Direction::bi)), "")
      .explain("the same with wraparound and both directions");
  const auto p = problem(CmKind::reduce_scatter, kX, kY, WrapPolicy::automatic, kB, kD, kF, Direction::uni);
  const auto r = sim::run(p, sim::shape_inputs(p));
  double busiest = 0;
  for (const auto& s : r.steps)
    for (const auto& round : s.rounds) busiest = std::max(busiest, round.max_link_elements);
  ex.answer("moved_per_step_bytes", busiest * 2, "B")
      .explain("the most any link carries in a step: one [B/X, D/Y] accumulator in bf16 — never the whole "
               "[B/X, D] partial product");
  const auto t = model(p);
  ex.answer("ideal_s", t.ideal_s, "s").explain("Tmp[512, 2048]·W2[2048, 2048] on one v5e");
  ex.answer("blocking_s", t.blocking_s, "s").explain("the local matmul, then a ReduceScatter of [512, 2048] over Y");
  ex.answer("overlapped_s", t.overlapped_s, "s");
  ex.answer("speedup", t.blocking_s / t.overlapped_s, "");
}

EXERCISE("ex10.3", "An FFN block with both collective matmuls") {
  ex.section("§10.2");
  ex.answer("checksum_uni", executed_checksum(problem(CmKind::ffn, kX, kY, WrapPolicy::automatic, 32, 64, 128,
                                                      Direction::uni)), "")
      .explain("ReLU(In[B_X, D_Y]·W_in[D, F_Y])·W_out[F_Y, D], B = 32, D = 64, F = 128 on a virtual v5e 2x4");
  ex.answer("checksum_bi", executed_checksum(problem(CmKind::ffn, kX, kY, WrapPolicy::yes, 32, 64, 128, Direction::bi)), "")
      .explain("the same with wraparound and both directions");
  const auto t = model(problem(CmKind::ffn, kX, kY, WrapPolicy::automatic, kB, kD, kF, Direction::uni));
  ex.answer("ideal_s", t.ideal_s, "s").explain("both local matmuls, no communication");
  ex.answer("blocking_s", t.blocking_s, "s").explain("AllGather, both matmuls, ReduceScatter: the jit version");
  ex.answer("overlapped_s", t.overlapped_s, "s").explain("the AllGather collective matmul, then the ReduceScatter one");
  ex.answer("speedup_vs_jit", t.blocking_s / t.overlapped_s, "")
      .explain("the §10 sizes (B = 1024, D = 2048, F = 8192) on a v5e 2x4, bf16");
}

EXERCISE("ex10.4", "Bidirectional collective matmuls") {
  ex.section("§10.2");
  // On a wrapped axis (a v5e 1x16: the full pod side wraps) halves of each chunk go each way.
  auto speedup = [](CmKind kind, int X, int Y) {
    const auto u = model(problem(kind, X, Y, WrapPolicy::automatic, kB, kD, kF, Direction::uni));
    const auto b = model(problem(kind, X, Y, WrapPolicy::automatic, kB, kD, kF, Direction::bi));
    return u.overlapped_s / b.overlapped_s;
  };
  ex.answer("speedup_all_reduce_wrapped", speedup(CmKind::all_reduce, 1, 16), "")
      .explain("uni over bi, the §10 sizes on a v5e 1x16 (Y wraps): each psum's pieces go half each way");
  ex.answer("speedup_reduce_scatter_wrapped", speedup(CmKind::reduce_scatter, 1, 16), "")
      .explain("half of each accumulator goes each way: the per-step ppermute halves");
  ex.answer("speedup_all_gather_wrapped", speedup(CmKind::all_gather, 1, 16), "");
  ex.answer("speedup_all_reduce_open", speedup(CmKind::all_reduce, kX, kY), "")
      .explain("on the 2x4 without wraparound both directions of every link are already busy: no gain");
  ex.answer("speedup_reduce_scatter_open", speedup(CmKind::reduce_scatter, kX, kY), "");
  // Latency-bound: a v5e 16x16 with the same sizes leaves [64, 128] chunks, well under a hop's latency.
  ex.answer("speedup_reduce_scatter_latency_bound", speedup(CmKind::reduce_scatter, 16, 16), "")
      .explain("on a v5e 16x16 the chunks are so small that each step costs one hop's latency either way: no gain");
}
