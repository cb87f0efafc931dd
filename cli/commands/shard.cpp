// `scaling shard`: what a sharded array costs each device (§3.1).
#include <fmt/format.h>

#include <memory>

#include "../options.hpp"
#include "../output.hpp"
#include "modules.hpp"
#include "scaling/base/format.hpp"
#include "scaling/notation/sharding.hpp"

namespace cli {

namespace {

struct Args {
  std::string mesh, dtype = "bf16", sharding, shape;
  bool json = false;
};

void run(const Args& a) {
  using namespace scaling;
  const Mesh mesh = strict_mesh("--mesh", a.mesh);
  const Sharding s = parse_sharding(a.sharding, mesh);
  const auto shape = parse_sizes("--shape", a.shape);
  const Dtype dtype = parse_dtype(a.dtype);
  const auto r = for_option(given({{"--shape", a.shape}}), [&] { return evaluate(s, mesh, shape, dtype); });
  std::string local;
  nlohmann::json local_json = nlohmann::json::array();
  for (double d : r.local_shape) {
    local += (local.empty() ? "" : ", ") + format_whole(d);
    local_json.push_back(count_json(d));
  }
  Report rep;
  rep.label_width = 18;
  rep.heading = fmt::format("{} {} on mesh {} ({} devices)", a.dtype, to_string(s), a.mesh, format_number(mesh.devices()));
  rep.outputs = {{"", "local shape", "[" + local + "]"},
                 {"bytes_per_device", "bytes per device", r.bytes_per_device, "B"},
                 {"total_bytes", "total bytes", r.total_bytes, "B"},
                 {"replication", "replication", r.replication, kCount}};
  rep.extra["local_shape"] = local_json;
  emit(rep, a.json, given({{"--shape", a.shape}}));
}

}  // namespace

void add_shard(CLI::App& app) {
  auto a = std::make_shared<Args>();
  auto* sub = app.add_subcommand("shard", "local shape and memory of a sharded array, e.g. 'A[I_XY, J]'");
  add_text(sub, "sharding", a->sharding, "the sharding in named-axis notation")->required();
  add_text(sub, "--mesh", a->mesh, "mesh axes and sizes, e.g. X=2,Y=8,Z=2")->required();
  add_text(sub, "--shape", a->shape, "global shape, e.g. 128,2048")->required();
  add_name(sub, "--dtype", a->dtype, "element type", [](const std::string& t) { scaling::parse_dtype(t); })
      ->capture_default_str();
  sub->add_flag("--json", a->json, "print one JSON object");
  run_when_chosen(sub, [a] { run(*a); });
}

}  // namespace cli
