// `scaling models` and `scaling params`: parameter accounting for a preset or a HuggingFace config.json.
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "scaling/base/format.hpp"
#include "scaling/model/presets.hpp"

namespace cli {

namespace {
nlohmann::json describe(const scaling::TransformerConfig& c) {
  return {{"d_model", c.d_model},       {"d_ff", c.d_ff},         {"layers", c.layers},
          {"q_heads", c.q_heads},       {"kv_heads", c.kv_heads}, {"head_dim", c.head_dim},
          {"vocab", c.vocab},           {"experts", c.experts},   {"experts_per_token", c.experts_per_token},
          {"tied_embeddings", c.tied_embeddings}};
}
}  // namespace

void run_models(bool json) {
  using namespace scaling;
  if (json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& p : model_presets()) {
      auto entry = describe(p.config);
      entry["name"] = p.key;
      entry["source"] = p.source;
      entry["total_params"] = param_counts(p.config).total;
      out.push_back(entry);
    }
    std::cout << out.dump(2) << "\n";
    return;
  }
  fmt::print("{:<13} {:>7} {:>7} {:>4} {:>4} {:>3} {:>4} {:>7} {:>6} {:>16}\n", "model", "D", "F", "L", "N", "K", "H",
             "V", "MoE", "params");
  for (const auto& p : model_presets()) {
    const auto& c = p.config;
    fmt::print("{:<13} {:>7} {:>7} {:>4} {:>4} {:>3} {:>4} {:>7} {:>6} {:>16}\n", p.key, c.d_model, c.d_ff, c.layers,
               c.q_heads, c.kv_heads, c.head_dim, c.vocab,
               c.experts > 0 ? fmt::format("{}/{}", c.experts_per_token, c.experts) : "-",
               format_number(param_counts(c).total));
  }
}

void run_params(const ParamsArgs& a) {
  using namespace scaling;
  const TransformerConfig cfg = resolve_model("params", a.model, a.config);
  const auto p = param_counts(cfg);
  const double kv = kv_bytes_per_token(cfg, parse_dtype(a.kv_dtype));
  const double embedding = p.embedding + p.unembedding, mlp = p.mlp + p.router;
  if (a.json) {
    std::cout << nlohmann::json{{"total_params", p.total},
                                {"active_params", p.active},
                                {"embedding_params", embedding},
                                {"attention_params", p.attention},
                                {"mlp_params", mlp},
                                {"norm_params", p.norms},
                                {"kv_bytes_per_token", kv}}
                     .dump(2)
              << "\n";
    return;
  }
  fmt::print("{}\n", a.model.empty() ? a.config : a.model);
  auto row = [](const char* what, double v) { fmt::print("  {:<34} {:>18}\n", what, format_number(v)); };
  row("total parameters", p.total);
  row("active per token", p.active);
  row("embedding + unembedding", embedding);
  row("attention (Q, K, V, O)", p.attention);
  row(cfg.experts > 0 ? "MLP (all experts + router)" : "MLP", mlp);
  row("norms", p.norms);
  fmt::print("  {:<34} {:>18}\n", "KV cache per token (" + a.kv_dtype + ")", format_quantity(kv, "B"));
}

}  // namespace cli
