#pragma once
// §3.2: what communication a sharded matmul needs. Given the shardings of both operands (the dimension
// they share is the contracting one), decide the case and list the collectives:
//   case 1: the contracting dimension is sharded in neither operand: multiply locally, no communication;
//   case 2: it is sharded in one operand only (or along different axes): AllGather it first;
//   case 3: both are sharded along the same axes: multiply locally into C{U_axes}, then AllReduce
//           (or ReduceScatter onto an output dimension);
//   case 4: a non-contracting dimension of each operand uses the same mesh axis: AllGather the operand
//           that is cheaper to gather over that axis first.
// Byte counts follow the collective cost model: V is what one device holds after an AllGather, or the
// unreduced array one device holds before an AllReduce or ReduceScatter.
#include <map>
#include <string>
#include <vector>

#include "scaling/cost/collectives.hpp"
#include "scaling/notation/sharding.hpp"

namespace scaling {

struct CommStep {
  Collective op;
  std::vector<std::string> axes;  // mesh axes it runs over
  std::string operand;            // the array it applies to (A's or B's name, or "C")
  double bytes;                   // V
  std::string before, after;      // shardings around it
};

struct MatmulPlan {
  int case_number;
  std::string contracting;        // name of the contracting dimension
  std::vector<CommStep> steps;
  Sharding result;
  double flops_per_device;        // 2 × product of the local sizes of every dimension involved
};

// `sizes` gives the global size of every dimension name. With `reduce_scatter_onto` naming an output
// dimension, case 3 ends with a ReduceScatter onto it instead of an AllReduce.
MatmulPlan plan_matmul(const Sharding& a, const Sharding& b, const Mesh& mesh, const std::map<std::string, double>& sizes,
                       Dtype dtype, const std::string& reduce_scatter_onto = "");

// The collective axes of a plan step, with per-mesh-axis wraparound.
std::vector<Axis> mesh_axes(const Mesh& mesh, const std::vector<std::string>& names,
                            const std::map<std::string, bool>& wraps);

}  // namespace scaling
