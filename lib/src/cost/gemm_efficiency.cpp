#include "scaling/cost/gemm_efficiency.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <utility>

namespace scaling {
namespace detail {
// Generated at configure time from validation/gemm/<card>.json (lib/CMakeLists.txt): {card, JSON text}.
std::vector<std::pair<std::string, std::string>> embedded_gemm_json();
}  // namespace detail

namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& what) { throw std::invalid_argument("gemm table: " + what); }

json parse(std::string_view text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) fail("not JSON");
  if (!j.is_object()) fail("expected a JSON object");
  return j;
}

double number(const json& j, const char* key, const std::string& where) {
  if (!j.contains(key) || !j[key].is_number()) fail(where + ": missing number '" + key + "'");
  const double v = j[key].get<double>();
  if (!std::isfinite(v) || v <= 0) fail(where + ": '" + key + "' must be positive and finite");
  return v;
}

void check_positive(double v, const char* name) {
  if (!std::isfinite(v) || v <= 0) {
    std::ostringstream os;
    os << "gemm lookup: " << name << " = " << v << " must be positive and finite";
    throw std::invalid_argument(os.str());
  }
}

// Piecewise-linear in (log M, log rate) over the curve's points; see the header for the two ends.
double log_rate_at(const std::vector<double>& ms, const std::vector<double>& rates, double m) {
  if (m <= ms.front()) return std::log(rates.front() * m / ms.front());  // memory-bound: time fixed
  if (m >= ms.back()) return std::log(rates.back());
  const auto hi = static_cast<std::size_t>(std::upper_bound(ms.begin(), ms.end(), m) - ms.begin());
  const std::size_t lo = hi - 1;
  const double t = std::log(m / ms[lo]) / std::log(ms[hi] / ms[lo]);
  return (1 - t) * std::log(rates[lo]) + t * std::log(rates[hi]);
}

struct Embedded {
  std::map<std::string, std::vector<GemmTable>> tables;  // per card: bf16, fp8, fp8 fast-accum
  std::map<std::string, std::vector<MemoryKernel>> kernels;
};

const Embedded& embedded() {
  static const Embedded e = [] {
    Embedded out;
    for (const auto& [card, text] : detail::embedded_gemm_json()) {
      for (const char* section : {"gemm_bf16", "gemm_fp8", "gemm_fp8_fast_accum"})
        out.tables[card].push_back(gemm_table_from_json(text, section));
      out.kernels[card] = memory_kernels_from_json(text);
    }
    return out;
  }();
  return e;
}

std::string known_cards() {
  std::string s;
  for (const auto& c : measured_cards()) s += (s.empty() ? "" : ", ") + c;
  return s;
}

}  // namespace

GemmTable gemm_table_from_json(std::string_view json_text, std::string_view section) {
  const json j = parse(json_text);
  const std::string sec(section);
  if (!j.contains(sec) || !j[sec].is_array()) fail("no array '" + sec + "'");
  GemmTable t;
  t.card = j.value("gpu", json::object()).value("name", "");
  if (t.card.empty()) fail("missing 'gpu.name'");
  t.dtype = sec == "gemm_bf16" ? Dtype::bf16 : Dtype::fp8;
  t.fast_accum = sec == "gemm_fp8_fast_accum";
  const json& peak = j.value("peak_reference", json::object());
  if (!peak.is_object()) fail("'peak_reference' is not an object");
  t.peak_flops_per_s = number(peak, t.dtype == Dtype::bf16 ? "bf16_flops_per_s" : "fp8_flops_per_s",
                              "peak_reference");
  t.peak_source = peak.value("source", "");
  t.measured = j.value("date_utc", "") + ", torch " + j.value("torch", "") + ", CUDA " + j.value("cuda", "");

  // Group the measured entries by (K, N); rate = 2·M·K·N / median time, recomputed from the raw fields.
  std::map<std::pair<double, double>, std::map<double, double>> by_pair;
  std::size_t index = 0;
  for (const json& e : j[sec]) {
    const std::string where = sec + "[" + std::to_string(index++) + "]";
    if (e.contains("error") || e.contains("skipped")) fail(where + ": not measured");
    const double m = number(e, "M", where), k = number(e, "K", where), n = number(e, "N", where);
    by_pair[{k, n}][m] = 2.0 * m * k * n / number(e, "median_s", where);
  }
  if (by_pair.empty()) fail("'" + sec + "' is empty");
  for (const auto& [kn, curve] : by_pair) {
    std::vector<double> ms;
    GemmCurve c{kn.first, kn.second, {}};
    for (const auto& [m, rate] : curve) {
      ms.push_back(m);
      c.flops_per_s.push_back(rate);
    }
    if (t.m.empty()) t.m = ms;
    if (ms != t.m) fail(sec + ": every (K, N) pair must be measured at the same M values");
    t.curves.push_back(std::move(c));
  }
  return t;
}

std::vector<MemoryKernel> memory_kernels_from_json(std::string_view json_text) {
  const json j = parse(json_text);
  if (!j.contains("bandwidth") || !j["bandwidth"].is_array()) fail("no array 'bandwidth'");
  std::vector<MemoryKernel> out;
  for (const json& e : j["bandwidth"]) {
    if (!e.contains("bytes_per_s")) continue;  // an error or a skip: nothing measured
    MemoryKernel k;
    k.op = e.value("op", "");
    k.dtype = e.value("dtype", "");
    for (const json& d : e.value("shape", json::array())) k.shape.push_back(d.get<double>());
    k.bytes_per_s = number(e, "bytes_per_s", "bandwidth " + k.op);
    out.push_back(std::move(k));
  }
  return out;
}

std::vector<std::string> measured_cards() {
  std::vector<std::string> cards;
  for (const auto& [card, text] : detail::embedded_gemm_json()) cards.push_back(card);
  return cards;
}

const GemmTable& measured_gemm_table(std::string_view card, Dtype dtype, bool fast_accum) {
  const auto& e = embedded();
  const auto it = e.tables.find(std::string(card));
  if (it == e.tables.end())
    throw std::invalid_argument("gemm table: no measurement for card '" + std::string(card) +
                                "' (measured: " + known_cards() + ")");
  if (dtype == Dtype::bf16 && !fast_accum) return it->second[0];
  if (dtype == Dtype::fp8) return it->second[fast_accum ? 2 : 1];
  throw std::invalid_argument("gemm table: dtype '" + std::string(name(dtype)) +
                              "' was not measured (bf16, and fp8 with or without fast accumulation)");
}

const std::vector<MemoryKernel>& measured_memory_kernels(std::string_view card) {
  const auto& e = embedded();
  const auto it = e.kernels.find(std::string(card));
  if (it == e.kernels.end())
    throw std::invalid_argument("gemm table: no measurement for card '" + std::string(card) +
                                "' (measured: " + known_cards() + ")");
  return it->second;
}

double achieved_flops_per_s(const GemmTable& table, double m, double k, double n) {
  check_positive(m, "M");
  check_positive(k, "K");
  check_positive(n, "N");
  if (table.curves.empty() || table.m.empty()) throw std::invalid_argument("gemm lookup: empty table");
  // The four nearest measured (K, N) pairs in log2 space, inverse-square-distance weights on log rates.
  std::vector<std::pair<double, const GemmCurve*>> nearest;
  for (const auto& c : table.curves) {
    const double dk = std::log2(k / c.k), dn = std::log2(n / c.n);
    nearest.emplace_back(dk * dk + dn * dn, &c);
  }
  const std::size_t count = std::min<std::size_t>(4, nearest.size());
  std::partial_sort(nearest.begin(), nearest.begin() + static_cast<std::ptrdiff_t>(count), nearest.end(),
                    [](const auto& a, const auto& b) { return a.first < b.first; });
  if (nearest.front().first < 1e-18) return std::exp(log_rate_at(table.m, nearest.front().second->flops_per_s, m));
  double weight_sum = 0, log_sum = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const double w = 1.0 / nearest[i].first;
    weight_sum += w;
    log_sum += w * log_rate_at(table.m, nearest[i].second->flops_per_s, m);
  }
  return std::exp(log_sum / weight_sum);
}

double gemm_efficiency(const GemmTable& table, double m, double k, double n) {
  return achieved_flops_per_s(table, m, k, n) / table.peak_flops_per_s;
}

double measured_bytes_per_s(std::string_view card, std::string_view op) {
  std::vector<double> rates;
  for (const auto& k : measured_memory_kernels(card))
    if (k.op == op) rates.push_back(k.bytes_per_s);
  if (rates.empty()) {
    std::string ops;
    for (const auto& k : measured_memory_kernels(card))
      if (ops.find(k.op) == std::string::npos) ops += (ops.empty() ? "" : ", ") + k.op;
    throw std::invalid_argument("gemm table: no kernel '" + std::string(op) + "' measured on " +
                                std::string(card) + " (measured: " + ops + ")");
  }
  std::sort(rates.begin(), rates.end());
  const std::size_t h = rates.size() / 2;
  return rates.size() % 2 ? rates[h] : 0.5 * (rates[h - 1] + rates[h]);
}

}  // namespace scaling
