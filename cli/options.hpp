#pragma once
// The typed options every subcommand module declares with: each option carries a CLI11 check that reads
// its text through base/validate.hpp, so a bad value is refused while the command line is parsed, with
// one message per rule that names the option ("--mfu '2': must be within [1e-06, 1]"). A check throws
// std::invalid_argument (exit 1), which CLI11 passes through unchanged.
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "commands.hpp"
#include "limits.hpp"
#include "scaling/hardware/topology.hpp"
#include "scaling/notation/sharding.hpp"

namespace cli {

// A size or count: "4096", "1e6", "8k" (k = 1e3, M = 1e6, G = 1e9, T = 1e12), a positive whole number up to `max`.
CLI::Option* add_size(CLI::App* sub, const std::string& name, std::string& into, const std::string& help,
                      double max = limits::kDefaultSize);
// A hardware figure (a bandwidth, a peak, a latency): "8.1e11", within [limits::kMinFigure, limits::kMaxFigure].
CLI::Option* add_positive(CLI::App* sub, const std::string& name, std::string& into, const std::string& help);
// A fraction in [limits::kMinFraction, 1] (--mfu).
CLI::Option* add_fraction(CLI::App* sub, const std::string& name, std::string& into, const std::string& help);
// A name read by `parse` (a dtype, a collective, …): its message is prefixed with the option.
CLI::Option* add_name(CLI::App* sub, const std::string& name, std::string& into, const std::string& help,
                      std::function<void(const std::string&)> parse);
// Text that is a notation (a shape, a mesh, a path): printable, no leading or trailing space.
CLI::Option* add_text(CLI::App* sub, const std::string& name, std::string& into, const std::string& help);
// A file path (--config, --chip-file): any bytes but empty; echoed escaped wherever it is printed.
CLI::Option* add_path(CLI::App* sub, const std::string& name, std::string& into, const std::string& help);
// A comma-separated list of at most max_entries entries, each once.
CLI::Option* add_list(CLI::App* sub, const std::string& name, std::string& into, const std::string& help,
                      double max_entries);

// The checks themselves, for options declared elsewhere (train and plan in main.cpp).
CLI::Validator size_check(const std::string& name, double max = limits::kDefaultSize);
CLI::Validator positive_check(const std::string& name);
CLI::Validator fraction_check(const std::string& name);
CLI::Validator text_check(const std::string& name);
CLI::Validator path_check(const std::string& name);
CLI::Validator list_check(const std::string& name, double max_entries);
CLI::Validator name_check(const std::string& name, std::function<void(const std::string&)> parse);
// As name_check, shown in --help as `label` ("RULE", "0-3"): for a value that is not a name (a number
// with a range, a rule's sum), so the help says what the option takes. `parse` names the option in its
// message itself.
CLI::Validator parse_check(const std::string& label, const std::string& name,
                           std::function<void(const std::string&)> parse);
// A slice shape as typed: digits joined by 'x' and nothing else (no space, no '+'), at most 8 axes,
// each at most the largest pod side, the chips at most limits::kMaxChips.
CLI::Validator shape_check(const std::string& name);

// --chip / --chip-file and the overrides of single figures, as every chip-taking subcommand declares them.
void add_chip_options(CLI::App* sub, ChipArgs& c);

// The one validation of a slice against a chip, for every subcommand that takes a slice (collective,
// serve, collective-matmul's mesh; train and plan should call it too): the text must be a strict shape
// (shape_check's rule), the chip must have ICI slices, the axes must match its pod's and no axis may
// exceed the pod's. Errors name `option` and the text: "--slice '3x3x3x3': slices of the TPU v5e have 2 axes"; `shown_as` replaces the text in messages.
scaling::Slice slice_on_chip(const scaling::Chip& chip, const std::string& option, const std::string& text,
                             scaling::WrapPolicy wrap = scaling::WrapPolicy::automatic, const std::string& shown_as = {});
// The strict shape alone (no chip): {4, 4, 4} from "4x4x4".
std::vector<int> strict_shape(const std::string& option, const std::string& text);

// n GPUs (--chips N of serve, train, plan) on nodes of per_node: one node when n <= per_node, else whole
// nodes. The one rule those subcommands share; returns {nodes, GPUs per node}. Refusals name option/text.
std::pair<int, int> gpu_nodes(const std::string& option, const std::string& text, double n, int per_node);

// A mesh "X=2,Y=8" as typed, strictly: NAME=DIGITS pairs with no space anywhere and no sign, at most 8
// axes, the devices at most max_devices; then parsed by the library's parse_mesh.
scaling::Mesh strict_mesh(const std::string& option, const std::string& text, double max_devices = limits::kMaxChips);

}  // namespace cli
