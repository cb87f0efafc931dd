#include "scaling/hardware/fat_tree.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "scaling/base/validate.hpp"

namespace scaling {

namespace {

std::string str(double v) { return std::to_string(static_cast<long long>(v)); }

const FatTreeLevel& level_at(const FatTree& t, size_t level) {
  if (level >= t.levels.size())
    throw std::invalid_argument("fat-tree level " + str(double(level)) + " does not exist (the tree has " +
                                str(double(t.levels.size())) + ")");
  return t.levels[level];
}

}  // namespace

FatTree dgx_superpod(const Chip& gpu, int sus, int nodes_per_su, int radix, double port_bytes_per_s) {
  if (gpu.gpus_per_node <= 0 || !(gpu.ib_bytes_per_s > 0))
    throw std::invalid_argument(gpu.name + ": no node size or NIC bandwidth: not a GPU preset");
  if (sus < 1) throw std::invalid_argument("scalable units = " + str(sus) + ": must be at least 1");
  if (nodes_per_su < 1) throw std::invalid_argument("nodes per SU = " + str(nodes_per_su) + ": must be at least 1");
  if (radix < 2 || radix % 2 != 0)
    throw std::invalid_argument("switch radix = " + str(radix) + ": must be an even number of ports, at least 2");
  check::positive("switch port bandwidth", port_bytes_per_s);
  const int half = radix / 2;
  const int nics_per_su = nodes_per_su * gpu.gpus_per_node;  // one NIC per GPU
  if (nics_per_su % half != 0)
    throw std::invalid_argument("an SU of " + str(nics_per_su) + " NICs does not fill leaves of " + str(half) +
                                " down ports evenly");
  const double max_nics = 2.0 * std::pow(double(half), 3);  // a three-level tree of radix-k switches
  if (double(nics_per_su) * sus > max_nics)
    throw std::invalid_argument(str(double(nics_per_su) * sus) + " GPUs: more than a three-level fat tree of " +
                                str(radix) + "-port switches holds (" + str(max_nics) + ")");
  FatTree t;
  t.gpu = gpu;
  t.sus = sus;
  t.nodes_per_su = nodes_per_su;
  t.radix = radix;
  t.port_bytes_per_s = port_bytes_per_s;
  const int leaves = sus * (nics_per_su / half);
  t.levels.push_back({"leaf", double(leaves), half, half});
  if (leaves <= radix) {
    // Two levels: every leaf sends its `half` uplinks spread evenly over the spines, so the spine count
    // divides `half`; the fewest spines whose ports hold all the uplinks.
    const double uplinks = double(leaves) * half;
    int spines = int(std::ceil(uplinks / radix));
    while (half % spines != 0) ++spines;
    t.cables_per_leaf_spine = half / spines;
    t.levels.push_back({"spine", double(spines), leaves * t.cables_per_leaf_spine, 0});
  } else {
    // Three levels: spines as many as leaves, half their ports down and half up; core switches take every
    // spine uplink on all their ports.
    t.levels.push_back({"spine", double(leaves), half, half});
    t.levels.push_back({"core", double(leaves) * half / radix, radix, 0});
  }
  t.source = "NVIDIA DGX SuperPOD reference architecture, DGX H100 (network fabrics: 32 nodes per SU, 8 leaf and 16 "
             "spine 64-port NDR 400 Gb/s switches for 4 SUs; core switches for larger pods); §12 'Beyond the node "
             "level' and its Quiz 3";
  return t;
}

double nodes(const FatTree& t) { return double(t.sus) * t.nodes_per_su; }
double gpus(const FatTree& t) { return nodes(t) * t.gpu.gpus_per_node; }
double nvswitches(const FatTree& t) { return nodes(t) * t.gpu.node.switches_per_node; }

double ib_switches(const FatTree& t) {
  double n = 0;
  for (const auto& l : t.levels) n += l.switches;
  return n;
}

double all_switches(const FatTree& t) { return nvswitches(t) + ib_switches(t); }

double switch_bytes_per_s(const FatTree& t, size_t level) {
  return level_at(t, level).switches * t.radix * t.port_bytes_per_s;
}

double up_cable_bytes_per_s(const FatTree& t, size_t level) {
  const auto& l = level_at(t, level);
  return l.switches * l.up_ports * t.port_bytes_per_s;
}

double down_cable_bytes_per_s(const FatTree& t, size_t level) {
  const auto& l = level_at(t, level);
  return l.switches * l.down_ports * t.port_bytes_per_s;
}

double node_egress_bytes_per_s(const FatTree& t) { return t.gpu.gpus_per_node * t.gpu.ib_bytes_per_s; }

double per_node_bytes_per_s(const FatTree& t, size_t level) {
  const auto& l = level_at(t, level);
  const double cables = l.up_ports > 0 ? std::min(down_cable_bytes_per_s(t, level), up_cable_bytes_per_s(t, level))
                                       : down_cable_bytes_per_s(t, level);
  return std::min(node_egress_bytes_per_s(t), cables / nodes(t));
}

double fat_tree_bytes_per_node(const FatTree& t) {
  double w = node_egress_bytes_per_s(t);
  for (size_t i = 0; i < t.levels.size(); ++i) w = std::min(w, per_node_bytes_per_s(t, i));
  return w;
}

double bisection_bytes_per_s(const FatTree& t) { return 2.0 * (nodes(t) / 2) * fat_tree_bytes_per_node(t); }

int ports_used(const FatTree& t, size_t level) {
  const auto& l = level_at(t, level);
  return l.down_ports + l.up_ports;
}

}  // namespace scaling
