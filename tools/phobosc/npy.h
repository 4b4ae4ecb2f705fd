// NumPy .npy files (format 1.0/2.0/3.0, C order) for `phobosc run --in/--out`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "phobos/dtype.h"

namespace phobosc {

struct Npy {
  phobos::DType dtype = phobos::DType::F32;
  std::vector<int64_t> shape;
  std::vector<char> data;
};

// Throws std::runtime_error naming the file and what is wrong with it.
Npy read_npy(const std::string& path);
void write_npy(const std::string& path, const Npy& a);

}  // namespace phobosc
