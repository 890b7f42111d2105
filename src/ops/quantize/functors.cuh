// Device code of the quantize family: the convention of include/baracuda/ops/quantize.hpp as
// __host__ __device__ functors for the elementwise engine. Arithmetic is in S = opmath (f32, or f64 for f64
// data); scale operands are S, zero points int32 (learnable: S).
#pragma once

#include "sim/compat.cuh"  // first: the device namespace, launch macros and device API

#include <climits>
#include <cstdint>
#include <type_traits>

#include "baracuda/ops/quant_convention.hpp"
#include "device/convert.cuh"
#include "device/elementwise.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace quantize {

template <class S>
__host__ __device__ __forceinline__ S round_half_even(S v) {
  if constexpr (std::is_same_v<S, float>) return ::rintf(v);
  else return ::rint(v);
}

/// a·b rounded to S and never fused with a following addition: nvcc contracts `a·b + c` into an fma by
/// default and the sim device's host compiler does not, so a product that feeds a sum is written with this
/// wherever the devices must agree bit for bit.
template <class S>
__host__ __device__ __forceinline__ S mul_rn(S a, S b) {
#if BARACUDA_SIM || BARACUDA_ARCH > 0
  if constexpr (std::is_same_v<S, float>) return __fmul_rn(a, b);
  else return __dmul_rn(a, b);
#else
  return a * b;  // nvcc's host pass of a device functor: never run
#endif
}
/// a·b + c rounded once (PyTorch's CPU kernels, compiled with fma contraction, compute some sums this way).
template <class S>
__host__ __device__ __forceinline__ S fma_rn(S a, S b, S c) {
  if constexpr (std::is_same_v<S, float>) return ::fmaf(a, b, c);
  else return ::fma(a, b, c);
}

/// How x meets the scale operand before rounding; one per QuantConvention (quant_convention.hpp).
enum class Scaling : uint8_t {
  Divide = 0,      ///< x / s, correctly rounded: Exact (and so vLLM's symmetric static kernel: Exact with zp 0)
  Reciprocal = 1,  ///< x · inv, inv = 1.0f / f32(s) rounded to f32: PyTorch (its kernels take the scale as f32),
                   ///< vLLM's static azp kernel
  Multiply = 2,    ///< x · m, the operand already being the multiplier: vLLM's dynamic symmetric quantization
};

/// The range bounds and the rounding of x against the scale shared by every op.
template <class S>
struct Range {
  int32_t qmin;
  int32_t qmax;
  Scaling scaling = Scaling::Divide;
  /// vLLM's integer path (its azp kernels): the rounded value saturates to int32 (`cvt.rni.sat.s32.f32`,
  /// NaN → 0), the zero point is added in 32-bit two's complement, and the sum saturates to [qmin, qmax].
  bool int32_sum = false;

  /// The scale as the convention's arithmetic uses it: PyTorch's kernels take it as f32, so with f64 data
  /// it is rounded to f32 first; otherwise s itself.
  __host__ __device__ __forceinline__ S scale_of(S s) const {
    if constexpr (std::is_same_v<S, double>)
      if (scaling == Scaling::Reciprocal) return static_cast<double>(static_cast<float>(s));
    return s;
  }
  /// x against the scale operand, before rounding.
  __host__ __device__ __forceinline__ S scaled(S x, S s) const {
    switch (scaling) {
      case Scaling::Reciprocal: return x * static_cast<S>(1.0f / static_cast<float>(s));
      case Scaling::Multiply: return x * s;
      default: return x / s;
    }
  }
  /// nearbyint(scaled(x, s)) + zp, unclamped, in S (exact for the in-range values that matter: |q| < 2^24).
  /// A NaN quotient counts as 0 (PTX cvt.rni's NaN → 0), so NaN quantizes to zp.
  __host__ __device__ __forceinline__ S unclamped(S x, S s, S zp) const {
    const S r = scaled(x, s);
    return (r != r ? S(0) : round_half_even(r)) + zp;
  }
  __host__ __device__ __forceinline__ bool inside(S v) const { return v >= S(qmin) && v <= S(qmax); }
  /// clamp(v, qmin, qmax) as an integer (±inf clamps; NaN gives 0, as cvt.rzi does).
  __host__ __device__ __forceinline__ int32_t clamp(S v) const {
    return v < S(qmin) ? qmin : (v > S(qmax) ? qmax : convert::float_to_int<int32_t>(v));
  }
  /// The stored value of x: clamp(nearbyint(scaled(x, s)) + zp), or vLLM's integer path (`int32_sum`).
  __host__ __device__ __forceinline__ int32_t quantize(S x, S s, int32_t zp) const {
    if (!int32_sum) return clamp(unclamped(x, s, static_cast<S>(zp)));
    const int32_t t = convert::float_to_int<int32_t>(round_half_even(scaled(x, s)));  // saturating, NaN → 0
    const auto sum = static_cast<int32_t>(static_cast<uint32_t>(t) + static_cast<uint32_t>(zp));
    return sum < qmin ? qmin : (sum > qmax ? qmax : sum);
  }
};

/// The quantize step of a static (caller-scaled) quantization under convention `c` (quant_convention.hpp):
/// PyTorch multiplies by an f32 reciprocal; Exact divides; vLLM's azp kernels multiply by an f32 reciprocal
/// and add the zero point in int32.
template <class S>
__host__ __device__ __forceinline__ Range<S> static_range(QuantConvention c, int32_t qmin, int32_t qmax) {
  switch (c) {
    case QuantConvention::PyTorch: return {qmin, qmax, Scaling::Reciprocal, false};
    case QuantConvention::Vllm: return {qmin, qmax, Scaling::Reciprocal, true};
    default: return {qmin, qmax, Scaling::Divide, false};
  }
}

/// A quantized storage element's integer value, and back. Packed 4-bit values are nibbles of a byte.
template <class TQ>
__host__ __device__ __forceinline__ int32_t int_of(TQ q) { return static_cast<int32_t>(q); }
__host__ __device__ __forceinline__ int32_t nibble_value(uint8_t byte, int which, bool is_signed) {
  const int32_t n = which == 0 ? (byte & 0xF) : (byte >> 4);
  return is_signed && n >= 8 ? n - 16 : n;
}
__host__ __device__ __forceinline__ uint8_t pack_nibbles(int32_t even, int32_t odd) {
  return static_cast<uint8_t>((even & 0xF) | ((odd & 0xF) << 4));
}

/// q = clamp(nearbyint(x / s) + zp) into an 8-bit storage type.
template <class T, class TQ>
struct QuantizeOp {
  using S = convert::opmath_t<T>;
  Range<S> range;
  __host__ __device__ TQ operator()(T x, S s, int32_t zp) const {
    return static_cast<TQ>(range.quantize(convert::to_opmath(x), s, zp));
  }
};

/// Two adjacent elements (even, odd along the last dimension) into one packed byte.
template <class T>
struct QuantizePairOp {
  using S = convert::opmath_t<T>;
  Range<S> range;
  __host__ __device__ uint8_t operator()(T x0, T x1, S s0, S s1, int32_t z0, int32_t z1) const {
    return pack_nibbles(range.quantize(convert::to_opmath(x0), s0, z0), range.quantize(convert::to_opmath(x1), s1, z1));
  }
};

/// y = (q − zp) · s, rounded once to T.
template <class T, class TQ>
struct DequantizeOp {
  using S = convert::opmath_t<T>;
  __host__ __device__ T operator()(TQ q, S s, int32_t zp) const {
    return convert::from_opmath<T>(static_cast<S>(static_cast<int64_t>(int_of(q)) - zp) * s);  // exact: any int32 zp
  }
};

/// One packed byte into two adjacent elements.
template <class T, bool kSigned>
struct DequantizePairOp {
  using S = convert::opmath_t<T>;
  __host__ __device__ elementwise::Results<T, 2> operator()(uint8_t b, S s0, S s1, int32_t z0, int32_t z1) const {
    return {{convert::from_opmath<T>(static_cast<S>(static_cast<int64_t>(nibble_value(b, 0, kSigned)) - z0) * s0),
             convert::from_opmath<T>(static_cast<S>(static_cast<int64_t>(nibble_value(b, 1, kSigned)) - z1) * s1)}};
  }
};

/// dq = dy · s.
template <class T>
struct DequantizeBackwardOp {
  using S = convert::opmath_t<T>;
  __host__ __device__ T operator()(S s, T dy) const { return convert::from_opmath<T>(convert::to_opmath(dy) * s); }
};

/// The straight-through estimators: dx = dy · mask where x quantizes inside the range, and 0 outside
/// (dy · 0 keeps a NaN dy, as PyTorch's product does); the quantize backward also divides by s (`kDivideByScale`),
/// the fake-quantize one does not.
template <class T, bool kDivideByScale>
struct StraightThroughOp {
  using S = convert::opmath_t<T>;
  Range<S> range;
  __host__ __device__ T operator()(T x, S s, int32_t zp, T dy) const {
    const S mask = range.inside(range.unclamped(convert::to_opmath(x), s, static_cast<S>(zp))) ? S(1) : S(0);
    const S g = kDivideByScale ? convert::to_opmath(dy) / s : convert::to_opmath(dy);
    return convert::from_opmath<T>(g * mask);
  }
};
/// dx = dy / s · mask.
template <class T>
using QuantizeBackwardOp = StraightThroughOp<T, true>;
/// dx = dy · mask of the (non-learnable) fake-quantize: the forward's rounding decides the mask.
template <class T>
using FakeQuantizeBackwardOp = StraightThroughOp<T, false>;

/// y = (clamp(nearbyint(x / s) + zp) − zp) · s. `ZP` is int32 (FakeQuantize) or S (the learnable variant,
/// whose zero point is first rounded half to even and clamped; `zp_as_f32`: rounded to f32 before that, as
/// PyTorch's per-tensor learnable forward reads it, `zero_point[0].item<float>()`).
template <class T, class ZP>
struct FakeQuantizeOp {
  using S = convert::opmath_t<T>;
  Range<S> range;
  bool zp_as_f32 = false;
  __host__ __device__ S zero_point(ZP z) const {
    if constexpr (std::is_same_v<ZP, int32_t>) {
      return static_cast<S>(z);
    } else {
      if (zp_as_f32) z = static_cast<S>(static_cast<float>(z));
      return static_cast<S>(range.clamp(z != z ? S(0) : round_half_even(z)));
    }
  }
  __host__ __device__ T operator()(T x, S s, ZP z) const {
    const S zp = zero_point(z);
    const int32_t q = range.clamp(range.unclamped(convert::to_opmath(x), s, zp));
    return convert::from_opmath<T>((static_cast<S>(q) - zp) * range.scale_of(s));
  }
};

/// How the learnable backward reads its real-valued zero point and rounds x against it.
/// - Exact (and every convention but PyTorch): as the forward does — zp' = clamp(nearbyint(zp)),
///   v = nearbyint(x / s) + zp' — so the gradient is the gradient of the forward computed.
/// - PyTorch: as its backward kernels do — zp' = trunc(clamp(f32(zp) + 0.5f)) in f32 for a per-tensor zero
///   point (`_get_zero_point_from_tensor(…, is_forward = false)`), clamp(nearbyint(zp)) otherwise
///   (`_get_rounded_zero_point`); zp' is added **before** rounding and, as PyTorch's x86-64 build contracts
///   `zp' + x · inv` into an fma (its AVX2 kernels are compiled with -mfma; tests/data/gen_quantize_golden.py),
///   without rounding the product: v = nearbyint(fma(x, inv, zp')).
/// A NaN zero point counts as 0 and a NaN v as zp' (NaN quantizes to the zero point), in both.
template <class S>
struct LearnableRule {
  Range<S> range;
  bool pytorch = false;
  bool per_tensor = false;

  __host__ __device__ S zero_point(S z) const {
    if (z != z) return S(0);
    if (pytorch && per_tensor) {
      const float c = static_cast<float>(z) + 0.5f;
      const float lo = static_cast<float>(range.qmin), hi = static_cast<float>(range.qmax);
      const float cl = c < lo ? lo : (c > hi ? hi : c);
      return static_cast<S>(convert::float_to_int<int64_t>(cl));  // truncation toward zero
    }
    return static_cast<S>(range.clamp(round_half_even(z)));
  }
  __host__ __device__ S unclamped(S x, S s, S zp) const {
    if (!pytorch) return range.unclamped(x, s, zp);
    const S r = fma_rn(x, static_cast<S>(1.0f / static_cast<float>(s)), zp);
    return r != r ? zp : round_half_even(r);
  }
};

/// dx = dy · mask of the learnable fake-quantize, the mask decided by `rule`.
template <class T>
struct LearnableBackwardOp {
  using S = convert::opmath_t<T>;
  LearnableRule<S> rule;
  __host__ __device__ T operator()(T x, S s, S z, T dy) const {
    const S zp = rule.zero_point(z);
    const S mask = rule.range.inside(rule.unclamped(convert::to_opmath(x), s, zp)) ? S(1) : S(0);
    return convert::from_opmath<T>(convert::to_opmath(dy) * mask);
  }
};

/// The learnable backward's per-element contributions to (ds, dzp), before summation (with v, zp' from
/// the rule; y = (clamp(v) − zp')·s):
/// - Exact: inside the range ds = dy·(y − x)/s, dzp = 0; below ds = dy·(qmin − zp'), above
///   ds = dy·(qmax − zp'), and dzp = −dy·s outside; grad_factor multiplies the sums (`sum_factor`).
/// - PyTorch: its kernels' expressions, evaluated left to right in S with grad_factor `gf` per element:
///   inside ds = dy·(y − x)·inv·gf with y − x = fma(v − zp', s, −x) (contracted likewise: y is not
///   rounded), dzp = 0; outside ds = dy·(qmin or qmax − zp')·gf, dzp = dy·(−1)·s·gf.
/// Every product that the summation adds is rounded on its own (`mul_rn`), so each term has the same bits
/// on every device.
template <class S>
struct LearnableGrads {
  S ds;
  S dzp;
};
template <class T>
__host__ __device__ __forceinline__ LearnableGrads<convert::opmath_t<T>> learnable_grads(
    const LearnableRule<convert::opmath_t<T>>& rule, T xv, convert::opmath_t<T> s, convert::opmath_t<T> z, T dyv,
    convert::opmath_t<T> gf) {
  using S = convert::opmath_t<T>;
  const Range<S>& range = rule.range;
  const S zp = rule.zero_point(z);
  const S x = convert::to_opmath(xv), dy = convert::to_opmath(dyv);
  const S v = rule.unclamped(x, s, zp);
  if (rule.pytorch) {
    const S sc = range.scale_of(s);
    const S dzp = mul_rn(dy * S(-1) * sc, gf);
    if (v < S(range.qmin)) return {mul_rn(dy * (S(range.qmin) - zp), gf), dzp};
    if (v > S(range.qmax)) return {mul_rn(dy * (S(range.qmax) - zp), gf), dzp};
    const S inv = static_cast<S>(1.0f / static_cast<float>(s));
    return {mul_rn(dy * fma_rn(v - zp, sc, -x) * inv, gf), S(0)};
  }
  if (v < S(range.qmin)) return {mul_rn(dy, S(range.qmin) - zp), mul_rn(-dy, s)};
  if (v > S(range.qmax)) return {mul_rn(dy, S(range.qmax) - zp), mul_rn(-dy, s)};
  const S y = mul_rn(v - zp, s);
  return {dy * (y - x) / s, S(0)};
}

}  // namespace quantize
BARACUDA_DEVICE_NAMESPACE_END
