#pragma once
// §12.5 "Rooflines for LLM Scaling on GPUs": when each kind of parallelism stays compute-bound on a GPU
// cluster, for the MLP block x[B, D] ·_D W_in[D, F] ·_F W_out[F, D], B the global batch in tokens.
// C is the chip's peak FLOPs/s; W_collective is the GPU's NVLink egress inside a node and the node's egress
// per node (G · W_ib) across nodes. Each function returns its terms; the critical values follow from
// T_math = T_comms. Perfect overlap, peak FLOPs, no latency, as in the chapter.
#include "scaling/hardware/system.hpp"

namespace scaling {

struct GpuRates {
  double c_flops_per_s = 0;   // C
  double w_gpu_bytes_per_s = 0;   // one GPU's NVLink egress
  double w_node_bytes_per_s = 0;  // one node's scale-out egress: G · W_ib
  int gpus_per_node = 1;
};
// From a GPU System (gpu_cluster): C = the chip's bf16 peak. Throws std::invalid_argument otherwise.
GpuRates gpu_rates(const System& s);
double w_collective(const GpuRates& r, bool across_nodes);  // W_gpu or W_node

struct RooflineTerms {
  double t_math_s = 0, t_comms_s = 0;
  bool compute_bound() const { return t_math_s >= t_comms_s; }
};

// §12.5.1 data parallelism / ZeRO over X GPUs, per layer in the backward pass (an AllReduce of the two
// weight gradients, or RS + AG):  T_math = 8·k·B·D·F/(X·C),  T_comms = 8·E·D·F/W · (X_n − 1)/X_n·ρ
// where E/k = total / active experts (1/1 dense) and ρ = 1 for the chapter's large-X rule; `small_x_nodes`
// > 0 applies the ring's (X_n − 1)/X_n over that many nodes (§12.5.1 "What happens when X is small?").
RooflineTerms gpu_dp_terms(const GpuRates& r, double b_tokens, double d, double f, double x_gpus, bool across_nodes,
                       double experts = 1, double active = 1, int small_x_nodes = 0);
// The per-GPU token batch above which DP is compute-bound: (E/k)·C/W·((X_n − 1)/X_n when small_x_nodes).
double gpu_dp_critical_tokens_per_gpu(const GpuRates& r, bool across_nodes, double experts = 1, double active = 1,
                                  int small_x_nodes = 0);

// §12.5.2 tensor parallelism over Y GPUs, forward pass: T_math = 4·B·D·F/(Y·C), T_comms = 4·B·D/W
// (AllGather + ReduceScatter of the activations); compute-bound while Y < F·W/C.
RooflineTerms gpu_tp_terms(const GpuRates& r, double b_tokens, double d, double f, double y, bool across_nodes);
double gpu_tp_max_degree(const GpuRates& r, double f, bool across_nodes);  // F·W/C
// Spanning exactly two nodes (the chapter's "extra 2X"): compute-bound while F > (C/W_node)·(Y − G), so
// Y < G + F·W_node/C.
double gpu_tp_two_node_max_degree(const GpuRates& r, double f);

// §12.5.3 expert parallelism over Z GPUs (Z > G, k experts per token):
//   T_math = 4·B·k·D·F/(Z·C),  T_comms = 4·B·D·(Z − G)/(W_node·Z) · min(G·k/Z, 1)
RooflineTerms gpu_ep_terms(const GpuRates& r, double b_tokens, double d, double f, double z, double k);
// The least F that keeps it compute-bound: α(Z − G)/k when G·k ≥ Z, else G·α(Z − G)/Z (→ G·α), α = C/W_node.
double gpu_ep_min_f(const GpuRates& r, double z, double k);

// §12.5.4 pipeline parallelism: N_MB microbatches over N_stages stages, each hop 2·B·D/(W·N_MB):
//   T_total = 2·B·D/(W·N_MB) · (N_MB + N_stages − 2);  the chapter's per-layer figure 1.5·2·B·D/(W·N_layers).
double gpu_pp_total_comms_s(double b_tokens, double d, double w, double microbatches, double stages);
double gpu_pp_per_layer_comms_book_s(double b_tokens, double d, double w, double layers);

}  // namespace scaling
