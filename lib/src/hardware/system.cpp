#include "scaling/hardware/system.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "scaling/hardware/topology.hpp"

namespace scaling {

double chips(const System& s) { return chips_per_group(s) * s.slow.groups; }

double chips_per_group(const System& s) {
  double n = 1;
  for (const auto& a : s.fast) n *= a.size;
  return n;
}

System tpu_pods(const Chip& c, const std::vector<int>& shape, int pods) {
  if (c.ici_bidi_bytes_per_s <= 0) throw std::invalid_argument(c.name + ": no ICI bandwidth: not a TPU");
  check_ici_figures(c);  // the axes below carry the bidirectional figure; ici_link converts the same one
  if (pods < 1) throw std::invalid_argument("pods = " + std::to_string(pods) + ": must be at least 1");
  if (shape.empty()) throw std::invalid_argument("a TPU slice needs at least one axis");
  System s;
  s.chip = c;
  s.name = c.display + " " + shape_text(shape) + (pods > 1 ? " × " + std::to_string(pods) + " pods" : "");
  // §2.2's wraparound where the shape is one make_slice accepts; a shape it refuses (the planner's tests
  // use small meshes of any shape) is taken without wraparound, which the step model does not use.
  std::vector<bool> wraps(shape.size(), false);
  try {
    wraps = make_slice(c, shape).wraps;
  } catch (const std::invalid_argument&) {
  }
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 1) throw std::invalid_argument("slice axis " + std::to_string(i) + " has no chips");
    s.fast.push_back({shape[i], wraps[i], c.ici_bidi_bytes_per_s, c.ici_hop_latency_s});
  }
  s.slow.groups = pods;
  // Chips sharing a host's DCN bandwidth: a host's worth, or the whole slice when it is smaller (a chip
  // file without a host shape counts one chip per host, as the planner always has).
  const double per_host = std::min(chips_in(c.host_shape), chips_in(shape));
  s.slow.bytes_per_s = c.dcn_bytes_per_s_per_host / per_host;
  s.slow.name = "DCN";
  return s;
}

System gpu_cluster(const Chip& c, int nodes, int gpus_per_node, const GpuOverrides& o) {
  const int g = gpus_per_node > 0 ? gpus_per_node : c.gpus_per_node;
  if (nodes < 1) throw std::invalid_argument("nodes = " + std::to_string(nodes) + ": must be at least 1");
  if (gpus_per_node < 0) throw std::invalid_argument("GPUs per node = " + std::to_string(gpus_per_node) + ": must be at least 1");
  if (g < 1) throw std::invalid_argument(c.name + " has no GPUs-per-node figure: give the node size");
  const double nvlink = o.nvlink_bytes_per_s > 0 ? o.nvlink_bytes_per_s : c.nvlink_bytes_per_s;
  const double ib = o.ib_bytes_per_s > 0 ? o.ib_bytes_per_s : c.ib_bytes_per_s;
  if (!(nvlink > 0) || !std::isfinite(nvlink))
    throw std::invalid_argument(c.name + " has no NVLink bandwidth: give it as an override");
  if (nodes > 1 && (!(ib > 0) || !std::isfinite(ib)))
    throw std::invalid_argument(c.name + " has no InfiniBand bandwidth: give it as an override");
  System s;
  s.chip = c;
  s.name = std::to_string(nodes) + " × " + std::to_string(g) + " " + c.display;
  s.fast_name = "NVLink";
  s.fast.push_back({g, true, nvlink, 0});  // every GPU one switch hop from every other
  s.slow.groups = nodes;
  s.slow.bytes_per_s = ib;
  s.slow.name = "InfiniBand";
  return s;
}

}  // namespace scaling
