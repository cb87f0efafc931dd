#include "scaling/base/text_file.hpp"

#include <array>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <system_error>

#include "scaling/base/format.hpp"

namespace scaling {

std::string read_text_file(const std::string& path, const std::string& what, double max_bytes) {
  namespace fs = std::filesystem;
  const std::string shown = what + " '" + escape_for_message(path, 200) + "'";
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (ec || !fs::exists(status)) throw std::invalid_argument("cannot read " + shown + ": no such file");
  if (!fs::is_regular_file(status)) throw std::invalid_argument("cannot read " + shown + ": not a regular file");
  const auto size = fs::file_size(path, ec);
  if (ec) throw std::invalid_argument("cannot read " + shown + ": " + ec.message());
  const auto too_large = [&](double bytes) {
    return std::invalid_argument(shown + " is " + (bytes > max_bytes ? "over " : "") + format_number(bytes) +
                                 " bytes: larger than the " + format_number(max_bytes) + " bytes such a file can be");
  };
  if (static_cast<double>(size) > max_bytes) throw too_large(static_cast<double>(size));
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::invalid_argument("cannot read " + shown);
  // Read at most max_bytes + 1 even if the size said less (a file in /proc reports 0 and may be long).
  std::string text;
  std::array<char, 65536> chunk{};
  while (f && static_cast<double>(text.size()) <= max_bytes) {
    f.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    text.append(chunk.data(), static_cast<size_t>(f.gcount()));
  }
  if (static_cast<double>(text.size()) > max_bytes) throw too_large(static_cast<double>(text.size()));
  return text;
}

}  // namespace scaling
