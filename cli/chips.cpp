// `scaling chips [--json]`: the hardware presets.
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "scaling/base/format.hpp"
#include "scaling/hardware/chip.hpp"

namespace cli {

void run_chips(bool json) {
  using scaling::format_quantity;
  if (json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& c : scaling::chips()) {
      out.push_back({{"name", c.name},
                     {"display", c.display},
                     {"pod_shape", c.pod_shape},
                     {"host_shape", c.host_shape},
                     {"tensorcores_per_chip", c.tensorcores_per_chip},
                     {"hbm_bytes", c.hbm_bytes},
                     {"hbm_bytes_per_s", c.hbm_bytes_per_s},
                     {"bf16_flops_per_s", c.bf16_flops_per_s},
                     {"int8_flops_per_s", c.int8_flops_per_s > 0 ? nlohmann::json(c.int8_flops_per_s) : nullptr},
                     {"ici_oneway_bytes_per_s", c.ici_oneway_bytes_per_s},
                     {"ici_bidi_bytes_per_s", c.ici_bidi_bytes_per_s},
                     {"ici_hop_latency_s", c.ici_hop_latency_s},
                     {"pcie_bytes_per_s", c.pcie_bytes_per_s},
                     {"dcn_bytes_per_s_per_host", c.dcn_bytes_per_s_per_host},
                     {"source", c.source}});
    }
    std::cout << out.dump(2) << "\n";
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
  fmt::print("\nSources: §2.3 tables of the book for TPUs, §1.1 for the H100 (`scaling chips --json` per chip).\n");
}

}  // namespace cli
