#include "common.hpp"

namespace baracuda::profiler {

std::vector<Shape> elementwise_shapes(DeviceKind device) {
  if (device == DeviceKind::Cuda) return {Shape{16, 4096}, Shape{4096, 4096}};
  return {Shape{257, 259}, Shape{64, 1024}};
}

std::vector<Problem> float_kinds(uint32_t variant) {
  return {{ElementKind::F32, ElementKind::F32, {}, false, variant},
          {ElementKind::Bf16, ElementKind::Bf16, {}, false, variant}};
}
std::vector<Problem> float_and_int_kinds(uint32_t variant) {
  std::vector<Problem> r = float_kinds(variant);
  r.push_back({ElementKind::S32, ElementKind::S32, {}, false, variant});
  return r;
}

uint64_t problem_seed(const Problem& p) {
  return 1000003ull * static_cast<uint64_t>(p.dtype) + 7919ull * static_cast<uint64_t>(p.out_dtype) +
         104729ull * p.variant + 17;
}

}  // namespace baracuda::profiler
