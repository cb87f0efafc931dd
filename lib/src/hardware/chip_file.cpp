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
                                       "nvlink_bytes_per_s", "ib_bytes_per_s", "anatomy", "nvlink_node"};
  return k;
}

// A whole count inside a nested object ("anatomy.sms"): 0 when absent or null.
int count(const json& j, const char* key, const std::string& where, std::string_view file) {
  const double x = positive(j, key, file, false);
  if (x != std::floor(x) || x > 1e6)
    fail(file, "field '" + where + "." + key + "' = " + format_number(x) + ": must be a whole number up to 1,000,000");
  return static_cast<int>(x);
}

const json* object(const json& j, const char* key, const std::set<std::string>& known, std::string_view file) {
  const json* v = field(j, key);
  if (!v) return nullptr;
  if (!v->is_object()) fail(file, std::string("field '") + key + "': expected an object, got " + v->type_name());
  for (const auto& [k, value] : v->items())
    if (!known.count(k)) fail(file, std::string("unknown field '") + key + "." + escape_for_message(k) + "'");
  return v;
}

json or_null(double v) { return v > 0 ? json(v) : json(nullptr); }
json or_null(int v) { return v > 0 ? json(v) : json(nullptr); }

// §12: a GPU's anatomy and its node's NVLink build, as nested objects (null on a TPU).
void read_gpu_figures(const json& j, Chip& c, std::string_view file) {
  static const std::set<std::string> anatomy_keys{
      "sms", "subpartitions_per_sm", "fp32_cores_per_sm", "tensor_cores_per_sm", "base_clock_hz", "boost_clock_hz",
      "smem_bytes_per_sm", "register_bytes_per_sm", "tmem_bytes_per_sm", "l2_bytes", "max_resident_warps_per_sm",
      "fp32_vector_flops_per_s", "source"};
  if (const json* a = object(j, "anatomy", anatomy_keys, file)) {
    auto& g = c.anatomy;
    g.sms = count(*a, "sms", "anatomy", file);
    if (g.sms == 0) fail(file, "field 'anatomy.sms' is required in an anatomy");
    g.subpartitions_per_sm = count(*a, "subpartitions_per_sm", "anatomy", file);
    g.fp32_cores_per_sm = count(*a, "fp32_cores_per_sm", "anatomy", file);
    g.tensor_cores_per_sm = count(*a, "tensor_cores_per_sm", "anatomy", file);
    g.base_clock_hz = positive(*a, "base_clock_hz", file, false);
    g.boost_clock_hz = positive(*a, "boost_clock_hz", file, false);
    g.smem_bytes_per_sm = positive(*a, "smem_bytes_per_sm", file, false);
    g.register_bytes_per_sm = positive(*a, "register_bytes_per_sm", file, false);
    g.tmem_bytes_per_sm = positive(*a, "tmem_bytes_per_sm", file, false);
    g.l2_bytes = positive(*a, "l2_bytes", file, false);
    g.max_resident_warps_per_sm = count(*a, "max_resident_warps_per_sm", "anatomy", file);
    g.fp32_vector_flops_per_s = positive(*a, "fp32_vector_flops_per_s", file, false);
    g.source = text(*a, "source", file, "");
  }
  static const std::set<std::string> node_keys{"nvlink_generation", "nvswitch_generation", "links_per_gpu",
                                               "link_bytes_per_s", "switches_per_node", "ports_per_switch",
                                               "port_bytes_per_s", "source"};
  if (const json* n = object(j, "nvlink_node", node_keys, file)) {
    auto& d = c.node;
    d.nvlink_generation = count(*n, "nvlink_generation", "nvlink_node", file);
    d.nvswitch_generation = count(*n, "nvswitch_generation", "nvlink_node", file);
    d.links_per_gpu = count(*n, "links_per_gpu", "nvlink_node", file);
    d.link_bytes_per_s = positive(*n, "link_bytes_per_s", file, false);
    d.switches_per_node = count(*n, "switches_per_node", "nvlink_node", file);
    d.ports_per_switch = count(*n, "ports_per_switch", "nvlink_node", file);
    d.port_bytes_per_s = positive(*n, "port_bytes_per_s", file, false);
    d.source = text(*n, "source", file, "");  // the node arithmetic also needs gpus_per_node
  }
}

json anatomy_json(const GpuAnatomy& a) {
  if (a.sms <= 0) return nullptr;
  return {{"sms", a.sms},
          {"subpartitions_per_sm", or_null(a.subpartitions_per_sm)},
          {"fp32_cores_per_sm", or_null(a.fp32_cores_per_sm)},
          {"tensor_cores_per_sm", or_null(a.tensor_cores_per_sm)},
          {"base_clock_hz", or_null(a.base_clock_hz)},
          {"boost_clock_hz", or_null(a.boost_clock_hz)},
          {"smem_bytes_per_sm", or_null(a.smem_bytes_per_sm)},
          {"register_bytes_per_sm", or_null(a.register_bytes_per_sm)},
          {"tmem_bytes_per_sm", or_null(a.tmem_bytes_per_sm)},
          {"l2_bytes", or_null(a.l2_bytes)},
          {"max_resident_warps_per_sm", or_null(a.max_resident_warps_per_sm)},
          {"fp32_vector_flops_per_s", or_null(a.fp32_vector_flops_per_s)},
          {"source", a.source}};
}

json node_json(const NvlinkNode& n) {
  if (n.links_per_gpu <= 0) return nullptr;
  return {{"nvlink_generation", or_null(n.nvlink_generation)},
          {"nvswitch_generation", or_null(n.nvswitch_generation)},
          {"links_per_gpu", n.links_per_gpu},
          {"link_bytes_per_s", or_null(n.link_bytes_per_s)},
          {"switches_per_node", or_null(n.switches_per_node)},
          {"ports_per_switch", or_null(n.ports_per_switch)},
          {"port_bytes_per_s", or_null(n.port_bytes_per_s)},
          {"source", n.source}};
}
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
  bool known_wrap = false;
  for (WrapRule r : {WrapRule::cubes, WrapRule::full_axis, WrapRule::none})  // the names of to_string(WrapRule)
    if (wrap == to_string(r)) c.wrap_rule = r, known_wrap = true;
  if (!known_wrap) fail(file, "field 'wraparound' = '" + escape_for_message(wrap) + "': expected cubes, full-axis or none");
  if (!c.pod_shape.empty() && c.ici_oneway_bytes_per_s == 0)
    fail(file, "a chip with a pod_shape needs 'ici_oneway_bytes_per_s' (its slices talk over ICI)");
  // One figure in two units (chip.hpp): a file whose two ICI figures disagree would give the cost model
  // and the simulator different links, so it is refused, naming the field.
  try {
    check_ici_figures(c);
  } catch (const std::invalid_argument& e) {
    fail(file, e.what());
  }
  read_gpu_figures(j, c, file);
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
                  {"anatomy", anatomy_json(c.anatomy)},
                  {"nvlink_node", node_json(c.node)},
                  {"source", c.source}};
  return j.dump(indent);
}

}  // namespace scaling
