// Einsum specs (§4.1): classify_einsum, parse_letter_sizes, einsum_flops and einsum_flops_from_shapes.
// Input: spec \0 letter sizes ("I=4,J=8") \0 shape of the first input \0 shape of the second.
#include "../cli/commands.hpp"
#include "contract.hpp"
#include "scaling/notation/einsum.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;
  const auto f = fuzz::fields(data, size, 4);
  scaling::EinsumDims d;
  if (!fuzz::accepted([&] { d = scaling::classify_einsum(f[0]); })) return 0;
  for (const std::string* part : {&d.batch, &d.contracting, &d.free})
    for (char c : *part) fuzz::require(std::isalpha(static_cast<unsigned char>(c)), "a classified dimension is not a letter");
  std::map<char, double> sizes;
  double flops = 0;
  if (fuzz::accepted([&] { sizes = scaling::parse_letter_sizes(f[1]); }) &&
      fuzz::accepted([&] { flops = scaling::einsum_flops(f[0], sizes); }))
    fuzz::finite(flops, "einsum FLOPs");
  std::vector<double> a, b;
  if (fuzz::accepted([&] { a = cli::parse_sizes("--a", f[2]); }) && fuzz::accepted([&] { b = cli::parse_sizes("--b", f[3]); }) &&
      fuzz::accepted([&] { flops = scaling::einsum_flops_from_shapes(f[0], {a, b}); }))
    fuzz::finite(flops, "einsum FLOPs from shapes");
  return 0;
}
