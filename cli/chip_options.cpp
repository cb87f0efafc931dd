// --chip / --chip-file and the overrides every chip-taking subcommand shares.
#include "commands.hpp"
#include "limits.hpp"
#include "scaling/base/format.hpp"
#include "scaling/hardware/chip_file.hpp"

namespace cli {

scaling::Chip resolve_chip(const ChipArgs& a) {
  if (a.chip.empty() == a.chip_file.empty())
    throw UsageError(a.chip.empty() ? "give --chip NAME or --chip-file PATH"
                                    : "give --chip or --chip-file, not both");
  scaling::Chip base = a.chip.empty() ? scaling::load_chip_file(a.chip_file) : scaling::chip(a.chip);
  scaling::ChipOverrides o;
  auto take = [](const std::string& option, const std::string& text, std::optional<double>& field) {
    if (!text.empty()) field = parse_positive(option, text);
  };
  take("--hbm-bytes", a.hbm_bytes, o.hbm_bytes);
  take("--hbm-bw", a.hbm_bw, o.hbm_bytes_per_s);
  take("--flops", a.flops, o.bf16_flops_per_s);
  take("--flops-int8", a.flops_int8, o.int8_flops_per_s);
  // A GPU has no ICI: its fast network is NVLink (--nvlink-bw where the subcommand takes a cluster), so an
  // --ici-bw would be silently ignored; refused by name as collective refuses --wrap on a GPU.
  if (!a.ici_bw.empty() && scaling::is_gpu(base))
    throw std::invalid_argument("--ici-bw '" + scaling::escape_for_message(a.ici_bw) + "': the " + base.display +
                                " is a GPU: give --nvlink-bw (NVLink) or --ib-bw (InfiniBand), not --ici-bw");
  take("--ici-bw", a.ici_bw, o.ici_oneway_bytes_per_s);
  // A chip file's name and display are any text: escaped once here, so every heading that shows them
  // prints no control character or invalid UTF-8 (and no 600-character name).
  base.name = scaling::escape_for_message(base.name, limits::kEchoChars);
  base.display = scaling::escape_for_message(base.display, limits::kEchoChars);
  return scaling::with_overrides(std::move(base), o);
}

}  // namespace cli
