#include "scaling/hardware/chip_file.hpp"

#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "scaling/base/format.hpp"
#include "scaling/base/text_file.hpp"
#include "scaling/base/validate.hpp"

namespace scaling {

namespace {
using nlohmann::json;

[[noreturn]] void fail(std::string_view file, const std::string& what) {
  throw std::invalid_argument(escape_for_message(file, 200) + ": " + what);
}

const json* field(const json& j, const char* key) {
  const auto it = j.find(key);
  return it == j.end() || it->is_null() ? nullptr : &*it;
}

double positive(const json& j, const char* key, std::string_view file, bool required) {
  const json* v = field(j, key);
  if (!v) {
    if (required) fail(file, std::string("missing required field '") + key + "'");
    return 0;  // "none"
  }
  if (!v->is_number()) fail(file, std::string("field '") + key + "': expected a number, got " + v->type_name());
  const double x = v->get<double>();
  if (!std::isfinite(x) || x <= 0)
    fail(file, std::string("field '") + key + "' = " + format_number(x) + ": must be a positive number");
  // The range every figure has, on the command line too (validate.hpp: kMinFigure, kMaxFigure).
  if (!(x >= check::kMinFigure && x <= check::kMaxFigure))
    fail(file, std::string("field '") + key + "' = " + format_number(x) + ": " +
                   check::within_rule(check::kMinFigure, check::kMaxFigure));
  return x;
}

std::string text(const json& j, const char* key, std::string_view file, const std::string& fallback) {
  const json* v = field(j, key);
  if (!v) return fallback;
  if (!v->is_string()) fail(file, std::string("field '") + key + "': expected a string, got " + v->type_name());
  const std::string value = v->get<std::string>();
  // Names are printed in tables and messages: one line each.
  for (const char c : value)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      fail(file, std::string("field '") + key + "' = '" + escape_for_message(value) + "': holds a control character");
  return value;
}

std::vector<int> shape(const json& j, const char* key, std::string_view file) {
  const json* v = field(j, key);
  if (!v) return {};
  if (!v->is_array()) fail(file, std::string("field '") + key + "': expected an array, got " + v->type_name());
  std::vector<int> out;
  for (const auto& e : *v) {
    if (!e.is_number()) fail(file, std::string("field '") + key + "': expected whole numbers");
    const double x = e.get<double>();
    if (!(x >= 1 && x <= 1e6) || x != std::floor(x))
      fail(file, std::string("field '") + key + "' holds " + format_number(x) +
                     ": each axis must be a whole number from 1 to 1,000,000");
    out.push_back(static_cast<int>(x));
  }
  if (out.size() > 8) fail(file, std::string("field '") + key + "' has more than 8 axes");
  return out;
}

const std::set<std::string>& known_fields() {
  static const std::set<std::string> k{"name", "display", "source", "pod_shape", "host_shape", "tensorcores_per_chip",
                                       "hbm_bytes", "hbm_bytes_per_s", "bf16_flops_per_s", "int8_flops_per_s",
                                       "ici_oneway_bytes_per_s", "ici_bidi_bytes_per_s", "ici_hop_latency_s",
                                       "pcie_bytes_per_s", "dcn_bytes_per_s_per_host", "wraparound",
                                       "fp8_flops_per_s", "fp4_flops_per_s", "gpus_per_node",
                                       "nvlink_bytes_per_s", "ib_bytes_per_s"};
  return k;
}

json or_null(double v) { return v > 0 ? json(v) : json(nullptr); }
}  // namespace

Chip chip_from_json(std::string_view json_text, std::string_view file) {
  json j;
  try {
    j = json::parse(json_text);
  } catch (const json::exception& e) {
    fail(file, "not JSON (" + std::string(e.id == 101 ? "syntax error" : "unreadable") + " at byte " +
                   std::to_string(e.id == 101 ? static_cast<const json::parse_error&>(e).byte : 0) + ")");
  }
  if (!j.is_object()) fail(file, "expected a JSON object describing one chip");
  for (const auto& [key, value] : j.items())
    if (!known_fields().count(key)) fail(file, "unknown field '" + escape_for_message(key) + "'");
  Chip c{};
  c.name = text(j, "name", file, "");
  if (c.name.empty()) fail(file, "missing required field 'name'");
  c.display = text(j, "display", file, c.name);
  c.source = text(j, "source", file, std::string(file));
  c.pod_shape = shape(j, "pod_shape", file);
  c.host_shape = shape(j, "host_shape", file);
  const double cores = field(j, "tensorcores_per_chip") ? positive(j, "tensorcores_per_chip", file, true) : 1;
  if (cores != std::floor(cores) || cores > 64) fail(file, "field 'tensorcores_per_chip' must be a whole number up to 64");
  c.tensorcores_per_chip = static_cast<int>(cores);
  c.hbm_bytes = positive(j, "hbm_bytes", file, true);
  c.hbm_bytes_per_s = positive(j, "hbm_bytes_per_s", file, true);
  c.bf16_flops_per_s = positive(j, "bf16_flops_per_s", file, true);
  c.int8_flops_per_s = positive(j, "int8_flops_per_s", file, false);
  c.ici_oneway_bytes_per_s = positive(j, "ici_oneway_bytes_per_s", file, false);
  c.ici_bidi_bytes_per_s = positive(j, "ici_bidi_bytes_per_s", file, false);
  if (c.ici_bidi_bytes_per_s == 0) c.ici_bidi_bytes_per_s = 2 * c.ici_oneway_bytes_per_s;
  c.ici_hop_latency_s = positive(j, "ici_hop_latency_s", file, false);
  c.pcie_bytes_per_s = positive(j, "pcie_bytes_per_s", file, false);
  c.dcn_bytes_per_s_per_host = positive(j, "dcn_bytes_per_s_per_host", file, false);
  c.fp8_flops_per_s = positive(j, "fp8_flops_per_s", file, false);
  c.fp4_flops_per_s = positive(j, "fp4_flops_per_s", file, false);
  const double gpus = positive(j, "gpus_per_node", file, false);
  if (gpus != std::floor(gpus) || gpus > 1024) fail(file, "field 'gpus_per_node' must be a whole number up to 1024");
  c.gpus_per_node = static_cast<int>(gpus);
  c.nvlink_bytes_per_s = positive(j, "nvlink_bytes_per_s", file, false);
  c.ib_bytes_per_s = positive(j, "ib_bytes_per_s", file, false);
  if (c.gpus_per_node > 0 && !c.pod_shape.empty())
    fail(file, "a chip has either a pod_shape (TPU slices over ICI) or gpus_per_node (GPU nodes over NVLink), not both");
  const std::string wrap = text(j, "wraparound", file, "none");
  if (wrap == "cubes") c.wrap_rule = WrapRule::cubes;
  else if (wrap == "full-axis") c.wrap_rule = WrapRule::full_axis;
  else if (wrap == "none") c.wrap_rule = WrapRule::none;
  else fail(file, "field 'wraparound' = '" + escape_for_message(wrap) + "': expected cubes, full-axis or none");
  if (!c.pod_shape.empty() && c.ici_oneway_bytes_per_s == 0)
    fail(file, "a chip with a pod_shape needs 'ici_oneway_bytes_per_s' (its slices talk over ICI)");
  return c;
}

Chip load_chip_file(const std::string& path) { return chip_from_json(read_text_file(path, "chip file"), path); }

std::string chip_to_json(const Chip& c, int indent) {
  const json j = {{"name", c.name},
                  {"display", c.display},
                  {"pod_shape", c.pod_shape},
                  {"host_shape", c.host_shape},
                  {"tensorcores_per_chip", c.tensorcores_per_chip},
                  {"hbm_bytes", c.hbm_bytes},
                  {"hbm_bytes_per_s", c.hbm_bytes_per_s},
                  {"bf16_flops_per_s", c.bf16_flops_per_s},
                  {"int8_flops_per_s", or_null(c.int8_flops_per_s)},
                  {"ici_oneway_bytes_per_s", or_null(c.ici_oneway_bytes_per_s)},
                  {"ici_bidi_bytes_per_s", or_null(c.ici_bidi_bytes_per_s)},
                  {"ici_hop_latency_s", or_null(c.ici_hop_latency_s)},
                  {"pcie_bytes_per_s", or_null(c.pcie_bytes_per_s)},
                  {"dcn_bytes_per_s_per_host", or_null(c.dcn_bytes_per_s_per_host)},
                  {"wraparound", to_string(c.wrap_rule)},
                  {"fp8_flops_per_s", or_null(c.fp8_flops_per_s)},
                  {"fp4_flops_per_s", or_null(c.fp4_flops_per_s)},
                  {"gpus_per_node", c.gpus_per_node > 0 ? json(c.gpus_per_node) : json(nullptr)},
                  {"nvlink_bytes_per_s", or_null(c.nvlink_bytes_per_s)},
                  {"ib_bytes_per_s", or_null(c.ib_bytes_per_s)},
                  {"source", c.source}};
  return j.dump(indent);
}

}  // namespace scaling
