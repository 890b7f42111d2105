// Internal: the reduce family's launch record, the accumulators its device functors carry (here, so that
// select sizes the two-pass workspace from the same types), and the three devices' tables.
#pragma once

#include <cstddef>
#include <cstdint>

#include "baracuda/core/dyn_tensor.hpp"
#include "baracuda/core/workspace.hpp"
#include "baracuda/ops/reduce.hpp"
#include "core/exec_context.hpp"
#include "device/dispatch_table.hpp"

namespace baracuda::detail {

/// What a reduce function receives: the validated x and y, the op and its parameters, the reduced-dimension
/// mask (nonzero) over x's shape, and the workspace for the two-pass schedule's partials.
struct ReduceLaunch {
  ReduceOp op = ReduceOp::Sum;
  ConstDynTensor x;
  DynTensor y;
  uint32_t reduced_mask = 0;
  double correction = 1;
  double p = 2;
  Workspace workspace;
};

/// The accumulators, by opmath type M (f32, or f64 for f64 x) or s64. Sizes only matter to the host.
template <class M>
struct WelfordAcc {
  M mean, m2;
  int64_t n;
};
template <class M>
struct LogSumExpAcc {
  M max, sum;
};
template <class V>
struct ArgAcc {
  V value;
  int64_t index;  ///< −1: no element yet
};

/// Bytes of the accumulator the device functor of `op` over x of kind `x` carries.
inline size_t reduce_acc_bytes(ReduceOp op, ElementKind x) {
  const bool f64 = x == ElementKind::F64;
  const size_t m = f64 ? sizeof(double) : sizeof(float);
  if (!is_floating(x)) {
    if (op == ReduceOp::Argmax || op == ReduceOp::Argmin) return sizeof(ArgAcc<int64_t>);
    return op == ReduceOp::Any || op == ReduceOp::All ? 1 : sizeof(int64_t);
  }
  switch (op) {
    case ReduceOp::Var:
    case ReduceOp::Std: return f64 ? sizeof(WelfordAcc<double>) : sizeof(WelfordAcc<float>);
    case ReduceOp::LogSumExp: return 2 * m;
    case ReduceOp::Argmax:
    case ReduceOp::Argmin: return f64 ? sizeof(ArgAcc<double>) : sizeof(ArgAcc<float>);
    case ReduceOp::Any:
    case ReduceOp::All: return 1;
    default: return m;
  }
}

/// Indexed by x's element kind; nullptr = Unsupported. Each entry serves every op the kind takes.
using ReduceTable = KindTable<ReduceFn>;

/// x's kinds.
using ReduceTypes = type_list<__half, __nv_bfloat16, float, double, int8_t, uint8_t, int32_t, int64_t, bool>;

}  // namespace baracuda::detail

// reference: host.cpp; sim and cuda: the kernel units device_float.cu and device_int.cu
BARACUDA_DECLARE_DEVICE_TABLE(detail::ReduceTable, reduce_table)
