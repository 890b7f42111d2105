// int_gemm_tiles: times candidate tiles of the int8 tensor-core GEMM (src/ops/int_gemm/kernels.cuh) on the
// GPU of this machine, to choose tuning.hpp's tile set from measurements. For each [M, N, K] of the
// profiler's LLM shapes and each candidate tile it runs
//   - IntGemm (s8 × s8 → s32), checked bit for bit against the library's own launch (the tile set in use),
//   - the linear epilogue (bf16 output, per-channel weight scale, per-token activation scale, bias),
// timed with CUDA events as the profiler does (median of --repeat runs, L2 flushed before each), and prints
// one CSV row per (shape, tile, variant). Built with -DBARACUDA_BUILD_TUNING=ON (the `gpu` preset).
// With sm_90a kernels in the build and a compute capability 9.0 GPU, the wgmma kernel's candidates
// (tiles "wgmma_128x<BN>x128_s<stages>", src/ops/int_gemm/wgmma_kernels.cuh, not dispatched by the library)
// are timed and checked the same way, and at decode shapes (M ≤ 16) the decode tile with K cut into 1..12
// parts and into the library's rule (tiles "..._split<S>[_rule]").
#include "ops/int_gemm/kernels.cuh"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "gpu_timing.hpp"

#ifndef BARACUDA_HAVE_SM90A_KERNELS
#define BARACUDA_HAVE_SM90A_KERNELS 0
#endif
#if BARACUDA_HAVE_SM90A_KERNELS
#include "int_gemm_wgmma_tiles.hpp"
#endif

namespace {

namespace ig = baracuda::device_cuda::int_gemm;
using baracuda::detail::ExecContext;
using baracuda::detail::IntGemmTile;

/// The candidates: the sets' tiles and their neighbours (deeper pipelines, wider warp tiles).
constexpr IntGemmTile kCandidates[] = {
    {16, 32, 256, 1, 2, 4},   {16, 64, 256, 1, 2, 4},  {16, 32, 128, 1, 2, 6},  {16, 64, 128, 1, 4, 4},
    {32, 64, 128, 1, 2, 4},   {64, 64, 128, 2, 2, 3},  {64, 64, 64, 2, 2, 4},   {64, 128, 64, 2, 2, 4},
    {128, 128, 64, 2, 4, 3},  {128, 128, 64, 2, 4, 4}, {128, 128, 128, 2, 4, 3}, {128, 256, 64, 2, 4, 3},
    {256, 128, 64, 4, 2, 3},
};

struct Buffers {
  void* a = nullptr;
  void* b = nullptr;
  void* c = nullptr;
  void* y = nullptr;
  void* a_scale = nullptr;
  void* w_scale = nullptr;
  void* bias = nullptr;
  void* flush = nullptr;
  size_t flush_bytes = 0;
};

void upload_random(void** dst, size_t bytes, unsigned seed, int mode) {
  std::vector<unsigned char> h(bytes);
  unsigned s = seed * 2654435761u + 7;
  for (size_t i = 0; i < bytes; ++i) {
    s = s * 1664525u + 1013904223u;
    h[i] = static_cast<unsigned char>(s >> 24);
  }
  if (mode == 1) {  // f32 scales in [0.0005, 0.004]
    for (size_t i = 0; i + 4 <= bytes; i += 4) {
      s = s * 1664525u + 1013904223u;
      const float v = 0.0005f + 0.0035f * static_cast<float>(s >> 8) / 16777216.0f;
      std::memcpy(&h[i], &v, 4);
    }
  } else if (mode == 2) {  // bf16 bias in [-2, 2]
    for (size_t i = 0; i + 2 <= bytes; i += 2) {
      s = s * 1664525u + 1013904223u;
      const float v = -2.0f + 4.0f * static_cast<float>(s >> 8) / 16777216.0f;
      unsigned u;
      std::memcpy(&u, &v, 4);
      const unsigned short hb = static_cast<unsigned short>(u >> 16);
      std::memcpy(&h[i], &hb, 2);
    }
  }
  TUNING_CHECK(cudaMalloc(dst, bytes));
  TUNING_CHECK(cudaMemcpy(*dst, h.data(), bytes, cudaMemcpyHostToDevice));
}

template <IntGemmTile kT>
void run_tile(const ExecContext& ctx, const Buffers& buf, const ig::GemmParams& gemm, const ig::GemmParams& linear,
              const std::vector<int32_t>& want, int repeat) {
  const double flops = 2.0 * gemm.m * gemm.n * static_cast<double>(gemm.k);
  char tile[64];
  std::snprintf(tile, sizeof tile, "%dx%dx%d_w%dx%d_s%d", kT.bm, kT.bn, kT.bk, kT.warps_m, kT.warps_n, kT.stages);
  // IntGemm, checked against the library's launch.
  TUNING_CHECK(cudaMemset(buf.c, 0x5a, static_cast<size_t>(gemm.m) * gemm.n * 4));
  if (!ig::launch_tile<int8_t, int8_t, int32_t, false, kT>(ctx, gemm, "tiles")) {
    std::printf("%d,%d,%d,%s,int_gemm,launch failed\n", gemm.m, gemm.n, gemm.k, tile);
    return;
  }
  TUNING_CHECK(cudaDeviceSynchronize());
  std::vector<int32_t> got(want.size());
  TUNING_CHECK(cudaMemcpy(got.data(), buf.c, got.size() * 4, cudaMemcpyDeviceToHost));
  const bool same = got == want;
  const auto time = [&](auto&& launch) { return tuning::median_us(buf.flush, buf.flush_bytes, launch, repeat); };
  const double us = time([&] { (void)ig::launch_tile<int8_t, int8_t, int32_t, false, kT>(ctx, gemm, "tiles"); });
  const double us_lin =
      time([&] { (void)ig::launch_tile<int8_t, int8_t, __nv_bfloat16, false, kT>(ctx, linear, "tiles"); });
  TUNING_CHECK(cudaGetLastError());
  std::printf("%d,%d,%d,%s,int_gemm,%.2f,%.1f,%s\n", gemm.m, gemm.n, gemm.k, tile, us, flops / us * 1e-6,
              same ? "exact" : "MISMATCH");
  std::printf("%d,%d,%d,%s,linear_bf16,%.2f,%.1f,-\n", gemm.m, gemm.n, gemm.k, tile, us_lin, flops / us_lin * 1e-6);
  std::fflush(stdout);
}

#if BARACUDA_HAVE_SM90A_KERNELS
void run_wgmma(int cand, const ExecContext& ctx, const Buffers& buf, const ig::GemmParams& gemm,
               const ig::GemmParams& linear, const std::vector<int32_t>& want, int repeat) {
  const auto& t = baracuda::detail::kIntGemmWgmmaCandidates[cand];
  const double flops = 2.0 * gemm.m * gemm.n * static_cast<double>(gemm.k);
  char tile[64];
  std::snprintf(tile, sizeof tile, "wgmma_%dx%dx%d_s%d%s", t.bm, t.bn, t.bk, t.stages, t.tma ? "_tma" : "");
  TUNING_CHECK(cudaMemset(buf.c, 0x5a, static_cast<size_t>(gemm.m) * gemm.n * 4));
  if (const baracuda::Status s = int_gemm_tiles::launch_wgmma(cand, false, ctx, gemm); !s) {
    std::printf("%d,%d,%d,%s,int_gemm,launch failed: %s\n", gemm.m, gemm.n, gemm.k, tile, s.error().to_string().c_str());
    return;
  }
  TUNING_CHECK(cudaDeviceSynchronize());
  std::vector<int32_t> got(want.size());
  TUNING_CHECK(cudaMemcpy(got.data(), buf.c, got.size() * 4, cudaMemcpyDeviceToHost));
  const bool same = got == want;
  const auto time = [&](auto&& launch) { return tuning::median_us(buf.flush, buf.flush_bytes, launch, repeat); };
  const double us = time([&] { (void)int_gemm_tiles::launch_wgmma(cand, false, ctx, gemm); });
  const double us_lin = time([&] { (void)int_gemm_tiles::launch_wgmma(cand, true, ctx, linear); });
  TUNING_CHECK(cudaGetLastError());
  std::printf("%d,%d,%d,%s,int_gemm,%.2f,%.1f,%s\n", gemm.m, gemm.n, gemm.k, tile, us, flops / us * 1e-6,
              same ? "exact" : "MISMATCH");
  std::printf("%d,%d,%d,%s,linear_bf16,%.2f,%.1f,-\n", gemm.m, gemm.n, gemm.k, tile, us_lin, flops / us_lin * 1e-6);
  std::fflush(stdout);
}
#endif

/// The decode tile with K cut into `splits` parts (launch_split: the parts' raw sums, then the reduction),
/// for splits in 1..12 and the library's rule (tuning.hpp's int_gemm_splits; tile name suffix "_rule"),
/// checked bit for bit like the tiles (integer sums: any split gives the same result).
void run_decode_splits(const ExecContext& ctx, const Buffers& buf, ig::GemmParams gemm, ig::GemmParams linear,
                       const std::vector<int32_t>& want, int repeat) {
  constexpr IntGemmTile kT = baracuda::detail::kIntGemmTilesSm90.decode;
  const int rule = baracuda::detail::int_gemm_splits(baracuda::detail::kIntGemmTilesSm90, gemm.m, gemm.n, gemm.k);
  const double flops = 2.0 * gemm.m * gemm.n * static_cast<double>(gemm.k);
  void* ws = nullptr;
  TUNING_CHECK(cudaMalloc(&ws, static_cast<size_t>(12) * gemm.m * gemm.n * 4));
  gemm.partial = linear.partial = static_cast<int32_t*>(ws);
  const auto time = [&](auto&& launch) { return tuning::median_us(buf.flush, buf.flush_bytes, launch, repeat); };
  for (int splits : {1, 2, 3, 4, 6, 8, 12, rule}) {
    char tile[80];
    std::snprintf(tile, sizeof tile, "%dx%dx%d_w%dx%d_s%d_split%d%s", kT.bm, kT.bn, kT.bk, kT.warps_m, kT.warps_n,
                  kT.stages, splits, splits == rule ? "_rule" : "");
    TUNING_CHECK(cudaMemset(buf.c, 0x5a, static_cast<size_t>(gemm.m) * gemm.n * 4));
    if (!ig::launch_split<int8_t, int8_t, int32_t, false, kT>(ctx, gemm, splits, "tiles")) {
      std::printf("%d,%d,%d,%s,int_gemm,launch failed\n", gemm.m, gemm.n, gemm.k, tile);
      continue;
    }
    TUNING_CHECK(cudaDeviceSynchronize());
    std::vector<int32_t> got(want.size());
    TUNING_CHECK(cudaMemcpy(got.data(), buf.c, got.size() * 4, cudaMemcpyDeviceToHost));
    const double us = time([&] { (void)ig::launch_split<int8_t, int8_t, int32_t, false, kT>(ctx, gemm, splits, "tiles"); });
    const double us_lin =
        time([&] { (void)ig::launch_split<int8_t, int8_t, __nv_bfloat16, false, kT>(ctx, linear, splits, "tiles"); });
    TUNING_CHECK(cudaGetLastError());
    std::printf("%d,%d,%d,%s,int_gemm,%.2f,%.1f,%s\n", gemm.m, gemm.n, gemm.k, tile, us, flops / us * 1e-6,
                got == want ? "exact" : "MISMATCH");
    std::printf("%d,%d,%d,%s,linear_bf16,%.2f,%.1f,-\n", gemm.m, gemm.n, gemm.k, tile, us_lin, flops / us_lin * 1e-6);
    std::fflush(stdout);
  }
  TUNING_CHECK(cudaFree(ws));
}

template <size_t... I>
void run_all(const ExecContext& ctx, const Buffers& buf, const ig::GemmParams& g, const ig::GemmParams& l,
             const std::vector<int32_t>& want, int repeat, std::index_sequence<I...>) {
  (run_tile<kCandidates[I]>(ctx, buf, g, l, want, repeat), ...);
}

}  // namespace

int main(int argc, char** argv) {
  const int repeat = argc > 1 ? std::atoi(argv[1]) : 10;
  const tuning::GpuDevice gpu = tuning::gpu_device();
  const cudaDeviceProp& prop = gpu.prop;
  const int l2 = gpu.l2_bytes;
  const ExecContext& ctx = gpu.ctx;
  std::printf("# %s, sm_%d, %d SMs; median of %d runs, L2 flushed\n", prop.name, ctx.sm, prop.multiProcessorCount,
              repeat);
  std::printf("m,n,k,tile,variant,us,tops,check\n");
  const int ms[] = {1, 16, 64, 128, 512, 2048, 8192};
  const int nk[][2] = {{4096, 4096}, {11008, 4096}, {4096, 11008}};
  for (const auto& [n, k] : nk)
    for (int m : ms) {
      Buffers buf;
      buf.flush_bytes = 2 * static_cast<size_t>(l2);
      TUNING_CHECK(cudaMalloc(&buf.flush, buf.flush_bytes));
      upload_random(&buf.a, static_cast<size_t>(m) * k, 1 + m, 0);
      upload_random(&buf.b, static_cast<size_t>(n) * k, 2 + n, 0);
      upload_random(&buf.a_scale, static_cast<size_t>(m) * 4, 3, 1);
      upload_random(&buf.w_scale, static_cast<size_t>(n) * 4, 4, 1);
      upload_random(&buf.bias, static_cast<size_t>(n) * 2, 5, 2);
      TUNING_CHECK(cudaMalloc(&buf.c, static_cast<size_t>(m) * n * 4));
      TUNING_CHECK(cudaMalloc(&buf.y, static_cast<size_t>(m) * n * 2));
      ig::GemmParams g;
      g.a = static_cast<const unsigned char*>(buf.a), g.b = static_cast<const unsigned char*>(buf.b);
      g.lda = k, g.ldb = k, g.m = m, g.n = n, g.k = k, g.c = buf.c, g.ldc = n;
      ig::GemmParams l = g;
      l.c = buf.y;
      l.a_scale = static_cast<const float*>(buf.a_scale), l.a_scale_stride = 1;
      l.w_scale = static_cast<const float*>(buf.w_scale), l.w_scale_stride = 1;
      l.bias = buf.bias, l.bias_stride = 1;
      // The reference: the library's own launch with its tile set.
      TUNING_CHECK(cudaMemset(buf.c, 0, static_cast<size_t>(m) * n * 4));
      if (!ig::launch<int8_t, int8_t, int32_t, false>(ctx, g, 1, "reference")) return 1;
      TUNING_CHECK(cudaDeviceSynchronize());
      std::vector<int32_t> want(static_cast<size_t>(m) * n);
      TUNING_CHECK(cudaMemcpy(want.data(), buf.c, want.size() * 4, cudaMemcpyDeviceToHost));
      run_all(ctx, buf, g, l, want, repeat, std::make_index_sequence<std::size(kCandidates)>{});
      if (m <= baracuda::detail::kIntGemmTilesSm90.decode_max_m) run_decode_splits(ctx, buf, g, l, want, repeat);
#if BARACUDA_HAVE_SM90A_KERNELS
      if (ctx.sm == 90)
        for (int c = 0; c < int_gemm_tiles::wgmma_candidates(); ++c) run_wgmma(c, ctx, buf, g, l, want, repeat);
#endif
      for (void* p : {buf.a, buf.b, buf.c, buf.y, buf.a_scale, buf.w_scale, buf.bias, buf.flush}) TUNING_CHECK(cudaFree(p));
    }
  return 0;
}
