// The collective matmuls of §10 on the virtual mesh: every device's block against a plain matmul written
// here from the definition (Out[i][j] = Σ_k A[i][k]·W[k][j]) on random whole numbers, over meshes of
// several shapes, both directions, with and without wraparound; link counts against hand counts; and
// the timeline against the lockstep rule.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "scaling/sim/collective_matmul.hpp"

using namespace scaling;
using namespace scaling::sim;

namespace {

using Matrix = std::vector<std::vector<double>>;

Matrix random_matrix(size_t rows, size_t cols, std::mt19937& rng) {
  std::uniform_int_distribution<int> v(-9, 9);
  Matrix m(rows, std::vector<double>(cols));
  for (auto& r : m)
    for (auto& x : r) x = v(rng);
  return m;
}

Matrix product(const Matrix& a, const Matrix& b) {
  Matrix c(a.size(), std::vector<double>(b[0].size()));
  for (size_t i = 0; i < a.size(); ++i)
    for (size_t j = 0; j < b[0].size(); ++j)
      for (size_t k = 0; k < b.size(); ++k) c[i][j] += a[i][k] * b[k][j];
  return c;
}

Block to_block(const Matrix& m) {
  Block b{static_cast<long long>(m.size()), static_cast<long long>(m[0].size()), {}};
  for (const auto& r : m) b.values.insert(b.values.end(), r.begin(), r.end());
  return b;
}

struct Case {
  CmKind kind;
  std::vector<int> shape;
  std::vector<bool> wraps;
  int x_axis, y_axis;
  int B, D, F;
  Direction direction;
  int tiles = 0;
};

// Runs one case on random data and checks every device's block against the plain product.
void check_case(const Case& c, std::mt19937& rng) {
  CmProblem p{c.kind, Topology{c.shape, c.wraps, Direction::bi}, c.x_axis, c.y_axis, double(c.B), double(c.D),
              double(c.F), c.direction, c.tiles};
  const bool rs = c.kind == CmKind::reduce_scatter;
  const Matrix lhs = random_matrix(size_t(c.B), size_t(rs ? c.F : c.D), rng);
  const Matrix w = rs ? random_matrix(size_t(c.F), size_t(c.D), rng) : random_matrix(size_t(c.D), size_t(c.F), rng);
  Matrix w_out, expected = product(lhs, w);
  if (c.kind == CmKind::ffn) {
    w_out = random_matrix(size_t(c.F), size_t(c.D), rng);
    for (auto& r : expected)
      for (auto& v : r) v = std::max(v, 0.0);
    expected = product(expected, w_out);
  }
  const CmInputs in{to_block(lhs), to_block(w), c.kind == CmKind::ffn ? to_block(w_out) : Block{}};
  const auto r = run(p, in);
  REQUIRE(r.correct.has_value());
  CHECK(*r.correct);

  const int X = c.shape[size_t(c.x_axis)], Y = c.shape[size_t(c.y_axis)];
  const int b = c.B / X;
  const int cols = c.kind == CmKind::all_reduce ? c.F : c.kind == CmKind::all_gather ? c.F / Y : c.D / Y;
  REQUIRE(r.outputs.size() == size_t(X * Y));
  for (int d = 0; d < X * Y; ++d) {
    // row-major device numbering: coordinate on axis 0 times the size of axis 1, plus axis 1
    const int a0 = d / c.shape[1], a1 = d % c.shape[1];
    const int x = c.x_axis == 0 ? a0 : a1, y = c.y_axis == 0 ? a0 : a1;
    const int col0 = c.kind == CmKind::all_reduce ? 0 : y * cols;
    const auto& o = r.outputs[size_t(d)];
    REQUIRE(o.rows == b);
    REQUIRE(o.cols == cols);
    bool same = true;
    for (int i = 0; i < b; ++i)
      for (int j = 0; j < cols; ++j) same &= o.values[size_t(i * cols + j)] == expected[size_t(x * b + i)][size_t(col0 + j)];
    CHECK_MESSAGE(same, "device " << d);
  }
}

CmProblem problem(CmKind kind, std::vector<int> shape, std::vector<bool> wraps, double B, double D, double F,
                  Direction dir) {
  return {kind, Topology{std::move(shape), std::move(wraps), Direction::bi}, 0, 1, B, D, F, dir, 0};
}

}  // namespace

TEST_CASE("collective matmuls equal the plain matmul on meshes of several shapes, uni and bi") {
  std::mt19937 rng(10);
  const std::vector<std::pair<std::vector<int>, std::vector<bool>>> meshes{
      {{2, 4}, {false, false}}, {{2, 4}, {true, true}}, {{1, 5}, {true, true}}, {{3, 3}, {false, false}},
      {{1, 2}, {false, false}}, {{2, 1}, {false, false}}, {{1, 6}, {true, true}}, {{1, 7}, {false, false}}};
  for (CmKind kind : {CmKind::all_gather, CmKind::reduce_scatter, CmKind::all_reduce, CmKind::ffn})
    for (Direction dir : {Direction::uni, Direction::bi})
      for (const auto& [shape, wraps] : meshes) {
        const int X = shape[0], Y = shape[1];
        // D/Y and F/Y of 3: odd widths, so bidirectional halves are uneven
        const Case c{kind, shape, wraps, 0, 1, 2 * X, 3 * Y, 3 * Y, dir};
        INFO(name(kind) << (dir == Direction::bi ? " bi " : " uni ") << X << "x" << Y << (wraps[1] ? " wrapped" : " open"));
        check_case(c, rng);
      }
}

TEST_CASE("collective matmuls: X and Y in either order, chunk widths of one, many tiles") {
  std::mt19937 rng(11);
  for (Direction dir : {Direction::uni, Direction::bi}) {
    check_case({CmKind::all_gather, {4, 2}, {true, false}, 1, 0, 4, 4, 8, dir}, rng);  // Y is axis 0
    check_case({CmKind::reduce_scatter, {4, 3}, {false, false}, 1, 0, 3, 8, 4, dir}, rng);
    check_case({CmKind::ffn, {4, 2}, {true, false}, 1, 0, 2, 4, 8, dir}, rng);
    check_case({CmKind::all_gather, {1, 4}, {true, true}, 0, 1, 1, 4, 4, dir}, rng);  // D/Y = 1: one half is empty
    check_case({CmKind::reduce_scatter, {1, 4}, {false, false}, 0, 1, 1, 4, 4, dir}, rng);
    check_case({CmKind::all_reduce, {2, 4}, {false, true}, 0, 1, 4, 8, 13, dir, 5}, rng);  // uneven tiles and pieces
    check_case({CmKind::all_reduce, {2, 4}, {false, false}, 0, 1, 2, 4, 3, dir, 1}, rng);  // one tile: blocking
    check_case({CmKind::all_reduce, {1, 3}, {true, true}, 0, 1, 2, 3, 2, dir, 2}, rng);    // pieces narrower than Y
  }
}

TEST_CASE("ppermute: link loads counted by hand") {
  // A ring of 4 (wrapped): a shift by −1 puts one block on each of the 4 leftward links.
  std::vector<Block> blocks(4, zeros(2, 3));
  for (int d = 0; d < 4; ++d) blocks[size_t(d)].values.assign(6, d);
  const Topology ring4{{4}, {true}, Direction::bi};
  auto t = ppermute(ring4, {{0, -1, &blocks}});
  CHECK(t.max_link_elements == 6);
  CHECK(t.total_link_elements == 24);
  CHECK(t.max_hops == 1);
  for (int d = 0; d < 4; ++d) CHECK(blocks[size_t(d)].values[0] == (d + 1) % 4);  // d received from d + 1
  // An open line of 4: the message from position 0 to 3 crosses all three rightward links.
  const Topology line4{{4}, {false}, Direction::bi};
  t = ppermute(line4, {{0, -1, &blocks}});
  CHECK(t.max_link_elements == 6);
  CHECK(t.total_link_elements == 3 * 6 + 3 * 6);
  CHECK(t.max_hops == 3);
  // Both ways at once on the line: every directed link carries one of each stream.
  std::vector<Block> left(4, zeros(1, 2)), right(4, zeros(1, 2));
  t = ppermute(line4, {{0, -1, &left}, {0, +1, &right}});
  CHECK(t.max_link_elements == 4);
  t = ppermute(ring4, {{0, -1, &left}, {0, +1, &right}});
  CHECK(t.max_link_elements == 2);
  // uni links go the long way round; on an open axis they are refused
  t = ppermute(Topology{{4}, {true}, Direction::uni}, {{0, -1, &left}});
  CHECK(t.max_hops == 3);
  CHECK_THROWS_AS(ppermute(Topology{{4}, {false}, Direction::uni}, {{0, 1, &left}}), std::invalid_argument);
  CHECK_THROWS_AS(ppermute(ring4, {{1, 1, &left}}), std::invalid_argument);
  std::vector<Block> three(3);
  CHECK_THROWS_AS(ppermute(ring4, {{0, 1, &three}}), std::invalid_argument);
}

TEST_CASE("all-gather collective matmul: rounds, link loads and the timeline") {
  // B = 4 on X = 2: b = 2; D = 8 on Y = 4: chunks of [2, 2] = 4 elements.
  for (bool wrapped : {true, false})
    for (Direction dir : {Direction::uni, Direction::bi}) {
      INFO((wrapped ? "wrapped " : "open ") << (dir == Direction::bi ? "bi" : "uni"));
      const auto p = problem(CmKind::all_gather, {2, 4}, {false, wrapped}, 4, 8, 12, dir);
      const auto r = run(p, shape_inputs(p));
      CHECK(!r.correct.has_value());
      REQUIRE(r.steps.size() == 4);
      for (size_t i = 0; i < 4; ++i) {
        CHECK(r.steps[i].rounds.size() == (i < 3 ? 1u : 0u));
        for (int d = 0; d < 8; ++d) CHECK(r.steps[i].flops[size_t(d)] == 2.0 * 2 * 2 * 3);  // [2,2]·[2,3]
      }
      const auto& round = r.steps[0].rounds[0];
      // Only a wrapped axis used both ways halves the busiest link: 2 elements instead of 4.
      CHECK(round.max_link_elements == (wrapped && dir == Direction::bi ? 2 : 4));
      CHECK(round.max_hops == (wrapped ? 1 : 3));
      // Every device's whole chunk crosses links: on a ring one hop each; on the line the end-to-end
      // message(s) cross 3 links.
      const double chunk = 4;
      const double expected_total = wrapped ? 8 * chunk
                                    : dir == Direction::uni ? 2 * (3 * chunk + 3 * chunk)
                                                            : 2 * (3 * chunk / 2 + 3 * chunk / 2 + 3 * chunk / 2 + 3 * chunk / 2);
      CHECK(round.total_link_elements == expected_total);
    }
}

TEST_CASE("timeline: lockstep steps, the blocking and the ideal times by hand") {
  // §10's example on a v5e 2x4 (Y open): B = 1024, D = 2048, F = 8192, bf16.
  const auto p = problem(CmKind::all_gather, {2, 4}, {false, false}, 1024, 2048, 8192, Direction::uni);
  const auto t = times(p, run(p, shape_inputs(p)), tpu_pods(chip("tpu-v5e"), {2, 4}, 1));
  const double peak = 1.97e14, hbm = 8.1e11, w = 4.5e10;
  const double b = 512, c = 512, f = 2048;
  auto roof = [&](double flops, double elements) { return std::max(flops / peak, 2 * elements / hbm); };
  const double first = roof(2 * b * c * f, b * c + c * f + b * f), later = roof(2 * b * c * f, b * c + c * f + 2 * b * f);
  const double comm = std::max(2 * b * c / w, 3e-6);  // one chunk on the busiest link; 3 hops end to end
  REQUIRE(t.timeline.size() == 4);
  CHECK(t.timeline[0].compute_s == doctest::Approx(first));
  CHECK(t.timeline[1].compute_s == doctest::Approx(later));
  CHECK(t.timeline[1].comm_s == doctest::Approx(comm));
  CHECK(t.timeline[3].comm_s == 0);
  CHECK(t.timeline[2].start_s == doctest::Approx(std::max(first, comm) + std::max(later, comm)));
  CHECK(t.overlapped_s == doctest::Approx(std::max(first, comm) + 2 * std::max(later, comm) + later));
  const double ideal = roof(2 * b * 2048 * f, b * 2048 + 2048 * f + b * f);
  CHECK(t.ideal_s == doctest::Approx(ideal));
  // AllGather over an open axis of 4: (n − 1)/n · V / W_uni, V = b·D·2 bytes
  CHECK(t.blocking_comm_s == doctest::Approx(0.75 * b * 2048 * 2 / w));
  CHECK(t.blocking_s == doctest::Approx(ideal + 0.75 * b * 2048 * 2 / w));
  CHECK(t.step_comm_s == doctest::Approx(comm));
  REQUIRE(t.blocking.size() == 2);
  CHECK(t.blocking[0].comm);
  CHECK(t.blocking[1].start_s == doctest::Approx(t.blocking_comm_s));
}

TEST_CASE("collective matmul rejects impossible problems") {
  auto p = problem(CmKind::all_gather, {2, 4}, {false, false}, 6, 8, 8, Direction::uni);
  CHECK_NOTHROW(validate(p));
  p.B = 5;
  CHECK_THROWS_AS(validate(p), ShapeError);
  p.B = 6, p.D = 6;
  try {
    validate(p);
    FAIL("expected a ShapeError");
  } catch (const ShapeError& e) {
    CHECK(e.dimension == "D");
    CHECK(std::string(e.what()).find("|Y| = 4") != std::string::npos);
  }
  p.D = 8, p.F = 2.5;
  CHECK_THROWS_AS(validate(p), ShapeError);
  p.F = 8;
  p.mesh = Topology{{8}, {false}, Direction::bi};
  CHECK_THROWS_AS(validate(p), std::invalid_argument);
  p.mesh = Topology{{2, 4}, {false, false}, Direction::uni};
  CHECK_THROWS_AS(validate(p), std::invalid_argument);
  p.mesh = Topology{{2, 4}, {false, false}, Direction::bi};
  p.kind = CmKind::all_reduce, p.F = 3, p.tiles = 4;
  CHECK_THROWS_AS(validate(p), std::invalid_argument);
  // Real numbers are capped before anything is allocated.
  auto big = problem(CmKind::all_gather, {2, 4}, {false, false}, 1024, 2048, 8192, Direction::uni);
  CHECK_THROWS_AS(example_inputs(big), std::invalid_argument);
  CHECK_NOTHROW(run(big, shape_inputs(big)));
  CHECK(parse_cm_kind("ffn") == CmKind::ffn);
  CHECK_THROWS_AS(parse_cm_kind("all-to-all"), std::invalid_argument);
  CHECK_THROWS_AS(parse_direction("both"), std::invalid_argument);
}

TEST_CASE("collective matmul timing: the hardware is the System the mesh is cut from") {
  const auto p = problem(CmKind::all_gather, {2, 4}, {false, false}, 1024, 2048, 8192, Direction::uni);
  const auto r = run(p, shape_inputs(p));
  // A System whose Y axis is not the mesh's is refused, not timed with some other axis's figures.
  CHECK_THROWS_AS(times(p, r, tpu_pods(chip("tpu-v5e"), {2, 8}, 1)), std::invalid_argument);
  CHECK_THROWS_AS(times(p, r, tpu_pods(chip("tpu-v5e"), {2, 4, 1}, 1)), std::invalid_argument);
  // Halving the Y axis's figure doubles one chunk's ppermute: 512·512 bf16 over a 2.25e10 B/s link.
  auto slow = tpu_pods(chip("tpu-v5e"), {2, 4}, 1);
  slow.fast[1].bytes_per_s = 4.5e10;
  CHECK(times(p, r, slow).step_comm_s == doctest::Approx(512.0 * 512 * 2 / 2.25e10));
  // The execution's choices: int32 elements at a measured rate.
  CmExecution e;
  e.element_bytes = 4;
  e.measured_flops_per_s = 1e13;
  const auto t = times(p, r, tpu_pods(chip("tpu-v5e"), {2, 4}, 1), e);
  CHECK(t.step_comm_s == doctest::Approx(512.0 * 512 * 4 / 4.5e10));
  CHECK(t.ideal_s == doctest::Approx(std::max(2.0 * 512 * 2048 * 2048 / 1e13,
                                              4.0 * (512.0 * 2048 + 2048.0 * 2048 + 512.0 * 2048) / 8.1e11)));
}
