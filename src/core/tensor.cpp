#include <string>

#include "baracuda/core/dyn_tensor.hpp"
#include "baracuda/core/tensor.hpp"
#include "baracuda/core/hash.hpp"

namespace baracuda {

size_t Shape::hash() const {
  size_t h = std::hash<int>{}(rank);
  for (int i = 0; i < rank && i < kMaxRank; ++i) detail::hash_combine(h, dims[i]);
  return h;
}

std::string to_string(const Shape& s) {
  std::string r = "[";
  for (int i = 0; i < s.rank && i < kMaxRank; ++i) {
    if (i) r += ", ";
    r += std::to_string(s.dims[i]);
  }
  return r + "]";
}

std::array<int64_t, kMaxRank> detail::DynTensorLayout::dense_strides(const Shape& shape) {
  std::array<int64_t, kMaxRank> stride{};
  int64_t s = 1;
  for (int i = shape.rank; i-- > 0;) {
    stride[i] = s;
    s *= shape.dims[i];
  }
  return stride;
}

bool detail::DynTensorLayout::is_contiguous() const {
  int64_t expected = 1;
  for (int i = shape.rank; i-- > 0;) {
    if (shape.dims[i] != 1 && stride[i] != expected) return false;
    expected *= shape.dims[i];
  }
  return true;
}

bool detail::DynTensorLayout::has_broadcast() const {
  for (int i = 0; i < shape.rank; ++i)
    if (shape.dims[i] > 1 && stride[i] == 0) return true;
  return false;
}

int64_t detail::DynTensorLayout::span_bytes() const {
  if (numel() == 0) return 0;
  int64_t last = 0;
  for (int i = 0; i < shape.rank; ++i) last += (shape.dims[i] - 1) * stride[i];
  return storage_bytes(kind, last + 1);
}

}  // namespace baracuda
