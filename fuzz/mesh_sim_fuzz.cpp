// The virtual mesh (sim/mesh_sim.hpp), differentially: a small random topology and request run on real
// data and in count-only mode must give the same steps and link counts, and the data must be correct.
// Input: bytes read as axes, sizes, wrap flags, links, op, axes used, elements and shift.
#include <algorithm>

#include "contract.hpp"
#include "scaling/sim/mesh_sim.hpp"

namespace {
struct Bytes {
  const uint8_t* data;
  size_t size, at = 0;
  unsigned next() { return at < size ? data[at++] : 0; }
};
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace sim = scaling::sim;
  Bytes in{data, size};
  sim::Topology t;
  const unsigned axes = 1 + in.next() % 3;
  for (unsigned a = 0; a < axes; ++a) {
    t.shape.push_back(static_cast<int>(1 + in.next() % 9));
    t.wraps.push_back(in.next() % 2 == 1);
  }
  t.links = in.next() % 2 ? sim::Direction::uni : sim::Direction::bi;
  sim::Request r{};
  const unsigned kind = in.next() % 5;  // the four collectives, or a ppermute
  const unsigned mask = in.next();
  for (unsigned a = 0; a < axes; ++a)
    if (mask & (1u << a)) r.axes.push_back(static_cast<int>(a));
  if (mask & 8) std::reverse(r.axes.begin(), r.axes.end());  // routing order matters for AllToAll
  double n = 1;
  for (int a : r.axes) n *= t.shape[static_cast<size_t>(a)];
  if (kind == 3 && n > 40) return 0;  // keeps data mode fast: n² blocks of every device
  const double unit = kind == 3 ? n * n : n;
  r.elements = unit * (1 + in.next() % 5);
  if (in.next() % 8 == 0) r.elements += 1;  // sometimes not a multiple: refused by both modes
  const int shift = static_cast<int>(in.next() % 19) - 9;
  if (kind < 4) r.op = static_cast<scaling::Collective>(kind);  // all_gather, reduce_scatter, all_reduce, all_to_all
  else r.op = sim::Ppermute{shift};

  sim::Result data_mode{}, counted{};
  std::string data_refusal;
  const bool ran = fuzz::accepted([&] {
    try {
      data_mode = sim::simulate(t, r);
    } catch (const std::invalid_argument& e) {
      data_refusal = e.what();
      throw;
    }
  });
  r.count_only = true;
  const bool ran_counting = fuzz::accepted([&] { counted = sim::simulate(t, r); });
  // Count-only refuses only what data mode refuses too; data mode may also refuse a size it cannot hold.
  fuzz::require(ran || !ran_counting || data_refusal.find("count-only mode") != std::string::npos,
                "data mode refused what count-only mode accepts: " + data_refusal);
  fuzz::require(ran_counting || !ran, "count-only mode refused what data mode accepts");
  if (!ran || !ran_counting) return 0;
  fuzz::require(data_mode.correct, "data mode gave a wrong result");
  fuzz::require(data_mode.steps == counted.steps, "steps differ between the modes");
  fuzz::require(data_mode.max_link_elements == counted.max_link_elements, "busiest link differs between the modes");
  fuzz::require(data_mode.total_link_elements == counted.total_link_elements, "total link elements differ");
  return 0;
}
