// Test support: LinearActivation's functions in double, written from their definitions (PyTorch's F.relu, F.silu,
// F.gelu with approximate "none" and "tanh"), independently of the library: the f64 evaluations of the GEMM
// tests (gemm, gemm_tc, fp8_gemm and their cuBLASLt mappings) share this one.
#pragma once

#include <cmath>

#include "baracuda/ops/int_gemm.hpp"  // LinearActivation

namespace baracuda::test {

/// act(v) in double; ReLU keeps NaN (as the library's does).
inline double reference_activation(LinearActivation a, double v) {
  switch (a) {
    case LinearActivation::Relu: return std::isnan(v) ? v : (v > 0 ? v : 0.0);
    case LinearActivation::Silu: return v / (1.0 + std::exp(-v));
    case LinearActivation::GeluErf: return 0.5 * v * std::erfc(-v / std::sqrt(2.0));
    case LinearActivation::GeluTanh:
      return 0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v)));
    default: return v;
  }
}

}  // namespace baracuda::test
