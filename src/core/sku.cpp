#include "baracuda/core/sku.hpp"

#include "core/hashing.hpp"

namespace baracuda {

std::string_view to_string(OpCategory c) {
  switch (c) {
    case OpCategory::Fill: return "fill";
    case OpCategory::Cast: return "cast";
    case OpCategory::UnaryElementwise: return "unary";
    case OpCategory::BinaryElementwise: return "binary";
    case OpCategory::TernaryElementwise: return "ternary";
    case OpCategory::GatedActivation: return "gated_activation";
    case OpCategory::Reduction: return "reduction";
    case OpCategory::Quantization: return "quantization";
    case OpCategory::Gemm: return "gemm";
    case OpCategory::Normalization: return "normalization";
    case OpCategory::Softmax: return "softmax";
    case OpCategory::Attention: return "attention";
  }
  return "?";
}

std::string_view to_string(BackendKind b) {
  switch (b) {
    case BackendKind::Host: return "host";
    case BackendKind::Sim: return "sim";
    case BackendKind::Bespoke: return "bespoke";
    case BackendKind::CublasLt: return "cublaslt";
    case BackendKind::Cudnn: return "cudnn";
    case BackendKind::Cufft: return "cufft";
    case BackendKind::Curand: return "curand";
    case BackendKind::Cusolver: return "cusolver";
  }
  return "?";
}

std::string_view to_string(MathPrecision p) {
  switch (p) {
    case MathPrecision::Exact: return "exact";
    case MathPrecision::F16: return "f16";
    case MathPrecision::Bf16: return "bf16";
    case MathPrecision::Tf32: return "tf32";
    case MathPrecision::F32: return "f32";
    case MathPrecision::F64: return "f64";
    case MathPrecision::Int8: return "int8";
    case MathPrecision::Fp8E4M3: return "fp8e4m3";
    case MathPrecision::Fp8E5M2: return "fp8e5m2";
    case MathPrecision::Int4: return "int4";
  }
  return "?";
}

std::string_view to_string(LayoutKind l) {
  switch (l) {
    case LayoutKind::Rcr: return "rcr";
    case LayoutKind::Rrr: return "rrr";
    case LayoutKind::Ccr: return "ccr";
  }
  return "?";
}

std::string_view to_string(EpilogueKind e) {
  switch (e) {
    case EpilogueKind::Identity: return "identity";
    case EpilogueKind::Bias: return "bias";
    case EpilogueKind::BiasRelu: return "bias_relu";
    case EpilogueKind::BiasGelu: return "bias_gelu";
    case EpilogueKind::BiasSilu: return "bias_silu";
  }
  return "?";
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
  size_t h = std::hash<int>{}(static_cast<int>(category));
  detail::hash_combine(h, op);
  detail::hash_combine(h, static_cast<int>(element));
  detail::hash_combine(h, aux_element ? static_cast<int>(*aux_element) : -1);
  detail::hash_combine(h, layout ? static_cast<int>(*layout) : -1);
  detail::hash_combine(h, epilogue ? static_cast<int>(*epilogue) : -1);
  detail::hash_combine(h, sm);
  detail::hash_combine(h, static_cast<int>(backend));
  detail::hash_combine(h, static_cast<int>(precision));
  detail::hash_combine(h, variant);
  return h;
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
