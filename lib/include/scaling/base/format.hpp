#pragma once
// Human-readable values: "1.01 ms", "70.6 GB", "4.2e11 FLOPs", "16,384 tokens".
#include <string>
#include <string_view>
#include <vector>

namespace scaling {

// A plain number: whole numbers below 1e15 with thousands separators, else `digits` significant
// digits (thousands separated too: "76,667"), switching to scientific notation ("4.2e11") outside [1e-3, 1e6).
std::string format_number(double value, int digits = 4);

// A whole number in plain digits without separators ("8192", as in a shape), or format_number's
// scientific form from 1e15 up, so no value prints as hundreds of digits.
std::string format_whole(double value);

// A whole number in full, thousands separated ("9,007,199,254,740,992"), however large: for bounds a
// reader compares digit by digit.
std::string format_with_separators(double whole);

// A value with its unit, scaled to a readable prefix for seconds ("s"), bytes ("B", "B/s");
// FLOPs and FLOPs/s in scientific notation; any other unit appended as given.
std::string format_quantity(double value, std::string_view unit, int digits = 3);

// A byte count scaled by binary prefixes (KiB = 1024 B, MiB, GiB, TiB), for the places where the text it
// sits beside counts in powers of two ("256 KiB" for 262,144 bytes, where a decimal "262 kB" would read as
// another number).
std::string format_binary_bytes(double bytes, int digits = 3);

// Values that are read side by side (a claim's value and the bound its wording asks), all in one style: where
// any of them would print in scientific notation or is a whole number from 1e6 up ("394,000,000,000,000"), all
// are written in scientific notation ("3.94e14 OPs/s" beside "4e14 OPs/s", not beside "400,000,000,000,000");
// else each as format_quantity writes it (bytes and seconds keep their prefixes: "7.99 TB" beside "393 TB").
std::vector<std::string> format_alike(const std::vector<double>& values, std::string_view unit, int digits = 3);

// A value quoted in a one-line message or echoed on stdout: C0 controls (newline, tab, escape, …) and DEL
// become \n, \t or \xNN, C1 controls (U+0080 to U+009F) \uNNNN, bytes that are not UTF-8 \xNN; text longer
// than `max_chars` characters is cut with "…" between whole characters (never inside one).
std::string escape_for_message(std::string_view text, size_t max_chars = 80);

// True when the text is valid UTF-8 without C0, DEL or C1 controls: safe to print as it is.
bool is_printable(std::string_view text);

// Refuses text that holds a control character (a newline, a tab, an escape, …): no name, number or
// notation has one. Throws std::invalid_argument "<what> '<escaped text>': holds a control character", so
// every later message that quotes the text (or a part of it) stays on one line.
void require_printable(std::string_view what, std::string_view text);

}  // namespace scaling
