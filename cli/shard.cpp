// `scaling shard`: what a sharded array costs each device (§3.1).
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "scaling/base/format.hpp"
#include "scaling/notation/sharding.hpp"

namespace cli {

void run_shard(const ShardArgs& a) {
  using namespace scaling;
  const Mesh mesh = parse_mesh(a.mesh);
  const Sharding s = parse_sharding(a.sharding, mesh);
  const auto shape = parse_sizes("--shape", a.shape);
  const Dtype dtype = parse_dtype(a.dtype);
  const auto r = for_option(given({{"--shape", a.shape}}), [&] { return evaluate(s, mesh, shape, dtype); });
  if (a.json) {
    std::cout << nlohmann::json{{"local_shape", r.local_shape},
                                {"bytes_per_device", r.bytes_per_device},
                                {"total_bytes", r.total_bytes},
                                {"replication", r.replication}}
                     .dump(2)
              << "\n";
    return;
  }
  std::string local;
  for (double d : r.local_shape) local += (local.empty() ? "" : ", ") + format_whole(d);
  fmt::print("{} {} on mesh {} ({} devices)\n", a.dtype, to_string(s), a.mesh, format_number(mesh.devices()));
  fmt::print("  {:<18} [{}]\n", "local shape", local);
  fmt::print("  {:<18} {}\n", "bytes per device", format_quantity(r.bytes_per_device, "B"));
  fmt::print("  {:<18} {}\n", "total bytes", format_quantity(r.total_bytes, "B"));
  fmt::print("  {:<18} {}\n", "replication", format_number(r.replication));
}
}  // namespace cli
