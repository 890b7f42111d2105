// The int_gemm family's kernel parameters from its launch records (tables.hpp): one place for the mma.sync
// kernels (kernels.cuh) and the wgmma ones (device_wgmma.cu), which must not include each other's kernels
// (an sm_90a unit that included kernels.cuh would compile the whole mma.sync set a second time).
#pragma once

#include "sim/compat.cuh"  // first: the device namespace, launch macros and device API

#include <cstdint>

#include "ops/int_gemm/epilogue.cuh"  // GemmParams
#include "ops/int_gemm/tables.hpp"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace int_gemm {

/// IntGemm's operands and, when K is split, the parts' workspace.
inline GemmParams gemm_params(const ::baracuda::detail::IntGemmLaunch& l) {
  GemmParams p;
  p.partial = static_cast<int32_t*>(l.split.partial.data);
  p.partial_colsum = static_cast<int32_t*>(l.split.partial_colsum.data);
  p.a = static_cast<const unsigned char*>(l.a.data);
  p.b = static_cast<const unsigned char*>(l.b.data);
  p.lda = l.a.stride[0], p.ldb = l.b.stride[0];
  p.m = static_cast<int>(l.m), p.n = static_cast<int>(l.n), p.k = static_cast<int>(l.k);
  p.c = l.c.data;
  p.ldc = l.c.stride[0];
  return p;
}

/// The linear epilogue's: IntGemm's with the scales, zero points, bias and activation.
inline GemmParams linear_params(const ::baracuda::detail::LinearLaunch& l) {
  GemmParams p = gemm_params(::baracuda::detail::IntGemmLaunch{l.m, l.n, l.k, l.a, l.w, l.y, l.split});
  p.a_scale = static_cast<const float*>(l.a_scale.data);
  p.a_scale_stride = l.a_scale.data != nullptr ? l.a_scale.stride[0] : 0;
  p.a_scale_scalar = static_cast<float>(l.a_scale_scalar);
  p.a_zp = static_cast<const int32_t*>(l.a_zero_point.data);
  p.a_zp_stride = l.a_zero_point.data != nullptr ? l.a_zero_point.stride[0] : 0;
  p.w_scale = static_cast<const float*>(l.w_scale.data);
  p.w_scale_stride = l.w_scale.shape.dims[0] == l.n && l.n > 1 ? l.w_scale.stride[0] : 0;
  p.bias = l.bias.data;
  p.bias_stride = l.bias.data != nullptr ? l.bias.stride[0] : 0;
  p.activation = static_cast<int>(l.activation);
  return p;
}

}  // namespace int_gemm
BARACUDA_DEVICE_NAMESPACE_END
