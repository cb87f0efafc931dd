// CS336's communication-accounting problem (seed 002), part of chapter 6's program: the XXL model —
// 126 blocks of the §5 layer W_in[D, F]·W_out[F, D] with D = 16,384 and F = 53,248 (LLaMA-3.1 405B's MLP
// without its gate), no attention, no embeddings — its memory on one device, under FSDP, the batch that
// keeps FSDP × TP compute-bound on a v5p, and ways to lower that batch.
//
// The problem's assumptions: fp32 master weights, accumulated gradients and Adam state; bf16 activations
// and gradient communication; no activation checkpointing; C = 4.6e14 FLOPs/s and W_ici = 2 · 9e10 B/s
// (the values it names), a v5p device of 95 GB, an H100 of 80 GB (80e9 bytes, the workbook's preset).
#include <cmath>
#include <string>

#include "exercise.hpp"
#include "scaling/base/format.hpp"
#include "scaling/cost/planner.hpp"
#include "scaling/cost/training.hpp"
#include "scaling/hardware/chip.hpp"
#include "scaling/model/presets.hpp"

using namespace scaling;
using workbook::rel;
using workbook::sig;

static auto& chapter = workbook::define_chapter(6, "ch06", "Training LLaMA 3 on TPUs");

namespace {
constexpr double kD = 16384, kF = 53248, kBlocks = 126;
constexpr double kV5pDevice = 95e9;  // the problem's "95GB per device"
constexpr double kC = 4.6e14, kW = 2 * 9e10;

// XXL's dimensions as a config, for the saved-activation rule (which reads only D and F here).
TransformerConfig xxl() {
  TransformerConfig c;
  c.name = "XXL";
  c.d_model = kD, c.d_ff = kF, c.layers = kBlocks;
  c.q_heads = c.kv_heads = c.head_dim = c.vocab = 1;
  c.gated_mlp = false;
  return c;
}

// The model state: fp32 master weights, fp32 gradients, Adam's two fp32 moments (no bf16 working copy).
TrainingMemory xxl_state() {
  const double params = kBlocks * 2 * kD * kF;  // W_in and W_out of each block
  TrainingMemory m;
  m.master = params * bytes_per_element(Dtype::fp32);
  m.grads = params * bytes_per_element(Dtype::fp32);
  m.optimizer = 2 * params * bytes_per_element(Dtype::fp32);
  m.total = m.master + m.grads + m.optimizer;
  return m;
}

// Without checkpointing a block keeps its input X (D) for W_in's gradient and W_in·X (F) for W_out's.
double activation_bytes_per_token() {
  return bytes_per_element(Dtype::bf16) * kBlocks * saved_elements_per_layer_token(parse_saved_rule("D+F"), xxl());
}

// (b): per device, the state sharded N ways and half of the activations (every second block) too.
double fsdp_bytes_per_device(double n, double tokens) {
  const double a = activation_bytes_per_token() * tokens;
  return zero_memory_per_device(xxl_state(), n, 3).total + a / 2 + a / 2 / n;
}

// The fewest devices that hold (b)'s memory under 95 GB, or 0 when none do.
double fewest_devices(double tokens) {
  if (activation_bytes_per_token() * tokens / 2 >= kV5pDevice) return 0;
  double n = 1;
  while (fsdp_bytes_per_device(n, tokens) > kV5pDevice) n += 1;
  return n;
}

constexpr const char* kGiB = "the notes divide by 1024³ and call the result GB (GiB)";
constexpr double kGiBBytes = 1024.0 * 1024 * 1024;  // the notes' "GB"
}  // namespace

EXERCISE("cs336.a", "XXL: memory on one device, and in H100s") {
  ex.section("CS336");
  const auto s = xxl_state();
  ex.answer("master_bytes", s.master, "B").notes("002", 819 * kGiBBytes, rel(0.5 / 819).because("819 printed in GiB: half a GiB"))
      .explain(std::string("126 · 2 · D · F · 4 bytes; ") + kGiB + ", so their 819 GB is 819 GiB");
  ex.answer("grads_bytes", s.grads, "B").explain("accumulated in fp32");
  ex.answer("optimizer_bytes", s.optimizer, "B").explain("Adam: two fp32 moments");
  ex.answer("state_bytes", s.total, "B").notes("002", 3276 * kGiBBytes, rel(0.5 / 3276).because("3276 printed in GiB: half a GiB"))
      .explain("16 bytes per parameter: 4 × 819 GiB, the notes' '3276 GB'");
  const double a = activation_bytes_per_token();
  ex.answer("activation_bytes_per_token", a, "B")
      .notes("002", 0.01631399244 * kGiBBytes, sig(10).because("ten digits printed in GiB"))
      .differs("bf16 (D + F) per block: 126 · 69,632 · 2 = 17,547,264 bytes = 0.016342 GiB per token; the notes' "
               "0.016314 GiB does not follow from their stated count");
  const double h100 = chip("h100").hbm_bytes;
  ex.answer("h100s_for_state", s.total / h100, "").notes("002", 41, sig(2))
      .differs("a unit convention, not a slip: the notes divide 3276 GiB by 80, i.e. take the H100's 80 GB as "
               "80 GiB (40.95 → 41); with the workbook's preset of 80e9 bytes, 3.52e12 / 80e9 = 44");
  ex.answer("h100s_per_token", a / h100, "").notes("002", 0.0002039249055, sig(10))
      .differs("the notes' 0.016314 GB per token over 80; ours is 17.55 MB per token over 80e9 bytes");
}

EXERCISE("cs336.b", "XXL under FSDP: memory per device and the devices needed") {
  ex.section("CS336");
  ex.answer("devices_state_only", fewest_devices(0), "devices")
      .explain("no activations: 3.52e12 / N ≤ 95e9 needs N = 38");
  ex.answer("devices_4096_tokens", fewest_devices(4096), "devices").explain("4096 tokens per device");
  ex.answer("max_tokens_per_device", 2 * kV5pDevice / activation_bytes_per_token(), "tokens")
      .explain("the unsharded half of the activations alone fills 95 GB beyond this, whatever N");
  ex.answer("bytes_per_device_n64_b2048", fsdp_bytes_per_device(64, 2048), "B");
  auto& t = ex.table("devices", {"tokens per device b", "fewest devices N", "memory per device at N"});
  for (double b : {0.0, 1024.0, 2048.0, 4096.0, 8192.0, 10240.0}) {
    const double n = fewest_devices(b);
    t.row({format_number(b), format_number(n), format_quantity(fsdp_bytes_per_device(n, b), "B")});
  }
}

namespace {
// §5.1.4 forward-pass times of one XXL block under FSDP X × TP Y at a global batch of B tokens (M_X = 2,
// M_Y = 1), from the training library. Both are linear in B: t_math = a·B, t_x constant, t_y ∝ B.
LayerTime block_time(double B, double X, double Y, CommsModel cm, bool exact = false) {
  return layer_time(layer_cost(MlpLayer{B, kD, kF}, Strategy::fsdp_tp, X, Y), Pass::forward, kC, kW, 2, 1, cm, exact);
}
// The smallest global batch for which the block is compute-bound.
double compute_bound_batch(double X, double Y, CommsModel cm, bool exact = false) {
  const auto one = block_time(1, X, Y, cm, exact), two = block_time(2, X, Y, cm, exact);
  const double a = one.t_math_s, y = two.t_y_s - one.t_y_s, x = one.t_x_s;
  if (cm == CommsModel::summed) return x / (a - y);  // a·B = x + y·B
  return a > y ? x / a : INFINITY;                    // a·B ≥ max(x, y·B)
}
}  // namespace

EXERCISE("cs336.c", "The compute-bound batch for FSDP 16 × TP 4 on a v5p") {
  ex.section("CS336");
  const double X = 16, Y = 4, N = X * Y;
  const double B = compute_bound_batch(X, Y, CommsModel::summed);
  ex.answer("alpha", kC / kW, "").explain("4.6e14 / 1.8e11");
  ex.answer("global_batch", B, "tokens").explain("§5.1.4 summed: F/(Y·M_X) + B/(X·M_Y) = B·F/(N·α)");
  ex.answer("per_device_batch", B / N, "tokens").explain("the batch over all 64 devices");
  ex.answer("per_replica_batch", B / X, "tokens").explain("each FSDP shard's batch, shared by its 4 TP devices");
  ex.answer("global_batch_concurrent", compute_bound_batch(X, Y, CommsModel::concurrent), "tokens")
      .explain("the workbook's model: the FSDP and TP collectives overlap (max)");
  ex.answer("global_batch_exact_ring", compute_bound_batch(X, Y, CommsModel::summed, true), "tokens")
      .explain("summed, with the ring factors (n − 1)/n: 15/16 on X, 3/4 on Y");
}

EXERCISE("cs336.d", "Lowering the batch while staying compute-bound") {
  ex.section("CS336");
  const double N = 64, alpha = kC / kW;
  // 1. Choose X at the comms minimum instead of 16 × 4, then overlap the two axes' collectives.
  ex.answer("batch_at_x_opt", N * mixed_min_batch_per_chip(alpha, kF, 2, 1, CommsModel::summed), "tokens")
      .explain("4α²/(M_X·M_Y·F) per chip at X_opt, times 64 chips");
  ex.answer("batch_at_x_opt_overlapped", N * mixed_min_batch_per_chip(alpha, kF, 2, 1, CommsModel::concurrent), "tokens")
      .explain("the same with the X and Y collectives on their own links at once: a quarter");
  // 2. Tensor parallelism alone does not depend on the batch: its ratio over all three axes.
  const auto tp = layer_time(layer_cost(MlpLayer{1, kD, kF}, Strategy::tp, 1, N), Pass::forward, kC, kW, 1, 3);
  ex.answer("tp64_comms_over_math", tp.t_comms_s / tp.t_math_s, "")
      .explain("64-way TP over 3 axes: Y·α/(3·F), batch-independent");
  // 3. Below that the chip itself stops being compute-bound: each device re-reads its weights per pass.
  ex.answer("hbm_floor_tokens", kC / chip("tpu-v5p").hbm_bytes_per_s, "tokens")
      .explain("C / W_hbm: the tokens a TP group must process per pass to hide its weight reads");
  // 4. The planner's ideal model over every layout of a v5p 4×4×4 for LLaMA-3.1 405B (XXL's MLP with attention):
  //    the smallest power-of-two batch whose best layout is compute-bound.
  double smallest = 0;
  for (double B = 16; B <= 1 << 20 && smallest == 0; B *= 2) {
    PlanRequest r;
    r.model = model("llama3-405b");
    r.system = tpu_pods(chip("tpu-v5p"), {4, 4, 4}, 1);
    r.system.chip.bf16_flops_per_s = kC;
    r.batch_tokens = B;
    const auto out = plan(r);
    if (!out.top.empty() && out.top.front().terms.bound == Bound::compute) smallest = B;
  }
  ex.answer("planner_min_batch", smallest, "tokens")
      .explain("64-way TP over all three axes, as few microbatches as the HBM roofline allows");
}
