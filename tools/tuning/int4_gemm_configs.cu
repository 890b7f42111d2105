// int4_gemm_configs: times the candidate block shapes of the W4A16 GEMM (src/ops/int4_gemm/tuning.hpp's
// kInt4GemmCandidates, kernels.cuh) on the GPU of this machine, to choose tuning.hpp's default from
// measurements. For N×K ∈ {4096×4096, 11008×4096, 8192×8192}, M ∈ {1, 4, 16, 32, 64, 128}, f16, group 128,
// symmetric weights, it runs each candidate with K cut into the parts the split rule gives for its block
// shape (tables.hpp's int4_gemm_splits with its block_cols and slice_rows; `rule` = 1) and into 1, 2, 4, 8
// and 16 parts (at most one per K slice), timed with CUDA events as the profiler does (3 warm-up runs, then
// the median of --repeat runs, default 20, the L2 flushed before each outside the timed region; the time
// includes the split-K reduction kernel), and prints one CSV row per (shape, candidate, parts):
//   config,m,n,k,splits,rule,us,weight_GBps,check
// weight_GBps is the weight's bytes (K·N/2 of int4 and the G·N f16 scales) per second: the traffic that
// bounds the decode shapes.
//
// The operands are exact: integer activations in [−2, 2], power-of-two scales (2⁻⁴..2⁻⁷) and any 4-bit
// weight make every product and every partial sum exact in f32 (|sums| ≤ 2¹³ in steps of 2⁻⁷), so every
// shape and every split must give the default shape's output bit for bit (`check` = exact, else the number
// of differing elements). The default's first row at M = 1 is checked against the host reference too.
// Built with -DBARACUDA_BUILD_TUNING=ON (the `gpu` preset); run by tools/gpu/device_suite.sh's `int4cfg` step.
#include "ops/int4_gemm/kernels.cuh"
#include "gpu_timing.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <utility>
#include <vector>

namespace {

namespace i4 = baracuda::device_cuda::int4_gemm;
using baracuda::detail::ExecContext;
using baracuda::detail::Int4GemmConfig;
using baracuda::detail::Int4GemmLaunch;
using baracuda::detail::kInt4GemmCandidates;
using baracuda::detail::kInt4GemmDefault;

constexpr int kGroup = 128;
constexpr int kMaxSplits = 32;  // the partial sums' workspace; the rule stays below (K / 256 at most)

struct Lcg {
  unsigned s;
  unsigned next() { return s = s * 1664525u + 1013904223u; }
};

template <class V>
void* upload(const std::vector<V>& h) {
  void* d = nullptr;
  TUNING_CHECK(cudaMalloc(&d, h.size() * sizeof(V)));
  TUNING_CHECK(cudaMemcpy(d, h.data(), h.size() * sizeof(V), cudaMemcpyHostToDevice));
  return d;
}

std::vector<__half> download(const void* d, size_t n) {
  std::vector<__half> h(n);
  TUNING_CHECK(cudaMemcpy(h.data(), d, n * sizeof(__half), cudaMemcpyDeviceToHost));
  return h;
}

size_t differing(const std::vector<__half>& a, const std::vector<__half>& b) {
  size_t n = 0;
  for (size_t i = 0; i < a.size(); ++i) n += std::memcmp(&a[i], &b[i], sizeof(__half)) != 0;
  return n;
}

baracuda::DynTensor mat(void* p, baracuda::ElementKind k, int64_t rows, int64_t cols) {
  return baracuda::DynTensor::dense(p, k, baracuda::Shape{rows, cols});
}

struct Problem {
  int m = 0, n = 0, k = 0;
  void* a = nullptr;        // [M, K] f16
  void* b = nullptr;        // [K/16, 2N] Marlin words
  void* scales = nullptr;   // [K/128, N] f16
  void* c = nullptr;        // [M, N] f16
  void* partial = nullptr;  // [kMaxSplits, M, N] f32
  void* flush = nullptr;
  size_t flush_bytes = 0;

  Int4GemmLaunch launch(int splits) const {
    using baracuda::ElementKind;
    Int4GemmLaunch l;
    l.m = m, l.n = n, l.k = k;
    l.group_rows = kGroup;
    l.grouped = k / kGroup > 1;
    l.splits = splits;
    l.a = mat(a, ElementKind::F16, m, k);
    l.b = mat(b, ElementKind::S32, k / 16, 2 * static_cast<int64_t>(n));
    l.scales = mat(scales, ElementKind::F16, k / kGroup, n);
    l.c = mat(c, ElementKind::F16, m, n);
    l.partial = baracuda::DynTensor::dense(partial, ElementKind::F32, baracuda::Shape{kMaxSplits, m, n});
    return l;
  }
  double weight_bytes() const { return static_cast<double>(k) * n / 2 + static_cast<double>(k / kGroup) * n * 2; }
};

template <Int4GemmConfig kC>
void run_config(const ExecContext& ctx, const Problem& p, const std::vector<__half>& want, int repeat) {
  char name[64];
  std::snprintf(name, sizeof name, "%dx%d_s%d_w%dx%d", kC.block_cols, kC.slice_rows, kC.stages, kC.warps_n,
                kC.warps_k);
  const int slices = p.k / kC.slice_rows;
  const int rule = baracuda::detail::int4_gemm_splits(p.m, p.n, p.k, kC.block_cols, kC.slice_rows);
  std::vector<int> counts = {rule};
  for (int s : {1, 2, 4, 8, 16})
    if (s <= slices && s != rule) counts.push_back(s);
  for (int splits : counts) {
    if (splits > kMaxSplits) continue;
    const Int4GemmLaunch l = p.launch(splits);
    TUNING_CHECK(cudaMemset(p.c, 0x5a, static_cast<size_t>(p.m) * p.n * 2));
    const baracuda::Status st = i4::gemm_with_config<__half, kC>(ctx, l);
    if (!st) {
      std::printf("%s,%d,%d,%d,%d,%d,,,%s\n", name, p.m, p.n, p.k, splits, splits == rule,
                  st.error().to_string().c_str());
      continue;
    }
    TUNING_CHECK(cudaDeviceSynchronize());
    const size_t diff = differing(download(p.c, want.size()), want);
    const auto launch = [&] { (void)i4::gemm_with_config<__half, kC>(ctx, l); };
    const double us = tuning::median_us(p.flush, p.flush_bytes, launch, repeat);
    TUNING_CHECK(cudaGetLastError());
    char check[32];
    if (diff == 0)
      std::snprintf(check, sizeof check, "exact");
    else
      std::snprintf(check, sizeof check, "MISMATCH %zu", diff);
    std::printf("%s,%d,%d,%d,%d,%d,%.2f,%.1f,%s\n", name, p.m, p.n, p.k, splits, splits == rule, us,
                p.weight_bytes() / us * 1e-3, check);
    std::fflush(stdout);
  }
}

template <size_t... I>
void run_all(const ExecContext& ctx, const Problem& p, const std::vector<__half>& want, int repeat,
             std::index_sequence<I...>) {
  (run_config<kInt4GemmCandidates[I]>(ctx, p, want, repeat), ...);
}

}  // namespace

int main(int argc, char** argv) {
  const int repeat = std::max(argc > 1 ? std::atoi(argv[1]) : 20, 1);
  const tuning::GpuDevice gpu = tuning::gpu_device();
  const cudaDeviceProp& prop = gpu.prop;
  const int l2 = gpu.l2_bytes;
  const ExecContext& ctx = gpu.ctx;
  const ExecContext host;  // the host reference's context
  std::printf("# %s, sm_%d, %d SMs; f16, group %d, symmetric; median of %d runs, L2 flushed\n", prop.name, ctx.sm,
              prop.multiProcessorCount, kGroup, repeat);
  std::printf("config,m,n,k,splits,rule,us,weight_GBps,check\n");
  const int ms[] = {1, 4, 16, 32, 64, 128};
  const int nk[][2] = {{4096, 4096}, {11008, 4096}, {8192, 8192}};
  int failures = 0;
  for (const auto& [n, k] : nk) {
    Problem p;
    p.n = n, p.k = k;
    p.flush_bytes = 2 * static_cast<size_t>(l2);
    TUNING_CHECK(cudaMalloc(&p.flush, p.flush_bytes));
    Lcg g{static_cast<unsigned>(n * 31 + k)};
    std::vector<uint32_t> b(static_cast<size_t>(k / 16) * 2 * n);
    for (auto& w : b) w = g.next();  // any word is 8 valid nibbles
    std::vector<__half> scales(static_cast<size_t>(k / kGroup) * n);
    for (auto& s : scales) s = __float2half(1.0f / static_cast<float>(16 << (g.next() >> 30)));
    p.b = upload(b), p.scales = upload(scales);
    for (int m : ms) {
      p.m = m;
      std::vector<__half> a(static_cast<size_t>(m) * k);
      for (auto& v : a) v = __float2half(static_cast<float>(static_cast<int>((g.next() >> 16) % 5) - 2));
      p.a = upload(a);
      TUNING_CHECK(cudaMalloc(&p.c, static_cast<size_t>(m) * n * 2));
      TUNING_CHECK(cudaMalloc(&p.partial, static_cast<size_t>(kMaxSplits) * m * n * 4));
      // The reference: the library's shape and split rule.
      const int splits = baracuda::detail::int4_gemm_splits(m, n, k);
      if (!i4::gemm_with_config<__half, kInt4GemmDefault>(ctx, p.launch(splits))) return 1;
      TUNING_CHECK(cudaDeviceSynchronize());
      const std::vector<__half> want = download(p.c, static_cast<size_t>(m) * n);
      if (m == 1) {  // its first row against the host reference (exact operands: bit for bit)
        std::vector<__half> c0(static_cast<size_t>(n));
        Problem h = p;
        h.a = a.data(), h.b = b.data(), h.scales = scales.data(), h.c = c0.data(), h.partial = nullptr;
        Int4GemmLaunch l = h.launch(1);
        const auto fn = baracuda::reference::int4_gemm_tables().gemm[baracuda::detail::kind_index(baracuda::ElementKind::F16)];
        if (!fn(host, l)) return 1;
        const std::vector<__half> row0(want.begin(), want.begin() + n);
        const size_t diff = differing(row0, c0);
        std::printf("# %dx%d: the default shape %s the host reference at M = 1\n", n, k,
                    diff == 0 ? "matches" : "DIFFERS FROM");
        failures += diff != 0;
      }
      run_all(ctx, p, want, repeat, std::make_index_sequence<std::size(kInt4GemmCandidates)>{});
      for (void* q : {p.a, p.c, p.partial}) TUNING_CHECK(cudaFree(q));
    }
    for (void* q : {p.b, p.scales, p.flush}) TUNING_CHECK(cudaFree(q));
  }
  return failures != 0;
}
