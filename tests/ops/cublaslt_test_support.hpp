// Test support of the cuBLASLt backend's tests (cublaslt_mapping_test.cpp, cublaslt_mapping_gpu_test.cpp): GEMM
// launches over host buffers of doubles in every layout, and the launch computed directly from its strides.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "ops/gemm/cublaslt.hpp"
#include "support/linear_activation.hpp"

namespace baracuda::detail::cublaslt_test {

/// A launch over host buffers of doubles (the mapping reads only the presence of c, aux, bias and bias_grad;
/// the model and the direct computation read the data).
struct HostGemm {
  GemmLaunch l;
  std::vector<double> a, b, c, d, aux, bias, bgrad;

  HostGemm() = default;
  /// A copy's launch points at the copy's buffers (the present ones).
  HostGemm(const HostGemm& o) : l(o.l), a(o.a), b(o.b), c(o.c), d(o.d), aux(o.aux), bias(o.bias), bgrad(o.bgrad) {
    bind(l.c.data != nullptr, l.aux.data != nullptr, l.bias.data != nullptr, l.bias_grad.data != nullptr);
  }
  HostGemm& operator=(const HostGemm&) = delete;

  /// Points the launch at the buffers (present ones only) after they are sized.
  void bind(bool with_c, bool with_aux, bool with_bias, bool with_bgrad) {
    l.a.data = a.data();
    l.b.data = b.data();
    l.d.data = d.data();
    l.c.data = with_c ? c.data() : nullptr;
    l.aux.data = with_aux ? aux.data() : nullptr;
    l.bias.data = with_bias ? bias.data() : nullptr;
    l.bias_grad.data = with_bgrad ? bgrad.data() : nullptr;
  }
};

/// Shapes and layouts: op(A) [M, K] and op(B) [K, N] row-major (col stride 1) or column-major (row stride 1),
/// each leading dimension padded by `pad`; C, D and aux [M, N] with row stride N + pad; `broadcast` 'a' or 'b'
/// gives that operand batch stride 0.
struct Case {
  int64_t m = 1, n = 1, k = 1, batch = 1;
  bool a_col_major = false, b_col_major = false;
  int64_t pad = 0;
  char broadcast = ' ';
};

inline HostGemm make_gemm(const Case& cs, ElementKind kind = ElementKind::F64) {
  HostGemm g;
  GemmLaunch& l = g.l;
  l.m = cs.m, l.n = cs.n, l.k = cs.k, l.batch = cs.batch;
  l.ab = l.cd = kind;
  if (cs.a_col_major)
    l.a = {nullptr, cs.k * (cs.m + cs.pad), 1, cs.m + cs.pad};
  else
    l.a = {nullptr, cs.m * (cs.k + cs.pad), cs.k + cs.pad, 1};
  if (cs.b_col_major)
    l.b = {nullptr, cs.n * (cs.k + cs.pad), 1, cs.k + cs.pad};
  else
    l.b = {nullptr, cs.k * (cs.n + cs.pad), cs.n + cs.pad, 1};
  if (cs.broadcast == 'a') l.a.batch = 0;
  if (cs.broadcast == 'b') l.b.batch = 0;
  const int64_t ld = cs.n + cs.pad;
  l.c = l.d = l.aux = {nullptr, cs.m * ld, ld, 1};
  l.bias = {nullptr, 0, 0, 1};
  l.bias_grad = {nullptr, 0, 0, 1};
  auto size = [&](const GemmOperand& x, int64_t rows, int64_t cols) {
    return static_cast<size_t>((cs.batch - 1) * x.batch + (rows - 1) * x.row + (cols - 1) * x.col + 1);
  };
  std::mt19937 rng(static_cast<uint32_t>(cs.m * 131 + cs.n * 17 + cs.k * 7 + cs.batch));
  std::uniform_int_distribution<int> small(-3, 3);
  auto fill = [&](std::vector<double>& v, size_t n) {
    v.resize(n);
    for (double& x : v) x = small(rng);  // small integers: every sum below is exact in f32 and f64
  };
  fill(g.a, size(l.a, cs.m, cs.k));
  fill(g.b, size(l.b, cs.k, cs.n));
  fill(g.c, size(l.c, cs.m, cs.n));
  fill(g.bias, static_cast<size_t>(cs.n));
  // Outputs start at a sentinel that every kind holds exactly and no result reaches: writes outside the view show.
  g.d.assign(size(l.d, cs.m, cs.n), 4096);
  g.aux = g.d;
  g.bgrad.assign(static_cast<size_t>(cs.m), 4096);
  return g;
}

/// The launch computed directly from its row-major strides, into `out` (the buffers `g` was made with).
inline void direct(const GemmLaunch& l, const HostGemm& g, HostGemm& out) {
  for (int64_t p = 0; p < l.batch; ++p)
    for (int64_t i = 0; i < l.m; ++i)
      for (int64_t j = 0; j < l.n; ++j) {
        double acc = 0;
        for (int64_t q = 0; q < l.k; ++q)
          acc += g.a[p * l.a.batch + i * l.a.row + q * l.a.col] * g.b[p * l.b.batch + q * l.b.row + j * l.b.col];
        double v = l.alpha * acc;
        if (l.c.data) v += l.beta * g.c[p * l.c.batch + i * l.c.row + j];
        if (l.bias.data) v += g.bias[j * l.bias.col];
        if (l.aux.data) out.aux[p * l.aux.batch + i * l.aux.row + j] = v;
        out.d[p * l.d.batch + i * l.d.row + j] = ::baracuda::test::reference_activation(l.activation, v);
      }
  if (l.bias_grad.data)
    for (int64_t i = 0; i < l.m; ++i) {
      double s = 0;
      for (int64_t q = 0; q < l.k; ++q) s += g.a[i * l.a.row + q * l.a.col];
      out.bgrad[i * l.bias_grad.col] = s;
    }
}

}  // namespace baracuda::detail::cublaslt_test
