#pragma once
// Terms: what a cost model answers about one Layout on one System — times per step, what bounds it, and
// memory per chip by part. Output only: nothing here is an input to a model.
namespace scaling {

// Which cost model produced the terms. `book`: the chapter's own equations, to reproduce the book (§5.1.4's
// FSDP × TP equations for training, §7.1.5's step for decoding). `ideal`: the exact lower bound (perfect
// overlap of compute and communication, peak FLOPs, exact ring bytes; planner.hpp, inference.hpp).
// `calibrated`: what a real run achieves, each constant with its source (serving: inference.hpp).
enum class CostModel { book, ideal, calibrated };
const char* to_string(CostModel m);

enum class Bound { compute, memory, bubble, ici, dcn };
const char* to_string(Bound b);

struct MemoryPerChip {
  double params = 0, grads = 0, optimizer = 0, master = 0, activations = 0;
  double total = 0;
};

struct Terms {
  double t_math_s = 0, t_hbm_s = 0, t_ici_s = 0, t_dcn_s = 0, t_bubble_s = 0;
  double step_s = 0;
  Bound bound = Bound::compute;
  MemoryPerChip memory;
  double mfu = 0;           // 6·N_active·B / (chips · C · step) (the book model: of its own FLOPs)
  double m_x = 0, m_y = 0;  // the book model's axis counts M_X, M_Y (0 in the exact model)
};

// The order the planner ranks layouts by, and the tie rule it states: faster first; on equal step time,
// less memory per chip, then less time on the networks (more headroom); on a full tie, the first found
// in the search's order (for placements of the same degrees: placements(), layout.hpp).
bool better(const Terms& a, const Terms& b);
inline constexpr const char* kTieRule =
    "faster step; on a tie, less memory per chip, then less network time, then the first in search order";

}  // namespace scaling
