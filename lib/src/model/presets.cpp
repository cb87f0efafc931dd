#include "scaling/model/presets.hpp"

#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <vector>

#include "scaling/base/format.hpp"
#include "scaling/base/validate.hpp"
#include "scaling/base/text_file.hpp"

namespace scaling {

namespace {

TransformerConfig dense(std::string name, double D, double F, double L, double N, double K, double H, double V,
                        bool tied = false) {
  TransformerConfig c;
  c.name = std::move(name);
  c.d_model = D, c.d_ff = F, c.layers = L, c.q_heads = N, c.kv_heads = K, c.head_dim = H, c.vocab = V;
  c.tied_embeddings = tied;
  return c;
}

const std::vector<ModelPreset>& table() {
  static const std::vector<ModelPreset> presets = [] {
    // §4.6, exercise 4.1, counted the book's way: one D-sized "other" term per layer, no final norm.
    auto ex41 = dense("book-ex4.1", 4096, 16384, 64, 32, 32, 128, 32000);
    ex41.norms_per_layer = 1;
    ex41.final_norm = false;
    auto gemma2 = dense("gemma2-27b", 4608, 36864, 46, 32, 16, 128, 256000, true);
    gemma2.norms_per_layer = 4;  // Gemma 2 normalises before and after attention and the MLP
    // GPT-3 175B (Brown et al. 2020, Table 2.1: 96 layers, d_model 12288, 96 heads of 128, F = 4·d_model)
    // as Megatron-LM trains it in the runs of validation/training-runs.json: LayerNorm with bias, biased
    // linear layers, a two-matrix GeLU MLP, the output layer tied to the embedding, the 50257-token
    // vocabulary padded to 51200 (Korthikanti et al. 2022, Table 3); learned positions left out.
    auto gpt3 = dense("gpt3-175b", 12288, 49152, 96, 96, 96, 128, 51200, true);
    gpt3.gated_mlp = false, gpt3.norm_bias = true, gpt3.attention_bias = true, gpt3.mlp_bias = true;
    auto mixtral = dense("mixtral-8x7b", 4096, 14336, 32, 32, 8, 128, 32000);
    mixtral.experts = 8, mixtral.experts_per_token = 2;
    return std::vector<ModelPreset>{
        {"book-ex4.1", "Exercise 4.1's model", "§4.6 exercise 4.1 (D=4096, F=4D, V=32000, L=64, MHA with N·H = D)", ex41},
        {"llama2-7b", "LLaMA-2 7B", "LLaMA-2 7B config", dense("llama2-7b", 4096, 11008, 32, 32, 32, 128, 32000)},
        {"llama2-13b", "LLaMA-2 13B", "§5.3, §7: LLaMA-2 13B", dense("llama2-13b", 5120, 13824, 40, 40, 40, 128, 32000)},
        {"llama3-8b", "LLaMA-3 8B", "§6: LLaMA-3 8B", dense("llama3-8b", 4096, 14336, 32, 32, 8, 128, 128256)},
        {"llama3-70b", "LLaMA-3 70B", "§6, §8: LLaMA-3 70B", dense("llama3-70b", 8192, 28672, 80, 64, 8, 128, 128256)},
        {"llama3-405b", "LLaMA-3.1 405B", "§6: LLaMA-3.1 405B", dense("llama3-405b", 16384, 53248, 126, 128, 8, 128, 128256)},
        {"mistral-7b", "Mistral 7B", "Mistral 7B v0.1 config", dense("mistral-7b", 4096, 14336, 32, 32, 8, 128, 32000)},
        {"mixtral-8x7b", "Mixtral 8x7B", "Mixtral 8x7B config", mixtral},
        {"gemma-7b", "Gemma 7B", "Gemma 7B config", dense("gemma-7b", 3072, 24576, 28, 16, 16, 256, 256000, true)},
        {"gemma2-27b", "Gemma 2 27B", "§4.3 mentions Gemma-27B; Gemma 2 27B config", gemma2},
        {"gpt3-175b", "GPT-3 175B", "GPT-3 175B as Megatron-LM trains it (Korthikanti et al. 2022, Table 3)", gpt3},
    };
  }();
  return presets;
}

using nlohmann::json;

// HuggingFace's defaults for the optional keys, per model type, as each configuration class sets them
// (transformers: LlamaConfig, MistralConfig, MixtralConfig, GemmaConfig). 0 means "derived": KV heads
// default to the query heads, head_dim to hidden_size / num_attention_heads. The GPT-style types (gpt2,
// gpt_neox, opt) read their own keys below.
struct HfDefaults {
  std::string_view model_type;
  double kv_heads;
  double head_dim;
  bool tie_word_embeddings;
  bool moe;
  double experts, experts_per_token;
};
constexpr HfDefaults kHfDefaults[] = {
    {"llama", 0, 0, false, false, 0, 0},
    {"mistral", 8, 0, false, false, 0, 0},
    {"mixtral", 8, 0, false, true, 8, 2},
    {"gemma", 16, 256, true, false, 0, 0},
};
constexpr std::string_view kSupported = "llama, mistral, mixtral, gemma, gpt2, gpt_neox, opt";
const HfDefaults* hf_defaults(std::string_view model_type) {
  for (const auto& d : kHfDefaults)
    if (d.model_type == model_type) return &d;
  return nullptr;
}

// Bounds on a config.json (README, "Limits"): each size an exact integer in a double, and the model
// below 1e18 parameters, so every count and byte figure derived from it is finite.
constexpr double kMaxSize = 9007199254740992.0;  // 2^53
constexpr double kMaxParams = 1e18;

const json* find(const json& j, const char* key) {
  const auto it = j.find(key);
  return it == j.end() || it->is_null() ? nullptr : &*it;
}

double size_of(const json& j, const char* key, std::string_view file) {
  const json* v = find(j, key);
  if (!v) throw std::invalid_argument(std::string(file) + ": missing required key '" + key + "'");
  if (!v->is_number())
    throw std::invalid_argument(std::string(file) + ": key '" + key + "': expected a number, got " + v->type_name());
  // An integer beyond 2^53 has no exact double: refused as given, never silently rounded to a neighbour.
  const std::string what = std::string(file) + ": key '" + key + "'";
  if (v->is_number_unsigned() && v->get<uint64_t>() > (uint64_t{1} << 53))
    check::fail(what + " = " + std::to_string(v->get<uint64_t>()), check::at_most_rule(kMaxSize));
  const double x = v->get<double>();
  check::positive_whole(what, x);
  check::at_most(what, x, kMaxSize);
  return x;
}

double optional_size(const json& j, const char* key, double fallback, std::string_view file) {
  return find(j, key) ? size_of(j, key, file) : fallback;
}

bool optional_bool(const json& j, const char* key, bool fallback, std::string_view file) {
  const json* v = find(j, key);
  if (!v) return fallback;
  if (!v->is_boolean())
    throw std::invalid_argument(std::string(file) + ": key '" + key + "': expected true or false, got " + v->type_name());
  return v->get<bool>();
}


// The head width of a model that gives none: the width split evenly over the heads.
double head_dim_of(double width, double heads, const char* width_key, const char* heads_key, std::string_view file) {
  if (std::fmod(width, heads) != 0)
    throw std::invalid_argument(std::string(file) + ": " + width_key + " = " + format_number(width) +
                                " is not divisible by " + heads_key + " = " + format_number(heads));
  return width / heads;
}

// A key whose only supported value is `supported`: anything else names the key, the value and what it
// would need.
void require_bool(const json& j, const char* key, bool fallback, bool supported, std::string_view why,
                  std::string_view file) {
  if (optional_bool(j, key, fallback, file) != supported)
    throw std::invalid_argument(std::string(file) + ": key '" + key + "' = " + (supported ? "false" : "true") +
                                ": not supported (" + std::string(why) + ")");
}

// GPT-2 (transformers' GPT2Config / GPT2LMHeadModel): n_embd, n_layer, n_head, vocab_size and n_positions;
// the MLP is n_inner wide (null or absent: 4·n_embd); wte is tied to the output (tie_word_embeddings,
// default true) and wpe holds n_positions learned rows. Cross-attention blocks (add_cross_attention) belong
// to an encoder-decoder and are refused.
TransformerConfig gpt2_config(const json& j, std::string_view file) {
  require_bool(j, "add_cross_attention", false, false, "cross-attention belongs to an encoder-decoder model", file);
  const double D = size_of(j, "n_embd", file);
  const double L = size_of(j, "n_layer", file);
  const double N = size_of(j, "n_head", file);
  const double V = size_of(j, "vocab_size", file);
  const double positions = size_of(j, "n_positions", file);
  const double F = optional_size(j, "n_inner", 4 * D, file);
  head_dim_of(D, N, "n_embd", "n_head", file);
  TransformerConfig c = gpt_style("", D, F, L, N, V, positions, optional_bool(j, "tie_word_embeddings", true, file));
  c.max_learned_seq = positions;
  return c;
}

// GPT-NeoX and Pythia (GPTNeoXConfig / GPTNeoXForCausalLM): rotary positions (no parameters), attention
// and MLP in parallel when use_parallel_residual (default true), biases on the fused QKV and the output
// projection unless attention_bias is false (default true), untied embed_in / embed_out
// (tie_word_embeddings default false).
TransformerConfig gpt_neox_config(const json& j, std::string_view file) {
  const double D = size_of(j, "hidden_size", file);
  const double F = size_of(j, "intermediate_size", file);
  const double L = size_of(j, "num_hidden_layers", file);
  const double N = size_of(j, "num_attention_heads", file);
  const double V = size_of(j, "vocab_size", file);
  head_dim_of(D, N, "hidden_size", "num_attention_heads", file);
  TransformerConfig c = gpt_style("", D, F, L, N, V, 0, optional_bool(j, "tie_word_embeddings", false, file));
  c.attention_bias = optional_bool(j, "attention_bias", true, file);
  c.parallel_blocks = optional_bool(j, "use_parallel_residual", true, file);
  return c;
}

// OPT (OPTConfig / OPTForCausalLM): hidden_size, ffn_dim, num_hidden_layers, num_attention_heads,
// vocab_size and max_position_embeddings. The learned position table has max_position_embeddings + 2 rows
// (OPTLearnedPositionalEmbedding offsets every position by 2, a fairseq convention). Tokens are looked
// up at word_embed_proj_dim (default hidden_size) and projected when it differs (OPT-350m). A post-norm
// model (do_layer_norm_before false, OPT-350m) or _remove_final_layer_norm has no final norm. enable_bias
// (default true) puts biases on every matmul; tie_word_embeddings defaults to true.
TransformerConfig opt_config(const json& j, std::string_view file) {
  require_bool(j, "layer_norm_elementwise_affine", true, true, "LayerNorms without a scale and bias", file);
  const double D = size_of(j, "hidden_size", file);
  const double F = size_of(j, "ffn_dim", file);
  const double L = size_of(j, "num_hidden_layers", file);
  const double N = size_of(j, "num_attention_heads", file);
  const double V = size_of(j, "vocab_size", file);
  const double positions = size_of(j, "max_position_embeddings", file);
  const double P = optional_size(j, "word_embed_proj_dim", D, file);
  head_dim_of(D, N, "hidden_size", "num_attention_heads", file);
  constexpr double kOptPositionOffset = 2;
  TransformerConfig c = gpt_style("", D, F, L, N, V, positions + kOptPositionOffset);
  c.max_learned_seq = positions;
  c.embed_proj_dim = P == D ? 0 : P;
  c.final_norm = optional_bool(j, "do_layer_norm_before", true, file) &&
                 !optional_bool(j, "_remove_final_layer_norm", false, file);
  const bool bias = optional_bool(j, "enable_bias", true, file);
  c.attention_bias = c.mlp_bias = bias;
  c.tied_embeddings = optional_bool(j, "tie_word_embeddings", true, file);
  return c;
}

// The llama family: a gated MLP, two RMSNorms per layer plus a final one, biases where the config says.
TransformerConfig llama_family_config(const json& j, const HfDefaults& defaults, std::string_view file) {
  TransformerConfig c;
  c.d_model = size_of(j, "hidden_size", file);
  c.d_ff = size_of(j, "intermediate_size", file);
  c.layers = size_of(j, "num_hidden_layers", file);
  c.q_heads = size_of(j, "num_attention_heads", file);
  c.vocab = size_of(j, "vocab_size", file);
  c.kv_heads = optional_size(j, "num_key_value_heads", defaults.kv_heads > 0 ? defaults.kv_heads : c.q_heads, file);
  const bool head_dim_from_width = defaults.head_dim == 0;
  if (!find(j, "head_dim") && head_dim_from_width && std::fmod(c.d_model, c.q_heads) != 0)
    throw std::invalid_argument(std::string(file) + ": hidden_size is not divisible by num_attention_heads and no head_dim is given");
  c.head_dim = optional_size(j, "head_dim", head_dim_from_width ? c.d_model / c.q_heads : defaults.head_dim, file);
  c.tied_embeddings = optional_bool(j, "tie_word_embeddings", defaults.tie_word_embeddings, file);
  c.attention_bias = optional_bool(j, "attention_bias", false, file);
  c.mlp_bias = optional_bool(j, "mlp_bias", false, file);
  c.gated_mlp = true;
  c.norms_per_layer = 2;
  c.final_norm = true;
  if (defaults.moe) {
    c.experts = optional_size(j, "num_local_experts", defaults.experts, file);
    c.experts_per_token = optional_size(j, "num_experts_per_tok", defaults.experts_per_token, file);
  }
  return c;
}

}  // namespace

std::span<const ModelPreset> model_presets() { return table(); }

const TransformerConfig& model(std::string_view key) {
  require_printable("model", key);
  for (const auto& p : table())
    if (p.key == key) return p.config;
  std::string known;
  for (const auto& p : table()) known += (known.empty() ? "" : ", ") + std::string(p.key);
  throw std::invalid_argument("unknown model '" + std::string(key) + "' (known: " + known + ")");
}

TransformerConfig gpt_style(std::string name, double d_model, double d_ff, double layers, double heads, double vocab,
                            double positions, bool tied) {
  TransformerConfig c;
  c.name = std::move(name);
  c.d_model = d_model, c.d_ff = d_ff, c.layers = layers, c.q_heads = heads, c.kv_heads = heads, c.vocab = vocab;
  check::positive_whole((c.name.empty() ? std::string("model") : c.name) + ": query heads", heads);
  c.head_dim = d_model / heads;
  if (std::fmod(d_model, heads) != 0)
    throw std::invalid_argument((c.name.empty() ? std::string("model") : c.name) + ": " + format_number(heads) +
                                " heads do not divide d_model = " + format_number(d_model));
  c.gated_mlp = false;
  c.norms_per_layer = 2;
  c.final_norm = true;
  c.norm_bias = true;
  c.attention_bias = true;
  c.mlp_bias = true;
  c.learned_positions = positions;
  c.tied_embeddings = tied;
  validate(c);
  return c;
}

TransformerConfig from_hf_config(std::string_view text, std::string_view path) {
  // The name as it appears in messages: one line, however the path is spelled.
  const std::string shown = escape_for_message(path, 200);
  const std::string_view file = shown;
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw std::invalid_argument(std::string(file) + ": malformed JSON at byte " + std::to_string(e.byte));
  } catch (const json::exception& e) {  // out_of_range: a number beyond a double (1e400)
    throw std::invalid_argument(std::string(file) + ": a number beyond the range of a double (JSON error " +
                                std::to_string(e.id) + ")");
  }
  if (!j.is_object()) throw std::invalid_argument(std::string(file) + ": expected a JSON object");
  const json* type = find(j, "model_type");
  if (!type) throw std::invalid_argument(std::string(file) + ": missing required key 'model_type'");
  if (!type->is_string())
    throw std::invalid_argument(std::string(file) + ": key 'model_type': expected a string, got " + type->type_name());
  const std::string model_type = type->get<std::string>();
  TransformerConfig c;
  if (model_type == "gpt2") {
    c = gpt2_config(j, file);
  } else if (model_type == "gpt_neox") {
    c = gpt_neox_config(j, file);
  } else if (model_type == "opt") {
    c = opt_config(j, file);
  } else if (const HfDefaults* defaults = hf_defaults(model_type)) {
    c = llama_family_config(j, *defaults, file);
  } else {
    throw std::invalid_argument(std::string(file) + ": key 'model_type': unknown value '" +
                                escape_for_message(model_type) + "' (supported: " + std::string(kSupported) + ")");
  }
  c.name = std::string(path);
  validate(c);
  // Sizes are bounded one by one; their products must be too (hidden_size 1e15 × vocab 1e15 …).
  const auto counts = param_counts(c);
  if (!std::isfinite(counts.total) || counts.total > kMaxParams || !std::isfinite(kv_bytes_per_token(c, Dtype::fp32)))
    throw std::invalid_argument(std::string(file) + ": " + format_number(counts.total) + " parameters: more than the " +
                                format_number(kMaxParams) + " a model can have here");
  return c;
}

TransformerConfig load_hf_config(const std::string& path) {
  return from_hf_config(read_text_file(path, "config file"), path);
}

}  // namespace scaling
