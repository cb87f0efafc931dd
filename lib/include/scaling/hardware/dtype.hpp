#pragma once
// Number formats and their storage size. int4 packs two values per byte, so sizes are doubles.
#include <span>
#include <string>
#include <string_view>

namespace scaling {

enum class Dtype { fp32, bf16, fp8, int8, int4 };

struct DtypeInfo {
  Dtype dtype;
  std::string_view name;
  double bytes;  // storage bytes per element
};

std::span<const DtypeInfo> dtypes();
double bytes_per_element(Dtype d);
std::string_view name(Dtype d);
// Throws std::invalid_argument naming the text and the known names.
Dtype parse_dtype(std::string_view text);

}  // namespace scaling
