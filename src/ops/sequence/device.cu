// The sequence family's kernel and its table, compiled for both devices (cmake/BaracudaKernels.cmake: by nvcc
// for cuda, by the host compiler against the SIMT emulator for sim). One thread per value, grid-stride: the
// value is a function of its index alone (dispatch.hpp's SequenceLaunch), so there is nothing to share.
#include "sim/compat.cuh"  // first: the device namespace, launch macros and device API

#include <cstdint>
#include <string>

#include "device/convert.cuh"
#include "ops/sequence/dispatch.hpp"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace sequence {

struct Params {
  void* y;
  int64_t stride;  // elements
  int64_t count;
  bool exact_int;
  int64_t int_start, int_step;
  double start, step, end;
  int64_t half, last;
};

template <class T>
__global__ void sequence_kernel(Params p) {
  T* y = static_cast<T*>(p.y);
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < p.count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    T v;
    if (p.exact_int) {  // s64 exact; select checked that every value fits T
      v = static_cast<T>(p.int_start + p.int_step * i);
    } else {
      const double d = i < p.half ? fma(p.step, static_cast<double>(i), p.start)
                                  : fma(-p.step, static_cast<double>(p.last - i), p.end);
      v = convert::cast<T>(d, false);  // one rounding (integers: truncation toward zero)
    }
    y[i * p.stride] = v;
  }
}

template <class T>
Status sequence_launch(const ::baracuda::detail::ExecContext& ctx, const ::baracuda::detail::SequenceLaunch& a) {
  const Params p{a.y.data, a.y.stride[0], a.y.numel(), a.exact_int, a.int_start, a.int_step,
                 a.start,  a.step,        a.end,       a.half,      a.last};
  const int64_t blocks = (p.count + 255) / 256;
  const dim3 grid(static_cast<unsigned>(blocks < 65535 * 8 ? blocks : 65535 * 8));
  BARACUDA_LAUNCH(grid, dim3(256), 0, ctx.stream, sequence_kernel<T>)(p);
  const auto e = launch::take_last_error();
  if (!e.failed) return {};
  return Error::device(std::string("SequencePlan: kernel launch failed: ") + e.message, e.code);
}

}  // namespace sequence

BARACUDA_DEFINE_KIND_TABLE(detail::SequenceTable, sequence_table, detail::SequenceTypes, sequence::sequence_launch)

BARACUDA_DEVICE_NAMESPACE_END
