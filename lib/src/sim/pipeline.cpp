#include "scaling/sim/pipeline.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

namespace scaling::sim {

namespace {

// Sends `msg` from stage `from` `offset` places along the pipeline axis; returns what arrives.
Block hand_over(const Topology& topo, int from, int offset, Block msg, PipelineRun& run) {
  const int S = device_count(topo);
  std::vector<Block> blocks(static_cast<size_t>(S), shape_only(0, 0));
  blocks[static_cast<size_t>(from)] = std::move(msg);
  const auto traffic = ppermute(topo, {Shift{0, offset, &blocks}});
  run.sent_elements[static_cast<size_t>(from)] += traffic.total_link_elements;
  run.total_link_elements += traffic.total_link_elements;
  run.transfers += traffic.messages;
  const int to = ((from + offset) % S + S) % S;
  return std::move(blocks[static_cast<size_t>(to)]);
}

}  // namespace

void validate(const Topology& stages, const MlpShape& shape, const PipelineOptions& options) {
  validate(shape);
  if (stages.shape.size() != 1) throw std::invalid_argument("pipeline: the stages must form a mesh of one axis");
  if (stages.links == Direction::uni)
    throw std::invalid_argument("pipeline: links must run both ways (gradients go back one hop to the previous stage)");
  const int S = device_count(stages);
  if (shape.layers % S != 0)
    throw std::invalid_argument("layers = " + std::to_string(shape.layers) + ": must be a multiple of the " +
                                std::to_string(S) + " stages");
  if (options.microbatches < 1 || shape.batch % options.microbatches != 0)
    throw std::invalid_argument("microbatches = " + std::to_string(options.microbatches) +
                                ": must be at least 1 and divide the batch " + std::to_string(shape.batch));
}

PipelineRun pipeline_step(const Topology& stages, const MlpProblem& p, const Optimizer& opt, const PipelineOptions& options) {
  validate(stages, p.shape, options);
  const int S = device_count(stages), M = options.microbatches, L = p.shape.layers, per_stage = L / S;
  const long long b = p.shape.batch / M;
  const auto s_n = static_cast<size_t>(S), m_n = static_cast<size_t>(M);
  PipelineRun run;
  run.sent_elements.assign(s_n, 0.0);

  // The schedule: start times from the dependencies, each stage running its operations in order.
  const double flops_fwd = 4.0 * static_cast<double>(b) * static_cast<double>(p.shape.d_model) * static_cast<double>(p.shape.d_ff) * per_stage;
  const double flops_bwd = 8.0 * static_cast<double>(b) * static_cast<double>(p.shape.d_model) * static_cast<double>(p.shape.d_ff) * per_stage;
  const double t_f = 1.0, t_b = flops_bwd / flops_fwd;
  std::vector<std::vector<double>> end_f(s_n, std::vector<double>(m_n)), end_b = end_f;
  std::vector<double> stage_free(s_n, 0.0);
  for (size_t s = 0; s < s_n; ++s)
    for (size_t m = 0; m < m_n; ++m) {
      const double start = std::max(stage_free[s], s > 0 ? end_f[s - 1][m] : 0.0);
      end_f[s][m] = stage_free[s] = start + t_f;
      run.schedule.push_back({static_cast<int>(s), static_cast<int>(m), false, start, t_f});
    }
  if (options.backward_runs)
    for (size_t s = s_n; s-- > 0;)
      for (size_t m = m_n; m-- > 0;) {
        const double start = std::max(stage_free[s], s + 1 < s_n ? end_b[s + 1][m] : 0.0);
        end_b[s][m] = stage_free[s] = start + t_b;
        run.schedule.push_back({static_cast<int>(s), static_cast<int>(m), true, start, t_b});
      }
  std::stable_sort(run.schedule.begin(), run.schedule.end(), [](const PipelineOp& a, const PipelineOp& c) {
    return a.start != c.start ? a.start < c.start : a.stage < c.stage;
  });
  for (const auto& op : run.schedule) {
    run.makespan = std::max(run.makespan, op.start + op.duration);
    run.busy += op.duration;
  }
  run.bubble_fraction = 1 - run.busy / (S * run.makespan);

  // Execution in schedule order. inbox[s][m]: the activations (forward) or gradient (backward) waiting.
  std::vector<std::vector<Block>> act_inbox(s_n, std::vector<Block>(m_n)), grad_inbox = act_inbox;
  for (size_t m = 0; m < m_n; ++m)
    act_inbox[0][m] = sub_block(p.x, static_cast<long long>(m) * b, static_cast<long long>(m + 1) * b, 0, p.shape.d_model);
  // saved[s][m][j]: layer j of stage s on microbatch m: its input and forward values.
  struct Saved {
    Block in;
    LayerForward fwd;
  };
  std::vector<std::vector<std::vector<Saved>>> saved(s_n, std::vector<std::vector<Saved>>(m_n));
  MlpWeights grads;
  for (int l = 0; l < L; ++l) {
    const auto li = static_cast<size_t>(l);
    grads.w_in.push_back(zeros(p.weights.w_in[li].rows, p.weights.w_in[li].cols));
    grads.w_out.push_back(zeros(p.weights.w_out[li].rows, p.weights.w_out[li].cols));
  }
  for (const auto& op : run.schedule) {
    const auto s = static_cast<size_t>(op.stage), m = static_cast<size_t>(op.microbatch);
    if (!op.backward) {
      Block x = std::move(act_inbox[s][m]);
      for (int j = 0; j < per_stage; ++j) {
        const auto l = s * static_cast<size_t>(per_stage) + static_cast<size_t>(j);
        auto fwd = layer_forward(x, p.weights.w_in[l], p.weights.w_out[l]);
        Block out = fwd.out;
        saved[s][m].push_back({std::move(x), std::move(fwd)});
        x = std::move(out);
      }
      if (s + 1 < s_n) {
        act_inbox[s + 1][m] = hand_over(stages, op.stage, +1, std::move(x), run);
      } else {
        const Block t = sub_block(p.target, static_cast<long long>(m) * b, static_cast<long long>(m + 1) * b, 0, p.shape.d_model);
        run.loss += half_squared_error(x, t);
        grad_inbox[s][m] = loss_gradient(x, t);
      }
    } else {
      Block d = std::move(grad_inbox[s][m]);
      for (int j = per_stage - 1; j >= 0; --j) {
        const auto l = s * static_cast<size_t>(per_stage) + static_cast<size_t>(j);
        const Saved& sv = saved[s][m][static_cast<size_t>(j)];
        LayerBackward back;
        if (options.linearize_at_output) {  // the book's vjp at the layer's output
          const auto refwd = layer_forward(sv.fwd.out, p.weights.w_in[l], p.weights.w_out[l]);
          back = layer_backward(sv.fwd.out, refwd, p.weights.w_in[l], p.weights.w_out[l], d);
        } else {
          back = layer_backward(sv.in, sv.fwd, p.weights.w_in[l], p.weights.w_out[l], d);
        }
        add_into(grads.w_in[l], back.d_w_in);
        add_into(grads.w_out[l], back.d_w_out);
        d = std::move(back.d_in);
      }
      if (s > 0) grad_inbox[s - 1][m] = hand_over(stages, op.stage, -1, std::move(d), run);
    }
  }

  run.updated = p.weights;
  if (options.backward_runs)
    for (size_t l = 0; l < static_cast<size_t>(L); ++l) {
      apply_update(run.updated.w_in[l], grads.w_in[l], opt);
      apply_update(run.updated.w_out[l], grads.w_out[l], opt);
    }
  return run;
}

}  // namespace scaling::sim
