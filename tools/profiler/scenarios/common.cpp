#include "common.hpp"

#include <algorithm>
#include <utility>

namespace baracuda::profiler {

std::vector<Shape> elementwise_shapes(DeviceKind device) {
  if (device == DeviceKind::Cuda) return {Shape{16, 4096}, Shape{4096, 4096}};
  return {Shape{67, 259}, Shape{64, 1024}};
}

GemmExtents gemm_extents(const Shape& s, int64_t k_multiple) {
  const auto k_of = [&](int64_t n) {
    return std::max<int64_t>(k_multiple, (n + k_multiple - 1) / k_multiple * k_multiple);
  };
  if (s.rank == 0) return {1, 1, k_of(1)};
  if (s.rank == 1) return {1, s[0], k_of(s[0])};
  if (s.rank >= 3) return {s[0], s[1], s[2]};
  return {s[0], s[1], k_of(s[1])};
}

std::vector<Shape> llm_linear_shapes(DeviceKind device, std::vector<Shape> small) {
  if (device != DeviceKind::Cuda) return small;
  std::vector<Shape> r;
  for (int64_t m : {1, 16, 128, 2048, 8192})
    for (auto [n, k] : {std::pair<int64_t, int64_t>{4096, 4096}, {11008, 4096}, {4096, 11008}})
      r.push_back(Shape{m, n, k});
  return r;
}

std::vector<Problem> float_kinds(uint32_t variant) {
  return same_kinds({ElementKind::F32, ElementKind::Bf16}, variant);
}
std::vector<Problem> float_and_int_kinds(uint32_t variant) {
  std::vector<Problem> r = float_kinds(variant);
  r.push_back({ElementKind::S32, ElementKind::S32, {}, false, variant});
  return r;
}

std::vector<Problem> same_kinds(std::initializer_list<ElementKind> kinds, uint32_t variant) {
  std::vector<Problem> r;
  for (ElementKind k : kinds) r.push_back({k, k, {}, false, variant});
  return r;
}

std::vector<Problem> kind_pairs(std::initializer_list<std::pair<ElementKind, ElementKind>> pairs, uint32_t variant) {
  std::vector<Problem> r;
  for (auto [in, out] : pairs) r.push_back({in, out, {}, false, variant});
  return r;
}

Scenario ScenarioFamily::op(std::string_view name, std::string_view summary, uint32_t variant) const {
  return Scenario{.name = name, .family = family, .summary = summary, .variant = variant, .output = output,
                  .comparison = comparison, .default_kinds = default_kinds, .default_shapes = default_shapes,
                  .select = select, .prepare = prepare, .traffic = traffic, .baseline_name = baseline_name,
                  .baseline = baseline, .summed_terms = summed_terms};
}

uint64_t problem_seed(const Problem& p) {
  return 1000003ull * static_cast<uint64_t>(p.dtype) + 7919ull * static_cast<uint64_t>(p.out_dtype) +
         104729ull * p.variant + 17;
}

}  // namespace baracuda::profiler
