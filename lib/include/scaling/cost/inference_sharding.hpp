#pragma once
// §7.3.2, §7.6.2–7.6.3 and exercise 7.7: how far decode can be model-sharded, and 1-D against 2-D
// weight-stationary sharding of the MLP. Sizes: B tokens in the batch, D = d_model, F = d_ff; W_ici per link.
#include <vector>

namespace scaling {

// §7.3.2: with Y-way model sharding of a bf16 MLP matmul, weight loading takes 2DF/(Y·W_hbm) and moving the
// activations 2BD/W_ici; ICI overtakes HBM when Y > F/(B·β), β = W_hbm/W_ici.
double model_parallel_limit(double F, double batch, double hbm_bytes_per_s, double ici_bytes_per_s);

// §7.6.3: a collective over `shards` chips is latency-bound when its per-shard bytes take less than one
// hop's latency on a link: bytes/shards/W < t_hop. The largest such buffer is shards·W·t_hop.
double latency_bound_buffer_bytes(double shards, double ici_bytes_per_s, double hop_latency_s);
bool latency_bound(double bytes, double shards, double ici_bytes_per_s, double hop_latency_s);
// The sharding degree above which activations of B·D elements of `bytes_per_element` are latency-bound:
// Y > B·D·bytes / (W·t_hop) (§7.6.3's "Y > BD/45,000" for int8 on a v5e).
double latency_bound_shards(double batch, double D, double bytes_per_element, double ici_bytes_per_s,
                            double hop_latency_s);

// Exercise 7.7, on N = X·YZ chips with C FLOPs/s each. FLOPs: 4BDF/(N·C) (two matmuls of 2BDF).
double mlp_t_math_s(double batch, double D, double F, double chips, double flops_per_s);
// 2-D weight-stationary comms as the book counts them: AllGather and ReduceScatter of 2BD/X bytes over
// the two axes YZ (each at 2·W), AllReduce of 2BF/YZ bytes over X (twice an AllGather):
//   T = 2BD/(X·W) + 4BF/(YZ·W).
double weight_stationary_2d_comms_s(double batch, double D, double F, double X, double YZ, double ici_bytes_per_s);
// The X minimising it at fixed N = X·YZ: X* = sqrt(N·D/(2F)) (= sqrt(N/8) for F = 4D), and the minimum
// 4·sqrt(2)·B·sqrt(D·F/N)/W (= sqrt(128)·BD/(sqrt(N)·W) for F = 4D).
double weight_stationary_2d_best_x(double D, double F, double chips);
double weight_stationary_2d_min_comms_s(double batch, double D, double F, double chips, double ici_bytes_per_s);
// 1-D (Megatron) comms as the book takes them from §5: AllGather + ReduceScatter of 2BD bytes over three
// axes, 4BD/(3W), independent of N.
double weight_stationary_1d_comms_s(double batch, double D, double ici_bytes_per_s);
// The chip count above which the optimal 2-D layout moves fewer bytes than the 1-D one:
// 4·sqrt(2)·sqrt(DF/N) < 4D/3  <=>  N > 18·F/D (= 72 for F = 4D).
double weight_stationary_2d_crossover_chips(double D, double F);

}  // namespace scaling
