#pragma once
// §12 "Beyond the node level": the InfiniBand scale-out network of a GPU cluster as a fat tree, after
// NVIDIA's DGX SuperPOD reference architecture. Nodes (one NVLink domain each, one NIC per GPU) are grouped
// in scalable units (SUs) of `nodes_per_su` nodes under one set of leaf switches; leaves connect to spine
// switches, and, once a two-level tree runs out of spine ports, spines to core switches. Every switch has
// `radix` ports of `port_bytes_per_s` each way; a leaf (and a middle-level spine) uses half its ports down
// and half up, so each level carries what the level below sends: full bisection bandwidth, the book's
// "fat tree" (oversubscription 1).
//
// Bandwidths are one direction unless a name says otherwise; the book's "full-duplex" figures are the
// one-direction ones (e.g. 400 GB/s per H100 node), its bisection figures count both directions.
#include <string>
#include <vector>

#include "scaling/hardware/chip.hpp"

namespace scaling {

struct FatTreeLevel {
  std::string name;       // "leaf", "spine", "core"
  double switches = 0;    // in the whole cluster
  int down_ports = 0;     // per switch, toward the nodes
  int up_ports = 0;       // per switch, toward the next level (0 at the top)
};

struct FatTree {
  Chip gpu;                         // the node's GPU (node size, NVLink, NIC bandwidth)
  int sus = 0;                      // scalable units
  int nodes_per_su = 0;
  int radix = 0;                    // ports per InfiniBand switch
  double port_bytes_per_s = 0;      // per port (and cable), one direction
  std::vector<FatTreeLevel> levels;  // leaf first
  int cables_per_leaf_spine = 0;    // in a two-level tree: cables joining each leaf to each spine
  std::string source;
};

// NVIDIA's reference SuperPOD of `sus` scalable units of `gpu` nodes: 32 nodes per SU, one 400 Gb/s NDR NIC
// per GPU, 64-port NDR switches (50 GB/s per port each way), leaves with half their ports down (8 per SU of
// 8-GPU nodes). Two levels while every leaf can reach every spine (up to 64 leaves: 2048 GPUs); three
// levels beyond, with as many spines as leaves and half as many core switches. Throws std::invalid_argument
// (naming the value) for sus < 1, a GPU without a node, a shape the switches cannot wire, or more GPUs than
// a three-level tree of these switches holds.
FatTree dgx_superpod(const Chip& gpu, int sus, int nodes_per_su = 32, int radix = 64, double port_bytes_per_s = 50e9);

double nodes(const FatTree& t);
double gpus(const FatTree& t);
double nvswitches(const FatTree& t);      // node-level NVSwitches (the chip's figure per node)
double ib_switches(const FatTree& t);     // leaf + spine (+ core)
double all_switches(const FatTree& t);    // NVSwitches + InfiniBand switches

// Per level: the switches' total port capacity (every port, one direction), and the capacity of the cables
// that leave the level upward (for the top level: its down-facing ones). Index 0 is the leaf level.
double switch_bytes_per_s(const FatTree& t, size_t level);
double up_cable_bytes_per_s(const FatTree& t, size_t level);
double down_cable_bytes_per_s(const FatTree& t, size_t level);
// Bytes/s per node the level can carry when every node sends at once: its cables' capacity (the smaller of
// up and down, for the top level its down side) over the nodes below it, capped by the node's NICs.
double per_node_bytes_per_s(const FatTree& t, size_t level);
// The node's NIC egress (GPUs × NIC), and the tree's per-node bandwidth across any cut: the smallest level's.
double node_egress_bytes_per_s(const FatTree& t);
double fat_tree_bytes_per_node(const FatTree& t);
// Bisection, both directions counted (§12 Quiz 2's convention): half the nodes send to the other half at
// the tree's per-node bandwidth while the other half sends back.
double bisection_bytes_per_s(const FatTree& t);
// Ports per switch the wiring uses (down + up), per level: at most `radix`.
int ports_used(const FatTree& t, size_t level);

}  // namespace scaling
