/// \file
/// \brief `QuantConvention`: whose arithmetic a quantization plan reproduces, bit for bit. Frameworks agree
/// on what quantization means but not on how they compute it, and near a rounding tie (`x / s` within an
/// ulp of k + ½) the results differ by one step. Users compare with one framework, and a model trained with
/// one framework's fake-quantize must quantize identically at inference, so every quantizing plan takes the
/// convention in its descriptor.
///
/// | convention | quantize step (`r` is rounded half to even, `+ zp`, clamped) | where it applies |
/// |---|---|---|
/// | `PyTorch` (default) | `r = x · inv`, `inv = 1.0f / s` rounded to f32 (PyTorch's `quantize_val` and fake-quantize kernels) | quantize, fake-quantize (learnable included) and their backward passes; dynamic-range; QuantizedLinear's activation; FP8 |
/// | `Exact` | `r = x / s`, one correctly rounded division | quantize family; dynamic-range; QuantizedLinear's activation; FP8 |
/// | `Vllm` | static (vLLM's `static_scaled_int8_quant` with an azp): `r = x · f32(1/s)`, the zero point added in int32; dynamic symmetric: `s = amax / qmax`, `r = x · (qmax / amax)`; dynamic asymmetric (azp): vLLM's range, scale and unclamped zero point | `Quantize` / `Dequantize`; dynamic-range; QuantizedLinear's activation |
/// | `TransformerEngine` | `y = fp8(x · scale)`, an amax that skips NaN, `scale_inv = 1 / scale` written | FP8 quantize |
///
/// Each family's header gives the exact formulas (quantize.hpp, dynamic_range_quantize.hpp, fp8.hpp) and
/// docs/ops/quantize.md the sources they were read from. A plan given a convention that does not apply to
/// it answers `select` with `Unsupported`. Dequantization (`y = (x − zp) · s` of a quantized x) is the same
/// in every convention.
#pragma once

#include <cstdint>
#include <string_view>

namespace baracuda {

/// Whose quantization arithmetic a plan reproduces (see the file comment for what each means per family).
enum class QuantConvention : uint8_t {
  PyTorch = 0,            ///< PyTorch 1.13's CPU kernels: multiply by an f32 reciprocal of the scale
  Exact = 1,              ///< one correctly rounded division `x / s`
  Vllm = 2,               ///< vLLM's int8 kernels (static, dynamic per-token, and azp)
  TransformerEngine = 3,  ///< TransformerEngine's FP8 cast (NaN-skipping amax, scale_inv output)
};

/// "pytorch", "exact", "vllm", "transformer_engine".
constexpr std::string_view to_string(QuantConvention c) {
  switch (c) {
    case QuantConvention::PyTorch: return "pytorch";
    case QuantConvention::Exact: return "exact";
    case QuantConvention::Vllm: return "vllm";
    case QuantConvention::TransformerEngine: return "transformer_engine";
  }
  return "?";
}

}  // namespace baracuda
