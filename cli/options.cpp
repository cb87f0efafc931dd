#include "options.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

#include "scaling/base/format.hpp"
#include "scaling/base/validate.hpp"

namespace cli {

namespace v = scaling::check;

namespace {
// A CLI11 check from a function that throws std::invalid_argument on a bad text.
CLI::Validator check(const std::string& description, std::function<void(const std::string&)> f) {
  return CLI::Validator(
      [f = std::move(f)](std::string& text) {
        f(text);
        return std::string();
      },
      description);
}
}  // namespace

CLI::Validator size_check(const std::string& name, double max) {
  return check("SIZE", [name, max](const std::string& t) { v::size(name, t, max); });
}
CLI::Validator positive_check(const std::string& name) {
  return check("POSITIVE", [name](const std::string& t) { parse_positive(name, t); });
}
CLI::Validator fraction_check(const std::string& name) {
  return check("FRACTION", [name](const std::string& t) {
    const double x = v::number(name, t);
    if (!(x >= limits::kMinFraction && x <= 1)) v::fail(v::subject(name, t), v::within_rule(limits::kMinFraction, 1));
  });
}
CLI::Validator text_check(const std::string& name) {
  return check("TEXT", [name](const std::string& t) { v::text(name, t); });
}
CLI::Validator path_check(const std::string& name) {
  return check("PATH", [name](const std::string& t) {
    if (t.empty()) v::fail(v::subject(name, t), v::kEmpty);
  });
}
CLI::Validator list_check(const std::string& name, double max_entries) {
  return check("LIST", [name, max_entries](const std::string& t) {
    v::text(name, t);
    std::set<std::string> seen;
    for (const auto& part : split_list(name, t, max_entries))
      if (!seen.insert(part).second) v::fail(v::subject(name, t), "names '" + scaling::escape_for_message(part) + "' twice");
  });
}
CLI::Validator name_check(const std::string& name, std::function<void(const std::string&)> parse) {
  return check("NAME", [name, parse](const std::string& t) {
    v::text(name, t);
    // No dtype, chip, model or collective is named in more than a few dozen characters: a longer text is
    // refused here, so no message echoes it whole.
    if (t.size() > limits::kEchoChars) v::fail(v::subject(name, t), "is longer than any known name");
    for_option(name, [&] { parse(t); });
  });
}
CLI::Validator parse_check(const std::string& label, const std::string& name,
                           std::function<void(const std::string&)> parse) {
  return check(label, [name, parse](const std::string& t) {
    v::text(name, t);
    parse(t);  // its message names the option (for_option where the parser's does not)
  });
}
CLI::Validator shape_check(const std::string& name) {
  return check("AxBxC", [name](const std::string& t) { strict_shape(name, t); });
}

CLI::Option* add_size(CLI::App* sub, const std::string& name, std::string& into, const std::string& help, double max) {
  return sub->add_option(name, into, help + " (a size, " + std::string(v::kSizeSyntax) + "; " + v::at_most_rule(max) + ")")
      ->check(size_check(name, max));
}
CLI::Option* add_positive(CLI::App* sub, const std::string& name, std::string& into, const std::string& help) {
  return sub->add_option(name, into, help)->check(positive_check(name));
}
CLI::Option* add_fraction(CLI::App* sub, const std::string& name, std::string& into, const std::string& help) {
  return sub->add_option(name, into, help)->check(fraction_check(name));
}
CLI::Option* add_name(CLI::App* sub, const std::string& name, std::string& into, const std::string& help,
                      std::function<void(const std::string&)> parse) {
  return sub->add_option(name, into, help)->check(name_check(name, std::move(parse)));
}
CLI::Option* add_text(CLI::App* sub, const std::string& name, std::string& into, const std::string& help) {
  return sub->add_option(name, into, help)->check(text_check(name));
}
CLI::Option* add_path(CLI::App* sub, const std::string& name, std::string& into, const std::string& help) {
  return sub->add_option(name, into, help)->check(path_check(name));
}
CLI::Option* add_list(CLI::App* sub, const std::string& name, std::string& into, const std::string& help,
                      double max_entries) {
  return sub->add_option(name, into, help)->check(list_check(name, max_entries));
}

void add_chip_options(CLI::App* sub, ChipArgs& c) {
  auto* preset = add_name(sub, "--chip", c.chip, "chip preset (see `scaling chips`)",
                          [](const std::string& t) { scaling::chip(t); });
  auto* file = add_path(sub, "--chip-file", c.chip_file, "a JSON chip description (`scaling chips --json` format)");
  preset->excludes(file);
  file->excludes(preset);
  add_positive(sub, "--hbm-bytes", c.hbm_bytes, "override: HBM capacity per chip, bytes");
  add_positive(sub, "--hbm-bw", c.hbm_bw, "override: HBM bandwidth per chip, bytes/s");
  add_positive(sub, "--flops", c.flops, "override: peak bf16 FLOPs/s per chip");
  add_positive(sub, "--flops-int8", c.flops_int8, "override: peak int8 OPs/s per chip");
  add_positive(sub, "--ici-bw", c.ici_bw, "override: ICI bandwidth per link, one way, bytes/s (both ways: twice)");
}

std::vector<int> strict_shape(const std::string& option, const std::string& text) {
  v::text(option, text);
  const auto parts = split_list(option, [&] {
    std::string commas = text;  // the axes counted like a list's entries, before any is read
    std::replace(commas.begin(), commas.end(), 'x', ',');
    return commas;
  }(), 8);
  std::vector<int> shape;
  double chips = 1;
  for (const auto& part : parts) {
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos)
      v::fail(v::subject(option, text), "expected positive whole numbers joined by 'x', like 4x4x4");
    const double axis = v::number(option, part);
    if (axis < 1 || axis > limits::kMaxChips)
      v::fail(v::subject(option, text), "axis " + std::to_string(shape.size()) + " " +
                                            v::within_rule(1, limits::kMaxChips));
    chips *= axis;
    shape.push_back(static_cast<int>(axis));
  }
  if (chips > limits::kMaxChips)
    v::fail(v::subject(option, text), "has " + scaling::format_number(chips) + " chips: " +
                                          v::at_most_rule(limits::kMaxChips));
  return shape;
}

scaling::Slice slice_on_chip(const scaling::Chip& chip, const std::string& option, const std::string& text,
                             scaling::WrapPolicy wrap, const std::string& shown_as) {
  const auto shape = strict_shape(option, text);
  const std::string given = shown_as.empty() ? text : shown_as;
  const std::string display = scaling::escape_for_message(chip.display);
  if (chip.pod_shape.empty()) v::fail(v::subject(option, given), "the " + display + " has no ICI slices (only TPUs do; a GPU takes --chips or --nodes)");
  if (shape.size() != chip.pod_shape.size())
    v::fail(v::subject(option, given), "slices of the " + display + " have " + std::to_string(chip.pod_shape.size()) + " axes");
  for (size_t a = 0; a < shape.size(); ++a)
    if (shape[a] > chip.pod_shape[a])
      v::fail(v::subject(option, given), "axis " + std::to_string(a) + " exceeds the " + display + " pod " +
                                            scaling::shape_text(chip.pod_shape));
  return for_option(v::subject(option, given), [&] { return scaling::make_slice(chip, shape, wrap); });
}

std::pair<int, int> gpu_nodes(const std::string& option, const std::string& text, double n, int per_node) {
  if (n <= per_node) return {1, static_cast<int>(n)};
  if (std::fmod(n, per_node) != 0)
    v::fail(v::subject(option, text), scaling::format_number(n) + " GPUs span nodes of " + std::to_string(per_node) +
                                          ": more than one node must be whole nodes");
  return {static_cast<int>(n / per_node), per_node};
}

scaling::Mesh strict_mesh(const std::string& option, const std::string& text, double max_devices) {
  v::text(option, text);
  double devices = 1;
  for (const auto& part : split_list(option, text, 8)) {
    const auto eq = part.find('=');
    const std::string size = eq == std::string::npos ? "" : part.substr(eq + 1);
    if (eq == 0 || size.empty() || part.find_first_of(" \t+-") != std::string::npos ||
        size.find_first_not_of("0123456789") != std::string::npos)
      v::fail(v::subject(option, text), "expected NAME=SIZE pairs like X=2,Y=8, sizes in plain digits");
    devices *= v::number(option, size);
  }
  if (devices > max_devices)
    v::fail(v::subject(option, text), "has " + scaling::format_number(devices) + " devices: " + v::at_most_rule(max_devices));
  return for_option(option, [&] { return scaling::parse_mesh(text); });
}

}  // namespace cli
