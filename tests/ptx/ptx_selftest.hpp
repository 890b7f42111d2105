/// \file
/// \brief Launchers of the PTX wrapper self-test kernels (ptx_kernels.cuh), compiled once per device:
/// ptxtest::device_sim (the emulator) and ptxtest::device_cuda (nvcc, when the build has CUDA kernels).
/// Every launcher takes host pointers, copies to the device and back as needed, and returns the error.
#pragma once

#include "sim/launch_error.hpp"

namespace ptxtest {

using baracuda::launch::LaunchError;

/// Warps per launch of the warp-wide tests (two per block).
inline constexpr int kWarps = 8;
/// cp.async test: threads of the one block, and operations per thread (two commit groups).
inline constexpr int kCpThreads = 64;
/// bitops test: outputs per element: prmt, then lop3 with each Lut of kLop3Luts.
inline constexpr unsigned char kLop3Luts[] = {0x00, 0xFF, 0xF0, 0xCC, 0xAA, 0xEA, 0x96,
                                              0xE8, 0x6A, 0x1E, 0x80, 0xFE, 0xCA};
inline constexpr int kBitopsOut = 1 + static_cast<int>(sizeof(kLop3Luts));
enum CpMode : int { kCa = 0, kCaZfill = 1, kCg = 2, kCgZfill = 3 };

#define PTXTEST_DECLARE_LAUNCHERS                                                                           \
  /* per warp w, lane l: a[(w*32+l)*4 + r], b[(w*32+l)*2 + r], c and d[(w*32+l)*4 + r] */                  \
  LaunchError mma_i8(bool a_signed, bool b_signed, const unsigned* a, const unsigned* b, const int* c, int* d, \
                     int warps);                                                                           \
  LaunchError mma_f16(bool bf16, const unsigned* a, const unsigned* b, const float* c, float* d, int warps);  \
  /* m16n8k32 e4m3/e5m2 (as mma_i8, f32 accumulators); the cuda kernel needs code for sm_89+ */             \
  LaunchError mma_fp8(bool a_e5m2, bool b_e5m2, const unsigned* a, const unsigned* b, const float* c, float* d, \
                      int warps);                                                                           \
  /* *arch: BARACUDA_ARCH of the code the device runs (900 under sim; e.g. 800 for the sm_80 pass) */      \
  LaunchError kernel_arch(int* arch);                                                                       \
  /* tile: per warp 64 rows of 16 bytes (4 unsigned); row[w*32 + l]: lane l's row; out[(w*32+l)*4 + j] */    \
  LaunchError ldmatrix(int n, bool trans, const unsigned* tile, const int* row, unsigned* out, int warps);    \
  /* src: 2*kCpThreads*bytes bytes; src_size[op*kCpThreads + t]; out like src (see ptx_kernels.cuh) */        \
  LaunchError cp_async(int mode, int bytes, const unsigned char* src, const int* src_size, unsigned char* out); \
  /* out[i*4 + {0,1,2,3}]: f16x2 bits, bits of the __half2, bf16x2 bits, bits of the __nv_bfloat162 */       \
  LaunchError cvt(const float* lo, const float* hi, unsigned* out, int n);                                  \
  /* out[i] = ex2_approx_ftz(x[i]) */                                                                       \
  LaunchError ex2(const float* x, float* out, int n);                                                       \
  /* out[i*kBitopsOut + 0] = prmt(a, b, c); + 1 + k: lop3<kLop3Luts[k]>(a, b, c) */                         \
  LaunchError bitops(const unsigned* a, const unsigned* b, const unsigned* c, unsigned* out, int n);

namespace device_sim {
PTXTEST_DECLARE_LAUNCHERS
}
namespace device_cuda {
PTXTEST_DECLARE_LAUNCHERS
}
#undef PTXTEST_DECLARE_LAUNCHERS

}  // namespace ptxtest
