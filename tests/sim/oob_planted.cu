// A planted out-of-bounds global write (`if (i <= n)`), for checking that an AddressSanitizer build of the
// sim device reports kernel bugs: the test expects "heap-buffer-overflow" in the output.
#include "sim/compat.cuh"

#include <cstdio>

BARACUDA_DEVICE_NAMESPACE_BEGIN
__global__ void planted_oob_write(float* p, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i <= n) p[i] = 1.0f;  // off by one: writes p[n]
}
BARACUDA_DEVICE_NAMESPACE_END

int main() {
  const int n = 1000;
  float* p = nullptr;
#if BARACUDA_SIM
  p = new float[n];  // exactly n elements, so the write of p[n] lands in the redzone
#else
  cudaMalloc(&p, n * sizeof(float));
#endif
  BARACUDA_LAUNCH((n + 255) / 256, 256, 0, 0, baracuda::planted_oob_write)(p, n);
  const auto err = baracuda::launch::take_last_error();
#if BARACUDA_SIM
  delete[] p;
#else
  cudaFree(p);
#endif
  std::printf("planted out-of-bounds write not detected (launch error: %s)\n", err.failed ? err.message.c_str() : "none");
  return 1;
}
