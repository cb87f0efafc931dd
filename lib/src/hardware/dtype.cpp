#include "scaling/hardware/dtype.hpp"

#include <array>
#include <stdexcept>

#include "scaling/base/format.hpp"
#include "scaling/base/validate.hpp"

namespace scaling {
namespace {
constexpr std::array<DtypeInfo, 5> kDtypes{{
    {Dtype::fp32, "fp32", 4.0},
    {Dtype::bf16, "bf16", 2.0},
    {Dtype::fp8, "fp8", 1.0},
    {Dtype::int8, "int8", 1.0},
    {Dtype::int4, "int4", 0.5},
}};

const DtypeInfo& info(Dtype d) {
  for (const auto& i : kDtypes)
    if (i.dtype == d) return i;
  throw std::logic_error("dtype missing from the table");
}
}  // namespace

std::span<const DtypeInfo> dtypes() { return kDtypes; }
double bytes_per_element(Dtype d) { return info(d).bytes; }
std::string_view name(Dtype d) { return info(d).name; }

Dtype parse_dtype(std::string_view text) {
  require_printable("dtype", text);
  for (const auto& i : kDtypes)
    if (i.name == text) return i.dtype;
  std::vector<std::string> known;
  for (const auto& i : kDtypes) known.emplace_back(i.name);
  check::not_one_of(text, known);
}

}  // namespace scaling
