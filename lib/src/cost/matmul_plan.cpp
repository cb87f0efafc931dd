#include "scaling/cost/matmul_plan.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>

namespace scaling {

namespace {

double local_bytes(const Sharding& s, const Mesh& mesh, const std::map<std::string, double>& sizes, Dtype dtype) {
  std::vector<double> shape;
  for (const auto& d : s.dims) {
    const auto it = sizes.find(d.name);
    if (it == sizes.end()) throw std::invalid_argument("no size given for dimension " + d.name);
    shape.push_back(it->second);
  }
  return evaluate(s, mesh, shape, dtype).bytes_per_device;
}

ShardedDim& dim(Sharding& s, const std::string& name) {
  for (auto& d : s.dims)
    if (d.name == name) return d;
  throw std::invalid_argument(to_string(s) + " has no dimension " + name);
}

std::set<std::string> non_contracting_axes(const Sharding& s, const std::string& contracting) {
  std::set<std::string> out;
  for (const auto& d : s.dims)
    if (d.name != contracting) out.insert(d.axes.begin(), d.axes.end());
  return out;
}

// Removes `axes` from the non-contracting dimensions of `s` (or from `only_dim` when given).
void drop_axes(Sharding& s, const std::set<std::string>& axes, const std::string& only_dim) {
  for (auto& d : s.dims) {
    if (!only_dim.empty() && d.name != only_dim) continue;
    d.axes.erase(std::remove_if(d.axes.begin(), d.axes.end(), [&](const std::string& a) { return axes.count(a) > 0; }),
                 d.axes.end());
  }
}

}  // namespace

MatmulPlan plan_matmul(const Sharding& a_in, const Sharding& b_in, const Mesh& mesh,
                       const std::map<std::string, double>& sizes, Dtype dtype, const std::string& reduce_scatter_onto) {
  if (!a_in.unreduced.empty() || !b_in.unreduced.empty())
    throw std::invalid_argument("matmul inputs must be reduced (no {U_...})");
  Sharding a = a_in, b = b_in;
  const std::string a_name = a.array.empty() ? "A" : a.array, b_name = b.array.empty() ? "B" : b.array;

  std::vector<std::string> shared;
  for (const auto& d : a.dims)
    for (const auto& e : b.dims)
      if (d.name == e.name) shared.push_back(d.name);
  if (shared.size() != 1)
    throw std::invalid_argument(to_string(a) + " · " + to_string(b) + ": expected exactly one shared (contracting) dimension, found " +
                                std::to_string(shared.size()));
  MatmulPlan plan{};
  plan.contracting = shared[0];
  const std::string& j = plan.contracting;

  auto gather = [&](Sharding& s, const std::string& operand, const std::set<std::string>& axes, const std::string& d) {
    const std::string before = to_string(s);
    drop_axes(s, axes, d);
    plan.steps.push_back({Collective::all_gather, {axes.begin(), axes.end()}, operand, local_bytes(s, mesh, sizes, dtype),
                          before, to_string(s)});
  };

  // Case 2: the contracting dimension is sharded differently in the two operands.
  if (dim(a, j).axes != dim(b, j).axes) {
    plan.case_number = 2;
    const auto ja = dim(a, j).axes, jb = dim(b, j).axes;
    if (!ja.empty()) gather(a, a_name, {ja.begin(), ja.end()}, j);
    if (!jb.empty()) gather(b, b_name, {jb.begin(), jb.end()}, j);
  }

  // Case 4: both operands shard a non-contracting dimension along the same mesh axis.
  std::set<std::string> conflict;
  const auto axes_a = non_contracting_axes(a, j), axes_b = non_contracting_axes(b, j);
  std::set_intersection(axes_a.begin(), axes_a.end(), axes_b.begin(), axes_b.end(),
                        std::inserter(conflict, conflict.begin()));
  if (!conflict.empty()) {
    if (plan.case_number == 0) plan.case_number = 4;
    Sharding a_gathered = a, b_gathered = b;
    drop_axes(a_gathered, conflict, "");
    drop_axes(b_gathered, conflict, "");
    const bool gather_a = local_bytes(a_gathered, mesh, sizes, dtype) <= local_bytes(b_gathered, mesh, sizes, dtype);
    Sharding& target = gather_a ? a : b;
    const std::string& target_name = gather_a ? a_name : b_name;
    for (const auto& d : std::vector<ShardedDim>(target.dims)) {
      if (d.name == j) continue;
      std::set<std::string> mine;
      for (const auto& x : d.axes)
        if (conflict.count(x)) mine.insert(x);
      if (!mine.empty()) gather(target, target_name, mine, d.name);
    }
  }

  // The local product: C keeps every non-contracting dimension with its sharding.
  Sharding c{"C", {}, {}};
  for (const auto& d : a.dims)
    if (d.name != j) c.dims.push_back(d);
  for (const auto& d : b.dims)
    if (d.name != j) c.dims.push_back(d);
  const auto j_axes = dim(a, j).axes;
  double flops = 2;
  for (const auto& d : a.dims) flops *= sizes.at(d.name) / shards(d, mesh);
  for (const auto& d : b.dims)
    if (d.name != j) flops *= sizes.at(d.name) / shards(d, mesh);
  plan.flops_per_device = flops;

  if (!j_axes.empty()) {
    // Case 3: partial sums over the contracting axes.
    if (plan.case_number == 0) plan.case_number = 3;
    c.unreduced = j_axes;
    const std::string before = to_string(c);
    const double v = local_bytes(c, mesh, sizes, dtype);
    c.unreduced.clear();
    if (reduce_scatter_onto.empty()) {
      plan.steps.push_back({Collective::all_reduce, j_axes, "C", v, before, to_string(c)});
    } else {
      auto& target = dim(c, reduce_scatter_onto);
      target.axes.insert(target.axes.end(), j_axes.begin(), j_axes.end());
      local_bytes(c, mesh, sizes, dtype);  // checks divisibility of the scattered dimension
      plan.steps.push_back({Collective::reduce_scatter, j_axes, "C", v, before, to_string(c)});
    }
  } else if (plan.case_number == 0) {
    plan.case_number = 1;
  }
  plan.result = c;
  return plan;
}

std::vector<Axis> mesh_axes(const Mesh& mesh, const std::vector<std::string>& names,
                            const std::map<std::string, bool>& wraps) {
  std::vector<Axis> out;
  for (const auto& n : names) {
    const auto w = wraps.find(n);
    out.push_back({mesh.size_of(n), w != wraps.end() && w->second});
  }
  return out;
}

}  // namespace scaling
