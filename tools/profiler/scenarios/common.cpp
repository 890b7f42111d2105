#include "common.hpp"

namespace baracuda::profiler {

std::vector<Shape> elementwise_shapes(DeviceKind device) {
  if (device == DeviceKind::Cuda) return {Shape{16, 4096}, Shape{4096, 4096}};
  return {Shape{257, 259}, Shape{64, 1024}};
}

uint64_t problem_seed(const Problem& p) {
  return 1000003ull * static_cast<uint64_t>(p.dtype) + 7919ull * static_cast<uint64_t>(p.out_dtype) +
         104729ull * p.variant + 17;
}

}  // namespace baracuda::profiler
