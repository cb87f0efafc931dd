#pragma once
// §10: collective matmuls. A sharded matmul that needs a collective over the model axis Y is split into
// n = |Y| steps; in each step a device multiplies one chunk while a ppermute moves the next one, so the
// communication hides behind the compute. Executed on the virtual mesh (ppermute.hpp) on real numbers
// and checked against the plain matmul, or on shapes alone at any size, and timed step by step.
//
// The problems, on a mesh with a batch axis X and a model axis Y (b = B/|X|):
//   all_gather (§10's example): A[B_X, D_Y] ·_D W[D, F_Y] -> Out[B_X, F_Y]. Rather than AllGather A
//     first, a device multiplies the D/Y-chunk of A it holds by the matching D/Y rows of its W and
//     passes the chunk to its neighbour; after n steps it has used every chunk (n − 1 ppermutes of a
//     [b, D/Y] chunk). The book's loop: the chunk moves to the left (position p sends to p − 1).
//   reduce_scatter (ex10.2): Tmp[B_X, F_Y] ·_F W2[F_Y, D] -> Out[B_X, D_Y]. Rather than compute the
//     whole partial product [b, D] and ReduceScatter it, each step computes the partial product of one
//     D/Y block and adds it to an accumulator that travels round the ring: only [b, D/Y] ever moves, and
//     the accumulator of block y finishes on device y.
//   all_reduce (ex10.1): A[B_X, D_Y] ·_D W[D_Y, F] -> Out[B_X, F] (replicated over Y). Out is cut into
//     column tiles; while tile j is multiplied, the partial sums of tile j − 1 are summed over Y by a
//     ring ReduceScatter and a ring AllGather made of ppermutes. One tile is the blocking version.
//   ffn (ex10.3): In[B_X, D_Y] ·_D W_in[D, F_Y] -> H[B_X, F_Y]; H = ReLU(H); H ·_F W_out[F_Y, D] ->
//     Out[B_X, D_Y]: the all_gather algorithm, then the reduce_scatter one. (The ReLU is why W_in·W_out
//     cannot be multiplied first.)
//
// Direction uni: one stream. bi (ex10.4): every chunk, accumulator or piece is split in two halves
// along its Y-sharded dimension (the first ⌈w/2⌉ columns and the rest), one streaming to the left and
// one to the right in the same rounds. On a wrapped Y axis that halves the busiest link's load. On an
// open axis it cannot help: a cyclic shift along a line already loads both directions of every link —
// the message from one end to the other runs back along the whole line — so the busiest link carries
// a whole chunk per round either way, and the end-to-end message costs |Y| − 1 hops of latency.
//
// Timing (lockstep: a step lasts as long as the longer of its compute and its communication):
//   compute of a step: the §1.1 roofline of its multiply-adds on one chip, max(FLOPs / peak, HBM bytes /
//     HBM bandwidth), counting m·k + k·n elements read and m·n written, plus m·n read when adding into
//     an accumulator kept in HBM between steps (CmExecution::accumulator_in_vmem drops that read); the
//     two halves of a bidirectional step count as one fused matmul (a shared operand or output passes
//     once). The slowest device sets the step.
//   communication of a step: its ppermute rounds one after another, each max(busiest link's bytes /
//     one-way link bandwidth (axis_link of the System's Y axis), hops × hop latency), the shape of the
//     collective model (collectives.hpp).
//   overlapped = Σ over steps of max(compute, communication)
//   ideal      = the local matmul(s) in one piece, without communication (what §10 measures as 224 µs)
//   blocking   = ideal + the collective over Y from collectives.hpp (the jit version: AllGather first,
//                or ReduceScatter / AllReduce after)
// Not modelled: the elementwise adds inside a ring psum and the ReLU, a fixed cost per step (issuing a
// ppermute, synchronising), the MXU's lower efficiency on smaller matmuls, and HBM contention between a
// step's matmul and its ppermute.
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "scaling/cost/collectives.hpp"
#include "scaling/hardware/chip.hpp"
#include "scaling/hardware/system.hpp"
#include "scaling/sim/ppermute.hpp"

namespace scaling::sim {

enum class CmKind { all_gather, reduce_scatter, all_reduce, ffn };
CmKind parse_cm_kind(std::string_view text);  // "all-gather", "reduce-scatter", "all-reduce", "ffn"
std::string_view name(CmKind k);


struct CmProblem {
  CmKind kind = CmKind::all_gather;
  Topology mesh;              // two axes; wraps per axis (links bi, or uni for + direction only)
  int x_axis = 0, y_axis = 1;  // which mesh axis is X (batch) and which is Y (model)
  double B = 0, D = 0, F = 0;
  Direction direction = Direction::uni;  // one stream of chunks, or two (mesh_sim.hpp's Direction)
  int tiles = 0;  // all_reduce only: column tiles of Out; 0 means |Y|
};

// A dimension that its shards do not divide, or out of range. `dimension` is "B", "D" or "F".
struct ShapeError : std::invalid_argument {
  ShapeError(std::string dimension, const std::string& message);
  std::string dimension;
};

constexpr double kMaxDimension = 1099511627776.0;  // 2^40: B, D, F and their shards stay exact integers
constexpr int kMaxTiles = 4096;
// Execution on real numbers holds every device's blocks and the global arrays in doubles, and the plain
// matmul does B·D·F multiply-adds (twice for ffn): both are capped.
constexpr double kMaxHeldValues = 33554432.0;        // 2^25 values (256 MiB of doubles)
constexpr double kMaxMultiplyAdds = 1073741824.0;    // 2^30

// Throws ShapeError for a dimension that is not a positive whole number ≤ 2^40 or that its shards do
// not divide; std::invalid_argument for a mesh that is not two distinct axes, bad tiles, or uni links
// on an open Y axis.
void validate(const CmProblem& p);
int y_size(const CmProblem& p);
int x_size(const CmProblem& p);
int tiles(const CmProblem& p);  // all_reduce: the tiles actually used
double held_values(const CmProblem& p);     // values a run on real numbers holds (devices and global arrays)
double multiply_adds(const CmProblem& p);   // of the plain computation
// Throws std::invalid_argument when a run on real numbers would exceed kMaxHeldValues or kMaxMultiplyAdds.
void check_executable(const CmProblem& p);

// The global operands. all_gather, all_reduce: lhs = A [B, D], w = W [D, F]. reduce_scatter: lhs = Tmp
// [B, F], w = W2 [F, D]. ffn: lhs = In [B, D], w = W_in [D, F], w_out = W_out [F, D].
struct CmInputs {
  Block lhs, w, w_out;
};
// Small whole numbers, so every sum is exact in double precision:
//   lhs[i][k] = ((3i + 5k) mod 7) − 3,  w[k][j] = ((2k + 7j) mod 5) − 2,  w_out[j][k] = ((5j + 3k) mod 9) − 4.
CmInputs example_inputs(const CmProblem& p);  // calls check_executable first
CmInputs shape_inputs(const CmProblem& p);    // shapes only: counts and times at any size
// The unsharded computation: lhs·w (ffn: ReLU(lhs·w)·w_out).
Block plain_output(const CmProblem& p, const CmInputs& in);

struct CmStep {
  std::vector<double> flops;         // per device, of this step's multiply-adds
  std::vector<double> hbm_elements;  // per device, operands read, and a result's first write
  // per device, the read and rewrite of an accumulator a later step adds into: HBM traffic when the
  // accumulator lives in HBM between steps, none when it stays in VMEM
  std::vector<double> accumulator_elements;
  std::vector<LinkTraffic> rounds;   // its ppermute rounds, one after another
};

struct CmRun {
  std::vector<CmStep> steps;
  // Per device: its block of Out (all_gather: Out[x, F block y]; reduce_scatter, ffn: Out[x, D block y];
  // all_reduce: the whole row block Out[x, :]).
  std::vector<Block> outputs;
  std::optional<bool> correct;  // with values: every device holds exactly its block of plain_output
};

// Runs the collective matmul. With `in` holding values it computes and checks them; with shape-only
// inputs it only counts. Validates `p` and the inputs' shapes first.
CmRun run(const CmProblem& p, const CmInputs& in);

// What a timing takes besides the hardware, which comes from a System (hardware/system.hpp): the chip's
// peak and HBM bandwidth, and the Y axis's link by axis_link's one conversion (collectives.hpp: one
// direction of one link, hop latency). These are choices of the run, not figures of the machine.
struct CmExecution {
  Dtype dtype = Dtype::bf16;  // the chip's peak for this dtype's column (bf16 or int8), and the element size
  double element_bytes = 0;   // 0: dtype's size; e.g. 4 for int32 arrays multiplied at the bf16 peak (§10's arrays)
  double measured_flops_per_s = 0;  // 0: the chip's peak; a measured rate in its place (a calibration)
  // Where an accumulator waits between steps: in HBM (read back each step: the default, the book's loop
  // carries it as an array) or in VMEM (§2: on-chip, e.g. 128 MiB on v5e; only the first write counts).
  bool accumulator_in_vmem = false;
};

struct TimelineStep {
  double start_s, compute_s, comm_s;
  std::vector<double> device_compute_s;  // per device (compute_s is the largest)
};

struct Phase {  // one bar of the blocking version
  std::string label;
  bool comm;
  double start_s, duration_s;
};

struct CmTimes {
  std::vector<TimelineStep> timeline;
  double step_compute_s;  // the longest compute of a step
  double step_comm_s;     // the longest communication of a step
  double overlapped_s, blocking_s, ideal_s;
  double blocking_comm_s;           // the collective(s) of the blocking version
  std::vector<Phase> blocking;      // its phases in order
};

// `s` is the machine the mesh is cut from: its fast axis p.y_axis is the mesh's Y axis (same size) and
// gives the link; the mesh's own wraparound and direction stay the problem's. Throws std::invalid_argument
// for a System whose axes do not match the mesh, or without ICI/NVLink figures on Y.
CmTimes times(const CmProblem& p, const CmRun& r, const System& s, const CmExecution& e = {});

}  // namespace scaling::sim
