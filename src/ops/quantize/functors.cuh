// Device code of the quantize family: the convention of include/baracuda/ops/quantize.hpp as
// __host__ __device__ functors for the elementwise engine. Arithmetic is in S = opmath (f32, or f64 for f64
// data); scale operands are S, zero points int32 (learnable: S).
#pragma once

#include "sim/compat.cuh"  // first: the device namespace, launch macros and device API

#include <cstdint>
#include <type_traits>

#include "device/convert.cuh"
#include "device/elementwise.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace quantize {

template <class S>
__host__ __device__ __forceinline__ S round_half_even(S v) {
  if constexpr (std::is_same_v<S, float>) return ::rintf(v);
  else return ::rint(v);
}

/// The range bounds and the rounding of x / s shared by every op.
template <class S>
struct Range {
  int32_t qmin;
  int32_t qmax;

  /// nearbyint(x / s) + zp, unclamped, in S (exact for the in-range values that matter: |q| < 2^24).
  /// A NaN quotient counts as 0 (PTX cvt.rni's NaN → 0), so NaN quantizes to zp.
  __host__ __device__ __forceinline__ S unclamped(S x, S s, S zp) const {
    const S r = x / s;
    return (r != r ? S(0) : round_half_even(r)) + zp;
  }
  __host__ __device__ __forceinline__ bool inside(S v) const { return v >= S(qmin) && v <= S(qmax); }
  /// clamp(v, qmin, qmax) as an integer (±inf clamps).
  __host__ __device__ __forceinline__ int32_t clamp(S v) const {
    return v < S(qmin) ? qmin : (v > S(qmax) ? qmax : static_cast<int32_t>(v));
  }
};

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
    return static_cast<TQ>(range.clamp(range.unclamped(convert::to_opmath(x), s, static_cast<S>(zp))));
  }
};

/// Two adjacent elements (even, odd along the last dimension) into one packed byte.
template <class T>
struct QuantizePairOp {
  using S = convert::opmath_t<T>;
  Range<S> range;
  __host__ __device__ uint8_t operator()(T x0, T x1, S s0, S s1, int32_t z0, int32_t z1) const {
    return pack_nibbles(range.clamp(range.unclamped(convert::to_opmath(x0), s0, static_cast<S>(z0))),
                        range.clamp(range.unclamped(convert::to_opmath(x1), s1, static_cast<S>(z1))));
  }
};

/// y = (q − zp) · s, rounded once to T.
template <class T, class TQ>
struct DequantizeOp {
  using S = convert::opmath_t<T>;
  __host__ __device__ T operator()(TQ q, S s, int32_t zp) const {
    return convert::from_opmath<T>(static_cast<S>(int_of(q) - zp) * s);
  }
};

/// One packed byte into two adjacent elements.
template <class T, bool kSigned>
struct DequantizePairOp {
  using S = convert::opmath_t<T>;
  __host__ __device__ elementwise::Results<T, 2> operator()(uint8_t b, S s0, S s1, int32_t z0, int32_t z1) const {
    return {{convert::from_opmath<T>(static_cast<S>(nibble_value(b, 0, kSigned) - z0) * s0),
             convert::from_opmath<T>(static_cast<S>(nibble_value(b, 1, kSigned) - z1) * s1)}};
  }
};

/// dq = dy · s.
template <class T>
struct DequantizeBackwardOp {
  using S = convert::opmath_t<T>;
  __host__ __device__ T operator()(S s, T dy) const { return convert::from_opmath<T>(convert::to_opmath(dy) * s); }
};

/// dx = dy / s · mask (the straight-through estimator; dy · 0 keeps a NaN dy, as PyTorch's product does).
template <class T>
struct QuantizeBackwardOp {
  using S = convert::opmath_t<T>;
  Range<S> range;
  __host__ __device__ T operator()(T x, S s, int32_t zp, T dy) const {
    const S mask = range.inside(range.unclamped(convert::to_opmath(x), s, static_cast<S>(zp))) ? S(1) : S(0);
    return convert::from_opmath<T>(convert::to_opmath(dy) / s * mask);
  }
};

/// y = (clamp(nearbyint(x / s) + zp) − zp) · s. `ZP` is int32 (FakeQuantize) or S (the learnable variant,
/// whose zero point is first rounded half to even and clamped).
template <class T, class ZP>
struct FakeQuantizeOp {
  using S = convert::opmath_t<T>;
  Range<S> range;
  __host__ __device__ static S zero_point(ZP z, const Range<S>& r) {
    if constexpr (std::is_same_v<ZP, int32_t>) return static_cast<S>(z);
    else return static_cast<S>(r.clamp(z != z ? S(0) : round_half_even(z)));
  }
  __host__ __device__ T operator()(T x, S s, ZP z) const {
    const S zp = zero_point(z, range);
    const int32_t q = range.clamp(range.unclamped(convert::to_opmath(x), s, zp));
    return convert::from_opmath<T>((static_cast<S>(q) - zp) * s);
  }
};

/// dx = dy · mask (the learnable variant's zero point rounded as its forward rounds it).
template <class T, class ZP>
struct FakeQuantizeBackwardOp {
  using S = convert::opmath_t<T>;
  Range<S> range;
  __host__ __device__ T operator()(T x, S s, ZP z, T dy) const {
    const S zp = FakeQuantizeOp<T, ZP>::zero_point(z, range);
    const S mask = range.inside(range.unclamped(convert::to_opmath(x), s, zp)) ? S(1) : S(0);
    return convert::from_opmath<T>(convert::to_opmath(dy) * mask);
  }
};

/// The learnable backward's per-element contributions to (ds, dzp), before grad_factor and summation:
/// inside the range ds = dy·(y − x)/s, dzp = 0; below ds = dy·(qmin − zp'), above ds = dy·(qmax − zp'),
/// and dzp = −dy·s outside.
template <class S>
struct LearnableGrads {
  S ds;
  S dzp;
};
template <class T>
__host__ __device__ __forceinline__ LearnableGrads<convert::opmath_t<T>> learnable_grads(
    const Range<convert::opmath_t<T>>& range, T xv, convert::opmath_t<T> s, convert::opmath_t<T> z, T dyv) {
  using S = convert::opmath_t<T>;
  const S zp = FakeQuantizeOp<T, S>::zero_point(z, range);
  const S x = convert::to_opmath(xv), dy = convert::to_opmath(dyv);
  const S v = range.unclamped(x, s, zp);
  if (v < S(range.qmin)) return {dy * (S(range.qmin) - zp), -dy * s};
  if (v > S(range.qmax)) return {dy * (S(range.qmax) - zp), -dy * s};
  const S y = (v - zp) * s;
  return {dy * (y - x) / s, S(0)};
}

}  // namespace quantize
BARACUDA_DEVICE_NAMESPACE_END
