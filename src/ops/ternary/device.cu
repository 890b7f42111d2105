// The ternary family's kernels, compiled for both devices (cmake/BaracudaKernels.cmake: by nvcc for cuda, by the
// host compiler against the SIMT emulator for sim): the catalog's math (one functor per op), wrapped for the
// elementwise engine (load to opmath, apply, round once), and the device's dispatch tables.
#include "sim/compat.cuh"  // first: the device namespace, launch macros and device API

#include <type_traits>

#include "device/convert.cuh"
#include "device/elementwise.cuh"
#include "ops/ternary/dispatch.hpp"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace ternary {

template <class S>
struct Grads {
  S d[3];
};

template <class S>
__host__ __device__ __forceinline__ S fma_rn(S a, S b, S c) {
  if constexpr (std::is_same_v<S, float>) return ::fmaf(a, b, c);
  else return ::fma(a, b, c);
}
/// std::max and std::min, whose NaN behaviour PyTorch's clamp inherits (fmax/fmin would drop a NaN).
template <class S>
__host__ __device__ __forceinline__ S std_max(S a, S b) { return a < b ? b : a; }
template <class S>
__host__ __device__ __forceinline__ S std_min(S a, S b) { return b < a ? b : a; }

// The ops (S: the opmath type). `fwd` is PyTorch's CUDA formula with nvcc's contractions written out as
// fma_rn, so that the sim device (no contraction) computes the same operations; `grad` is derivatives.yaml's.
struct Clamp {
  template <class S>
  __host__ __device__ static S fwd(S a, S lo, S hi, S) {
    if (lo != lo) return lo;
    if (hi != hi) return hi;
    return std_min(std_max(a, lo), hi);
  }
  template <class T>
  __host__ __device__ static T fwd_int(T a, T lo, T hi) { return std_min(std_max(a, lo), hi); }
  template <class S>
  __host__ __device__ static Grads<S> grad(S dy, S a, S lo, S hi, S) {
    return {{(a >= lo && a <= hi) ? dy : S(0), (a < lo && lo < hi) ? dy : S(0), (a > hi || hi < lo) ? dy : S(0)}};
  }
};
struct Lerp {
  template <class S>
  __host__ __device__ static S fwd(S a, S b, S w, S) {
    const S d = b - a;
    const S w_abs = w < S(0) ? -w : w;
    return w_abs < S(0.5) ? fma_rn(w, d, a) : fma_rn(-d, S(1) - w, b);
  }
  template <class S>
  __host__ __device__ static Grads<S> grad(S dy, S a, S b, S w, S) {
    return {{dy * (S(1) - w), dy * w, dy * (b - a)}};
  }
};
struct Addcmul {
  template <class S>
  __host__ __device__ static S fwd(S a, S b, S c, S value) { return fma_rn(value, b * c, a); }
  template <class S>
  __host__ __device__ static Grads<S> grad(S dy, S, S b, S c, S value) {
    return {{dy, dy * (c * value), dy * (b * value)}};
  }
};
struct Addcdiv {
  template <class S>
  __host__ __device__ static S fwd(S a, S b, S c, S value) { return fma_rn(value, b / c, a); }
  template <class S>
  __host__ __device__ static Grads<S> grad(S dy, S, S b, S c, S value) {
    return {{dy, dy * (value / c), -dy * value * b / (c * c)}};
  }
};
struct Fma {
  template <class S>
  __host__ __device__ static S fwd(S a, S b, S c, S) { return fma_rn(a, b, c); }
  template <class S>
  __host__ __device__ static Grads<S> grad(S dy, S a, S b, S, S) {
    return {{dy * b, dy * a, dy}};
  }
};

template <::baracuda::TernaryOp Op>
struct Functor;
#define BARACUDA_TERNARY_FUNCTOR(Enum, name, types, doc) \
  template <>                                            \
  struct Functor<::baracuda::TernaryOp::Enum> {          \
    using type = Enum;                                   \
  };
BARACUDA_TERNARY_OPS(BARACUDA_TERNARY_FUNCTOR)
#undef BARACUDA_TERNARY_FUNCTOR

// ---------------------------------------------------------------------------------------------------
// Element ops for the engine
// ---------------------------------------------------------------------------------------------------

template <class Fn, class T>
struct ForwardElementOp {
  convert::opmath_t<T> value;
  __host__ __device__ T operator()(T a, T b, T c) const {
    if constexpr (convert::is_int_v<T>)
      return Fn::fwd_int(a, b, c);
    else
      return convert::from_opmath<T>(
          Fn::fwd(convert::to_opmath(a), convert::to_opmath(b), convert::to_opmath(c), value));
  }
};

template <class Fn, class T>
struct BackwardElementOp {
  convert::opmath_t<T> value;
  uint8_t source[3];
  __host__ __device__ elementwise::Results<T, 3> operator()(T dy, T a, T b, T c) const {
    const Grads<convert::opmath_t<T>> g =
        Fn::grad(convert::to_opmath(dy), convert::to_opmath(a), convert::to_opmath(b), convert::to_opmath(c), value);
    return {{convert::from_opmath<T>(g.d[source[0]]), convert::from_opmath<T>(g.d[source[1]]),
             convert::from_opmath<T>(g.d[source[2]])}};
  }
};

template <class T>
struct WhereElementOp {
  __host__ __device__ T operator()(bool cond, T a, T b) const { return cond ? a : b; }
};

template <class T>
struct WhereBackwardElementOp {
  uint8_t source[2];
  __host__ __device__ elementwise::Results<T, 2> operator()(bool cond, T dy) const {
    const T zero = convert::from_opmath<T>(0);
    const T g[2] = {cond ? dy : zero, cond ? zero : dy};
    return {{g[source[0]], g[source[1]]}};
  }
};

// ---------------------------------------------------------------------------------------------------
// Launches and tables
// ---------------------------------------------------------------------------------------------------

using ::baracuda::detail::ExecContext;
using ::baracuda::detail::TernaryBackwardLaunch;
using ::baracuda::detail::TernaryLaunch;

template <::baracuda::TernaryOp Op, class T>
Status forward_launch(const ExecContext& ctx, const TernaryLaunch& l) {
  using E = ForwardElementOp<typename Functor<Op>::type, T>;
  const E op{static_cast<convert::opmath_t<T>>(l.value)};
  return elementwise::launch_elementwise<E, T, T, T, T>("TernaryPlan", ctx, op, l.out, l.in[0], l.in[1], l.in[2]);
}

template <::baracuda::TernaryOp Op, class T>
Status backward_launch(const ExecContext& ctx, const TernaryBackwardLaunch& l) {
  using E = BackwardElementOp<typename Functor<Op>::type, T>;
  const E op{static_cast<convert::opmath_t<T>>(l.value), {l.source[0], l.source[1], l.source[2]}};
  return elementwise::launch_elementwise_multi<E, 3, T, T, T, T, T>("TernaryBackwardPlan", ctx, op, l.grad, l.dy,
                                                                    l.in[0], l.in[1], l.in[2]);
}

template <class T>
Status where_launch(const ExecContext& ctx, const TernaryLaunch& l) {
  return elementwise::launch_elementwise<WhereElementOp<T>, T, bool, T, T>("WherePlan", ctx, WhereElementOp<T>{},
                                                                           l.out, l.in[0], l.in[1], l.in[2]);
}

template <class T>
Status where_backward_launch(const ExecContext& ctx, const TernaryBackwardLaunch& l) {
  const WhereBackwardElementOp<T> op{{l.source[0], l.source[1]}};
  return elementwise::launch_elementwise_multi<WhereBackwardElementOp<T>, 2, T, bool, T>(
      "WhereBackwardPlan", ctx, op, {l.grad[0], l.grad[1]}, l.in[0], l.dy);
}

}  // namespace ternary

const ::baracuda::detail::TernaryTables& ternary_tables() {
  using ::baracuda::TernaryOp, ::baracuda::detail::EnumTag;
  static constexpr ::baracuda::detail::TernaryTables tables = ::baracuda::detail::make_ternary_tables(
      []<TernaryOp Op, class T>(EnumTag<Op>, std::type_identity<T>) { return &ternary::forward_launch<Op, T>; },
      []<TernaryOp Op, class T>(EnumTag<Op>, std::type_identity<T>) { return &ternary::backward_launch<Op, T>; },
      []<class T>(std::type_identity<T>) { return &ternary::where_launch<T>; },
      []<class T>(std::type_identity<T>) { return &ternary::where_backward_launch<T>; });
  return tables;
}

BARACUDA_DEVICE_NAMESPACE_END
