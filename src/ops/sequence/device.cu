// The sequence family's kernels and its table, compiled for both devices (cmake/BaracudaKernels.cmake: by nvcc
// for cuda, by the host compiler against the SIMT emulator for sim). Grid-stride: the value is a function of
// its index alone (dispatch.hpp's SequenceLaunch), so there is nothing to share. A contiguous, 16-byte
// aligned y is written 16 bytes per thread and store (one value per store ran at 40 % of a fill's bandwidth
// on an H100: docs/perf/2026-11-27-h100); any other y one value per thread.
#include "sim/compat.cuh"  // first: the device namespace, launch macros and device API

#include <cstdint>
#include <string>

#include "device/convert.cuh"
#include "device/vector_access.cuh"
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
__device__ __forceinline__ T sequence_value(const Params& p, int64_t i) {
  if (p.exact_int) return static_cast<T>(p.int_start + p.int_step * i);  // s64 exact; select checked the fit
  const double d = i < p.half ? fma(p.step, static_cast<double>(i), p.start)
                              : fma(-p.step, static_cast<double>(p.last - i), p.end);
  return convert::cast<T>(d, false);  // one rounding (integers: truncation toward zero)
}

template <class T>
__global__ void sequence_kernel(Params p) {
  T* y = static_cast<T*>(p.y);
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < p.count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    y[i * p.stride] = sequence_value<T>(p, i);
}

/// Values per 16-byte vector.
template <class T>
inline constexpr int kSequenceVector = static_cast<int>(16 / sizeof(T));

/// y contiguous and 16-byte aligned: thread t writes vectors t, t + threads, ..., then the count % V values
/// past the last whole vector go to the first threads.
template <class T>
__global__ void sequence_vector_kernel(Params p) {
  constexpr int V = kSequenceVector<T>;
  T* y = static_cast<T*>(p.y);
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t threads = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t vectors = p.count / V;
  for (int64_t v = first; v < vectors; v += threads) {
    AlignedVector<T, V> out;
    BARACUDA_UNROLL
    for (int k = 0; k < V; ++k) out.val[k] = sequence_value<T>(p, v * V + k);
    store_vector<V>(y + v * V, out);
  }
  if (const int64_t i = vectors * V + first; i < p.count) y[i] = sequence_value<T>(p, i);
}

template <class T>
Status sequence_launch(const ::baracuda::detail::ExecContext& ctx, const ::baracuda::detail::SequenceLaunch& a) {
  const Params p{a.y.data, a.y.stride[0], a.y.numel(), a.exact_int, a.int_start, a.int_step,
                 a.start,  a.step,        a.end,       a.half,      a.last};
  const bool vector = p.stride == 1 && reinterpret_cast<std::uintptr_t>(p.y) % 16 == 0;
  const int64_t per_thread = vector ? kSequenceVector<T> : 1;
  const int64_t blocks = (p.count + 256 * per_thread - 1) / (256 * per_thread);
  const dim3 grid(static_cast<unsigned>(blocks < 65535 * 8 ? blocks : 65535 * 8));
  if (vector)
    BARACUDA_LAUNCH(grid, dim3(256), 0, ctx.stream, sequence_vector_kernel<T>)(p);
  else
    BARACUDA_LAUNCH(grid, dim3(256), 0, ctx.stream, sequence_kernel<T>)(p);
  const auto e = launch::take_last_error();
  if (!e.failed) return {};
  return Error::device(std::string("SequencePlan: kernel launch failed: ") + e.message, e.code);
}

}  // namespace sequence

BARACUDA_DEFINE_KIND_TABLE(detail::SequenceTable, sequence_table, detail::SequenceTypes, sequence::sequence_launch)

BARACUDA_DEVICE_NAMESPACE_END
