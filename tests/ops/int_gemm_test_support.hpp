// Helpers shared by the int_gemm tests (int_gemm_*test.cpp): host views, random fills, output elements, errors.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "baracuda/baracuda.hpp"
#include "ops/dynamic_range_reference.hpp"
#include "ops/int_gemm/tuning.hpp"
#include "support/devices.hpp"
#include "support/expect_error.hpp"
#include "support/host_array.hpp"
#include "support/tensor.hpp"

namespace baracuda::test {

inline DynTensor mat(void* p, ElementKind k, int64_t rows, int64_t cols, int64_t ld) {
  DynTensor t = DynTensor::dense(p, k, Shape{rows, cols});
  t.stride[0] = ld;
  return t;
}
inline DynTensor vec(void* p, ElementKind k, int64_t n) { return DynTensor::dense(p, k, Shape{n}); }

template <class T>
void fill_random(Arr<T>& a, uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_int_distribution<int> d(std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
  for (size_t i = 0; i < a.n; ++i) a[i] = static_cast<T>(d(g));
}

struct GemmShape {
  int64_t m, n, k;
};

/// The host operands of IntGemm over `sh`: a [m, k] of TA and b [n, k] of TB, random (from `seed`), and
/// c [m, n] of s32 filled with 0x5a5a5a5a; when `padded` each row is followed by padding (lda = k + 32,
/// ldb = k + 16, ldc = n + c_pad).
template <class TA, class TB>
struct GemmOperands {
  GemmOperands(const GemmShape& shape, bool padded, uint64_t seed, int64_t c_pad = 3)
      : sh(shape),
        lda(padded ? sh.k + 32 : sh.k),
        ldb(padded ? sh.k + 16 : sh.k),
        ldc(padded ? sh.n + c_pad : sh.n),
        a(sh.m * lda),
        b(sh.n * ldb),
        c(sh.m * ldc, 0x5a5a5a5a) {
    fill_random(a, seed + sh.m), fill_random(b, seed + 1 + sh.n);
  }
  /// The IntGemm descriptor of these arrays: the shape, the kinds and the row strides.
  IntGemmDescriptor descriptor() const {
    return IntGemmDescriptor{}.with_shape(sh.m, sh.n, sh.k).with_kinds(kind_of<TA>, kind_of<TB>).with_leading_dims(
        lda, ldb, ldc);
  }
  /// The IntGemm arguments over these arrays.
  dynamic::IntGemmArgs args() const {
    return {mat(a.data(), kind_of<TA>, sh.m, sh.k, lda), mat(b.data(), kind_of<TB>, sh.n, sh.k, ldb),
            mat(c.data(), ElementKind::S32, sh.m, sh.n, ldc)};
  }

  GemmShape sh;
  int64_t lda, ldb, ldc;
  Arr<TA> a;
  Arr<TB> b;
  Arr<int32_t> c;
};

/// f16/bf16/f32/f64 output element as double.
inline double read_out(ElementKind k, const void* p, int64_t i) {
  switch (k) {
    case ElementKind::F32: return static_cast<const float*>(p)[i];
    case ElementKind::F64: return static_cast<const double*>(p)[i];
    case ElementKind::F16: return static_cast<float>(static_cast<const __half*>(p)[i]);
    case ElementKind::Bf16: return static_cast<float>(static_cast<const __nv_bfloat16*>(p)[i]);
    default: return NAN;
  }
}
/// The unit roundoff of an output kind.
inline double unit_roundoff(ElementKind k) {
  switch (k) {
    case ElementKind::F16: return std::ldexp(1.0, -11);
    case ElementKind::Bf16: return std::ldexp(1.0, -8);
    case ElementKind::F32: return std::ldexp(1.0, -24);
    default: return std::ldexp(1.0, -53);
  }
}
inline void write_float(ElementKind k, void* p, int64_t i, double v) {
  switch (k) {
    case ElementKind::F32: static_cast<float*>(p)[i] = static_cast<float>(v); break;
    case ElementKind::F64: static_cast<double*>(p)[i] = v; break;
    case ElementKind::F16: static_cast<__half*>(p)[i] = __float2half(static_cast<float>(v)); break;
    case ElementKind::Bf16: static_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16(static_cast<float>(v)); break;
    default: break;
  }
}

}  // namespace baracuda::test
