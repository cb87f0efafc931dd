#include "scaling/sim/ppermute.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace scaling::sim {

bool Block::has_values() const { return static_cast<double>(values.size()) == elements(); }

Block shape_only(long long rows, long long cols) {
  if (rows < 0 || cols < 0) throw std::invalid_argument("a block cannot have a negative size");
  return {rows, cols, {}};
}

Block zeros(long long rows, long long cols) {
  Block b = shape_only(rows, cols);
  b.values.assign(static_cast<size_t>(rows * cols), 0.0);
  return b;
}

Block sub_block(const Block& b, long long r0, long long r1, long long c0, long long c1) {
  if (r0 < 0 || r1 < r0 || r1 > b.rows || c0 < 0 || c1 < c0 || c1 > b.cols)
    throw std::invalid_argument("sub_block [" + std::to_string(r0) + ", " + std::to_string(r1) + ") x [" +
                                std::to_string(c0) + ", " + std::to_string(c1) + ") lies outside a " +
                                std::to_string(b.rows) + "x" + std::to_string(b.cols) + " block");
  if (!b.has_values() || b.elements() == 0) return shape_only(r1 - r0, c1 - c0);
  Block out = zeros(r1 - r0, c1 - c0);
  for (long long r = r0; r < r1; ++r)
    std::copy_n(b.values.begin() + static_cast<std::ptrdiff_t>(r * b.cols + c0), c1 - c0,
                out.values.begin() + static_cast<std::ptrdiff_t>((r - r0) * out.cols));
  return out;
}

void put_block(Block& into, const Block& part, long long r0, long long c0) {
  if (r0 < 0 || c0 < 0 || r0 + part.rows > into.rows || c0 + part.cols > into.cols)
    throw std::invalid_argument("put_block: a " + std::to_string(part.rows) + "x" + std::to_string(part.cols) +
                                " part does not fit at (" + std::to_string(r0) + ", " + std::to_string(c0) + ")");
  if (part.elements() == 0 || !into.has_values() || !part.has_values()) return;
  for (long long r = 0; r < part.rows; ++r)
    std::copy_n(part.values.begin() + static_cast<std::ptrdiff_t>(r * part.cols), part.cols,
                into.values.begin() + static_cast<std::ptrdiff_t>((r0 + r) * into.cols + c0));
}

void add_into(Block& dst, const Block& src) {
  if (dst.rows != src.rows || dst.cols != src.cols)
    throw std::invalid_argument("add_into: a " + std::to_string(src.rows) + "x" + std::to_string(src.cols) +
                                " block added to a " + std::to_string(dst.rows) + "x" + std::to_string(dst.cols) + " one");
  if (dst.elements() == 0 || (!dst.has_values() && !src.has_values())) return;
  if (!dst.has_values() || !src.has_values())
    throw std::invalid_argument("add_into: one block holds values and the other only its shape");
  for (size_t i = 0; i < dst.values.size(); ++i) dst.values[i] += src.values[i];
}

void relu(Block& b) {
  for (double& v : b.values) v = std::max(v, 0.0);
}

void multiply_add(const Block& a, const Block& b, Block& c) {
  if (a.cols != b.rows || c.rows != a.rows || c.cols != b.cols)
    throw std::invalid_argument("multiply_add: shapes " + std::to_string(a.rows) + "x" + std::to_string(a.cols) +
                                " · " + std::to_string(b.rows) + "x" + std::to_string(b.cols) + " -> " +
                                std::to_string(c.rows) + "x" + std::to_string(c.cols) + " do not match");
  if (a.elements() == 0 || b.elements() == 0 || c.elements() == 0) return;
  const int with_values = int(a.has_values()) + int(b.has_values()) + int(c.has_values());
  if (with_values == 0) return;
  if (with_values != 3) throw std::invalid_argument("multiply_add: some operands hold values and others only shapes");
  // i-k-j order: the inner loop walks a row of b and a row of c contiguously.
  for (long long i = 0; i < a.rows; ++i) {
    double* out = c.values.data() + i * c.cols;
    for (long long k = 0; k < a.cols; ++k) {
      const double x = a.values[static_cast<size_t>(i * a.cols + k)];
      if (x == 0) continue;
      const double* row = b.values.data() + k * b.cols;
      for (long long j = 0; j < b.cols; ++j) out[j] += x * row[j];
    }
  }
}

int device_count(const Topology& topo) {
  if (topo.shape.empty() || topo.shape.size() != topo.wraps.size())
    throw std::invalid_argument("a topology needs a size and a wrap flag per axis");
  int n = 1;
  for (int s : topo.shape) {
    if (s < 1) throw std::invalid_argument("axis size " + std::to_string(s) + ": must be at least 1");
    n *= s;
  }
  return n;
}

std::vector<int> device_coords(const Topology& topo, int device) {
  std::vector<int> c(topo.shape.size());
  for (size_t a = c.size(); a-- > 0;) {
    c[a] = device % topo.shape[a];
    device /= topo.shape[a];
  }
  return c;
}

int device_at(const Topology& topo, const std::vector<int>& coords) {
  int d = 0;
  for (size_t a = 0; a < coords.size(); ++a) d = d * topo.shape[a] + coords[a];
  return d;
}

LinkTraffic ppermute(const Topology& topo, const std::vector<Shift>& shifts) {
  const int devices = device_count(topo);
  const int axes = static_cast<int>(topo.shape.size());
  // Directed link (device, axis, direction): index (device·axes + axis)·2 + (0 for +, 1 for −).
  std::vector<double> load(static_cast<size_t>(devices) * static_cast<size_t>(axes) * 2);
  LinkTraffic t;
  for (const auto& s : shifts) {
    if (s.axis < 0 || s.axis >= axes)
      throw std::invalid_argument("ppermute axis " + std::to_string(s.axis) + ": the mesh has axes 0.." +
                                  std::to_string(axes - 1));
    if (!s.blocks || s.blocks->size() != static_cast<size_t>(devices))
      throw std::invalid_argument("ppermute needs one block per device (" + std::to_string(devices) + ")");
    const auto a = static_cast<size_t>(s.axis);
    const int n = topo.shape[a];
    const bool wraps = topo.wraps[a] && n > 1;
    if (topo.links == Direction::uni && !wraps && n > 1)
      throw std::invalid_argument("unidirectional links need a wrapped axis (a ring)");
    std::vector<Block> received(static_cast<size_t>(devices));
    for (int d = 0; d < devices; ++d) {
      auto c = device_coords(topo, d);
      const int p = c[a], q = ((p + s.offset) % n + n) % n;
      int dir = 0, hops = 0;
      if (wraps) {
        const int forward = ((q - p) % n + n) % n, backward = (n - forward) % n;
        const bool plus = topo.links == Direction::uni || forward < backward || (forward == backward && s.offset > 0);
        dir = plus ? +1 : -1;
        hops = plus ? forward : backward;
      } else {
        dir = q >= p ? +1 : -1;
        hops = q >= p ? q - p : p - q;
      }
      Block& msg = (*s.blocks)[static_cast<size_t>(d)];
      const double e = msg.elements();
      if (e > 0 && hops > 0) {
        ++t.messages;
        t.max_hops = std::max(t.max_hops, hops);
        t.total_link_elements += e * hops;
        int at = p;
        for (int h = 0; h < hops; ++h) {
          c[a] = at;
          load[(static_cast<size_t>(device_at(topo, c)) * static_cast<size_t>(axes) + a) * 2 + (dir > 0 ? 0 : 1)] += e;
          at = ((at + dir) % n + n) % n;
        }
      }
      c[a] = q;
      received[static_cast<size_t>(device_at(topo, c))] = std::move(msg);
    }
    *s.blocks = std::move(received);
  }
  t.max_link_elements = load.empty() ? 0 : *std::max_element(load.begin(), load.end());
  return t;
}

}  // namespace scaling::sim
