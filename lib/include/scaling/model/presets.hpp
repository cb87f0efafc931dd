#pragma once
// Model presets with the book's numbers, and the import of a HuggingFace config.json.
#include <span>
#include <string>
#include <string_view>

#include "scaling/model/transformer.hpp"

namespace scaling {

struct ModelPreset {
  std::string_view key;     // "llama3-70b"
  std::string_view title;   // "LLaMA-3 70B": the name a reader is given (the book's spelling, as the chapters write it)
  std::string_view source;  // where the numbers come from
  TransformerConfig config;
};

std::span<const ModelPreset> model_presets();
// Throws std::invalid_argument naming the text and the known keys.
const TransformerConfig& model(std::string_view key);

// A GPT-style decoder (GPT-2 and GPT-3, Megatron-LM's GPT models): LayerNorm with a bias before attention,
// before the MLP and once at the end; a two-matrix MLP of width d_ff; biases on every matmul; multi-head
// attention with heads of d_model / heads; `positions` learned position rows (0: none, e.g. rotary); the
// unembedding tied to the embedding unless `tied` is false. Throws std::invalid_argument naming a size
// that is not a positive whole number, or heads that do not divide d_model.
TransformerConfig gpt_style(std::string name, double d_model, double d_ff, double layers, double heads, double vocab,
                            double positions, bool tied = true);

// HuggingFace config.json. Two families of model_type:
// - llama, mistral, mixtral, gemma: a gated MLP, two RMSNorms per layer plus a final one, biases only where
//   attention_bias / mlp_bias say so; mixtral has num_local_experts experts of which num_experts_per_tok
//   are active and a router of D·E per layer. The five sizes (hidden_size, intermediate_size,
//   num_hidden_layers, num_attention_heads, vocab_size) are required; missing optional keys take
//   HuggingFace's defaults for the model type: num_key_value_heads (llama: = num_attention_heads; mistral,
//   mixtral: 8; gemma: 16), head_dim (gemma: 256; others: hidden_size / num_attention_heads),
//   tie_word_embeddings (gemma: true; llama, mistral, mixtral: false), num_local_experts /
//   num_experts_per_tok (mixtral: 8 / 2), attention_bias and mlp_bias false.
// - gpt2, gpt_neox, opt: GPT-style blocks — LayerNorm with a bias, a two-matrix MLP, biases on every
//   matmul, multi-head attention. gpt2 requires n_embd, n_layer, n_head, vocab_size, n_positions (n_inner
//   defaults to 4·n_embd; learned positions; tied). gpt_neox requires the five sizes above (rotary
//   positions; use_parallel_residual default true gives parallel blocks; untied). opt requires
//   hidden_size, ffn_dim, num_hidden_layers, num_attention_heads, vocab_size, max_position_embeddings
//   (learned positions with OPT's offset of 2 rows; word_embed_proj_dim projections; no final norm when
//   do_layer_norm_before is false; tied). Each reader's comment in presets.cpp lists its keys.
// Any problem — malformed JSON, an unknown model_type, a missing or mistyped key, a non-positive size, an
// unsupported variant — throws std::invalid_argument with one line naming the key.
TransformerConfig from_hf_config(std::string_view json_text, std::string_view name = "config.json");
TransformerConfig load_hf_config(const std::string& path);

}  // namespace scaling
