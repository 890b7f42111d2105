// The gemm family's host reference (gemm.hpp's "Backends and accuracy"): written for clarity, independently
// of the kernels. Each batch's op(A) and op(B) are decoded exactly (core/reference_formats.hpp) into a working
// type W — double for f16/bf16/f32 inputs, whose products are then exact (2·24 ≤ 53 bits), long double for
// f64 — and each output's sum runs in W, k ascending. The epilogue of gemm.hpp runs in long double with the
// descriptor's exact α and β and std:: math for the activation, and every output is rounded once.
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "core/reference_activation.hpp"
#include "core/reference_formats.hpp"
#include "ops/gemm/tables.hpp"

namespace baracuda::reference {
namespace {

using detail::GemmLaunch;
using detail::GemmOperand;

template <class T>
const T& at(const GemmOperand& o, int64_t b, int64_t i, int64_t j) {
  return static_cast<const T*>(o.data)[b * o.batch + i * o.row + j * o.col];
}
template <class T>
T& out_at(const GemmOperand& o, int64_t b, int64_t i, int64_t j) {
  return const_cast<T*>(static_cast<const T*>(o.data))[b * o.batch + i * o.row + j * o.col];
}

template <class TAB, class TCD>
Status gemm(const detail::ExecContext&, const GemmLaunch& l) {
  using W = std::conditional_t<std::is_same_v<TAB, double>, long double, double>;
  const int64_t M = l.m, N = l.n, K = l.k;
  std::vector<W> a(static_cast<size_t>(M * K)), bt(static_cast<size_t>(N * K));  // op(A) [M][K], op(B)ᵀ [N][K]
  for (int64_t b = 0; b < l.batch; ++b) {
    for (int64_t m = 0; m < M; ++m)
      for (int64_t k = 0; k < K; ++k) a[m * K + k] = static_cast<W>(value_of(at<TAB>(l.a, b, m, k)));
    for (int64_t n = 0; n < N; ++n)
      for (int64_t k = 0; k < K; ++k) bt[n * K + k] = static_cast<W>(value_of(at<TAB>(l.b, b, k, n)));
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        W acc = 0;
        for (int64_t k = 0; k < K; ++k) acc += a[m * K + k] * bt[n * K + k];
        long double v = static_cast<long double>(l.alpha) * static_cast<long double>(acc);
        if (l.c.data != nullptr) v += static_cast<long double>(l.beta) * value_of(at<TCD>(l.c, b, m, n));
        if (l.bias.data != nullptr) v += value_of(at<TCD>(l.bias, 0, 0, n));
        if (l.aux.data != nullptr) out_at<TCD>(l.aux, b, m, n) = store<TCD>(v);
        out_at<TCD>(l.d, b, m, n) = store<TCD>(activate<long double>(l.activation, v));
      }
    if (b == 0 && l.bias_grad.data != nullptr)  // batch == 1 (select)
      for (int64_t m = 0; m < M; ++m) {
        W s = 0;
        for (int64_t k = 0; k < K; ++k) s += a[m * K + k];
        out_at<TCD>(l.bias_grad, 0, 0, m) = store<TCD>(static_cast<long double>(s));
      }
  }
  return {};
}

constexpr detail::GemmTables make_tables() {
  detail::GemmTables t{};
  detail::for_each_gemm_kinds([&]<class TAB, class TCD>(std::type_identity<TAB>, std::type_identity<TCD>) {
    t.gemm[detail::kind_index(kind_of<TAB>)][detail::kind_index(kind_of<TCD>)] = &gemm<TAB, TCD>;
    t.variant[detail::kind_index(kind_of<TAB>)][detail::kind_index(kind_of<TCD>)] = "reference";
  });
  return t;
}

}  // namespace

BARACUDA_DEFINE_TABLE(detail::GemmTables, gemm_tables, make_tables())

}  // namespace baracuda::reference
