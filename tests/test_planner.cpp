// The parallelism planner against a brute-force enumeration written here from the cost model that
// planner.hpp documents: every way to cut each axis into data × tensor × pipeline factors, every slow-axis
// split, ZeRO stage, rule and microbatch count, each layout costed directly from the model's raw sizes
// (parameter counts worked out by hand, no library call), and the fastest that fits picked by a plain
// scan. Small machines only, so the scan is cheap. Also: the book's cost model reproduces §5.1.4's
// X = 16, Y = 4 example, and bad requests are rejected.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "scaling/cost/planner.hpp"
#include "scaling/hardware/chip.hpp"

using namespace scaling;

namespace {

// A small gated Transformer: D, F, L, N, K, H, V.
TransformerConfig toy() {
  TransformerConfig c;
  c.name = "toy";
  c.d_model = 1024, c.d_ff = 4096, c.layers = 6, c.q_heads = 8, c.kv_heads = 2, c.head_dim = 128, c.vocab = 32000;
  return c;
}

struct Machine {
  std::vector<int> axes;
  std::vector<double> bw;  // bidirectional per chip per axis
  int groups;
  double slow_bw, C, hbm, hbm_bw;
};

struct Best {
  double step = std::numeric_limits<double>::infinity(), bytes = 0;
  unsigned long long evaluated = 0, fit = 0;
};

std::vector<int> divisors(int n) {
  std::vector<int> d;
  for (int i = 1; i <= n; ++i)
    if (n % i == 0) d.push_back(i);
  return d;
}

// The documented exact model, evaluated layout by layout.
Best brute_force(const Machine& mc, double B, double T, double max_m) {
  const double D = 1024, F = 4096, L = 6, N = 8, K = 2, H = 128, V = 32000;
  const double layer = 2 * D * N * H + 2 * D * K * H + 3 * D * F + 2 * D;  // Q, O; K, V; the MLP; two norms
  const double other = 2 * V * D + D;                                        // untied vocab matrices, final norm
  const double six_n = 6 * (L * layer + 2 * V * D + D);                      // 6 × every parameter (dense)
  const double attention_fwd = 4 * N * H * T * L;                            // QKᵀ and PV per token
  const double layers_fwd = 2 * L * (layer - 2 * D) + attention_fwd;         // the layers' forward pass (norms: no FLOPs)
  struct Rule {
    double elements, flops, reruns;
  };
  // Input only (the forward rerun); the outputs of the big matmuls — O and W_out (D each), the two MLP
  // up-projections (F each), Q (N·H), K and V (K·H each) — with attention rerun; everything (20 D).
  const double big_matmuls = 2 * D + 2 * F + N * H + 2 * K * H;
  const std::vector<Rule> rules{{1 * D, six_n + layers_fwd, 1}, {big_matmuls, six_n + attention_fwd, 0}, {20 * D, six_n, 0}};
  Best best;
  const int A = static_cast<int>(mc.axes.size());
  // Every (d, t, p) per axis: an odometer over the axes' factor pairs.
  std::vector<std::vector<std::array<int, 3>>> options(static_cast<size_t>(A));
  for (int i = 0; i < A; ++i)
    for (int d : divisors(mc.axes[static_cast<size_t>(i)]))
      for (int t : divisors(mc.axes[static_cast<size_t>(i)] / d))
        options[static_cast<size_t>(i)].push_back({d, t, mc.axes[static_cast<size_t>(i)] / d / t});
  std::vector<size_t> pick(static_cast<size_t>(A), 0);
  while (true) {
    for (int ds : divisors(mc.groups)) {
      const int ps = mc.groups / ds;
      double Xf = 1, Y = 1, Sf = 1, wd = 0, wt = 0, wp = 0;
      for (int i = 0; i < A; ++i) {
        const auto& o = options[static_cast<size_t>(i)][pick[static_cast<size_t>(i)]];
        const int used = (o[0] > 1) + (o[1] > 1) + (o[2] > 1);
        const double w = used ? mc.bw[static_cast<size_t>(i)] / used : 0;
        Xf *= o[0], Y *= o[1], Sf *= o[2];
        if (o[0] > 1) wd += w;
        if (o[1] > 1) wt += w;
        if (o[2] > 1) wp = wp == 0 ? w / 2 : std::min(wp, w / 2);
      }
      const double X = Xf * ds, S = Sf * ps, chips = X * Y * S;
      if (std::fmod(N, Y) != 0 || S > L || X > B) continue;
      const double lps = std::ceil(L / S), stage = lps * layer + other;
      for (int zero = 0; zero <= 3; ++zero)
        for (int all = 0; all < 2; ++all) {
          if (all && (zero == 0 || ds == 1)) continue;  // the same layout as all = 0
          const double Z = all ? X : Xf;                // ZeRO's group
          for (const auto& rule : rules)
          for (double m = 1; m <= max_m && X * m <= B; m *= 2) {
            ++best.evaluated;
            const double b = B / (X * m);
            const double w_bytes = 2 * stage / Y, g_bytes = 2 * stage / Y, o_bytes = 8 * stage / Y;
            const double bytes = w_bytes / (zero == 3 ? Z : 1) + g_bytes / (zero >= 2 ? Z : 1) +
                                 o_bytes / (zero >= 1 ? Z : 1) +
                                 rule.elements * 2 * lps * b / Y * (S > 1 ? std::min(m, S) : 1);
            if (bytes > mc.hbm) continue;
            ++best.fit;
            const double math = rule.flops * B * (S * lps / L) / (chips * mc.C);
            const double hbm = m * (3 + rule.reruns) * w_bytes / mc.hbm_bw;
            const double busy = std::max(math, hbm) * (1 + (S - 1) / m);  // f/(1 − f) = (S − 1)/m
            double data = 0;
            if (Xf > 1) {
              const double one = (Xf - 1) / Xf * w_bytes / wd;  // one AllGather or ReduceScatter of the stage
              data = zero == 3 ? 3 * m * one : zero == 2 ? (m + 1) * one : 2 * one;
            }
            // Two TP blocks per layer, each an AllGather and a ReduceScatter of [B/X, D] forward and backward,
            // the forward pair again when the forward is rerun.
            const double tensor = Y > 1 ? lps * (8 + 4 * rule.reruns) * (Y - 1) / Y * 2 * (B / X) * D / wt : 0;
            const double pipe = 2 * 2 * (B / X) * D / Y;
            const double ici = std::max({data, tensor, Sf > 1 ? pipe / wp : 0.0});
            double dcn = ps > 1 ? pipe / mc.slow_bw : 0;
            if (ds > 1) {
              const double one = (ds - 1.0) / ds * (w_bytes / Xf) / mc.slow_bw;  // one collective of a chip's share
              dcn += !all ? 2 * one : zero == 3 ? 3 * m * one : zero == 2 ? (m + 1) * one : 2 * one;
            }
            const double step = std::max({busy, ici, dcn});
            if (step < best.step || (step == best.step && bytes < best.bytes)) best.step = step, best.bytes = bytes;
          }
        }
    }
    int i = 0;
    for (; i < A; ++i) {
      if (++pick[static_cast<size_t>(i)] < options[static_cast<size_t>(i)].size()) break;
      pick[static_cast<size_t>(i)] = 0;
    }
    if (i == A) break;
  }
  return best;
}

PlanRequest request(const Machine& mc, double B, double T, int max_m) {
  PlanRequest r;
  r.model = toy();
  r.hw.name = "test";
  r.hw.flops_per_s = mc.C;
  r.hw.hbm_bytes = mc.hbm;
  r.hw.hbm_bytes_per_s = mc.hbm_bw;
  r.hw.fast_axes = mc.axes;
  r.hw.fast_bytes_per_s = mc.bw;
  r.hw.slow_groups = mc.groups;
  r.hw.slow_bytes_per_s = mc.slow_bw;
  r.batch_tokens = B;
  r.seq_len = T;
  r.max_microbatches = max_m;
  r.top_k = 5;
  return r;
}

}  // namespace

TEST_CASE("planner: the fastest layout equals a brute-force enumeration on small machines") {
  const std::vector<Machine> machines{
      {{2, 4}, {1.8e11, 1.8e11}, 1, 0, 4.59e14, 2e9, 2.8e12},                  // a 2x4 slice, little HBM
      {{4, 4}, {1.8e11, 9e10}, 2, 6.25e9, 4.59e14, 1.5e9, 2.8e12},              // two 4x4 slices over DCN
      {{8}, {4.5e11}, 3, 5e10, 9.89e14, 8e9, 3.35e12},                          // three nodes of 8 GPUs
      {{2, 2, 4}, {1.8e11, 1.8e11, 1.8e11}, 2, 6.25e9, 4.59e14, 1e9, 2.8e12},  // memory-tight, two pods
  };
  for (const double B : {8192.0, 131072.0}) {
    for (size_t i = 0; i < machines.size(); ++i) {
      CAPTURE(i);
      CAPTURE(B);
      const auto& mc = machines[i];
      const Best want = brute_force(mc, B, 2048, 32);
      const auto got = plan(request(mc, B, 2048, 32));
      CHECK(got.configs_evaluated == want.evaluated);
      CHECK(got.configs_fit == want.fit);
      REQUIRE(want.fit > 0);
      REQUIRE(!got.top.empty());
      CHECK(got.top[0].step_s == doctest::Approx(want.step).epsilon(1e-12));
      CHECK(got.top[0].bytes_per_chip == doctest::Approx(want.bytes).epsilon(1e-12));
      for (size_t k = 1; k < got.top.size(); ++k) CHECK(got.top[k - 1].step_s <= got.top[k].step_s);
      for (const auto& l : got.top) CHECK(l.bytes_per_chip <= mc.hbm);
    }
  }
}

TEST_CASE("planner: evaluate() gives the terms of the layout the search reports") {
  const Machine mc{{4, 4}, {1.8e11, 1.8e11}, 2, 6.25e9, 4.59e14, 4e9, 2.8e12};
  const auto r = request(mc, 65536, 2048, 16);
  const auto got = plan(r);
  REQUIRE(!got.top.empty());
  for (const auto& l : got.top) {
    const auto again =
        evaluate(r, l.axes, {l.fsdp_slow, 1, l.pipeline_slow}, l.microbatches, l.saved, l.zero, l.zero_all);
    CHECK(again.step_s == l.step_s);
    CHECK(again.bytes_per_chip == l.bytes_per_chip);
    CHECK(again.bound == l.bound);
    CHECK(l.fsdp * l.tp * l.pipeline == 32);
  }
}

TEST_CASE("planner, book model: §5.1.4's 4x4x4 example picks X = 16, Y = 4") {
  // N = 64 chips, B = 48,000 tokens, F = 32,768; D and the heads only have to admit Y = 4.
  TransformerConfig c;
  c.name = "§5.1.4";
  c.d_model = 8192, c.d_ff = 32768, c.layers = 1, c.q_heads = 64, c.kv_heads = 64, c.head_dim = 128, c.vocab = 1;
  PlanRequest r;
  r.model = c;
  r.hw = tpu_pods(chip("tpu-v5p"), {4, 4, 4}, 1);
  r.hw.hbm_bytes = 1e15;  // memory is not the question here
  r.batch_tokens = 48000;
  r.cost_model = CostModel::book;
  r.saved_rules = {{"D", Remat::block}};
  const auto out = plan(r);
  REQUIRE(!out.top.empty());
  CHECK(out.top[0].fsdp == 16);
  CHECK(out.top[0].tp == 4);
  // By hand: F·X/(N·M_X) + B/(X·M_Y) with M_X = 2, M_Y = 1 is 4096 + 3000 for X = 16, the least of the
  // divisor pairs; in seconds per layer forward that is (4·D/W)·7096, summed over forward and backward (×3).
  const double W = 1.8e11;
  CHECK(out.top[0].t_ici_s == doctest::Approx(3 * 4 * 8192 / W * (32768.0 * 16 / 128 + 48000.0 / 16)).epsilon(1e-9));
  CHECK(out.configs_evaluated == 7);  // Y = 1, 2, …, 64
}

TEST_CASE("planner: bad requests are rejected with the value named") {
  const Machine mc{{2, 4}, {1.8e11, 1.8e11}, 1, 0, 4.59e14, 2e9, 2.8e12};
  auto r = request(mc, 8192, 2048, 8);
  r.batch_tokens = 0;
  CHECK_THROWS_WITH_AS(plan(r), doctest::Contains("batch"), std::invalid_argument);
  r = request(mc, 8192, 2048, 8);
  r.zero_stages = {4};
  CHECK_THROWS_WITH_AS(plan(r), doctest::Contains("ZeRO stage 4"), std::invalid_argument);
  r = request(mc, 8192, 2048, 8);
  r.saved_rules.clear();
  CHECK_THROWS_AS(plan(r), std::invalid_argument);
  r = request(mc, 8192, 2048, 8);
  r.top_k = 0;
  CHECK_THROWS_AS(plan(r), std::invalid_argument);
  const Machine two{{2, 4}, {1.8e11, 1.8e11}, 2, 6.25e9, 4.59e14, 2e9, 2.8e12};
  r = request(two, 8192, 2048, 8);
  r.cost_model = CostModel::book;
  CHECK_THROWS_WITH_AS(plan(r), doctest::Contains("one slice"), std::invalid_argument);
  r = request(mc, 8192, 2048, 8);
  CHECK_THROWS_AS(evaluate(r, {{2, 2, 1}, {1, 4, 1}}, {1, 1, 1}, 1, 0, 3), std::invalid_argument);  // 2·2·1 ≠ 2
}
