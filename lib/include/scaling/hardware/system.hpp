#pragma once
// A System: the machine a training or serving step runs on, as every cost model, the planner and the CLI
// see it. A chip (with its figures and their sources, chip.hpp), the fast axes it is wired in — a TPU
// slice's ICI axes (§2.2), or a GPU node's NVLink domain as one switched axis (§12) — and a slow tier
// joining several such groups: TPU pods over DCN, GPU nodes over InfiniBand.
//
// Bandwidths are what one chip can take in during a collective along that axis, so a ring's time is the
// bytes each chip receives over it: on an ICI axis the two links of a bidirectional ring (§2.3's
// "bidirectional" figure, the book's W_ici); on NVLink a GPU's own bandwidth one way into the switch (§12:
// an AllGather in a node takes about B / W_egress); over DCN or InfiniBand a chip's share of its host's or
// its own NIC's bandwidth, one way.
#include <string>
#include <vector>

#include "scaling/hardware/chip.hpp"

namespace scaling {

struct FastAxis {
  int size = 1;
  bool wraps = false;          // a ring closes on itself (TPU wraparound; a switch always does)
  double bytes_per_s = 0;      // per chip along this axis (see above)
  double hop_latency_s = 0;    // per hop; 0 where the sources give no figure
};

struct SlowTier {
  int groups = 1;              // pods or nodes
  double bytes_per_s = 0;      // per chip, one direction
  double latency_s = 0;        // 0 where the sources give no figure
  std::string name = "DCN";    // "DCN" (TPU pods) or "InfiniBand" (GPU nodes)
};

struct System {
  Chip chip;
  std::string name;              // "TPU v5p 16x20x28 × 8 pods", "16 × 8 NVIDIA H100"
  std::string fast_name = "ICI";  // "ICI" or "NVLink"
  std::vector<FastAxis> fast;
  SlowTier slow;
};

double chips(const System& s);        // every chip: fast axes × slow groups
double chips_per_group(const System& s);  // one slice or node

// A TPU slice `shape` of `chip`, `pods` of them over DCN (per chip: the host's DCN bandwidth over the
// chips of a host). Each axis wraps by the chip's §2.2 rule. Throws std::invalid_argument for a chip
// without ICI, a pod count below 1 or an empty shape.
System tpu_pods(const Chip& chip, const std::vector<int>& shape, int pods);

// `nodes` GPU nodes of `gpus_per_node` GPUs (0: the preset's node size), NVLink inside a node and
// InfiniBand between nodes at the preset's bandwidths unless overridden. Throws std::invalid_argument
// naming what is missing (a chip without a node size or bandwidths needs the overrides) or out of range.
struct GpuOverrides {
  double nvlink_bytes_per_s = 0, ib_bytes_per_s = 0;  // 0: the chip's figure
};
System gpu_cluster(const Chip& chip, int nodes, int gpus_per_node = 0, const GpuOverrides& overrides = {});

}  // namespace scaling
