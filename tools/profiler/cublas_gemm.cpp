#include "cublas_gemm.hpp"

#include <string>

#include "timing.hpp"

#if BARACUDA_PROFILER_CUBLAS
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <vector>
#endif

namespace baracuda::profiler {

#if BARACUDA_PROFILER_CUBLAS
namespace {

Status cuda_check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return {};
  return Error::device(std::string("cuBLAS baseline: ") + what + ": " + cudaGetErrorString(e), e);
}
Status cublas_check(cublasStatus_t s, const char* what) {
  if (s == CUBLAS_STATUS_SUCCESS) return {};
  return Error::device(std::string("cuBLAS baseline: ") + what + ": " + cublasGetStatusString(s), s);
}

/// A device allocation freed on scope exit.
struct DeviceMemory {
  void* ptr = nullptr;
  ~DeviceMemory() {
    if (ptr) cudaFree(ptr);
  }
};

/// Uploads `count` 16-bit values (T: __half or __nv_bfloat16) in [-1, 1] from a fixed linear congruential sequence.
template <class T>
Status fill_random_16(DeviceMemory& mem, int64_t count, uint32_t seed) {
  std::vector<T> host(static_cast<size_t>(count));
  uint32_t state = seed * 2654435761u + 1;
  for (T& h : host) {
    state = state * 1664525u + 1013904223u;
    h = T(static_cast<float>(state >> 8) * (2.0f / 16777216.0f) - 1.0f);
  }
  BARACUDA_TRY(cuda_check(cudaMalloc(&mem.ptr, host.size() * sizeof(T)), "cudaMalloc"));
  return cuda_check(cudaMemcpy(mem.ptr, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
}

/// One handle per process (creating one costs milliseconds), bound to the stream before each use.
Result<cublasHandle_t> handle() {
  static cublasHandle_t h = nullptr;
  static cublasStatus_t created = cublasCreate(&h);
  BARACUDA_TRY(cublas_check(created, "cublasCreate"));
  return h;
}

/// cublasGemmEx of 16-bit T (`type` its cudaDataType_t), timed.
template <class T>
Result<double> gemm_16_seconds(const Stream& stream, cudaDataType_t type, int64_t m, int64_t n, int64_t k, int warmup,
                               int repeat) {
  if (stream.device() != DeviceKind::Cuda) return Error::unsupported("cuBLAS baseline: needs a cuda stream");
  if (m <= 0 || n <= 0 || k <= 0 || m > INT32_MAX || n > INT32_MAX || k > INT32_MAX)
    return Error::unsupported("cuBLAS baseline: needs 0 < M, N, K <= INT32_MAX");
  BARACUDA_TRY(cuda_check(cudaSetDevice(stream.device_index()), "cudaSetDevice"));
  auto h = handle();
  if (!h) return h.error();
  DeviceMemory x, w, y;
  BARACUDA_TRY(fill_random_16<T>(x, m * k, 1));
  BARACUDA_TRY(fill_random_16<T>(w, n * k, 2));
  BARACUDA_TRY(cuda_check(cudaMalloc(&y.ptr, static_cast<size_t>(m * n) * sizeof(T)), "cudaMalloc"));
  BARACUDA_TRY(cublas_check(cublasSetStream(*h, stream.cuda_stream()), "cublasSetStream"));
  const float alpha = 1.0f, beta = 0.0f;
  // Row-major y[M, N] = x[M, K] · w[N, K]ᵀ is column-major yᵀ[N, M] = op(w) · x, with w read as a K×N
  // column-major matrix and transposed and x as a K×M one (the "TN" layout).
  const int mi = static_cast<int>(m), ni = static_cast<int>(n), ki = static_cast<int>(k);
  auto launch = [&]() -> Status {
    return cublas_check(cublasGemmEx(*h, CUBLAS_OP_T, CUBLAS_OP_N, ni, mi, ki, &alpha, w.ptr, type, ki, x.ptr, type, ki,
                                     &beta, y.ptr, type, ni, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                        "cublasGemmEx");
  };
  auto t = measure(stream, launch, warmup, repeat);
  if (!t) return t.error();
  return t->median_s;
}

}  // namespace

Result<double> cublas_f16_gemm_seconds(const Stream& stream, int64_t m, int64_t n, int64_t k, int warmup,
                                       int repeat) {
  return gemm_16_seconds<__half>(stream, CUDA_R_16F, m, n, k, warmup, repeat);
}

Result<double> cublas_bf16_gemm_seconds(const Stream& stream, int64_t m, int64_t n, int64_t k, int warmup,
                                        int repeat) {
  return gemm_16_seconds<__nv_bfloat16>(stream, CUDA_R_16BF, m, n, k, warmup, repeat);
}

#else

Result<double> cublas_f16_gemm_seconds(const Stream&, int64_t, int64_t, int64_t, int, int) {
  return Error::unsupported("cuBLAS baseline: the profiler was built without the cuda kernels or cuBLAS");
}
Result<double> cublas_bf16_gemm_seconds(const Stream&, int64_t, int64_t, int64_t, int, int) {
  return Error::unsupported("cuBLAS baseline: the profiler was built without the cuda kernels or cuBLAS");
}

#endif

}  // namespace baracuda::profiler
