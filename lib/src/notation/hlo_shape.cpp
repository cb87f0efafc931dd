#include "scaling/notation/hlo_shape.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "scaling/base/format.hpp"

namespace scaling::hlo {

namespace {

using K = ElementKind;
// Bounds that keep every offset computation small (XLA's own layouts stay far inside them).
constexpr size_t kMaxRank = 64, kMaxTiles = 8, kMaxTileRank = 16;
// XLA's primitive types that are arrays (xla_data.proto), with the width of one value.
constexpr std::array<ElementType, 30> kTypes{{
    {"pred", 8, 1, K::boolean},
    {"s1", 1, 1, K::signed_int},
    {"s2", 2, 1, K::signed_int},
    {"s4", 4, 1, K::signed_int},
    {"s8", 8, 1, K::signed_int},
    {"s16", 16, 2, K::signed_int},
    {"s32", 32, 4, K::signed_int},
    {"s64", 64, 8, K::signed_int},
    {"u1", 1, 1, K::unsigned_int},
    {"u2", 2, 1, K::unsigned_int},
    {"u4", 4, 1, K::unsigned_int},
    {"u8", 8, 1, K::unsigned_int},
    {"u16", 16, 2, K::unsigned_int},
    {"u32", 32, 4, K::unsigned_int},
    {"u64", 64, 8, K::unsigned_int},
    {"f4e2m1fn", 4, 1, K::floating},
    {"f8e3m4", 8, 1, K::floating},
    {"f8e4m3", 8, 1, K::floating},
    {"f8e4m3fn", 8, 1, K::floating},
    {"f8e4m3fnuz", 8, 1, K::floating},
    {"f8e4m3b11fnuz", 8, 1, K::floating},
    {"f8e5m2", 8, 1, K::floating},
    {"f8e5m2fnuz", 8, 1, K::floating},
    {"f8e8m0fnu", 8, 1, K::floating},
    {"bf16", 16, 2, K::floating},
    {"f16", 16, 2, K::floating},
    {"f32", 32, 4, K::floating},
    {"f64", 64, 8, K::floating},
    {"c64", 64, 8, K::complex},
    {"c128", 128, 16, K::complex},
}};

std::string known_names() {
  std::string out;
  for (const auto& t : kTypes) out += (out.empty() ? "" : ", ") + std::string(t.name);
  return out;
}

// A cursor over the text; every error names the whole shape and the part at fault.
class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw std::invalid_argument("HLO shape '" + escape_for_message(text_) + "': " + what);
  }
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t')) ++pos_;
  }
  bool at_end() const { return pos_ >= text_.size(); }
  char peek() const { return at_end() ? '\0' : text_[pos_]; }
  bool accept(char c) {
    skip_space();
    if (peek() != c) return false;
    ++pos_;
    return true;
  }
  void expect(char c, const std::string& where) {
    if (!accept(c)) fail("expected '" + std::string(1, c) + "' " + where + (at_end() ? ", found the end" : ", found '" + escape_for_message(text_.substr(pos_, 12)) + "'"));
  }
  // The token up to the next delimiter, for messages.
  std::string token() const {
    size_t end = pos_;
    while (end < text_.size() && std::string_view(",]}):( ").find(text_[end]) == std::string_view::npos) ++end;
    return std::string(text_.substr(pos_, std::max<size_t>(end - pos_, 1)));
  }
  // A non-negative whole number that fits in int64.
  int64_t number(const std::string& what) {
    skip_space();
    const char* begin = text_.data() + pos_;
    const char* end = text_.data() + text_.size();
    if (pos_ < text_.size() && text_[pos_] == '-') {
      fail(what + " '" + escape_for_message(token()) + "' is negative");
    }
    int64_t v = 0;
    const auto [ptr, ec] = std::from_chars(begin, end, v);
    if (ec == std::errc::result_out_of_range) fail(what + " '" + escape_for_message(token()) + "' does not fit in 64 bits");
    if (ec != std::errc() || ptr == begin) fail(what + " '" + escape_for_message(at_end() ? "" : token()) + "' is not a whole number");
    pos_ = static_cast<size_t>(ptr - text_.data());
    return v;
  }
  std::string_view rest() const { return text_.substr(pos_); }
  void advance(size_t n) { pos_ += n; }
  size_t pos() const { return pos_; }

 private:
  std::string_view text_;
  size_t pos_ = 0;
};

std::string list_text(const std::vector<int64_t>& v) { return fmt::format("{}", fmt::join(v, ",")); }

// One tile "(8,128": positive sizes up to the closing parenthesis.
std::vector<int64_t> parse_tile(Parser& p) {
  std::vector<int64_t> tile;
  do {
    p.skip_space();
    if (p.peek() == '*') p.fail("tile dimension '*' (combined dimensions) is not supported");
    if (p.peek() == '-') p.fail("tile dimension '" + escape_for_message(p.token()) + "' is not positive");
    const int64_t t = p.number("tile dimension");
    if (t <= 0) p.fail("tile dimension " + std::to_string(t) + " is not positive");
    tile.push_back(t);
  } while (p.accept(','));
  p.expect(')', "to close a tile");
  if (tile.size() > kMaxTileRank)
    p.fail("a tile of " + std::to_string(tile.size()) + " dimensions; at most " + std::to_string(kMaxTileRank) +
           " are accepted");
  return tile;
}

void parse_layout(Parser& p, Shape& s) {
  const auto rank = static_cast<int64_t>(s.dims.size());
  // minor_to_major: numbers up to ':' or '}'.
  p.skip_space();
  if (p.peek() != ':' && p.peek() != '}') {
    do s.layout.minor_to_major.push_back(p.number("minor_to_major entry"));
    while (p.accept(','));
  }
  const auto& m2m = s.layout.minor_to_major;
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  bool permutation = static_cast<int64_t>(m2m.size()) == rank;
  for (int64_t d : m2m) {
    if (d >= rank || seen[static_cast<size_t>(d)]) { permutation = false; break; }
    seen[static_cast<size_t>(d)] = true;
  }
  if (!permutation)
    p.fail("minor_to_major {" + list_text(m2m) + "} is not a permutation of the " + std::to_string(rank) +
           " dimension numbers 0.." + std::to_string(rank - 1));
  if (p.accept(':')) {
    bool tiles = false, space = false, bits = false;
    // One attribute X(n): its number, once.
    auto attribute = [&](bool& given, char name, const std::string& what) {
      if (given) p.fail("layout attribute " + std::string(1, name) + "(…) given twice");
      given = true;
      p.advance(1);
      p.expect('(', std::string("after ") + name);
      const int64_t v = p.number(what);
      p.expect(')', "to close " + what);
      return v;
    };
    while (true) {
      p.skip_space();
      const char c = p.rest().substr(0, 2) == "SC" ? '?' : p.peek();  // SC(…), split configs: not supported
      if (c == '}' || p.at_end()) break;
      if (c == 'T') {
        if (tiles) p.fail("layout attribute T(…) given twice");
        tiles = true;
        p.advance(1);
        p.skip_space();
        if (p.peek() != '(') p.fail("expected '(' after T");
        while (p.accept('(')) {
          s.layout.tiles.push_back(parse_tile(p));
          if (s.layout.tiles.size() > kMaxTiles)
            p.fail("more than " + std::to_string(kMaxTiles) + " tiles in sequence; XLA's layouts use two or three");
        }
      } else if (c == 'S') {
        s.layout.memory_space = attribute(space, 'S', "memory space S(n)");
      } else if (c == 'E') {
        s.layout.element_size_bits = attribute(bits, 'E', "element size E(bits)");
        if (s.layout.element_size_bits == 0) p.fail("element size E(0) is not positive");
      } else {
        p.fail("layout attribute '" + escape_for_message(p.token()) +
               "' is not supported (only tiles T(…), element size E(n) and memory space S(n))");
      }
    }
  }
  p.expect('}', "to close the layout");
}

bool mul_overflows(int64_t a, int64_t b, int64_t& out) { return __builtin_mul_overflow(a, b, &out); }

}  // namespace

std::span<const ElementType> element_types() { return kTypes; }

const ElementType& element_type(std::string_view name) {
  for (const auto& t : kTypes)
    if (t.name == name) return t;
  if (name == "token" || name == "tuple" || name == "opaque")
    throw std::invalid_argument("element type '" + std::string(name) + "' is not an array type");
  throw std::invalid_argument("unknown element type '" + escape_for_message(name) + "' (known: " + known_names() + ")");
}

Shape parse_shape(std::string_view text) {
  Parser p(text);
  Shape s;
  p.skip_space();
  const auto bracket = p.rest().find('[');
  if (bracket == std::string_view::npos) p.fail("expected TYPE[dims], like f32[3,5]");
  std::string name(p.rest().substr(0, bracket));
  while (!name.empty() && name.back() == ' ') name.pop_back();
  try {
    s.type = &element_type(name);
  } catch (const std::invalid_argument& e) {
    p.fail(e.what());
  }
  p.advance(bracket + 1);
  p.skip_space();
  if (p.peek() != ']') {
    size_t index = 0;
    do {
      p.skip_space();
      if (p.peek() == '<' || p.peek() == '?')
        p.fail("dimension " + std::to_string(index) + " '" + escape_for_message(p.token()) +
               "' is dynamic; only static shapes have a layout");
      s.dims.push_back(p.number("dimension " + std::to_string(index)));
      if (s.dims.size() > kMaxRank) p.fail("more than " + std::to_string(kMaxRank) + " dimensions");
      ++index;
    } while (p.accept(','));
  }
  p.expect(']', "to close the dimensions");
  int64_t count = 1;
  for (int64_t d : s.dims)
    if (mul_overflows(count, d, count)) p.fail("the element count " + dims_text(s.dims) + " overflows 64 bits");
  if (p.accept('{')) {
    s.layout_printed = true;
    parse_layout(p, s);
  } else {
    for (int64_t d = static_cast<int64_t>(s.dims.size()) - 1; d >= 0; --d) s.layout.minor_to_major.push_back(d);
  }
  p.skip_space();
  if (!p.at_end()) p.fail("trailing text '" + escape_for_message(p.rest()) + "' after the shape");
  return s;
}

std::string dims_text(const std::vector<int64_t>& dims) { return fmt::format("[{}]", list_text(dims)); }

std::string to_string(const Shape& s) {
  std::string out = fmt::format("{}{}{{{}", s.type->name, dims_text(s.dims), list_text(s.layout.minor_to_major));
  const bool attrs = !s.layout.tiles.empty() || s.layout.element_size_bits || s.layout.memory_space;
  if (attrs) out += ":";
  if (!s.layout.tiles.empty()) {
    out += "T";
    for (const auto& t : s.layout.tiles) out += fmt::format("({})", list_text(t));
  }
  if (s.layout.element_size_bits) out += fmt::format("E({})", s.layout.element_size_bits);
  if (s.layout.memory_space) out += fmt::format("S({})", s.layout.memory_space);
  return out + "}";
}

int64_t element_count(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s.dims)
    if (mul_overflows(n, d, n)) throw std::invalid_argument("the element count of " + dims_text(s.dims) + " overflows 64 bits");
  return n;
}

const ElementType& promote(const ElementType& a, const ElementType& b) {
  if (a.name == b.name) return a;
  auto refuse = [&](const std::string& why) -> const ElementType& {
    throw std::invalid_argument("no implicit promotion between " + std::string(a.name) + " and " + std::string(b.name) +
                                ": " + why);
  };
  auto narrow_special = [](const ElementType& t) {
    return (t.kind == K::floating && t.bits <= 8) || ((t.kind == K::signed_int || t.kind == K::unsigned_int) && t.bits < 8);
  };
  if (narrow_special(a) || narrow_special(b))
    return refuse("JAX promotes float8, float4 and sub-byte integer types only by an explicit cast");
  if (a.kind == K::boolean) return b;
  if (b.kind == K::boolean) return a;
  const bool a_float = a.kind == K::floating || a.kind == K::complex, b_float = b.kind == K::floating || b.kind == K::complex;
  if (a_float != b_float) return a_float ? a : b;  // a float over any integer
  if (a_float) {
    if (a.kind == K::complex || b.kind == K::complex) {
      const int real_bits = std::max(a.kind == K::complex ? a.bits / 2 : a.bits, b.kind == K::complex ? b.bits / 2 : b.bits);
      return element_type(real_bits > 32 ? "c128" : "c64");
    }
    if (a.bits == b.bits) return element_type("f32");  // bf16 with f16: neither holds the other
    return a.bits > b.bits ? a : b;
  }
  if (a.kind == b.kind) return a.bits > b.bits ? a : b;
  const ElementType& u = a.kind == K::unsigned_int ? a : b;
  const ElementType& s = a.kind == K::unsigned_int ? b : a;
  if (s.bits > u.bits) return s;
  if (u.bits == 64) return refuse("no signed integer type holds every u64");
  return element_type(fmt::format("s{}", u.bits * 2));
}

}  // namespace scaling::hlo
