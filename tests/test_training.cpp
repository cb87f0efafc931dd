// The training library (cost/training.hpp, notation/saved_rule.hpp) on hand-worked cases: a tiny model
// whose parameters are counted by hand, the ZeRO paper's figure, the §5.2 table's terms, limits and
// symmetries of the bounds, and every rejection.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "scaling/cost/training.hpp"
#include "scaling/hardware/chip.hpp"
#include "scaling/model/presets.hpp"
#include "scaling/notation/saved_rule.hpp"

using namespace scaling;

namespace {
// D = 4, F = 8, L = 2, N = K = 2, H = 2, V = 10, gated MLP, untied, two norms per layer and a final one.
// Per layer 3·4·8 + 4·4·2·2 + 2·4 = 96 + 64 + 8 = 168; embedding and unembedding 40 each; final norm 4:
// 2·168 + 80 + 4 = 420 parameters.
TransformerConfig tiny() {
  TransformerConfig c;
  c.name = "tiny";
  c.d_model = 4, c.d_ff = 8, c.layers = 2, c.q_heads = 2, c.kv_heads = 2, c.head_dim = 2, c.vocab = 10;
  return c;
}
std::string message_of(auto&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("saved-activations rules parse as the book writes them") {
  const auto r = parse_saved_rule("2D+2F+NH+2KH");
  CHECK(r.d == 2);
  CHECK(r.f == 2);
  CHECK(r.nh == 1);
  CHECK(r.kh == 2);
  CHECK(parse_saved_rule("4D").d == 4);
  CHECK(parse_saved_rule(" D + 2F ").f == 2);
  CHECK(parse_saved_rule("0.5D+D").d == 1.5);  // repeated terms add
  CHECK(to_string(parse_saved_rule("D+2F")) == "D+2F");
  CHECK(to_string(parse_saved_rule("KH+2D")) == "2D+KH");
}

TEST_CASE("a rule that does not parse is a one-line error naming it") {
  for (const char* bad : {"4Q", "D+", "-D", "", "+D", "2", "D++F", "DF", "0D", "2..5D", "D-F", "nh"}) {
    const auto m = message_of([&] { parse_saved_rule(bad); });
    CAPTURE(bad);
    CHECK(m.find(fmt::format("'{}': ", bad)) == 0);
    CHECK(m.find("(a saved-activations rule: ") != std::string::npos);
    CHECK(m.find('\n') == std::string::npos);
  }
}

TEST_CASE("training memory of a model counted by hand") {
  const auto c = tiny();
  REQUIRE(param_counts(c).total == 420);
  TrainingSetup s;
  s.saved = parse_saved_rule("D+2F");
  const auto m = training_memory(c, 10, s);
  CHECK(m.params == 840);
  CHECK(m.grads == 840);
  CHECK(m.optimizer == 2 * 420 * 4);
  CHECK(m.master == 0);
  CHECK(m.activations == 2 * 2 * 10 * (4 + 2 * 8));  // bytes · layers · tokens · (D + 2F)
  CHECK(m.total == 840 + 840 + 3360 + 800);

  s.optimizer = Optimizer::sgd, s.grads = std::nullopt, s.fp32_master = true;
  s.saved = parse_saved_rule("NH+KH");
  const auto m2 = training_memory(c, 10, s);
  CHECK(m2.optimizer == 0);
  CHECK(m2.grads == 0);
  CHECK(m2.master == 420 * 4);
  CHECK(m2.activations == 2 * 2 * 10 * (4 + 4));
}

TEST_CASE("chapter 4's form of training_memory keeps the activations its rule names") {
  const auto c = tiny();  // D = 4, bf16 activations, 2 layers
  for (double d : {1.0, 7.0, 20.0}) {
    SavedRule rule;
    rule.d = d;
    CHECK(training_memory(c, 100, rule).activations == 2 * 2 * 100 * 4 * d);
  }
}

TEST_CASE("MoE: memory from every expert, FLOPs from the active ones") {
  const auto& c = model("mixtral-8x7b");
  const auto p = param_counts(c);
  REQUIRE(p.total > 3 * p.active);
  CHECK(training_memory(c, 1, TrainingSetup{}).params == 2 * p.total);
  CHECK(six_active_flops_per_token(c) == 6 * p.active);
}

TEST_CASE("ZeRO stages reproduce the ZeRO paper's figure (Ψ = 7.5B, N_d = 64, K = 12)") {
  const double psi = 7.5e9;
  TrainingMemory whole;
  whole.params = 2 * psi, whole.grads = 2 * psi, whole.optimizer = 8 * psi, whole.master = 4 * psi;
  CHECK(zero_memory_per_device(whole, 64, 0).total == doctest::Approx(120e9));
  CHECK(zero_memory_per_device(whole, 64, 1).total == doctest::Approx(4 * psi + 12 * psi / 64));     // 31.4 GB
  CHECK(zero_memory_per_device(whole, 64, 2).total == doctest::Approx(2 * psi + 14 * psi / 64));     // 16.6 GB
  CHECK(zero_memory_per_device(whole, 64, 3).total == doctest::Approx(16 * psi / 64));               // 1.9 GB
  CHECK_THROWS_AS(zero_memory_per_device(whole, 64, 4), std::invalid_argument);
  CHECK_THROWS_AS(zero_memory_per_device(whole, 0.5, 1), std::invalid_argument);
}

TEST_CASE("per-layer compute and comms match the §5.2 table's terms") {
  const double B = 1e6, D = 8192, F = 32768, X = 16, Y = 4;
  const MlpLayer l{B, D, F};
  const auto dp = layer_cost(l, Strategy::dp, X, 1);
  CHECK(dp.flops_fwd == 4 * B * D * F / X);
  CHECK(dp.flops_bwd == 8 * B * D * F / X);
  CHECK(dp.comm_fwd() == 0);
  CHECK(dp.comm_bwd() == 8 * D * F);
  const auto fsdp = layer_cost(l, Strategy::fsdp, X, 1);
  CHECK(fsdp.comm_fwd() == 4 * D * F);
  CHECK(fsdp.comm_bwd() == 8 * D * F);
  const auto tp = layer_cost(l, Strategy::tp, 1, Y);
  CHECK(tp.flops_fwd == 4 * B * D * F / Y);
  CHECK(tp.comm_fwd() == 4 * B * D);
  CHECK(tp.comm_bwd() == 4 * B * D);
  const auto mixed = layer_cost(l, Strategy::fsdp_tp, X, Y);
  CHECK(mixed.flops_bwd == 8 * B * D * F / (X * Y));
  CHECK(mixed.comm_x_fwd == 4 * D * F / Y);
  CHECK(mixed.comm_y_fwd == 4 * B * D / X);
  CHECK(mixed.comm_x_bwd == 8 * D * F / Y);
  CHECK(mixed.comm_y_bwd == 4 * B * D / X);  // the table prints 8BD/X: see ch5.summary-table
  CHECK(mixed.comm_x_fwd_exact == mixed.comm_x_fwd * 15 / 16);
  CHECK(mixed.comm_y_bwd_exact == mixed.comm_y_bwd * 3 / 4);
  // Limits: FSDP+TP with Y = 1 is FSDP (its Y-axis comms vanish exactly), with X = 1 it is TP.
  const auto y1 = layer_cost(l, Strategy::fsdp_tp, X, 1);
  CHECK(y1.comm_x_fwd == fsdp.comm_x_fwd);
  CHECK(y1.comm_y_fwd_exact == 0);
  const auto x1 = layer_cost(l, Strategy::fsdp_tp, 1, Y);
  CHECK(x1.comm_y_bwd == tp.comm_y_bwd);
  CHECK(x1.comm_x_bwd_exact == 0);
  CHECK_THROWS_AS(layer_cost(MlpLayer{0, D, F}, Strategy::dp, 2, 1), std::invalid_argument);
  CHECK_THROWS_AS(layer_cost(l, Strategy::fsdp, 2.5, 1), std::invalid_argument);
}

TEST_CASE("layer time: the two axes summed or concurrent") {
  const MlpLayer l{1e6, 8192, 32768};
  const auto c = layer_cost(l, Strategy::fsdp_tp, 16, 4);
  const double C = 4.59e14, W = 1.8e11;
  const auto sum = layer_time(c, Pass::forward, C, W, 2, 1, CommsModel::summed);
  const auto con = layer_time(c, Pass::forward, C, W, 2, 1, CommsModel::concurrent);
  CHECK(sum.t_x_s == doctest::Approx(4 * 8192.0 * 32768 / 4 / (2 * W)));
  CHECK(sum.t_y_s == doctest::Approx(4 * 1e6 * 8192 / 16 / W));
  CHECK(sum.t_comms_s == doctest::Approx(sum.t_x_s + sum.t_y_s));
  CHECK(con.t_comms_s == doctest::Approx(std::max(sum.t_x_s, sum.t_y_s)));
  CHECK(sum.t_math_s == doctest::Approx(4 * 1e6 * 8192.0 * 32768 / 64 / C));
  const auto both = layer_time(c, Pass::both, C, W, 2, 1);
  CHECK(both.t_math_s == doctest::Approx(3 * con.t_math_s));
}

TEST_CASE("bounds on a v5p") {
  const double alpha = ici_alpha(chip("tpu-v5p"));
  CHECK(alpha == doctest::Approx(2550));
  CHECK(dp_min_batch_per_chip(alpha, 3) == doctest::Approx(850));
  CHECK(tp_max_degree(alpha, 32768, 1) == doctest::Approx(32768 / 2550.0));
  CHECK(mixed_min_batch_per_chip(alpha, 32768, 2, 1, CommsModel::summed) == doctest::Approx(2 * 2550.0 * 2550 / 32768));
  CHECK(mixed_min_batch_per_chip(alpha, 32768, 2, 1, CommsModel::concurrent) ==
        doctest::Approx(2550.0 * 2550 / (2 * 32768)));
  // X_opt balances the two axes: at X_opt their times are equal.
  const double B = 48000, N = 64, F = 32768;
  const double X = x_opt(B, N, F, 2, 1);
  CHECK(F * X / (N * 2) == doctest::Approx(B / (X * 1)));
  CHECK(dcn_min_batch_per_pod(3.8e18, 5e13) == doctest::Approx(76000));
  CHECK_THROWS_AS(ici_alpha(chip("h100")), std::invalid_argument);
  CHECK_THROWS_AS(x_opt(0, N, F, 1, 1), std::invalid_argument);
}

TEST_CASE("pipeline: stage FLOPs, one-hop sends and the bubble") {
  const MlpLayer l{32, 128, 512};
  const auto p = pipeline_cost(l, 8, 4, 4);
  CHECK(p.flops_per_stage_fwd == 4 * 32 * 128 * 512 * 2);
  CHECK(p.bytes_sent_per_stage_fwd == 2 * 32 * 128);
  CHECK(p.bubble_fraction == doctest::Approx(3.0 / 7));
  CHECK(pipeline_cost(l, 8, 1, 1).bubble_fraction == 0);
  CHECK_THROWS_AS(pipeline_cost(l, 8, 9, 1), std::invalid_argument);
}

TEST_CASE("training time at an MFU, and its rejections") {
  // §5.1.2: 6.3e24 FLOPs on 18,823 v5p chips at 50% MFU is about 17 days.
  CHECK(training_time_s(6.3e24, 18823, 4.59e14, 0.5) / 86400 == doctest::Approx(16.88).epsilon(1e-3));
  for (double bad : {0.0, -0.1, 1.01, std::nan("")}) CHECK_THROWS_AS(training_time_s(1, 1, 1, bad), std::invalid_argument);
  CHECK(parse_optimizer("sgd") == Optimizer::sgd);
  CHECK_THROWS_AS(parse_optimizer("lion"), std::invalid_argument);
}

TEST_CASE("split_axes: which axes the TP and FSDP groups span") {
  const std::vector<int> cube{16, 16, 16};
  auto check = [&](double Y, double m_x, double m_y) {
    const auto a = split_axes(cube, Y);
    CAPTURE(Y);
    CHECK(a.m_x == m_x);
    CHECK(a.m_y == m_y);
  };
  check(1, 3, 0);      // FSDP alone
  check(4, 3, 1);      // a 4-chip sub-ring of the first axis; FSDP keeps its other 4 and both other axes
  check(16, 2, 1);     // the whole first axis
  check(64, 2, 2);     // the first axis and a quarter of the second
  check(4096, 0, 3);   // TP alone
  CHECK(split_axes({8, 4}, 2).m_x == 2);
  const auto m = [&] {
    try {
      split_axes({12, 4, 4}, 8);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  }();
  CHECK(m.find("12x4x4") != std::string::npos);
}

TEST_CASE("saved rules: printing and parsing round-trip, and random text parses or is rejected, nothing else") {
  std::mt19937 rng(5);
  const char* letters[] = {"D", "F", "NH", "KH"};
  for (int i = 0; i < 2000; ++i) {
    std::string text;
    const int terms = 1 + static_cast<int>(rng() % 4);
    for (int t = 0; t < terms; ++t) {
      if (t) text += "+";
      if (rng() % 2) text += std::to_string(1 + rng() % 9);
      text += letters[rng() % 4];
    }
    const auto r = parse_saved_rule(text);
    const auto again = parse_saved_rule(to_string(r));
    CAPTURE(text);
    CHECK(again.d == r.d);
    CHECK(again.f == r.f);
    CHECK(again.nh == r.nh);
    CHECK(again.kh == r.kh);
  }
  const std::string alphabet = "DFNHK+-.0129 Qx";
  for (int i = 0; i < 20000; ++i) {
    std::string text;
    for (size_t n = rng() % 8; n > 0; --n) text += alphabet[rng() % alphabet.size()];
    try {
      const auto r = parse_saved_rule(text);
      CHECK(r.d + r.f + r.nh + r.kh > 0);
    } catch (const std::invalid_argument& e) {
      CHECK(std::string(e.what()).find('\n') == std::string::npos);
    }
  }
}

TEST_CASE("details the other tests leave open: names, one-pass times, messages") {
  CHECK(std::string(to_string(Optimizer::adam)) == "adam");
  CHECK(std::string(to_string(Optimizer::sgd)) == "sgd");
  const auto c = layer_cost(MlpLayer{1e6, 8192, 32768}, Strategy::fsdp_tp, 16, 4);
  const auto bwd = layer_time(c, Pass::backward, 4.59e14, 1.8e11, 2, 1);
  CHECK(bwd.t_y_s == c.comm_y_bwd / 1.8e11);
  CHECK(bwd.t_x_s == c.comm_x_bwd / (1.8e11 * 2));
  const auto fwd_exact = layer_time(c, Pass::forward, 4.59e14, 1.8e11, 2, 1, CommsModel::concurrent, true);
  CHECK(fwd_exact.t_y_s == c.comm_y_fwd_exact / 1.8e11);
  CHECK(pipeline_cost(MlpLayer{32, 128, 512}, 8, 1, 1).bytes_sent_per_stage_fwd == 0);
  CHECK(message_of([] { parse_saved_rule("4Q"); }).find("unknown term at 'Q'") != std::string::npos);
  CHECK(message_of([] { parse_saved_rule("D+1..2F"); }).find("'1..2' is not a number") != std::string::npos);
}
