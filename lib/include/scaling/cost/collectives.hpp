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

}  // namespace scaling
