// Chip files (README, "Your own chip"): chip_from_json, and chip_to_json of the result parses back to
// the same chip. Input: the file's text.
#include "contract.hpp"
#include "scaling/cost/roofline.hpp"
#include "scaling/hardware/chip.hpp"
#include "scaling/hardware/chip_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 65536) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  scaling::Chip c;
  if (!fuzz::accepted([&] { c = scaling::chip_from_json(text, "fuzz.json"); })) return 0;
  const std::string canonical = scaling::chip_to_json(c, 0);
  scaling::Chip back;
  fuzz::require(fuzz::accepted([&] { back = scaling::chip_from_json(canonical, "fuzz.json"); }),
                "canonical chip file refused: " + canonical);
  fuzz::require(scaling::chip_to_json(back, 0) == canonical, "chip file does not round-trip: " + canonical);
  for (double v : {c.hbm_bytes, c.hbm_bytes_per_s, c.bf16_flops_per_s, c.int8_flops_per_s, c.ici_oneway_bytes_per_s,
                   c.ici_bidi_bytes_per_s, c.ici_hop_latency_s, c.pcie_bytes_per_s, c.dcn_bytes_per_s_per_host})
    fuzz::finite(v, "a chip figure");
  fuzz::finite(scaling::critical_intensity(c.bf16_flops_per_s, c.hbm_bytes_per_s), "critical intensity");
  return 0;
}
