#pragma once
#include <string_view>
// Terms: what a cost model answers about one Layout on one System — times per step, what bounds it, and
// memory per chip by part. Output only: nothing here is an input to a model.
namespace scaling {

// Which cost model produced the terms. `ideal`: the planner's lower bound (perfect overlap of compute
// and communication, peak FLOPs, exact ring bytes; planner.hpp) — called `exact` before, renamed so that
// nobody reads "exact" as "accurate". `book`: §5.1.4's FSDP × TP equations, to reproduce the book.
// `calibrated`: what a real step achieves (cost/calibrated.hpp): achieved matmul throughput, non-matmul
// work, attention FLOPs, exposed collectives with latency, pipeline schedules. Serving takes the same three
// models (decode_terms, inference.hpp): book is §7.1.5's step, calibrated its achieved rates.
enum class CostModel { ideal, book, calibrated };
const char* to_string(CostModel m);
// "calibrated", "ideal" or "book"; throws std::invalid_argument naming the text (and, for "exact", its new name).
CostModel parse_cost_model(std::string_view text);

enum class Bound { compute, memory, bubble, ici, dcn };
const char* to_string(Bound b);

struct MemoryPerChip {
  double params = 0, grads = 0, optimizer = 0, master = 0, activations = 0;
  double total = 0;
  // Calibrated only (0 in the others), included in total: ZeRO-3's gathered layers and the collective
  // buffers real runs hold, and on GPUs what the allocator reserves beyond the live bytes, its fragments
  // (cost/calibrated.hpp: allocator_fragmentation). The parts sum to total.
  double working = 0;
  double reserve = 0;
};

// Where the calibrated model's step goes (cost/calibrated.hpp has each formula and source); all 0 in the
// ideal and book models. Times are per step on the busiest pipeline stage.
struct CalibratedParts {
  double t_matmul_s = 0;       // the weight matmuls, forward and backward, at the achieved rate of each shape
  double t_attention_s = 0;    // the attention core (QKᵀ and the product with V), forward and backward
  double t_vector_s = 0;       // norms, residual adds, activations, softmax, embedding and loss: HBM bytes at achieved rates
  double t_recompute_s = 0;    // what the recompute policy reruns (full: the forward; selective: the attention core)
  double t_tp_s = 0;           // tensor-parallel collectives on the critical path (what tp_overlap leaves exposed, plus σ of what it hides)
  double t_pipeline_send_s = 0;  // activations and their gradients between stages
  double t_dp_exposed_s = 0;   // the data-parallel / ZeRO traffic the overlap rule leaves exposed
  double t_optimizer_s = 0;    // the optimizer update: its bytes at the achieved HBM rate
  double t_latency_s = 0;      // per-hop / per-message latency inside the collective terms above
  double matmul_efficiency = 0;  // achieved / peak over the layer matmuls (forward shapes)
};

struct Terms {
  double t_math_s = 0, t_hbm_s = 0, t_ici_s = 0, t_dcn_s = 0, t_bubble_s = 0;
  double step_s = 0;
  Bound bound = Bound::compute;
  MemoryPerChip memory;
  double mfu = 0;           // 6·N_active·B / (chips · C · step) (the book model: of its own FLOPs)
  double m_x = 0, m_y = 0;  // the book model's axis counts M_X, M_Y (0 in the other models)
  CalibratedParts calibrated;
};

// The order the planner ranks layouts by, and the tie rule it states: faster first; on equal step time,
// less memory per chip, then less time on the networks (more headroom); on a full tie, the first found
// in the search's order (for placements of the same degrees: placements(), layout.hpp).
bool better(const Terms& a, const Terms& b);
inline constexpr const char* kTieRule =
    "faster step; on a tie, less memory per chip, then less network time, then the first in search order";

}  // namespace scaling
