// `scaling chips [--json]`: the hardware presets.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "modules.hpp"
#include "scaling/base/format.hpp"
#include "scaling/hardware/chip.hpp"
#include "scaling/hardware/chip_file.hpp"
#include "scaling/hardware/fat_tree.hpp"
#include "scaling/hardware/topology.hpp"

namespace cli {

namespace {

void run(bool json) {
  using scaling::format_quantity;
  if (json) {
    // The chip-file format (hardware/chip_file.hpp): any entry can be saved and passed to --chip-file.
    std::string out = "[";
    for (const auto& c : scaling::chips()) out += (out.size() > 1 ? ",\n" : "\n") + scaling::chip_to_json(c, 2);
    std::cout << out << "\n]\n";
    return;
  }
  fmt::print("{:<8} {:<9} {:<6} {:>3} {:>8} {:>11} {:>16} {:>16} {:>11} {:>11}\n", "chip", "pod", "host", "TC",
             "HBM", "HBM BW", "bf16", "int8", "ICI 1-way", "PCIe");
  for (const auto& c : scaling::chips()) {
    auto or_dash = [](double v, const char* unit) { return v > 0 ? format_quantity(v, unit) : std::string("-"); };
    fmt::print("{:<8} {:<9} {:<6} {:>3} {:>8} {:>11} {:>16} {:>16} {:>11} {:>11}\n", c.name,
               c.pod_shape.empty() ? "-" : scaling::shape_text(c.pod_shape),
               c.host_shape.empty() ? "-" : scaling::shape_text(c.host_shape), c.tensorcores_per_chip,
               format_quantity(c.hbm_bytes, "B"), format_quantity(c.hbm_bytes_per_s, "B/s"),
               or_dash(c.bf16_flops_per_s, "FLOPs/s"), or_dash(c.int8_flops_per_s, "FLOPs/s"),
               or_dash(c.ici_oneway_bytes_per_s, "B/s"), or_dash(c.pcie_bytes_per_s, "B/s"));
  }
  // §12: the GPUs' anatomy, their NVLink node and NVIDIA's reference SuperPOD of 4 scalable units.
  fmt::print("\n{:<8} {:>4} {:>6} {:>4} {:>9} {:>8} {:>16} {:>9} {:>11} {:>11} {:>6} {:>9} {:>11}\n", "GPU", "SMs",
             "lanes", "TCs", "boost", "L2", "NVLink/GPU", "switches", "node bisect", "node egress", "pod", "switches",
             "pod/node");
  for (const auto& c : scaling::chips()) {
    if (!scaling::is_gpu(c) || c.anatomy.sms <= 0) continue;
    const auto& a = c.anatomy;
    const auto pod = scaling::dgx_superpod(c, 4);
    // NVIDIA's reference pod is built of NDR switches whose ports run at the NIC's rate; a GPU with slower
    // NICs (A100: 200 Gb/s HDR) is not part of that design, so its pod columns are left out.
    const bool reference = c.ib_bytes_per_s == pod.port_bytes_per_s;
    auto pod_cell = [&](const std::string& v) { return reference ? v : std::string("-"); };
    fmt::print("{:<8} {:>4} {:>6} {:>4} {:>9} {:>8} {:>16} {:>9} {:>11} {:>11} {:>6} {:>9} {:>11}\n", c.name, a.sms,
               scaling::cuda_cores(a), scaling::tensor_cores(a),
               a.boost_clock_hz > 0 ? fmt::format("{:.2f} GHz", a.boost_clock_hz / 1e9) : std::string("-"),
               format_quantity(a.l2_bytes / (1024.0 * 1024.0), "MiB"),
               fmt::format("{} × {}", c.node.links_per_gpu, format_quantity(c.node.link_bytes_per_s, "B/s")),
               c.node.switches_per_node, format_quantity(scaling::node_bisection_bytes_per_s(c), "B/s"),
               format_quantity(scaling::node_egress_bytes_per_s(c), "B/s"), pod_cell(fmt::format("{}", scaling::gpus(pod))),
               pod_cell(fmt::format("{}", scaling::all_switches(pod))),
               pod_cell(format_quantity(scaling::fat_tree_bytes_per_node(pod), "B/s")));
  }
  fmt::print("\nSources: §2.3 tables of the book for TPUs, §1.1 for the H100 (`scaling chips --json` per chip); GPU "
             "anatomy and NVLink nodes from NVIDIA's whitepapers and §12; 'pod' is NVIDIA's reference DGX "
             "SuperPOD of 4 scalable units (32 nodes each) over a full-bisection InfiniBand fat tree: its GPUs, "
             "switches (NVSwitches + leaf + spine) and bandwidth per node across any cut. Node bisection counts "
             "both directions; egress and per-node figures are one way.\n");
}

}  // namespace

void add_chips(CLI::App& app) {
  auto json = std::make_shared<bool>(false);
  auto* sub = app.add_subcommand("chips", "list the chip presets and their figures");
  sub->add_flag("--json", *json, "print a JSON array, SI units");
  run_when_chosen(sub, [json] { run(*json); });
}

}  // namespace cli
