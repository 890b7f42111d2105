// Internal: the gemm family's launch record, the one contract between the plan (plan.cpp, which validates the
// operands and fills it) and every backend (the host reference, the bespoke kernels on sim and cuda, and the
// cuBLASLt SKU). Every operand is a logical row-major-indexed matrix with element strides given explicitly, so
// one record covers the four transpose combinations, strided batches and broadcast batches (batch stride 0).
#pragma once

#include <cstdint>

#include "baracuda/core/element.hpp"
#include "baracuda/ops/int_gemm.hpp"  // LinearActivation

namespace baracuda::detail {

/// One operand: element (i, j) of batch b is at `data + b·batch + i·row + j·col` (elements, not bytes).
struct GemmOperand {
  const void* data = nullptr;  ///< nullptr: absent
  int64_t batch = 0, row = 0, col = 0;
};

/// `D = act(α·op(A)·op(B) + β·C + bias)` per batch, with the optional pre-activation `aux` and `bias_grad`.
/// Validated by the plan: kinds are one of the descriptor's combinations, shapes match, outputs do not overlap
/// inputs; exactly one of `a.row`, `a.col` is 1 unless the extent is 1 (likewise b); c, d, aux have col == 1.
struct GemmLaunch {
  int64_t m = 0, n = 0, k = 0, batch = 1;
  ElementKind ab = ElementKind::F16;  ///< the kind of A and B
  ElementKind cd = ElementKind::F16;  ///< the kind of C, D, aux, bias and bias_grad
  bool tf32 = false;                  ///< f32 inputs only: TF32 tensor cores allowed (never required)
  GemmOperand a;                      ///< op(A): [batch, M, K]
  GemmOperand b;                      ///< op(B): [batch, K, N]
  GemmOperand c;                      ///< [batch, M, N], col == 1; absent when β == 0 (then C is not read)
  GemmOperand d;                      ///< [batch, M, N], col == 1; written (data is the mutable output)
  GemmOperand aux;                    ///< [batch, M, N], col == 1; the pre-activation value, written; or absent
  GemmOperand bias;                   ///< [N] (col = its stride), added to every row; or absent
  GemmOperand bias_grad;              ///< [M] (col = its stride): Σ_k op(A)[m, k], written (batch == 1); or absent
  double alpha = 1.0, beta = 0.0;
  LinearActivation activation = LinearActivation::None;
};

}  // namespace baracuda::detail
