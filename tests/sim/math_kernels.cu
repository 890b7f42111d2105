// Math and integer intrinsics for the emulator self-test. Plain CUDA: compiles with nvcc too.
#include "sim/compat.cuh"

#include "finish_launch.hpp"
#include "selftest_kernels.hpp"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace selftest {

__global__ void int_kernel(const unsigned* a, const unsigned* b, const unsigned* s, unsigned long long* out, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= n) return;
  const unsigned x = a[i], y = b[i], z = s[i];
  const unsigned long long xy = (static_cast<unsigned long long>(x) << 32) | y;
  const unsigned long long yz = (static_cast<unsigned long long>(y) << 32) | z;
  unsigned long long* o = out + static_cast<long long>(i) * simtest::kIntOps;
  o[0] = static_cast<unsigned long long>(__popc(x));
  o[1] = static_cast<unsigned long long>(__popcll(xy));
  o[2] = static_cast<unsigned long long>(__clz(static_cast<int>(x)));
  o[3] = static_cast<unsigned long long>(__clzll(static_cast<long long>(xy)));
  o[4] = static_cast<unsigned long long>(__ffs(static_cast<int>(x)));
  o[5] = static_cast<unsigned long long>(__ffsll(static_cast<long long>(xy)));
  o[6] = __brev(x);
  o[7] = __brevll(xy);
  o[8] = __byte_perm(x, y, z);
  o[9] = __funnelshift_l(x, y, z);
  o[10] = __funnelshift_lc(x, y, z);
  o[11] = __funnelshift_r(x, y, z);
  o[12] = __funnelshift_rc(x, y, z);
  o[13] = __umulhi(x, y);
  o[14] = static_cast<unsigned>(__mulhi(static_cast<int>(x), static_cast<int>(y)));
  o[15] = __umul64hi(xy, yz);
  o[16] = min(static_cast<int>(x), y);  // CUDA: mixed int/unsigned compares as unsigned
  o[17] = static_cast<unsigned>(max(static_cast<int>(x), static_cast<int>(y)));
  o[18] = __sad(static_cast<int>(x), static_cast<int>(y), z);
  o[19] = static_cast<unsigned>(__mul24(static_cast<int>(x), static_cast<int>(y)));
}

__global__ void float_kernel(const float* xs, const float* ys, double* out, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= n) return;
  const float x = xs[i], y = ys[i];
  double* o = out + static_cast<long long>(i) * simtest::kFloatOps;
  o[0] = __float2int_rn(x);
  o[1] = __float2int_rz(x);
  o[2] = __float2int_rd(x);
  o[3] = __float2int_ru(x);
  o[4] = __float2uint_rn(x);
  o[5] = static_cast<double>(__float2ll_rn(x));
  o[6] = __fadd_rn(x, y);
  o[7] = __fadd_rz(x, y);
  o[8] = __fadd_rd(x, y);
  o[9] = __fadd_ru(x, y);
  o[10] = __fmul_rz(x, y);
  o[11] = __fmul_rd(x, y);
  o[12] = __fmul_ru(x, y);
  o[13] = __fdiv_rz(x, y);
  o[14] = __fdiv_ru(x, y);
  o[15] = __fsqrt_rd(fabsf(x));
  o[16] = __frcp_ru(x);
  o[17] = __int2float_rz(__float_as_int(x));
  o[18] = __double2float_rd(static_cast<double>(x) * 1.1);
  o[19] = __saturatef(x);
  o[20] = rsqrtf(fabsf(x));
  o[21] = __float_as_uint(__uint_as_float(__float_as_uint(x)));
  o[22] = __expf(fminf(fmaxf(x, -80.0f), 80.0f));
  o[23] = __fmaf_rn(x, y, 1.0f);
}

__global__ void half_fma_kernel(const __half* a, const __half* b, const __half* c, __half* out,
                                const __nv_bfloat16* ab, const __nv_bfloat16* bb, const __nv_bfloat16* cb,
                                __nv_bfloat16* outb, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= n) return;
  out[i] = __hfma(a[i], b[i], c[i]);
  outb[i] = __hfma(ab[i], bb[i], cb[i]);
  if (i + 1 < n && (i % 2) == 0) {  // the paired versions must agree with the scalar ones
    const __half2 r = __hfma2(__halves2half2(a[i], a[i + 1]), __halves2half2(b[i], b[i + 1]),
                              __halves2half2(c[i], c[i + 1]));
    if (__half_as_ushort(__low2half(r)) != __half_as_ushort(__hfma(a[i], b[i], c[i])) ||
        __half_as_ushort(__high2half(r)) != __half_as_ushort(__hfma(a[i + 1], b[i + 1], c[i + 1])))
      out[i] = __float2half(12345.0f);
    const __nv_bfloat162 rb = __hfma2(__halves2bfloat162(ab[i], ab[i + 1]), __halves2bfloat162(bb[i], bb[i + 1]),
                                      __halves2bfloat162(cb[i], cb[i + 1]));
    if (__bfloat16_as_ushort(__high2bfloat16(rb)) != __bfloat16_as_ushort(__hfma(ab[i + 1], bb[i + 1], cb[i + 1])))
      outb[i] = __float2bfloat16(12345.0f);
  }
}

__global__ void half_math_kernel(const __half* hs, const __nv_bfloat16* bs, float* out, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= n) return;
  const __half h = hs[i];
  const __nv_bfloat16 bf = bs[i];
  const __half ah = __habs(h);
  float* o = out + static_cast<long long>(i) * simtest::kHalfOps;
  o[0] = __half2float(hexp(h));
  o[1] = __half2float(hlog(ah));
  o[2] = __half2float(hsqrt(ah));
  o[3] = __half2float(hrcp(h));
  o[4] = __half2float(hrsqrt(ah));
  o[5] = __half2float(hfloor(h));
  o[6] = __half2float(hceil(h));
  o[7] = __half2float(hrint(h));
  o[8] = __half2float(htrunc(h));
  o[9] = static_cast<float>(__half2int_rn(h));
  o[10] = static_cast<float>(__half2int_rd(h));
  o[11] = static_cast<float>(__half2short_ru(h));
  o[12] = __bfloat162float(hexp(bf));
  o[13] = static_cast<float>(__bfloat162int_rn(bf));
  o[14] = __bfloat162float(__int2bfloat16_rz(static_cast<int>(__bfloat162float(bf) * 1000.0f)));
  o[15] = __bfloat162float(__int2bfloat16_ru(static_cast<int>(__bfloat162float(bf) * 1000.0f)));
}

}  // namespace selftest
BARACUDA_DEVICE_NAMESPACE_END

namespace simtest {
namespace k = baracuda::selftest;

LaunchError int_intrinsics(const unsigned* a, const unsigned* b, const unsigned* s, unsigned long long* out, int n) {
  return launch(blocks_for(n), 128, k::int_kernel, a, b, s, out, n);
}

LaunchError float_intrinsics(const float* x, const float* y, double* out, int n) {
  return launch(blocks_for(n), 128, k::float_kernel, x, y, out, n);
}

LaunchError half_fma(const __half* a, const __half* b, const __half* c, __half* out, const __nv_bfloat16* ab,
                     const __nv_bfloat16* bb, const __nv_bfloat16* cb, __nv_bfloat16* outb, int n) {
  return launch(blocks_for(n), 128, k::half_fma_kernel, a, b, c, out, ab, bb, cb, outb, n);
}

LaunchError half_math(const __half* h, const __nv_bfloat16* bf, float* out, int n) {
  return launch(blocks_for(n), 128, k::half_math_kernel, h, bf, out, n);
}

}  // namespace simtest
