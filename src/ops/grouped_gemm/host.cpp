// The grouped_gemm family's host reference (grouped_gemm.hpp's "Backends and accuracy"): written for clarity,
// independently of the kernel. The offsets are read here (the host device's memory is host memory) and made
// effective by the rule of grouped_gemm.hpp; each output's sum runs in double, k ascending (the products of 16-bit
// inputs are exact), the bias is added in double, and the output is rounded once.
#include <cstdint>
#include <type_traits>

#include "core/reference_formats.hpp"
#include "ops/grouped_gemm/tables.hpp"

namespace baracuda::reference {
namespace {

using detail::GroupedGemmLaunch;

int64_t raw_offset(const GroupedGemmLaunch& l, int64_t e) {
  return l.offsets64 ? static_cast<const int64_t*>(l.offsets)[e]
                     : static_cast<int64_t>(static_cast<const int32_t*>(l.offsets)[e]);
}

template <class TX, class TY>
Status grouped_gemm(const detail::ExecContext&, const GroupedGemmLaunch& l) {
  const TX* x = static_cast<const TX*>(l.x);
  const TX* w = static_cast<const TX*>(l.w);
  const TY* bias = static_cast<const TY*>(l.bias);
  TY* y = static_cast<TY*>(l.y);
  int64_t lo = detail::grouped_gemm_effective(raw_offset(l, 0), 0, l.total_m);
  for (int64_t e = 0; e < l.groups; ++e) {
    const int64_t hi = detail::grouped_gemm_effective(raw_offset(l, e + 1), lo, l.total_m);
    for (int64_t r = lo; r < hi; ++r)
      for (int64_t n = 0; n < l.n; ++n) {
        double acc = 0;
        for (int64_t k = 0; k < l.k; ++k)
          acc += static_cast<double>(value_of(x[r * l.x_row + k])) *
                 static_cast<double>(value_of(w[e * l.w_group + n * l.w_row + k]));
        long double v = acc;
        if (bias != nullptr) v += value_of(bias[e * l.bias_group + n]);
        y[r * l.y_row + n] = store<TY>(v);
      }
    lo = hi;
  }
  return {};
}

constexpr detail::GroupedGemmTables make_tables() {
  detail::GroupedGemmTables t{};
  detail::for_each_grouped_gemm_kinds([&]<class TX, class TY>(std::type_identity<TX>, std::type_identity<TY>) {
    t.gemm[detail::kind_index(kind_of<TX>)][detail::kind_index(kind_of<TY>)] = &grouped_gemm<TX, TY>;
    t.variant[detail::kind_index(kind_of<TX>)][detail::kind_index(kind_of<TY>)] = "reference";
  });
  return t;
}

}  // namespace

BARACUDA_DEFINE_TABLE(detail::GroupedGemmTables, grouped_gemm_tables, make_tables())

}  // namespace baracuda::reference
