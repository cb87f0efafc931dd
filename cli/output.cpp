#include "output.hpp"

#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <stdexcept>
#include <cstdint>

#include "scaling/base/format.hpp"

namespace cli {

nlohmann::json count_json(double v) {
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 9.2e18) return static_cast<int64_t>(v);
  return v;
}

std::string json_text(const nlohmann::json& j, int indent) {
  const std::string dumped = j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
  // The dump is valid UTF-8 and escapes C0 itself; outside strings JSON is ASCII, so a byte 0x7f or the
  // pair C2 80..9F can only be inside a string, where \u007f / \u0080 mean the same character.
  std::string out;
  out.reserve(dumped.size());
  for (size_t i = 0; i < dumped.size(); ++i) {
    const auto c = static_cast<unsigned char>(dumped[i]);
    const auto next = i + 1 < dumped.size() ? static_cast<unsigned char>(dumped[i + 1]) : 0u;
    if (c == 0x7f) {
      out += "\\u007f";
    } else if (c == 0xc2 && next >= 0x80 && next <= 0x9f) {
      out += fmt::format("\\u{:04x}", next);
      ++i;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

namespace {
std::string table_value(const Output& o) {
  if (const auto* s = std::get_if<std::string>(&o.value)) return scaling::escape_for_message(*s, 200);
  if (const auto* b = std::get_if<bool>(&o.value)) return *b ? "yes" : "no";
  const double v = std::get<double>(o.value);
  if (o.unit == kCount) return scaling::format_number(v);
  if (o.unit == "x") return scaling::format_number(v) + "x";
  return scaling::format_quantity(v, o.unit);
}
}  // namespace

void emit(const Report& r, bool json, const std::string& inputs) {
  for (const auto& o : r.outputs)
    if (const auto* v = std::get_if<double>(&o.value); v && !std::isfinite(*v))
      throw std::invalid_argument(fmt::format("{} is not a finite number for {}: out of range",
                                              o.label.empty() ? o.key : o.label, inputs.empty() ? "these inputs" : inputs));
  if (json) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& o : r.outputs) {
      if (o.key.empty()) continue;  // a table-only line
      if (const auto* s = std::get_if<std::string>(&o.value)) out[o.key] = *s;
      else if (const auto* b = std::get_if<bool>(&o.value)) out[o.key] = *b;
      else
        out[o.key] = o.unit == kCount || o.whole ? count_json(std::get<double>(o.value)) : nlohmann::json(std::get<double>(o.value));
    }
    for (const auto& [k, v] : r.extra.items()) out[k] = v;
    std::cout << json_text(out, r.compact ? -1 : 2) << "\n";
    return;
  }
  fmt::print("{}\n", scaling::escape_for_message(r.heading, 400));
  if (!r.head.empty()) fmt::print("{}", r.head);
  for (const auto& o : r.outputs)
    if (!o.label.empty())
      fmt::print("  {:<{}} {:>{}}{}\n", scaling::escape_for_message(o.label, 200), r.label_width, table_value(o),
                 r.value_width, o.note.empty() ? "" : " " + o.note);
  if (!r.tail.empty()) fmt::print("{}", r.tail);
}

}  // namespace cli
