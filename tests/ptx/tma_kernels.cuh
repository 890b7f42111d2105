// TMA self-test kernel (tma_selftest.hpp): thread 0 initialises one mbarrier and issues one or two tensor box
// copies (ptx/tma.cuh), one per barrier phase; the block waits on each phase's parity, writes the shared
// buffer out byte for byte, and meets at a barrier before the next phase. Plain CUDA over the wrapper layer; compiled against the emulator
// (tma_kernels_sim.cu) and by nvcc (tma_kernels_cuda.cu).
#pragma once

#include <cstdint>
#include <string>

#include "device/ptx/mbarrier.cuh"
#include "device/ptx/tma.cuh"
#include "device/ptx/wgmma.cuh"  // fence_proxy_async_shared
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
  const unsigned raw_addr = ptx::smem_address(raw);
  unsigned char* const base = raw + ((1024u - (raw_addr & 1023u)) & 1023u);
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
  const std::size_t out_bytes = static_cast<std::size_t>(c.copies) * box_bytes;
  const unsigned char* d_src = src;
  unsigned char* d_out = out;
#if !BARACUDA_SIM
  void *ds = nullptr, *dout = nullptr;
  auto release = [&] { cudaFree(ds), cudaFree(dout); };
  if (cudaMalloc(&ds, src_bytes) != cudaSuccess || cudaMalloc(&dout, out_bytes) != cudaSuccess ||
      cudaMemcpy(ds, src, src_bytes, cudaMemcpyHostToDevice) != cudaSuccess) {
    release();
    return {true, 1, "device allocation or copy failed"};
  }
  d_src = static_cast<const unsigned char*>(ds), d_out = static_cast<unsigned char*>(dout);
#else
  (void)src_bytes, (void)out_bytes;
#endif
  ptx::TensorMapSpec2d s;
  s.base = d_src, s.cols = c.cols, s.rows = c.rows, s.row_bytes = c.row_bytes, s.elem_bytes = c.elem_bytes;
  s.box_cols = c.box_cols, s.box_rows = c.box_rows, s.swizzle = static_cast<ptx::TmaSwizzle>(c.swizzle);
  ptx::TensorMap map{};
  LaunchError e;
  if (std::string why = ptx::encode_tensor_map_2d(map, s); !why.empty()) {
    e = {true, 1, why};
  } else {
    const k::TmaArgs a{c.copies, {c.c0[0], c.c0[1]}, {c.c1[0], c.c1[1]}, box_bytes, d_out};
    const int smem = 2 * static_cast<int>((box_bytes + 1023u) & ~1023u) + 1024 + 8;
#if !BARACUDA_SIM
    (void)cudaFuncSetAttribute(&k::tma_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
#endif
    BARACUDA_LAUNCH(1, kTmaThreads, smem, 0, k::tma_kernel)(a, map);
    e = ::baracuda::launch::take_last_error();
  }
#if !BARACUDA_SIM
  if (!e.failed) {
    if (const cudaError_t st = cudaDeviceSynchronize(); st != cudaSuccess) {
      e = {true, static_cast<int>(st), cudaGetErrorString(st)};
    } else if (cudaMemcpy(out, d_out, out_bytes, cudaMemcpyDeviceToHost) != cudaSuccess) {
      e = {true, 1, "cudaMemcpy to the host failed"};
    }
  }
  release();
#endif
  return e;
}

}  // namespace BARACUDA_DEVICE_ABI
}  // namespace ptxtest
