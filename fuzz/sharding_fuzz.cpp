// Sharding notation and meshes (§3.1): parse_mesh, parse_sharding, to_string and evaluate.
// Input: mesh \0 sharding \0 global shape \0 dtype.
#include <fmt/format.h>

#include "../cli/commands.hpp"
#include "contract.hpp"
#include "scaling/notation/sharding.hpp"

namespace {
std::string mesh_text(const scaling::Mesh& m) {
  std::string out;
  for (const auto& a : m.axes) out += (out.empty() ? "" : ",") + a.name + "=" + std::to_string(a.size);
  return out;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 8192) return 0;
  const auto f = fuzz::fields(data, size, 4);
  scaling::Mesh mesh;
  if (!fuzz::accepted([&] { mesh = scaling::parse_mesh(f[0]); })) return 0;
  for (const auto& a : mesh.axes) fuzz::require(a.size >= 1 && !a.name.empty(), "mesh axis without a name or size");
  fuzz::finite(mesh.devices(), "mesh devices");
  // Canonical mesh text parses back to the same axes.
  const auto again = scaling::parse_mesh(mesh_text(mesh));
  fuzz::require(mesh_text(again) == mesh_text(mesh), "mesh does not round-trip: " + mesh_text(mesh));

  scaling::Sharding s;
  if (!fuzz::accepted([&] { s = scaling::parse_sharding(f[1], mesh); })) return 0;
  const std::string canonical = scaling::to_string(s);
  scaling::Sharding back;
  fuzz::require(fuzz::accepted([&] { back = scaling::parse_sharding(canonical, mesh); }),
                "canonical sharding refused: " + canonical);
  fuzz::require(scaling::to_string(back) == canonical, "sharding does not round-trip: " + canonical);

  std::vector<double> shape;
  scaling::Dtype dtype = scaling::Dtype::bf16;
  if (!fuzz::accepted([&] { shape = cli::parse_sizes("--shape", f[2]); })) return 0;
  if (!f[3].empty() && !fuzz::accepted([&] { dtype = scaling::parse_dtype(f[3]); })) return 0;
  scaling::ShardedArray r;
  if (!fuzz::accepted([&] { r = scaling::evaluate(s, mesh, shape, dtype); })) return 0;
  for (double d : r.local_shape) fuzz::finite(d, "local shape");
  fuzz::finite(r.bytes_per_device, "bytes per device");
  fuzz::finite(r.total_bytes, "total bytes");
  fuzz::finite(r.replication, "replication");
  return 0;
}
