// Slices and collectives (§2.2, §3.2–3.3): parse_shape, make_slice on a preset chip, slice_axes and
// collective_cost. Input: chip \0 slice shape \0 collective \0 axes \0 bytes \0 wrap.
#include "../cli/commands.hpp"
#include "contract.hpp"
#include "scaling/cost/collectives.hpp"
#include "scaling/hardware/topology.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;
  const auto f = fuzz::fields(data, size, 6);
  scaling::Slice s;
  if (!fuzz::accepted([&] {
        s = scaling::make_slice(scaling::chip(f[0]), scaling::parse_shape(f[1]),
                                f[5].empty() ? scaling::WrapPolicy::automatic : cli::parse_wrap(f[5]));
      }))
    return 0;
  fuzz::finite(scaling::chips(s), "chips");
  fuzz::finite(scaling::hosts(s), "hosts");
  fuzz::finite(scaling::total_flops_per_s(s), "total FLOPs/s");
  fuzz::finite(scaling::total_hbm_bytes(s), "total HBM");
  scaling::CollectiveCost c{};
  double bytes = 0;
  if (!fuzz::accepted([&] {
        const auto op = scaling::parse_collective(f[2]);
        const auto axes = scaling::slice_axes(s, cli::parse_indices("--axes", f[3]));
        bytes = cli::parse_size("--bytes", f[4]);
        c = scaling::collective_cost(op, axes, bytes, scaling::ici_link(s.chip));
        fuzz::finite(scaling::book_collective_time_s(op, axes, bytes, scaling::ici_link(s.chip)), "book time");
      }))
    return 0;
  fuzz::finite(c.t_s, "t_s");
  fuzz::finite(c.t_bandwidth_s, "t_bandwidth_s");
  fuzz::finite(c.t_latency_s, "t_latency_s");
  fuzz::require(c.hops >= 0, "negative hops");
  return 0;
}
