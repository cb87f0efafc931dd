// Chapter 4's library: parameter counts of real configs, the config importer's rejections, the einsum
// counter, and flash attention against naive attention on real arrays.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

#include "scaling/sim/attention.hpp"
#include "scaling/notation/einsum.hpp"
#include "scaling/model/presets.hpp"
#include "scaling/model/transformer.hpp"
#include "scaling/model/tensors.hpp"
#include "scaling/cost/training.hpp"

using namespace scaling;
using doctest::Approx;

namespace {
const std::string kData = TEST_DATA_DIR;

// Each config text is refused with one line that names the offending key (the second of each pair).
void expect_configs_refused(const std::vector<std::pair<std::string, std::string>>& cases) {
  for (const auto& [text, named] : cases) {
    INFO(text);
    try {
      from_hf_config(text);
      FAIL("accepted");
    } catch (const std::invalid_argument& e) {
      const std::string msg = e.what();
      CHECK(msg.find(named) != std::string::npos);
      CHECK(msg.find('\n') == std::string::npos);
    }
  }
}
}  // namespace

TEST_CASE("config.json import: exact parameter counts of public checkpoints") {
  const std::vector<std::pair<std::string, double>> published{
      {"llama-2-7b.json", 6738415616.0},   {"llama-3-8b.json", 8030261248.0},
      {"mistral-7b-v0.1.json", 7241732096.0}, {"mixtral-8x7b-v0.1.json", 46702792704.0},
      {"gemma-7b.json", 8537680896.0},     {"gemma-2b.json", 2506172416.0},
  };
  for (const auto& [file, count] : published) {
    INFO(file);
    const auto p = param_counts(load_hf_config(kData + "/" + file));
    CHECK(p.total == count);
    CHECK(p.embedding + p.unembedding + p.attention + p.mlp + p.norms + p.router == p.total);
  }
  // Mixtral: 2 of 8 experts active; the published active count is about 12.9B
  const auto mixtral = param_counts(load_hf_config(kData + "/mixtral-8x7b-v0.1.json"));
  CHECK(mixtral.active == 12879925248.0);
  CHECK(mixtral.router == 32 * 4096 * 8);
  // the presets agree with the configs
  CHECK(param_counts(model("llama3-8b")).total == 8030261248.0);
  CHECK(param_counts(model("mixtral-8x7b")).total == 46702792704.0);
  CHECK(param_counts(model("llama3-70b")).total == 70553706496.0);
  CHECK(param_counts(model("llama3-405b")).total == 405853388800.0);
  CHECK(param_counts(model("llama2-13b")).total == 13015864320.0);
  CHECK(param_counts(model("gemma2-27b")).total == 27227128320.0);
}

TEST_CASE("config.json import: HuggingFace defaults for missing keys") {
  const auto c = from_hf_config(R"({"model_type": "llama", "hidden_size": 64, "intermediate_size": 128,
                                    "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100})");
  CHECK(c.kv_heads == 4);
  CHECK(c.head_dim == 16);
  CHECK_FALSE(c.tied_embeddings);  // LlamaConfig: tie_word_embeddings=False
  CHECK_FALSE(c.attention_bias);
  // Each model type has its own defaults (transformers' configuration classes).
  const std::string sizes = R"("hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
                               "num_attention_heads": 16, "vocab_size": 100)";
  const auto mistral = from_hf_config(R"({"model_type": "mistral", )" + sizes + "}");
  CHECK_FALSE(mistral.tied_embeddings);
  CHECK(mistral.kv_heads == 8);
  CHECK(mistral.head_dim == 4);
  const auto mixtral = from_hf_config(R"({"model_type": "mixtral", )" + sizes + "}");
  CHECK_FALSE(mixtral.tied_embeddings);
  CHECK(mixtral.experts == 8);
  CHECK(mixtral.experts_per_token == 2);
  const auto gemma = from_hf_config(R"({"model_type": "gemma", )" + sizes + "}");
  CHECK(gemma.tied_embeddings);
  CHECK(gemma.kv_heads == 16);
  CHECK(gemma.head_dim == 256);
  // Untied: the unembedding holds V·D weights of its own.
  CHECK(param_counts(c).unembedding == 100 * 64);
  // with biases: Q, K, V, O biases and MLP biases appear in the count
  const auto b = from_hf_config(R"({"model_type": "llama", "hidden_size": 64, "intermediate_size": 128,
                                    "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100,
                                    "attention_bias": true, "mlp_bias": true})");
  CHECK(param_counts(b).total - param_counts(c).total == 2 * ((64 + 2 * 64 + 64) + (2 * 128 + 64)));
}

TEST_CASE("config.json import: every rejection names the key, one line") {
  const std::string base = R"("hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
                               "num_attention_heads": 4, "vocab_size": 100)";
  const std::vector<std::pair<std::string, std::string>> cases{
      {"{ not json", "malformed JSON"},
      {"[1, 2]", "expected a JSON object"},
      {R"({"hidden_size": 64})", "'model_type'"},
      {R"({"model_type": "bloom", )" + base + "}", "key 'model_type': unknown value 'bloom'"},
      {R"({"model_type": 7, )" + base + "}", "'model_type'"},
      {R"({"model_type": "llama", "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
           "vocab_size": 100})", "'hidden_size'"},
      {R"({"model_type": "llama", "hidden_size": "64", "intermediate_size": 128, "num_hidden_layers": 2,
           "num_attention_heads": 4, "vocab_size": 100})", "'hidden_size': expected a number"},
      {R"({"model_type": "llama", "hidden_size": 0, "intermediate_size": 128, "num_hidden_layers": 2,
           "num_attention_heads": 4, "vocab_size": 100})", "'hidden_size' = 0"},
      {R"({"model_type": "llama", "hidden_size": 64, "intermediate_size": -5, "num_hidden_layers": 2,
           "num_attention_heads": 4, "vocab_size": 100})", "'intermediate_size' = -5"},
      {R"({"model_type": "llama", "num_key_value_heads": 3, )" + base + "}", "do not divide"},
      {R"({"model_type": "llama", "tie_word_embeddings": "yes", )" + base + "}", "'tie_word_embeddings'"},
      {R"({"model_type": "mixtral", "num_local_experts": 0, )" + base + "}", "'num_local_experts'"},
  };
  expect_configs_refused(cases);
  CHECK_THROWS_WITH_AS(load_hf_config("/nonexistent/config.json"), doctest::Contains("cannot read"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(model("gpt-5"), doctest::Contains("unknown model 'gpt-5'"), std::invalid_argument);
}

// GPT-style checkpoints. Each total is published outside this repository, and none comes from our formula:
// - GPT-2: KerasNLP's presets (keras-team/keras-hub, keras_nlp/models/gpt2/gpt2_presets.py, "params"), the
//   count of the converted OpenAI checkpoints; llm.c's README prints the same 124,439,808 for gpt2 when it
//   loads the OpenAI weights (karpathy/llm.c, README.md, "num_parameters").
// - Pythia: the "total params" column of the Pythia model cards (huggingface.co/EleutherAI/pythia-12b,
//   "Naming convention and parameter count"), with the "non-embedding params" beside it.
// - GPT-NeoX-20B: the model card's n_parameters (huggingface.co/EleutherAI/gpt-neox-20b).
// - OPT: no card prints an exact count. The totals are the sum over the Hugging Face checkpoints' tensors
//   (PyTorch's numel) that users report for facebook/opt-125m, -350m and -1.3b; they are held against two
//   published figures below, KerasNLP's preset counts and the Pythia cards' "equivalent models" column.
TEST_CASE("config.json import: GPT-style checkpoints match their published parameter counts") {
  struct Published {
    std::string file;
    double total;
  };
  const std::vector<Published> published{
      {"gpt2.json", 124439808.0},          {"gpt2-medium.json", 354823168.0},   {"gpt2-xl.json", 1557611200.0},
      {"pythia-70m.json", 70426624.0},     {"pythia-1.4b.json", 1414647808.0},  {"pythia-12b.json", 11846072320.0},
      {"gpt-neox-20b.json", 20554567680.0}, {"opt-125m.json", 125239296.0},     {"opt-350m.json", 331196416.0},
      {"opt-1.3b.json", 1315758080.0},
  };
  for (const auto& [file, total] : published) {
    INFO(file);
    const auto p = param_counts(load_hf_config(kData + "/" + file));
    CHECK(p.total == total);
    CHECK(p.embedding + p.unembedding + p.attention + p.mlp + p.norms + p.router + p.projection == p.total);
    CHECK(p.active == p.total);  // dense
  }
  // The Pythia cards' non-embedding column: everything but embed_in and embed_out (GPT-NeoX has no position
  // table, so the embedding is the token table alone).
  const std::vector<std::pair<std::string, double>> non_embedding{
      {"pythia-70m.json", 18915328.0}, {"pythia-1.4b.json", 1208602624.0}, {"pythia-12b.json", 11327027200.0}};
  for (const auto& [file, count] : non_embedding) {
    INFO(file);
    const auto p = param_counts(load_hf_config(kData + "/" + file));
    CHECK(p.total - p.embedding - p.unembedding == count);
  }
  // The same cards call OPT-125M and OPT-1.3B "exactly the same architecture, and the same number of
  // non-embedding parameters" as Pythia-160M (85,056,000) and Pythia-1.4B (1,208,602,624): OPT's layers and
  // final norm, without its token and position tables.
  const auto opt125 = load_hf_config(kData + "/opt-125m.json");
  const auto opt13 = load_hf_config(kData + "/opt-1.3b.json");
  CHECK(param_counts(opt125).total - param_counts(opt125).embedding == 85056000.0);
  CHECK(param_counts(opt13).total - param_counts(opt13).embedding == 1208602624.0);
  // KerasNLP's OPT presets (keras_nlp/models/opt/opt_presets.py) count 125,237,760 and 1,315,753,984: its
  // position table has max_position_embeddings rows, without the 2 offset rows the Hugging Face checkpoint
  // stores. The difference is exactly those two rows of D.
  CHECK(param_counts(opt125).total - 2 * opt125.d_model == 125237760.0);
  CHECK(param_counts(opt13).total - 2 * opt13.d_model == 1315753984.0);
}

// Megatron-LM's GPT models (Narayanan et al. 2021, "Efficient Large-Scale Language Model Training on GPU
// Clusters Using Megatron-LM", Table 1; its eq. (2) counts them as P = 12·l·h²·(1 + 13/(12h) + (V + s)/(12·l·h))
// with V = 51200 and s = 2048): learned positions, tied embeddings, biases and LayerNorms. The equation leaves
// out the final LayerNorm (2h); the printed sizes are the counts in billions to one decimal.
TEST_CASE("gpt_style: Megatron-LM's GPT models against Narayanan et al. 2021, Table 1 and eq. (2)") {
  struct Row {
    double layers, hidden, heads, printed_b;
  };
  const std::vector<Row> table1{{24, 2304, 24, 1.7},    {30, 3072, 32, 3.6},    {36, 4096, 32, 7.5},
                                {40, 6144, 48, 18.4},   {48, 8192, 64, 39.1},   {60, 10240, 80, 76.1},
                                {80, 12288, 96, 145.6}, {96, 16384, 128, 310.1}, {105, 20480, 128, 529.6},
                                {128, 25600, 160, 1008.0}};
  const double V = 51200, s = 2048;
  for (const auto& [l, h, heads, printed_b] : table1) {
    INFO(printed_b, "B");
    const auto c = gpt_style("megatron-gpt", h, 4 * h, l, heads, V, s);
    const double total = param_counts(c).total;
    const double eq2 = 12 * l * h * h * (1 + 13 / (12 * h) + (V + s) / (12 * l * h));
    CHECK(total - 2 * h == Approx(eq2).epsilon(1e-15));
    CHECK(std::abs(total / 1e9 - printed_b) <= 0.05);
  }
  CHECK_THROWS_WITH_AS(gpt_style("odd", 100, 400, 2, 3, 10, 8), doctest::Contains("3 heads do not divide d_model = 100"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(gpt_style("neg", 64, 256, 2, 4, 10, -1), doctest::Contains("learned positions"),
                       std::invalid_argument);
}

TEST_CASE("config.json import: what each GPT-style type reads") {
  const auto gpt2 = load_hf_config(kData + "/gpt2.json");
  CHECK_FALSE(gpt2.gated_mlp);
  CHECK(gpt2.d_ff == 4 * 768);  // n_inner absent: 4·n_embd
  CHECK(gpt2.head_dim == 64);
  CHECK(gpt2.kv_heads == gpt2.q_heads);
  CHECK(gpt2.learned_positions == 1024);
  CHECK(gpt2.tied_embeddings);
  CHECK(gpt2.norm_bias);
  CHECK(gpt2.attention_bias);
  CHECK(gpt2.mlp_bias);
  CHECK(gpt2.final_norm);
  CHECK_FALSE(gpt2.parallel_blocks);
  // n_inner given: the MLP is that wide.
  const std::string gpt2_sizes = R"("model_type": "gpt2", "n_embd": 64, "n_layer": 2, "n_head": 4, "vocab_size": 100,
                                    "n_positions": 32)";
  CHECK(from_hf_config("{" + gpt2_sizes + R"(, "n_inner": 100})").d_ff == 100);
  CHECK(from_hf_config("{" + gpt2_sizes + R"(, "n_inner": null})").d_ff == 256);

  const auto neox = load_hf_config(kData + "/gpt-neox-20b.json");
  CHECK(neox.parallel_blocks);
  CHECK_FALSE(neox.tied_embeddings);
  CHECK(neox.learned_positions == 0);  // rotary
  CHECK(neox.head_dim == 96);
  CHECK(neox.norm_bias);
  const std::string neox_sizes = R"("model_type": "gpt_neox", "hidden_size": 64, "intermediate_size": 256,
                                    "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100)";
  const auto sequential = from_hf_config("{" + neox_sizes + R"(, "use_parallel_residual": false})");
  CHECK_FALSE(sequential.parallel_blocks);
  CHECK(from_hf_config("{" + neox_sizes + "}").parallel_blocks);  // GPTNeoXConfig's default
  // attention_bias false (newer GPTNeoXConfig) drops the Q, K, V and O biases only.
  const auto no_bias = from_hf_config("{" + neox_sizes + R"(, "attention_bias": false})");
  CHECK(param_counts(sequential).total - param_counts(no_bias).total == 2 * (3 * 64 + 64));

  const auto opt350 = load_hf_config(kData + "/opt-350m.json");
  CHECK(opt350.learned_positions == 2048 + 2);
  CHECK(opt350.embed_proj_dim == 512);
  CHECK_FALSE(opt350.final_norm);  // post-norm: do_layer_norm_before false
  CHECK(opt350.tied_embeddings);
  CHECK(param_counts(opt350).projection == 2 * 512 * 1024);
  CHECK(param_counts(opt350).embedding == 50272.0 * 512 + 2050.0 * 1024);
  const auto opt125 = load_hf_config(kData + "/opt-125m.json");
  CHECK(opt125.embed_proj_dim == 0);  // word_embed_proj_dim == hidden_size: no projections
  CHECK(opt125.final_norm);
  const std::string opt_sizes = R"("model_type": "opt", "hidden_size": 64, "ffn_dim": 256, "num_hidden_layers": 2,
                                   "num_attention_heads": 4, "vocab_size": 100, "max_position_embeddings": 30)";
  const auto plain = from_hf_config("{" + opt_sizes + "}");
  CHECK(plain.final_norm);
  CHECK_FALSE(from_hf_config("{" + opt_sizes + R"(, "_remove_final_layer_norm": true})").final_norm);
  // enable_bias false: no bias on any of the six matmuls of a layer.
  const auto unbiased = from_hf_config("{" + opt_sizes + R"(, "enable_bias": false})");
  CHECK(param_counts(plain).total - param_counts(unbiased).total == 2 * (4 * 64 + 256 + 64));
}

TEST_CASE("GPT-style accounting: positions are lookups, projections are matmuls, parallel blocks change neither") {
  // GPT-2 small by hand: Q, K, V, O are D×D each, the MLP D×4D and 4D×D; the tied unembedding is D×V.
  const auto gpt2 = load_hf_config(kData + "/gpt2.json");
  const double D = 768, L = 12, V = 50257;
  const auto f = forward_flops_per_token(gpt2, 0);
  CHECK(f.qkvo == 2 * L * 4 * D * D);
  CHECK(f.mlp == 2 * L * 2 * D * 4 * D);
  CHECK(f.unembedding == 2 * D * V);
  CHECK(f.projection == 0);
  // The one 6N rule counts every parameter a token uses, the token and position tables, biases and norms
  // included, the tied unembedding once: 6 × GPT-2's published 124,439,808 (KerasNLP's preset table).
  CHECK(six_active_flops_per_token(gpt2) == 6 * 124439808.0);
  // OPT-350m: two projections of 512×1024, 2 FLOPs per weight per token.
  const auto opt350 = load_hf_config(kData + "/opt-350m.json");
  CHECK(forward_flops_per_token(opt350, 0).projection == 2 * 2 * 512 * 1024);
  CHECK(forward_flops_per_token(opt350, 0).unembedding == 2 * 512 * 50272.0);
  // A parallel block has the parameters and FLOPs of a sequential one, one AllReduce per layer under tensor
  // parallelism instead of two, and no residual between attention and MLP to keep for the backward pass.
  auto parallel = load_hf_config(kData + "/pythia-1.4b.json");
  REQUIRE(parallel.parallel_blocks);
  auto sequential = parallel;
  sequential.parallel_blocks = false;
  CHECK(param_counts(parallel).total == param_counts(sequential).total);
  CHECK(forward_flops_per_token(parallel, 2048).total == forward_flops_per_token(sequential, 2048).total);
  CHECK(tp_reductions_per_layer(parallel) == 1);
  CHECK(tp_reductions_per_layer(sequential) == 2);
  CHECK(tp_reductions_per_layer(model("llama3-70b")) == 2);
  const SavedRule par = saved_of_kind(parallel, ActivationKind::other);
  const SavedRule seq = saved_of_kind(sequential, ActivationKind::other);
  CHECK(seq.d - par.d == 1);
  CHECK(seq.f == par.f);
  // The inventory names and shapes what it adds.
  const auto inv = tensor_inventory(opt350);
  auto shape_of = [&](const std::string& name) {
    const auto it = std::find_if(inv.begin(), inv.end(), [&](const Tensor& t) { return t.name == name; });
    REQUIRE(it != inv.end());
    return it->shape;
  };
  CHECK(shape_of("embedding") == std::vector<double>{50272, 512});
  CHECK(shape_of("positions") == std::vector<double>{2050, 1024});
  CHECK(shape_of("W_proj_in") == std::vector<double>{512, 1024});
  CHECK(shape_of("W_proj_out") == std::vector<double>{1024, 512});
  CHECK(shape_of("unembedding") == std::vector<double>{512, 50272});
  // Bad values of the new fields are refused with the field named.
  TransformerConfig bad = gpt2;
  bad.learned_positions = -3;
  CHECK_THROWS_WITH_AS(param_counts(bad), doctest::Contains("learned positions"), std::invalid_argument);
  bad = gpt2;
  bad.embed_proj_dim = 0.5;
  CHECK_THROWS_WITH_AS(param_counts(bad), doctest::Contains("embedding projection width"), std::invalid_argument);
}

TEST_CASE("config.json import: GPT-style rejections name the key, one line") {
  const std::string gpt2 = R"("model_type": "gpt2", "n_embd": 64, "n_layer": 2, "n_head": 4, "vocab_size": 100)";
  const std::string neox = R"("model_type": "gpt_neox", "hidden_size": 64, "num_hidden_layers": 2,
                              "num_attention_heads": 4, "vocab_size": 100)";
  const std::string opt = R"("model_type": "opt", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
                             "vocab_size": 100)";
  const std::vector<std::pair<std::string, std::string>> cases{
      {"{" + gpt2 + "}", "missing required key 'n_positions'"},
      {R"({"model_type": "gpt2", "n_layer": 2, "n_head": 4, "vocab_size": 100, "n_positions": 8})",
       "missing required key 'n_embd'"},
      {"{" + gpt2 + R"(, "n_positions": 0})", "'n_positions' = 0"},
      {"{" + gpt2 + R"(, "n_positions": 8, "n_inner": "wide"})", "'n_inner': expected a number"},
      {R"({"model_type": "gpt2", "n_embd": 66, "n_layer": 2, "n_head": 4, "vocab_size": 100, "n_positions": 8})",
       "n_embd = 66 is not divisible by n_head = 4"},
      {"{" + gpt2 + R"(, "n_positions": 8, "add_cross_attention": true})", "'add_cross_attention'"},
      {"{" + gpt2 + R"(, "n_positions": 8, "tie_word_embeddings": 1})", "'tie_word_embeddings'"},
      {"{" + neox + "}", "missing required key 'intermediate_size'"},
      {"{" + neox + R"(, "intermediate_size": 256, "use_parallel_residual": "yes"})", "'use_parallel_residual'"},
      {"{" + opt + R"(, "max_position_embeddings": 32})", "missing required key 'ffn_dim'"},
      {"{" + opt + R"(, "ffn_dim": 256})", "missing required key 'max_position_embeddings'"},
      {"{" + opt + R"(, "ffn_dim": 256, "max_position_embeddings": 32, "word_embed_proj_dim": -1})",
       "'word_embed_proj_dim' = -1"},
      {"{" + opt + R"(, "ffn_dim": 256, "max_position_embeddings": 32, "layer_norm_elementwise_affine": false})",
       "'layer_norm_elementwise_affine'"},
      {"{" + opt + R"(, "ffn_dim": 256, "max_position_embeddings": 32, "do_layer_norm_before": null, "enable_bias": 0})",
       "'enable_bias'"},
  };
  expect_configs_refused(cases);
}

TEST_CASE("accounting: 6·params·tokens is the exact count without attention and vocabulary") {
  const auto& c = model("llama3-70b");
  const auto f = forward_flops_per_token(c, 0);
  CHECK(f.attention == 0);
  // the rule also charges 6 FLOPs to each norm scale and to the embedding table, which do no matmul
  const auto p = param_counts(c);
  CHECK(3 * (f.mlp + f.qkvo + f.unembedding) + 6 * (p.norms + p.embedding) ==
        Approx(six_active_flops_per_token(c)).epsilon(1e-14));
  // §4.3: per layer, training MLP = 18·D·F per token and QKVO = 12·D·(N + K)·H
  CHECK(3 * f.mlp / c.layers == Approx(18 * c.d_model * c.d_ff));
  CHECK(3 * f.qkvo / c.layers == Approx(12 * c.d_model * (c.q_heads + c.kv_heads) * c.head_dim));
  CHECK(kv_bytes_per_token(c, Dtype::bf16) == 2 * 80 * 8 * 128 * 2);
  CHECK(remat_extra_flops_per_token(c, 4096, Remat::none) == 0);
  CHECK_THROWS_AS(forward_flops_per_token(c, -1), std::invalid_argument);
  TransformerConfig bad = c;
  bad.layers = 0;
  CHECK_THROWS_WITH_AS(param_counts(bad), doctest::Contains("layers = 0"), std::invalid_argument);
}

TEST_CASE("einsum FLOPs: hand-worked cases and classification") {
  CHECK(einsum_flops("P,P->", {{'P', 7}}) == 14);
  CHECK(einsum_flops("NP,P->N", {{'N', 3}, {'P', 5}}) == 30);
  CHECK(einsum_flops("NP,PM->NM", {{'N', 2}, {'P', 3}, {'M', 4}}) == 48);
  CHECK(einsum_flops_from_shapes("BTD,DF->BTF", std::vector<std::vector<double>>{{2, 3, 4}, {4, 5}}) == 2.0 * 2 * 3 * 4 * 5);
  // batch dims counted once: [G,H,I,J,K,L]·[G,H,M,N,K,L]
  CHECK(einsum_flops("GHIJKL,GHMNKL->GHIJMN", parse_letter_sizes("G=2,H=3,I=4,J=5,K=6,L=7,M=8,N=9")) ==
        2.0 * 2 * 3 * 4 * 5 * 6 * 7 * 8 * 9);
  // no contraction: an elementwise product, no factor 2
  CHECK(einsum_flops("IJ,IJ->IJ", {{'I', 3}, {'J', 4}}) == 12);
  const auto d = classify_einsum("BTD,DF->BTF");
  CHECK(d.contracting == "D");
  CHECK(d.free == "BTF");
  CHECK(classify_einsum("BTKGH,BSKH->BTSKG").batch == "BK");
}

TEST_CASE("einsum: malformed specs and sizes are rejected with the problem named") {
  CHECK_THROWS_WITH_AS(einsum_flops("IJ,JK", {{'I', 1}}), doctest::Contains("expected two inputs"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(einsum_flops("IJ->I", {{'I', 1}}), doctest::Contains("expected two inputs"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(einsum_flops("IJ,JK,KL->IL", {}), doctest::Contains("expected two inputs"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(einsum_flops("I1,JK->IK", {}), doctest::Contains("not a letter"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(einsum_flops("IJ,JK->IQ", {}), doctest::Contains("output letter Q"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(einsum_flops("IIJ,JK->IK", {}), doctest::Contains("repeats"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(einsum_flops("IJ,JK->IK", {{'I', 2}, {'J', 3}}), doctest::Contains("no size for letter K"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(einsum_flops("IJ,JK->IK", {{'I', 2}, {'J', 3}, {'K', 4}, {'Z', 5}}),
                       doctest::Contains("unused letter Z"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(einsum_flops("IJ,JK->IK", {{'I', 2}, {'J', 0}, {'K', 4}}), doctest::Contains("J = 0"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(einsum_flops_from_shapes("IJ,JK->IK", std::vector<std::vector<double>>{{2, 3}, {4, 5}}),
                       doctest::Contains("letter J has two sizes: 3 and 4"), std::invalid_argument);
  CHECK_THROWS_AS(parse_letter_sizes("I=4,I=5"), std::invalid_argument);
  CHECK_THROWS_AS(parse_letter_sizes("IJ=4"), std::invalid_argument);
  CHECK_THROWS_AS(parse_letter_sizes("I=x"), std::invalid_argument);
}

namespace {
std::vector<double> random_array(size_t n, std::mt19937& rng) {
  std::normal_distribution<double> g(0, 1);
  std::vector<double> v(n);
  for (auto& x : v) x = g(rng);
  return v;
}
double max_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i) d = std::max(d, std::fabs(a[i] - b[i]));
  return d;
}
}  // namespace

TEST_CASE("flash attention equals naive attention: shapes, blocks, GQA, causal") {
  std::mt19937 rng(42);
  const std::vector<AttentionShape> shapes{
      {16, 16, 4, 4, 8, false}, {16, 16, 4, 4, 8, true},  {7, 23, 8, 2, 16, false},
      {7, 23, 8, 2, 16, true},  {1, 100, 6, 1, 32, true}, {33, 33, 2, 1, 4, true},
  };
  for (const auto& s : shapes) {
    const auto q = random_array(static_cast<size_t>(s.T) * s.N * s.H, rng);
    const auto k = random_array(static_cast<size_t>(s.S) * s.K * s.H, rng);
    const auto v = random_array(static_cast<size_t>(s.S) * s.K * s.H, rng);
    const auto naive = naive_attention(s, q, k, v);
    for (auto [bq, bk] : {std::pair{1, 1}, {4, 5}, {16, 64}, {3, 7}}) {
      INFO("T=" << s.T << " S=" << s.S << " N=" << s.N << " K=" << s.K << " causal=" << s.causal << " blocks " << bq << "x" << bk);
      CHECK(max_diff(flash_attention(s, q, k, v, bq, bk), naive) < 1e-12);
    }
  }
  CHECK_THROWS_AS(naive_attention({4, 4, 3, 2, 8, false}, {}, {}, {}), std::invalid_argument);
  CHECK_THROWS_AS(flash_attention({8, 4, 2, 2, 2, true}, std::vector<double>(32), std::vector<double>(16),
                                  std::vector<double>(16), 2, 2),
                  std::invalid_argument);  // causal with more queries than keys
}

TEST_CASE("§4.7: two chunks' softmax statistics combine into the whole") {
  std::mt19937 rng(3);
  const auto scores = random_array(40, rng);
  std::vector<std::vector<double>> values;
  for (int i = 0; i < 40; ++i) values.push_back(random_array(5, rng));
  const auto whole = softmax_state(scores, values);
  const auto first = softmax_state({scores.begin(), scores.begin() + 13}, {values.begin(), values.begin() + 13});
  const auto second = softmax_state({scores.begin() + 13, scores.end()}, {values.begin() + 13, values.end()});
  const auto both = combine(first, second);
  CHECK(both.m == whole.m);
  CHECK(both.l == Approx(whole.l).epsilon(1e-14));
  for (size_t h = 0; h < 5; ++h) CHECK(both.o[h] == Approx(whole.o[h]).epsilon(1e-13));
}

TEST_CASE("§4.7: Σ_j S_ij dS_ij = Σ_d dO_id O_id (the backward pass's local identity)") {
  std::mt19937 rng(11);
  const AttentionShape s{6, 9, 2, 1, 4, false};
  const auto q = random_array(6 * 2 * 4, rng), k = random_array(9 * 1 * 4, rng), v = random_array(9 * 1 * 4, rng);
  const auto d_out = random_array(6 * 2 * 4, rng);
  const auto p = attention_probabilities(s, q, k);
  const auto o = naive_attention(s, q, k, v);
  for (int t = 0; t < s.T; ++t)
    for (int n = 0; n < s.N; ++n) {
      double lhs = 0, rhs = 0;
      for (int j = 0; j < s.S; ++j) {
        double ds = 0;  // dS_tj = Σ_d dO_td V_jd
        for (int d = 0; d < s.H; ++d) ds += d_out[(t * 2 + n) * 4 + d] * v[j * 4 + d];
        lhs += p[(t * 2 + n) * 9 + j] * ds;
      }
      for (int d = 0; d < s.H; ++d) rhs += d_out[(t * 2 + n) * 4 + d] * o[(t * 2 + n) * 4 + d];
      CHECK(lhs == Approx(rhs).epsilon(1e-12));
    }
}

TEST_CASE("the tensor inventory: shapes, repeats, tied and routed tensors") {
  // A small MoE with shared experts of their own width, written out by hand.
  TransformerConfig c;
  c.name = "moe";
  c.d_model = 8, c.d_ff = 100, c.layers = 3, c.q_heads = 4, c.kv_heads = 2, c.head_dim = 5, c.vocab = 11;
  c.experts = 6, c.experts_per_token = 2, c.shared_experts = 1, c.expert_d_ff = 7, c.tied_embeddings = true;
  const auto inv = tensor_inventory(c);
  double stored = 0, active = 0;
  for (const auto& t : inv) {
    stored += elements(t) * copies(t, c);
    if (!t.tied) active += elements(t) * active_copies(t, c);
  }
  const double attention = 3 * (8 * 4 * 5 * 2 + 8 * 2 * 5 * 2);
  const double expert = 3 * 8 * 7;  // gated: W_in1, W_in2, W_out of width 7 (not d_ff = 100)
  const double norms = 3 * 2 * 8 + 8;
  const double router = 3 * 8 * 6;
  CHECK(stored == 11 * 8 + attention + norms + router + 3 * (6 + 1) * expert);
  CHECK(active == 11 * 8 + attention + norms + router + 3 * (2 + 1) * expert);
  CHECK(param_counts(c).total == stored);
  CHECK(param_counts(c).active == active);
  // The tied unembedding stores nothing but is still a matmul of every token.
  const auto unembedding = std::find_if(inv.begin(), inv.end(), [](const Tensor& t) { return t.name == "unembedding"; });
  REQUIRE(unembedding != inv.end());
  CHECK(unembedding->tied);
  CHECK(copies(*unembedding, c) == 0);
  CHECK(forward_flops_per_token(c, 0).unembedding == 2 * 8 * 11);
  CHECK(forward_flops_per_token(c, 0).mlp == 2 * 3 * (2 + 1) * expert);
  CHECK(param_bytes(c, Dtype::int8) == stored);
  CHECK(param_bytes(c, Dtype::fp32) == 4 * stored);
}
