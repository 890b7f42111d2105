#include "baracuda/core/sku.hpp"

#include "core/enum_names.hpp"
#include "baracuda/core/hash.hpp"

namespace baracuda {

std::string_view to_string(OpCategory v) {
  static constexpr std::string_view kNames[] = {"fill", "cast", "unary", "binary", "ternary", "gated_activation",
                                                "reduction", "quantization", "gemm", "normalization", "softmax",
                                                "attention"};
  static_assert(std::size(kNames) == static_cast<size_t>(OpCategory::Attention) + 1);
  return detail::enum_name(v, kNames);
}

std::string_view to_string(BackendKind v) {
  static constexpr std::string_view kNames[] = {"host",  "sim",   "bespoke", "cublaslt",
                                                "cudnn", "cufft", "curand",  "cusolver"};
  static_assert(std::size(kNames) == static_cast<size_t>(BackendKind::Cusolver) + 1);
  return detail::enum_name(v, kNames);
}

std::string_view to_string(MathPrecision v) {
  static constexpr std::string_view kNames[] = {"exact", "f16",  "bf16",    "tf32",    "f32",
                                                "f64",   "int8", "fp8e4m3", "fp8e5m2", "int4"};
  static_assert(std::size(kNames) == static_cast<size_t>(MathPrecision::Int4) + 1);
  return detail::enum_name(v, kNames);
}

std::string_view to_string(LayoutKind v) {
  static constexpr std::string_view kNames[] = {"rcr", "rrr", "ccr", "crr"};
  static_assert(std::size(kNames) == static_cast<size_t>(LayoutKind::Crr) + 1);
  return detail::enum_name(v, kNames);
}

std::string_view to_string(EpilogueKind v) {
  static constexpr std::string_view kNames[] = {"identity", "bias", "bias_relu", "bias_gelu", "bias_silu"};
  static_assert(std::size(kNames) == static_cast<size_t>(EpilogueKind::BiasSilu) + 1);
  return detail::enum_name(v, kNames);
}

std::string to_string(const PrecisionGuarantee& p) {
  std::string s = "math=";
  s += to_string(p.math_precision);
  s += " acc=";
  s += to_string(p.accumulator);
  s += p.deterministic ? " deterministic" : " nondeterministic";
  s += p.bit_stable_on_same_hardware ? " bit-stable" : "";
  return s;
}

size_t KernelSku::hash() const {
  return detail::hash_fields(category, op, element, aux_element, layout, epilogue, sm, backend, precision, variant);
}

std::string to_string(const KernelSku& s) {
  std::string r(s.op);
  r += '/';
  r += to_string(s.element);
  if (s.aux_element) {
    r += "->";
    r += to_string(*s.aux_element);
  }
  if (s.layout) {
    r += '/';
    r += to_string(*s.layout);
  }
  if (s.epilogue) {
    r += '/';
    r += to_string(*s.epilogue);
  }
  r += '/';
  r += to_string(s.backend);
  if (s.sm) r += "/sm" + std::to_string(s.sm);
  r += '/';
  r += to_string(s.precision);
  if (!s.variant.empty()) {
    r += '/';
    r += s.variant;
  }
  return r;
}

}  // namespace baracuda
