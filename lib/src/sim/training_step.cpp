#include "scaling/sim/training_step.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

namespace scaling::sim {

namespace {

enum class Split { rows, cols };  // which dimension of a block its shards divide

int rank_on(const Topology& topo, int device, const std::vector<int>& axes) {  // as mesh_sim ranks a group
  const auto c = device_coords(topo, device);
  int r = 0;
  for (int a : axes) r = r * topo.shape[static_cast<size_t>(a)] + c[static_cast<size_t>(a)];
  return r;
}

Block shard_of(const Block& full, int r, int n, Split split) {
  if (split == Split::rows) {
    const long long h = full.rows / n;
    return sub_block(full, r * h, (r + 1) * h, 0, full.cols);
  }
  const long long w = full.cols / n;
  return sub_block(full, 0, full.rows, r * w, (r + 1) * w);
}

// Runs collectives over the mesh on per-device blocks and records what each device sent.
class Mesh {
 public:
  Mesh(const Topology& topo, std::vector<CollectiveRecord>& log) : topo_(topo), log_(log), devices_(device_count(topo)) {}
  int devices() const { return devices_; }

  // Every device holds a shard (all the same shape); each ends with the whole array of its group, the
  // shards placed along `split` in rank order.
  std::vector<Block> all_gather(const std::vector<int>& axes, const std::vector<Block>& shards, Split split, int layer,
                                Pass pass, const std::string& tensor) {
    const int n = group_size(topo_, axes);
    if (n == 1) return shards;
    const size_t part = shards[0].values.size();
    std::vector<std::vector<double>> buf(static_cast<size_t>(devices_), std::vector<double>(part * static_cast<size_t>(n)));
    for (int d = 0; d < devices_; ++d)
      std::copy(shards[static_cast<size_t>(d)].values.begin(), shards[static_cast<size_t>(d)].values.end(),
                buf[static_cast<size_t>(d)].begin() + static_cast<std::ptrdiff_t>(part * static_cast<size_t>(rank_on(topo_, d, axes))));
    run(Collective::all_gather, axes, buf, layer, pass, tensor);
    std::vector<Block> full;
    for (int d = 0; d < devices_; ++d) {
      const Block& s = shards[static_cast<size_t>(d)];
      Block f = split == Split::rows ? zeros(s.rows * n, s.cols) : zeros(s.rows, s.cols * n);
      for (int r = 0; r < n; ++r) {
        Block piece = shape_only(s.rows, s.cols);
        const auto from = buf[static_cast<size_t>(d)].begin() + static_cast<std::ptrdiff_t>(part * static_cast<size_t>(r));
        piece.values.assign(from, from + static_cast<std::ptrdiff_t>(part));
        put_block(f, piece, split == Split::rows ? r * s.rows : 0, split == Split::cols ? r * s.cols : 0);
      }
      full.push_back(std::move(f));
    }
    return full;
  }

  // Every device holds a whole array of partial sums; each ends with its own shard (rank order along
  // `split`) of the sum over its group.
  std::vector<Block> reduce_scatter(const std::vector<int>& axes, const std::vector<Block>& partials, Split split,
                                    int layer, Pass pass, const std::string& tensor) {
    const int n = group_size(topo_, axes);
    if (n == 1) return partials;
    const size_t total = partials[0].values.size(), part = total / static_cast<size_t>(n);
    std::vector<std::vector<double>> buf(static_cast<size_t>(devices_));
    for (int d = 0; d < devices_; ++d) {
      auto& b = buf[static_cast<size_t>(d)];
      b.reserve(total);
      for (int r = 0; r < n; ++r) {
        const Block s = shard_of(partials[static_cast<size_t>(d)], r, n, split);
        b.insert(b.end(), s.values.begin(), s.values.end());
      }
    }
    run(Collective::reduce_scatter, axes, buf, layer, pass, tensor);
    std::vector<Block> out;
    for (int d = 0; d < devices_; ++d) {
      const Block& p = partials[static_cast<size_t>(d)];
      Block s = split == Split::rows ? shape_only(p.rows / n, p.cols) : shape_only(p.rows, p.cols / n);
      const auto from = buf[static_cast<size_t>(d)].begin() + static_cast<std::ptrdiff_t>(part * static_cast<size_t>(rank_on(topo_, d, axes)));
      s.values.assign(from, from + static_cast<std::ptrdiff_t>(part));
      out.push_back(std::move(s));
    }
    return out;
  }

  // Every device ends with the sum over its group.
  std::vector<Block> all_reduce(const std::vector<int>& axes, std::vector<Block> partials, int layer, Pass pass,
                                const std::string& tensor) {
    if (group_size(topo_, axes) == 1) return partials;
    std::vector<std::vector<double>> buf;
    for (const auto& p : partials) buf.push_back(p.values);
    run(Collective::all_reduce, axes, buf, layer, pass, tensor);
    for (size_t d = 0; d < partials.size(); ++d) partials[d].values = std::move(buf[d]);
    return partials;
  }

 private:
  void run(Collective op, const std::vector<int>& axes, std::vector<std::vector<double>>& buf, int layer, Pass pass,
           const std::string& tensor) {
    Request req{op, axes, static_cast<double>(buf[0].size())};
    const Result r = run_on(topo_, req, buf);
    log_.push_back({layer, pass, op, tensor, axes, req.elements, r.sent_elements});
  }

  const Topology& topo_;
  std::vector<CollectiveRecord>& log_;
  int devices_;
};

// 2·m·k·n: the FLOPs of an [m, k] by [k, n] product (a multiply and an add per term).
double matmul_flops(long long m, long long k, long long n) {
  return 2.0 * static_cast<double>(m) * static_cast<double>(k) * static_cast<double>(n);
}

void require_multiple(long long value, long long divisor, const std::string& what) {
  if (value % divisor != 0)
    throw std::invalid_argument(what + " = " + std::to_string(value) + ": must be a multiple of " + std::to_string(divisor));
}

}  // namespace


MeshLayout layout_for(Strategy s, const Topology& topo) {
  std::vector<int> all;
  for (int a = 0; a < static_cast<int>(topo.shape.size()); ++a) all.push_back(a);
  switch (s) {
    case Strategy::dp: return {all, {}, false};
    case Strategy::fsdp: return {all, {}, true};
    case Strategy::tp: return {{}, all, false};
    case Strategy::fsdp_tp: {
      if (all.size() < 2) throw std::invalid_argument("FSDP+TP needs a mesh of at least two axes");
      return {{0}, std::vector<int>(all.begin() + 1, all.end()), true};
    }
  }
  return {};
}

int group_size(const Topology& topo, const std::vector<int>& axes) {
  int n = 1;
  for (int a : axes) n *= topo.shape[static_cast<size_t>(a)];
  return n;
}

void validate(const Topology& topo, const MeshLayout& layout, const MlpShape& shape) {
  validate(shape);
  const int axes = static_cast<int>(topo.shape.size());
  std::vector<int> uses(static_cast<size_t>(axes));
  for (const auto* list : {&layout.x_axes, &layout.y_axes})
    for (int a : *list) {
      if (a < 0 || a >= axes)
        throw std::invalid_argument("axis " + std::to_string(a) + ": the mesh has axes 0.." + std::to_string(axes - 1));
      ++uses[static_cast<size_t>(a)];
    }
  for (int a = 0; a < axes; ++a)
    if (uses[static_cast<size_t>(a)] != 1)
      throw std::invalid_argument("axis " + std::to_string(a) + ": every mesh axis must be exactly one of X and Y");
  device_count(topo);  // rejects a malformed topology
  const int nx = group_size(topo, layout.x_axes), ny = group_size(topo, layout.y_axes);
  require_multiple(shape.batch, nx, "B");
  require_multiple(shape.d_model, ny, "D");
  require_multiple(shape.d_ff, ny, "F");
  if (layout.shard_weights) require_multiple(shape.d_model, nx, "D");
  else require_multiple(shape.d_model * (shape.d_ff / ny), nx, "D·F/ny (a replicated gradient's AllReduce)");
}

ShardedStep sharded_step(const Topology& topo, const MeshLayout& layout, const MlpProblem& p, const Optimizer& opt) {
  validate(topo, layout, p.shape);
  const auto& X = layout.x_axes;
  const auto& Y = layout.y_axes;
  const bool shard = layout.shard_weights;
  const int nx = group_size(topo, X), ny = group_size(topo, Y);
  const int L = p.shape.layers;
  ShardedStep result;
  Mesh mesh(topo, result.collectives);
  const int N = mesh.devices();
  result.devices = N;
  const auto n = static_cast<size_t>(N);

  // Each device's shards: In[B_X, D_Y], Target[B_X, D_Y], W_in[D_X, F_Y], W_out[F_Y, D_X].
  std::vector<int> rx(n), ry(n);
  for (int d = 0; d < N; ++d) rx[static_cast<size_t>(d)] = rank_on(topo, d, X), ry[static_cast<size_t>(d)] = rank_on(topo, d, Y);
  auto local = [&](const Block& full, int row_parts, int row_rank, int col_parts, int col_rank) {
    return shard_of(shard_of(full, row_rank, row_parts, Split::rows), col_rank, col_parts, Split::cols);
  };
  std::vector<Block> act(n), target(n);
  std::vector<std::vector<Block>> w_in(static_cast<size_t>(L), std::vector<Block>(n)), w_out = w_in;
  const int wx = shard ? nx : 1;
  for (size_t d = 0; d < n; ++d) {
    act[d] = local(p.x, nx, rx[d], ny, ry[d]);
    target[d] = local(p.target, nx, rx[d], ny, ry[d]);
    for (size_t l = 0; l < static_cast<size_t>(L); ++l) {
      w_in[l][d] = local(p.weights.w_in[l], wx, shard ? rx[d] : 0, ny, ry[d]);
      w_out[l][d] = local(p.weights.w_out[l], ny, ry[d], wx, shard ? rx[d] : 0);
    }
  }
  auto gather_weights = [&](const std::vector<Block>& w, Split split, int layer, Pass pass, const char* tensor) {
    return shard ? mesh.all_gather(X, w, split, layer, pass, tensor) : w;
  };

  // Forward pass (§5.1.4 forward, steps 1–6), keeping In[B_X, D], Tmp and H for the backward pass.
  std::vector<std::vector<Block>> in_full(static_cast<size_t>(L)), tmp(static_cast<size_t>(L)), h(static_cast<size_t>(L));
  result.flops_forward.assign(static_cast<size_t>(L), std::vector<double>(n));
  result.flops_backward = result.flops_forward;
  for (int l = 0; l < L; ++l) {
    const auto li = static_cast<size_t>(l);
    in_full[li] = mesh.all_gather(Y, act, Split::cols, l, Pass::forward, "In");
    const auto wi = gather_weights(w_in[li], Split::rows, l, Pass::forward, "W_in");
    const auto wo = gather_weights(w_out[li], Split::cols, l, Pass::forward, "W_out");
    std::vector<Block> partial(n);
    for (size_t d = 0; d < n; ++d) {
      auto f = layer_forward(in_full[li][d], wi[d], wo[d]);
      result.flops_forward[li][d] = matmul_flops(f.tmp.rows, wi[d].rows, wi[d].cols) + matmul_flops(f.h.rows, wo[d].rows, wo[d].cols);
      tmp[li].push_back(std::move(f.tmp));
      h[li].push_back(std::move(f.h));
      partial[d] = std::move(f.out);
    }
    act = mesh.reduce_scatter(Y, partial, Split::cols, l, Pass::forward, "Out");
  }

  // Loss and its gradient, each device on its own block.
  std::vector<Block> d_act(n);
  for (size_t d = 0; d < n; ++d) {
    result.loss += half_squared_error(act[d], target[d]);
    d_act[d] = loss_gradient(act[d], target[d]);
  }

  // Backward pass (§5.1.4 backward, steps 2–12).
  std::vector<std::vector<Block>> g_in(static_cast<size_t>(L)), g_out(static_cast<size_t>(L));
  for (int l = L - 1; l >= 0; --l) {
    const auto li = static_cast<size_t>(l);
    const auto d_out = mesh.all_gather(Y, d_act, Split::cols, l, Pass::backward, "dOut");
    std::vector<Block> dw_out(n);
    for (size_t d = 0; d < n; ++d) dw_out[d] = matmul_tn(h[li][d], d_out[d]);
    g_out[li] = shard ? mesh.reduce_scatter(X, dw_out, Split::cols, l, Pass::backward, "dW_out")
                      : mesh.all_reduce(X, std::move(dw_out), l, Pass::backward, "dW_out");
    const auto wo = gather_weights(w_out[li], Split::cols, l, Pass::backward, "W_out");
    std::vector<Block> d_tmp(n), dw_in(n);
    for (size_t d = 0; d < n; ++d) {
      d_tmp[d] = relu_backward(matmul_nt(d_out[d], wo[d]), tmp[li][d]);
      dw_in[d] = matmul_tn(in_full[li][d], d_tmp[d]);
    }
    g_in[li] = shard ? mesh.reduce_scatter(X, dw_in, Split::rows, l, Pass::backward, "dW_in")
                     : mesh.all_reduce(X, std::move(dw_in), l, Pass::backward, "dW_in");
    const auto wi = gather_weights(w_in[li], Split::rows, l, Pass::backward, "W_in");
    std::vector<Block> d_in(n);
    for (size_t d = 0; d < n; ++d) {
      d_in[d] = matmul_nt(d_tmp[d], wi[d]);
      const long long rows = d_tmp[d].rows;  // dW_out = Hᵀ·dOut, dH = dOut·W_outᵀ, dW_in = Inᵀ·dTmp, dIn = dTmp·W_inᵀ
      result.flops_backward[li][d] = matmul_flops(h[li][d].cols, rows, d_out[d].cols) + matmul_flops(rows, d_out[d].cols, wo[d].rows) +
                                     matmul_flops(in_full[li][d].cols, rows, d_tmp[d].cols) + matmul_flops(rows, d_tmp[d].cols, wi[d].rows);
    }
    d_act = mesh.reduce_scatter(Y, d_in, Split::cols, l, Pass::backward, "dIn");
  }

  // Update: every device its own shard; then assemble the global weights, checking that replicas agree.
  result.updated = p.weights;
  for (size_t l = 0; l < static_cast<size_t>(L); ++l) {
    for (auto* which : {&result.updated.w_in[l], &result.updated.w_out[l]}) std::fill(which->values.begin(), which->values.end(), 0.0);
    Block seen_in = zeros(p.shape.d_model, p.shape.d_ff), seen_out = zeros(p.shape.d_ff, p.shape.d_model);
    auto place = [&](Block& global, Block& seen, const Block& part, long long r0, long long c0) {
      for (long long i = 0; i < part.rows; ++i)
        for (long long j = 0; j < part.cols; ++j) {
          double& slot = global.at(r0 + i, c0 + j);
          if (seen.at(r0 + i, c0 + j) != 0 && slot != part.at(i, j)) result.replicas_agree = false;
          slot = part.at(i, j);
          seen.at(r0 + i, c0 + j) = 1;
        }
    };
    for (size_t d = 0; d < n; ++d) {
      Block wi = w_in[l][d], wo = w_out[l][d];
      apply_update(wi, g_in[l][d], opt);
      apply_update(wo, g_out[l][d], opt);
      const long long wrow = shard ? rx[d] * wi.rows : 0, wcol = shard ? rx[d] * wo.cols : 0;
      place(result.updated.w_in[l], seen_in, wi, wrow, ry[d] * wi.cols);
      place(result.updated.w_out[l], seen_out, wo, ry[d] * wo.rows, wcol);
    }
  }
  return result;
}

std::vector<double> sent_elements(const ShardedStep& s, int layer, Pass pass) {
  std::vector<double> sum(static_cast<size_t>(s.devices), 0.0);
  for (const auto& c : s.collectives) {
    if (c.layer != layer || c.pass != pass) continue;
    for (size_t d = 0; d < sum.size(); ++d) sum[d] += c.sent_elements[d];
  }
  return sum;
}

}  // namespace scaling::sim
