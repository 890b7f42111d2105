// Internal: the fp8_gemm family's launch record, the one contract between the plan (plan.cpp, which validates the
// operands and fills it) and every backend (the host reference, the bespoke kernel on sim and cuda, and the cuBLASLt
// SKU). Strides are in elements; A, B and D have unit column strides (the plan's layout rule).
#pragma once

#include <cstdint>

#include "baracuda/core/element.hpp"
#include "baracuda/ops/fp8_gemm.hpp"

namespace baracuda::detail {

/// `D = act(α·acc + bias)` of include/baracuda/ops/fp8_gemm.hpp, acc the scaled sum of A[m, :]·B[n, :]. Validated by
/// the plan: the kinds are one of the header's combinations, the shapes match, K, lda and ldb are multiples of 16 with
/// a and b 16-byte aligned, no output overlaps an input.
struct Fp8GemmLaunch {
  int64_t m = 0, n = 0, k = 0;
  ElementKind a_kind = ElementKind::Fp8E4M3, b_kind = ElementKind::Fp8E4M3;
  ElementKind d_kind = ElementKind::Bf16;
  ElementKind bias_kind = ElementKind::Bf16;
  Fp8GemmScaling scaling = Fp8GemmScaling::Tensor;
  const void* a = nullptr;  ///< [M, K], row stride lda
  const void* b = nullptr;  ///< [N, K], row stride ldb
  int64_t lda = 0, ldb = 0;
  /// Tensor: one element each. Block128: a_scale[m·a_scale_row + kb·a_scale_col] ([M, ⌈K/128⌉]) and
  /// b_scale[nb·b_scale_row + kb·b_scale_col] ([⌈N/128⌉, ⌈K/128⌉]).
  const float* a_scale = nullptr;
  const float* b_scale = nullptr;
  int64_t a_scale_row = 0, a_scale_col = 0, b_scale_row = 0, b_scale_col = 0;
  const void* bias = nullptr;      ///< [N] of bias_kind, contiguous; or absent
  const float* d_scale = nullptr;  ///< FP8 D: the quantization scale ([1]); else absent
  void* d = nullptr;               ///< [M, N], row stride ldd
  int64_t ldd = 0;
  float* amax = nullptr;  ///< [1]: max |v| (FP8 D only); or absent
  double alpha = 1.0;
  LinearActivation activation = LinearActivation::None;
  bool fast_accum = false;  ///< cuBLASLt only
};

}  // namespace baracuda::detail
