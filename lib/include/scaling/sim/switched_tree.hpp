#pragma once
// A switched tree fabric that executes GPU collectives on real data and counts the bytes on every link
// and through every switch (§12.4: "a theoretically optimal model over a switched tree fabric").
//
// The topology, bottom-up: GPUs → node switch (NVLink) → leaf switch → spine switch …, given as the degree
// of each level: {8} is one 8-GPU node, {8, 32} an H100 scalable unit (32 nodes on one leaf level),
// {8, 32, 4} the 1024-GPU SuperPod (4 units under the spine). Each child (a GPU, or a switch one level
// down) has one link to its parent, full duplex; the two directions are counted apart. How it maps to
// the SuperPod's wiring: level 1's "link" of a node is its whole egress (8 NICs, 8 × 400 Gb/s), level 2's
// of a unit its 8 leaf switches' uplinks (8 × 16 × 2 cables); the rail-by-rail wiring (GPU i's NIC on leaf
// switch i) is folded into one aggregate link per child, which is the chapter's own model.
//
// A transfer moves a range of elements from GPU to GPU(s) along the tree's unique paths:
//  - unicast: one source, one destination;
//  - multicast: one source, many destinations, the payload crossing each link of the union of paths
//    once (a switch replicates it: NVLink SHARP / IB multicast);
//  - reduce: many sources, one destination, the payload crossing each link of the union once (a switch
//    adds what arrives from its children before forwarding: in-network reduction, SHARP).
// Collectives are schedules of such transfers, run on every GPU's array and checked against the plain
// computation.
#include <string>
#include <vector>

namespace scaling::sim {

inline constexpr double kMaxTreeGpus = 65536;
inline constexpr double kMaxTreeValues = 1 << 24;  // GPUs × elements held in data mode

struct SwitchedTree {
  std::vector<int> degrees;  // children per switch, bottom level first; each ≥ 2
};

enum class TreeOp {
  ring_all_gather,       // a ring in GPU order (neighbours via their lowest common switch)
  ring_reduce_scatter,
  ring_all_reduce,       // ring ReduceScatter, then ring AllGather
  multicast_all_gather,  // every GPU multicasts its shard to all others (Quiz 4 Q1's accounting)
  sharp_all_reduce,      // per shard: in-network reduce to its owner, then multicast (Quiz 4 Q2)
  all_to_all,            // every GPU unicasts one block to every other
  sharded_all_gather,    // AllGather over X of an array sharded Y ways on the inner axis (multicast)
  sharded_sharp_all_reduce,  // SHARP AllReduce over X of an array sharded Y ways on the inner axis (Quiz 4 Q3–Q4)
};

struct TreeRequest {
  TreeOp op;
  double elements;  // E: the whole array (AllGather: gathered; RS/AR: each GPU's input; AllToAll: all blocks)
  int inner_y = 1;  // the sharded ops only: Y, a divisor of the GPU count (X-group q: GPUs q, q + Y, …)
};

struct LevelCounts {
  // Per level ℓ (0: GPU → node switch, 1: node → leaf, …), the busiest child link's elements in each
  // direction, the sum over the level's links, and per switch above the link (level ℓ + 1) the most
  // elements any one of them took in / sent out (over all its links, parent side included).
  double max_up = 0, max_down = 0, total_up = 0, total_down = 0;
  double max_switch_in = 0, max_switch_out = 0;
};

struct TreeResult {
  bool correct = false;
  std::vector<LevelCounts> levels;  // one per entry of degrees
  double steps = 0;                 // transfer rounds (a ring of n: n − 1)
};

// Throws std::invalid_argument for a degree below 2, too many GPUs or values, or E not divisible as the
// op needs (N; AllToAll N²; sharded: N).
TreeResult run_tree(const SwitchedTree& tree, const TreeRequest& req);

// Time with `level_bytes_per_s[ℓ]` per child link of level ℓ, one direction: the busiest link decides
// (links run concurrently; a schedule's rounds pipeline).
double tree_time_s(const TreeResult& r, double bytes_per_element, const std::vector<double>& level_bytes_per_s);

}  // namespace scaling::sim
