// `scaling collective`: the exact cost of a collective over some axes of a TPU slice (§3.2–3.3), or over
// every GPU of a GPU cluster (§12: the ring over a node's NVLink switch, hierarchical across InfiniBand).
#include <fmt/format.h>

#include <memory>

#include "../options.hpp"
#include "../step_options.hpp"
#include "../output.hpp"
#include "modules.hpp"
#include "scaling/base/format.hpp"
#include "scaling/cost/collectives.hpp"

namespace cli {

namespace {

struct Args {
  ChipArgs chip;
  std::string slice, op, axes, bytes, wrap = "auto";
  MachineArgs gpu;  // --nodes, --gpus-per-node, --nvlink-bw, --ib-bw
  std::string nvlink_latency, ib_latency, algorithm;
  bool wrap_given = false;
  bool sharp = false;  // in-network AllReduce (§12.4.1)
  bool json = false;
};

// The GPU options given, by name, for refusing them on a TPU.
std::vector<std::pair<std::string, std::string>> gpu_options(const Args& a) {
  return {{"--nodes", a.gpu.nodes},         {"--gpus-per-node", a.gpu.gpus_per_node},
          {"--nvlink-bw", a.gpu.nvlink_bw}, {"--ib-bw", a.gpu.ib_bw},
          {"--nvlink-latency", a.nvlink_latency}, {"--ib-latency", a.ib_latency},
          {"--algorithm", a.algorithm}};
}

void run_gpu(const Args& a, const scaling::Chip& chip) {
  using namespace scaling;
  auto refuse = [&](const std::string& option, const std::string& text) {
    if (!text.empty())
      throw std::invalid_argument(option + " '" + escape_for_message(text) + "': the " + chip.display +
                                  " is a GPU: give --nodes N [--gpus-per-node G], not " + option);
  };
  // The one slice-vs-chip check: a GPU has no ICI slices, worded as serve, train and plan word it.
  if (!a.slice.empty()) slice_on_chip(chip, "--slice", a.slice);
  refuse("--axes", a.axes);
  if (a.wrap_given) refuse("--wrap", a.wrap);
  if (a.gpu.nodes.empty()) throw UsageError("collective: a GPU cluster needs --nodes N");
  const Collective op = parse_collective(a.op);
  if (a.sharp && !a.algorithm.empty())
    throw std::invalid_argument("--sharp with --algorithm '" + escape_for_message(a.algorithm) +
                                "': SHARP is its own algorithm (in-network reduction); give one of the two");
  if (a.sharp && op != Collective::all_reduce)
    throw std::invalid_argument("--sharp: only all-reduce has an in-network (SHARP) form (§12.4.1), not " +
                                std::string(name(op)));
  const auto algorithm = a.sharp               ? CollectiveAlgorithm::sharp
                         : a.algorithm.empty() ? CollectiveAlgorithm::ring
                                               : parse_collective_algorithm(a.algorithm);
  System s = resolve_system("collective", chip, a.gpu);
  if (!a.nvlink_latency.empty()) s.fast[0].hop_latency_s = parse_positive("--nvlink-latency", a.nvlink_latency);
  if (!a.ib_latency.empty()) s.slow.latency_s = parse_positive("--ib-latency", a.ib_latency);
  if (algorithm == CollectiveAlgorithm::tree && op != Collective::all_reduce)
    throw std::invalid_argument("--algorithm 'tree': only all-reduce has a tree form (§12), not " +
                                std::string(name(op)));
  if (algorithm == CollectiveAlgorithm::tree && s.slow.groups < 2)
    throw std::invalid_argument("--algorithm 'tree': the tree runs across nodes: give --nodes 2 or more");
  const double v = parse_size("--bytes", a.bytes);
  const auto c = gpu_collective_cost(op, s, v, algorithm);
  std::vector<std::pair<std::string, std::string>> options{{"--bytes", a.bytes}};
  if (a.sharp) options.push_back({"--sharp", "yes"});
  for (const auto& o : gpu_options(a)) options.push_back(o);
  const int g = s.fast[0].size, m = s.slow.groups;
  Report r;
  r.label_width = 28;
  r.heading = fmt::format("{} of {} over {} GPUs: {} node{} of {} {} (NVLink inside, InfiniBand between){}",
                          op == Collective::all_to_all ? "AllToAll" : name(op), format_quantity(v, "B"), g * m, m,
                          m > 1 ? "s" : "", g, chip.display,
                          algorithm == CollectiveAlgorithm::tree    ? ", tree across nodes"
                          : algorithm == CollectiveAlgorithm::sharp ? ", in-network reduction (SHARP)"
                                                                    : "");
  auto tier = [&](const std::string& key, const std::string& label, const TierCost& t) {
    r.outputs.push_back({key + "_bytes_per_gpu", label + " bytes in per GPU", t.bytes_per_gpu, "B"});
    r.outputs.push_back({key + "_t_bandwidth_s", label + " bandwidth", t.t_bandwidth_s, "s"});
    r.outputs.push_back({key + "_t_latency_s", label + " latency", t.t_latency_s, "s",
                         fmt::format("({} steps)", t.steps)});
    r.outputs.push_back({key + "_steps", "", double(t.steps), kCount});
  };
  r.outputs.push_back({"time_s", "time", c.time_s, "s",
                       op == Collective::all_to_all ? "(tiers overlap: the larger)" : "(NVLink + InfiniBand stages)"});
  // The effective AllReduce ("algorithm") bandwidth the chapter quotes: bytes over time.
  if (op == Collective::all_reduce && c.time_s > 0)
    r.outputs.push_back({"algo_bytes_per_s", "algorithm bandwidth", v / c.time_s, "B/s", "(bytes / time)"});
  tier("nvlink", "NVLink", c.nvlink);
  tier("infiniband", "InfiniBand", c.infiniband);
  r.outputs.push_back({"algorithm", "", std::string(name(algorithm))});
  r.outputs.push_back({"gpus", "", double(g * m), kCount});
  r.outputs.push_back({"nodes", "", double(m), kCount});
  r.outputs.push_back({"gpus_per_node", "", double(g), kCount});
  r.outputs.push_back({"latency_bound", "", c.latency_bound});
  r.outputs.push_back({"", "bound by", std::string(c.latency_bound ? "latency" : "bandwidth")});
  emit(r, a.json, given(options));
}

void run(const Args& a) {
  using namespace scaling;
  const Chip chip = resolve_chip(a.chip);
  if (is_gpu(chip)) return run_gpu(a, chip);
  if (a.sharp)
    throw std::invalid_argument("--sharp: the " + chip.display +
                                " is a TPU; in-network reduction is a feature of GPU switches (§12.4.1)");
  for (const auto& [option, text] : gpu_options(a))
    if (!text.empty())
      throw std::invalid_argument(option + " '" + escape_for_message(text) + "': the " + chip.display +
                                  " is a TPU: give --slice and --axes, not " + option);
  if (a.slice.empty()) throw UsageError("collective: a TPU needs --slice AxBxC (and --axes)");
  if (a.axes.empty()) throw UsageError("collective: a TPU needs --axes (the slice axes it runs over)");
  const Slice s = slice_on_chip(chip, "--slice", a.slice, parse_wrap(a.wrap));
  const Collective op = parse_collective(a.op);
  const auto axes = for_option("--axes", [&] { return slice_axes(s, parse_indices("--axes", a.axes)); });
  const double v = parse_size("--bytes", a.bytes);
  const auto c = collective_cost(op, axes, v, ici_link(s.chip));
  auto options = chip_overrides(a.chip);
  options.insert(options.begin(), {"--bytes", a.bytes});
  std::string axes_text;
  for (const auto& ax : axes) axes_text += fmt::format("{}{} ", ax.size, ax.wraps ? " (wraps)" : " (open)");
  Report r;
  r.label_width = 14;
  r.heading = fmt::format("{} of {} over axes of size {}on a {} {}", op == Collective::all_to_all ? "AllToAll" : name(op),
                          format_quantity(v, "B"), axes_text, s.chip.display, shape_text(s.shape));
  r.outputs = {{"t_s", "time", c.t_s, "s"},
               {"t_bandwidth_s", "bandwidth", c.t_bandwidth_s, "s"},
               {"t_latency_s", "latency", c.t_latency_s, "s", fmt::format("({} hops)", c.hops)},
               {"latency_bound", "", c.latency_bound},
               {"hops", "", double(c.hops), kCount},
               {"", "bound by", std::string(c.latency_bound ? "latency" : "bandwidth")}};
  emit(r, a.json, given(options));
}

}  // namespace

void add_collective(CLI::App& app) {
  auto a = std::make_shared<Args>();
  auto* sub = app.add_subcommand("collective", "exact time of a collective over TPU slice axes (§3) or a GPU cluster (§12)");
  add_chip_options(sub, a->chip);
  sub->add_option("--slice", a->slice, "TPU: slice shape, e.g. 4x4x4")->check(shape_check("--slice"));
  add_name(sub, "--op", a->op, "all-gather, reduce-scatter, all-reduce or all-to-all",
           [](const std::string& t) { scaling::parse_collective(t); })
      ->required();
  add_text(sub, "--axes", a->axes, "TPU: slice axes it runs over, e.g. 0 or 0,1");
  add_size(sub, "--bytes", a->bytes,
           "V: the gathered array (AllGather), the unreduced input (ReduceScatter, AllReduce) or the array "
           "(AllToAll), in bytes")
      ->required();
  auto* wrap = add_name(sub, "--wrap", a->wrap, "TPU: wraparound: auto (§2.2 rules), yes or no",
                        [](const std::string& t) { parse_wrap(t); });
  wrap->capture_default_str();
  sub->add_option("--nodes", a->gpu.nodes, "GPU: nodes over InfiniBand, every GPU takes part")
      ->check(size_check("--nodes", limits::kMaxNodes));
  sub->add_option("--gpus-per-node", a->gpu.gpus_per_node, "GPU: GPUs per NVLink node (default: the preset's)")
      ->check(size_check("--gpus-per-node", limits::kMaxGpusPerNode));
  sub->add_option("--nvlink-bw", a->gpu.nvlink_bw, "GPU override: NVLink bytes/s per GPU, one direction")
      ->check(positive_check("--nvlink-bw"));
  sub->add_option("--ib-bw", a->gpu.ib_bw, "GPU override: InfiniBand bytes/s per GPU, one direction")
      ->check(positive_check("--ib-bw"));
  sub->add_option("--nvlink-latency", a->nvlink_latency, "GPU: seconds per NVLink step (default 0: no figure)")
      ->check(positive_check("--nvlink-latency"));
  sub->add_option("--ib-latency", a->ib_latency, "GPU: seconds per InfiniBand step (default 0: no figure)")
      ->check(positive_check("--ib-latency"));
  add_name(sub, "--algorithm", a->algorithm, "GPU: ring (default) or tree (AllReduce across nodes, §12)",
           [](const std::string& t) { scaling::parse_collective_algorithm(t); });
  sub->add_flag("--sharp", a->sharp,
                "GPU, all-reduce: in-network reduction (SHARP: NVLink switches in a node, InfiniBand switches "
                "across nodes, §12.4.1): each GPU sends and receives the array once");
  sub->add_flag("--json", a->json, "print one JSON object, SI units");
  run_when_chosen(sub, [a, wrap] {
    a->wrap_given = wrap->count() > 0;
    run(*a);
  });
}

}  // namespace cli
