// TMA self-test kernel (tma_selftest.hpp): thread 0 initialises one mbarrier and issues one or two tensor box
// copies (ptx/tma.cuh), one per barrier phase; the block waits on each phase's parity, writes the shared
// buffer out byte for byte, and meets at a barrier before the next phase. Plain CUDA over the wrapper layer;
// a kernel unit, compiled against the emulator and by nvcc (baracuda_add_kernel_sources,
// tests/ptx/CMakeLists.txt).
#pragma once

#include <cstdint>
#include <string>

#include "device/ptx/mbarrier.cuh"
#include "device/ptx/tma.cuh"
#include "device/ptx/wgmma.cuh"  // fence_proxy_async_shared
#include "device_buffers.hpp"
#include "sim/compat.cuh"
#include "tma_selftest.hpp"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace ptxtest_kernels {

struct TmaArgs {
  int copies;
  int c0[2], c1[2];
  unsigned box_bytes;
  unsigned char* out;
};

__global__ void __launch_bounds__(::ptxtest::kTmaThreads) tma_kernel(TmaArgs p, const BARACUDA_GRID_CONSTANT ptx::TensorMap map) {
  BARACUDA_DYNAMIC_SHARED(unsigned char, raw);
  const int tid = static_cast<int>(threadIdx.x);
  unsigned char* const base = ptx::align_shared_1024(raw).ptr;
  const unsigned span = (p.box_bytes + 1023u) & ~1023u;
  auto* const bar = reinterpret_cast<std::uint64_t*>(base + 2 * span);
  for (unsigned i = static_cast<unsigned>(tid); i < 2 * span; i += ::ptxtest::kTmaThreads) base[i] = 0xA5;  // not zero
  ptx::fence_proxy_async_shared();
  if (tid == 0) {
    ptx::mbarrier_init(bar, 1);
    ptx::fence_mbarrier_init();
  }
  __syncthreads();
  for (int i = 0; i < p.copies; ++i) {
    if (tid == 0) {
      ptx::mbarrier_arrive_expect_tx(bar, p.box_bytes);
      ptx::tma_load_2d(base + i * span, map, bar, i == 0 ? p.c0[0] : p.c0[1], i == 0 ? p.c1[0] : p.c1[1]);
    }
    ptx::mbarrier_wait_parity(bar, static_cast<unsigned>(i) & 1u);
    for (unsigned j = static_cast<unsigned>(tid); j < p.box_bytes; j += ::ptxtest::kTmaThreads)
      p.out[i * p.box_bytes + j] = base[i * span + j];
    // Nobody starts phase i + 1 before everyone has seen phase i complete: a thread two phases behind would
    // wait on the same parity again, forever (the emulator's watchdog caught that here once).
    __syncthreads();
  }
}

}  // namespace ptxtest_kernels
BARACUDA_DEVICE_NAMESPACE_END

namespace ptxtest {
namespace BARACUDA_DEVICE_ABI {

LaunchError tma(const TmaCase& c, const unsigned char* src, std::size_t src_bytes, unsigned char* out) {
  namespace k = ::baracuda::BARACUDA_DEVICE_ABI::ptxtest_kernels;
  namespace ptx = ::baracuda::BARACUDA_DEVICE_ABI::ptx;
  const unsigned box_bytes = c.box_cols * c.box_rows * c.elem_bytes;
  if (box_bytes > static_cast<unsigned>(kTmaMaxBoxBytes) || c.copies < 1 || c.copies > 2) return {true, 1, "bad TMA case"};
  Buffers m;
  ptx::TensorMapSpec2d s;
  s.base = m.in(src, src_bytes), s.cols = c.cols, s.rows = c.rows, s.row_bytes = c.row_bytes, s.elem_bytes = c.elem_bytes;
  s.box_cols = c.box_cols, s.box_rows = c.box_rows, s.swizzle = static_cast<ptx::TmaSwizzle>(c.swizzle);
  const k::TmaArgs a{c.copies, {c.c0[0], c.c0[1]}, {c.c1[0], c.c1[1]}, box_bytes,
                     m.out(out, static_cast<std::size_t>(c.copies) * box_bytes)};
  if (!m.ok()) return m.finish();
  ptx::TensorMap map{};
  if (std::string why = ptx::encode_tensor_map_2d(map, s); !why.empty()) return {true, 1, why};
  const int smem = 2 * static_cast<int>((box_bytes + 1023u) & ~1023u) + 1024 + 8;
#if !BARACUDA_SIM
  (void)cudaFuncSetAttribute(&k::tma_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
#endif
  BARACUDA_LAUNCH(1, kTmaThreads, smem, 0, k::tma_kernel)(a, map);
  return m.finish();
}

}  // namespace BARACUDA_DEVICE_ABI
}  // namespace ptxtest
