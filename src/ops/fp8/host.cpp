// The fp8 family's host reference, written from the definitions without the CUDA conversion functions:
// values are made exact with the host format model (core/reference_formats.hpp), products are IEEE
// multiplications in float (f16/bf16/f32 inputs) or double (f64), and each result is rounded once by the
// model's encoder (saturating for quantize). The amax is a plain maximum over exact values.
#include <cfloat>
#include <cmath>
#include <cstring>
#include <type_traits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "core/reference_formats.hpp"
#include "device/host_loop.hpp"
#include "ops/fp8/dispatch.hpp"

namespace baracuda::reference {
namespace {

template <class T>
constexpr const BinaryFormat& fp8_format() {
  if constexpr (std::is_same_v<T, __nv_fp8_e4m3>)
    return kFormatE4M3;
  else
    return kFormatE5M2;
}

template <class T>
T fp8_of_bits(uint64_t b) {
  T r;
  r.__x = static_cast<__nv_fp8_storage_t>(b);
  return r;
}

float f32_at(const ConstDynTensor& t) {
  float v;
  std::memcpy(&v, t.data, sizeof v);
  return v;
}

template <class TIn, class TOut>
Status host_quantize(const detail::ExecContext&, const detail::Fp8QuantizeLaunch& a) {
  const auto* x = static_cast<const TIn*>(a.x.data);
  auto* y = static_cast<TOut*>(a.y.data);
  const float scale = f32_at(a.scale);
  // max |x| over exact values. A NaN element: with skip_nan_amax (TransformerEngine's fmaxf) it is left
  // out; otherwise the amax becomes NaN and stays NaN.
  long double amax = 0;
  detail::for_each_strided<2>(a.y.shape, {a.y.stride.data(), a.x.stride.data()},
                              [&](const std::array<int64_t, 2>& off) {
                                const long double v = value_of(x[off[1]]);
                                if (std::isnan(v)) {
                                  if (!a.skip_nan_amax) amax = NAN;
                                } else if (!std::isnan(amax)) {
                                  amax = std::max(amax, std::fabs(v));
                                }
                                long double product;
                                if constexpr (std::is_same_v<TIn, double>)
                                  product = static_cast<double>(v) * static_cast<double>(scale);
                                else
                                  product = static_cast<float>(v) * scale;
                                y[off[0]] = fp8_of_bits<TOut>(encode(product, fp8_format<TOut>(), /*saturate=*/true));
                              });
  if (a.scale_inv.data != nullptr) {
    // One correctly rounded f32 division: the quotient in double (53 ≥ 2·24 + 2 bits) rounds once more
    // without a double-rounding error.
    const float inv = static_cast<float>(1.0 / static_cast<double>(scale));
    std::memcpy(a.scale_inv.data, &inv, sizeof inv);
  }
  const float result = store<float>(amax);  // NaN: the canonical quiet NaN 0x7FC00000
  int32_t bits;
  std::memcpy(&bits, &result, sizeof bits);
  if (a.accumulate_amax) {
    if (a.x.numel() == 0) return {};
    // The documented rule for a starting value: the larger f32 bit pattern as a signed integer.
    int32_t old_bits;
    std::memcpy(&old_bits, a.amax.data, sizeof old_bits);
    bits = std::max(bits, old_bits);
  }
  std::memcpy(a.amax.data, &bits, sizeof bits);
  return {};
}

template <class TIn, class TOut>
Status host_dequantize(const detail::ExecContext&, const detail::Fp8DequantizeLaunch& a) {
  const auto* x = static_cast<const TIn*>(a.x.data);
  auto* y = static_cast<TOut*>(a.y.data);
  const float scale_inv = f32_at(a.scale_inv);
  detail::for_each_strided<2>(a.y.shape, {a.y.stride.data(), a.x.stride.data()},
                              [&](const std::array<int64_t, 2>& off) {
                                const long double v = decode(x[off[1]].__x, fp8_format<TIn>());
                                if constexpr (std::is_same_v<TOut, double>)
                                  y[off[0]] = static_cast<double>(v) * static_cast<double>(scale_inv);
                                else
                                  y[off[0]] = store<TOut>(static_cast<float>(v) * scale_inv);
                              });
  return {};
}

Status host_scaling_update(const detail::ExecContext&, const detail::Fp8ScalingUpdateLaunch& a) {
  auto* h = static_cast<float*>(a.amax_history.data);
  const int64_t s = a.amax_history.stride[0];
  const int64_t n = a.amax_history.shape.dims[0];
  // The amax the scale comes from: the largest non-NaN entry (at least 0), or slot 0.
  double amax = 0;
  for (int64_t i = 0; i < n; ++i)
    if (!std::isnan(h[i * s])) amax = std::max(amax, static_cast<double>(h[i * s]));
  if (a.algo == AmaxComputeAlgo::MostRecent) amax = h[0];

  float* scale = static_cast<float*>(a.scale.data);
  double next = *scale;
  if (std::isfinite(amax) && amax > 0) next = static_cast<double>(a.scaled_max) / amax;
  float next32 = static_cast<float>(next);  // correctly rounded: double holds > 2·24 + 2 bits
  if (std::isinf(next32)) next32 = FLT_MAX;
  *scale = next32;
  *static_cast<float*>(a.scale_inv.data) = static_cast<float>(1.0 / static_cast<double>(next32));

  // Roll: slots 1..n-2 take their successors, the last slot the current amax, slot 0 is cleared.
  const float current = h[0];
  for (int64_t i = 1; i + 1 < n; ++i) h[i * s] = h[(i + 1) * s];
  if (n > 1) h[(n - 1) * s] = current;
  h[0] = 0.0f;
  return {};
}

}  // namespace

BARACUDA_DEFINE_TABLE(detail::Fp8Functions, fp8_functions,
    detail::make_fp8_functions(
        []<class In, class Out>(std::type_identity<In>, std::type_identity<Out>) { return &host_quantize<In, Out>; },
        []<class In, class Out>(std::type_identity<In>, std::type_identity<Out>) { return &host_dequantize<In, Out>; },
        &host_scaling_update))

}  // namespace baracuda::reference
