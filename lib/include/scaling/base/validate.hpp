#pragma once
// One validation vocabulary: every rule a value can break has exactly one wording, and every message
// names what was given ("--B '0'", "hidden_size = 4096.5") before the rule ("must be positive"), so the
// same mistake reads the same in every subcommand, file reader and library check.
//
//   --B '0': must be positive
//   --mfu '2': must be within [1e-06, 1]
//   --zero '3,3,3,…': has 60,000 entries: at most 4
//
// Every echoed text goes through escape_for_message (format.hpp): control characters (C0, DEL, C1) and
// invalid UTF-8 become \xNN escapes and long values are cut with "…", so a message is one printable line.
#include <string>
#include <string_view>
#include <vector>

namespace scaling::check {

// The rules, worded once. Each is the tail of a message: "<subject>: <rule>".
inline constexpr std::string_view kEmpty = "empty value";
inline constexpr std::string_view kNotANumber = "not a number";
inline constexpr std::string_view kOutOfRange = "out of range (a double holds magnitudes from about 2.2e-308 to 1.8e308)";
inline constexpr std::string_view kFinite = "must be a finite number";
inline constexpr std::string_view kPositive = "must be positive";
inline constexpr std::string_view kNonNegative = "must not be negative";
inline constexpr std::string_view kWhole = "must be a whole number";
inline constexpr std::string_view kInexact = "has more digits than a double holds (whole numbers are exact up to 2^53)";

// The subject of a message: the name and the text as given, quoted and escaped ("--B '1e309'").
std::string subject(std::string_view name, std::string_view text);
// The subject for a value that has no text of its own (read from a file, computed): "hidden_size = 4096.5",
// printed with enough digits that 4096.5 is not shown as 4096 and 2^53+1 not as 2^53.
std::string subject(std::string_view name, double value);

// Throws std::invalid_argument "<subject>: <rule>".
[[noreturn]] void fail(std::string_view subject, std::string_view rule);

// A value outside a fixed set (a dtype, an optimizer, a cost model, a schedule, …), one wording everywhere:
// throws std::invalid_argument "'v': expected a, b or c" (the value escaped). The CLI's for_option puts the
// option in front of a message that starts with the quoted value: "--X 'v': expected a, b or c".
std::string one_of_rule(const std::vector<std::string>& names);  // "expected a, b or c"
[[noreturn]] void not_one_of(std::string_view text, const std::vector<std::string>& names);

// "must be within [lo, hi]", "must be at most hi", "has n entries: at most max" — rules with a bound.
std::string within_rule(double lo, double hi);
std::string at_most_rule(double hi);
std::string entries_rule(double n, double max);

// Checks of a number already parsed; each returns the value so checks chain. `name` is what the
// message names (an option, a file key); `text`, when given, is the input as typed.
double finite(std::string_view name, double v);
double positive(std::string_view name, double v);        // finite and > 0
double non_negative(std::string_view name, double v);    // finite and >= 0
double positive_whole(std::string_view name, double v);  // finite, > 0 and whole
double within(std::string_view name, double v, double lo, double hi);
double at_most(std::string_view name, double v, double hi);
// A list of n entries when at most max are allowed (checked before anything loops over them).
void entries(std::string_view name, std::string_view text, double n, double max);

// A hardware figure (a capacity in bytes, a bandwidth in bytes/s, a peak in FLOPs/s, a latency in s) lies
// within [kMinFigure, kMaxFigure]: twelve orders of magnitude beyond any real chip either way, and the
// bound that keeps every time, ratio and count a figure enters finite and non-zero (a 1e-320 peak made
// the chip's intensity 0, a 1e308 link made its two-way bandwidth inf). Checked wherever a figure is
// read: the command line's overrides and a chip file's fields.
inline constexpr double kMinFigure = 1e-12;
inline constexpr double kMaxFigure = 1e30;
double figure(std::string_view name, double v);  // positive, then within the range

// Strict text to number: the whole text must be a decimal number as from_chars reads it (no leading
// space, no '+', no hex, no trailing text); inf and nan are refused as not finite, 1e400 as out of range.
double number(std::string_view name, std::string_view text);

// A size or count as typed on the command line: a number ("4096", "1e6", "0.5k") with an optional
// decimal suffix k = 1e3, M = 1e6, G = 1e9, T = 1e12, P = 1e15 (never 1024), which must come to a
// positive whole number no larger than `max` (the stated limit of that quantity).
double size(std::string_view name, std::string_view text, double max);
// The suffix rule in words, for --help and README.
inline constexpr std::string_view kSizeSyntax = "k = 1e3, M = 1e6, G = 1e9, T = 1e12, P = 1e15 (decimal, not 1024)";

// Text that is a name or notation: not empty, no control characters, no invalid UTF-8, no leading or
// trailing space. Returns the text.
std::string_view text(std::string_view name, std::string_view value);

}  // namespace scaling::check
