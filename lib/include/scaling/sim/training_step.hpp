#pragma once
// §5.1.1–§5.1.4: one training step of the MLP stack (mlp_stack.hpp) executed on the virtual mesh under data
// parallelism, FSDP, tensor parallelism and mixed FSDP + tensor parallelism, on real numbers. Every
// collective is run by mesh_sim's run_on over the mesh's links, so the elements each device sends are
// counted, per layer and per pass, for comparison with §5's table of communication per layer.
//
// The mesh's axes are split into X axes (the batch; FSDP also shards the weights' D dimension over them)
// and Y axes (tensor parallelism: the activations' D and the weights' F dimension). With nx = |X| and
// ny = |Y| devices along them, a device at rank (rx, ry) holds
//   In[B_X, D_Y] (rows rx, columns ry),  W_in[D_X, F_Y],  W_out[F_Y, D_X]   (D_X only when sharded)
// and runs the §5.1.4 algorithm, which specialises to the other three (ny = 1: DP or FSDP; nx = 1: TP):
//   forward:  In[B_X, D] = AllGather_Y(In);  W_in[D, F_Y] = AllGather_X(W_in[D_X, F_Y]);
//             Tmp = In · W_in;  H = ReLU(Tmp);  W_out[F_Y, D] = AllGather_X(W_out[F_Y, D_X]);
//             Out[B_X, D_Y] = ReduceScatter_Y(H · W_out)
//   backward: dOut[B_X, D] = AllGather_Y(dOut[B_X, D_Y]);  dW_out = ReduceScatter_X(H ·_B dOut)
//             (AllReduce_X when the weights are replicated);  W_out = AllGather_X(…) again;
//             dTmp = (dOut · W_outᵀ) ⊙ [Tmp > 0];  dW_in = ReduceScatter_X(In ·_B dTmp) (or AllReduce_X);
//             W_in = AllGather_X(…) again;  dIn[B_X, D_Y] = ReduceScatter_Y(dTmp · W_inᵀ)
// The backward pass reuses the forward pass's AllGather_Y of In (§5.1.3 step 5, §5.1.4 step 7: "can be
// shared"). Every layer, the first included, computes and reduces dIn, so each layer communicates the same.
// The loss is summed over devices outside the mesh (§5.1.1 notes that AllReduce is not needed for the
// gradients); only the per-layer collectives are counted. Then every device updates its own shard with
// its own gradient shard.
#include <string>
#include <string_view>
#include <vector>

#include "scaling/cost/training.hpp"
#include "scaling/sim/mesh_sim.hpp"
#include "scaling/sim/mlp_stack.hpp"

namespace scaling::sim {

// The strategies and passes are the cost model's (cost/training.hpp): one Strategy, one Pass, one to_string.
using scaling::Pass;
using scaling::Strategy;

struct MeshLayout {
  std::vector<int> x_axes;  // batch (and FSDP) axes
  std::vector<int> y_axes;  // tensor-parallel axes
  bool shard_weights = false;
};
// dp, fsdp: every axis is X; tp: every axis is Y; fsdp_tp: axis 0 is X, the others Y.
MeshLayout layout_for(Strategy s, const Topology& topo);
int group_size(const Topology& topo, const std::vector<int>& axes);  // devices along `axes` (1 for none)


struct CollectiveRecord {
  int layer;
  Pass pass;
  Collective op;
  std::string tensor;               // what it moves: "In", "W_in", "dW_out", …
  std::vector<int> axes;
  double group_elements;            // E: elements of the whole array in one group
  std::vector<double> sent_elements;  // per device
};

struct ShardedStep {
  MlpWeights updated;  // assembled from the devices' shards
  double loss = 0;
  int devices = 0;
  bool replicas_agree = true;  // every copy of a replicated weight ended equal
  std::vector<CollectiveRecord> collectives;
  // FLOPs each device's matmuls did, per layer: [layer][device], 2·m·k·n per m×k by k×n product.
  std::vector<std::vector<double>> flops_forward, flops_backward;
};

// Throws std::invalid_argument when the axes do not split the mesh into X and Y, or a dimension is not a
// multiple of the devices that shard it (B and, sharded, D by nx; D and F by ny; a replicated weight's
// elements D·F/ny by nx for the AllReduce).
void validate(const Topology& topo, const MeshLayout& layout, const MlpShape& shape);
ShardedStep sharded_step(const Topology& topo, const MeshLayout& layout, const MlpProblem& p, const Optimizer& opt);

// Elements each device sent in the collectives of one layer and pass.
std::vector<double> sent_elements(const ShardedStep& s, int layer, Pass pass);

}  // namespace scaling::sim
