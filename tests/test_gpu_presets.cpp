// The GPU presets against the vendor datasheets (each figure below written from the source named beside
// it, not from the preset table), the book's rounded §12 tables as a second check, and the System a GPU
// cluster builds from them.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

#include "scaling/hardware/chip.hpp"
#include "scaling/hardware/system.hpp"

using namespace scaling;
using doctest::Approx;

TEST_CASE("GPU presets: the datasheet figures") {
  // NVIDIA A100 datasheet, 80GB SXM column: BF16 Tensor Core 312 TFLOPS, INT8 624 TOPS (dense; the sheet's
  // starred figures are with sparsity, twice these), GPU memory 80GB HBM2e at 2,039 GB/s, NVLink 600 GB/s
  // (both directions together), no FP8.
  const Chip& a100 = chip("a100");
  CHECK(a100.bf16_flops_per_s == 312e12);
  CHECK(a100.int8_flops_per_s == 624e12);
  CHECK(a100.fp8_flops_per_s == 0);
  CHECK(a100.hbm_bytes == 80e9);
  CHECK(a100.hbm_bytes_per_s == 2039e9);
  CHECK(a100.nvlink_bytes_per_s == 600e9 / 2);
  // DGX A100: eight GPUs, eight 200 Gb/s HDR InfiniBand adapters for the compute fabric.
  CHECK(a100.gpus_per_node == 8);
  CHECK(a100.ib_bytes_per_s == 200e9 / 8);

  // NVIDIA H100 datasheet, SXM column: FP8 3,958 TFLOPS and INT8 3,958 TOPS with sparsity (half dense),
  // NVLink 900 GB/s; DGX H100: 8 GPUs, 8 × 400 Gb/s ConnectX-7. bf16 and HBM bandwidth are §1.1's (989e12
  // rounded to 9.89e14 as the chapters use it; 3.35 TB/s).
  const Chip& h100 = chip("h100");
  CHECK(h100.bf16_flops_per_s == 9.89e14);
  CHECK(h100.hbm_bytes_per_s == 3.35e12);
  CHECK(h100.hbm_bytes == 80e9);
  CHECK(h100.fp8_flops_per_s == 3958e12 / 2);
  CHECK(h100.int8_flops_per_s == 3958e12 / 2);
  CHECK(h100.nvlink_bytes_per_s == 900e9 / 2);
  CHECK(h100.gpus_per_node == 8);
  CHECK(h100.ib_bytes_per_s == 400e9 / 8);

  // NVIDIA H200 datasheet, SXM: 141 GB HBM3e at 4.8 TB/s; BF16 1,979 TFLOPS and FP8 3,958 TFLOPS with
  // sparsity; NVLink 900 GB/s; DGX H200: 8 GPUs, 8 × 400 Gb/s ConnectX-7.
  const Chip& h200 = chip("h200");
  CHECK(h200.hbm_bytes == 141e9);
  CHECK(h200.hbm_bytes_per_s == 4.8e12);
  CHECK(h200.bf16_flops_per_s == 1979e12 / 2);
  CHECK(h200.fp8_flops_per_s == 3958e12 / 2);
  CHECK(h200.nvlink_bytes_per_s == 900e9 / 2);
  CHECK(h200.ib_bytes_per_s == 400e9 / 8);

  // B200: the book's §12 table (192 GB, 8.0e12 B/s, 2.3e15 / 4.5e15 / 9.0e15 bf16 / fp8 / fp4) and its
  // Question 3 (2250e12 bf16); NVIDIA's Blackwell figures per GPU, dense: 2.25 PF bf16, 4.5 PF fp8, 9 PF
  // fp4; NVLink 5 1.8 TB/s both ways; §12: node egress 400 GB/s over 8 GPUs.
  const Chip& b200 = chip("b200");
  CHECK(b200.bf16_flops_per_s == 2250e12);
  CHECK(b200.fp8_flops_per_s == 4.5e15);
  CHECK(b200.fp4_flops_per_s == 9e15);
  CHECK(b200.hbm_bytes == 192e9);
  CHECK(b200.hbm_bytes_per_s == 8e12);
  CHECK(b200.nvlink_bytes_per_s == 1800e9 / 2);
  CHECK(b200.ib_bytes_per_s == 400e9 / 8);
}

TEST_CASE("GPU presets: within the rounding of the book's §12 tables") {
  struct Row {
    const char* name;
    double hbm_bw, bf16, fp8_int8, nvlink;  // §12: HBM BW/chip, FLOPs/s bf16 and fp8/int8, GPU egress (NVLink table)
  };
  for (const Row& r : {Row{"a100", 2.0e12, 3.1e14, 6.2e14, 300e9}, Row{"h100", 3.4e12, 9.9e14, 2.0e15, 450e9},
                       Row{"h200", 4.8e12, 9.9e14, 2.0e15, 450e9}, Row{"b200", 8.0e12, 2.3e15, 4.5e15, 900e9}}) {
    CAPTURE(r.name);
    const Chip& c = chip(r.name);
    CHECK(c.hbm_bytes_per_s == Approx(r.hbm_bw).epsilon(0.03));
    CHECK(c.bf16_flops_per_s == Approx(r.bf16).epsilon(0.03));
    CHECK(std::max(c.int8_flops_per_s, c.fp8_flops_per_s) == Approx(r.fp8_int8).epsilon(0.03));
    CHECK(c.nvlink_bytes_per_s == r.nvlink);
    CHECK(is_gpu(c));
    CHECK(c.pod_shape.empty());
  }
  CHECK_FALSE(is_gpu(chip("tpu-v5p")));
}

TEST_CASE("System: a GPU cluster from the preset, with overrides") {
  const System s = gpu_cluster(chip("h100"), 128);
  CHECK(s.name == "128 × 8 NVIDIA H100");
  CHECK(chips(s) == 1024);
  CHECK(s.fast_name == "NVLink");
  CHECK(s.slow.name == "InfiniBand");
  REQUIRE(s.fast.size() == 1);
  CHECK(s.fast[0].size == 8);
  CHECK(s.fast[0].bytes_per_s == 450e9);
  CHECK(s.slow.groups == 128);
  CHECK(s.slow.bytes_per_s == 50e9);
  const System o = gpu_cluster(chip("h100"), 2, 4, {1e11, 2e10});
  CHECK(chips(o) == 8);
  CHECK(o.fast[0].bytes_per_s == 1e11);
  CHECK(o.slow.bytes_per_s == 2e10);
  CHECK_THROWS_WITH_AS(gpu_cluster(chip("h100"), 0), doctest::Contains("nodes = 0"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(gpu_cluster(chip("tpu-v5p"), 2), doctest::Contains("no GPUs-per-node"), std::invalid_argument);
  Chip bare = chip("h100");
  bare.ib_bytes_per_s = 0;
  CHECK_THROWS_WITH_AS(gpu_cluster(bare, 2), doctest::Contains("no InfiniBand bandwidth"), std::invalid_argument);
  CHECK_NOTHROW(gpu_cluster(bare, 1));  // one node needs no InfiniBand
}

TEST_CASE("System: TPU pods over DCN") {
  const System s = tpu_pods(chip("tpu-v5p"), {16, 20, 28}, 8);
  CHECK(chips(s) == 8 * 8960);
  CHECK(s.fast_name == "ICI");
  CHECK(s.slow.name == "DCN");
  for (const auto& a : s.fast) {
    CHECK(a.bytes_per_s == 1.8e11);  // §2.3: v5p ICI 9e10 B/s per link each way, both ways 1.8e11
    CHECK(a.wraps);                  // §2.2: whole 4×4×4 cubes wrap every axis
    CHECK(a.hop_latency_s == 1e-6);
  }
  CHECK(s.slow.bytes_per_s == 2.5e10 / 4);  // §2.3: 2.5e10 B/s of DCN per host of 4 chips
  CHECK_THROWS_WITH_AS(tpu_pods(chip("h100"), {2, 2}, 1), doctest::Contains("not a TPU"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(tpu_pods(chip("tpu-v5p"), {4, 4, 4}, 0), doctest::Contains("pods = 0"), std::invalid_argument);
}

#include "scaling/cost/layout.hpp"
#include "scaling/model/presets.hpp"
#include "scaling/model/tensors.hpp"

TEST_CASE("activation inventory: the named rules are its sums") {
  // A gated dense layer (LLaMA): the layer input alone is D; the seven big weight matmuls produce Q (N·H),
  // K and V (K·H each), W_O's output (D), the two MLP input matrices' outputs (F each) and W_out's (D).
  const auto llama = model("llama3-8b");
  CHECK(to_string(saved_elements(saved_rule("input"), llama)) == "D");
  CHECK(to_string(saved_elements(saved_rule("matmuls"), llama)) == "2D+2F+NH+2KH");
  // Everything the backward pass reads: the two norms' inputs and outputs (4D), Q and the attention output
  // (N·H each), K and V, and the gated MLP's three hidden tensors; not W_O's and W_out's outputs, which only
  // feed a residual add.
  CHECK(to_string(saved_elements(saved_rule("all"), llama)) == "4D+3F+2NH+2KH");
  // A plain MLP has one input matrix.
  auto plain = llama;
  plain.gated_mlp = false;
  CHECK(to_string(saved_elements(saved_rule("matmuls"), plain)) == "2D+F+NH+2KH");
  CHECK(to_string(saved_elements(saved_rule("all"), plain)) == "4D+2F+2NH+2KH");
  // A GPT block (F = 4D, N·H = K·H = D) keeps 16D: Korthikanti et al. 2022 §4.1, eq. 1, counts 34·s·b·h bytes
  // a layer besides the attention scores (gone with a fused kernel): two residual-dropout masks of one byte
  // an element, and 32·s·b·h bytes of 2-byte tensors, 16 of them per token.
  auto gpt = plain;
  gpt.d_ff = 4 * gpt.d_model;
  gpt.kv_heads = gpt.q_heads;
  gpt.head_dim = gpt.d_model / gpt.q_heads;
  CHECK(saved_elements_per_layer_token(saved_elements(saved_rule("all"), gpt), gpt) == 16 * gpt.d_model);
  // Every tensor is listed once with a kind; the layer keeps more than its matmul outputs.
  int inputs = 0;
  for (const auto& a : activation_inventory(llama)) inputs += a.kind == ActivationKind::layer_input;
  CHECK(inputs == 1);
  // A sum given by hand that equals a named rule is that rule; any other is kept as written.
  CHECK(parse_plan_rule("NH+2KH+2F+2D").name == "matmuls");
  CHECK(parse_plan_rule("D+2F").name.empty());
  CHECK(parse_plan_rule("D+2F").recompute == Remat::none);
  CHECK_THROWS_WITH_AS(parse_plan_rule("4Q"), doctest::Contains("input, matmuls, all"), std::invalid_argument);
}
