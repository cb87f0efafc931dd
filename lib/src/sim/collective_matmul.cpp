#include "scaling/sim/collective_matmul.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "scaling/base/format.hpp"
#include "scaling/base/validate.hpp"
#include "scaling/cost/roofline.hpp"

namespace scaling::sim {

ShapeError::ShapeError(std::string dim, const std::string& message)
    : std::invalid_argument(message), dimension(std::move(dim)) {}

CmKind parse_cm_kind(std::string_view text) {
  for (CmKind k : {CmKind::all_gather, CmKind::reduce_scatter, CmKind::all_reduce, CmKind::ffn})
    if (text == name(k)) return k;
  check::not_one_of(text, {"all-gather", "reduce-scatter", "all-reduce", "ffn"});
}

std::string_view name(CmKind k) {
  switch (k) {
    case CmKind::all_gather: return name(Collective::all_gather);  // named as the collective it fuses
    case CmKind::reduce_scatter: return name(Collective::reduce_scatter);
    case CmKind::all_reduce: return name(Collective::all_reduce);
    case CmKind::ffn: return "ffn";
  }
  return "?";
}

int x_size(const CmProblem& p) { return p.mesh.shape.at(static_cast<size_t>(p.x_axis)); }
int y_size(const CmProblem& p) { return p.mesh.shape.at(static_cast<size_t>(p.y_axis)); }
int tiles(const CmProblem& p) { return p.tiles == 0 ? y_size(p) : p.tiles; }

namespace {

void check_dimension(const std::string& dim, double v) {
  if (!(v >= 1) || v != std::floor(v) || v > kMaxDimension)
    throw ShapeError(dim, dim + " = " + format_number(v) + ": must be a whole number from 1 to 2^40");
}

// `dim` of size v is split into `shards` equal pieces (the sharding `what`).
void check_divides(const std::string& dim, double v, const std::string& axis, int shards, const std::string& what) {
  if (std::fmod(v, shards) != 0)
    throw ShapeError(dim, dim + " = " + format_number(v) + " is not divisible by |" + axis + "| = " +
                              std::to_string(shards) + " (" + what + ")");
}

}  // namespace

void validate(const CmProblem& p) {
  const auto& m = p.mesh;
  if (m.shape.size() != 2 || m.wraps.size() != 2)
    throw std::invalid_argument("a collective matmul runs on a mesh of two axes, X and Y");
  if (p.x_axis == p.y_axis || p.x_axis < 0 || p.x_axis > 1 || p.y_axis < 0 || p.y_axis > 1)
    throw std::invalid_argument("X and Y must be the two different axes of the mesh");
  device_count(m);  // sizes at least 1
  if (m.links == Direction::uni && !m.wraps[static_cast<size_t>(p.y_axis)] && y_size(p) > 1)
    throw std::invalid_argument("unidirectional links need a wrapped Y axis (a ring)");
  check_dimension("B", p.B);
  check_dimension("D", p.D);
  check_dimension("F", p.F);
  // The dimensions each problem's shardings split, and over which axis.
  struct Split {
    const char* dim;
    bool over_x;
    const char* sharding;
  };
  std::vector<Split> splits;
  switch (p.kind) {
    case CmKind::all_gather: splits = {{"B", true, "A[B_X, D_Y]"}, {"D", false, "A[B_X, D_Y]"}, {"F", false, "W[D, F_Y]"}}; break;
    case CmKind::reduce_scatter:
      splits = {{"B", true, "Tmp[B_X, F_Y]"}, {"F", false, "Tmp[B_X, F_Y]"}, {"D", false, "Out[B_X, D_Y]"}};
      break;
    case CmKind::all_reduce: splits = {{"B", true, "A[B_X, D_Y]"}, {"D", false, "A[B_X, D_Y]"}}; break;
    case CmKind::ffn: splits = {{"B", true, "In[B_X, D_Y]"}, {"D", false, "In[B_X, D_Y]"}, {"F", false, "W_in[D, F_Y]"}}; break;
  }
  for (const auto& s : splits) {
    const std::string dim = s.dim;
    check_divides(dim, dim == "B" ? p.B : dim == "D" ? p.D : p.F, s.over_x ? "X" : "Y", s.over_x ? x_size(p) : y_size(p),
                  s.sharding);
  }
  if (p.tiles < 0 || p.tiles > kMaxTiles)
    throw std::invalid_argument("tiles = " + std::to_string(p.tiles) + ": must be from 1 to " +
                                std::to_string(kMaxTiles) + " (0: |Y|)");
  if (p.kind == CmKind::all_reduce && tiles(p) > p.F)
    throw ShapeError("F", "F = " + format_number(p.F) + ": fewer columns of Out than the " + std::to_string(tiles(p)) +
                              " tiles of the all-reduce collective matmul");
}

double multiply_adds(const CmProblem& p) { return (p.kind == CmKind::ffn ? 2 : 1) * p.B * p.D * p.F; }

double held_values(const CmProblem& p) {
  const double n = device_count(p.mesh), X = x_size(p), Y = y_size(p);
  const double b = p.B / X, B = p.B, D = p.D, F = p.F;
  switch (p.kind) {
    case CmKind::all_gather: return n * (b * D / Y + D * F / Y + b * F / Y) + B * D + D * F + B * F;
    case CmKind::reduce_scatter: return n * (b * F / Y + F / Y * D + b * D / Y) + B * F + F * D + B * D;
    case CmKind::all_reduce: return n * (b * D / Y + D / Y * F + b * F) + B * D + D * F + B * F;
    case CmKind::ffn:
      return n * (b * D / Y + D * F / Y + b * F / Y + F / Y * D + b * D / Y) + B * D + D * F + F * D + B * F + B * D;
  }
  return 0;
}

void check_executable(const CmProblem& p) {
  validate(p);
  if (multiply_adds(p) > kMaxMultiplyAdds)
    throw std::invalid_argument("too large to run on real numbers: " + format_number(multiply_adds(p)) +
                                " multiply-adds in the plain matmul (at most 2^30 = 1073741824)");
  if (held_values(p) > kMaxHeldValues)
    throw std::invalid_argument("too large to run on real numbers: " + format_number(held_values(p)) +
                                " values held over the devices and the global arrays (at most 2^25 = 33554432)");
}

namespace {

long long whole(double v) { return static_cast<long long>(v); }

Block filled(long long rows, long long cols, long long a, long long c, long long m, long long shift) {
  Block out = zeros(rows, cols);
  for (long long i = 0; i < rows; ++i)
    for (long long j = 0; j < cols; ++j) out.at(i, j) = static_cast<double>((a * i + c * j) % m - shift);
  return out;
}

}  // namespace

CmInputs example_inputs(const CmProblem& p) {
  check_executable(p);
  const long long B = whole(p.B), D = whole(p.D), F = whole(p.F);
  CmInputs in;
  in.lhs = filled(B, p.kind == CmKind::reduce_scatter ? F : D, 3, 5, 7, 3);
  in.w = p.kind == CmKind::reduce_scatter ? filled(F, D, 2, 7, 5, 2) : filled(D, F, 2, 7, 5, 2);
  if (p.kind == CmKind::ffn) in.w_out = filled(F, D, 5, 3, 9, 4);
  return in;
}

CmInputs shape_inputs(const CmProblem& p) {
  validate(p);
  const long long B = whole(p.B), D = whole(p.D), F = whole(p.F);
  CmInputs in;
  in.lhs = shape_only(B, p.kind == CmKind::reduce_scatter ? F : D);
  in.w = p.kind == CmKind::reduce_scatter ? shape_only(F, D) : shape_only(D, F);
  if (p.kind == CmKind::ffn) in.w_out = shape_only(F, D);
  return in;
}

Block plain_output(const CmProblem& p, const CmInputs& in) {
  Block out = in.lhs.has_values() ? zeros(in.lhs.rows, in.w.cols) : shape_only(in.lhs.rows, in.w.cols);
  multiply_add(in.lhs, in.w, out);
  if (p.kind != CmKind::ffn) return out;
  relu(out);
  Block o2 = out.has_values() ? zeros(out.rows, in.w_out.cols) : shape_only(out.rows, in.w_out.cols);
  multiply_add(out, in.w_out, o2);
  return o2;
}

namespace {

int mod(long long a, int n) { return static_cast<int>(((a % n) + n) % n); }

// The ring schedule of §10 for a stream that moves `offset` places per round (−1: to the left).
// Gathering: at step i device y holds the chunk that started on device y − i·offset.
int gathered_from(int y, int i, int offset, int n) { return mod(y - static_cast<long long>(i) * offset, n); }
// Reducing: the accumulator device y holds at step i still moves n − 1 − i times, so it serves the
// block of the device it will end on.
int reduced_for(int y, int i, int offset, int n) { return mod(y + static_cast<long long>(n - 1 - i) * offset, n); }

// One stream of a direction, and the columns [begin, end) of a width-w block it carries: uni moves the
// whole block to the left; bi moves the first ⌈w/2⌉ columns left and the rest right.
struct Stream {
  int offset;
  int half;  // -1: whole block, 0: first half, 1: second half
};
std::vector<Stream> streams(Direction d) {
  if (d == Direction::uni) return {{-1, -1}};
  return {{-1, 0}, {+1, 1}};
}
std::pair<long long, long long> columns(const Stream& s, long long w) {
  const long long h = (w + 1) / 2;
  if (s.half < 0) return {0, w};
  return s.half == 0 ? std::pair{0LL, h} : std::pair{h, w};
}

Block like(const Block& model, long long rows, long long cols) {
  return model.has_values() && model.elements() > 0 ? zeros(rows, cols) : shape_only(rows, cols);
}

class Runner {
 public:
  Runner(const CmProblem& p, CmRun& out) : p_(p), out_(out), devices_(device_count(p.mesh)), n_(y_size(p)) {
    for (int d = 0; d < devices_; ++d) {
      const auto c = device_coords(p.mesh, d);
      x_.push_back(c[static_cast<size_t>(p.x_axis)]);
      y_.push_back(c[static_cast<size_t>(p.y_axis)]);
    }
    b_ = whole(p.B) / x_size(p);
  }

  int devices() const { return devices_; }
  int x(int d) const { return x_[static_cast<size_t>(d)]; }
  int y(int d) const { return y_[static_cast<size_t>(d)]; }
  long long b() const { return b_; }

  CmStep& new_step() {
    const std::vector<double> zero(static_cast<size_t>(devices_));
    out_.steps.push_back({zero, zero, zero, {}});
    return out_.steps.back();
  }

  // c += a·w on device d, counted in step s. The multiply-adds of one step are one fused matmul: an
  // operand two of them share (`a_counted` false on the second) is read once, and their common output
  // passes through HBM once: written (out_passes 1), or read and written when it accumulates (2).
  static void mma(CmStep& s, int d, const Block& a, const Block& w, Block& c, bool a_counted, int out_passes) {
    multiply_add(a, w, c);
    if (a.elements() == 0 || w.elements() == 0) return;
    const double out = static_cast<double>(a.rows) * static_cast<double>(w.cols);
    s.flops[static_cast<size_t>(d)] += 2 * out * static_cast<double>(a.cols);
    s.hbm_elements[static_cast<size_t>(d)] += (a_counted ? a.elements() : 0) + w.elements() + (out_passes == 1 ? out : 0);
    if (out_passes == 2) s.accumulator_elements[static_cast<size_t>(d)] += 2 * out;
  }

  void shift(CmStep& s, std::vector<std::vector<Block>>& per_stream, const std::vector<Stream>& st) {
    std::vector<Shift> shifts;
    for (size_t k = 0; k < st.size(); ++k) shifts.push_back({p_.y_axis, st[k].offset, &per_stream[k]});
    s.rounds.push_back(ppermute(p_.mesh, shifts));
  }

  // §10: A[B_X, D_Y] ·_D W[D, F_Y]. lhs[d]: [b, c] (c = D/Y), w[d]: [n·c, f]. Returns [b, f] per device.
  std::vector<Block> all_gather_matmul(const std::vector<Block>& lhs, const std::vector<Block>& w, long long c) {
    const auto st = streams(p_.direction);
    std::vector<std::vector<Block>> held(st.size(), std::vector<Block>(static_cast<size_t>(devices_)));
    std::vector<Block> acc;
    for (int d = 0; d < devices_; ++d) {
      const auto& l = lhs[static_cast<size_t>(d)];
      for (size_t k = 0; k < st.size(); ++k) {
        const auto [c0, c1] = columns(st[k], c);
        held[k][static_cast<size_t>(d)] = sub_block(l, 0, l.rows, c0, c1);
      }
      acc.push_back(like(l, l.rows, w[static_cast<size_t>(d)].cols));
    }
    for (int i = 0; i < n_; ++i) {
      CmStep& s = new_step();
      for (int d = 0; d < devices_; ++d) {
        const auto& wd = w[static_cast<size_t>(d)];
        for (size_t k = 0; k < st.size(); ++k) {
          const auto [c0, c1] = columns(st[k], c);
          const long long chunk = gathered_from(y(d), i, st[k].offset, n_);
          // both halves add into the same accumulator: its pass is counted with the first
          mma(s, d, held[k][static_cast<size_t>(d)], sub_block(wd, chunk * c + c0, chunk * c + c1, 0, wd.cols),
              acc[static_cast<size_t>(d)], true, k > 0 ? 0 : i > 0 ? 2 : 1);
        }
      }
      if (i + 1 < n_) shift(s, held, st);
    }
    return acc;
  }

  // ex10.2: Tmp[B_X, F_Y] ·_F W2[F_Y, D]. lhs[d]: [b, f], w[d]: [f, n·c]. Returns [b, c] per device.
  std::vector<Block> reduce_scatter_matmul(const std::vector<Block>& lhs, const std::vector<Block>& w, long long c) {
    const auto st = streams(p_.direction);
    std::vector<std::vector<Block>> acc(st.size(), std::vector<Block>(static_cast<size_t>(devices_)));
    for (int i = 0; i < n_; ++i) {
      CmStep& s = new_step();
      if (i > 0) shift(s, acc, st);
      for (int d = 0; d < devices_; ++d) {
        const auto& l = lhs[static_cast<size_t>(d)];
        const auto& wd = w[static_cast<size_t>(d)];
        for (size_t k = 0; k < st.size(); ++k) {
          const auto [c0, c1] = columns(st[k], c);
          const long long block = reduced_for(y(d), i, st[k].offset, n_);
          auto& a = acc[k][static_cast<size_t>(d)];
          if (i == 0) a = like(l, l.rows, c1 - c0);
          // both halves read the same Tmp shard: counted once
          mma(s, d, l, sub_block(wd, 0, wd.rows, block * c + c0, block * c + c1), a, k == 0, i > 0 ? 2 : 1);
        }
      }
    }
    std::vector<Block> out;
    for (int d = 0; d < devices_; ++d) {
      out.push_back(like(lhs[static_cast<size_t>(d)], b_, c));
      for (size_t k = 0; k < st.size(); ++k) put_block(out.back(), acc[k][static_cast<size_t>(d)], 0, columns(st[k], c).first);
    }
    return out;
  }

  // psum over Y of part[d] ([b, w] on every device), as ppermute rounds appended to step s: a ring
  // ReduceScatter of n column pieces, then a ring AllGather; the sum lands in out[d] at column c0.
  void ring_psum(CmStep& s, const std::vector<Block>& part, std::vector<Block>& out, long long c0) {
    const auto st = streams(p_.direction);
    const long long w = part.front().cols;
    auto piece = [&](int q) { return std::pair{w * q / n_, w * (q + 1) / n_}; };
    auto span = [&](int q, const Stream& stream) {  // columns of piece q that `stream` carries
      const auto [p0, p1] = piece(q);
      const auto [h0, h1] = columns(stream, p1 - p0);
      return std::pair{p0 + h0, p0 + h1};
    };
    std::vector<std::vector<Block>> acc(st.size(), std::vector<Block>(static_cast<size_t>(devices_)));
    for (int i = 0; i < n_; ++i) {
      if (i > 0) shift(s, acc, st);
      for (int d = 0; d < devices_; ++d)
        for (size_t k = 0; k < st.size(); ++k) {
          const auto [a0, a1] = span(reduced_for(y(d), i, st[k].offset, n_), st[k]);
          Block mine = sub_block(part[static_cast<size_t>(d)], 0, b_, a0, a1);
          auto& a = acc[k][static_cast<size_t>(d)];
          if (i == 0) a = std::move(mine);
          else add_into(a, mine);
        }
    }
    for (int i = 0; i < n_; ++i) {  // acc now holds the sums of piece y; pass them round
      if (i > 0) shift(s, acc, st);
      for (int d = 0; d < devices_; ++d)
        for (size_t k = 0; k < st.size(); ++k)
          put_block(out[static_cast<size_t>(d)], acc[k][static_cast<size_t>(d)], 0,
                    c0 + span(gathered_from(y(d), i, st[k].offset, n_), st[k]).first);
    }
  }

  // ex10.1: A[B_X, D_Y] ·_D W[D_Y, F], tiled over F. lhs[d]: [b, c], w[d]: [c, F]. Returns [b, F] per device.
  std::vector<Block> all_reduce_matmul(const std::vector<Block>& lhs, const std::vector<Block>& w, int t) {
    const long long F = w.front().cols;
    auto tile = [&](int j) { return std::pair{F * j / t, F * (j + 1) / t}; };
    std::vector<Block> out, previous;
    for (int d = 0; d < devices_; ++d) out.push_back(like(lhs[static_cast<size_t>(d)], b_, F));
    for (int j = 0; j <= t; ++j) {
      CmStep& s = new_step();
      if (j > 0) ring_psum(s, previous, out, tile(j - 1).first);
      if (j == t) break;
      const auto [f0, f1] = tile(j);
      std::vector<Block> partial;
      for (int d = 0; d < devices_; ++d) {
        const auto& wd = w[static_cast<size_t>(d)];
        partial.push_back(like(lhs[static_cast<size_t>(d)], b_, f1 - f0));
        mma(s, d, lhs[static_cast<size_t>(d)], sub_block(wd, 0, wd.rows, f0, f1), partial.back(), true, 1);
      }
      previous = std::move(partial);
    }
    return out;
  }

 private:
  const CmProblem& p_;
  CmRun& out_;
  int devices_, n_;
  long long b_ = 0;
  std::vector<int> x_, y_;
};

void check_shape(const Block& b, long long rows, long long cols, const char* what) {
  if (b.rows != rows || b.cols != cols)
    throw std::invalid_argument(std::string(what) + " is " + std::to_string(b.rows) + "x" + std::to_string(b.cols) +
                                ", expected " + std::to_string(rows) + "x" + std::to_string(cols));
}

}  // namespace

CmRun run(const CmProblem& p, const CmInputs& in) {
  validate(p);
  const long long B = whole(p.B), D = whole(p.D), F = whole(p.F);
  const bool rs = p.kind == CmKind::reduce_scatter;
  check_shape(in.lhs, B, rs ? F : D, "lhs");
  check_shape(in.w, rs ? F : D, rs ? D : F, "w");
  if (p.kind == CmKind::ffn) check_shape(in.w_out, F, D, "w_out");
  const bool values = in.lhs.has_values();
  if (values) check_executable(p);

  CmRun result;
  Runner r(p, result);
  const int n = y_size(p);
  const long long b = r.b(), dy = D / n, fy = F / n;
  std::vector<Block> lhs, w;  // each device's shards
  for (int d = 0; d < r.devices(); ++d) {
    const long long x0 = r.x(d) * b, y = r.y(d);
    switch (p.kind) {
      case CmKind::all_gather:
      case CmKind::ffn:  // A[B_X, D_Y], W[D, F_Y]
        lhs.push_back(sub_block(in.lhs, x0, x0 + b, y * dy, (y + 1) * dy));
        w.push_back(sub_block(in.w, 0, D, y * fy, (y + 1) * fy));
        break;
      case CmKind::reduce_scatter:  // Tmp[B_X, F_Y], W2[F_Y, D]
        lhs.push_back(sub_block(in.lhs, x0, x0 + b, y * fy, (y + 1) * fy));
        w.push_back(sub_block(in.w, y * fy, (y + 1) * fy, 0, D));
        break;
      case CmKind::all_reduce:  // A[B_X, D_Y], W[D_Y, F]
        lhs.push_back(sub_block(in.lhs, x0, x0 + b, y * dy, (y + 1) * dy));
        w.push_back(sub_block(in.w, y * dy, (y + 1) * dy, 0, F));
        break;
    }
  }
  switch (p.kind) {
    case CmKind::all_gather: result.outputs = r.all_gather_matmul(lhs, w, dy); break;
    case CmKind::reduce_scatter: result.outputs = r.reduce_scatter_matmul(lhs, w, dy); break;
    case CmKind::all_reduce: result.outputs = r.all_reduce_matmul(lhs, w, tiles(p)); break;
    case CmKind::ffn: {
      auto h = r.all_gather_matmul(lhs, w, dy);  // H[B_X, F_Y]
      for (auto& block : h) relu(block);
      std::vector<Block> w_out;  // W_out[F_Y, D]
      for (int d = 0; d < r.devices(); ++d) w_out.push_back(sub_block(in.w_out, r.y(d) * fy, (r.y(d) + 1) * fy, 0, D));
      result.outputs = r.reduce_scatter_matmul(h, w_out, dy);
      break;
    }
  }
  if (!values) return result;

  const Block plain = plain_output(p, in);
  bool ok = true;
  for (int d = 0; d < r.devices() && ok; ++d) {
    const long long x0 = r.x(d) * b, y = r.y(d);
    const long long width = p.kind == CmKind::all_gather ? fy : p.kind == CmKind::all_reduce ? F : dy;
    const long long c0 = p.kind == CmKind::all_reduce ? 0 : y * width;
    const Block expected = sub_block(plain, x0, x0 + b, c0, c0 + width);
    ok = result.outputs[static_cast<size_t>(d)].values == expected.values;
  }
  result.correct = ok;
  return result;
}

namespace {

// The figures the timing uses, each read once from the System (and the execution's choices).
struct Rates {
  double flops_per_s, hbm_bytes_per_s, bytes_per_element;
  Link y_link;  // the mesh's Y axis: one direction of one link (axis_link)
};

Rates rates(const CmProblem& p, const System& s, const CmExecution& e) {
  const auto y = static_cast<size_t>(p.y_axis);
  if (s.fast.size() != p.mesh.shape.size() || s.fast[y].size != p.mesh.shape[y])
    throw std::invalid_argument(fmt::format("{} does not match the {}-axis mesh: its fast axis {} must be Y (|Y| = {})",
                                            s.name, p.mesh.shape.size(), p.y_axis, p.mesh.shape[y]));
  const Link link = axis_link(s, p.y_axis);
  if (!(link.oneway_bytes_per_s > 0)) throw std::invalid_argument(s.name + ": no link bandwidth on the Y axis");
  return {e.measured_flops_per_s > 0 ? e.measured_flops_per_s : peak_flops_per_s(s.chip, e.dtype),
          s.chip.hbm_bytes_per_s, e.element_bytes > 0 ? e.element_bytes : bytes_per_element(e.dtype), link};
}

double roofline_s(double flops, double bytes, const Rates& m) {
  if (flops <= 0) return bytes > 0 ? bytes / m.hbm_bytes_per_s : 0;
  return roofline(flops, bytes, m.flops_per_s, m.hbm_bytes_per_s).t_lower_s;
}

// One matmul [rows, k]·[k, cols] in one piece: the ideal time of §10.
double matmul_s(double rows, double k, double cols, const Rates& m) {
  return roofline_s(2 * rows * k * cols, m.bytes_per_element * (rows * k + k * cols + rows * cols), m);
}

double collective_s(Collective op, const CmProblem& p, double bytes, const Link& link) {
  const int n = y_size(p);
  if (n == 1) return 0;
  return collective_cost(op, {{n, p.mesh.wraps[static_cast<size_t>(p.y_axis)]}}, bytes, link).t_s;
}

}  // namespace

CmTimes times(const CmProblem& p, const CmRun& r, const System& sys, const CmExecution& e) {
  validate(p);
  const Rates m = rates(p, sys, e);
  CmTimes t{};
  double clock = 0;
  for (const auto& s : r.steps) {
    TimelineStep ts{clock, 0, 0, {}};
    for (size_t d = 0; d < s.flops.size(); ++d) {
      const double elements = s.hbm_elements[d] + (e.accumulator_in_vmem ? 0 : s.accumulator_elements[d]);
      ts.device_compute_s.push_back(roofline_s(s.flops[d], elements * m.bytes_per_element, m));
      ts.compute_s = std::max(ts.compute_s, ts.device_compute_s.back());
    }
    for (const auto& round : s.rounds)
      if (round.messages > 0)
        ts.comm_s += std::max(round.max_link_elements * m.bytes_per_element / m.y_link.oneway_bytes_per_s,
                              round.max_hops * m.y_link.hop_latency_s);
    t.step_compute_s = std::max(t.step_compute_s, ts.compute_s);
    t.step_comm_s = std::max(t.step_comm_s, ts.comm_s);
    clock += std::max(ts.compute_s, ts.comm_s);
    t.timeline.push_back(std::move(ts));
  }
  t.overlapped_s = clock;

  const double n = y_size(p), b = p.B / x_size(p), s = m.bytes_per_element;
  auto add = [&](const std::string& label, bool comm, double duration) {
    const double start = t.blocking.empty() ? 0 : t.blocking.back().start_s + t.blocking.back().duration_s;
    t.blocking.push_back({label, comm, start, duration});
    (comm ? t.blocking_comm_s : t.ideal_s) += duration;
  };
  switch (p.kind) {
    case CmKind::all_gather:
      add("AllGather_Y A", true, collective_s(Collective::all_gather, p, b * p.D * s, m.y_link));
      add("A[B_X, D]·W[D, F_Y]", false, matmul_s(b, p.D, p.F / n, m));
      break;
    case CmKind::reduce_scatter:
      add("Tmp[B_X, F_Y]·W2[F_Y, D]", false, matmul_s(b, p.F / n, p.D, m));
      add("ReduceScatter_Y", true, collective_s(Collective::reduce_scatter, p, b * p.D * s, m.y_link));
      break;
    case CmKind::all_reduce:
      add("A[B_X, D_Y]·W[D_Y, F]", false, matmul_s(b, p.D / n, p.F, m));
      add("AllReduce_Y", true, collective_s(Collective::all_reduce, p, b * p.F * s, m.y_link));
      break;
    case CmKind::ffn:
      add("AllGather_Y In", true, collective_s(Collective::all_gather, p, b * p.D * s, m.y_link));
      add("In[B_X, D]·W_in[D, F_Y]", false, matmul_s(b, p.D, p.F / n, m));
      add("H[B_X, F_Y]·W_out[F_Y, D]", false, matmul_s(b, p.F / n, p.D, m));
      add("ReduceScatter_Y", true, collective_s(Collective::reduce_scatter, p, b * p.D * s, m.y_link));
      break;
  }
  t.blocking_s = t.ideal_s + t.blocking_comm_s;
  return t;
}

}  // namespace scaling::sim
