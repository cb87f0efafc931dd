#pragma once
// §3.1: named-axis sharding notation. A mesh names its axes ("X=2,Y=8,Z=2"); a sharding such as
// A[I_XY, J]{U_Z} says which mesh axes split each array dimension (in order) and along which axes the
// array holds unreduced partial sums.
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "scaling/hardware/dtype.hpp"

namespace scaling {

struct MeshAxis {
  std::string name;
  int size;
};

struct Mesh {
  std::vector<MeshAxis> axes;
  int size_of(std::string_view axis) const;  // throws for an unknown axis
  double devices() const;
};

// "X=2,Y=8,Z=2" -> Mesh; throws std::invalid_argument naming the malformed part.
Mesh parse_mesh(std::string_view text);

struct ShardedDim {
  std::string name;               // "I"
  std::vector<std::string> axes;  // {"X", "Y"} for I_XY
};

struct Sharding {
  std::string array;  // "A" (may be empty: "[B_X, D_Y]")
  std::vector<ShardedDim> dims;
  std::vector<std::string> unreduced;  // {U_Z} -> {"Z"}
};

// Parses "A[I_XY, J]{U_Z}" against the mesh's axis names (subscripts are split into the mesh's names,
// longest first). Rejects malformed text, unknown axes and a mesh axis used twice.
Sharding parse_sharding(std::string_view text, const Mesh& mesh);
std::string to_string(const Sharding& s);  // canonical text: "A[I_XY, J]{U_Z}"

struct ShardedArray {
  std::vector<double> local_shape;
  double bytes_per_device;
  double total_bytes;   // summed over every device of the mesh
  double replication;   // total_bytes / bytes of one copy of the array
};

// Throws when the shape's rank differs from the sharding's or a dimension is not divisible by its shards.
ShardedArray evaluate(const Sharding& s, const Mesh& mesh, const std::vector<double>& global_shape, Dtype dtype);

double shards(const ShardedDim& d, const Mesh& mesh);  // Π |axis| over the dimension's axes

}  // namespace scaling
