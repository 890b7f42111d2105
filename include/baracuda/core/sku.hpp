/// \file
/// \brief What a plan runs (`KernelSku`), how precise it is (`PrecisionGuarantee`) and what the caller
/// prefers (`PlanPreference`).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "baracuda/core/element.hpp"

namespace baracuda {

/// Op families, as SKUs and the profiler group them.
enum class OpCategory : uint8_t {
  Fill,
  Cast,
  UnaryElementwise,
  BinaryElementwise,
  TernaryElementwise,
  GatedActivation,
  Reduction,
  Quantization,
  Gemm,
  Normalization,
  Softmax,
  Attention,
};
std::string_view to_string(OpCategory c);

/// Who executes a plan.
enum class BackendKind : uint8_t {
  Host,      ///< the plain C++ reference implementation (`host` device)
  Sim,       ///< baracuda's CUDA kernels under the SIMT emulator (`sim` device)
  Bespoke,   ///< baracuda's CUDA kernels on a GPU (`cuda` device)
  CublasLt,  ///< NVIDIA cuBLASLt
  Cudnn,     ///< NVIDIA cuDNN
  Cufft,     ///< NVIDIA cuFFT
  Curand,    ///< NVIDIA cuRAND
  Cusolver,  ///< NVIDIA cuSOLVER
};
std::string_view to_string(BackendKind b);

/// The precision arithmetic is carried out in.
enum class MathPrecision : uint8_t { Exact, F16, Bf16, Tf32, F32, F64, Int8, Fp8E4M3, Fp8E5M2, Int4 };
std::string_view to_string(MathPrecision p);

/// Memory layout of matrix operands (GEMM families): Row/Column for A, B, C in that order.
enum class LayoutKind : uint8_t { Rcr, Rrr, Ccr, Crr };
std::string_view to_string(LayoutKind l);

/// A fused epilogue (GEMM families).
enum class EpilogueKind : uint8_t { Identity, Bias, BiasRelu, BiasGelu, BiasSilu };
std::string_view to_string(EpilogueKind e);

/// An honest statement of a plan's numerics. Any use of atomics whose order can vary makes
/// `deterministic` false; tests check `deterministic` plans bit-exactly run to run.
struct PrecisionGuarantee {
  MathPrecision math_precision = MathPrecision::F32;  ///< precision of the arithmetic
  MathPrecision accumulator = MathPrecision::F32;     ///< precision of accumulations (if any)
  bool bit_stable_on_same_hardware = true;            ///< same inputs, same device ⇒ same bits
  bool deterministic = true;                          ///< independent of scheduling (no racing atomics)
  friend bool operator==(const PrecisionGuarantee&, const PrecisionGuarantee&) = default;
};
std::string to_string(const PrecisionGuarantee& p);

/// Identifies the kernel a plan runs. Hashable, comparable, printable; `op` points at static catalog text.
struct KernelSku {
  OpCategory category = OpCategory::Fill;
  std::string_view op;                       ///< the op's catalog name ("fill", "cast", "affine", ...)
  ElementKind element = ElementKind::F32;    ///< primary element kind
  std::optional<ElementKind> aux_element;    ///< secondary kind (e.g. a cast's output)
  std::optional<LayoutKind> layout;          ///< GEMM layout
  std::optional<EpilogueKind> epilogue;      ///< GEMM epilogue
  int sm = 0;                                ///< compute capability ×10 the kernel targets (0: host/sim)
  BackendKind backend = BackendKind::Host;   ///< who runs it
  MathPrecision precision = MathPrecision::F32;
  std::string_view variant;                  ///< kernel variant ("elementwise", "per_token", "tc_m16n8k32", ...)

  friend bool operator==(const KernelSku&, const KernelSku&) = default;
  size_t hash() const;
};
/// e.g. "cast/f32->bf16/sim/exact/elementwise", "int_gemm/s8->s8/rcr/identity/sim/int8/tc_m16n8k32".
std::string to_string(const KernelSku& s);

/// What the caller allows `select` to choose.
struct PlanPreference {
  /// Largest workspace the caller can provide; kernels needing more are not selected.
  size_t max_workspace_bytes = SIZE_MAX;
  /// Force a backend; if it cannot serve the request, `select` returns `Unsupported` (no silent fallback).
  std::optional<BackendKind> prefer_backend;
  /// Allow kernels that run on one architecture only (e.g. sm_90a wgmma); off ⇒ portable kernels only.
  /// No plan dispatches such a kernel yet (the wgmma GEMM is a candidate: docs/decisions.md), so today it
  /// changes nothing.
  bool allow_arch_specific = true;

  PlanPreference& with_max_workspace_bytes(size_t b) {
    max_workspace_bytes = b;
    return *this;
  }
  PlanPreference& with_backend(BackendKind b) {
    prefer_backend = b;
    return *this;
  }
  PlanPreference& with_arch_specific(bool allow) {
    allow_arch_specific = allow;
    return *this;
  }
};

}  // namespace baracuda

template <>
struct std::hash<baracuda::KernelSku> {
  size_t operator()(const baracuda::KernelSku& s) const noexcept { return s.hash(); }
};
