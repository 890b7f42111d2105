// Internal: which QuantConvention a quantizing plan serves (the table of quant_convention.hpp), checked in
// one place so that every plan words each rejection the same way.
#pragma once

#include <string>
#include <string_view>

#include "baracuda/core/element.hpp"
#include "baracuda/core/status.hpp"
#include "baracuda/ops/quant_convention.hpp"

namespace baracuda::detail {

/// PyTorch and Exact are served by every quantizing plan. Vllm by the integer ones (`fp8` false) unless
/// `vllm_absent` says why not (a clause: "covers quantize and dequantize (vLLM has no …)"); TransformerEngine
/// by the FP8 ones. Both framework conventions take f16/bf16/f32 data only (the frameworks compute in f32).
/// `Unsupported` for a convention the plan does not serve, `InvalidProblem` for a value outside the enum.
inline Status check_convention(std::string_view plan, QuantConvention c, ElementKind data, bool fp8,
                               std::string_view vllm_absent = {}) {
  const std::string p(plan);
  const bool f64 = data == ElementKind::F64;
  switch (c) {
    case QuantConvention::PyTorch:
    case QuantConvention::Exact: return {};
    case QuantConvention::Vllm:
      if (fp8) return Error::unsupported(p + ": the vllm convention is not modelled for FP8; use pytorch, exact or "
                                             "transformer_engine");
      if (!vllm_absent.empty())
        return Error::unsupported(p + ": the vllm convention " + std::string(vllm_absent) + "; use pytorch or exact");
      if (f64)
        return Error::unsupported(p + ": the vllm convention takes f16, bf16 or f32 x (vLLM computes in f32); use "
                                      "pytorch or exact for f64");
      return {};
    case QuantConvention::TransformerEngine:
      if (!fp8)
        return Error::unsupported(p + ": the transformer_engine convention applies to FP8 quantization only; use "
                                      "pytorch, exact or vllm");
      if (f64)
        return Error::unsupported(p + ": the transformer_engine convention takes f16, bf16 or f32 x "
                                      "(TransformerEngine's cast has no f64 input); use pytorch or exact for f64");
      return {};
  }
  return Error::invalid(p + ": invalid QuantConvention");
}

}  // namespace baracuda::detail
