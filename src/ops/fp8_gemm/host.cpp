// The fp8_gemm family's host reference (fp8_gemm.hpp's "Backends and accuracy"): written for clarity, independently of
// the kernels. The FP8 codes are decoded exactly (core/reference_formats.hpp); every product is exact (at most 8
// significant bits) and each 128-wide K block's sum runs in long double (exact unless the products span more than about
// 55 binades, as only extreme e5m2 values do; then within 2^-64 relative per add), the block's scales multiply it in
// long double, and the epilogue of fp8_gemm.hpp runs in long double with the descriptor's exact α; every output is
// rounded once.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "core/reference_activation.hpp"
#include "core/reference_formats.hpp"
#include "ops/fp8_gemm/tables.hpp"

namespace baracuda::reference {
namespace {

using detail::Fp8GemmLaunch;

const BinaryFormat& fp8_format(ElementKind k) { return k == ElementKind::Fp8E4M3 ? kFormatE4M3 : kFormatE5M2; }

/// The exact values of a row-major [rows, k] FP8 matrix with row stride ld.
std::vector<long double> decode_matrix(const void* data, ElementKind kind, int64_t rows, int64_t k, int64_t ld) {
  std::vector<long double> v(static_cast<size_t>(rows * k));
  const auto* bytes = static_cast<const uint8_t*>(data);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < k; ++i) v[static_cast<size_t>(r * k + i)] = decode(bytes[r * ld + i], fp8_format(kind));
  return v;
}

long double bias_value(const Fp8GemmLaunch& l, int64_t n) {
  switch (l.bias_kind) {
    case ElementKind::F16: return value_of(static_cast<const __half*>(l.bias)[n]);
    case ElementKind::Bf16: return value_of(static_cast<const __nv_bfloat16*>(l.bias)[n]);
    default: return value_of(static_cast<const float*>(l.bias)[n]);
  }
}

/// Stores the final value v (after the activation) to D's kind at (m, n).
void store_d(const Fp8GemmLaunch& l, int64_t m, int64_t n, long double v) {
  const int64_t i = m * l.ldd + n;
  switch (l.d_kind) {
    case ElementKind::F16: static_cast<__half*>(l.d)[i] = store<__half>(v); return;
    case ElementKind::Bf16: static_cast<__nv_bfloat16*>(l.d)[i] = store<__nv_bfloat16>(v); return;
    case ElementKind::F32: static_cast<float*>(l.d)[i] = store<float>(v); return;
    default: {
      const long double scaled = v * static_cast<long double>(*l.d_scale);
      static_cast<uint8_t*>(l.d)[i] = static_cast<uint8_t>(encode(scaled, fp8_format(l.d_kind), true));
    }
  }
}

Status fp8_gemm(const detail::ExecContext&, const Fp8GemmLaunch& l) {
  const int64_t M = l.m, N = l.n, K = l.k, B = kFp8GemmBlock;
  const std::vector<long double> a = decode_matrix(l.a, l.a_kind, M, K, l.lda);
  const std::vector<long double> b = decode_matrix(l.b, l.b_kind, N, K, l.ldb);
  const bool block = l.scaling == Fp8GemmScaling::Block128;
  long double amax = 0;
  bool nan = false;
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      long double acc = 0;
      for (int64_t k0 = 0; k0 < K; k0 += B) {
        long double part = 0;  // see the file comment
        for (int64_t k = k0; k < std::min(K, k0 + B); ++k)
          part += a[static_cast<size_t>(m * K + k)] * b[static_cast<size_t>(n * K + k)];
        const int64_t kb = k0 / B;
        const long double sa = block ? l.a_scale[m * l.a_scale_row + kb * l.a_scale_col] : 1.0L;
        const long double sb = block ? l.b_scale[(n / B) * l.b_scale_row + kb * l.b_scale_col] : 1.0L;
        acc += sa * sb * part;
      }
      if (!block) acc *= static_cast<long double>(*l.a_scale) * static_cast<long double>(*l.b_scale);
      long double v = static_cast<long double>(l.alpha) * acc;
      if (l.bias != nullptr) v += bias_value(l, n);
      v = activate<long double>(l.activation, v);
      if (std::isnan(v)) nan = true;
      amax = std::max(amax, std::fabs(v));
      store_d(l, m, n, v);
    }
  if (l.amax != nullptr) *l.amax = nan ? std::numeric_limits<float>::quiet_NaN() : store<float>(amax);
  return {};
}

constexpr detail::Fp8GemmTables make_tables() {
  detail::Fp8GemmTables t{};
  detail::for_each_fp8_gemm_kinds([&]<class TA, class TD>(std::type_identity<TA>, std::type_identity<TD>) {
    t.gemm[detail::kind_index(kind_of<TA>)][detail::kind_index(kind_of<TD>)] = &fp8_gemm;
    t.variant[detail::kind_index(kind_of<TA>)][detail::kind_index(kind_of<TD>)] = "reference";
  });
  return t;
}

}  // namespace

BARACUDA_DEFINE_TABLE(detail::Fp8GemmTables, fp8_gemm_tables, make_tables())

}  // namespace baracuda::reference
