#pragma once
// What a collective matmul (§10) needs from the virtual mesh: blocks of a matrix held per device,
// local multiply-adds on them, and ppermutes — every device sends a whole block to the device a fixed
// number of places along one mesh axis — possibly several at once sharing the links (a bidirectional
// algorithm sends one block each way in the same round). Each round routes every message over explicit
// directed links and counts the elements each link carries, as the virtual mesh of mesh_sim.hpp does
// for whole collectives.
//
// A block may hold its values or only its shape. Shape-only blocks travel and multiply exactly like
// full ones but do no arithmetic, so an algorithm written once counts the same links and FLOPs at the
// book's sizes (without allocating them) as it executes on small ones.
#include <vector>

#include "scaling/sim/mesh_sim.hpp"

namespace scaling::sim {

// A dense row-major block of a matrix, as one device holds it.
struct Block {
  long long rows = 0, cols = 0;
  std::vector<double> values;  // rows·cols values, or empty when the block is shape-only

  double elements() const { return static_cast<double>(rows) * static_cast<double>(cols); }
  bool has_values() const;  // a block of zero elements counts as holding (all of) its values
  double& at(long long r, long long c) { return values[static_cast<size_t>(r * cols + c)]; }
  double at(long long r, long long c) const { return values[static_cast<size_t>(r * cols + c)]; }
};

Block shape_only(long long rows, long long cols);
Block zeros(long long rows, long long cols);
// Rows [r0, r1) and columns [c0, c1) of b, as a new block (shape-only when b is).
Block sub_block(const Block& b, long long r0, long long r1, long long c0, long long c1);
// Places `part` at row r0, column c0 of `into` (values only when both hold values).
void put_block(Block& into, const Block& part, long long r0, long long c0);
// dst += src, element by element (same shapes).
void add_into(Block& dst, const Block& src);
// Applies max(x, 0) to every value (ReLU); nothing for a shape-only block.
void relu(Block& b);
// c += a·b for a of m×k, b of k×n, c of m×n. Throws std::invalid_argument on mismatched shapes, or when
// some operands hold values and others only shapes.
void multiply_add(const Block& a, const Block& b, Block& c);

// The ppermute of §10 on one axis: the device at position p sends to position (p + offset) mod n, the
// other coordinates unchanged. `blocks[d]` is what device d sends; afterwards it is what d received.
struct Shift {
  int axis;
  int offset;
  std::vector<Block>* blocks;
};

struct LinkTraffic {
  double max_link_elements = 0;    // elements on the busiest directed link in this round
  double total_link_elements = 0;  // every link crossing of every element
  int max_hops = 0;                // the longest route of a non-empty message: the round's latency in hops
  int messages = 0;                // non-empty messages sent
};

// One round of ppermutes that run at once and share the links. Routes: on a wrapped axis the shorter
// way round (the offset's own direction on a tie; only the + direction when topo.links is uni); on an
// open axis along the line — so the message that wraps from one end to the other crosses every link of
// the line, in the direction opposite to the others. Throws std::invalid_argument for a bad axis, a
// topology that is not a grid, a block count that is not one per device, or uni links on an open axis.
LinkTraffic ppermute(const Topology& topo, const std::vector<Shift>& shifts);

// Device numbering shared with mesh_sim: row-major over the axes, the last axis fastest.
int device_count(const Topology& topo);
std::vector<int> device_coords(const Topology& topo, int device);
int device_at(const Topology& topo, const std::vector<int>& coords);

}  // namespace scaling::sim
