// Internal: LinearActivation's functions for the host references of the GEMM families (gemm, int_gemm, fp8_gemm), in
// the working type M of each (float for the int8 epilogue's bit-exact oracle, long double for the f64 references), with
// std:: math: the two-branch sigmoid (no overflow of exp) and erfc for GELU-erf.
#pragma once

#include <cmath>

#include "baracuda/ops/int_gemm.hpp"  // LinearActivation

namespace baracuda::reference {

template <class M>
M activate(LinearActivation a, M v) {
  switch (a) {
    case LinearActivation::None: return v;
    case LinearActivation::Relu: return v > M(0) ? v : (v != v ? v : M(0));  // NaN stays NaN
    case LinearActivation::Silu: {
      const M s = v >= M(0) ? M(1) / (M(1) + std::exp(-v)) : std::exp(v) / (M(1) + std::exp(v));
      return v * s;
    }
    case LinearActivation::GeluErf: return M(0.5) * v * std::erfc(-v * M(0.70710678118654752440084436210484903928L));
    case LinearActivation::GeluTanh: {
      const M inner = M(0.79788456080286535587989211986876373695L) * (v + M(0.044715) * v * v * v);
      return M(0.5) * v * (M(1) + std::tanh(inner));
    }
  }
  return v;
}

}  // namespace baracuda::reference
