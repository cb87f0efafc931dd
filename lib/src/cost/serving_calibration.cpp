#include "scaling/cost/serving_calibration.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace scaling {
namespace detail {
std::vector<std::pair<std::string, std::string>> embedded_gemm_json();  // gemm_efficiency.cpp's build-time tables
}  // namespace detail

namespace {

// Median causal flash-attention forward rate of a measured card (its "attention" section, op sdpa_fwd_causal).
double measured_attention_flops_per_s(const std::string& card) {
  for (const auto& [name, text] : detail::embedded_gemm_json()) {
    if (name != card) continue;
    const auto j = nlohmann::json::parse(text, nullptr, false);
    std::vector<double> rates;
    if (j.is_object() && j.contains("attention"))
      for (const auto& e : j["attention"])
        if (e.value("op", "") == "sdpa_fwd_causal" && e.contains("flops_per_s")) rates.push_back(e["flops_per_s"].get<double>());
    if (rates.empty()) return 0;
    std::sort(rates.begin(), rates.end());
    return rates[rates.size() / 2];
  }
  return 0;
}

// Built once: the measured cards' figures (parsing the embedded JSON is far slower than a step).
struct Measured {
  std::vector<std::string> cards;
  std::vector<double> attention_flops_per_s;  // per card, same order
};
const Measured& measured() {
  static const Measured m = [] {
    Measured out;
    out.cards = measured_cards();
    for (const auto& card : out.cards) out.attention_flops_per_s.push_back(measured_attention_flops_per_s(card));
    return out;
  }();
  return m;
}

}  // namespace

ServingCalibration serving_calibration(const Chip& chip) {
  ServingCalibration c;
  c.hbm_bytes_per_s = chip.hbm_bytes_per_s;
  c.hbm_source = "datasheet (no achieved figure for this chip)";
  c.attention_flops_per_s = chip.bf16_flops_per_s;
  auto kernels_from = [&c](const std::string& card, double scale) {
    c.norm_bytes_per_s = scale * measured_bytes_per_s(card, "rmsnorm");
    c.layer_norm_bytes_per_s = scale * measured_bytes_per_s(card, "layernorm");
    c.add_bytes_per_s = scale * measured_bytes_per_s(card, "add");
    c.silu_mul_bytes_per_s = scale * measured_bytes_per_s(card, "silu_mul");
    c.gelu_bytes_per_s = scale * measured_bytes_per_s(card, "gelu_tanh");
    c.copy_bytes_per_s = scale * measured_bytes_per_s(card, "copy");
  };
  c.norm_bytes_per_s = c.layer_norm_bytes_per_s = c.add_bytes_per_s = c.silu_mul_bytes_per_s = c.gelu_bytes_per_s =
      c.copy_bytes_per_s = chip.hbm_bytes_per_s;
  const auto& m = measured();
  const auto it = std::find(m.cards.begin(), m.cards.end(), chip.name);
  if (it != m.cards.end()) {
    c.hbm_bytes_per_s = measured_bytes_per_s(chip.name, "copy");
    c.hbm_source = "copy kernel measured in validation/gemm/" + chip.name + ".json";
    c.gemm_bf16 = &measured_gemm_table(chip.name, Dtype::bf16);
    c.gemm_8bit = &measured_gemm_table(chip.name, Dtype::fp8, false);
    const double a = m.attention_flops_per_s[static_cast<std::size_t>(it - m.cards.begin())];
    if (a > 0) c.attention_flops_per_s = a;
    kernels_from(chip.name, 1);
    c.measured = true;
  } else if (chip.name == "a100") {
    c.hbm_bytes_per_s = 1.7e12;
    c.hbm_source = "gpt-fast README at c5d3454 (Speculative Sampling note, line 130): about 1,700 GB/s observed on its "
                   "330 W A100 80GB";
    c.proxy_bf16 = &measured_gemm_table("h100", Dtype::bf16);
    c.proxy_8bit = &measured_gemm_table("h100", Dtype::fp8, false);
    c.proxy_hbm_bytes_per_s = measured_bytes_per_s("h100", "copy");
    kernels_from("h100", c.hbm_bytes_per_s / c.proxy_hbm_bytes_per_s);
    c.measured = true;
  }
  return c;
}

double nvlink_allreduce_latency_s(double n) {
  // sgl-project/sglang PR 2904: vLLM custom AllReduce, 512 B, H100, 2 / 4 / 8 GPUs.
  if (n <= 1) return 0;
  if (n <= 2) return 9.5e-6;
  if (n <= 4) return 9.1e-6;
  return 10.1e-6;
}

}  // namespace scaling
