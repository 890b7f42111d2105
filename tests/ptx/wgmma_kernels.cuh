// wgmma self-test kernel (wgmma_selftest.hpp): copies a host-built shared-memory image, issues one or two
// wgmma.m64nNk32 per warpgroup through the descriptors the host chose, and writes the accumulators out by
// register. Plain CUDA over the wrapper layer; a kernel unit, compiled against the emulator and by
// nvcc for sm_90a only (baracuda_add_kernel_sources with SM90A, tests/ptx/CMakeLists.txt).
#pragma once

#include <cstdint>
#include <string>

#include "device/ptx/wgmma.cuh"
#include "device_buffers.hpp"
#include "sim/compat.cuh"
#include "wgmma_selftest.hpp"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace ptxtest_kernels {

struct WgmmaArgs {
  ::ptxtest::WgmmaCase c;
  const unsigned char* image;
  int image_bytes;
  const int* acc_in;
  int* acc_out;
};

template <int N, class TA, class TB>
__global__ void __launch_bounds__(256) wgmma_kernel(WgmmaArgs p) {
  BARACUDA_DYNAMIC_SHARED(unsigned char, raw);
  const int tid = static_cast<int>(threadIdx.x), wg = tid / 128;
  const ptx::SharedAligned1024 aligned = ptx::align_shared_1024(raw);  // the image on a 1024-byte boundary
  unsigned char* const base = aligned.ptr;
  const unsigned b0 = aligned.addr;
  for (int i = tid; i < p.image_bytes; i += 256) base[i] = p.image[i];
  ptx::fence_proxy_async_shared();
  __syncthreads();
  int d[N / 2];
BARACUDA_UNROLL
  for (int i = 0; i < N / 2; ++i) d[i] = p.acc_in[tid * (N / 2) + i];
  const auto sw = static_cast<ptx::WgmmaSwizzle>(p.c.swizzle);
  const unsigned a_off = wg == 0 ? p.c.a_off[0] : p.c.a_off[1];  // no dynamic index: no local copy of p
  const std::uint64_t da = ptx::wgmma_desc(b0 + a_off, p.c.a_lbo, p.c.a_sbo, sw);
  const std::uint64_t db = ptx::wgmma_desc(b0 + p.c.b_off, p.c.b_lbo, p.c.b_sbo, sw);
  ptx::wgmma_fence_operand(d);
  ptx::wgmma_fence();
  ptx::wgmma_m64nNk32<N, TA, TB>(d, da, db, p.c.scale_d0);
  if (p.c.steps > 1)
    ptx::wgmma_m64nNk32<N, TA, TB>(d, ptx::wgmma_desc_advance(da, p.c.a_step), ptx::wgmma_desc_advance(db, p.c.b_step),
                                   true);
  ptx::wgmma_commit();
  ptx::wgmma_wait<0>();
  ptx::wgmma_fence_operand(d);
BARACUDA_UNROLL
  for (int i = 0; i < N / 2; ++i) p.acc_out[tid * (N / 2) + i] = d[i];
}

template <int N, class TA, class TB>
void launch_wgmma(const WgmmaArgs& a) {
  auto* kernel = &wgmma_kernel<N, TA, TB>;
  const int smem = a.image_bytes + 1024;
#if !BARACUDA_SIM
  (void)cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
#endif
  BARACUDA_LAUNCH(1, ::ptxtest::kWgmmaThreads, smem, 0, kernel)(a);
}

template <int N>
void launch_wgmma_n(const WgmmaArgs& a) {
  if (a.c.a_signed && a.c.b_signed) return launch_wgmma<N, std::int8_t, std::int8_t>(a);
  if (a.c.a_signed) return launch_wgmma<N, std::int8_t, std::uint8_t>(a);
  if (a.c.b_signed) return launch_wgmma<N, std::uint8_t, std::int8_t>(a);
  return launch_wgmma<N, std::uint8_t, std::uint8_t>(a);
}

}  // namespace ptxtest_kernels
BARACUDA_DEVICE_NAMESPACE_END

namespace ptxtest {
namespace BARACUDA_DEVICE_ABI {

LaunchError wgmma(const WgmmaCase& c, const unsigned char* image, int image_bytes, const int* acc_in, int* acc_out) {
  using namespace ::baracuda::BARACUDA_DEVICE_ABI::ptxtest_kernels;
  if (image_bytes > kWgmmaImageBytes || (c.n != 64 && c.n != 128 && c.n != 256)) return {true, 1, "bad wgmma case"};
  const std::size_t acc = static_cast<std::size_t>(kWgmmaThreads) * (c.n / 2);
  Buffers m;
  const WgmmaArgs a{c, m.in(image, static_cast<std::size_t>(image_bytes)), image_bytes, m.in(acc_in, acc), m.out(acc_out, acc)};
  if (!m.ok()) return m.finish();
  if (c.n == 64) {
    launch_wgmma_n<64>(a);
  } else if (c.n == 128) {
    launch_wgmma_n<128>(a);
  } else {
    launch_wgmma_n<256>(a);
  }
  return m.finish();
}

}  // namespace BARACUDA_DEVICE_ABI
}  // namespace ptxtest
