// Device code of Fp8QuantizePlan: y = saturate_to_fp8(x · scale) and amax = max |x| in one pass over x.
// Two paths: contiguous (x and y dense and 16-byte aligned: 16 fp8 outputs per thread per step, one
// 16-byte store and 16·sizeof(x) bytes of 128-bit loads) and strided (any coalesced geometry, 64-bit
// offsets). Each thread keeps its running amax in a register; each block reduces and does one atomicMax.
// SkipNan (the TransformerEngine convention): a NaN element leaves the running amax unchanged, as
// TransformerEngine's `fmaxf(fabsf(x), max)`; otherwise it makes it the quiet NaN. scale_inv (optional)
// is written by one thread: the reset kernel's, or, when that does not run, block 0's thread 0.
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
/// any NaN becomes the quiet NaN, which is above +inf, or, with SkipNan, 0: the identity of the maximum).
template <class TIn, class TOut, bool SkipNan>
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
    if (bits > kInfBits) bits = SkipNan ? 0u : kQuietNaNBits;
    amax = static_cast<int32_t>(bits) > amax ? static_cast<int32_t>(bits) : amax;
    if constexpr (std::is_same_v<TIn, double>)
      return convert::from_double<TOut>(v * scale, /*saturate_fp8=*/true);
    else
      return convert::from_float<TOut>(v * scale, /*saturate_fp8=*/true);
  }
};

template <class TIn, class TOut, bool SkipNan>
__device__ __forceinline__ QuantizeElement<TIn, TOut, SkipNan> quantize_element(const float* scale) {
  return {static_cast<convert::opmath_t<TIn>>(*scale)};
}

/// scale_inv = 1 / scale, one IEEE f32 division (TransformerEngine's __frcp_rn); nothing when null.
__device__ __forceinline__ void write_scale_inv(const float* scale, float* scale_inv) {
  if (scale_inv != nullptr) *scale_inv = 1.0f / *scale;
}

/// Before the fused pass: amax = +0.0f (a non-accumulating quantization; `amax` null: left alone) and
/// scale_inv (null: none, or the fused pass writes it). A template so that other families' kernel units can
/// include it (a plain __global__ would be defined in each).
template <class = void>
__global__ void amax_reset_kernel(float* amax, const float* scale, float* scale_inv) {
  if (threadIdx.x == 0 && blockIdx.x == 0) {
    if (amax != nullptr) *amax = 0.0f;
    write_scale_inv(scale, scale_inv);
  }
}

inline constexpr int kVec = 16;  // fp8 outputs per vector: one 16-byte store

template <class TIn, class TOut, bool SkipNan>
__global__ void quantize_contiguous_kernel(const TIn* x, const float* scale, TOut* y, int64_t n, float* amax,
                                           float* scale_inv) {
  const QuantizeElement<TIn, TOut, SkipNan> op = quantize_element<TIn, TOut, SkipNan>(scale);
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
  if (blockIdx.x == 0 && threadIdx.x == 0) write_scale_inv(scale, scale_inv);
}

/// Operand 0 of `p` is y, operand 1 is x; dimensions innermost first.
template <class TIn, class TOut, bool SkipNan>
__global__ void quantize_strided_kernel(const TIn* x, const float* scale, TOut* y,
                                        elementwise::StridedParams<int64_t, 2> p, uint64_t n, float* amax,
                                        float* scale_inv) {
  const QuantizeElement<TIn, TOut, SkipNan> op = quantize_element<TIn, TOut, SkipNan>(scale);
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
  if (blockIdx.x == 0 && threadIdx.x == 0) write_scale_inv(scale, scale_inv);
}

template <class TIn, class TOut, bool SkipNan>
Status quantize_launch_as(const ::baracuda::detail::ExecContext& ctx, const ::baracuda::detail::Fp8QuantizeLaunch& a) {
  constexpr std::string_view kPlan = "Fp8QuantizePlan";
  const auto* x = static_cast<const TIn*>(a.x.data);
  const auto* scale = static_cast<const float*>(a.scale.data);
  auto* y = static_cast<TOut*>(a.y.data);
  auto* amax = static_cast<float*>(a.amax.data);
  auto* scale_inv = static_cast<float*>(a.scale_inv.data);  // null: not wanted
  const auto g = ::baracuda::detail::coalesce<2>(a.y.shape, {a.y.stride.data(), a.x.stride.data()});
  // The reset kernel runs when amax needs a reset, or to write scale_inv when there is no fused pass.
  const bool reset = !a.accumulate_amax;
  if (reset || (g.numel == 0 && scale_inv != nullptr)) {
    BARACUDA_LAUNCH(dim3(1), dim3(1), 0, ctx.stream, amax_reset_kernel<>)(reset ? amax : nullptr, scale, scale_inv);
    BARACUDA_TRY(elementwise::launch_status(kPlan));
    scale_inv = nullptr;  // written
  }
  if (g.numel == 0) return {};

  const ::baracuda::detail::ElementwiseTuning t = elementwise::tuning_for(ctx);
  const dim3 block(static_cast<unsigned>(t.threads_per_block));
  const bool contiguous = g.rank == 1 && g.strides[0][0] == 1 && g.strides[1][0] == 1;
  if (contiguous && elementwise::aligned16(x) && elementwise::aligned16(y)) {
    const dim3 grid(elementwise::grid_for(t, ctx, (g.numel + kVec - 1) / kVec));
    BARACUDA_LAUNCH(grid, block, 0, ctx.stream, quantize_contiguous_kernel<TIn, TOut, SkipNan>)
    (x, scale, y, g.numel, amax, scale_inv);
  } else {
    const dim3 grid(elementwise::grid_for(t, ctx, g.numel));
    BARACUDA_LAUNCH(grid, block, 0, ctx.stream, quantize_strided_kernel<TIn, TOut, SkipNan>)
    (x, scale, y, elementwise::strided_params<int64_t>(g), static_cast<uint64_t>(g.numel), amax, scale_inv);
  }
  return elementwise::launch_status(kPlan);
}

/// The table's entry: the NaN rule picks the instantiation (the TransformerEngine convention never takes
/// f64 x, so only f16/bf16/f32 have a SkipNan one).
template <class TIn, class TOut>
Status quantize_launch(const ::baracuda::detail::ExecContext& ctx, const ::baracuda::detail::Fp8QuantizeLaunch& a) {
  if constexpr (!std::is_same_v<TIn, double>)
    if (a.skip_nan_amax) return quantize_launch_as<TIn, TOut, true>(ctx, a);
  return quantize_launch_as<TIn, TOut, false>(ctx, a);
}

}  // namespace fp8
BARACUDA_DEVICE_NAMESPACE_END
