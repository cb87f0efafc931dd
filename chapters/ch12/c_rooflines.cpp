// Chapter 12, part C: the parallelism rooflines of §12.5 ("Rooflines for LLM Scaling on GPUs"), its worked
// examples (DeepSeek-V3, LLaMA-3), the TLDR and Quiz 5. The library's cost/gpu_rooflines.hpp gives each
// strategy's T_math and T_comms for any GPU System; the chapter's inputs are its own figures: C = 990e12
// bf16 FLOPs/s on an H100 (its spec table's 9.9e14; the preset holds the datasheet's 989e12), W_GPU = 450e9,
// W_node = 400e9 B/s; a B200 at 2250e12 and 900e9; DeepSeek's H800 at 300e9.
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "exercise.hpp"
#include "scaling/base/format.hpp"
#include "scaling/cost/gpu_rooflines.hpp"
#include "scaling/hardware/chip.hpp"
#include "scaling/hardware/system.hpp"

using namespace scaling;
using workbook::exact;
using workbook::Finding;
using workbook::rel;
using workbook::Severity;
using workbook::sig;

static auto& chapter = workbook::define_chapter(12, "ch12", "How to Think About GPUs");

namespace {

// An H100 cluster with the chapter's 990e12 (§12.5 "990e12 / 450e9 = 2200").
GpuRates h100(double c = 990e12) {
  ChipOverrides o;
  o.bf16_flops_per_s = c;
  return gpu_rates(gpu_cluster(with_overrides(chip("h100"), o), 2));
}
GpuRates b200() { return gpu_rates(gpu_cluster(chip("b200"), 2)); }
constexpr bool kInNode = false, kAcross = true;

const Finding kTpIntensity{
    "quiz5-tp-intensity-1995", Severity::slip,
    "Quiz 5 Q2 divides F by 1995 where C / W inside an H100 node is 2200",
    "Part 3 of the answer bounds tensor parallelism by F·W/C and writes it as F / 1995 = 28672 / 1995 = 14.372. "
    "With the chapter's own figures inside a node, C / W = 990e12 / 450e9 = 2200 (the §12.5.2 text says 'F / 2200' "
    "for the same case), so the bound is 28672 / 2200 = 13.0. The conclusion, 8-way TP within a node, stands. The 1995 is in the chapter's first version (commit e8f6685 "
    "of 2025-08-13 in the book's repository) and unchanged in the current one (3980377)."};

const Finding kB200Ratio{
    "quiz5-b200-flops-ratio", Severity::slip,
    "Quiz 5 Q1 calls 990 → 2250 TFLOPs/s a 2.25x increase; it is 2.27x",
    "2250e12 / 990e12 = 2.27. The printed 2.25 is what 2250 over 1000 gives; with the sentence's own 990 the "
    "factor is 2.27. Nothing downstream uses it. Present since the chapter's first version (e8f6685, 2025-08-13) "
    "and in the current one (3980377)."};

}  // namespace

EXERCISE("ch12.dp-roofline", "Data parallelism and ZeRO: the critical batch per GPU") {
  ex.section("§12.5.1");
  const auto h = h100();
  ex.answer("within_node_tokens", gpu_dp_critical_tokens_per_gpu(h, kInNode), "tokens").book(2200, sig(2));
  ex.answer("across_nodes_tokens", gpu_dp_critical_tokens_per_gpu(h, kAcross), "tokens").book(2475, exact());
  const Chip& v5p = chip("tpu-v5p");
  ex.answer("tpu_v5p_tokens", v5p.bf16_flops_per_s / (3 * v5p.ici_bidi_bytes_per_s), "tokens").book(850, exact())
      .explain("C / W over all three bidirectional ICI axes (§5's figure)");
  const double llama = 16000 * gpu_dp_critical_tokens_per_gpu(h, kAcross);
  ex.answer("llama3_batch_tokens", llama, "tokens").book(40e6, sig(2)).explain("16,000 GPUs × 2475");
  ex.claim("llama3_used_less", "§12.5.1: LLaMA-3's 16M-token batch is below what pure DP would need", 16e6, "tokens")
      .below(llama);
  GpuRates h800 = h;
  h800.w_gpu_bytes_per_s = 300e9;
  h800.w_node_bytes_per_s = 300e9;
  const double ds = gpu_dp_critical_tokens_per_gpu(h800, kAcross);
  ex.answer("deepseek_per_gpu_tokens", ds, "tokens").book(3300, exact()).explain("990e12 / 300e9 (the H800's bandwidth)");
  ex.answer("deepseek_batch_tokens", 2048 * ds, "tokens").book(6.7e6, sig(2)).explain("2048 H800s × 3300");
  // At the critical batch the two terms meet.
  const auto t = gpu_dp_terms(h, 2475 * 1024, 8192, 28672, 1024, kAcross);
  ex.answer("terms_ratio_at_critical", t.t_math_s / t.t_comms_s, "").book(1, exact())
      .explain("T_math = 8BDF/(XC) against T_comms = 8DF/W_node at B/X = 2475");
  // T_math and T_comms of one layer's backward pass against the per-GPU batch (D = 8192, F = 28672, as LLaMA-3
  // 70B), in a node and across nodes: the lines cross at C/W.
  std::vector<double> per_gpu, math_ms, comms_node_ms, comms_across_ms;
  for (double b = 256; b <= 16384; b *= std::sqrt(2.0)) {
    const auto in_node = gpu_dp_terms(h, b * 8, 8192, 28672, 8, kInNode);
    const auto across = gpu_dp_terms(h, b * 1024, 8192, 28672, 1024, kAcross);
    per_gpu.push_back(b);
    math_ms.push_back(in_node.t_math_s * 1e3);
    comms_node_ms.push_back(in_node.t_comms_s * 1e3);
    comms_across_ms.push_back(across.t_comms_s * 1e3);
  }
  ex.series("terms", "tokens per GPU (B/X)", "time per layer, backward (ms)")
      .line("T_math", per_gpu, math_ms)
      .line("T_comms inside a node (450 GB/s)", per_gpu, comms_node_ms)
      .line("T_comms across nodes (400 GB/s per node)", per_gpu, comms_across_ms);
  ex.claim("sharp_halves", "§12.5.1: in-network reduction would in theory halve the critical batch (twice the "
                           "AllReduce bandwidth)", gpu_dp_critical_tokens_per_gpu(h, kAcross) / 2 / gpu_dp_critical_tokens_per_gpu(h, kAcross), "")
      .about(0.5, exact());
}

EXERCISE("ch12.dp-moe", "Data parallelism for a mixture of experts") {
  ex.section("§12.5.1");
  ex.answer("gpt_oss_tokens", gpu_dp_critical_tokens_per_gpu(h100(), kAcross, 128, 4), "tokens").book(79200, exact())
      .explain("(E/k)·C/W_node with E = 128 experts, k = 4 active");
}

EXERCISE("ch12.dp-small-x", "Data parallelism over two nodes") {
  ex.section("§12.5.1");
  ex.answer("two_node_tokens", gpu_dp_critical_tokens_per_gpu(h100(), kAcross, 1, 1, 2), "tokens").book(1237, sig(4))
      .explain("α·(X − 1)/X with α = 2475 and X = 2 nodes");
}

EXERCISE("ch12.tp-roofline", "Tensor parallelism: the largest compute-bound degree") {
  ex.section("§12.5.2");
  const auto h = h100();
  const double f = 28000;
  ex.answer("y_max_in_node", gpu_tp_max_degree(h, f, kInNode), "").explain("F·W_GPU/C = 28000/2200");
  ex.answer("y_max_across", gpu_tp_max_degree(h, f, kAcross), "").book(11, sig(2)).explain("F·W_node/C = 28000/2475");
  ex.answer("y_max_two_nodes", gpu_tp_two_node_max_degree(h, f), "").book(19, sig(2))
      .explain("F > 2475·(Y − 8): Y < 8 + 28000/2475");
  ex.claim("sixteen_way_ok", "§12.5.2: 16-way TP over two nodes stays compute-bound for F = 28000 (F > 2475·(16 − 8))",
           f, "").above(h.c_flops_per_s / h.w_node_bytes_per_s * (16 - 8));
  const auto t = gpu_tp_terms(h, 1e6, 8192, f, 8, kInNode);
  ex.claim("eight_way_compute_bound", "§12.5.2: 8-way TP in a node is compute-bound at F = 28000", t.t_math_s / t.t_comms_s, "")
      .above(1);
}

EXERCISE("ch12.ep-roofline", "Expert parallelism: the least F that stays compute-bound") {
  ex.section("§12.5.3");
  const auto h = h100();
  ex.answer("min_f_z64_k8", gpu_ep_min_f(h, 64, 8), "").explain("k ≥ Z/8: α(Z − 8)/k with α = 2475, Z = 64, k = 8");
  ex.answer("min_f_z1024_k8", gpu_ep_min_f(h, 1024, 8), "").explain("Z ≫ k: 8α(Z − 8)/Z, approaching 8α");
  ex.answer("threshold_8_alpha", 8 * h.c_flops_per_s / h.w_node_bytes_per_s, "").explain("8·C/W_node, the takeaway's line");
}

EXERCISE("ch12.pp-comms", "Pipeline parallelism: the cost of passing activations") {
  ex.section("§12.5.4");
  // Hops on the critical path relative to the microbatches: (N_MB + N_stages − 2)/N_MB.
  const double b = 1e6, d = 8192, w = 400e9;
  const double one_hop = 2 * b * d / (w * 16);
  ex.answer("hop_factor_16_16", gpu_pp_total_comms_s(b, d, w, 16, 16) / (one_hop * 16), "")
      .explain("(16 + 16 − 2)/16: the total over the 16 microbatches' own hops");
  ex.answer("stages_for_factor_1_5_at_16_mb", 0.5 * 16 + 2, "stages").explain("N_stages − 2 = N_MB/2");
  ex.claim("pp_is_cheap", "§12.5.4: pipelining's per-layer traffic is far below TP's per-layer activation traffic "
                          "(80 layers, 16 stages and microbatches)",
           gpu_pp_total_comms_s(b, d, w, 16, 16) / 80 / (4 * b * d / w), "")
      .below(0.1);
}

EXERCISE("ch12.deepseek-v3-example", "DeepSeek-V3's parallelism") {
  ex.section("§12.5.5");
  const double ep = 64, pp = 16, dp = 2;
  ex.answer("gpus", ep * pp * dp, "GPUs").book(2048, exact());
  ex.answer("ep_nodes", ep / 8, "nodes").book(8, exact());
  const double tokens = 4096.0 * 15360;
  ex.answer("batch_tokens", tokens, "tokens").book(62914560, exact());
  ex.answer("tokens_per_gpu", tokens / 2048, "tokens").book(30e3, sig(2));
  ex.answer("model_parallel", ep * pp, "GPUs").book(1024, exact());
  ex.answer("dp_gain", dp / (dp - 1), "×").book(2, exact());
  // The DP AllReduce over 2 copies, each model-parallel group spanning 1024/8 = 128 nodes: the per-GPU
  // critical batch (E/k)·C/W_node · 8/1024 · (X − 1)/X with E/k = 256/8.
  const auto h = h100();
  const double crit = gpu_dp_critical_tokens_per_gpu(h, kAcross, 256, 8, 2) * 8 / (ep * pp);
  ex.answer("dp_critical_tokens_per_gpu", crit, "tokens")
      .explain("(256/8)·2475·(8/1024)·(1/2): far below the 30k per GPU they ran");
}

EXERCISE("ch12.llama3-example", "LLaMA-3's parallelism") {
  ex.section("§12.5.5");
  ex.answer("tokens_per_gpu", 16e6 / 16e3, "tokens").book(1e3, sig(1));
  ex.answer("gpus", 8.0 * 16 * 128, "GPUs").book(16e3, sig(2));
  const double nodes_spanned = 8.0 * 16 / 8;
  ex.answer("dp_cost_reduction", nodes_spanned, "×").book(16, exact()).explain("8 TP × 16 PP = 128 GPUs = 16 nodes");
  const double crit = gpu_dp_critical_tokens_per_gpu(h100(), kAcross) / nodes_spanned;
  ex.answer("dp_critical_tokens_per_gpu", crit, "tokens").explain("2475 / 16");
  ex.claim("compute_bound", "§12.5.5: at about 1k tokens per GPU LLaMA-3's data parallelism is compute-bound once PP "
                            "spreads each replica over 16 nodes", 1e3, "tokens").above(crit);
}

EXERCISE("ch12.tldr", "TLDR: rules of thumb on H100s") {
  ex.section("§12.5.6");
  const auto h = h100();
  ex.answer("dp_tokens_per_gpu", gpu_dp_critical_tokens_per_gpu(h, kAcross), "tokens").book(2500, sig(2))
      .explain("'about 2500' for 2475");
  const double y = std::min(std::floor(gpu_tp_max_degree(h, 28000, kAcross)), double(h.gpus_per_node));
  ex.answer("tp_degree", y, "").book(8, exact()).explain("⌊28000/2475⌋ = 11, capped at the 8-GPU node");
  ex.answer("ep_threshold_f", 8 * h.c_flops_per_s / h.w_node_bytes_per_s, "").explain("8·C/W_node");
}

EXERCISE("ex12.18", "Quiz 5 Q1: rooflines on a B200 SuperPod") {
  ex.section("§12.5.7");
  const auto b = b200();
  ex.answer("flops_ratio", b.c_flops_per_s / 990e12, "×")
      .book(2.25, sig(3))
      .erratum(kB200Ratio)
      .book_inputs_give(2250e12 / 990e12, "2250e12 / 990e12, the sentence's own figures");
  ex.answer("tp_intensity", b.c_flops_per_s / b.w_gpu_bytes_per_s, "").book(2500, exact());
  ex.answer("dp_tokens_across", gpu_dp_critical_tokens_per_gpu(b, kAcross), "tokens").book(5625, exact());
}

EXERCISE("ex12.19", "Quiz 5 Q2: sharding LLaMA-3 70B on H100s") {
  ex.section("§12.5.7");
  const double params = 70e9, bytes = params * (2 + 8);
  ex.answer("weights_and_adam_bytes", bytes, "B").book(700e9, exact()).explain("2 bytes of bf16 weights + 8 of fp32 Adam");
  const double gpus = std::ceil(bytes / chip("h100").hbm_bytes);
  ex.answer("min_gpus", gpus, "GPUs").book(9, exact());
  ex.answer("min_nodes", std::ceil(gpus / 8), "nodes").book(2, exact());
  const double flops = 6 * params * 15e12, rate = 4096 * 990e12 * 0.45;
  ex.answer("train_flops", flops, "FLOPs").book(6.3e24, exact());
  ex.answer("cluster_flops_per_s", rate, "FLOPs/s").book(1.8e18, sig(2));
  ex.answer("train_s", flops / rate, "s").book(3.5e6, sig(2));
  ex.answer("train_days", flops / rate / 86400, "days").book(40, sig(2));
  const auto h = h100();
  ex.answer("tp_limit", gpu_tp_max_degree(h, 28672, kInNode), "")
      .book(14.372, sig(5))
      .erratum(kTpIntensity)
      .book_inputs_give(28672 * 450e9 / 990e12, "F·W/C = 28672·450e9/990e12 with the chapter's C and in-node W");
  ex.answer("tp_8_bytes_per_gpu", bytes / 8, "B").book(87.5e9, exact());
  ex.claim("tp_8_does_not_fit", "§12.5.7 Q2: 8-way TP with pure DP puts 87.5 GB on each 80 GB H100", bytes / 8, "B")
      .above(chip("h100").hbm_bytes);
  const double per_gpu = 4e6 / 4096;
  ex.answer("zero3_tokens_per_gpu", per_gpu, "tokens").book(976, sig(3));
  ex.claim("zero3_comms_bound", "§12.5.7 Q2: 976 tokens per GPU is below the DP limit across nodes", per_gpu, "tokens")
      .below(gpu_dp_critical_tokens_per_gpu(h, kAcross));
  // "… even below our pure DP limit, and this is twice that limit because we have to move our weights." ZeRO-3
  // AllGathers the weights (forward and backward) and ReduceScatters the gradients: per pass the same bytes per
  // FLOP as DP's AllReduce, so its bound is C/W_node (§12.5.1: "both have the same cost"). The factor 2 holds
  // against §12.5.1's pure DP with in-network reduction, which doubles the AllReduce bandwidth; an AllGather of
  // weights gains nothing from it.
  GpuRates sharp = h;
  sharp.w_node_bytes_per_s *= 2;  // §12.5.1: in-network reduction, in theory twice the AllReduce bandwidth
  const double zero3_limit = gpu_dp_critical_tokens_per_gpu(h, kAcross);
  const double dp_sharp_limit = gpu_dp_critical_tokens_per_gpu(sharp, kAcross);
  ex.claim("zero3_twice_dp", "§12.5.7 Q2: ZeRO-3's batch bound is twice the pure-DP one because the weights move",
           zero3_limit / dp_sharp_limit, "×")
      .about(2, exact())
      .explain(fmt::format(
          "an approximation under the policy (it rests on a reading): holds when 'our pure DP limit' is §12.5.1's pure "
          "DP with in-network reduction, {} tokens, against ZeRO-3's {} (its weight AllGathers cannot be reduced in "
          "the network), and {} is below both. Read as DP without in-network reduction ({}), the factor is 1, as "
          "§12.5.1's 'same cost' and its takeaway (DP or ZeRO-1/3, about 2500) say; the answer's 'no' stands either way",
          format_number(dp_sharp_limit), format_number(zero3_limit), format_number(per_gpu),
          format_number(zero3_limit)));
  GpuRates pp8 = h;
  pp8.w_node_bytes_per_s *= 8;  // each model-parallel shard spans 8 nodes
  ex.answer("pp8_bytes_per_s", pp8.w_node_bytes_per_s, "B/s").book(3200e9, exact());
  const double crit = gpu_dp_critical_tokens_per_gpu(pp8, kAcross);
  ex.answer("pp8_tokens", crit, "tokens").book(309, sig(3));
  ex.claim("pp8_compute_bound", "§12.5.7 Q2: with 8-way pipelining 976 tokens per GPU clears the limit", per_gpu, "tokens")
      .above(crit);
}

EXERCISE("ex12.20", "Quiz 5 Q3: Megatron-LM's configurations") {
  ex.section("§12.5.7");
  struct Config {
    const char* key;
    double batch, gpus, tp, pp, printed;
  };
  // Batch (sequences), GPUs and TP × PP as the figure of Megatron-LM's README gives them (per the answer).
  const Config configs[] = {{"16b", 192, 192, 4, 1, 4096}, {"70b", 384, 768, 8, 2, 2048}, {"314b", 1536, 3072, 8, 8, 2048}};
  // The answer's 2,472 is the H100's datasheet 989e12 over 400e9 (truncated), not the 990e12 of §12.5.1.
  const auto h = gpu_rates(gpu_cluster(chip("h100"), 2));
  const double limit = gpu_dp_critical_tokens_per_gpu(h, kAcross);
  ex.answer("fsdp_limit_tokens", limit, "tokens").book(2472, sig(4))
      .explain(fmt::format(
          "C / W_node with the preset's 989e12: {}. §12.5.1 itself prints {} (990e12/400e9), and no 2,472 is worked "
          "out in the chapter; a second reconstruction also gives it: {}·1023/1024 = {}, the spine ring's (N − 1)/N "
          "over 1024 GPUs, which fits 'based on the spine level reduction'",
          fmt::format("{:.1f}", limit), format_number(gpu_dp_critical_tokens_per_gpu(h100(), kAcross)),
          format_number(gpu_dp_critical_tokens_per_gpu(h100(), kAcross)),
          fmt::format("{:.1f}", gpu_dp_critical_tokens_per_gpu(h100(), kAcross) * 1023 / 1024)));
  for (const auto& c : configs) {
    const double per_gpu = c.batch * 4096 / c.gpus;
    ex.answer(fmt::format("tokens_per_gpu_{}", c.key), per_gpu, "tokens").book(c.printed, exact());
    const double nodes = std::max(1.0, c.tp * c.pp / 8);
    const double crit = limit / nodes;
    if (nodes > 1)
      ex.answer(fmt::format("critical_{}", c.key), crit, "tokens")
          .book(nodes == 2 ? 1e3 : 300, sig(1))
          .explain(fmt::format("{}-way model parallelism spans {} nodes: 2472.5 / {}", c.tp * c.pp, nodes, nodes));
    ex.claim(fmt::format("compute_bound_{}", c.key),
             fmt::format("§12.5.7 Q3: the {} configuration's per-GPU batch clears its critical batch", c.key), per_gpu,
             "tokens")
        .above(crit);
  }
}
