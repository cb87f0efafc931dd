// Chapter 6: training LLaMA 3 on TPUs (§6.1–6.4). Parameters from the tensor inventory, memory and time
// from the training library (cost/training.hpp), the §5 bounds applied to LLaMA-3 70B on a v5p pod, and
// the parallelism planner (cost/planner.hpp) for the two worked problems, which the book leaves open.
//
// Assumptions the book leaves open, stated once: C = 4.59e14 bf16 FLOPs/s and 96 GB of HBM per v5p (§2.3),
// W_ici = 1.8e11 B/s per link both ways, so α = 2550; the §6.3 batch is 1024 sequences of 4096 tokens,
// 4·2^20 = 4,194,304 tokens (the §6.2 memory question writes it 4e6, and its answer uses 4e6); 15e12
// training tokens; a year is 365 days. The planner's ideal model is documented in planner.hpp; its
// `book` model is §5.1.4's FSDP × TP on one slice.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "exercise.hpp"
#include "scaling/base/format.hpp"
#include "scaling/cost/planner.hpp"
#include "scaling/cost/training.hpp"
#include "scaling/hardware/chip.hpp"
#include "scaling/model/presets.hpp"

using namespace scaling;
using workbook::exact;
using workbook::Finding;
using workbook::in;
using workbook::Inputs;
using workbook::rel;
using workbook::Severity;
using workbook::sig;

static auto& chapter = workbook::define_chapter(6, "ch06", "Training LLaMA 3 on TPUs");

namespace {
const Chip& v5p() { return chip("tpu-v5p"); }
const TransformerConfig& llama70() { return model("llama3-70b"); }
const TransformerConfig& llama405() { return model("llama3-405b"); }
constexpr double kPodChips = 8960;               // 16×20×28
constexpr double kBatch = 4.0 * 1024 * 1024;     // 1024 sequences of 4096 tokens
constexpr double kSeq = 4096;
constexpr double kTokens = 15e12;                // LLaMA 3's pretraining tokens
constexpr double kMfu = 0.4;
constexpr double kDay = 86400, kYear = 365 * kDay;
// Exercise 6.2's batch: 16M tokens (2048 sequences of 8192), the LLaMA 3 paper's final stage for 405B
// ("The Llama 3 Herd of Models", 2024, §3.4.1). The book gives none.
constexpr double kBatch405 = 16.0 * 1024 * 1024;

PlanRequest pod_request(const TransformerConfig& c, int pods, double batch, CostModel cm = CostModel::ideal) {
  PlanRequest r;
  r.model = c;
  r.system = tpu_pods(v5p(), {16, 20, 28}, pods);
  r.batch_tokens = batch;
  r.seq_len = kSeq;
  r.cost_model = cm;
  return r;
}

// §6.2's memory assumptions: bf16 weights, Adam's two fp32 moments, no gradient buffer counted, four
// checkpoints of D per layer per token.
TrainingSetup memory_setup(const char* rule) {
  TrainingSetup s;
  s.grads = std::nullopt;
  s.saved = parse_saved_rule(rule);
  return s;
}

// X-way FSDP × Y-way tensor parallelism of LLaMA-3 70B on a v5p slice of `shape` with the §6.3 batch,
// timed by the one step model in the book's equations (CostModel::book: §5.1.4's forward pass, the two
// axes' comms summed, M_X and M_Y from the slice's axes): its communication time over its FLOPs time.
double book_comms_over_math(const std::vector<int>& shape, int X, int Y) {
  const auto planned = best_placement(llama70(), tpu_pods(v5p(), shape, 1), X, Y, 1, Layout{}, Batch{kBatch, kSeq},
                                      CostModel::book);
  return planned.terms.t_ici_s / planned.terms.t_math_s;
}

const Finding kFourYears{"nearly-four-years", Severity::slip, "1752 days called 'nearly four years'",
                         "§6.2's own 1752 days are 1752 / 365 = 4.8 years (4.80 in 365.25-day years): nearly five "
                         "years, not nearly four; no reading of the section's numbers gives under four. The point it "
                         "makes, that so few chips would take far too long, holds either way."};
}  // namespace

EXERCISE("ch6.params", "LLaMA-3 70B's parameter count (§6.2)") {
  ex.section("§6.2");
  const auto& c = llama70();
  const auto p = param_counts(c);
  ex.answer("ffw_params", p.mlp, "").book(56.3e9, sig(3))
      .explain("3·D·F·L: W_in1, W_in2, W_out; 56.37e9, which the book truncates to 56.3e9");
  ex.answer("vocab_params", p.embedding + p.unembedding, "").book(2.1e9, sig(2)).explain("2·V·D: untied embeddings");
  ex.answer("attention_params", p.attention, "").book(12e9, sig(2)).explain("L·(2·D·N·H + 2·D·K·H)");
  ex.answer("total_params", p.total, "").book(70.4e9, sig(3))
      .stated_input("§6.2: the sum of its table's printed parts, 56.3e9 + 2.1e9 + 12e9 (exact 56.37e9 + 2.10e9 + "
                    "12.08e9, and 1.3M norm weights)", 56.3e9 + 2.1e9 + 12e9)
      .explain("with 2 RMSNorm scales per layer and the final one: 70.55e9");
  ex.answer("mlp_fraction", p.mlp / p.total, "").explain("the share of the three MLP matrices");
  ex.claim("mlp_dominates", "§6.2: the three MLP matrices hold 56B of the 70B parameters", p.mlp, "")
      .about(56e9, sig(2));
  const Inputs at70{{"D", 8192}, {"N", 64}, {"K", 8}, {"H", 128}, {"L", 80}, {"V", 128256}};
  const Inputs at405{{"D", 16384}, {"N", 128}, {"K", 16}, {"H", 96}, {"L", 126}, {"V", 100000}};
  auto config = [](const Inputs& v) {
    TransformerConfig t;
    t.name = "§6.2 formula";
    t.d_model = in(v, "D"), t.d_ff = 4 * in(v, "D"), t.layers = in(v, "L"), t.q_heads = in(v, "N");
    t.kv_heads = in(v, "K"), t.head_dim = in(v, "H"), t.vocab = in(v, "V");
    return t;
  };
  ex.formula("attention", "n_layers · [2 · d_model · n_heads · d_qkv + 2 · d_model · n_kv_heads · d_qkv]",
             [](const Inputs& v) {
               return in(v, "L") * (2 * in(v, "D") * in(v, "N") * in(v, "H") + 2 * in(v, "D") * in(v, "K") * in(v, "H"));
             },
             [config](const Inputs& v) { return param_counts(config(v)).attention; })
      .at(at70).at(at405);
  ex.formula("ffw", "d_model · d_ff · 3 (two input projections and the output) · n_layers",
             [](const Inputs& v) { return in(v, "D") * in(v, "F") * 3 * in(v, "L"); },
             [config](const Inputs& v) {
               auto t = config(v);
               t.d_ff = in(v, "F");
               return param_counts(t).mlp;
             })
      .at({{"D", 8192}, {"F", 28672}, {"L", 80}, {"N", 64}, {"K", 8}, {"H", 128}, {"V", 128256}})
      .at({{"D", 16384}, {"F", 53248}, {"L", 126}, {"N", 128}, {"K", 16}, {"H", 96}, {"V", 100000}});
  ex.formula("vocab", "2 · n_embeddings · d_model", [](const Inputs& v) { return 2 * in(v, "V") * in(v, "D"); },
             [config](const Inputs& v) {
               const auto q = param_counts(config(v));
               return q.embedding + q.unembedding;
             })
      .at(at70).at(at405);
}

EXERCISE("ch6.flops-per-token", "Training FLOPs per token (§6.2)") {
  ex.section("§6.2");
  const double f = six_active_flops_per_token(llama70());
  ex.answer("flops_per_token", f, "FLOPs").book(4.2e11, sig(2)).explain("6 · 70.55e9 parameters");
  ex.answer("s_per_token", f / v5p().bf16_flops_per_s, "s").explain("at the v5p's full 4.59e14 FLOPs/s");
  ex.claim("ms_per_token", "§6.2: a token's training step takes roughly 1 ms on one v5p at full utilisation",
           f / v5p().bf16_flops_per_s, "s")
      .about(1e-3, sig(1))
      .explain("'roughly 1ms', one figure: 4.2e11 / 4.59e14 = 0.92 ms");
  ex.answer("exact_over_six_n", training_flops_per_token(llama70(), kSeq) / f, "")
      .explain("chapter 4's exact count with attention over 4096 keys, against 6N");
}

EXERCISE("ch6.total-flops", "Pretraining FLOPs and one chip's time (§6.2)") {
  ex.section("§6.2");
  const double total = six_active_flops_per_token(llama70()) * kTokens;
  ex.answer("total_flops", total, "FLOPs").book(6.3e24, sig(2)).explain("15e12 tokens");
  ex.answer("years_one_chip", training_time_s(total, 1, v5p().bf16_flops_per_s, 1) / kYear, "years")
      .book(435, sig(3))
      .stated_input("§6.2: its '6.3e24' FLOPs (6 · 70e9 · 15e12; exact 6.35e24) over 4.59e14 FLOPs/s, in 365-day years",
                    6.3e24 / v5p().bf16_flops_per_s / kYear)
      .explain("one chip at 100% of 4.59e14 FLOPs/s with 70.55e9 parameters");
}

EXERCISE("ch6.pod-train-time", "Training on a full v5p pod at 40% MFU (§6.2)") {
  ex.section("§6.2");
  const double total = six_active_flops_per_token(llama70()) * kTokens;
  const double t = training_time_s(total, kPodChips, v5p().bf16_flops_per_s, kMfu);
  ex.answer("time_s", t, "s").book(3.8e6, sig(2)).explain("3.86e6 s, truncated in the book to 3.8e6");
  ex.answer("days", t / kDay, "days").book(44, sig(2)).explain("44.7 days, truncated in the book to 44");
}

EXERCISE("ch6.min-chips", "The fewest v5p chips for a 4M-token batch (§6.2)") {
  ex.section("§6.2");
  const auto& c = llama70();
  const auto m = training_memory(c, 4e6, memory_setup("4D"));
  ex.answer("param_bytes", m.params, "B").book(140e9, sig(2)).explain("bf16: 2 bytes per parameter");
  ex.answer("optimizer_bytes", m.optimizer, "B").book(560e9, sig(2)).explain("Adam: two fp32 moments, 8 bytes");
  ex.answer("checkpoint_bytes", m.activations, "B").book(20.9e12, sig(3))
      .explain("bf16 · 4 [tokens, D] tensors per layer · 80 layers · 4e6 tokens: 20.97e12, truncated in the book");
  ex.answer("total_bytes", m.total, "B").book(21.6e12, sig(3)).explain("21.68e12, truncated in the book");
  const double chips = std::ceil(m.total / v5p().hbm_bytes);
  ex.answer("min_chips", chips, "chips").book(225, sig(3))
      .stated_input("§6.2: its '21.6e12 / 96e9' (the total truncated; exact 21.68e12 / 96e9 = 225.8)", 21.6e12 / 96e9)
      .explain("whole chips: the exact total needs 226 of 96 GB");
  const double total_flops = six_active_flops_per_token(c) * kTokens;
  const double days = training_time_s(total_flops, chips, v5p().bf16_flops_per_s, kMfu) / kDay;
  ex.answer("days_on_min_chips", days, "days").book(1752, sig(4))
      .stated_input("§6.2: its '44 days · 8960 / 225' (exact 44.7 days and 226 whole chips)", 44.0 * kPodChips / 225)
      .explain("6 · 70.55e9 · 15e12 FLOPs on 226 chips at 40% MFU");
  ex.claim("nearly_four_years", "§6.2: training on the fewest chips would take nearly four years", days / 365, "years")
      .between(3.5, 4)
      .erratum(kFourYears, "ours: 1771 days, 4.85 years")
      .explain("in 365-day years");
  const auto g = training_memory(c, 4e6, [] {
    auto s = memory_setup("4D");
    s.grads = Dtype::bf16;
    return s;
  }());
  ex.answer("total_with_grads", g.total, "B").explain("adding the bf16 gradient buffer §6.2 leaves out");
}

EXERCISE("ch6.per-chip-memory", "Memory per chip on 8960 chips (§6.2)") {
  ex.section("§6.2");
  const auto m4 = training_memory(llama70(), 4e6, memory_setup("4D"));
  const auto m12 = training_memory(llama70(), 4e6, memory_setup("12D"));
  ex.answer("per_chip_bytes", m4.total / kPodChips, "B").book(2.4e9, sig(2)).explain("21.68 TB over 8960 chips");
  ex.answer("per_chip_12_checkpoints", m12.total / kPodChips, "B").explain("twelve [tokens, D] tensors per layer");
  ex.claim("twelve_still_small", "§6.2: with 12 checkpoints per layer a chip would still hold only about 8 GB",
           m12.total / kPodChips, "B")
      .at_most(8e9)
      .explain("7.1 GB: the book's 8 GB is an upper round figure");
  ex.answer("hbm_fraction", m4.total / kPodChips / v5p().hbm_bytes, "").explain("of the v5p's 96 GB");
}

EXERCISE("ch6.fsdp-only", "Pure FSDP without sequence sharding (§6.3)") {
  ex.section("§6.3");
  const double sequences = kBatch / kSeq;
  ex.answer("sequences", sequences, "").book(1024, exact()).explain("4·2^20 tokens in sequences of 4096");
  ex.answer("max_data_parallel", std::min(sequences, kPodChips), "chips").book(1024, exact())
      .explain("one sequence per data-parallel shard at least");
  ex.claim("cannot_use_pod", "§6.3: without sequence sharding, DP or FSDP can use at most 1024 of the 8960 chips",
           std::min(sequences, kPodChips), "chips")
      .below(kPodChips);
}

EXERCISE("ch6.fsdp-seq", "FSDP over batch and sequence on 8960 chips (§6.3)") {
  ex.section("§6.3");
  const double per_chip = kBatch / kPodChips, alpha = ici_alpha(v5p());
  ex.answer("per_chip_batch", per_chip, "tokens").book(468, sig(3));
  ex.answer("alpha", alpha, "").book(2550, sig(3)).explain("4.59e14 / 1.8e11");
  ex.answer("fsdp_min_batch_3_axes", dp_min_batch_per_chip(alpha, 3), "tokens").book(850, sig(2));
  ex.claim("comms_bound", "§6.3: 8960-way FSDP is solidly communication-bound: 468 tokens per chip is below 850",
           per_chip / dp_min_batch_per_chip(alpha, 3), "")
      .below(1);
  // The book model's pure FSDP on the pod (M_X = 3): the ratio of comms to FLOPs time.
  ex.answer("comms_over_math", book_comms_over_math({16, 20, 28}, static_cast<int>(kPodChips), 1), "")
      .explain("forward pass, three axes: 850 / 468");
}

EXERCISE("ch6.mixed-fsdp-tp", "Mixed FSDP and tensor parallelism on the pod (§6.3)") {
  ex.section("§6.3");
  const auto& c = llama70();
  const double alpha = ici_alpha(v5p()), F = c.d_ff, N = kPodChips;
  const double bound = mixed_min_batch_per_chip(alpha, F, 2, 1, CommsModel::summed);
  ex.answer("mixed_min_batch", bound, "tokens").book(453, sig(3))
      .explain("4α²/(M_X·M_Y·F) with M_X·M_Y = 2: 453.58, truncated in the book");
  ex.answer("mixed_min_batch_concurrent", mixed_min_batch_per_chip(alpha, F, 2, 1, CommsModel::concurrent), "tokens")
      .explain("the workbook's model: the two axes' collectives run at once on their own links (max, not sum)");
  ex.claim("slightly_above", "§6.3: 468 tokens per chip is slightly above the mixed bound", kBatch / N / bound, "")
      .between(1, 1.1);
  // The book's closed form: the larger root of the compute-equals-comms quadratic (M_X = 2, M_Y = 1).
  auto root = [](const Inputs& v) {
    const double B = in(v, "B"), Fv = in(v, "F"), n = in(v, "N"), a = in(v, "alpha");
    // X²·F/(N·M_X) − X·B·F/(N·α) + B/M_Y = 0
    const double qa = Fv / (n * 2), qb = -B * Fv / (n * a), qc = B;
    return (-qb + std::sqrt(qb * qb - 4 * qa * qc)) / (2 * qa);
  };
  auto book_x = [](const Inputs& v) {
    const double B = in(v, "B"), Fv = in(v, "F"), n = in(v, "N"), a = in(v, "alpha");
    return B / a + std::sqrt(B * B * Fv * Fv - 2 * a * a * Fv * B * n) / (a * Fv);
  };
  const Inputs book_point{{"B", 4.19e6}, {"F", 28672}, {"N", 8960}, {"alpha", 2550}};
  ex.formula("x_root", "X ≈ B/2550 + sqrt(B²·F² − 2·2550²·F·B·N) / (2550·F)", book_x, root)
      .exact_text("the larger root of X²·F/(N·M_X) − X·B·F/(N·α) + B/M_Y = 0, M_X = 2, M_Y = 1")
      .at(book_point)
      .at({{"B", 16.0 * 1024 * 1024}, {"F", 53248}, {"N", 16384}, {"alpha", 2000}});
  ex.answer("b_over_alpha", 4.19e6 / alpha, "").book(1643, sig(4)).explain("the book's B = 4.19e6");
  ex.answer("root_term", book_x(book_point) - 4.19e6 / alpha, "").book(284, sig(3))
      .explain("284.87, truncated in the book");
  ex.answer("x_fsdp", book_x(book_point), "chips").book(1927, sig(4))
      .stated_input("§6.3: 'X ≈ 1643 + 284', the sum of its two truncated terms (exact 1643.14 + 284.87 = 1928.01)",
                    std::floor(4.19e6 / alpha) + std::floor(book_x(book_point) - 4.19e6 / alpha));
  ex.answer("x_fsdp_exact_batch", root({{"B", kBatch}, {"F", F}, {"N", N}, {"alpha", alpha}}), "chips")
      .explain("with B = 4·2^20 = 4,194,304 tokens");
  ex.answer("x_opt", x_opt(kBatch, N, F, 2, 1), "chips")
      .explain("the comms minimum sqrt(B·M_X·N/(F·M_Y)); the book's X is the edge of the compute-bound range");

  // The planner with the book's cost model on the real pod: whole degrees, Y dividing the heads.
  auto r = pod_request(c, 1, kBatch, CostModel::book);
  r.saved_rules = {{"4D", Remat::none}};
  r.top_k = 7;
  const auto out = plan(r);
  const auto& best = out.top.front();
  ex.claim("recipe_tp", "§6.3: use about 4-way tensor parallelism", tensor_degree(best.layout), "").about(4, exact())
      .explain("the book-model planner's best layout on the 16×20×28 pod");
  ex.claim("recipe_fsdp", "§6.3: and roughly 2048-way FSDP", data_degree(best.layout), "")
      .about(2048, rel(0.1).because("'roughly … a reasonable multiple of 2': X·Y = 8960 admits no 2048"))
      .explain("2240 = 8960 / 4");
  ex.answer("pod_best_comms_over_math", best.terms.t_ici_s / best.terms.t_math_s, "")
      .explain("the best whole layout of all 8960 chips with Y dividing the heads, X = 2240, Y = 4, in the book's "
               "model: comms exceed FLOPs by 4%");
  // §6.3 asks whether some mix is compute-bound and answers with the continuous X ≈ 1927 (Y ≈ 4.65), then
  // 2048 × 4. On all 8960 chips the only whole Y in the compute-bound range is 5, which splits neither the
  // 64 heads nor F evenly; the book's own layout uses 8192 chips and is compute-bound there (below).
  // (The book model needs no head count to divide Y, so it times Y = 5 as the section's continuous X does.)
  ex.answer("pod_y5_comms_over_math", book_comms_over_math({16, 20, 28}, 1792, 5), "")
      .explain("X = 1792, Y = 5 on all 8960 chips: compute-bound in the book's model, but 5 divides neither "
               "64 heads nor F = 28,672");
  {  // The takeaway's layout on its own 8192 chips (a 16×16×32 slice): 1024 DP × 2 sequence × 4 TP = 2048 × 4.
    const double ratio = book_comms_over_math({16, 16, 32}, 2048, 4);
    ex.answer("takeaway_comms_over_math", ratio, "").explain("2048 × 4 on 8192 chips");
    ex.claim("takeaway_8192", "§6.3 takeaway: 1024-way DP × 2-way sequence × 4-way TP is not communication-bound",
             ratio, "")
        .below(1)
        .explain("on its 2048 · 4 = 8192 chips, by §5.1.4's summed model");
  }
  auto& tab = ex.table("book-model-pod", {"FSDP X", "TP Y", "comms / FLOPs", "bound"});
  for (const auto& l : out.top)
    tab.row({std::to_string(data_degree(l.layout)), std::to_string(tensor_degree(l.layout)),
             format_number(l.terms.t_ici_s / l.terms.t_math_s, 3), to_string(l.terms.bound)});

  // §5.1.4's own example through the same planner: a 4×4×4 slice, B = 48,000, F = 32,768 -> X = 16, Y = 4.
  TransformerConfig s5 = c;
  s5.name = "§5.1.4 example";
  s5.d_ff = 32768;
  s5.layers = 1;
  PlanRequest r5;
  r5.model = s5;
  r5.system = tpu_pods(v5p(), {4, 4, 4}, 1);
  r5.batch_tokens = 48000;
  r5.cost_model = CostModel::book;
  r5.saved_rules = {{"D", Remat::block}};
  const auto best5 = plan(r5).top.front();
  ex.claim("s5_example_x", "§5.1.4: on a 4×4×4 slice with B = 48,000 and F = 32,768 choose X = 16", data_degree(best5.layout), "")
      .about(16, exact());
  ex.claim("s5_example_y", "§5.1.4: and Y = 4", tensor_degree(best5.layout), "").about(4, exact());
}

namespace {
// The exact planner's answer for a model on v5p pods, with the plot of its best layouts.
struct PodPlan {
  PlanResult result;
  PlanRequest request;
};
PodPlan pod_plan(const TransformerConfig& c, int pods, double batch, int top) {
  auto r = pod_request(c, pods, batch);
  r.top_k = top;
  return {plan(r), r};
}

// The planner's trade-off of time against memory: the fastest layout within each HBM budget per chip
// (from 0.25 GB to the v5p's 96 GB), as step time against the memory per chip it uses; a budget whose best
// layout is the previous one's adds no point.
void plot_frontier(workbook::Exercise& ex, const std::string& key, const PodPlan& p) {
  auto& s = ex.series(key, "memory per chip (GB)", "step time (s)");
  std::vector<double> x, y;
  for (double cap_gb : {0.25, 0.35, 0.5, 0.7, 1.0, 1.4, 2.0, 2.8, 4.0, 5.6, 8.0, 16.0, 32.0, 96.0}) {
    auto r = p.request;
    r.system.chip.hbm_bytes = cap_gb * 1e9;
    r.top_k = 1;
    const auto out = plan(r);
    if (out.top.empty() || (!x.empty() && out.top.front().terms.memory.total / 1e9 == x.back())) continue;
    x.push_back(out.top.front().terms.memory.total / 1e9);
    y.push_back(out.top.front().terms.step_s);
  }
  s.line("fastest layout within the budget", x, y, workbook::Mode::both);
}

void layout_table(workbook::Exercise& ex, const std::string& key, const PodPlan& p, size_t rows) {
  auto& t = ex.table(key, {"FSDP", "TP", "PP", "micro", "ZeRO", "saved", "step", "memory / chip", "MFU", "bound",
                           "axes (data·tensor·pipeline)"});
  for (size_t i = 0; i < std::min(rows, p.result.top.size()); ++i) {
    const auto& [l, o] = p.result.top[i];
    t.row({std::to_string(data_degree(l)), std::to_string(tensor_degree(l)), std::to_string(pipeline_degree(l)),
           std::to_string(l.microbatches), std::to_string(l.zero) + (l.zero_scope == ZeroScope::all ? " (all pods)" : ""),
           l.saved.rule, format_quantity(o.step_s, "s"), format_quantity(o.memory.total, "B"),
           format_number(100 * o.mfu, 3) + "%", to_string(o.bound), describe_axes(p.result.top[i], p.request.system)});
  }
}
}  // namespace

EXERCISE("ex6.1", "LLaMA-3 70B on four v5p pods at the same batch") {
  ex.section("§6.4");
  const auto& c = llama70();
  const double chips = 4 * kPodChips, alpha = ici_alpha(v5p());
  ex.answer("per_chip_batch", kBatch / chips, "tokens").explain("4·2^20 tokens over 35,840 chips");
  const double pod_flops = kPodChips * v5p().bf16_flops_per_s;
  const double pod_dcn = kPodChips / 4 * v5p().dcn_bytes_per_s_per_host;  // 2240 hosts of 4 chips
  ex.answer("dcn_min_batch_per_pod", dcn_min_batch_per_pod(pod_flops, pod_dcn), "tokens")
      .explain("§5.1.6: data parallelism across the pods needs more than this per pod");
  ex.answer("per_pod_batch", kBatch / 4, "tokens").explain("far above the DCN bound: DCN is not the limit");
  ex.answer("per_chip_over_mixed_bound", kBatch / chips / mixed_min_batch_per_chip(alpha, c.d_ff, 2, 1, CommsModel::summed),
            "")
      .explain("below 1: even mixed FSDP + TP is ICI-bound inside each pod by the book's §5.1.4 model");
  // The book's model inside one pod (each pod holds B/4): the best FSDP × TP and its comms / FLOPs.
  auto rb = pod_request(c, 1, kBatch / 4, CostModel::book);
  rb.saved_rules = {{"4D", Remat::none}};
  const auto book_best = plan(rb).top.front();
  ex.answer("book_comms_over_math", book_best.terms.t_ici_s / book_best.terms.t_math_s, "")
      .explain("X = " + std::to_string(data_degree(book_best.layout)) + ", Y = " +
               std::to_string(tensor_degree(book_best.layout)) + " in each pod");
  const double total = six_active_flops_per_token(c) * kTokens;
  const double book_days =
      training_time_s(total, chips, v5p().bf16_flops_per_s, kMfu) * std::max(1.0, book_best.terms.t_ici_s / book_best.terms.t_math_s) / kDay;
  ex.answer("book_days", book_days, "days")
      .explain("40% MFU on 35,840 chips, stretched by the comms-to-FLOPs ratio since comms bound the step");
  // The exact planner over every layout of the four pods.
  const auto p = pod_plan(c, 4, kBatch, 8);
  const auto& best = p.result.top.front();
  ex.answer("plan_configs", static_cast<double>(p.result.configs_evaluated), "layouts");
  ex.answer("plan_step_s", best.terms.step_s, "s").explain(std::string("bound: ") + to_string(best.terms.bound));
  ex.answer("plan_mfu", best.terms.mfu, "").explain("6N·B over the pods' peak FLOPs times the step");
  ex.answer("plan_days", kTokens / kBatch * best.terms.step_s / kDay, "days").explain("15e12 / 4·2^20 steps of the best layout");
  layout_table(ex, "best-4-pods", p, 8);
  plot_frontier(ex, "plan-4-pods", p);
}

EXERCISE("ex6.2", "LLaMA-3.1 405B: parameters, FLOPs and eight v5p pods") {
  ex.section("§6.4");
  const auto& c = llama405();
  auto& t = ex.table("hyperparameters", {"hyperparameter", "value"});
  t.row({"n_layers (L)", format_number(c.layers)})
      .row({"d_model (D)", format_number(c.d_model)})
      .row({"d_ff (F)", format_number(c.d_ff)})
      .row({"n_heads (N)", format_number(c.q_heads)})
      .row({"n_kv_heads (K)", format_number(c.kv_heads)})
      .row({"d_qkv (H)", format_number(c.head_dim)})
      .row({"n_embeddings (V)", format_number(c.vocab)});
  const auto p = param_counts(c);
  ex.answer("total_params", p.total, "").explain("untied embeddings, 2 norms per layer and a final one");
  ex.answer("mlp_params", p.mlp, "");
  ex.answer("flops_per_token", six_active_flops_per_token(c), "FLOPs");
  const double total = six_active_flops_per_token(c) * kTokens;
  ex.answer("total_flops", total, "FLOPs").explain("15e12 tokens");
  const double chips = 8 * kPodChips, alpha = ici_alpha(v5p());
  ex.answer("per_chip_batch", kBatch405 / chips, "tokens").explain("16·2^20 tokens over 71,680 chips");
  ex.answer("mixed_min_batch", mixed_min_batch_per_chip(alpha, c.d_ff, 2, 1, CommsModel::summed), "tokens")
      .explain("2α²/F with F = 53,248: just above the per-chip batch, so the book's model is slightly ICI-bound");
  ex.answer("days_at_40_mfu", training_time_s(total, chips, v5p().bf16_flops_per_s, kMfu) / kDay, "days");
  const auto pp = pod_plan(c, 8, kBatch405, 8);
  const auto& best = pp.result.top.front();
  ex.answer("plan_configs", static_cast<double>(pp.result.configs_evaluated), "layouts");
  ex.answer("plan_step_s", best.terms.step_s, "s").explain(std::string("bound: ") + to_string(best.terms.bound));
  ex.answer("plan_mfu", best.terms.mfu, "");
  ex.answer("plan_days", kTokens / kBatch405 * best.terms.step_s / kDay, "days");
  layout_table(ex, "best-8-pods", pp, 8);
  plot_frontier(ex, "plan-8-pods", pp);
}
