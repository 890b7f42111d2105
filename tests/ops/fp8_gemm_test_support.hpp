// Helpers shared by the fp8_gemm tests: the operands of a descriptor laid out as fp8_gemm.hpp says (written here from
// the header, independently of plan.cpp), FP8 inputs of non-uniform magnitude, a run on any device, and an f64
// evaluation of the contract with the error bound every comparison uses.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "baracuda/baracuda.hpp"
#include "baracuda/ops/fp8_gemm.hpp"
#include "support/linear_activation.hpp"
#include "support/numeric.hpp"

namespace baracuda::test::fp8_gemm {

inline int64_t blocks(int64_t x) { return (x + 127) / 128; }
inline int64_t ld_or(int64_t ld, int64_t packed) { return ld != 0 ? ld : std::max<int64_t>(1, packed); }

/// The FP8 code nearest to f (round to nearest even, saturating), through CUDA's host conversion.
inline uint8_t fp8_code(ElementKind k, float f) {
  return __nv_cvt_float_to_fp8(f, __NV_SATFINITE, k == ElementKind::Fp8E4M3 ? __NV_E4M3 : __NV_E5M2);
}
/// Decodes element i of a storage of kind k (tests/support/numeric's independent decoder).
inline double value(ElementKind k, const std::vector<uint8_t>& s, int64_t i) {
  return decode_value(k, s.data() + static_cast<size_t>(i) * static_cast<size_t>(element_bytes(k)));
}
/// The unit roundoff of an output kind, and the absolute half-spacing of its subnormals.
inline double unit(ElementKind k) {
  switch (k) {
    case ElementKind::F16: return std::ldexp(1.0, -11);
    case ElementKind::Bf16: return std::ldexp(1.0, -8);
    case ElementKind::F32: return std::ldexp(1.0, -24);
    case ElementKind::Fp8E4M3: return std::ldexp(1.0, -4);
    default: return std::ldexp(1.0, -3);  // e5m2
  }
}
inline double tiny(ElementKind k) {
  switch (k) {
    case ElementKind::F16: return std::ldexp(1.0, -25);
    case ElementKind::Fp8E4M3: return std::ldexp(1.0, -10);
    case ElementKind::Fp8E5M2: return std::ldexp(1.0, -17);
    default: return std::ldexp(1.0, -150);
  }
}

/// Host storage of every operand. A and B: FP8 codes of normal samples whose magnitude varies by row (a factor 2^-3 ..
/// 2^3) and, within a row, by K block; Tensor scales a single value each, Block128 scales log-uniform in [2^-4, 2^2];
/// the bias in [-1, 1]; d the byte 0xA5; amax the bits of -1.0f (a run must overwrite it). The descriptor's
/// `a_scale_m_major`: Block128's a_scale stored transposed (strides (1, M)).
struct Data {
  Fp8GemmDescriptor g;
  int64_t lda = 0, ldb = 0, ldd = 0;
  bool a_scale_m_major = false;
  std::vector<uint8_t> a, b, bias, d;
  std::vector<float> sa, sb;  // Tensor: one each; Block128: sa [M][⌈K/128⌉] (or
                              // transposed), sb [⌈N/128⌉][⌈K/128⌉]
  float d_scale = 1.0f, amax = -1.0f;

  Data(const Fp8GemmDescriptor& desc, uint64_t seed) : g(desc), a_scale_m_major(desc.a_scale_m_major) {
    lda = ld_or(g.lda, g.k), ldb = ld_or(g.ldb, g.k), ldd = ld_or(g.ldd, g.n);
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::uniform_real_distribution<double> u(-1.0, 1.0), e(-4.0, 2.0);
    auto matrix = [&](ElementKind k, int64_t rows, int64_t ld) {
      std::vector<uint8_t> s(static_cast<size_t>(std::max<int64_t>(rows * ld, 16)),
                             0x7F);  // padding: NaN codes
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t i = 0; i < g.k; ++i) {
          const float mag = std::ldexp(1.0f, static_cast<int>(r % 7) - 3 + static_cast<int>((i / 128) % 3) - 1);
          s[static_cast<size_t>(r * ld + i)] = fp8_code(k, normal(rng) * mag);
        }
      return s;
    };
    a = matrix(g.a_kind, g.m, lda);
    b = matrix(g.b_kind, g.n, ldb);
    if (g.scaling == Fp8GemmScaling::Tensor) {
      sa = {static_cast<float>(std::exp2(e(rng)))}, sb = {static_cast<float>(std::exp2(e(rng)))};
    } else {
      sa.resize(static_cast<size_t>(std::max<int64_t>(g.m * blocks(g.k), 1)));
      sb.resize(static_cast<size_t>(std::max<int64_t>(blocks(g.n) * blocks(g.k), 1)));
      for (float& x : sa) x = static_cast<float>(std::exp2(e(rng)));
      for (float& x : sb) x = static_cast<float>(std::exp2(e(rng)));
    }
    if (g.has_bias) {
      bias.resize(static_cast<size_t>(std::max<int64_t>(g.n, 1)) * static_cast<size_t>(element_bytes(g.bias_kind)));
      for (int64_t j = 0; j < g.n; ++j) {
        const double v = u(rng);
        uint8_t* p = bias.data() + j * element_bytes(g.bias_kind);
        if (g.bias_kind == ElementKind::F16) {
          const __half h = __float2half(static_cast<float>(v));
          std::memcpy(p, &h, 2);
        } else if (g.bias_kind == ElementKind::Bf16) {
          const __nv_bfloat16 h = __float2bfloat16(static_cast<float>(v));
          std::memcpy(p, &h, 2);
        } else {
          const float f = static_cast<float>(v);
          std::memcpy(p, &f, 4);
        }
      }
    }
    if (is_fp8(g.output)) d_scale = static_cast<float>(std::exp2(e(rng) + 1.0));
    d.assign(static_cast<size_t>(std::max<int64_t>(g.m * ldd, 1)) * static_cast<size_t>(element_bytes(g.output)), 0xA5);
  }

  double a_scale(int64_t m, int64_t kb) const {
    if (g.scaling == Fp8GemmScaling::Tensor) return sa[0];
    return a_scale_m_major ? sa[static_cast<size_t>(kb * g.m + m)] : sa[static_cast<size_t>(m * blocks(g.k) + kb)];
  }
  double b_scale(int64_t n, int64_t kb) const {
    if (g.scaling == Fp8GemmScaling::Tensor) return sb[0];
    return sb[static_cast<size_t>((n / 128) * blocks(g.k) + kb)];
  }

  /// The f64 evaluation of v (after the activation, before d_scale) at (i, j), and its bound: the bespoke kernel's (K +
  /// 136)·2^-24 relative to Σ|scaled products| (the header's (K/128 + 128)·u, doubled for this evaluation's own error),
  /// α, the bias's rounding-free addition, the activation's slope (≤ 1.2) and 16 u for its libm calls. `u` the working
  /// unit roundoff of the backend (2^-24 on sim/cuda, 2^-53 on the host).
  struct Expect {
    double v = 0, tol = 0;
  };
  Expect expect(int64_t i, int64_t j, double u) const {
    double acc = 0, mag = 0;
    for (int64_t k0 = 0; k0 < g.k; k0 += 128) {
      double part = 0, pmag = 0;
      for (int64_t k = k0; k < std::min(g.k, k0 + 128); ++k) {
        const double x = value(g.a_kind, a, i * lda + k), y = value(g.b_kind, b, j * ldb + k);
        part += x * y, pmag += std::fabs(x * y);
      }
      const double s = a_scale(i, k0 / 128) * b_scale(j, k0 / 128);
      acc += s * part, mag += std::fabs(s) * pmag;
    }
    double v = g.alpha * acc;
    mag *= std::fabs(g.alpha);
    if (g.has_bias) {
      const double bv = value(g.bias_kind, bias, j);
      v += bv, mag += std::fabs(bv);
    }
    const double err = 2.0 * static_cast<double>(g.k + 136) * u * mag + 4.0 * u * std::fabs(v);
    Expect r;
    r.v = ::baracuda::test::reference_activation(g.activation, v);
    r.tol = (g.activation == LinearActivation::None ? 1.0 : 1.2) * err +
            (g.activation == LinearActivation::None ? 0.0 : 16.0 * u * (std::fabs(r.v) + std::fabs(v)));
    return r;
  }
};

/// What a run wrote.
struct Outputs {
  std::vector<uint8_t> d;
  float amax = 0.0f;
};

/// Allocates and uploads every operand on `st`'s device, selects (with `pref`) and runs.
inline Result<Outputs> run_on(const Stream& st, const Data& x, PlanPreference pref = {}) {
  auto up = [&](const void* p, size_t n) -> Result<Buffer> {
    auto b = Buffer::allocate(st, std::max<size_t>(n, 16));
    if (!b) return b.error();
    if (n > 0) BARACUDA_TRY(b->copy_from_host(p, n));
    return b;
  };
  const Fp8GemmDescriptor& g = x.g;
  auto ba = up(x.a.data(), x.a.size()), bb = up(x.b.data(), x.b.size());
  auto bsa = up(x.sa.data(), x.sa.size() * 4), bsb = up(x.sb.data(), x.sb.size() * 4);
  auto bbias = up(x.bias.data(), x.bias.size()), bds = up(&x.d_scale, 4), bd = up(x.d.data(), x.d.size());
  auto bamax = up(&x.amax, 4);
  for (auto* r : {&ba, &bb, &bsa, &bsb, &bbias, &bds, &bd, &bamax})
    if (!*r) return r->error();
  dynamic::Fp8GemmArgs args;
  auto mat = [](auto v, const void* p, ElementKind k, int64_t rows, int64_t cols, int64_t ld) {
    v.data = const_cast<void*>(p);
    v.kind = k;
    v.shape = Shape{rows, cols};
    v.stride[0] = ld, v.stride[1] = 1;
    return v;
  };
  args.a = mat(ConstDynTensor{}, ba->data(), g.a_kind, g.m, g.k, x.lda);
  args.b = mat(ConstDynTensor{}, bb->data(), g.b_kind, g.n, g.k, x.ldb);
  if (g.scaling == Fp8GemmScaling::Tensor) {
    args.a_scale = ConstDynTensor::dense(bsa->data(), ElementKind::F32, Shape{1});
    args.b_scale = ConstDynTensor::dense(bsb->data(), ElementKind::F32, Shape{1});
  } else {
    args.a_scale = ConstDynTensor::dense(bsa->data(), ElementKind::F32, Shape{g.m, blocks(g.k)});
    if (x.a_scale_m_major) args.a_scale.stride[0] = 1, args.a_scale.stride[1] = g.m;
    args.b_scale = ConstDynTensor::dense(bsb->data(), ElementKind::F32, Shape{blocks(g.n), blocks(g.k)});
  }
  if (g.has_bias) args.bias = ConstDynTensor::dense(bbias->data(), g.bias_kind, Shape{g.n});
  if (is_fp8(g.output)) args.d_scale = ConstDynTensor::dense(bds->data(), ElementKind::F32, Shape{1});
  args.d = mat(DynTensor{}, bd->data(), g.output, g.m, g.n, x.ldd);
  if (g.has_amax) args.amax = DynTensor::dense(bamax->data(), ElementKind::F32, Shape{1});
  auto plan = dynamic::Fp8GemmPlan::select(st, g, pref);
  if (!plan) return plan.error();
  auto ws = Buffer::allocate(st, plan->workspace_size());
  if (!ws) return ws.error();
  BARACUDA_TRY(plan->run(st, ws->as_workspace(), args));
  BARACUDA_TRY(st.synchronize());
  Outputs o;
  o.d.resize(x.d.size());
  BARACUDA_TRY(bd->copy_to_host(o.d.data(), o.d.size()));
  BARACUDA_TRY(bamax->copy_to_host(&o.amax, 4));
  return o;
}

/// Checks d against the f64 evaluation (FP8 outputs: the value times d_scale, saturated, within one FP8 rounding), the
/// storage between rows untouched, and the amax (max |v|, within the bound). Returns the number of elements checked.
inline int64_t check_outputs(const Data& x, const Outputs& o, double u, const std::string& what) {
  const Fp8GemmDescriptor& g = x.g;
  const size_t w = static_cast<size_t>(element_bytes(g.output));
  double amax = 0, amax_tol = 0;
  int64_t checked = 0;
  for (int64_t i = 0; i < g.m; ++i)
    for (int64_t j = 0; j < g.n; ++j) {
      const auto e = x.expect(i, j, u);
      amax = std::max(amax, std::fabs(e.v)), amax_tol = std::max(amax_tol, e.tol);
      double want = e.v, tol = e.tol;
      if (is_fp8(g.output)) {
        const double lim = g.output == ElementKind::Fp8E4M3 ? 448.0 : 57344.0;
        want = std::clamp(e.v * x.d_scale, -lim, lim), tol = e.tol * x.d_scale;
      }
      tol += unit(g.output) * std::fabs(want) * (is_fp8(g.output) ? 2.0 : 1.0) + tiny(g.output) * 2.0;
      const double got = value(g.output, o.d, i * x.ldd + j);
      EXPECT_LE(std::fabs(got - want), tol)
          << what << ": d[" << i << ", " << j << "] = " << got << ", expected " << want << " (tol " << tol << ")";
      ++checked;
      if (::testing::Test::HasFailure()) return checked;
    }
  for (int64_t i = 0; i < g.m; ++i)  // the padding of each row beyond N is not written
    for (int64_t j = g.n; j < x.ldd && i * x.ldd + j < static_cast<int64_t>(o.d.size() / w); ++j)
      for (size_t q = 0; q < w; ++q)
        if (o.d[static_cast<size_t>(i * x.ldd + j) * w + q] != 0xA5) {
          ADD_FAILURE() << what << ": d's padding was written at row " << i << ", column " << j;
          return checked;
        }
  if (g.has_amax)
    EXPECT_LE(std::fabs(static_cast<double>(o.amax) - amax), amax_tol + std::ldexp(amax, -24))
        << what << ": amax = " << o.amax << ", expected " << amax;
  else
    EXPECT_EQ(o.amax, -1.0f) << what << ": amax written without with_amax()";
  return checked;
}

/// The working unit roundoff of a device's backend.
inline double unit_of(DeviceKind d) { return d == DeviceKind::Host ? std::ldexp(1.0, -53) : std::ldexp(1.0, -24); }

}  // namespace baracuda::test::fp8_gemm
