#include "scaling/base/text_file.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include "scaling/base/format.hpp"

namespace scaling {

std::string read_text_file(const std::string& path, const std::string& what, double max_bytes) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (ec || !fs::exists(status)) throw std::invalid_argument("cannot read " + what + " '" + path + "': no such file");
  if (!fs::is_regular_file(status))
    throw std::invalid_argument("cannot read " + what + " '" + path + "': not a regular file");
  const auto size = fs::file_size(path, ec);
  if (ec) throw std::invalid_argument("cannot read " + what + " '" + path + "': " + ec.message());
  if (static_cast<double>(size) > max_bytes)
    throw std::invalid_argument(what + " '" + path + "' is " + format_number(static_cast<double>(size)) +
                                " bytes: larger than the " + format_number(max_bytes) + " bytes such a file can be");
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::invalid_argument("cannot read " + what + " '" + path + "'");
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace scaling
