#include "scaling/notation/sharding.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>
#include <stdexcept>

#include "scaling/base/format.hpp"

namespace scaling {

namespace {

// Bounds that keep parsing linear and every product finite: no real mesh or array comes near them.
constexpr size_t kMaxMeshAxes = 16, kMaxDims = 64;

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

bool is_identifier(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)); });
}

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t end = s.find(sep, start);
    out.push_back(trim(s.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start)));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return out;
}

// "XY" -> {"X", "Y"} using the mesh's names, longest match first.
std::vector<std::string> split_axes(const std::string& text, const Mesh& mesh, std::string_view where) {
  std::vector<std::string> names;
  for (const auto& a : mesh.axes) names.push_back(a.name);
  std::sort(names.begin(), names.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < text.size()) {
    const auto match = std::find_if(names.begin(), names.end(),
                                    [&](const std::string& n) { return text.compare(pos, n.size(), n) == 0; });
    if (match == names.end()) {
      std::string known;
      for (const auto& a : mesh.axes) known += (known.empty() ? "" : ", ") + a.name;
      throw std::invalid_argument(std::string(where) + ": unknown mesh axis in '" + text.substr(pos) +
                                  "' (mesh axes: " + known + ")");
    }
    out.push_back(*match);
    pos += match->size();
  }
  return out;
}

}  // namespace

int Mesh::size_of(std::string_view axis) const {
  for (const auto& a : axes)
    if (a.name == axis) return a.size;
  throw std::invalid_argument("unknown mesh axis '" + std::string(axis) + "'");
}

double Mesh::devices() const {
  double n = 1;
  for (const auto& a : axes) n *= a.size;
  return n;
}

Mesh parse_mesh(std::string_view text) {
  require_printable("mesh", text);
  // Strict, as the CLI's strict_mesh: no space anywhere (split would trim ' X=2' and 'X=2, Y=8').
  if (text.find_first_of(" \f\n\r\t\v") != std::string_view::npos)
    throw std::invalid_argument("mesh '" + escape_for_message(text) + "': expected NAME=SIZE pairs like X=2,Y=8, "
                                "with no spaces");
  Mesh mesh;
  for (const auto& part : split(text, ',')) {
    const auto eq = part.find('=');
    // Plain digits only: 'X=+2' is refused like the CLI's numbers.
    const std::string name(part.substr(0, eq == std::string::npos ? part.size() : eq));
    if (eq == std::string::npos || !is_identifier(name))
      throw std::invalid_argument("mesh '" + escape_for_message(text) + "': expected NAME=SIZE pairs like X=2,Y=8");
    const std::string size_text(part.substr(eq + 1));
    const bool digits = !size_text.empty() && size_text.size() <= 7 &&
                        size_text.find_first_not_of("0123456789") == std::string::npos;
    const long size = digits ? std::strtol(size_text.c_str(), nullptr, 10) : 0;
    if (!digits || size < 1 || size > 1'000'000)
      throw std::invalid_argument("mesh axis " + name + " = '" + escape_for_message(size_text) +
                                  "': must be a positive whole number, in plain digits");
    for (const auto& a : mesh.axes)
      if (a.name == name) throw std::invalid_argument("mesh axis " + name + " named twice");
    mesh.axes.push_back({name, static_cast<int>(size)});
    if (mesh.axes.size() > kMaxMeshAxes)
      throw std::invalid_argument("mesh '" + escape_for_message(text) + "': more than " + std::to_string(kMaxMeshAxes) +
                                  " axes");
  }
  return mesh;
}

Sharding parse_sharding(std::string_view raw, const Mesh& mesh) {
  require_printable("sharding", raw);
  const std::string text = trim(raw);
  const std::string where = "sharding '" + escape_for_message(text) + "'";
  const auto open = text.find('['), close = text.find(']');
  if (open == std::string::npos || close == std::string::npos || close < open)
    throw std::invalid_argument(where + ": expected NAME[dim, dim, ...], like A[I_X, J]");
  Sharding s;
  s.array = trim(std::string_view(text).substr(0, open));
  if (!s.array.empty() && !is_identifier(s.array)) throw std::invalid_argument(where + ": bad array name '" + escape_for_message(s.array) + "'");

  std::set<std::string> used;
  auto claim = [&](const std::string& axis, const std::string& what) {
    if (!used.insert(axis).second)
      throw std::invalid_argument(where + ": mesh axis " + escape_for_message(axis) + " used twice (" + what + ")");
  };
  for (const auto& dim_text : split(std::string_view(text).substr(open + 1, close - open - 1), ',')) {
    const auto us = dim_text.find('_');
    ShardedDim d{trim(dim_text.substr(0, us)), {}};
    if (!is_identifier(d.name)) throw std::invalid_argument(where + ": bad dimension '" + escape_for_message(dim_text) + "'");
    if (us != std::string::npos) {
      const std::string sub = trim(dim_text.substr(us + 1));
      if (sub.empty()) throw std::invalid_argument(where + ": empty subscript in '" + escape_for_message(dim_text) + "'");
      d.axes = split_axes(sub, mesh, where);
      for (const auto& a : d.axes) claim(a, "dimension " + d.name);
    }
    for (const auto& other : s.dims)
      if (other.name == d.name) throw std::invalid_argument(where + ": dimension " + escape_for_message(d.name) + " named twice");
    s.dims.push_back(d);
    if (s.dims.size() > kMaxDims)
      throw std::invalid_argument(where + ": more than " + std::to_string(kMaxDims) + " dimensions");
  }

  const std::string rest = trim(std::string_view(text).substr(close + 1));
  if (!rest.empty()) {
    if (rest.front() != '{' || rest.back() != '}')
      throw std::invalid_argument(where + ": unexpected '" + escape_for_message(rest) + "' after ']' (only {U_...} may follow)");
    for (const auto& u : split(std::string_view(rest).substr(1, rest.size() - 2), ',')) {
      if (u.size() < 3 || u.compare(0, 2, "U_") != 0)
        throw std::invalid_argument(where + ": expected U_<axes> inside {}, got '" + escape_for_message(u) + "'");
      for (const auto& a : split_axes(u.substr(2), mesh, where)) {
        claim(a, "unreduced");
        s.unreduced.push_back(a);
      }
    }
  }
  return s;
}

std::string to_string(const Sharding& s) {
  std::string out = s.array + "[";
  for (size_t i = 0; i < s.dims.size(); ++i) {
    if (i) out += ", ";
    out += s.dims[i].name;
    if (!s.dims[i].axes.empty()) {
      out += "_";
      for (const auto& a : s.dims[i].axes) out += a;
    }
  }
  out += "]";
  if (!s.unreduced.empty()) {
    out += "{U_";
    for (const auto& a : s.unreduced) out += a;
    out += "}";
  }
  return out;
}

double shards(const ShardedDim& d, const Mesh& mesh) {
  double n = 1;
  for (const auto& a : d.axes) n *= mesh.size_of(a);
  return n;
}

ShardedArray evaluate(const Sharding& s, const Mesh& mesh, const std::vector<double>& global_shape, Dtype dtype) {
  if (global_shape.size() != s.dims.size())
    throw std::invalid_argument(to_string(s) + ": shape has " + std::to_string(global_shape.size()) +
                                " dimensions, the sharding " + std::to_string(s.dims.size()));
  ShardedArray out{};
  double local_elements = 1, global_elements = 1;
  for (size_t i = 0; i < s.dims.size(); ++i) {
    const double size = global_shape[i], n = shards(s.dims[i], mesh);
    if (!(size >= 1) || size != std::floor(size))
      throw std::invalid_argument("dimension " + s.dims[i].name + " = " + format_number(size) +
                                  ": must be a positive whole number");
    if (std::fmod(size, n) != 0)
      throw std::invalid_argument("dimension " + s.dims[i].name + " = " + format_number(size) +
                                  " is not divisible by its " + format_number(n) + " shards");
    out.local_shape.push_back(size / n);
    local_elements *= size / n;
    global_elements *= size;
  }
  out.bytes_per_device = local_elements * bytes_per_element(dtype);
  out.total_bytes = out.bytes_per_device * mesh.devices();
  out.replication = out.total_bytes / (global_elements * bytes_per_element(dtype));
  if (!std::isfinite(out.total_bytes) || !std::isfinite(out.replication) || !(out.replication > 0))
    throw std::invalid_argument(to_string(s) + ": the array's bytes overflow a double (" + format_number(global_elements) +
                                " elements); give a smaller shape");
  return out;
}

}  // namespace scaling
