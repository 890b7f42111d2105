// PTX wrapper self-test kernels: each loads per-lane inputs, runs one wrapper, and writes the results out.
// Plain CUDA over the wrapper layer; compiled by nvcc (ptx_kernels_cuda.cu) and against the emulator
// (ptx_kernels_sim.cu).
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "device/ptx/ptx.cuh"
#include "device_buffers.hpp"
#include "ptx_selftest.hpp"
#include "sim/compat.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace ptxtest_kernels {

template <class TA, class TB>
__global__ void mma_i8_kernel(const unsigned* a, const unsigned* b, const int* c, int* d) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned ra[4], rb[2];
  int rc[4], rd[4];
  for (int r = 0; r < 4; ++r) ra[r] = a[i * 4 + r], rc[r] = c[i * 4 + r];
  for (int r = 0; r < 2; ++r) rb[r] = b[i * 2 + r];
  ptx::mma_m16n8k32<TA, TB>(rd, ra, rb, rc);
  for (int r = 0; r < 4; ++r) d[i * 4 + r] = rd[r];
}

template <class T>
__global__ void mma_f16_kernel(const unsigned* a, const unsigned* b, const float* c, float* d) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned ra[4], rb[2];
  float rc[4];
  for (int r = 0; r < 4; ++r) ra[r] = a[i * 4 + r], rc[r] = c[i * 4 + r];
  for (int r = 0; r < 2; ++r) rb[r] = b[i * 2 + r];
  ptx::mma_m16n8k16<T>(rc, ra, rb, rc);  // d aliasing c, as accumulation loops use it
  for (int r = 0; r < 4; ++r) d[i * 4 + r] = rc[r];
}

template <int N, bool Trans>
__global__ void ldmatrix_kernel(const uint4* tile, const int* row, unsigned* out) {
  __shared__ uint4 smem[2][64];  // two warps per block, 64 rows of 16 bytes each
  const int w = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int gw = blockIdx.x * 2 + w;
  smem[w][lane] = tile[gw * 64 + lane];
  smem[w][lane + 32] = tile[gw * 64 + lane + 32];
  __syncthreads();
  unsigned r[N];
  ptx::ldmatrix<N, Trans>(r, &smem[w][row[gw * 32 + lane]]);
  for (int j = 0; j < 4; ++j) out[(gw * 32 + lane) * 4 + j] = j < N ? r[j] : 0xdeadbeefu;
}

template <int Bytes, int Mode>
__device__ __forceinline__ void issue(unsigned char* dst, const unsigned char* src, int src_size) {
  if constexpr (Mode == ::ptxtest::kCa) {
    ptx::cp_async_ca<Bytes>(dst, src);
  } else if constexpr (Mode == ::ptxtest::kCaZfill) {
    ptx::cp_async_ca_zfill<Bytes>(dst, src, src_size);
  } else if constexpr (Mode == ::ptxtest::kCg) {
    ptx::cp_async_cg(dst, src);
  } else {
    ptx::cp_async_cg_zfill(dst, src, src_size);
  }
}

// Thread t: fills its two destination slots with 0xAB, then issues op 0 (slot t) and commits, issues op 1
// (slot kCpThreads + t) and commits; after wait_group 1 it reads back its own op-0 slot, after wait_group 0
// and a barrier it reads the op-1 slot of thread kCpThreads-1-t (the copies are visible to the block).
template <int Bytes, int Mode>
__global__ void cp_async_kernel(const unsigned char* src, const int* src_size, unsigned char* out) {
  constexpr int kT = ::ptxtest::kCpThreads;
  __shared__ __align__(16) unsigned char smem[2 * kT * 16];
  const int t = threadIdx.x;
  for (int k = 0; k < Bytes; ++k) smem[t * Bytes + k] = smem[(kT + t) * Bytes + k] = 0xAB;
  __syncthreads();
  issue<Bytes, Mode>(smem + t * Bytes, src + t * Bytes, src_size[t]);
  ptx::cp_async_commit();
  issue<Bytes, Mode>(smem + (kT + t) * Bytes, src + (kT + t) * Bytes, src_size[kT + t]);
  ptx::cp_async_commit();
  ptx::cp_async_wait<1>();
  for (int k = 0; k < Bytes; ++k) out[t * Bytes + k] = smem[t * Bytes + k];
  if (t % 2 == 0) {
    ptx::cp_async_wait<0>();
  } else {
    ptx::cp_async_wait_all();
  }
  __syncthreads();
  const int u = kT - 1 - t;
  for (int k = 0; k < Bytes; ++k) out[(kT + u) * Bytes + k] = smem[(kT + u) * Bytes + k];
}

__global__ void cvt_kernel(const float* lo, const float* hi, unsigned* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float l = lo[i], h = hi[i];
  out[i * 4 + 0] = ptx::cvt_rn_f16x2_bits(l, h);
  const __half2 p = ptx::cvt_rn_f16x2(l, h);
  const __half2_raw pr = p;
  out[i * 4 + 1] = static_cast<unsigned>(pr.x) | (static_cast<unsigned>(pr.y) << 16);
  out[i * 4 + 2] = ptx::cvt_rn_bf16x2_bits(l, h);
  const __nv_bfloat162 q = ptx::cvt_rn_bf16x2(l, h);
  const __nv_bfloat162_raw qr = q;
  out[i * 4 + 3] = static_cast<unsigned>(qr.x) | (static_cast<unsigned>(qr.y) << 16);
}

template <int... K>
__device__ __forceinline__ void all_lop3(unsigned a, unsigned b, unsigned c, unsigned* o) {
  ((o[1 + K] = ptx::lop3<::ptxtest::kLop3Luts[K]>(a, b, c)), ...);
}

__global__ void bitops_kernel(const unsigned* a, const unsigned* b, const unsigned* c, unsigned* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned* o = out + i * ::ptxtest::kBitopsOut;
  o[0] = ptx::prmt(a[i], b[i], c[i]);
  all_lop3<0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12>(a[i], b[i], c[i], o);
  static_assert(::ptxtest::kBitopsOut == 14, "all_lop3 lists every Lut");
}

}  // namespace ptxtest_kernels
BARACUDA_DEVICE_NAMESPACE_END

namespace ptxtest {
namespace BARACUDA_DEVICE_ABI {
namespace {

using namespace ::baracuda::BARACUDA_DEVICE_ABI::ptxtest_kernels;

template <class TA, class TB>
LaunchError mma_i8_t(const unsigned* a, const unsigned* b, const int* c, int* d, int warps) {
  Buffers m;
  const std::size_t n = static_cast<std::size_t>(warps) * 32;
  auto* da = m.in(a, n * 4);
  auto* db = m.in(b, n * 2);
  auto* dc = m.in(c, n * 4);
  auto* dd = m.out(d, n * 4);
  if (!m.ok()) return m.finish();
  BARACUDA_LAUNCH(warps / 2, 64, 0, nullptr, mma_i8_kernel<TA, TB>)(da, db, dc, dd);
  return m.finish();
}

template <class T>
LaunchError mma_f16_t(const unsigned* a, const unsigned* b, const float* c, float* d, int warps) {
  Buffers m;
  const std::size_t n = static_cast<std::size_t>(warps) * 32;
  auto* da = m.in(a, n * 4);
  auto* db = m.in(b, n * 2);
  auto* dc = m.in(c, n * 4);
  auto* dd = m.out(d, n * 4);
  if (!m.ok()) return m.finish();
  BARACUDA_LAUNCH(warps / 2, 64, 0, nullptr, mma_f16_kernel<T>)(da, db, dc, dd);
  return m.finish();
}

template <int N, bool Trans>
LaunchError ldmatrix_t(const unsigned* tile, const int* row, unsigned* out, int warps) {
  Buffers m;
  const std::size_t n = static_cast<std::size_t>(warps);
  auto* dt = m.in(reinterpret_cast<const uint4*>(tile), n * 64);
  auto* dr = m.in(row, n * 32);
  auto* dout = m.out(out, n * 32 * 4);
  if (!m.ok()) return m.finish();
  BARACUDA_LAUNCH(warps / 2, 64, 0, nullptr, ldmatrix_kernel<N, Trans>)(dt, dr, dout);
  return m.finish();
}

template <int Bytes, int Mode>
LaunchError cp_async_t(const unsigned char* src, const int* src_size, unsigned char* out) {
  Buffers m;
  auto* ds = m.in(src, 2 * kCpThreads * Bytes);
  auto* dz = m.in(src_size, 2 * kCpThreads);
  auto* dout = m.out(out, 2 * kCpThreads * Bytes);
  if (!m.ok()) return m.finish();
  BARACUDA_LAUNCH(1, kCpThreads, 0, nullptr, cp_async_kernel<Bytes, Mode>)(ds, dz, dout);
  return m.finish();
}

template <int Mode>
LaunchError cp_async_mode(int bytes, const unsigned char* src, const int* src_size, unsigned char* out) {
  if constexpr (Mode == kCg || Mode == kCgZfill) {
    if (bytes != 16) return fail("cp.async.cg: cp-size 16 only");
    return cp_async_t<16, Mode>(src, src_size, out);
  } else {
    switch (bytes) {
      case 4: return cp_async_t<4, Mode>(src, src_size, out);
      case 8: return cp_async_t<8, Mode>(src, src_size, out);
      case 16: return cp_async_t<16, Mode>(src, src_size, out);
      default: return fail("cp.async: cp-size 4, 8 or 16");
    }
  }
}

}  // namespace

LaunchError mma_i8(bool a_signed, bool b_signed, const unsigned* a, const unsigned* b, const int* c, int* d,
                   int warps) {
  using S = std::int8_t;
  using U = std::uint8_t;
  if (a_signed) return b_signed ? mma_i8_t<S, S>(a, b, c, d, warps) : mma_i8_t<S, U>(a, b, c, d, warps);
  return b_signed ? mma_i8_t<U, S>(a, b, c, d, warps) : mma_i8_t<U, U>(a, b, c, d, warps);
}

LaunchError mma_f16(bool bf16, const unsigned* a, const unsigned* b, const float* c, float* d, int warps) {
  return bf16 ? mma_f16_t<__nv_bfloat16>(a, b, c, d, warps) : mma_f16_t<__half>(a, b, c, d, warps);
}

LaunchError ldmatrix(int n, bool trans, const unsigned* tile, const int* row, unsigned* out, int warps) {
  switch (n * 2 + (trans ? 1 : 0)) {
    case 2: return ldmatrix_t<1, false>(tile, row, out, warps);
    case 3: return ldmatrix_t<1, true>(tile, row, out, warps);
    case 4: return ldmatrix_t<2, false>(tile, row, out, warps);
    case 5: return ldmatrix_t<2, true>(tile, row, out, warps);
    case 8: return ldmatrix_t<4, false>(tile, row, out, warps);
    case 9: return ldmatrix_t<4, true>(tile, row, out, warps);
    default: return fail("ldmatrix: x1, x2 or x4");
  }
}

LaunchError cp_async(int mode, int bytes, const unsigned char* src, const int* src_size, unsigned char* out) {
  switch (mode) {
    case kCa: return cp_async_mode<kCa>(bytes, src, src_size, out);
    case kCaZfill: return cp_async_mode<kCaZfill>(bytes, src, src_size, out);
    case kCg: return cp_async_mode<kCg>(bytes, src, src_size, out);
    case kCgZfill: return cp_async_mode<kCgZfill>(bytes, src, src_size, out);
    default: return fail("cp.async: unknown mode");
  }
}

LaunchError cvt(const float* lo, const float* hi, unsigned* out, int n) {
  Buffers m;
  auto* dl = m.in(lo, static_cast<std::size_t>(n));
  auto* dh = m.in(hi, static_cast<std::size_t>(n));
  auto* dout = m.out(out, static_cast<std::size_t>(n) * 4);
  if (!m.ok()) return m.finish();
  BARACUDA_LAUNCH((n + 127) / 128, 128, 0, nullptr, cvt_kernel)(dl, dh, dout, n);
  return m.finish();
}

LaunchError bitops(const unsigned* a, const unsigned* b, const unsigned* c, unsigned* out, int n) {
  Buffers m;
  auto* da = m.in(a, static_cast<std::size_t>(n));
  auto* db = m.in(b, static_cast<std::size_t>(n));
  auto* dc = m.in(c, static_cast<std::size_t>(n));
  auto* dout = m.out(out, static_cast<std::size_t>(n) * kBitopsOut);
  if (!m.ok()) return m.finish();
  BARACUDA_LAUNCH((n + 127) / 128, 128, 0, nullptr, bitops_kernel)(da, db, dc, dout, n);
  return m.finish();
}

}  // namespace BARACUDA_DEVICE_ABI
}  // namespace ptxtest
