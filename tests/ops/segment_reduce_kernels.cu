// Test functors for the segmented-reduction engine, compiled for the sim device (and by nvcc when a GPU
// run builds the tests): a double sum, a min/max pair with a finish counter, and a two-input dot product.
#include "sim/compat.cuh"

#include "device/segment_reduce.cuh"
#include "segment_reduce_kernels.hpp"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace segment_reduce_test {

struct Sum {
  using Acc = double;
  double* out;
  __host__ __device__ Acc identity() const { return 0.0; }
  __host__ __device__ Acc map(float x) const { return static_cast<double>(x); }
  __host__ __device__ Acc combine(Acc a, Acc b) const { return a + b; }
  __device__ void finish(int64_t seg, Acc acc) const { out[seg] = acc; }
};

struct MinMax {
  struct Acc {
    float lo, hi;
  };
  float* lo;
  float* hi;
  int* calls;
  __host__ __device__ Acc identity() const { return {INFINITY, -INFINITY}; }
  __host__ __device__ Acc map(float x) const { return {x, x}; }
  __host__ __device__ Acc combine(Acc a, Acc b) const { return {fminf(a.lo, b.lo), fmaxf(a.hi, b.hi)}; }
  __device__ void finish(int64_t seg, Acc acc) const {
    lo[seg] = acc.lo;
    hi[seg] = acc.hi;
    atomicAdd(calls + seg, 1);
  }
};

struct Dot {
  using Acc = double;
  double* out;
  __host__ __device__ Acc identity() const { return 0.0; }
  __host__ __device__ Acc map(float a, float b) const { return static_cast<double>(a) * static_cast<double>(b); }
  __host__ __device__ Acc combine(Acc a, Acc b) const { return a + b; }
  __device__ void finish(int64_t seg, Acc acc) const { out[seg] = acc; }
};

}  // namespace segment_reduce_test
BARACUDA_DEVICE_NAMESPACE_END

namespace baracuda::test {

Status segment_sum(const detail::ExecContext& ctx, const Shape& shape, uint32_t kept_mask, Workspace ws,
                   const ConstDynTensor& x, double* sum) {
  return segment_reduce::launch_segment_reduce<segment_reduce_test::Sum, float>(
      "SegmentSum", ctx, segment_reduce_test::Sum{sum}, shape, kept_mask, ws, x);
}

Status segment_min_max(const detail::ExecContext& ctx, const Shape& shape, uint32_t kept_mask, Workspace ws,
                       const ConstDynTensor& x, float* lo, float* hi, int* calls) {
  return segment_reduce::launch_segment_reduce<segment_reduce_test::MinMax, float>(
      "SegmentMinMax", ctx, segment_reduce_test::MinMax{lo, hi, calls}, shape, kept_mask, ws, x);
}

Status segment_dot(const detail::ExecContext& ctx, const Shape& shape, uint32_t kept_mask, Workspace ws,
                   const ConstDynTensor& a, const ConstDynTensor& b, double* dot) {
  return segment_reduce::launch_segment_reduce<segment_reduce_test::Dot, float, float>(
      "SegmentDot", ctx, segment_reduce_test::Dot{dot}, shape, kept_mask, ws, a, b);
}

}  // namespace baracuda::test
