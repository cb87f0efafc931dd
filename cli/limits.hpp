#pragma once
// The stated limit of every quantity the command line takes (README, "Bad input"): each is checked where
// the option is read, before any allocation or loop that depends on it, and the refusal states the limit.
namespace cli::limits {

// A dimension, a byte count, a token count: 2^53 - 1, below which a double holds every whole number, so
// 2^53 + 1 (which a double rounds to 2^53) is refused rather than silently rounded.
inline constexpr double kDefaultSize = 9007199254740991.0;
// Entries of a comma-separated list of dimensions, axes or coordinates (an HLO shape has at most 64).
inline constexpr double kMaxDims = 64;
// Chips of a slice, a --chips count or a mesh: ten million, ten times the largest cluster announced.
inline constexpr double kMaxChips = 1e7;
// Pods of a slice over DCN (train, plan): a million, the planner's own bound, so train and plan agree.
inline constexpr double kMaxPods = 1e6;
// Chips of the whole machine of train and plan (a slice times its pods, nodes times GPUs per node): 2^30,
// the planner's bound, so every degree and microbatch count fits an int.
inline constexpr double kMaxMachineChips = 1 << 30;
// Nodes of a GPU cluster (plan): ten million GPUs at one per node.
inline constexpr double kMaxNodes = 1e7;
// Entries of a stage or rule list (--zero, --saved): ZeRO has 4 stages, --saved 3 rules; a list may
// name each at most once.
inline constexpr double kMaxZeroStages = 4;
inline constexpr double kMaxSavedRules = 3;
// Elements --grid prints, slice headings included: a 1024 × 1024 array (0.2 s, 8 MB of text; a sanitizer
// build takes seconds), beyond which the output is no longer something to read.
inline constexpr double kMaxGridElements = 1048576;
// Devices of a collective-matmul mesh X·Y: the simulator runs every device at each of Y steps, so the
// work grows as X·Y²; 4096 devices (a 64 × 64 mesh, larger than any pod face) run in about a second.
inline constexpr double kMaxMeshDevices = 4096;
// Text echoed in a message or a heading: cut with "…" beyond this many characters.
inline constexpr unsigned kEchoChars = 80;
// The fraction options (--mfu): a utilisation above 1e-6 (a millionth of peak) and at most 1.
inline constexpr double kMinFraction = 1e-6;

}  // namespace cli::limits
