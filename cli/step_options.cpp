#include "step_options.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <tuple>

#include "scaling/base/format.hpp"
#include "limits.hpp"
#include "options.hpp"
#include "scaling/base/validate.hpp"
#include "output.hpp"
#include "scaling/hardware/topology.hpp"
#include "scaling/cost/calibrated.hpp"
#include "scaling/cost/layout.hpp"
#include "scaling/cost/gemm_efficiency.hpp"

namespace cli {

namespace {
// num / den sequences (both whole) for a message: a decimal down to a thousandth ("0.015625"), a fraction
// in lowest terms below it ("1/16,384", never "6.10352e-5").
std::string share_text(double num, double den) {
  const double x = num / den;
  if (x >= 1e-3) return scaling::format_number(x, 6);
  double a = num, b = den;
  while (b != 0) a = std::fmod(a, b), std::swap(a, b);  // a: gcd(num, den)
  return scaling::format_number(num / a) + "/" + scaling::format_number(den / a);
}
// A count as an int, under the same limit (and wording) as the option's own check (limits.hpp).
int whole(const std::string& option, const std::string& text, double limit) {
  return static_cast<int>(parse_size(option, text, limit));
}
}  // namespace

// Usage errors lead with the option (main.cpp points at the subcommand's --help); `sub` is not repeated.
scaling::System resolve_system([[maybe_unused]] const std::string& sub, const scaling::Chip& c, const MachineArgs& m) {
  using namespace scaling;
  const bool gpu_flags = !m.nodes.empty() || !m.gpus_per_node.empty() || !m.nvlink_bw.empty() || !m.ib_bw.empty();
  const bool tpu_flags = !m.slice.empty() || !m.pods.empty();
  if (!is_gpu(c) && !c.pod_shape.empty())
    // A TPU preset (it has slices): a GPU flag is named, as collective names it.
    for (const auto& [option, text] : {std::pair<const char*, const std::string&>{"--nodes", m.nodes},
                                       {"--gpus-per-node", m.gpus_per_node},
                                       {"--nvlink-bw", m.nvlink_bw},
                                       {"--ib-bw", m.ib_bw}})
      if (!text.empty())
        throw std::invalid_argument(fmt::format("{} '{}': the {} is a TPU: give --slice [--pods], not {}", option,
                                                scaling::escape_for_message(text), c.display, option));
  if (gpu_flags && tpu_flags)
    throw UsageError("--slice/--pods (TPU) and --nodes/--gpus-per-node (GPU) exclude each other: give one machine");
  if (!m.chips.empty() && (!m.slice.empty() || !m.nodes.empty()))
    throw UsageError(std::string("--chips and ") + (m.slice.empty() ? "--nodes" : "--slice") + ": give one of them, not both");
  if (is_gpu(c) || gpu_flags) {
    // A slice on a GPU is refused by the one slice-vs-chip check, as serve and collective refuse it.
    if (!m.slice.empty()) slice_on_chip(c, "--slice", m.slice);
    if (tpu_flags) throw UsageError("--pods '" + escape_for_message(m.pods) + "': " + escape_for_message(c.name) +
                                    " is a GPU: give --nodes N (and --gpus-per-node), not --pods");
    if (m.nodes.empty() && m.chips.empty()) throw UsageError("--nodes is needed: a GPU cluster takes --nodes N (or --chips N)");
    GpuOverrides o;
    if (!m.nvlink_bw.empty()) o.nvlink_bytes_per_s = parse_positive("--nvlink-bw", m.nvlink_bw);
    if (!m.ib_bw.empty()) o.ib_bytes_per_s = parse_positive("--ib-bw", m.ib_bw);
    int per_node = m.gpus_per_node.empty() ? c.gpus_per_node
                                           : whole("--gpus-per-node", m.gpus_per_node, limits::kMaxGpusPerNode);
    if (per_node < 1) throw UsageError("--gpus-per-node is needed: chip " + escape_for_message(c.name) + " has no node size");
    int nodes = 0;
    if (!m.chips.empty())
      std::tie(nodes, per_node) = gpu_nodes("--chips", m.chips, whole("--chips", m.chips, limits::kMaxChips), per_node);
    else
      nodes = whole("--nodes", m.nodes, limits::kMaxNodes);
    return for_option(m.nvlink_bw.empty() && m.ib_bw.empty() ? "--chip " + c.name : "--nvlink-bw/--ib-bw",
                      [&] { return gpu_cluster(c, nodes, per_node, o); });
  }
  if (!m.chips.empty()) {
    if (!m.pods.empty()) throw UsageError("--pods '" + escape_for_message(m.pods) + "': needs --slice (not --chips)");
    const int n = whole("--chips", m.chips, limits::kMaxChips);
    return for_option("--chips", [&] { return tpu_pods(c, {n}, 1); });
  }
  if (m.slice.empty()) throw UsageError("--slice, --nodes or --chips is needed: give --slice AxBxC (TPU), --nodes N (GPU) or --chips N");
  // The one slice-vs-chip check every slice-taking subcommand shares (strict shape, axes of the chip's pod).
  const auto slice = slice_on_chip(c, "--slice", m.slice);
  const int pods = m.pods.empty() ? 1 : whole("--pods", m.pods, limits::kMaxPods);
  // The whole machine's chips are checked before any degree is derived from them (a dp of 2^32 chips
  // would wrap to a negative int).
  const double machine = chips(slice) * pods;
  if (machine > limits::kMaxMachineChips)
    scaling::check::fail("--slice '" + scaling::escape_for_message(m.slice) + "' × --pods '" +
                             scaling::escape_for_message(m.pods) + "'",
                         "has " + scaling::format_number(machine) + " chips: " +
                             scaling::check::at_most_rule(limits::kMaxMachineChips));
  return for_option("--slice", [&] { return tpu_pods(c, slice.shape, pods); });
}

scaling::TrainingSetup resolve_setup(const StepArgs& a) {
  using namespace scaling;
  TrainingSetup s;
  s.weights = for_option("--weights", [&] { return parse_dtype(a.weights); });
  s.activations = s.weights;  // activations are kept in the compute dtype, which the weights set
  if (a.grads == "none") s.grads = std::nullopt;
  else s.grads = for_option("--grads", [&] { return parse_dtype(a.grads); });
  s.optimizer = for_option("--optimizer", [&] { return parse_optimizer(a.optimizer); });
  if (a.master != "none" && a.master != "fp32")
    scaling::check::fail(scaling::check::subject("--master", a.master), scaling::check::one_of_rule({"none", "fp32"}));
  s.fp32_master = a.master == "fp32";
  return s;
}

scaling::CostModel resolve_cost_model(const StepArgs& s, const MachineArgs& m, const scaling::System& system) {
  const auto model = for_option("--cost-model", [&] { return scaling::parse_cost_model(s.cost_model); });
  if (model == scaling::CostModel::book && system.slow.groups > 1) {
    // Named by what the user typed: --pods N (TPU), --nodes N or --chips N (GPU, more than one node).
    using scaling::check::subject;
    const std::string per_group = scaling::format_number(chips_per_group(system));
    if (!scaling::is_gpu(system.chip))
      throw std::invalid_argument(fmt::format(
          "--cost-model book with {}: the book's FSDP × TP model plans one slice: leave --pods out or give --pods 1",
          subject("--pods", m.pods)));
    if (!m.chips.empty())
      throw std::invalid_argument(fmt::format("--cost-model book with {}: the book's FSDP × TP model plans one node "
                                              "of {} GPUs: give --chips {} or fewer",
                                              subject("--chips", m.chips), per_group, per_group));
    throw std::invalid_argument(fmt::format(
        "--cost-model book with {}: the book's FSDP × TP model plans one node: give --nodes 1",
        subject("--nodes", m.nodes)));
  }
  return model;
}

bool parse_yes_no(const std::string& text) {
  if (text == "yes") return true;
  if (text == "no") return false;
  scaling::check::not_one_of(text, {"yes", "no"});
}

const scaling::PlanRule& recompute_rule(const std::string& text) {
  if (text == "none") return scaling::saved_rule("all");
  if (text == "selective") return scaling::saved_rule("matmuls");
  if (text == "full") return scaling::saved_rule("input");
  scaling::check::not_one_of(text, {"none", "selective", "full"});
}

void apply_switches(const StepArgs& s, scaling::Layout& l) {
  using namespace scaling;
  if (!s.vp.empty()) l.virtual_stages = whole("--vp", s.vp, 1024);
  if (!s.schedule.empty()) l.schedule = for_option("--schedule", [&] { return parse_schedule(s.schedule); });
  else if (l.virtual_stages > 1) l.schedule = Schedule::interleaved;
  if (l.virtual_stages > 1 && l.schedule != Schedule::interleaved)
    throw std::invalid_argument("--vp " + s.vp + ": virtual stages need --schedule interleaved");
  if (!s.sp.empty()) l.sequence_parallel = for_option("--sp", [&] { return parse_yes_no(s.sp); });
  if (!s.tp_overlap.empty()) l.tp_overlap = for_option("--tp-overlap", [&] { return parse_tp_overlap(s.tp_overlap); });
  if (!s.dp_overlap.empty()) l.dp_overlap = for_option("--dp-overlap", [&] { return parse_yes_no(s.dp_overlap); });
  if (!s.attention.empty()) l.attention = for_option("--attention", [&] { return parse_attention_kernel(s.attention); });
}

double resolve_seq(const StepArgs& s) { return s.seq.empty() ? 4096 : parse_size("--seq", s.seq); }

std::string seq_text(const StepArgs& s) {
  return fmt::format("{}--seq {}", s.seq.empty() ? "the default " : "", scaling::format_number(resolve_seq(s)));
}

Degrees resolve_degrees(const StepArgs& s, double chips) {
  Degrees d;
  if (!s.fsdp.empty() && !s.dp.empty()) throw UsageError("--fsdp X is --dp X --zero 3: give one of them");
  const std::string& dp_text = s.fsdp.empty() ? s.dp : s.fsdp;
  const char* dp_option = s.fsdp.empty() ? "--dp" : "--fsdp";
  d.given = !dp_text.empty() || !s.tp.empty() || !s.pp.empty();
  if (!s.tp.empty()) d.tensor = whole("--tp", s.tp, limits::kMaxChips);
  if (!s.pp.empty()) d.pipeline = whole("--pp", s.pp, limits::kMaxChips);
  // The messages name the degrees given, not the defaults ("--tp 3: must divide the 16 chips", not
  // "--tp 3 × --pp 1"); one not given is 1 (tensor, pipeline) or what the chips leave (data).
  std::string named;
  for (const auto& [option, text] : {std::pair<std::string, std::string>{dp_option, dp_text}, {"--tp", s.tp}, {"--pp", s.pp}})
    if (!text.empty()) named += (named.empty() ? "" : " × ") + option + " " + text;
  const std::string product_text = [&] {
    const int n = (!dp_text.empty()) + (!s.tp.empty()) + (!s.pp.empty());
    const double p = static_cast<double>(dp_text.empty() ? 1 : whole(dp_option, dp_text, limits::kMaxChips)) *
                     d.tensor * d.pipeline;
    return n > 1 ? fmt::format("{} = {}", named, scaling::format_number(p)) : named;
  }();
  if (!dp_text.empty()) {
    d.data = whole(dp_option, dp_text, limits::kMaxChips);
  } else {
    const double rest = chips / (static_cast<double>(d.tensor) * d.pipeline);
    if (rest != std::floor(rest) || rest < 1)
      throw std::invalid_argument(fmt::format("{}: must divide the {} chips", product_text, scaling::format_number(chips)));
    d.data = static_cast<int>(rest);
  }
  const double product = static_cast<double>(d.data) * d.tensor * d.pipeline;
  if (product != chips)
    throw std::invalid_argument(fmt::format("{}: must equal the {} chips{}", product_text, scaling::format_number(chips),
                                            s.tp.empty() || s.pp.empty()
                                                ? (s.tp.empty() && s.pp.empty() ? std::string(" (--tp and --pp, not given, are 1)")
                                                   : s.tp.empty()                 ? std::string(" (--tp, not given, is 1)")
                                                                                  : std::string(" (--pp, not given, is 1)"))
                                                : std::string()));
  return d;
}

void check_virtual_stages(const StepArgs& s, const Degrees& d, const scaling::Layout& l, double layers,
                          bool one_layout) {
  // One rule whether the pipeline is searched (plan) or filled (train): interleaving needs --pp.
  const std::string pp = s.pp.empty() ? std::string("without --pp") : fmt::format("with --pp {}", d.pipeline);
  if (s.schedule == "interleaved" && s.vp.empty() && (s.pp.empty() || d.pipeline < 2))
    throw std::invalid_argument(fmt::format(
        "--schedule interleaved {}: the interleaved schedule needs a pipeline: give --pp 2 or more", pp));
  // One layout takes one v, and interleaving needs two or more (Megatron-LM's rule; with one it is 1F1B);
  // plan's search tries every v that splits the layers.
  if (one_layout && s.schedule == "interleaved" && l.virtual_stages < 2)
    throw std::invalid_argument(fmt::format(
        "--schedule interleaved {}: one layout needs --vp 2 or more (with one virtual stage a pipeline stage it is "
        "1f1b; plan given fewer than two degrees searches every --vp)",
        s.vp.empty() ? std::string("without --vp") : fmt::format("with --vp {}", l.virtual_stages)));
  if (s.vp.empty() || l.virtual_stages <= 1) return;
  if (s.pp.empty() || d.pipeline < 2)
    throw std::invalid_argument(fmt::format("--vp {} {}: virtual stages interleave a pipeline: give --pp 2 or more",
                                            l.virtual_stages, pp));
  // Megatron-LM's rule (scaling::interleaves_evenly): every stage holds the same layers, v chunks of them.
  if (!scaling::interleaves_evenly(layers, d.pipeline, l.virtual_stages)) {
    const double low = std::floor(layers / d.pipeline), heavy = layers - low * d.pipeline;
    const std::string stages =
        heavy == 0 ? fmt::format("each of the {} stages holds {} layers", d.pipeline, scaling::format_number(low))
                   : fmt::format("{} of the {} stages hold {} layers and {} hold {}", scaling::format_number(heavy),
                                 d.pipeline, scaling::format_number(low + 1),
                                 scaling::format_number(d.pipeline - heavy), scaling::format_number(low));
    throw std::invalid_argument(fmt::format(
        "--vp {} {}: the {} layers do not split into {} × {} = {} virtual stages of whole layers ({}); the "
        "interleaved schedule needs the layers, or the layers plus 1 or 2 slots for the embedding and the loss "
        "(Megatron-LM's rule), divisible by --pp × --vp",
        l.virtual_stages, pp, scaling::format_number(layers), d.pipeline, l.virtual_stages,
        scaling::format_number(static_cast<double>(d.pipeline) * l.virtual_stages), stages));
  }
}

std::string GivenDegrees::text() const {
  std::string out;
  auto add = [&](const std::string& option, int value) {
    if (value > 0) out += (out.empty() ? "" : ", ") + fmt::format("{} {}", option, value);
  };
  add(data_option, data);
  add("--tp", tensor);
  add("--pp", pipeline);
  return out;
}

GivenDegrees given_degrees(const StepArgs& s) {
  if (!s.fsdp.empty() && !s.dp.empty()) throw UsageError("--fsdp X is --dp X --zero 3: give one of them");
  GivenDegrees g;
  g.data_option = s.fsdp.empty() ? "--dp" : "--fsdp";
  const std::string& dp_text = s.fsdp.empty() ? s.dp : s.fsdp;
  if (!dp_text.empty()) g.data = whole(g.data_option, dp_text, limits::kMaxChips);
  if (!s.tp.empty()) g.tensor = whole("--tp", s.tp, limits::kMaxChips);
  if (!s.pp.empty()) g.pipeline = whole("--pp", s.pp, limits::kMaxChips);
  return g;
}

bool fixes_every_degree(const GivenDegrees& g) { return g.count() >= 2; }

DefaultDegrees default_degrees(const scaling::TransformerConfig& model, const scaling::System& system,
                               const scaling::Layout& base, double batch_tokens, const StepArgs& s,
                               scaling::CostModel cost_model) {
  using scaling::format_number;
  const double seq_len = resolve_seq(s);
  const double n = chips(system);
  DefaultDegrees out;
  out.degrees.data = static_cast<int>(n);
  const double seqs = batch_tokens / seq_len;  // whole under the calibrated model (check_batch)
  auto keeps_rule = [&](double data) { return std::fmod(seqs, data * base.microbatches) == 0; };
  // The ideal and book models reason per token (§5): every chip a data replica, whatever the batch.
  if (cost_model != scaling::CostModel::calibrated || keeps_rule(n)) return out;
  const int total = static_cast<int>(n);  // the machine's chips fit an int (resolve_system's limit)
  const double group = chips_per_group(system);
  // The data degree from the largest down; for each, the tensor degree from the largest that fits one
  // slice or node and divides the heads, the rest pipelined; the first split with a placement wins.
  // The divisors of the chips, largest first (found in √chips steps: a machine may hold 2^30 chips).
  std::vector<int> divisors;
  for (int i = 1; static_cast<double>(i) * i <= total; ++i)
    if (total % i == 0) {
      divisors.push_back(i);
      if (i != total / i) divisors.push_back(total / i);
    }
  std::sort(divisors.rbegin(), divisors.rend());
  for (int data : divisors) {
    if (!keeps_rule(data)) continue;
    const int rest = total / data;
    for (int tensor = std::min(rest, static_cast<int>(group)); tensor >= 1; --tensor) {
      if (rest % tensor != 0 || std::fmod(model.q_heads, tensor) != 0) continue;
      const int pipeline = rest / tensor;
      if (pipeline > model.layers || scaling::placements(system, data, tensor, pipeline, base).empty()) continue;
      out.degrees = {false, data, tensor, pipeline};
      out.why = fmt::format(
          "no degree given: --dp {} (every chip) breaks the whole-sequence rule (data degree × microbatches "
          "divides the {} sequences of {} in --batch-tokens {}); chose "
          "dp {} × tp {} × pp {}: the largest data degree that keeps it, the other chips tensor-parallel inside a "
          "{}{} (`scaling plan` searches for the fastest)",
          total, format_number(seqs), seq_text(s), format_number(batch_tokens), data, tensor, pipeline,
          scaling::is_gpu(system.chip) ? "node" : "slice", pipeline > 1 ? ", then pipelined" : "");
      return out;
    }
  }
  throw std::invalid_argument(fmt::format(
      "no degree given, and no split of the {} chips keeps the whole-sequence rule (data degree × microbatches "
      "divides the {} sequence{} of {} in --batch-tokens {}; the tensor degree "
      "inside a {} dividing the {} heads; the pipeline at most the {} layers): give a larger batch or fewer chips",
      format_number(n), format_number(seqs), seqs == 1 ? "" : "s", seq_text(s), format_number(batch_tokens),
      scaling::is_gpu(system.chip) ? "node" : "slice", format_number(model.q_heads), format_number(model.layers)));
}

void check_data_degree(const StepArgs& s, const Degrees& d, int microbatches, double batch_tokens, double seq_len,
                       scaling::CostModel cost_model) {
  using scaling::format_number;
  const bool named = !s.dp.empty() || !s.fsdp.empty();
  const std::string option = !s.fsdp.empty() ? "--fsdp" : "--dp";
  // Not given: the data degree is what the chips left (--tp × --pp filled the rest), and the message says so.
  // Only the degrees the user typed are named ("the chips over --tp 2", not "× --pp 1").
  std::string over;
  for (const auto& [o, text] : {std::pair<std::string, std::string>{"--tp", s.tp}, {"--pp", s.pp}})
    if (!text.empty()) over += (over.empty() ? " over " : " × ") + o + " " + text;
  const std::string subject = named ? fmt::format("{} {}", option, d.data)
                                    : fmt::format("--dp {} (the chips{})", d.data, over);
  // Every model: the microbatches split the batch's tokens evenly (step_terms' rule, named by the option).
  if (std::fmod(batch_tokens, microbatches) != 0)
    throw std::invalid_argument(fmt::format("--microbatches {}: must divide --batch-tokens {} (each microbatch takes "
                                            "whole tokens)",
                                            microbatches, format_number(batch_tokens)));
  // The calibrated model's rules (planner.cpp's Fixed::whole); the ideal and book models reason per token.
  if (cost_model != scaling::CostModel::calibrated) {
    // Accumulation splits each replica's share: with more than one microbatch, every replica's microbatch is
    // whole tokens too (data degree × microbatches divides the batch). One microbatch keeps the ideal and book
    // models' per-token reading of a data degree (§5's B/N tokens per chip need not be whole). The calibrated
    // model's whole-sequence rules below imply it; more microbatches than tokens is the step model's refusal.
    if (microbatches > 1 && static_cast<double>(d.data) * microbatches <= batch_tokens &&
        std::fmod(batch_tokens, static_cast<double>(d.data) * microbatches) != 0)
      throw std::invalid_argument(fmt::format("--microbatches {}: each replica's microbatch would hold {} tokens "
                                              "(--batch-tokens {} over {} × {} microbatches): must be whole tokens",
                                              microbatches, format_number(batch_tokens / d.data / microbatches, 6),
                                              format_number(batch_tokens), subject, microbatches));
    return;
  }
  const double seqs = batch_tokens / seq_len;  // whole (check_batch)
  if (std::fmod(seqs, d.data) != 0)
    throw std::invalid_argument(fmt::format(
        "{}: each replica would hold {} sequences of {} (--batch-tokens {} is {} {}): must divide them "
        "(a replica trains on whole sequences)",
        subject, share_text(seqs, d.data), seq_text(s), format_number(batch_tokens),
        format_number(seqs), seqs == 1 ? "sequence" : "sequences"));
  if (std::fmod(seqs, static_cast<double>(d.data) * microbatches) != 0)
    throw std::invalid_argument(fmt::format(
        "--microbatches {}: each replica's microbatch would hold {} sequences of {} ({} per replica of {}): "
        "must be a whole number of sequences",
        microbatches, share_text(seqs, static_cast<double>(d.data) * microbatches), seq_text(s),
        share_text(seqs, d.data), subject));
}

void check_given_degrees(const StepArgs& s, const MachineArgs& m, const scaling::System& system,
                         const scaling::TransformerConfig& model, scaling::CostModel cost_model) {
  using scaling::format_number;
  const GivenDegrees g = given_degrees(s);
  if (g.pipeline > 1 && cost_model == scaling::CostModel::book)
    throw std::invalid_argument(fmt::format("--pp {}: the book's cost model has no pipeline (§5.1.4's FSDP × TP): "
                                            "leave --pp out, or use --cost-model calibrated or ideal",
                                            g.pipeline));
  if (g.pipeline > model.layers)
    throw std::invalid_argument(fmt::format("--pp {}: exceeds the {} layers (a pipeline stage holds whole layers)",
                                            g.pipeline, format_number(model.layers)));
  if (g.tensor == 0) return;
  const double group = chips_per_group(system);
  if (g.tensor > group) {
    // Where the group's size came from: the option typed, or the preset.
    const bool gpu = scaling::is_gpu(system.chip);
    std::string from;
    if (gpu && !m.gpus_per_node.empty()) from = "--gpus-per-node " + scaling::escape_for_message(m.gpus_per_node);
    else if (gpu && !m.chips.empty()) from = "--chips " + scaling::escape_for_message(m.chips);
    else if (gpu) from = "the " + system.chip.name + " preset's node";
    else if (!m.slice.empty()) from = "--slice " + scaling::escape_for_message(m.slice);
    else from = "--chips " + scaling::escape_for_message(m.chips);
    throw std::invalid_argument(fmt::format(
        "--tp {}: tensor parallelism stays inside one {} (it never crosses {}), and a {} here has {} {} ({}): give "
        "--tp {} or less",
        g.tensor, gpu ? "node" : "slice", system.slow.name, gpu ? "node" : "slice", format_number(group),
        gpu ? "GPUs" : "chips", from, format_number(group)));
  }
  if (std::fmod(model.q_heads, g.tensor) != 0)
    throw std::invalid_argument(fmt::format("--tp {}: must divide the model's {} attention heads (tensor parallelism "
                                            "splits the heads)",
                                            g.tensor, format_number(model.q_heads)));
}

void check_batch(double batch_tokens, const StepArgs& s, scaling::CostModel cost_model) {
  using scaling::format_number;
  const double seq_len = resolve_seq(s);
  // Every model: a step trains on at least one sequence (planner.cpp's fix()).
  if (batch_tokens < seq_len)
    throw std::invalid_argument(fmt::format("--batch-tokens {} is less than one sequence of {}",
                                            format_number(batch_tokens), seq_text(s)));
  // The calibrated model: whole sequences (the ideal and book models reason per token, §5).
  if (cost_model == scaling::CostModel::calibrated && std::fmod(batch_tokens, seq_len) != 0)
    throw std::invalid_argument(fmt::format("--batch-tokens {} is not a whole number of sequences of {} ({})",
                                            format_number(batch_tokens), seq_text(s),
                                            format_number(batch_tokens / seq_len, 8)));
}

std::vector<int> parse_zero_stages(const std::string& text) {
  std::vector<int> out;
  for (const auto& part : split_list("--zero", text, limits::kMaxZeroStages)) {
    if (part.size() != 1 || part[0] < '0' || part[0] > '3')
      scaling::check::fail(scaling::check::subject("--zero", text), "expected ZeRO stages 0, 1, 2 or 3");
    out.push_back(part[0] - '0');
  }
  return out;
}

int parse_zero_stage(const std::string& text) {
  const auto stages = parse_zero_stages(text);
  if (stages.size() != 1)
    scaling::check::fail(scaling::check::subject("--zero", text),
                         "one layout takes one stage (plan searches a list when fewer than two degrees are given)");
  return stages.front();
}

void check_one_saved_rule(const std::string& text) {
  // A list is plan's search (as --zero's): one layout takes one rule, said before the rule is parsed.
  if (text.find(',') != std::string::npos)
    scaling::check::fail(scaling::check::subject("--saved", text),
                         "one layout takes one rule (plan searches a list when fewer than two degrees are given)");
}

scaling::Layout resolve_layout(const StepArgs& s, const scaling::TransformerConfig& model) {
  using namespace scaling;
  Layout l;
  if (!s.microbatches.empty()) l.microbatches = whole("--microbatches", s.microbatches, limits::kMaxMicrobatches);
  if (!s.fsdp.empty() && !s.zero.empty() && s.zero != "3")
    throw std::invalid_argument("--fsdp with --zero '" + escape_for_message(s.zero) + "': FSDP is ZeRO stage 3 (use --dp)");
  if (!s.zero.empty()) l.zero = parse_zero_stage(s.zero);
  if (!s.zero_scope.empty()) l.zero_scope = for_option("--zero-scope", [&] { return parse_zero_scope(s.zero_scope); });
  if (!s.recompute.empty() && !s.saved.empty())
    throw UsageError("--recompute names one of --saved's rules: give one of them");
  check_one_saved_rule(s.saved);
  if (!s.recompute.empty()) l.saved = for_option("--recompute", [&] { return recompute_rule(s.recompute); });
  else l.saved = for_option("--saved", [&] { return parse_plan_rule(s.saved.empty() ? "D+2F" : s.saved, model); });
  apply_switches(s, l);
  return l;
}

nlohmann::json memory_parts_json(const scaling::MemoryPerChip& m) {
  return {{"params", m.params},       {"grads", m.grads},     {"optimizer", m.optimizer},
          {"master", m.master},       {"activations", m.activations}, {"buffers", m.working},
          {"allocator_reserve", m.reserve}};
}

namespace {
constexpr const char* kSwitch = "the calibrated model's switches: use --cost-model calibrated";
constexpr const char* kWhole = "§5.1.4's step takes the whole batch at once";
constexpr ModelReads kRead{};
constexpr ModelReads kSwitchIgnored{Reads::ignores, When::always, "", kSwitch};
// A calibrated switch: read by the calibrated model only (layout.hpp's list), on the layouts where `when` holds.
constexpr OptionReads calibrated_switch(const char* option, When when, const char* why) {
  return {option, {Reads::reads, when, "", why}, kSwitchIgnored, kSwitchIgnored};
}
constexpr ModelReads kBf16Training{Reads::ignores, When::always, "", "a training step's matmuls run in bf16"};
constexpr ModelReads kScope{Reads::reads, When::zero_scope, "",
                            "no ZeRO stage here shards over data replicas across the slow network"};

// In --help's order (train_plan.cpp), then plan's own --max-microbatches, then the chip's figures.
constexpr OptionReads kOptionReads[] = {
    {"--dp", kRead, kRead, kRead},
    {"--tp", kRead, kRead, kRead},
    {"--pp", kRead, kRead, kRead},  // the book refuses a pipeline (check_given_degrees): it never ignores one
    {"--fsdp", kRead, kRead, kRead},
    {"--microbatches", kRead, kRead, {Reads::fixes, When::always, "1", kWhole}},
    {"--zero", kRead, kRead, {Reads::fixes, When::always, "3", "§5.1.4's step is ZeRO-3, FSDP"}},
    {"--zero-scope", kScope, kScope, {Reads::ignores, When::always, "", "§5.1.4 plans one slice or node"}},
    {"--saved", kRead, kRead, kRead},  // the book: for memory only
    {"--seq",
     kRead,
     {Reads::reads, When::rerun, "",
      "no --saved rule of this run reruns attention, and the ideal model counts attention FLOPs only in a rerun"},
     {Reads::ignores, When::always, "", "§5.1.4's step counts no attention"}},
    calibrated_switch("--vp", When::pipeline, "no pipeline here"),
    calibrated_switch("--schedule", When::pipeline, "no pipeline here"),
    calibrated_switch("--sp", When::tensor_group, "no tensor group here"),
    calibrated_switch("--tp-overlap", When::tensor_group, "no tensor group here"),
    calibrated_switch("--dp-overlap", When::dp_reduce,
                      "no data-parallel gradient reduce to overlap here: one replica, or ZeRO-3, whose reduce "
                      "overlaps either way"),
    {"--recompute", kRead, kRead, kRead},
    calibrated_switch("--attention", When::always, ""),
    {"--weights", kRead, kRead, kRead},
    {"--grads", kRead, kRead, kRead},
    {"--optimizer", kRead, kRead, kRead},
    {"--master", kRead, kRead, kRead},
    {"--max-microbatches", kRead, kRead, {Reads::fixes, When::always, "1", kWhole}},
    // The chip's figures (chip_options.cpp), given by train and plan as `extra`. The calibrated model times
    // with the chip's measured or published rates where they exist (cost/calibrated.cpp's chip_calibration);
    // the step's MFU still divides by the --flops given.
    {"--flops",
     {Reads::reads, When::peak_rates, "",
      "the chip's matmuls run at its measured or published rates, calibration.matmuls in the JSON; figures stated "
      "against the peak, such as the MFU, still use it"},
     kRead,
     kRead},
    {"--hbm-bw",
     {Reads::reads, When::hbm_rates, "",
      "the chip's memory-bound kernels run at the rates measured on it, calibration.memory_kernels in the JSON"},
     kRead,  // the optimizer's HBM time, in the step's maximum
     {Reads::ignores, When::always, "", "§5.1.4's step counts FLOPs and network bytes, no HBM time"}},
    {"--flops-int8", kBf16Training, kBf16Training, kBf16Training},
};

const ModelReads& reads_of(const OptionReads& row, scaling::CostModel m) {
  return m == scaling::CostModel::calibrated ? row.calibrated : m == scaling::CostModel::ideal ? row.ideal : row.book;
}

// Whether `when` holds for the run: on the layout timed, or (plan's search, no layout) on some layout.
bool holds(When when, const ReadContext& c) {
  if (when == When::always) return true;
  if (when == When::rerun) return c.reruns;
  if (when == When::peak_rates) return c.rates == nullptr || c.rates->rates_read_peak_flops;
  if (when == When::hbm_rates) return c.rates == nullptr || c.rates->rates_read_hbm_bw;
  if (c.timed == nullptr) return true;
  const scaling::Layout& l = *c.timed;
  const int data = scaling::data_degree(l);
  const int zero = scaling::zero_stage_run(l);  // the stage calibrated.cpp times
  switch (when) {
    case When::tensor_group: return scaling::tensor_degree(l) > 1;
    case When::pipeline: return scaling::pipeline_degree(l) > 1;
    case When::dp_reduce: return data > 1 && zero < 3;
    case When::zero_scope: return l.slow.data > 1 && l.zero >= 1;
    default: return true;
  }
}

// Whether `text` (one value or a list, as given) asks only for `value`: "3", "3,3" for ZeRO-3; "1" for one
// microbatch (read as numbers: "01" is 1).
bool asks_only(const std::string& text, const std::string& value) {
  size_t start = 0;
  while (true) {
    const size_t end = text.find(',', start);
    const std::string part = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    char* stop = nullptr;
    const double v = std::strtod(part.c_str(), &stop);
    if (part.empty() || *stop != '\0' || v != std::strtod(value.c_str(), nullptr)) return false;
    if (end == std::string::npos) return true;
    start = end + 1;
  }
}
}  // namespace

std::span<const OptionReads> option_reads() { return kOptionReads; }

std::vector<std::string> ignored_options(const StepArgs& s, scaling::CostModel cost_model, const ReadContext& context,
                                         const std::vector<std::pair<std::string, std::string>>& extra) {
  std::vector<std::pair<std::string, std::string>> given = {
      {"--dp", s.dp},          {"--tp", s.tp},
      {"--pp", s.pp},          {"--fsdp", s.fsdp},
      {"--microbatches", s.microbatches}, {"--zero", s.zero},
      {"--zero-scope", s.zero_scope},     {"--saved", s.saved},
      {"--seq", s.seq},        {"--vp", s.vp},
      {"--schedule", s.schedule},         {"--sp", s.sp},
      {"--tp-overlap", s.tp_overlap},     {"--dp-overlap", s.dp_overlap},
      {"--recompute", s.recompute},       {"--attention", s.attention}};
  given.insert(given.end(), extra.begin(), extra.end());
  std::vector<std::string> out;
  for (const auto& row : option_reads()) {
    const auto it = std::find_if(given.begin(), given.end(), [&](const auto& g) { return g.first == row.option; });
    if (it == given.end() || it->second.empty()) continue;
    const ModelReads& r = reads_of(row, cost_model);
    const bool ignored = r.how == Reads::ignores || (r.how == Reads::fixes && !asks_only(it->second, r.value)) ||
                         (r.how == Reads::reads && !holds(r.when, context));
    if (ignored) out.emplace_back(row.option);
  }
  return out;
}

std::string ignored_note(const std::vector<std::string>& ignored, scaling::CostModel cost_model) {
  if (ignored.empty()) return {};
  // Options with the same reason share it: "--sp, --attention (the calibrated model's switches: ...)".
  std::string text;
  for (size_t i = 0; i < ignored.size(); ++i) {
    const auto& rows = option_reads();
    const auto row = std::find_if(rows.begin(), rows.end(), [&](const auto& r) { return ignored[i] == r.option; });
    const std::string why = row == rows.end() ? "" : reads_of(*row, cost_model).why;
    std::string next_why;
    if (i + 1 < ignored.size()) {
      const auto next = std::find_if(rows.begin(), rows.end(), [&](const auto& r) { return ignored[i + 1] == r.option; });
      if (next != rows.end()) next_why = reads_of(*next, cost_model).why;
    }
    text += (text.empty() || text.back() == ' ' ? "" : ", ") + ignored[i];
    if (i + 1 == ignored.size() || next_why != why) text += fmt::format(" ({}); ", why);
  }
  text.resize(text.size() - 2);  // the last "; "
  return fmt::format("note: the {} cost model ignores {}", to_string(cost_model), text);
}

void as_timed(scaling::Planned& p, scaling::CostModel cost_model) {
  if (cost_model != scaling::CostModel::book) return;
  p.layout.zero = 3;
  p.layout.microbatches = 1;
}

namespace {
// The cards with measured tables, for a note: "h100, a100".
std::string measured_list() {
  std::string out;
  for (const auto& card : scaling::measured_cards()) out += (out.empty() ? std::string() : std::string(", ")) + card;
  return out;
}
}  // namespace

nlohmann::json notes_json(const std::vector<std::string>& notes) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& note : notes) out.push_back(note.substr(std::string("note: ").size()));
  return out;
}

std::vector<std::pair<std::string, std::string>> chip_figures_given(const ChipArgs& chip) {
  return {{"--flops", chip.flops}, {"--hbm-bw", chip.hbm_bw}, {"--flops-int8", chip.flops_int8}};
}

std::string bubble_note(const scaling::Planned& p) {
  const int stages = scaling::pipeline_degree(p.layout);
  if (stages <= 1 || !(p.terms.t_bubble_s > 0.5 * p.terms.step_s)) return {};
  return fmt::format("note: the pipeline bubble is {:.0f}% of the step: {} microbatch{} through {} stages; more "
                     "microbatches (a larger batch where each replica's are already as small as they go), "
                     "interleaving (--vp) or fewer stages shrink it",
                     100 * p.terms.t_bubble_s / p.terms.step_s, p.layout.microbatches,
                     p.layout.microbatches == 1 ? "" : "es", stages);
}

std::string positions_note(const scaling::TransformerConfig& model, double seq_len, const std::string& what) {
  if (model.max_learned_seq <= 0 || seq_len <= model.max_learned_seq) return {};
  return fmt::format("note: {} is longer than the model's learned position table ({} positions: the config's "
                     "n_positions or max_position_embeddings); the model as configured cannot take that many tokens",
                     what, scaling::format_number(model.max_learned_seq));
}

// Whether the chip's name is a preset's: the calibrated model finds every published or measured figure it
// has for a chip (GEMM tables or rules, attention rates, copy-kernel rates, the MFU record) by that name.
bool is_preset_name(const std::string& name) {
  for (const auto& p : scaling::chips())
    if (p.name == name) return true;
  return false;
}

nlohmann::json calibration_json(const scaling::Chip& chip) {
  const scaling::ChipCalibration c = scaling::chip_calibration(chip);
  const auto cards = scaling::measured_cards();
  const bool measured = std::find(cards.begin(), cards.end(), chip.name) != cards.end();
  const scaling::MfuRecord* rec = scaling::published_mfu_record(chip.name);
  return {{"chip", chip.name},
          {"measured", measured},
          {"preset", is_preset_name(chip.name)},
          {"matmuls", c.matmul_source},
          {"attention", c.attention_source},
          {"memory_kernels", c.hbm_source},
          {"mfu_record", rec ? rec->source : fmt::format("none published for '{}'", chip.name)}};
}

std::string calibration_note(const scaling::Chip& chip) {
  const auto cards = scaling::measured_cards();
  if (std::find(cards.begin(), cards.end(), chip.name) != cards.end())
    return fmt::format("note: calibrated rates: the measured tables of the {} (validation/gemm/{}.json)",
                       scaling::escape_for_message(chip.name), scaling::escape_for_message(chip.name));
  const scaling::ChipCalibration c = scaling::chip_calibration(chip);
  if (is_preset_name(chip.name))
    return fmt::format("note: calibrated rates: matmuls from {}; memory kernels from {} (JSON: calibration, with the "
                       "attention rates and MFU record)",
                       c.matmul_source, c.hbm_source);
  std::string presets;
  for (const auto& p : scaling::chips()) presets += (presets.empty() ? std::string() : std::string(", ")) + p.name;
  return fmt::format("note: no calibration for '{}' (the calibrated model finds measured and published rates by chip "
                     "name: the presets {}; measured tables: {}): matmuls from {}; memory kernels from {} (JSON: "
                     "calibration, with the attention rates and MFU record)",
                     scaling::escape_for_message(chip.name), presets, measured_list(), c.matmul_source, c.hbm_source);
}

nlohmann::json step_json(const scaling::Planned& p, const scaling::System& s, scaling::CostModel cost_model,
                         const scaling::TransformerConfig& model) {
  using namespace scaling;
  const auto& [l, t] = p;
  nlohmann::json j{{"dp", data_degree(l)},
          {"tp", tensor_degree(l)},
          {"pp", pipeline_degree(l)},
          {"dp_slow", l.slow.data},
          {"pp_slow", l.slow.pipeline},
          {"microbatches", l.microbatches},
          {"zero", l.zero},
          // One slice or node: ZeRO's scope is the same either way, printed as the default ("all").
          {"zero_scope", s.slow.groups == 1 ? to_string(ZeroScope::all) : to_string(l.zero_scope)},
          {"saved", label(l.saved)},
          {"saved_rule", resolved_rule(l.saved, model)},
          {"axes", describe_axes(p, s)},
          {"step_s", t.step_s},
          {"bytes_per_chip", t.memory.total},
          {"memory_per_chip", memory_parts_json(t.memory)},
          {"t_math_s", t.t_math_s},
          {"t_hbm_s", t.t_hbm_s},
          {"t_bubble_s", t.t_bubble_s},
          {"t_ici_s", t.t_ici_s},
          {"t_dcn_s", t.t_dcn_s},
          {"bound", bound_label(t.bound, s)},
          {"mfu", t.mfu},
          {"schedule", to_string(l.schedule)},
          {"virtual_stages", l.virtual_stages},
          {"sequence_parallel", l.sequence_parallel},
          {"tp_overlap", to_string(l.tp_overlap)},
          {"dp_overlap", l.dp_overlap},
          {"attention", to_string(l.attention)},
          {"calibrated",
           {{"t_matmul_s", t.calibrated.t_matmul_s},
            {"t_attention_s", t.calibrated.t_attention_s},
            {"t_vector_s", t.calibrated.t_vector_s},
            {"t_recompute_s", t.calibrated.t_recompute_s},
            {"t_tp_s", t.calibrated.t_tp_s},
            {"t_pipeline_send_s", t.calibrated.t_pipeline_send_s},
            {"t_dp_exposed_s", t.calibrated.t_dp_exposed_s},
            {"t_optimizer_s", t.calibrated.t_optimizer_s},
            {"t_latency_s", t.calibrated.t_latency_s},
            {"matmul_efficiency", t.calibrated.matmul_efficiency}}}};
  if (cost_model != CostModel::calibrated) {
    // Only the calibrated model reads the switches (option_reads): the other models' layout leaves them out
    // rather than echo a request they did not time.
    for (const char* key : {"calibrated", "schedule", "virtual_stages", "sequence_parallel", "tp_overlap", "dp_overlap",
                            "attention"})
      j.erase(key);
  }
  if (cost_model == CostModel::book) {
    // §5.1.4's utilisation counts the two MLP matmuls' FLOPs only (planner.cpp's book_planned), not the 6N
    // model FLOPs of `mfu` under the other models: another key, so that no reader compares the two.
    j.erase("mfu");
    j["mlp_flops_utilisation"] = t.mfu;
  } else if (cost_model == CostModel::calibrated) {
    // The highest MFU a published run reached on this chip: a predicted MFU above it is optimistic.
    if (const MfuRecord* rec = published_mfu_record(s.chip.name))
      j["mfu_record"] = {{"mfu", rec->mfu}, {"source", rec->source}, {"exceeded", t.mfu > rec->mfu}};
  }
  return j;
}

std::string step_inputs(const ChipArgs& c, const MachineArgs& m, const std::string& batch_tokens) {
  auto options = chip_overrides(c);
  options.insert(options.begin(), {{"--chip", c.chip}, {"--slice", m.slice},
                                   {"--pods", m.pods}, {"--chips", m.chips}, {"--nodes", m.nodes},
                                   {"--gpus-per-node", m.gpus_per_node}, {"--nvlink-bw", m.nvlink_bw},
                                   {"--ib-bw", m.ib_bw}, {"--batch-tokens", batch_tokens}});
  return given(options);
}

std::string layout_inputs(const StepArgs& s) {
  const std::string g = given({{"--dp", s.dp}, {"--fsdp", s.fsdp}, {"--tp", s.tp}, {"--pp", s.pp},
                               {"--microbatches", s.microbatches}});
  return g.empty() ? g : ", " + g;
}

void require_finite_json(const nlohmann::json& j, const std::string& inputs, const std::string& key) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) require_finite_json(v, inputs, key.empty() ? k : key + "." + k);
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) require_finite_json(j[i], inputs, key + "[" + std::to_string(i) + "]");
  } else if (j.is_number_float() && !std::isfinite(j.get<double>())) {
    throw std::invalid_argument(key + " is not a finite number for " + inputs + ": out of range");
  }
}

std::string model_title(const std::string& model, const std::string& config) {
  return model.empty() ? scaling::escape_for_message(config) : model;
}

}  // namespace cli
