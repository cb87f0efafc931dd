#pragma once
// §3.2–3.3: the cost of AllGather, ReduceScatter, AllReduce and AllToAll over a set of mesh axes,
// computed exactly (the book drops the (n − 1)/n factor and approximates hop counts).
//
//   n = Π n_i over the axes S; V = bytes of the whole array (the gathered result for AllGather, the
//   unreduced input for ReduceScatter / AllReduce, the array for AllToAll); w_i = W_bidir if axis i
//   wraps, else W_uni (an open line can use both directions of a link, but its end links carry all of
//   one side's data one way).
//
//   AllGather, ReduceScatter: t_bw = (n − 1)/n · V / Σ_i w_i
//   AllReduce: twice AllGather (bandwidth and latency terms).
//   AllToAll: blocks of V/n² from every device to every device, shortest paths, dimension-ordered over
//     several axes. On axis a of size n_a the busiest directed link carries ⌊n_a²/4⌋ · V / (n · n_a)
//     on an open axis, and half that on a wrapped one where traffic splits evenly between the two
//     directions of every link; the axes run concurrently, so
//       t_bw = max_a ⌊n_a²/4⌋ · V / (n · n_a · w_a)      (one axis: ⌊n²/4⌋ · V / (n² · w)).
//   Latency: hops = Σ_i (⌊n_i/2⌋ if axis i wraps, else n_i − 1); t_lat = hops × per-hop latency.
//   t = max(t_bw, t_lat); latency-bound when t_lat > t_bw.
#include <string>
#include <string_view>
#include <vector>

#include "scaling/hardware/system.hpp"
#include "scaling/hardware/topology.hpp"

namespace scaling {

enum class Collective { all_gather, reduce_scatter, all_reduce, all_to_all };

Collective parse_collective(std::string_view text);  // "all-gather", "reduce-scatter", "all-reduce", "all-to-all"
std::string_view name(Collective c);

struct Axis {
  int size;
  bool wraps;
};

struct Link {
  double oneway_bytes_per_s;   // W_uni
  double bidi_bytes_per_s;     // W_bidir
  double hop_latency_s;
};

// The link of a TPU chip's ICI axes: the chip's bidirectional figure (the one tpu_pods puts on every axis
// of a System) through axis_link's conversion below, so a cost computed from the chip and one the simulator
// runs on the System use the same link. Throws std::invalid_argument for a chip without ICI or with ICI
// figures that break chip.hpp's rule (check_ici_figures).
Link ici_link(const Chip& c);

// The Link of one of a System's fast axes: the one conversion from the System's figure (what one chip
// takes in along the axis, system.hpp) to the figures of one link. On ICI a chip has a link to each
// neighbour on the axis and the System counts both (W_bidir, §2.3), so one direction of one link carries
// half of it: W_uni = bytes_per_s / 2. In an NVLink node a GPU has one port into the switch and the
// System's figure is already that port one way: W_uni = W_bidir = bytes_per_s. Latency: the axis's per-hop
// figure. Throws std::invalid_argument for an axis the System does not have.
Link axis_link(const System& s, int axis);

struct CollectiveCost {
  double t_s;
  double t_bandwidth_s;
  double t_latency_s;
  bool latency_bound;
  int hops;
};

CollectiveCost collective_cost(Collective op, const std::vector<Axis>& axes, double bytes, const Link& link);

// The book's own simplified rules (§3.2 and the §3.4 table), for comparison with the exact model:
// AllGather = ReduceScatter = V / (W_bidir · number of axes); AllReduce = 2 × AllGather;
// AllToAll = AllGather / 4; a latency floor of T_min · Σ|X_i| / 2 (AllReduce: twice that).
double book_collective_time_s(Collective op, const std::vector<Axis>& axes, double bytes, const Link& link);

// The axes of a slice by index, e.g. {0, 2}; rejects out-of-range and repeated indices.
std::vector<Axis> slice_axes(const Slice& s, const std::vector<int>& indices);

// ---- GPU clusters (§12, "How Do Collectives Work on GPUs?") ----------------------------------------
// A System of M nodes of G GPUs (N = M·G): NVLink inside a node through a switch (every GPU one hop from
// every other, W_nv bytes/s into each GPU), InfiniBand between nodes (W_ib bytes/s per GPU, one NIC each,
// a full-bisection fat tree so any ring of nodes runs at full rate). V as for the TPU model above.
//
//   Inside a node (§12 "Intra-node collectives"): a ring over the switch.
//     AllGather, ReduceScatter: t_bw = (G − 1)/G · V / W_nv, G − 1 steps; AllReduce twice that.
//     AllToAll: each GPU sends V/N² straight to each other GPU: t_bw = (G − 1) · V / (N² · W_nv), 1 step.
//   Across nodes (§12 "Cross-node collectives"): hierarchical, GPU i of every node in a ring with its
//   counterparts on its own NIC, so the InfiniBand stage moves 1/G of the data:
//     AllReduce: ReduceScatter in the node, AllReduce over InfiniBand on V/G
//       (t_bw = 2 (M − 1)/M · (V/G) / W_ib = 2 (M − 1)/M · V / W_node, W_node = G · W_ib the node's
//       egress, the book's B / W_node per pass), AllGather in the node: 2 (G − 1) + 2 (M − 1) steps.
//     AllGather: AllGather over InfiniBand of the node's V/G, then in the node; ReduceScatter the reverse:
//       t_bw = (G − 1)/G · V / W_nv + (M − 1)/M · (V/G) / W_ib, (G − 1) + (M − 1) steps.
//     AllToAll is not hierarchical (§12 "Other collectives"): a GPU's V/N² blocks for the N − G GPUs of
//       other nodes leave over its own NIC while the G − 1 for its node cross NVLink at the same time:
//       t_ib = (N − G) · V / (N² · W_ib) = (M − 1) · V / (M² · W_node), the book's formula.
//     Tree AllReduce across nodes (§12 "Intra-node collectives": reduce in pairs, then fours, …): the same
//       bytes as the ring, in ⌈log2 M⌉ InfiniBand steps instead of 2 (M − 1).
//   Latency: steps × the System's per-hop latency of that tier (NVLink: fast[0].hop_latency_s,
//   InfiniBand: slow.latency_s; the presets carry none, so 0 unless given).
//   Per tier t = max(t_bw, t_lat) as in §3; the stages of a hierarchical collective run one after the
//   other, so time_s = t_nvlink + t_infiniband, while AllToAll's two tiers overlap: time_s = max of them.
//   The book's first approximation overlaps the stages too (max); the sum is the unpipelined bound.
//   SHARP (§12.4.1 "In network reductions", an AllReduce only): the switches add the partial sums and
//     multicast the result, so a GPU sends and receives exactly V over NVLink (T = V / W_nv, 2 steps: reduce,
//     multicast) instead of 2 (G − 1)/G · V; across nodes each GPU's NIC carries its node-reduced V/G once up
//     and once down the InfiniBand tree (SHARP-capable IB switches): V/G / W_ib = V / W_node, 2 steps.
enum class CollectiveAlgorithm { ring, tree, sharp };
CollectiveAlgorithm parse_collective_algorithm(std::string_view text);  // "ring" or "tree"
std::string_view name(CollectiveAlgorithm a);                            // "ring", "tree", "sharp"

struct TierCost {
  double t_bandwidth_s = 0;
  double t_latency_s = 0;
  int steps = 0;
  double bytes_per_gpu = 0;  // bytes each GPU receives over this tier
};

struct GpuCollectiveCost {
  TierCost nvlink, infiniband;
  double time_s = 0;
  bool latency_bound = false;  // some tier's latency term exceeds its bandwidth term
};

// Throws std::invalid_argument for a System without one NVLink axis, V ≤ 0, a tree for anything but
// an AllReduce across at least two nodes, or SHARP for anything but an AllReduce.
GpuCollectiveCost gpu_collective_cost(Collective op, const System& s, double bytes,
                                      CollectiveAlgorithm algorithm = CollectiveAlgorithm::ring);


// ---- §12.4's own per-level model of a switched fabric ------------------------------------------------
// The chapter costs a collective level by level of the fat tree (GPUs → NVLink node switch; nodes → leaf;
// scalable units → spine), each level a ring over its D_i children joined to it by links of W_i bytes/s
// one way ("the link connecting each child to node i"), the levels overlapped. Functions named *_book*
// are the chapter's own formulas; the others count what a switched tree must move, which the simulator
// (sim/switched_tree.hpp) executes. The *_s functions return seconds and reject non-positive sizes, rates
// and counts with std::invalid_argument.
struct TreeLevel {
  std::string name;             // "node", "leaf", "spine"
  int degree = 2;               // D_i: children of one switch at this level
  double link_bytes_per_s = 0;  // W_i: one child's link to it, one direction
};

// The levels of an H100-style SuperPod from a GPU System: node (G GPUs at the NVLink figure), leaf
// (`nodes_per_su` nodes at the node's egress G·W_ib), spine (the System's nodes / nodes_per_su units, each
// joined by nodes_per_su·G·W_ib: full bisection). Levels with one child are left out. Throws
// std::invalid_argument for a non-GPU System or nodes not a multiple of nodes_per_su.
std::vector<TreeLevel> fat_tree_levels(const System& s, int nodes_per_su);

// §12.4.1: a ring AllGather or ReduceScatter of `bytes` over n GPUs behind one switch, W one way per GPU:
//   T = bytes·(n − 1)/(n·W)                           (book's takeaway: → bytes / W)
double node_all_gather_s(double bytes, int n, double w);
// §12.4.1: AllReduce = ReduceScatter + AllGather = 2·bytes·(n − 1)/(n·W); with SHARP (in-network
// reduction: each GPU sends and receives exactly `bytes`) T = bytes / W.
double node_all_reduce_s(double bytes, int n, double w, bool sharp);
// §12.4.1: AllToAll in a switched node, each GPU sends bytes/n² straight to each of the n − 1 others:
//   T = bytes·(n − 1)/(W·n²)                          (→ bytes / (W·n))
double node_all_to_all_s(double bytes, int n, double w);
// §12.4.1 footnote / Appendix B: the fraction of a dense AllToAll's traffic a ragged one sends when each
// token picks k of z shards. The chapter's approximation min(k/z, 1)·(z − 1)/z and the expected value
// (1 − ((z − 1)/z)^k)·(z − 1)/z (expected distinct shards in k uniform draws, less the local one).
double ragged_all_to_all_fraction_approx(int k, int z);
double ragged_all_to_all_fraction_expected(int k, int z);
// §12.4.2: AllToAll over m nodes, every GPU to every GPU: the node's egress carries (m − 1)/m² of bytes:
//   T = bytes·(m − 1)/(m²·W_node)                    (→ bytes / (m·W_node))
double cross_node_all_to_all_s(double bytes, int m, double w_node);
// §12.4.2 (the "more precise derivation"): a ring at every level, the levels overlapped:
//   T_book = bytes·max_i (D_i − 1)/(D_i·W_i)  and the AllGather bandwidth min_i D_i·W_i/(D_i − 1).
double tree_all_gather_book_s(double bytes, const std::vector<TreeLevel>& levels);
double tree_all_gather_book_bytes_per_s(const std::vector<TreeLevel>& levels);
// The same AllGather on a switched tree that replicates (multicast) in its switches: a child of S_{i−1}
// GPUs must take in every byte held outside it, bytes·(1 − S_{i−1}/N), over its link:
//   T = bytes·max_i (1 − S_{i−1}/N)/W_i
// Equal to the book's per-level ring where the level is the top one (S_{i−1}·D_i = N); below the top the
// book counts (D_i − 1)/D_i of the bytes, a little less than what must come in (sim/switched_tree.hpp
// executes it).
double tree_all_gather_s(double bytes, const std::vector<TreeLevel>& levels);
// §12.4.2, "Reductions when array is sharded over a separate axis": AllGather over X of an array of
// `bytes` sharded Y ways on the inner axis (Y consecutive GPUs hold the Y shards; X·Y = N). A child of
// S GPUs holds min(S, Y) of the Y shards' groups and must take in the rest of each, so its link carries
//   bytes·min(S, Y)/Y·(1 − max(S, Y)/N),   T = max_i of that over W_i.
double sharded_tree_all_gather_s(double bytes, const std::vector<TreeLevel>& levels, int y);
// The chapter's two-term rule for the same (node degree G, GPU and node egress):
//   T_node = bytes/W_gpu · 1/min(Y, G),  T_scale-out = bytes/W_node · G/max(G, Y),  T = max of the two.
struct ShardedReduction {
  double t_node_s, t_scale_out_s, t_s;
};
ShardedReduction sharded_reduction_book(double bytes, int y, int g, double w_gpu, double w_node);

}  // namespace scaling
