#pragma once
// Reading a small text input (a config.json, a chip file) with its size bounded before any byte is read.
#include <string>

namespace scaling {

// 1 MiB: a config.json or chip description is a few kB; anything near this is not one.
inline constexpr double kMaxInputFileBytes = 1 << 20;

// The whole file as text. Throws std::invalid_argument with one line naming `what` and the path when the
// path is not a regular file (a directory, /dev/zero, a FIFO), cannot be read, or is larger than
// `max_bytes`.
std::string read_text_file(const std::string& path, const std::string& what, double max_bytes = kMaxInputFileBytes);

}  // namespace scaling
