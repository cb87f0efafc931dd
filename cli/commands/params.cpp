// `scaling models` and `scaling params`: parameter accounting for a preset or a HuggingFace config.json.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "../options.hpp"
#include "../output.hpp"
#include "modules.hpp"
#include "scaling/base/format.hpp"
#include "scaling/model/presets.hpp"

namespace cli {

namespace {

nlohmann::json describe(const scaling::TransformerConfig& c) {
  return {{"d_model", count_json(c.d_model)},   {"d_ff", count_json(c.d_ff)},         {"layers", count_json(c.layers)},
          {"q_heads", count_json(c.q_heads)},   {"kv_heads", count_json(c.kv_heads)}, {"head_dim", count_json(c.head_dim)},
          {"vocab", count_json(c.vocab)},       {"experts", count_json(c.experts)},
          {"experts_per_token", count_json(c.experts_per_token)}, {"tied_embeddings", c.tied_embeddings}};
}

void run_models(bool json) {
  using namespace scaling;
  if (json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& p : model_presets()) {
      auto entry = describe(p.config);
      entry["name"] = p.key;
      entry["source"] = p.source;
      entry["total_params"] = count_json(param_counts(p.config).total);
      out.push_back(entry);
    }
    std::cout << json_text(out) << "\n";
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

struct Args {
  std::string model, config, kv_dtype = "bf16";
  bool json = false;
};

// The vocabulary side of the model: the embedding and unembedding, with a learned position table (GPT-2,
// OPT) and OPT-350m's two projections where the model has them.
std::string vocabulary_label(const scaling::TransformerConfig& c) {
  std::string label = "embedding + unembedding";
  if (c.learned_positions > 0) label += " + positions";
  if (c.embed_proj_dim > 0) label += " + projections";
  return label;
}

void run_params(const Args& a) {
  using namespace scaling;
  const TransformerConfig cfg = resolve_model("params", a.model, a.config);
  const auto p = param_counts(cfg);
  const double kv = kv_bytes_per_token(cfg, parse_dtype(a.kv_dtype));
  const std::string vocabulary = vocabulary_label(cfg);
  Report r;
  r.label_width = std::max(34, static_cast<int>(vocabulary.size()) + 1);  // the vocabulary row can be the longest
  r.value_width = 18;
  r.heading = a.model.empty() ? a.config : a.model;
  r.outputs = {{"total_params", "total parameters", p.total, kCount},
               {"active_params", "active per token", p.active, kCount},
               {"embedding_params", vocabulary, p.embedding + p.unembedding + p.projection, kCount},
               {"attention_params", "attention (Q, K, V, O)", p.attention, kCount},
               {"mlp_params", cfg.experts > 0 ? "MLP (all experts + router)" : "MLP", p.mlp + p.router, kCount},
               {"norm_params", "norms", p.norms, kCount},
               {"kv_bytes_per_token", "KV cache per token (" + a.kv_dtype + ")", kv, "B"}};
  emit(r, a.json, given({{"--model", a.model}, {"--config", a.config}}));
}

}  // namespace

void add_models(CLI::App& app) {
  auto json = std::make_shared<bool>(false);
  auto* sub = app.add_subcommand("models", "list the model presets");
  sub->add_flag("--json", *json, "print a JSON array");
  run_when_chosen(sub, [json] { run_models(*json); });
}

void add_params(CLI::App& app) {
  auto a = std::make_shared<Args>();
  auto* sub = app.add_subcommand("params", "parameter counts and KV-cache bytes of a model");
  auto* model = add_name(sub, "--model", a->model, "a preset (see `scaling models`)",
                         [](const std::string& t) { scaling::model(t); });
  auto* config = add_path(sub, "--config", a->config, "a HuggingFace config.json (llama, mistral, mixtral, gemma, gpt2, gpt_neox, opt)");
  model->excludes(config);
  config->excludes(model);
  add_name(sub, "--kv-dtype", a->kv_dtype, "dtype of the KV cache", [](const std::string& t) { scaling::parse_dtype(t); })
      ->capture_default_str();
  sub->add_flag("--json", a->json, "print one JSON object");
  run_when_chosen(sub, [a] { run_params(*a); });
}

}  // namespace cli
