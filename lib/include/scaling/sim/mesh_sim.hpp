#pragma once
// A virtual device mesh that executes collectives on real data, step by step, over explicit links.
//
// Devices sit on a ring, a line, or a 2D/3D torus (per-axis wraparound). Every directed link carries
// one message per step per path using it; the simulator counts the elements each directed link carries
// and the number of steps, and turns them into time: t_bw = busiest link's bytes / W_uni (links run
// concurrently), t_lat = steps × hop latency, t = max(t_bw, t_lat) — the same shape as the cost model
// in collectives.hpp, so the two can be compared number for number.
//
// Algorithms (§3.2, §3.3):
//  - AllGather: every shard floods outward along the ring: one way round on a unidirectional ring
//    (n − 1 hops), both ways on a bidirectional one (⌊n/2⌋ hops). On an even bidirectional ring the
//    antipodal device is reached both ways: the first half of the shard arrives from one side, the
//    second half from the other, so every directed link carries (n − 1)/2 shards.
//  - ReduceScatter: the time-reverse of that AllGather: partial sums of each chunk flow toward its
//    owner along reduction chains, each device adding its own contribution before passing it on.
//  - AllReduce: ReduceScatter, then AllGather.
//  - Over several axes, the array is cut into k = |axes| parts and part p visits the axes in the cyclic
//    order starting at p, so every axis is busy in every phase.
//  - AllToAll: the block from device i to device j (V/n² bytes) takes the shortest path, axis by axis
//    in the order given; an antipodal block on an even bidirectional ring is split in halves, one each way.
//  - ppermute: each device sends its shard `shift` places along one axis, by the shortest path.
//
// Each algorithm is written once, as straight runs of hops along one axis, and sent to one of two sinks:
// data mode keeps them as paths and moves real values along them; count-only mode adds them to per-link
// counters without holding a value, so both modes count the very routes the data moves over. AllToAll's
// n² block routes are executed in data mode and summed in closed form per axis in count-only mode.
#include <string_view>
#include <variant>
#include <vector>

#include "scaling/cost/collectives.hpp"
#include "scaling/hardware/system.hpp"

namespace scaling::sim {

// Limits (README, "Limits"), checked before anything is allocated. Both modes: at most kMaxDevices
// devices on at most kMaxAxes axes. Count-only mode keeps one counter per directed link and phase
// (AllReduce over k axes has 2k phases; AllToAll needs none: its counts are summed in closed form), so
// its memory is linear in the devices and its work too (k² runs per device). Data mode holds every
// device's array and moves every element hop by hop: bounded by the values held, the values moved over
// links and the hops and ranges routed, all known from the count pass before a path is built.
inline constexpr int kMaxAxes = 8;
inline constexpr double kMaxDevices = 1e6;
inline constexpr double kMaxLinkCounters = 1 << 24;  // 128 MiB of counters
inline constexpr double kMaxDataValues = 1 << 23;    // devices × elements (64 MiB of values)
inline constexpr double kMaxDataMoves = 1e8;         // element copies over links
inline constexpr double kMaxDataRecords = 3e6;       // hops and ranges of the paths (about 100 MB)

// One direction or both: the links of a mesh (uni: each device sends only to its + neighbour, which needs
// wrapped axes) and, in a collective matmul (collective_matmul.hpp), the streams of its ppermutes.
enum class Direction { uni, bi };
Direction parse_direction(std::string_view text);  // "uni" or "bi"; throws std::invalid_argument naming the text
std::string_view name(Direction d);

// The mesh the simulator runs on: per axis its size and whether it wraps, as a System's fast axes
// (hardware/system.hpp) or a Slice gives them, and which way the links carry data.
struct Topology {
  std::vector<int> shape;
  std::vector<bool> wraps;
  Direction links = Direction::bi;
};

Topology ring(int devices, Direction links);  // one wrapped axis
Topology line(int devices);                   // one open axis, both directions
Topology from_slice(const Slice& s);          // the slice's shape and wraparound, bidirectional
Topology from_system(const System& s);        // the System's fast axes (one slice or node), bidirectional

// What the simulator runs: one of the cost model's collectives (collectives.hpp), or a ppermute — every
// device sends its shard `shift` places along one axis (§3), which the cost model has no entry for.
struct Ppermute {
  int shift = 1;
};
using Op = std::variant<Collective, Ppermute>;
bool is(const Op& op, Collective c);

struct Request {
  Op op;
  std::vector<int> axes;  // mesh axes it runs over (ppermute: exactly one)
  double elements;        // E: elements of the whole array of one group (AllToAll: a multiple of n²)
  bool count_only = false;  // no data: counts and steps only (for large meshes)
};

struct Result {
  bool correct;  // data mode: every device holds exactly the plain computation's answer
  int steps;
  // Elements on the busiest directed link. Collectives that run in phases separated by a barrier
  // (AllReduce = ReduceScatter then AllGather; one phase per axis over several axes) add up the
  // busiest link of each phase, since phases do not overlap.
  double max_link_elements;
  double total_link_elements;  // sum over every link transfer
  // Per device: the elements it put on a link, each hop counted for the device that sends it (a
  // forwarded element counts again for the device that forwards it). Sums to total_link_elements.
  std::vector<double> sent_elements = {};
};

// Throws std::invalid_argument for an impossible request (bad axis, E not divisible, uni links on an
// open axis, data mode on a mesh too large to hold).
Result simulate(const Topology& topo, const Request& req);

// Runs a collective on caller-supplied arrays, one per device, each of `req.elements` values laid out
// as simulate() lays out its own data: AllGather / ppermute: device of rank r contributes the values at
// [r·E/n, (r+1)·E/n); ReduceScatter / AllReduce: every device contributes all E values (its partial
// sums) and rank r ends with the sums at [r·E/n, (r+1)·E/n) (AllReduce: everywhere); AllToAll: the
// block for rank j from rank i sits at [(i·n + j)·E/n², …). Returns the counts; `data` is updated in place.
Result run_on(const Topology& topo, const Request& req, std::vector<std::vector<double>>& data);

struct SimTime {
  double t_bandwidth_s, t_latency_s, t_s;
};
// Time of a simulated collective on the System the mesh is cut from: the busiest link's bytes over one
// direction of one link, and the steps × the hop latency, both from axis_link (collectives.hpp), the one
// conversion of the System's per-axis figure. A Result does not say which axis each phase crossed, so
// every fast axis must have the same link (as every axis of a TPU slice has); throws
// std::invalid_argument for a System without fast axes or with axes whose links differ.
SimTime to_time(const Result& r, double bytes_per_element, const System& s);

}  // namespace scaling::sim
