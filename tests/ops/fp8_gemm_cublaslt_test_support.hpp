// Test support of the FP8 GEMM's cuBLASLt backend tests (fp8_gemm_cublaslt_mapping_test.cpp and
// fp8_gemm_cublaslt_mapping_gpu_test.cpp): FP8 GEMM launches over host buffers of doubles, and the launch computed
// directly from its strides by the header's formula (include/baracuda/ops/fp8_gemm.hpp), in double.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "ops/fp8_gemm/cublaslt_fp8.hpp"
#include "support/linear_activation.hpp"

namespace baracuda::detail::cublaslt_fp8_test {

/// A launch over host buffers of doubles (the mapping reads only the presence of bias, d_scale and amax; the model and
/// the direct computation read the data). `d_scale` and `amax` are one element each.
struct HostFp8Gemm {
  Fp8GemmLaunch l;
  std::vector<double> a, b, a_scale, b_scale, bias, d, d_scale{1.0}, amax{0.0};

  HostFp8Gemm() = default;
  /// A copy's launch points at the copy's buffers (the present ones).
  HostFp8Gemm(const HostFp8Gemm& o)
      : l(o.l),
        a(o.a),
        b(o.b),
        a_scale(o.a_scale),
        b_scale(o.b_scale),
        bias(o.bias),
        d(o.d),
        d_scale(o.d_scale),
        amax(o.amax) {
    bind(l.bias != nullptr, l.amax != nullptr);
  }
  HostFp8Gemm& operator=(const HostFp8Gemm&) = delete;

  /// Points the launch at the buffers: a, b, d, the scales, and d_scale exactly with an FP8 D; the bias and the amax
  /// when asked. The pointers are to doubles: only the host model and the direct computation read them.
  void bind(bool with_bias, bool with_amax) {
    l.a = a.data(), l.b = b.data(), l.d = d.data();
    l.a_scale = reinterpret_cast<const float*>(a_scale.data());
    l.b_scale = reinterpret_cast<const float*>(b_scale.data());
    l.d_scale = is_fp8(l.d_kind) ? reinterpret_cast<const float*>(d_scale.data()) : nullptr;
    l.bias = with_bias ? bias.data() : nullptr;
    l.amax = with_amax ? reinterpret_cast<float*>(amax.data()) : nullptr;
  }
};

/// A shape, the row-stride paddings of A, B and D, and the scaling; Block128's scales in the layouts cuBLASLt reads
/// (a_scale M-major, b_scale K-major) unless `packed_a_scale` (a_scale row-major, DeepSeek's checkpoint layout for
/// activations, which cuBLASLt does not read).
struct Fp8Case {
  int64_t m = 16, n = 16, k = 16;
  int64_t lda_pad = 0, ldb_pad = 0, ldd_pad = 0;
  Fp8GemmScaling scaling = Fp8GemmScaling::Tensor;
  bool packed_a_scale = false;
};

inline int64_t blocks(int64_t x) { return (x + kFp8GemmBlock - 1) / kFp8GemmBlock; }

/// Small integers in A and B (exact in e4m3 and e5m2), powers of two in the scales: every sum and product below is
/// exact in double and f32.
inline HostFp8Gemm make_fp8_gemm(const Fp8Case& cs, ElementKind a_kind = ElementKind::Fp8E4M3,
                                 ElementKind b_kind = ElementKind::Fp8E4M3, ElementKind d_kind = ElementKind::F32) {
  HostFp8Gemm g;
  Fp8GemmLaunch& l = g.l;
  l.m = cs.m, l.n = cs.n, l.k = cs.k;
  l.a_kind = a_kind, l.b_kind = b_kind, l.d_kind = d_kind;
  l.scaling = cs.scaling;
  l.lda = cs.k + cs.lda_pad, l.ldb = cs.k + cs.ldb_pad, l.ldd = cs.n + cs.ldd_pad;
  l.bias_kind = d_kind == ElementKind::F16 ? ElementKind::F16 : ElementKind::Bf16;
  std::mt19937 rng(static_cast<uint32_t>(cs.m * 131 + cs.n * 17 + cs.k * 7));
  std::uniform_int_distribution<int> small(-3, 3), exponent(-2, 1);
  auto fill = [&](std::vector<double>& v, size_t count) {
    v.resize(count);
    for (double& x : v) x = small(rng);
  };
  auto fill_scales = [&](std::vector<double>& v, size_t count) {
    v.resize(count);
    for (double& x : v) x = std::ldexp(1.0, exponent(rng));
  };
  fill(g.a, static_cast<size_t>(std::max<int64_t>(cs.m, 1) * l.lda));
  fill(g.b, static_cast<size_t>(std::max<int64_t>(cs.n, 1) * l.ldb));
  fill(g.bias, static_cast<size_t>(cs.n));
  g.d.assign(static_cast<size_t>(std::max<int64_t>(cs.m, 1) * l.ldd), 0.0);
  if (cs.scaling == Fp8GemmScaling::Tensor) {
    fill_scales(g.a_scale, 1), fill_scales(g.b_scale, 1);
  } else {
    const int64_t kb = blocks(cs.k), nb = blocks(cs.n);
    fill_scales(g.a_scale, static_cast<size_t>(cs.m * kb));
    fill_scales(g.b_scale, static_cast<size_t>(nb * kb));
    if (cs.packed_a_scale)
      l.a_scale_row = kb, l.a_scale_col = 1;
    else
      l.a_scale_row = 1, l.a_scale_col = cs.m;
    l.b_scale_row = kb, l.b_scale_col = 1;
  }
  g.d_scale = {0.5};
  g.bind(false, false);
  return g;
}

/// The header's D (before rounding to D's kind) and amax for `g`'s launch, from the launch's own strides: acc[m, n] =
/// Σ_kb a_scale[m, kb]·b_scale[n/128, kb]·Σ_{k in kb} A[m, k]·B[n, k] (Tensor: one scale each), v = act(α·acc +
/// bias[n]), d = v·d_scale for an FP8 D; amax = max |v|. Writes `out` (D's memory) and `amax`.
inline void direct(const HostFp8Gemm& g, std::vector<double>& out, double& amax) {
  const Fp8GemmLaunch& l = g.l;
  out = g.d;
  amax = 0;
  const bool block = l.scaling == Fp8GemmScaling::Block128;
  for (int64_t m = 0; m < l.m; ++m)
    for (int64_t n = 0; n < l.n; ++n) {
      double acc = 0;
      for (int64_t kb = 0; kb * kFp8GemmBlock < l.k; ++kb) {
        double part = 0;
        for (int64_t k = kb * kFp8GemmBlock; k < std::min(l.k, (kb + 1) * kFp8GemmBlock); ++k)
          part += g.a[m * l.lda + k] * g.b[n * l.ldb + k];
        const double sa = block ? g.a_scale[m * l.a_scale_row + kb * l.a_scale_col] : g.a_scale[0];
        const double sb = block ? g.b_scale[(n / kFp8GemmBlock) * l.b_scale_row + kb * l.b_scale_col] : g.b_scale[0];
        acc += sa * sb * part;
      }
      double v = l.alpha * acc + (l.bias != nullptr ? g.bias[n] : 0.0);
      v = ::baracuda::test::reference_activation(l.activation, v);
      amax = std::max(amax, std::abs(v));
      out[m * l.ldd + n] = is_fp8(l.d_kind) ? v * g.d_scale[0] : v;
    }
}

}  // namespace baracuda::detail::cublaslt_fp8_test
