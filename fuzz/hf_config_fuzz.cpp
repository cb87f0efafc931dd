// config.json import (HuggingFace llama, mistral, mixtral, gemma, gpt2, gpt_neox, opt): from_hf_config, then every count the
// `params` subcommand prints must be finite. Input: the file's text.
#include "contract.hpp"
#include "scaling/model/presets.hpp"
#include "scaling/model/transformer.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 65536) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  scaling::TransformerConfig c;
  if (!fuzz::accepted([&] { c = scaling::from_hf_config(text, "config.json"); })) return 0;
  const auto p = scaling::param_counts(c);
  for (double v : {p.embedding, p.unembedding, p.attention, p.mlp, p.norms, p.router, p.projection, p.total, p.active})
    fuzz::finite(v, "a parameter count");
  for (auto d : {scaling::Dtype::bf16, scaling::Dtype::int4}) fuzz::finite(scaling::kv_bytes_per_token(c, d), "KV bytes");
  return 0;
}
