// Device code of the reduce family: one functor per kind of accumulator for the segmented-reduction engine
// (device/segment_reduce.cuh), and `reduce_launch<T>`, which picks the functor of the launch's op. The kernel
// units device_float.cu and device_int.cu instantiate it for their kinds; device.cu holds the table.
#pragma once

#include "sim/compat.cuh"  // first: the device namespace, launch macros and device API

#include <cstdint>
#include <type_traits>

#include "device/convert.cuh"
#include "device/precise_math.cuh"
#include "device/running_stats.cuh"
#include "device/segment_reduce.cuh"
#include "device/shift.cuh"
#include "ops/reduce/dispatch.hpp"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace reduce {

using running_stats::is_nan;
/// Where segment s's result goes: y's offset of the row-major index s over the kept dimensions.
using OutOffsets = running_stats::IndexOffsets;

/// What every functor holds: y, where each segment's result goes, and the reduced count n.
template <class Out>
struct Sink {
  Out* y;
  OutOffsets at;
  int64_t n;
  __device__ void put(int64_t s, Out v) const { y[at(s)] = v; }
};

/// Sum, mean and the L1, L2 and p norms of a float kind: a sum in M of map(x), finished per op.
template <class T>
struct SumOp : Sink<T> {
  using M = convert::opmath_t<T>;
  using Acc = M;
  ReduceOp op;
  M p;
  __host__ __device__ Acc identity() const { return M(0); }
  __host__ __device__ Acc map(T x) const {
    const M v = convert::to_opmath(x);
    switch (op) {
      case ReduceOp::NormL1: return v < M(0) ? -v : v;
      case ReduceOp::NormL2: return v * v;
      case ReduceOp::NormP: {
        const M a = v < M(0) ? -v : v;
        if (p == M(0)) return a != M(0) ? M(1) : M(0);  // NaN counts: it is nonzero
        return p == M(1) ? a : pmath::pow(a, p);
      }
      default: return v;
    }
  }
  __host__ __device__ Acc combine(Acc a, Acc b) const { return a + b; }
  __device__ void finish(int64_t s, Acc acc) const {
    M r = acc;
    if (op == ReduceOp::Mean) r = acc / static_cast<M>(this->n);
    if (op == ReduceOp::NormL2) r = pmath::sqrt(acc);
    if (op == ReduceOp::NormP && p != M(0) && p != M(1)) r = pmath::pow(acc, M(1) / p);
    this->put(s, convert::from_opmath<T>(r));
  }
};

/// Prod of a float kind, in M.
template <class T>
struct ProdOp : Sink<T> {
  using M = convert::opmath_t<T>;
  using Acc = M;
  __host__ __device__ Acc identity() const { return M(1); }
  __host__ __device__ Acc map(T x) const { return convert::to_opmath(x); }
  __host__ __device__ Acc combine(Acc a, Acc b) const { return a * b; }
  __device__ void finish(int64_t s, Acc acc) const { this->put(s, convert::from_opmath<T>(acc)); }
};

/// Max, min and the L∞ norm of a float kind; NaN wins from either side.
template <class T>
struct ExtremumOp : Sink<T> {
  using M = convert::opmath_t<T>;
  using Acc = M;
  bool max;   ///< max (Max, NormLinf) or min
  bool norm;  ///< |x| (NormLinf)
  __host__ __device__ Acc identity() const { return max ? static_cast<M>(-INFINITY) : static_cast<M>(INFINITY); }
  __host__ __device__ Acc map(T x) const {
    const M v = convert::to_opmath(x);
    return norm && v < M(0) ? -v : v;
  }
  __host__ __device__ Acc combine(Acc a, Acc b) const {
    if (is_nan(a) || is_nan(b)) return is_nan(a) ? a : b;
    return max ? (b > a ? b : a) : (b < a ? b : a);
  }
  __device__ void finish(int64_t s, Acc acc) const { this->put(s, convert::from_opmath<T>(acc)); }
};

/// Var and std of a float kind: Welford's (n, mean, M2) per thread, merged by Chan's formula.
template <class T>
struct VarianceOp : Sink<T> {
  using M = convert::opmath_t<T>;
  using Acc = detail::WelfordAcc<M>;
  M correction;
  bool std_dev;
  __host__ __device__ Acc identity() const { return {M(0), M(0), 0}; }
  __host__ __device__ Acc map(T x) const { return {convert::to_opmath(x), M(0), 1}; }
  __host__ __device__ Acc combine(Acc a, Acc b) const { return running_stats::welford_merge(a, b); }
  __device__ void finish(int64_t s, Acc acc) const {
    const M dof = static_cast<M>(acc.n) - correction;
    M v = acc.m2 / (dof > M(0) ? dof : M(0));
    if (std_dev) v = pmath::sqrt(v);
    this->put(s, convert::from_opmath<T>(v));
  }
};

/// LogSumExp of a float kind: a running (max, Σ exp(x − max)).
template <class T>
struct LogSumExpOp : Sink<T> {
  using M = convert::opmath_t<T>;
  using Acc = detail::LogSumExpAcc<M>;
  __host__ __device__ Acc identity() const { return {static_cast<M>(-INFINITY), M(0)}; }
  __host__ __device__ Acc map(T x) const { return {convert::to_opmath(x), M(1)}; }
  __host__ __device__ Acc combine(Acc a, Acc b) const { return running_stats::online_softmax_merge(a, b, M(1)); }
  __device__ void finish(int64_t s, Acc acc) const {
    const M r = acc.max == static_cast<M>(-INFINITY) ? acc.max : acc.max + pmath::log(acc.sum);
    this->put(s, convert::from_opmath<T>(r));
  }
};

/// The accumulation value of x for the extremum and arg functors: opmath for floats, s64 for integers and bool.
template <class T>
using ValueOf = std::conditional_t<std::is_integral_v<T>, int64_t, convert::opmath_t<T>>;

template <class T>
__host__ __device__ inline ValueOf<T> value_of(T x) {
  if constexpr (std::is_integral_v<T>)
    return static_cast<int64_t>(x);
  else
    return convert::to_opmath(x);
}

/// Argmax and argmin: the first index of the extremum; a NaN beats every number, the first NaN every NaN.
/// Combine never depends on which side came first: ties go to the smaller index.
template <class T>
struct ArgOp : Sink<int64_t> {
  using V = ValueOf<T>;
  using Acc = detail::ArgAcc<V>;
  bool max;
  __host__ __device__ Acc identity() const { return {V(0), -1}; }
  __host__ __device__ Acc map_at(int64_t r, T x) const { return {value_of(x), r}; }
  __host__ __device__ Acc combine(Acc a, Acc b) const {
    if (a.index < 0) return b;
    if (b.index < 0) return a;
    const bool an = is_nan(a.value), bn = is_nan(b.value);
    bool take_b;
    if (an || bn)
      take_b = an && bn ? b.index < a.index : bn;
    else if (a.value == b.value)
      take_b = b.index < a.index;
    else
      take_b = max ? b.value > a.value : b.value < a.value;
    return take_b ? b : a;
  }
  __device__ void finish(int64_t s, Acc acc) const { this->put(s, acc.index); }
};

/// Sum and prod of an integer or bool kind, in s64 wrapping on overflow (through u64: no undefined behaviour).
template <class T>
struct IntegerSumOp : Sink<int64_t> {
  using Acc = int64_t;
  bool prod;
  __host__ __device__ Acc identity() const { return prod ? 1 : 0; }
  __host__ __device__ Acc map(T x) const { return static_cast<int64_t>(x); }
  __host__ __device__ Acc combine(Acc a, Acc b) const {
    const auto ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
    return static_cast<int64_t>(prod ? ua * ub : ua + ub);
  }
  __device__ void finish(int64_t s, Acc acc) const { this->put(s, acc); }
};

/// Max and min of an integer or bool kind.
template <class T>
struct IntegerExtremumOp : Sink<T> {
  using Acc = int64_t;
  bool max;
  __host__ __device__ Acc identity() const { return max ? INT64_MIN : INT64_MAX; }
  __host__ __device__ Acc map(T x) const { return static_cast<int64_t>(x); }
  __host__ __device__ Acc combine(Acc a, Acc b) const { return max ? (b > a ? b : a) : (b < a ? b : a); }
  __device__ void finish(int64_t s, Acc acc) const { this->put(s, static_cast<T>(acc)); }
};

/// Any and all of every kind: whether elements are nonzero (NaN is).
template <class T>
struct AnyAllOp : Sink<bool> {
  using Acc = uint8_t;
  bool all;
  __host__ __device__ Acc identity() const { return all ? 1 : 0; }
  __host__ __device__ Acc map(T x) const {
    if constexpr (std::is_integral_v<T>)
      return x != T(0) ? 1 : 0;
    else
      return convert::to_opmath(x) != 0 ? 1 : 0;
  }
  __host__ __device__ Acc combine(Acc a, Acc b) const { return all ? (a & b) : (a | b); }
  __device__ void finish(int64_t s, Acc acc) const { this->put(s, acc != 0); }
};

/// y's offsets per segment: the kept dimensions of x's shape, with y's strides (y has x's rank under
/// keepdim, else one dimension per kept one).
inline OutOffsets out_offsets(const detail::ReduceLaunch& a) {
  OutOffsets o{};
  const Shape& shape = a.x.shape;
  const bool keepdim = a.y.shape.rank == shape.rank && shape.rank > 0;
  int j = 0;
  for (int d = 0; d < shape.rank; ++d) {
    if (shift::right(a.reduced_mask, static_cast<unsigned>(d)) & 1u) continue;
    o.sizes[o.rank] = shape.dims[d];
    o.strides[o.rank] = a.y.stride[keepdim ? d : j];
    ++o.rank, ++j;
  }
  return o;
}

inline int64_t reduced_count(const detail::ReduceLaunch& a) {
  int64_t n = 1;
  for (int d = 0; d < a.x.shape.rank; ++d)
    if (shift::right(a.reduced_mask, static_cast<unsigned>(d)) & 1u) n *= a.x.shape.dims[d];
  return n;
}

/// Runs functor `op` (its Sink filled in here) over the launch.
template <class T, class Op>
Status run_op(const ::baracuda::detail::ExecContext& ctx, const detail::ReduceLaunch& a, Op op) {
  using Out = std::remove_pointer_t<decltype(op.y)>;
  op.y = static_cast<Out*>(a.y.data);
  op.at = out_offsets(a);
  op.n = reduced_count(a);
  const uint32_t kept = (shift::left(1u, static_cast<unsigned>(a.x.shape.rank)) - 1u) & ~a.reduced_mask;
  return segment_reduce::launch_segment_reduce<Op, T>("ReducePlan", ctx, op, a.x.shape, kept, a.workspace, a.x);
}

/// The function of the reduce table for x of type T: the functor of the launch's op (select admitted the
/// pair; any other pair is an internal error).
template <class T>
Status reduce_launch(const ::baracuda::detail::ExecContext& ctx, const detail::ReduceLaunch& a) {
  constexpr bool kFloat = !std::is_integral_v<T>;
  switch (a.op) {
    case ReduceOp::Any:
    case ReduceOp::All: {
      AnyAllOp<T> op{};
      op.all = a.op == ReduceOp::All;
      return run_op<T>(ctx, a, op);
    }
    case ReduceOp::Argmax:
    case ReduceOp::Argmin:
      if constexpr (!std::is_same_v<T, bool>) {
        ArgOp<T> op{};
        op.max = a.op == ReduceOp::Argmax;
        return run_op<T>(ctx, a, op);
      }
      break;
    default: break;
  }
  if constexpr (kFloat) {
    using M = convert::opmath_t<T>;
    switch (a.op) {
      case ReduceOp::Sum:
      case ReduceOp::Mean:
      case ReduceOp::NormL1:
      case ReduceOp::NormL2:
      case ReduceOp::NormP: {
        SumOp<T> op{};
        op.op = a.op;
        op.p = static_cast<M>(a.p);
        return run_op<T>(ctx, a, op);
      }
      case ReduceOp::Prod: return run_op<T>(ctx, a, ProdOp<T>{});
      case ReduceOp::Max:
      case ReduceOp::Min:
      case ReduceOp::NormLinf: {
        ExtremumOp<T> op{};
        op.max = a.op != ReduceOp::Min;
        op.norm = a.op == ReduceOp::NormLinf;
        return run_op<T>(ctx, a, op);
      }
      case ReduceOp::Var:
      case ReduceOp::Std: {
        VarianceOp<T> op{};
        op.correction = static_cast<M>(a.correction);
        op.std_dev = a.op == ReduceOp::Std;
        return run_op<T>(ctx, a, op);
      }
      case ReduceOp::LogSumExp: return run_op<T>(ctx, a, LogSumExpOp<T>{});
      default: break;
    }
  } else {
    switch (a.op) {
      case ReduceOp::Sum:
      case ReduceOp::Prod: {
        IntegerSumOp<T> op{};
        op.prod = a.op == ReduceOp::Prod;
        return run_op<T>(ctx, a, op);
      }
      case ReduceOp::Max:
      case ReduceOp::Min: {
        IntegerExtremumOp<T> op{};
        op.max = a.op == ReduceOp::Max;
        return run_op<T>(ctx, a, op);
      }
      default: break;
    }
  }
  return Error::internal("ReducePlan: no kernel for " + std::string(to_string(a.op)) + " over this kind");
}

}  // namespace reduce
BARACUDA_DEVICE_NAMESPACE_END
