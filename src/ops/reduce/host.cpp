// The reduce family's host reference: for each output element, its reduced elements in row-major order,
// gathered and reduced in long double by the textbook formulas (two passes for var/std and logsumexp), then
// rounded once to the output kind. Independent of the device functors (kernels.cuh).
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "device/convert.cuh"
#include "ops/reduce/dispatch.hpp"

namespace baracuda::reference {
namespace {

using LD = long double;

/// The values of x in segment `s`, in row-major order over the reduced dimensions.
template <class T>
std::vector<T> segment_values(const detail::ReduceLaunch& a, int64_t s) {
  const Shape& shape = a.x.shape;
  int64_t base = 0;
  for (int d = shape.rank - 1; d >= 0; --d) {  // s is row-major over the kept dimensions
    if ((a.reduced_mask >> d) & 1u) continue;
    base += (s % shape.dims[d]) * a.x.stride[d];
    s /= shape.dims[d];
  }
  int64_t n = 1;
  for (int d = 0; d < shape.rank; ++d)
    if ((a.reduced_mask >> d) & 1u) n *= shape.dims[d];
  std::vector<T> v;
  v.reserve(static_cast<size_t>(n));
  const T* x = static_cast<const T*>(a.x.data);
  for (int64_t r = 0; r < n; ++r) {
    int64_t off = base, rest = r;
    for (int d = shape.rank - 1; d >= 0; --d) {
      if (!((a.reduced_mask >> d) & 1u)) continue;
      off += (rest % shape.dims[d]) * a.x.stride[d];
      rest /= shape.dims[d];
    }
    v.push_back(x[off]);
  }
  return v;
}

template <class T>
LD as_ld(T x) {
  if constexpr (std::is_integral_v<T>)
    return static_cast<LD>(x);
  else
    return static_cast<LD>(convert::to_opmath(x));
}

/// The float result of a float op over `v`.
template <class T>
LD float_result(const detail::ReduceLaunch& a, const std::vector<T>& v) {
  const LD n = static_cast<LD>(v.size());
  const LD nan = std::numeric_limits<LD>::quiet_NaN(), inf = std::numeric_limits<LD>::infinity();
  LD acc = 0;
  switch (a.op) {
    case ReduceOp::Sum:
    case ReduceOp::Mean:
      for (T x : v) acc += as_ld(x);
      return a.op == ReduceOp::Mean ? acc / n : acc;
    case ReduceOp::Prod:
      acc = 1;
      for (T x : v) acc *= as_ld(x);
      return acc;
    case ReduceOp::NormL1:
      for (T x : v) acc += std::fabs(as_ld(x));
      return acc;
    case ReduceOp::NormL2:
      for (T x : v) acc += as_ld(x) * as_ld(x);
      return std::sqrt(acc);
    case ReduceOp::NormP:
      if (a.p == 0) {
        for (T x : v) acc += as_ld(x) != 0 ? 1 : 0;
        return acc;
      }
      for (T x : v) acc += std::pow(std::fabs(as_ld(x)), static_cast<LD>(a.p));
      return std::pow(acc, 1 / static_cast<LD>(a.p));
    case ReduceOp::Max:
    case ReduceOp::Min:
    case ReduceOp::NormLinf: {
      acc = a.op == ReduceOp::Min ? inf : -inf;
      for (T x : v) {
        const LD e = a.op == ReduceOp::NormLinf ? std::fabs(as_ld(x)) : as_ld(x);
        if (std::isnan(e)) return nan;
        acc = a.op == ReduceOp::Min ? std::fmin(acc, e) : std::fmax(acc, e);
      }
      return acc;
    }
    case ReduceOp::Var:
    case ReduceOp::Std: {
      LD mean = 0;
      for (T x : v) mean += as_ld(x);
      mean /= n;
      for (T x : v) acc += (as_ld(x) - mean) * (as_ld(x) - mean);
      const LD dof = n - static_cast<LD>(a.correction);
      const LD var = acc / (dof > 0 ? dof : 0);
      return a.op == ReduceOp::Std ? std::sqrt(var) : var;
    }
    case ReduceOp::LogSumExp: {
      LD m = -inf;
      for (T x : v) {
        if (std::isnan(as_ld(x))) return nan;
        m = std::fmax(m, as_ld(x));
      }
      if (std::isinf(m)) return m;  // every element −inf (or none), or one +inf
      for (T x : v) acc += std::exp(as_ld(x) - m);
      return m + std::log(acc);
    }
    default: return nan;
  }
}

/// Argmax / argmin: the first index of the extremum, the first NaN if any.
template <class T>
int64_t arg_result(bool max, const std::vector<T>& v) {
  int64_t best = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    const LD e = as_ld(v[i]), b = as_ld(v[static_cast<size_t>(best)]);
    if (std::isnan(b)) break;
    if (std::isnan(e) || (max ? e > b : e < b)) best = static_cast<int64_t>(i);
  }
  return best;
}

template <class T>
Status host_reduce(const detail::ExecContext&, const detail::ReduceLaunch& a) {
  const Shape& shape = a.x.shape;
  int64_t segments = 1;
  for (int d = 0; d < shape.rank; ++d)
    if (!((a.reduced_mask >> d) & 1u)) segments *= shape.dims[d];
  const bool keepdim = a.y.shape.rank == shape.rank && shape.rank > 0;
  for (int64_t s = 0; s < segments; ++s) {
    const std::vector<T> v = segment_values<T>(a, s);
    int64_t off = 0, rest = s;  // y's offset: s row-major over the kept dimensions, y's strides
    for (int d = shape.rank - 1, j = a.y.shape.rank - 1; d >= 0; --d) {
      if ((a.reduced_mask >> d) & 1u) {
        if (keepdim) --j;
        continue;
      }
      off += (rest % shape.dims[d]) * a.y.stride[j--];
      rest /= shape.dims[d];
    }
    switch (a.op) {
      case ReduceOp::Any:
      case ReduceOp::All: {
        bool r = a.op == ReduceOp::All;
        for (T x : v) r = a.op == ReduceOp::All ? (r && as_ld(x) != 0) : (r || as_ld(x) != 0);
        static_cast<bool*>(a.y.data)[off] = r;
        continue;
      }
      case ReduceOp::Argmax:
      case ReduceOp::Argmin:
        static_cast<int64_t*>(a.y.data)[off] = arg_result(a.op == ReduceOp::Argmax, v);
        continue;
      default: break;
    }
    if constexpr (std::is_integral_v<T>) {
      if (a.op == ReduceOp::Sum || a.op == ReduceOp::Prod) {
        uint64_t acc = a.op == ReduceOp::Prod ? 1 : 0;  // wraps as s64 arithmetic does on the devices
        for (T x : v) {
          const auto e = static_cast<uint64_t>(static_cast<int64_t>(x));
          acc = a.op == ReduceOp::Prod ? acc * e : acc + e;
        }
        static_cast<int64_t*>(a.y.data)[off] = static_cast<int64_t>(acc);
      } else {  // Max, Min
        int64_t acc = static_cast<int64_t>(v[0]);
        for (T x : v) acc = a.op == ReduceOp::Max ? std::max<int64_t>(acc, x) : std::min<int64_t>(acc, x);
        static_cast<T*>(a.y.data)[off] = static_cast<T>(acc);
      }
    } else {
      static_cast<T*>(a.y.data)[off] = convert::cast<T>(static_cast<double>(float_result<T>(a, v)), false);
    }
  }
  return {};
}

}  // namespace

BARACUDA_DEFINE_KIND_TABLE(detail::ReduceTable, reduce_table, detail::ReduceTypes, host_reduce)

}  // namespace baracuda::reference
