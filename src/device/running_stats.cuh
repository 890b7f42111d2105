/// \file
/// \brief The running statistics the reduction families merge on the segmented-reduction engine, once:
/// Welford's (n, mean, M2) merged by Chan's formula (var/std, LayerNorm), the online softmax's
/// (max, Σ exp(x − max)) (logsumexp, softmax), and the offset of a row-major index in a strided tensor
/// (where a segment's result or statistic lives).
#pragma once

#include "sim/compat.cuh"

#include <cmath>
#include <cstdint>

#include "baracuda/core/tensor.hpp"
#include "device/precise_math.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace running_stats {

template <class M>
__host__ __device__ inline bool is_nan(M v) {
  return v != v;
}

/// Chan's merge of two Welford accumulators (members mean, m2, n), `a` before `b`.
template <class Acc>
__host__ __device__ inline Acc welford_merge(Acc a, Acc b) {
  using M = decltype(a.mean);
  if (a.n == 0) return b;
  if (b.n == 0) return a;
  const int64_t n = a.n + b.n;
  const M delta = b.mean - a.mean;
  const M wb = static_cast<M>(b.n) / static_cast<M>(n);
  return {a.mean + delta * wb, a.m2 + b.m2 + delta * delta * static_cast<M>(a.n) * wb, n};
}

/// The online softmax's merge of two (max, sum) accumulators: NaN anywhere gives (NaN, 1); −inf is the
/// identity; a +inf max gives (inf, `inf_sum`) — 1 for a log-sum-exp (inf), NaN for softmax (whose every y
/// is then NaN, as PyTorch's exp(inf − inf) makes them).
template <class Acc>
__host__ __device__ inline Acc online_softmax_merge(Acc a, Acc b, decltype(a.max) inf_sum) {
  using M = decltype(a.max);
  if (is_nan(a.max) || is_nan(b.max)) return {static_cast<M>(NAN), M(1)};
  if (a.max == static_cast<M>(-INFINITY)) return b;
  if (b.max == static_cast<M>(-INFINITY)) return a;
  const M m = a.max > b.max ? a.max : b.max;
  if (m == static_cast<M>(INFINITY)) return {m, inf_sum};
  return {m, a.sum * pmath::exp(a.max - m) + b.sum * pmath::exp(b.max - m)};
}

/// The offset of row-major index s over `sizes` in a tensor with `strides` (outermost first).
struct IndexOffsets {
  int rank;
  int64_t sizes[kMaxRank];
  int64_t strides[kMaxRank];
  __host__ __device__ int64_t operator()(int64_t s) const {
    int64_t off = 0;
    for (int d = rank - 1; d >= 0; --d) {
      off += (s % sizes[d]) * strides[d];
      s /= sizes[d];
    }
    return off;
  }
};

}  // namespace running_stats
BARACUDA_DEVICE_NAMESPACE_END
