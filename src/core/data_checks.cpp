#include "core/data_checks.hpp"

#include <string>
#include <vector>

namespace baracuda::detail {

namespace {

std::string s(std::string_view v) { return std::string(v); }

// The s32 value at linear (row-major) element i of t.
int32_t s32_at(const ConstDynTensor& t, int64_t i) {
  int64_t offset = 0;
  for (int d = t.shape.rank - 1; d >= 0; --d) {
    const int64_t extent = t.shape.dims[d];
    offset += (i % extent) * t.stride[d];
    i /= extent;
  }
  return static_cast<const int32_t*>(t.data)[offset];
}

}  // namespace

Status check_permutation(std::string_view plan, std::string_view name, const ConstDynTensor& perm, int64_t k) {
  std::vector<bool> seen(static_cast<size_t>(k), false);
  for (int64_t i = 0; i < k; ++i) {
    const int32_t v = s32_at(perm, i);
    if (v < 0 || v >= k || seen[static_cast<size_t>(v)])
      return Error::invalid(s(plan) + ": " + s(name) + " is not a permutation of [0, K): " + s(name) + "[" +
                            std::to_string(i) + "] = " + std::to_string(v) +
                            (v < 0 || v >= k ? " is out of range" : " appears twice"));
    seen[static_cast<size_t>(v)] = true;
  }
  return {};
}

Status check_s32_range(std::string_view plan, std::string_view name, const ConstDynTensor& t, int64_t lo,
                       int64_t hi, std::string_view why) {
  const int64_t n = t.numel();
  for (int64_t i = 0; i < n; ++i) {
    const int32_t v = s32_at(t, i);
    if (v < lo || v > hi)
      return Error::invalid(s(plan) + ": " + s(name) + " holds " + std::to_string(v) + " at element " +
                            std::to_string(i) + ", outside [" + std::to_string(lo) + ", " + std::to_string(hi) +
                            "] (" + s(why) + ")");
  }
  return {};
}

}  // namespace baracuda::detail
