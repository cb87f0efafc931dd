#pragma once
// A chip described in JSON: the format `scaling chips --json` prints for each preset, so a user can start
// from a preset's entry and change what differs. Keys (SI units):
//   name (required), display, source                       strings
//   hbm_bytes, hbm_bytes_per_s, bf16_flops_per_s           required, positive
//   int8_flops_per_s, ici_oneway_bytes_per_s, ici_bidi_bytes_per_s, ici_hop_latency_s, pcie_bytes_per_s,
//   dcn_bytes_per_s_per_host                               optional: positive, or null/absent for "none"
//                                                          (ici_bidi defaults to twice ici_oneway and must
//                                                          equal it when given: check_ici_figures)
//   pod_shape, host_shape                                  arrays of positive whole numbers (may be empty)
//   tensorcores_per_chip                                   positive whole number (default 1)
//   wraparound                                             "cubes", "full-axis" or "none" (default)
//   fp8_flops_per_s, fp4_flops_per_s, gpus_per_node, nvlink_bytes_per_s, ib_bytes_per_s   GPUs, optional
//   anatomy                                                GPU: object (GpuAnatomy's fields; sms required,
//                                                          the rest positive or null) or null
//   nvlink_node                                            GPU: object (NvlinkNode's fields) or null; the
//                                                          node arithmetic uses it with gpus_per_node
// Anything else — malformed JSON, a missing, mistyped, non-positive or unknown field — throws
// std::invalid_argument with one line naming the field.
#include <string>
#include <string_view>

#include "scaling/hardware/chip.hpp"

namespace scaling {

Chip chip_from_json(std::string_view json_text, std::string_view file = "chip file");
Chip load_chip_file(const std::string& path);
// The JSON object of one chip, as chip_from_json reads it (absent figures as null).
std::string chip_to_json(const Chip& c, int indent = 2);

}  // namespace scaling
