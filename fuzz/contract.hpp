#pragma once
// The contract every fuzz target asserts (README, "Fuzzing"): bad input is refused by the one documented
// exception type, std::invalid_argument, whose message is one printable line; every number an accepted
// input produces is finite; a canonical text parses back to itself. A broken contract aborts with the
// reason, which libFuzzer reports as a crash and saves the input.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <string>
#include <string_view>
#include <typeinfo>
#include <vector>

namespace fuzz {

[[noreturn]] inline void broken(const std::string& what) {
  std::fprintf(stderr, "\ncontract broken: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

inline void require(bool ok, const std::string& what) {
  if (!ok) broken(what);
}

// One line: no control characters at all (a message quotes user text escaped), and not empty.
inline bool one_line(std::string_view message) {
  if (message.empty()) return false;
  for (const char c : message)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return false;
  return true;
}

// What may reach a terminal: well-formed UTF-8 without C0 controls (newline aside), DEL or C1 controls
// (U+0080 to U+009F). Written here from the UTF-8 definition, sharing no code with the escaping it checks.
inline bool printable_output(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const auto b = [&](size_t k) { return k < text.size() ? static_cast<unsigned char>(text[k]) : 0u; };
    const unsigned c = b(i);
    if (c < 0x80) {
      if ((c < 0x20 && c != '\n') || c == 0x7f) return false;
      ++i;
      continue;
    }
    size_t n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 0;
    if (n == 0 || c > 0xf4 || c == 0xc0 || c == 0xc1) return false;
    uint32_t cp = c & (0x7f >> n);
    for (size_t k = 1; k < n; ++k) {
      if ((b(i + k) & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (b(i + k) & 0x3f);
    }
    const uint32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < least[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || (cp >= 0x80 && cp <= 0x9f)) return false;
    i += n;
  }
  return true;
}

inline void finite(double value, const std::string& what) {
  if (!std::isfinite(value)) broken(what + " is not finite");
}

// Runs f; std::invalid_argument with a one-line message is a refusal (returns false), any other
// exception breaks the contract. Returns true when f ran to the end.
template <class Fn>
bool accepted(Fn&& f) {
  try {
    f();
    return true;
  } catch (const std::invalid_argument& e) {
    if (!one_line(e.what())) broken(std::string("message is not one line: ") + e.what());
    return false;
  } catch (const std::exception& e) {
    broken(std::string("escaped ") + typeid(e).name() + ": " + e.what());
  } catch (...) {
    broken("escaped a non-std exception");
  }
}

// The input cut at NUL bytes into fields (a missing field is empty), so one input can carry several
// texts (a mesh and a sharding) and each may hold any other byte, newlines included.
inline std::vector<std::string> fields(const uint8_t* data, size_t size, size_t count) {
  std::vector<std::string> out(count);
  size_t f = 0;
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == 0) {
      if (++f == count) break;
    } else {
      out[f] += static_cast<char>(data[i]);
    }
  }
  return out;
}

}  // namespace fuzz
