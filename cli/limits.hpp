#pragma once
#include "scaling/base/validate.hpp"

// The stated limit of every quantity the command line takes (README, "Bad input"): each is checked where
// the option is read, before any allocation or loop that depends on it, and the refusal states the limit.
namespace cli::limits {

// A dimension, a byte count, a token count: 2^53 - 1, below which a double holds every whole number, so
// 2^53 + 1 (which a double rounds to 2^53) is refused rather than silently rounded.
inline constexpr double kDefaultSize = 9007199254740991.0;
// Entries of a comma-separated list of dimensions, axes or coordinates (an HLO shape has at most 64).
inline constexpr double kMaxDims = 64;
// Chips of a slice, a --chips count, a parallel degree or a mesh: 2^20 = 1,048,576, the planner's bound
// on one axis (a TPU --chips N is one axis of N), the same in every subcommand that takes a count.
inline constexpr double kMaxChips = 1 << 20;
// Pods of a slice over DCN (train, plan): a million, the planner's own bound, so train and plan agree.
inline constexpr double kMaxPods = 1e6;
// Chips of the whole machine of train and plan (a slice times its pods, nodes times GPUs per node): 2^30,
// the planner's bound, so every degree and microbatch count fits an int.
inline constexpr double kMaxMachineChips = 1 << 30;
// Nodes of a GPU cluster (train, plan, collective): 2^20, the planner's bound on the groups its slow
// network joins. GPUs per node: 1024, as a chip file's gpus_per_node.
inline constexpr double kMaxNodes = 1 << 20;
inline constexpr double kMaxGpusPerNode = 1024;
// Entries of a stage or rule list (--zero, --saved): ZeRO has 4 stages, --saved 3 rules; a list may
// name each at most once.
inline constexpr double kMaxZeroStages = 4;
inline constexpr double kMaxSavedRules = 3;
// Microbatches of a layout (--microbatches, --max-microbatches): 2^20, as many as a machine has chips.
inline constexpr double kMaxMicrobatches = 1 << 20;
// Layouts plan prints (--top): a thousand.
inline constexpr double kMaxTop = 1000;
// Elements --grid prints, slice headings included: a 1024 × 1024 array (0.2 s, 8 MB of text; a sanitizer
// build takes seconds), beyond which the output is no longer something to read.
inline constexpr double kMaxGridElements = 1048576;
// Devices of a collective-matmul mesh X·Y: the simulator runs every device at each of Y steps, so the
// work grows as X·Y²; 4096 devices (a 64 × 64 mesh, larger than any pod face) run in about a second.
inline constexpr double kMaxMeshDevices = 4096;
// Points of serve --frontier (one per batch that fits): 100,000. At 973,499 points (llama3-8b on 64 H100s,
// context 40) the frontier took 6.8 s and 564 MB as text, 8.2 s and 1.3 GB as JSON; a tenth of that is
// well under a second, and more points than that is no longer a curve to read.
inline constexpr double kMaxFrontierPoints = 100000;
// Text echoed in a message or a heading: cut with "…" beyond this many characters.
inline constexpr unsigned kEchoChars = 80;
// A hardware figure (--hbm-bytes, --hbm-bw, --flops, --flops-int8, --ici-bw, --nvlink-bw, --ib-bw,
// --nvlink-latency, --ib-latency, and every figure of a chip file): within [1e-12, 1e30], the library's
// one range (base/validate.hpp), which keeps every time, ratio and count a figure enters finite.
inline constexpr double kMinFigure = scaling::check::kMinFigure;
inline constexpr double kMaxFigure = scaling::check::kMaxFigure;
// The fraction options (--mfu): a utilisation above 1e-6 (a millionth of peak) and at most 1.
inline constexpr double kMinFraction = 1e-6;

}  // namespace cli::limits
