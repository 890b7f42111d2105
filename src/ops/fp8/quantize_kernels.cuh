// Device code of Fp8QuantizePlan: y = saturate_to_fp8(x · scale) and amax = max |x| in one pass over x.
// Two paths: contiguous (x and y dense and 16-byte aligned: 16 fp8 outputs per thread per step, one
// 16-byte store and 16·sizeof(x) bytes of 128-bit loads) and strided (any coalesced geometry, 64-bit
// offsets). Each thread keeps its running amax in a register; each block reduces and does one atomicMax.
#pragma once

#include "sim/compat.cuh"  // first: the device namespace, launch macros and device API

#include <cstdint>
#include <type_traits>

#include "device/convert.cuh"
#include "device/elementwise.cuh"
#include "device/vector_access.cuh"
#include "ops/fp8/block_max.cuh"
#include "ops/fp8/dispatch.hpp"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace fp8 {

inline constexpr uint32_t kQuietNaNBits = 0x7FC00000u;
inline constexpr uint32_t kInfBits = 0x7F800000u;

/// One element: the saturated fp8 value of x · scale, and |x| folded into the running amax (as f32 bits;
/// any NaN becomes the quiet NaN, which is above +inf).
template <class TIn, class TOut>
struct QuantizeElement {
  convert::opmath_t<TIn> scale;

  __device__ __forceinline__ TOut operator()(TIn x, int32_t& amax) const {
    const convert::opmath_t<TIn> v = convert::to_opmath(x);
    float a;
    if constexpr (std::is_same_v<TIn, double>)
      a = static_cast<float>(fabs(v));  // rounding to nearest is monotone: max commutes with it
    else
      a = fabsf(v);
    uint32_t bits = __float_as_uint(a);
    if (bits > kInfBits) bits = kQuietNaNBits;
    amax = static_cast<int32_t>(bits) > amax ? static_cast<int32_t>(bits) : amax;
    if constexpr (std::is_same_v<TIn, double>)
      return convert::from_double<TOut>(v * scale, /*saturate_fp8=*/true);
    else
      return convert::from_float<TOut>(v * scale, /*saturate_fp8=*/true);
  }
};

template <class TIn, class TOut>
__device__ __forceinline__ QuantizeElement<TIn, TOut> quantize_element(const float* scale) {
  return {static_cast<convert::opmath_t<TIn>>(*scale)};
}

/// amax = +0.0f before a non-accumulating quantization.
__global__ void amax_reset_kernel(float* amax) {
  if (threadIdx.x == 0 && blockIdx.x == 0) *amax = 0.0f;
}

inline constexpr int kVec = 16;  // fp8 outputs per vector: one 16-byte store

template <class TIn, class TOut>
__global__ void quantize_contiguous_kernel(const TIn* x, const float* scale, TOut* y, int64_t n, float* amax) {
  const QuantizeElement<TIn, TOut> op = quantize_element<TIn, TOut>(scale);
  const int64_t tid = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t nthreads = static_cast<int64_t>(gridDim.x) * blockDim.x;
  int32_t m = 0;
  const int64_t nvec = n / kVec;
  for (int64_t v = tid; v < nvec; v += nthreads) {
    const AlignedVector<TIn, kVec> in = load_vector<kVec>(x + v * kVec);
    AlignedVector<TOut, kVec> out;
    BARACUDA_UNROLL
    for (int j = 0; j < kVec; ++j) out.val[j] = op(in.val[j], m);
    store_vector<kVec>(y + v * kVec, out);
  }
  for (int64_t i = nvec * kVec + tid; i < n; i += nthreads) y[i] = op(x[i], m);
  block_max_to_global(m, reinterpret_cast<int32_t*>(amax));
}

/// Operand 0 of `p` is y, operand 1 is x; dimensions innermost first.
template <class TIn, class TOut>
__global__ void quantize_strided_kernel(const TIn* x, const float* scale, TOut* y,
                                        elementwise::StridedParams<int64_t, 2> p, uint64_t n, float* amax) {
  const QuantizeElement<TIn, TOut> op = quantize_element<TIn, TOut>(scale);
  const uint64_t tid = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const uint64_t nthreads = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  int32_t m = 0;
  for (uint64_t i = tid; i < n; i += nthreads) {
    int64_t oy = 0, ox = 0;
    uint64_t rem = i;
    for (int d = 0; d < p.rank; ++d) {
      const uint64_t size = static_cast<uint64_t>(p.sizes[d]);
      const int64_t c = static_cast<int64_t>(rem % size);
      rem /= size;
      oy += c * p.strides[0][d];
      ox += c * p.strides[1][d];
    }
    y[oy] = op(x[ox], m);
  }
  block_max_to_global(m, reinterpret_cast<int32_t*>(amax));
}

template <class TIn, class TOut>
Status quantize_launch(const ::baracuda::detail::ExecContext& ctx, const ::baracuda::detail::Fp8QuantizeLaunch& a) {
  constexpr std::string_view kPlan = "Fp8QuantizePlan";
  const auto* x = static_cast<const TIn*>(a.x.data);
  const auto* scale = static_cast<const float*>(a.scale.data);
  auto* y = static_cast<TOut*>(a.y.data);
  auto* amax = static_cast<float*>(a.amax.data);
  if (!a.accumulate_amax) {
    BARACUDA_LAUNCH(dim3(1), dim3(1), 0, ctx.stream, amax_reset_kernel)(amax);
    BARACUDA_TRY(elementwise::launch_status(kPlan));
  }
  const auto g = ::baracuda::detail::coalesce<2>(a.y.shape, {a.y.stride.data(), a.x.stride.data()});
  if (g.numel == 0) return {};

  const ::baracuda::detail::ElementwiseTuning t = elementwise::tuning_for(ctx);
  const dim3 block(static_cast<unsigned>(t.threads_per_block));
  const bool contiguous = g.rank == 1 && g.strides[0][0] == 1 && g.strides[1][0] == 1;
  if (contiguous && elementwise::aligned16(x) && elementwise::aligned16(y)) {
    const dim3 grid(elementwise::grid_for(t, ctx, (g.numel + kVec - 1) / kVec));
    BARACUDA_LAUNCH(grid, block, 0, ctx.stream, quantize_contiguous_kernel<TIn, TOut>)(x, scale, y, g.numel, amax);
  } else {
    const dim3 grid(elementwise::grid_for(t, ctx, g.numel));
    BARACUDA_LAUNCH(grid, block, 0, ctx.stream, quantize_strided_kernel<TIn, TOut>)
    (x, scale, y, elementwise::strided_params<int64_t>(g), static_cast<uint64_t>(g.numel), amax);
  }
  return elementwise::launch_status(kPlan);
}

}  // namespace fp8
BARACUDA_DEVICE_NAMESPACE_END
