// The sequence family's host reference: the formula of dispatch.hpp's SequenceLaunch in plain C++, one value
// at a time (std::fma in double, then the kind's round-to-nearest or truncating conversion).
#include <cmath>

#include "device/convert.cuh"
#include "ops/sequence/dispatch.hpp"

namespace baracuda::reference {
namespace {

template <class T>
Status host_sequence(const detail::ExecContext&, const detail::SequenceLaunch& a) {
  T* y = static_cast<T*>(a.y.data);
  const int64_t n = a.y.numel(), stride = a.y.stride[0];
  for (int64_t i = 0; i < n; ++i) {
    if (a.exact_int) {
      y[i * stride] = static_cast<T>(a.int_start + a.int_step * i);
      continue;
    }
    const double v = i < a.half ? std::fma(a.step, static_cast<double>(i), a.start)
                                : std::fma(-a.step, static_cast<double>(a.last - i), a.end);
    y[i * stride] = convert::cast<T>(v, false);
  }
  return {};
}

}  // namespace

BARACUDA_DEFINE_KIND_TABLE(detail::SequenceTable, sequence_table, detail::SequenceTypes, host_sequence)

}  // namespace baracuda::reference
