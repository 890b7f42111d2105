// The W4A16 GEMM's candidate block shapes (src/ops/int4_gemm/tuning.hpp): every candidate run directly on
// the sim device (int4_gemm_configs_kernels.cu) against the host reference Int4MarlinGemmPlan computes, on
// small shapes chosen so that each shape meets M not a multiple of 16 in each row-block size (16, 32, 64
// rows), N not a multiple of its block width (a block partly outside N), K long enough for its pipeline to
// wrap around its stages, K cut into parts (by the split rule scaled to the shape, and forced), groups of 32
// (two or four per 64- or 128-row slice), 64, 128 and one group, symmetric and zero-point weights, f16 and
// bf16, bias and padded row strides. The plan's own tests (int4_gemm_test) run the default shape through
// the plan; the split rule's default is checked there too.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <string>
#include <type_traits>
#include <vector>

#include "baracuda/baracuda.hpp"
#include "int4_gemm_configs_kernels.hpp"
#include "support/random.hpp"
#include "support/w4a16_inputs.hpp"

namespace baracuda::test {
namespace {

using detail::Int4GemmConfig;
using detail::kInt4GemmCandidates;

std::string name(const Int4GemmConfig& c) {
  return std::to_string(c.block_cols) + "x" + std::to_string(c.slice_rows) + "_s" + std::to_string(c.stages) + "_w" +
         std::to_string(c.warps_n) + "x" + std::to_string(c.warps_k);
}

TEST(Int4GemmConfigs, TheDefaultIsTheFirstCandidateAndTheSplitRuleScales) {
  EXPECT_EQ(kInt4GemmCandidates[0], detail::kInt4GemmDefault);
  EXPECT_EQ(detail::kInt4GemmDefault, (Int4GemmConfig{128, 128, 3, 4, 1}));
  // The default arguments are the default shape's: the library's rule.
  EXPECT_EQ(detail::int4_gemm_splits(1, 4096, 4096), detail::int4_gemm_splits(1, 4096, 4096, 128, 128));
  EXPECT_EQ(detail::int4_gemm_splits(1, 4096, 4096), 8);
  // Wider blocks: fewer blocks, more parts; deeper slices: at least 4 of them per part.
  EXPECT_EQ(detail::int4_gemm_splits(1, 4096, 4096, 128, 64), 9);   // 32 blocks → 9 parts
  EXPECT_EQ(detail::int4_gemm_splits(1, 4096, 4096, 256, 128), 8);  // 16 blocks → 17, at most K / 512
  EXPECT_EQ(detail::int4_gemm_splits(16, 8192, 8192, 256, 128), 9);  // 32 blocks
  EXPECT_EQ(detail::int4_gemm_splits(1, 11008, 4096, 256, 64), 7);  // 43 blocks
  EXPECT_EQ(detail::int4_gemm_splits(1, 192, 512, 256, 128), 1);    // fewer than 4 slices per part
  for (const Int4GemmConfig& c : kInt4GemmCandidates) {
    SCOPED_TRACE(name(c));
    EXPECT_TRUE(c.valid());
    EXPECT_EQ(c.threads(), 32 * c.warps_n * c.warps_k);
    EXPECT_LE(c.smem_bytes(64, true), 227 * 1024);
  }
}

// ------------------------------------------------------------------------------- every shape on sim

struct Case {
  int64_t m, n, k, group;
  Int4Scheme scheme;
  bool bias;
  int64_t pad;  ///< extra elements per row of a and c (their padding must stay untouched)
  int splits;   ///< 0: the split rule scaled to the shape (int4_gemm_splits with its block_cols, slice_rows)
};

// At most 33 rows and 1024 of K: the sim runs every thread as a fiber (the whole test takes seconds at -O2).
const Case kCases[] = {
    {1, 256, 512, 32, Int4Scheme::Symmetric, true, 0, 0},
    {17, 256, 256, -1, Int4Scheme::Asymmetric, false, 8, 1},
    {33, 256, 768, 32, Int4Scheme::Asymmetric, true, 0, 1},   // 6 or 12 slices: the pipeline wraps around
    {33, 192, 512, 128, Int4Scheme::Symmetric, false, 8, 2},  // N % 128 ≠ 0, N < 256; two parts
    {5, 256, 1024, 64, Int4Scheme::Asymmetric, true, 0, 0},   // the rule: 4 (64-row slices) or 2 parts
    {1, 128, 768, 32, Int4Scheme::Symmetric, false, 0, 3},    // parts of 2 slices (fewer than the stages) or 4
};

template <class T>
void check_config(size_t index, const Case& cs, uint64_t seed) {
  const Int4GemmConfig cfg = kInt4GemmCandidates[index];
  const ElementKind kind = kind_of<T>;
  const int64_t M = cs.m, N = cs.n, K = cs.k;
  const Int4Shape shape{K, N, cs.group};
  const int64_t G = shape.num_groups(), lda = K + cs.pad, ldc = N + cs.pad;
  const int splits =
      cs.splits > 0 ? cs.splits : detail::int4_gemm_splits(M, N, K, cfg.block_cols, cfg.slice_rows);
  SCOPED_TRACE(name(cfg) + (std::is_same_v<T, __half> ? " f16" : " bf16") + " M=" + std::to_string(M) +
               " N=" + std::to_string(N) + " K=" + std::to_string(K) + " group=" + std::to_string(cs.group) +
               (cs.scheme == Int4Scheme::Symmetric ? " sym" : " asym") + (cs.bias ? " bias" : "") +
               (cs.pad ? " padded" : "") + " splits=" + std::to_string(splits));

  auto q = quantize_int4(random_int4_source_weight(K, N, seed), shape, cs.scheme, {});
  ASSERT_TRUE(q.is_ok()) << q.error().to_string();
  auto mw = marlin_from_int4(*q, false);
  ASSERT_TRUE(mw.is_ok()) << mw.error().to_string();

  std::vector<double> a_val, bias_val;
  std::vector<uint8_t> a = random_floats(kind, M * lda, -1.0, 1.0, seed + 1, &a_val);
  std::vector<uint8_t> bias = random_floats(kind, N, -0.5, 0.5, seed + 2, &bias_val);
  std::vector<T> scales(mw->scales.size());
  for (size_t i = 0; i < scales.size(); ++i) scales[i] = to_t<T>(__half2float(mw->scales[i]));
  std::vector<int32_t> b_q = mw->qweight, zeros = mw->zeros;
  const T marker = to_t<T>(-768.0f);
  std::vector<T> want(static_cast<size_t>(M * ldc), marker), got(static_cast<size_t>(M * ldc), marker);
  std::vector<float> partial(static_cast<size_t>(splits * M * N), 0.0f);

  auto view = [](void* p, ElementKind k, int64_t rows, int64_t cols, int64_t ld) {
    DynTensor t = DynTensor::dense(p, k, Shape{rows, cols});
    t.stride[0] = ld;
    return t;
  };
  detail::Int4GemmLaunch l;
  l.m = M, l.n = N, l.k = K;
  l.group_rows = shape.group_rows();
  l.grouped = G > 1;
  l.splits = splits;
  l.a = view(a.data(), kind, M, K, lda);
  l.b = ConstDynTensor::dense(b_q.data(), ElementKind::S32, Shape{K / 16, 2 * N});
  l.scales = ConstDynTensor::dense(scales.data(), kind, Shape{G, N});
  if (cs.scheme == Int4Scheme::Asymmetric)
    l.zeros = ConstDynTensor::dense(zeros.data(), ElementKind::S32, Shape{G, N / 8});
  if (cs.bias) l.bias = ConstDynTensor::dense(bias.data(), kind, Shape{N});
  l.partial = DynTensor::dense(partial.data(), ElementKind::F32, Shape{splits, M, N});

  const detail::ExecContext host = *detail::make_exec_context(Stream::host());
  auto sim = detail::make_exec_context(Stream::sim());
  ASSERT_TRUE(sim.is_ok());
  const detail::Int4GemmFn reference = reference::int4_gemm_tables().gemm[detail::kind_index(kind)];
  ASSERT_NE(reference, nullptr);
  l.c = view(want.data(), kind, M, N, ldc);
  ASSERT_TRUE(reference(host, l).is_ok());
  l.c = view(got.data(), kind, M, N, ldc);
  const Status st = int4_gemm_with_config(index, *sim, l);
  ASSERT_TRUE(st.is_ok()) << st.error().to_string();

  // Σ_k |a·w_T| + |bias| from the logical weights (w_T = round_T((q − z)·s_T), independent of the layout).
  std::vector<double> abs_sum(static_cast<size_t>(M * N), 0.0);
  for (int64_t k = 0; k < K; ++k) {
    const int64_t g = k / shape.group_rows();
    for (int64_t n = 0; n < N; ++n) {
      const int z = cs.scheme == Int4Scheme::Asymmetric ? q->zeros[g * N + n] : 8;
      const double s = from_t<T>(to_t<T>(__half2float(q->scales[g * N + n])));
      const double w = std::fabs(from_t<T>(to_t<T>(static_cast<float>((q->q[k * N + n] - z) * s))));
      for (int64_t m = 0; m < M; ++m) abs_sum[m * N + n] += std::fabs(a_val[m * lda + k]) * w;
    }
  }
  // Tolerance: the device sums the exact f32 products in f32 (error ≤ (K + 1)·2⁻²⁴·Σ|a·w| with the bias
  // addition; the split parts and the K warps' sums are added in f32 too, within the same bound), the host
  // in double (error negligible); both round once to T. So |dev − host| ≤ E + u_T·(|host| + |dev|) with
  // E = (K + 2)·2⁻²⁴·(Σ|a·w| + |bias|).
  const double u = unit_roundoff_t<T>();
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < ldc; ++n) {
      const double g = from_t<T>(got[m * ldc + n]), h = from_t<T>(want[m * ldc + n]);
      if (n >= N) {
        ASSERT_EQ(g, -768.0) << "the padding of c was written at m=" << m << " n=" << n;
        continue;
      }
      const double E = (K + 2) * 0x1p-24 * (abs_sum[m * N + n] + (cs.bias ? std::fabs(bias_val[n]) : 0.0));
      ASSERT_LE(std::fabs(g - h), E + u * (std::fabs(h) + std::fabs(g)) + abs_floor_t<T>())
          << "m=" << m << " n=" << n << " sim " << g << " host " << h;
    }
}

TEST(Int4GemmConfigs, EveryCandidateMatchesTheHostOnSim) {
  for (size_t i = 0; i < std::size(kInt4GemmCandidates); ++i) {
    uint64_t seed = 7000;
    for (const Case& cs : kCases)
      if (!check_f16_and_bf16(seed, [&]<class T>(uint64_t s) { check_config<T>(i, cs, s); })) return;
  }
}

}  // namespace
}  // namespace baracuda::test
