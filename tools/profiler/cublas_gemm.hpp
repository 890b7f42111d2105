// The profiler's library baseline for GEMM scenarios: cuBLAS fp16 GEMM (f16 inputs and output, f32
// accumulation, CUBLAS_COMPUTE_32F: what torch.nn.functional.linear runs in half precision) of the same
// [M, N, K], with the weight in nn.Linear's [N, K] layout. Built only with the cuda kernels and cuBLAS;
// otherwise every call answers Unsupported.
#pragma once

#include <cstdint>

#include <baracuda/baracuda.hpp>

namespace baracuda::profiler {

/// The median time of one cuBLAS fp16 GEMM y[M, N] = x[M, K] · w[N, K]ᵀ on `stream` (a cuda stream), timed
/// the way the profiler times plans (timing.hpp: `warmup` untimed runs, then `repeat` runs, L2 flushed
/// before each). The operands hold pseudo-random values in [-1, 1] (never zeros, which run faster).
Result<double> cublas_f16_gemm_seconds(const Stream& stream, int64_t m, int64_t n, int64_t k, int warmup, int repeat);
/// The same GEMM in bf16 (bf16 inputs and output, f32 compute): the baseline of the FP8 GEMM scenarios (issue 18's
/// target is FP8 at 1.7x or more of this GEMM for M >= 4096 on an H100).
Result<double> cublas_bf16_gemm_seconds(const Stream& stream, int64_t m, int64_t n, int64_t k, int warmup, int repeat);

}  // namespace baracuda::profiler
