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
enum class CollectiveAlgorithm { ring, tree };
CollectiveAlgorithm parse_collective_algorithm(std::string_view text);  // "ring" or "tree"

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

// Throws std::invalid_argument for a System without one NVLink axis, V ≤ 0, or a tree for anything but
// an AllReduce across at least two nodes.
GpuCollectiveCost gpu_collective_cost(Collective op, const System& s, double bytes,
                                      CollectiveAlgorithm algorithm = CollectiveAlgorithm::ring);

}  // namespace scaling
