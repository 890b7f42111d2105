// The fp8_gemm family's cuBLASLt backend (src/ops/fp8_gemm/cublaslt_fp8.hpp) without a GPU: its row-major →
// column-major mapping, checked two ways: the expected cuBLASLt arguments (the swap of operands, leading dimensions and
// scales), and what cublasLtMatmul computes by its documented FP8 semantics (column-major storage, TN, the scale
// pointers and their 128-element and 128x128 layouts, the bias along D's rows, amax before the D scale) on host arrays
// against the launch computed directly from the header's formula; every rule of the mapping and each rejection; create
// without a GPU. The backend on a GPU: fp8_gemm_cublaslt_mapping_gpu_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "baracuda/core/stream.hpp"
#include "fp8_gemm_cublaslt_test_support.hpp"
#include "ops/fp8_gemm/cublaslt_fp8.hpp"

namespace baracuda::detail::cublaslt_fp8_test {
namespace {

using E = ElementKind;

/// What cublasLtMatmul computes for `m` with the pointers run passes (cublaslt_fp8_pointers), by its documented FP8
/// semantics, over host doubles: D'(i, j) = scale_D·act(α·Σ_k sA·sB·op(A')(i, k)·op(B')(k, j) + bias[i]), op(A') = A'ᵀ
/// (transa = T, A' stored k×m), B' stored k×n, D' stored m×n at i + j·ldd; the scales one scalar each, or BLK128x128
/// for A' (scale (i/128, kb) at (i/128)·round_up(⌈k/128⌉, 4) + kb) and VEC128 for B' (scale (kb, j) at j + kb·n).
/// Returns max |act(..)| (AMAX_D).
double lt_model(const CublasLtFp8Mapping& m, const Fp8GemmLaunch& l) {
  const CublasLtFp8Pointers p = cublaslt_fp8_pointers(l, m);
  auto in = [](const void* ptr) { return static_cast<const double*>(ptr); };
  const double *a = in(p.a), *b = in(p.b), *sa = in(p.a_scale), *sb = in(p.b_scale);
  double* d = static_cast<double*>(p.d);
  const int64_t kbs = (m.k + 127) / 128, kb4 = (kbs + 3) / 4 * 4;
  double amax = 0;
  for (int64_t i = 0; i < m.m; ++i)
    for (int64_t j = 0; j < m.n; ++j) {
      double acc = 0;
      for (int64_t kb = 0; kb < kbs; ++kb) {
        double part = 0;
        for (int64_t k = kb * 128; k < std::min(m.k, kb * 128 + 128); ++k) part += a[k + i * m.lda] * b[k + j * m.ldb];
        const double s1 = m.a_scale_mode == CublasLtScaleMode::Blk128x128_32F ? sa[(i / 128) * kb4 + kb] : sa[0];
        const double s2 = m.b_scale_mode == CublasLtScaleMode::Vec128_32F ? sb[j + kb * m.n] : sb[0];
        acc += s1 * s2 * part;
      }
      double v = l.alpha * acc + (m.has_bias ? in(p.bias)[i] : 0.0);
      const bool relu = m.epilogue == CublasLtEpilogue::Relu || m.epilogue == CublasLtEpilogue::ReluBias;
      const bool gelu = m.epilogue == CublasLtEpilogue::Gelu || m.epilogue == CublasLtEpilogue::GeluBias;
      const LinearActivation a = relu ? LinearActivation::Relu : gelu ? LinearActivation::GeluTanh : LinearActivation::None;
      v = ::baracuda::test::reference_activation(a, v);
      amax = std::max(amax, std::abs(v));
      d[i + j * m.ldd] = m.d_scale ? v * in(p.d_scale)[0] : v;
    }
  return amax;
}

/// Maps `g` on sm 9.0, runs the model and compares D and amax with the direct computation, exactly.
void expect_model_matches(HostFp8Gemm g, int sm = 90) {
  auto map = cublaslt_fp8_mapping(g.l, sm);
  ASSERT_TRUE(map) << map.error().to_string();
  std::vector<double> want;
  double want_amax = 0;
  direct(g, want, want_amax);
  const double amax = lt_model(*map, g.l);
  EXPECT_EQ(g.d, want) << to_string(*map);
  if (map->amax) {
    EXPECT_EQ(amax, want_amax) << to_string(*map);
  }
}

Error mapping_error(const Fp8GemmLaunch& l, int sm = 90) {
  auto map = cublaslt_fp8_mapping(l, sm);
  EXPECT_FALSE(map) << "mapped to " << to_string(*map);
  return map ? Error::internal("mapped") : map.error();
}

/// The mapping of `l` is Unsupported (or `code`) and its message names `why`.
void expect_rejected(const Fp8GemmLaunch& l, const std::string& why, ErrorCode code = ErrorCode::Unsupported,
                     int sm = 90) {
  const Error e = mapping_error(l, sm);
  EXPECT_EQ(e.code, code) << e.to_string();
  EXPECT_NE(e.message.find(why), std::string::npos) << "wanted \"" << why << "\" in " << e.to_string();
}

TEST(CublasLtFp8Mapping, TnFormSwapsOperandsAndLeadingDimensions) {
  // x [16, 4096] e4m3 · W [1024, 4096]ᵀ e5m2 → bf16, with distinct paddings: each ld lands on its side.
  HostFp8Gemm g = make_fp8_gemm({16, 1024, 4096, 16, 32, 64}, E::Fp8E4M3, E::Fp8E5M2, E::Bf16);
  auto map = cublaslt_fp8_mapping(g.l, 89);
  ASSERT_TRUE(map) << map.error().to_string();
  EXPECT_EQ(map->a, E::Fp8E5M2);  // cuBLASLt's A is the weight
  EXPECT_EQ(map->b, E::Fp8E4M3);
  EXPECT_EQ(map->c, E::Bf16);
  EXPECT_EQ(map->d, E::Bf16);
  EXPECT_EQ(map->m, 1024);
  EXPECT_EQ(map->n, 16);
  EXPECT_EQ(map->k, 4096);
  EXPECT_EQ(map->lda, 4096 + 32);  // the launch's ldb
  EXPECT_EQ(map->ldb, 4096 + 16);  // the launch's lda
  EXPECT_EQ(map->ldd, 1024 + 64);
  EXPECT_EQ(map->epilogue, CublasLtEpilogue::Default);
  EXPECT_EQ(map->a_scale_mode, CublasLtScaleMode::Scalar32F);
  EXPECT_EQ(map->b_scale_mode, CublasLtScaleMode::Scalar32F);
  EXPECT_FALSE(map->has_bias || map->d_scale || map->amax || map->fast_accum);
  EXPECT_EQ(to_string(*map),
            "fp8e5m2 x fp8e4m3 -> bf16 (C bf16) transa=T transb=N m=1024 n=16 k=4096 lda=4128 ldb=4112 ldd=1088 "
            "epilogue=DEFAULT scales=(SCALAR_32F, SCALAR_32F)");
}

TEST(CublasLtFp8Mapping, PointersSwapWithTheirScales) {
  HostFp8Gemm g = make_fp8_gemm({16, 32, 32}, E::Fp8E4M3, E::Fp8E4M3, E::Fp8E4M3);
  g.bind(true, true);
  auto map = cublaslt_fp8_mapping(g.l, 90);
  ASSERT_TRUE(map) << map.error().to_string();
  const CublasLtFp8Pointers p = cublaslt_fp8_pointers(g.l, *map);
  EXPECT_EQ(p.a, g.l.b);
  EXPECT_EQ(p.b, g.l.a);
  EXPECT_EQ(p.a_scale, g.l.b_scale);
  EXPECT_EQ(p.b_scale, g.l.a_scale);
  EXPECT_EQ(p.d, g.l.d);
  EXPECT_EQ(p.c, g.l.b);  // an FP8 D: C (f16, unread) must not alias D
  EXPECT_EQ(p.d_scale, g.l.d_scale);
  EXPECT_EQ(p.amax, g.l.amax);
  EXPECT_EQ(p.bias, g.l.bias);
  g.bind(false, false);
  g.l.d_kind = E::F16;
  g.l.d_scale = nullptr;
  map = cublaslt_fp8_mapping(g.l, 90);
  ASSERT_TRUE(map) << map.error().to_string();
  const CublasLtFp8Pointers q = cublaslt_fp8_pointers(g.l, *map);
  EXPECT_EQ(q.c, g.l.d);  // C's kind is D's: C = D
  EXPECT_EQ(q.d_scale, nullptr);
  EXPECT_EQ(q.amax, nullptr);
  EXPECT_EQ(q.bias, nullptr);
}

TEST(CublasLtFp8Mapping, ModelMatchesTheHeadersFormula) {
  const Fp8Case shapes[] = {{5, 48, 64}, {16, 32, 272, 16, 0, 16}, {1, 16, 32}, {3, 144, 160, 0, 16, 16}};
  for (const Fp8Case& cs : shapes)
    for (E d : {E::F32, E::Bf16, E::Fp8E4M3})
      for (LinearActivation act : {LinearActivation::None, LinearActivation::Relu, LinearActivation::GeluTanh})
        for (bool bias : {false, true}) {
          SCOPED_TRACE(::testing::Message() << "M=" << cs.m << " N=" << cs.n << " K=" << cs.k << " D=" << to_string(d)
                                            << " act=" << static_cast<int>(act) << " bias=" << bias);
          HostFp8Gemm g = make_fp8_gemm(cs, E::Fp8E4M3, E::Fp8E5M2, d);
          g.l.alpha = -1.5;
          g.l.activation = act;
          g.bind(bias, is_fp8(d));
          expect_model_matches(g);
        }
}

TEST(CublasLtFp8Mapping, Block128ModelMatchesTheHeadersFormula) {
  // ⌈K/128⌉ = 4 and 8 (multiples of 4), N with a trailing partial 128-block, M a multiple of 4.
  const Fp8Case shapes[] = {{8, 272, 512, 0, 0, 0, Fp8GemmScaling::Block128},
                            {4, 128, 1024, 16, 32, 16, Fp8GemmScaling::Block128},
                            {12, 48, 448, 0, 0, 0, Fp8GemmScaling::Block128}};
  for (const Fp8Case& cs : shapes) {
    SCOPED_TRACE(::testing::Message() << "M=" << cs.m << " N=" << cs.n << " K=" << cs.k);
    HostFp8Gemm g = make_fp8_gemm(cs, E::Fp8E4M3, E::Fp8E4M3, E::Bf16);
    g.l.activation = LinearActivation::Relu;
    g.bind(true, false);
    auto map = cublaslt_fp8_mapping(g.l, 90);
    ASSERT_TRUE(map) << map.error().to_string();
    EXPECT_EQ(map->a_scale_mode,
              CublasLtScaleMode::Blk128x128_32F);  // the weights' blocks: cuBLASLt's A
    EXPECT_EQ(map->b_scale_mode,
              CublasLtScaleMode::Vec128_32F);  // the activations' tiles: its B
    EXPECT_NE(to_string(*map).find("scales=(BLK128x128_32F, VEC128_32F)"), std::string::npos) << to_string(*map);
    expect_model_matches(g);
  }
}

TEST(CublasLtFp8Mapping, Block128ScaleLayoutsAndArchitectures) {
  const HostFp8Gemm g = make_fp8_gemm({8, 256, 512, 0, 0, 0, Fp8GemmScaling::Block128});
  ASSERT_TRUE(cublaslt_fp8_mapping(g.l, 90));
  expect_rejected(g.l, "sm_90 only", ErrorCode::Unsupported, 89);
  expect_rejected(g.l, "sm_90 only", ErrorCode::Unsupported, 100);
  expect_rejected(g.l, "sm_90 only", ErrorCode::Unsupported, 120);
  Fp8GemmLaunch l = g.l;
  l.a_scale_row = 4,
  l.a_scale_col = 1;  // row-major [M, ⌈K/128⌉]: DeepSeek's packed activations' scales
  expect_rejected(l, "M-major");
  l = g.l;
  l.a_scale_col = 16;  // M-major with a padded leading dimension
  expect_rejected(l, "M-major");
  l = g.l;
  l.b_scale_row = 8;  // K-major rows padded to 8
  expect_rejected(l, "K-major");
  l = g.l;
  l.b_scale_row = 1, l.b_scale_col = 2;  // N-major
  expect_rejected(l, "K-major");
  l = g.l;
  l.m = 6, l.a_scale_col = 6;
  expect_rejected(l, "multiple of 4");
  HostFp8Gemm k384 = make_fp8_gemm({8, 256, 384, 0, 0, 0, Fp8GemmScaling::Block128});  // ⌈K/128⌉ = 3
  expect_rejected(k384.l, "ceil(K/128) = 3");
  // The stride of an extent-1 dimension is free: one 128-row block of B (N = 128), one row of A does not occur (M is a
  // multiple of 4).
  HostFp8Gemm one_block = make_fp8_gemm({8, 128, 512, 0, 0, 0, Fp8GemmScaling::Block128});
  one_block.l.b_scale_row = 12345;
  ASSERT_TRUE(cublaslt_fp8_mapping(one_block.l, 90));
  // Tensor scaling reads no strides.
  HostFp8Gemm tensor = make_fp8_gemm({6, 16, 384});
  tensor.l.a_scale_row = 7, tensor.l.b_scale_col = 9;
  EXPECT_TRUE(cublaslt_fp8_mapping(tensor.l, 89));
}

TEST(CublasLtFp8Mapping, Epilogues) {
  HostFp8Gemm g = make_fp8_gemm({16, 32, 32}, E::Fp8E4M3, E::Fp8E4M3, E::Bf16);
  using A = LinearActivation;
  using Ep = CublasLtEpilogue;
  const struct {
    A act;
    bool bias;
    Ep want;
  } cases[] = {{A::None, false, Ep::Default}, {A::None, true, Ep::Bias},      {A::Relu, false, Ep::Relu},
               {A::Relu, true, Ep::ReluBias}, {A::GeluTanh, false, Ep::Gelu}, {A::GeluTanh, true, Ep::GeluBias}};
  for (const auto& c : cases) {
    g.l.activation = c.act;
    g.bind(c.bias, false);
    auto map = cublaslt_fp8_mapping(g.l, 90);
    ASSERT_TRUE(map) << map.error().to_string();
    EXPECT_EQ(map->epilogue, c.want) << to_string(*map);
    EXPECT_EQ(map->has_bias, c.bias);
  }
  g.bind(false, false);
  g.l.activation = A::Silu;
  expect_rejected(g.l, "has no cuBLASLt epilogue");
  g.l.activation = A::GeluErf;
  expect_rejected(g.l, "has no cuBLASLt epilogue");
  g.l.activation = static_cast<A>(200);
  expect_rejected(g.l, "not a LinearActivation", ErrorCode::InvalidProblem);
}

TEST(CublasLtFp8Mapping, BiasKindsAndTheKindOfC) {
  const struct {
    E d, bias;
    bool ok;
    E c;
  } cases[] = {
      {E::F16, E::F16, true, E::F16},       {E::F16, E::Bf16, false, E::F16},   {E::F16, E::F32, false, E::F16},
      {E::Bf16, E::Bf16, true, E::Bf16},    {E::Bf16, E::F16, false, E::Bf16},  {E::Bf16, E::F32, false, E::Bf16},
      {E::F32, E::Bf16, true, E::F32},      {E::F32, E::F16, false, E::F32},    {E::F32, E::F32, false, E::F32},
      {E::Fp8E4M3, E::Bf16, true, E::Bf16}, {E::Fp8E4M3, E::F16, true, E::F16}, {E::Fp8E4M3, E::F32, false, E::F16},
      {E::Fp8E5M2, E::F16, true, E::F16},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(::testing::Message() << "D " << to_string(c.d) << " bias " << to_string(c.bias));
    HostFp8Gemm g = make_fp8_gemm({16, 32, 32}, E::Fp8E4M3, E::Fp8E5M2, c.d);
    g.l.bias_kind = c.bias;
    g.bind(true, false);
    auto map = cublaslt_fp8_mapping(g.l, 90);
    if (!c.ok) {
      expect_rejected(g.l, "bias of kind " + std::string(to_string(c.bias)));
      continue;
    }
    ASSERT_TRUE(map) << map.error().to_string();
    EXPECT_EQ(map->bias, c.bias);
    EXPECT_EQ(map->c, c.c);
    EXPECT_NE(to_string(*map).find("bias=" + std::string(to_string(c.bias))), std::string::npos);
  }
  // Without a bias, C has D's kind, or f16 for an FP8 D; the bias kind is not read.
  for (E d : {E::F16, E::Bf16, E::F32, E::Fp8E4M3, E::Fp8E5M2}) {
    HostFp8Gemm g = make_fp8_gemm({16, 32, 32}, E::Fp8E5M2, E::Fp8E4M3, d);
    g.l.bias_kind = E::F32;
    auto map = cublaslt_fp8_mapping(g.l, 90);
    ASSERT_TRUE(map) << map.error().to_string();
    EXPECT_EQ(map->c, is_fp8(d) ? E::F16 : d);
    EXPECT_FALSE(map->has_bias);
  }
}

TEST(CublasLtFp8Mapping, Fp8OutputScaleAndAmax) {
  HostFp8Gemm g = make_fp8_gemm({16, 32, 32}, E::Fp8E4M3, E::Fp8E4M3, E::Fp8E5M2);
  g.bind(false, true);
  auto map = cublaslt_fp8_mapping(g.l, 90);
  ASSERT_TRUE(map) << map.error().to_string();
  EXPECT_TRUE(map->d_scale);
  EXPECT_TRUE(map->amax);
  EXPECT_NE(to_string(*map).find(" d_scale amax"), std::string::npos) << to_string(*map);
  g.bind(false, false);
  map = cublaslt_fp8_mapping(g.l, 90);
  ASSERT_TRUE(map);
  EXPECT_TRUE(map->d_scale);
  EXPECT_FALSE(map->amax);
  Fp8GemmLaunch l = g.l;
  l.d_scale = nullptr;
  expect_rejected(l, "needs its d_scale", ErrorCode::InvalidProblem);
  HostFp8Gemm h = make_fp8_gemm({16, 32, 32}, E::Fp8E4M3, E::Fp8E4M3, E::Bf16);
  h.bind(false, true);
  expect_rejected(h.l, "AMAX_D for FP8 outputs only");
  h.bind(false, false);
  h.l.d_scale = reinterpret_cast<const float*>(h.d_scale.data());
  expect_rejected(h.l, "FP8 D only", ErrorCode::InvalidProblem);
}

TEST(CublasLtFp8Mapping, FastAccum) {
  HostFp8Gemm g = make_fp8_gemm({16, 32, 32});
  auto slow = cublaslt_fp8_mapping(g.l, 90);
  g.l.fast_accum = true;
  auto fast = cublaslt_fp8_mapping(g.l, 90);
  ASSERT_TRUE(slow && fast);
  EXPECT_FALSE(slow->fast_accum);
  EXPECT_TRUE(fast->fast_accum);
  EXPECT_NE(*slow, *fast);  // another problem for can_run
  EXPECT_NE(to_string(*fast).find(" fast_accum"), std::string::npos);
}

TEST(CublasLtFp8Mapping, KindsAndArchitecture) {
  HostFp8Gemm g = make_fp8_gemm({16, 32, 32}, E::Fp8E5M2, E::Fp8E5M2);
  expect_rejected(g.l, "fp8e5m2 x fp8e5m2");
  g.l.a_kind = E::F16;
  expect_rejected(g.l, "must be fp8e4m3 or fp8e5m2");
  g.l.a_kind = E::Fp8E4M3, g.l.d_kind = E::F64;
  expect_rejected(g.l, "D of kind f64");
  g.l.d_kind = E::F32;
  ASSERT_TRUE(cublaslt_fp8_mapping(g.l, 89));
  ASSERT_TRUE(cublaslt_fp8_mapping(g.l, 100));
  expect_rejected(g.l, "no FP8 tensor cores", ErrorCode::Unsupported, 86);
  g.l.scaling = static_cast<Fp8GemmScaling>(7);
  expect_rejected(g.l, "not an Fp8GemmScaling", ErrorCode::InvalidProblem);
}

TEST(CublasLtFp8Mapping, ShapesAndLeadingDimensions) {
  const HostFp8Gemm g = make_fp8_gemm({16, 32, 64}, E::Fp8E4M3, E::Fp8E4M3, E::Bf16);
  Fp8GemmLaunch l = g.l;
  l.n = 40, l.ldd = 40;
  expect_rejected(l, "multiples of 16 (16-byte columns)");
  l = g.l;
  l.k = 24, l.lda = l.ldb = 32;
  expect_rejected(l, "multiples of 16 (16-byte columns)");
  l = g.l;
  l.k = 0;
  expect_rejected(l, "K = 0");
  l = g.l;
  l.m = 0;
  expect_rejected(l, "empty GEMM");
  l = g.l;
  l.n = 0;
  expect_rejected(l, "empty GEMM");
  l = g.l;
  l.m = -1;
  expect_rejected(l, "negative extent", ErrorCode::InvalidProblem);
  l = g.l;
  l.m = int64_t{1} << 31;
  expect_rejected(l, "INT32_MAX");
  l = g.l;
  l.lda = 48;
  expect_rejected(l, "below (K, K, N)", ErrorCode::InvalidProblem);
  l = g.l;
  l.ldb = 72;
  expect_rejected(l, "16-byte multiples");
  l = g.l;
  l.ldd = 36;  // bf16: 72 bytes
  expect_rejected(l, "16-byte multiples");
  l.ldd = 40;  // 80 bytes
  EXPECT_TRUE(cublaslt_fp8_mapping(l, 90));
  l.d_kind = E::Fp8E4M3, l.d_scale = g.l.a_scale;  // 40 bytes
  expect_rejected(l, "16-byte multiples");
  l.d_kind = E::F32;  // 160 bytes
  l.d_scale = nullptr;
  EXPECT_TRUE(cublaslt_fp8_mapping(l, 90));
  // Leading dimensions 0 mean packed.
  l = g.l;
  l.lda = l.ldb = l.ldd = 0;
  auto packed = cublaslt_fp8_mapping(l, 90);
  ASSERT_TRUE(packed) << packed.error().to_string();
  EXPECT_EQ(packed->lda, 64);
  EXPECT_EQ(packed->ldb, 64);
  EXPECT_EQ(packed->ldd, 32);
}

TEST(CublasLtFp8Mapping, OneRowNormalisesWhatAddressesNothing) {
  HostFp8Gemm g = make_fp8_gemm({1, 32, 64, 48, 16, 8}, E::Fp8E4M3, E::Fp8E4M3, E::F16);
  auto padded = cublaslt_fp8_mapping(g.l, 90);
  g.l.lda = 64, g.l.ldd = 32;
  auto packed = cublaslt_fp8_mapping(g.l, 90);
  ASSERT_TRUE(padded && packed);
  EXPECT_EQ(*padded, *packed) << to_string(*padded) << " vs " << to_string(*packed);
  EXPECT_EQ(padded->ldb, 64);
  EXPECT_EQ(padded->ldd, 32);
  EXPECT_EQ(padded->lda, 80);  // B's row stride addresses its N rows
  g.l.lda = 40;                // below K: still invalid
  expect_rejected(g.l, "below (K, K, N)", ErrorCode::InvalidProblem);
}

TEST(CublasLtFp8Gemm, CreateAndCanRunWithoutAGpu) {
  HostFp8Gemm g = make_fp8_gemm({16, 32, 64}, E::Fp8E4M3, E::Fp8E4M3, E::Bf16);
  Fp8GemmLaunch problem = g.l;
  const void* marker = CublasLtFp8Gemm::present_marker();
  problem.a = problem.b = marker, problem.d = const_cast<void*>(marker);
  problem.a_scale = problem.b_scale = static_cast<const float*>(marker);
  auto made = CublasLtFp8Gemm::create(0, 90, problem, size_t{1} << 22);
  if (!CublasLtFp8Gemm::compiled_in()) {
    ASSERT_FALSE(made);
    EXPECT_EQ(made.error().code, ErrorCode::Unsupported);
    EXPECT_NE(made.error().message.find("without CUDA kernels"), std::string::npos) << made.error().to_string();
    return;
  }
  if (!cuda_availability().usable) {
    ASSERT_FALSE(made);
    EXPECT_EQ(made.error().code, ErrorCode::Unsupported) << made.error().to_string();
  }
  Fp8GemmLaunch unsupported = problem;
  unsupported.activation = LinearActivation::Silu;  // the mapping's error, before any CUDA call
  auto silu = CublasLtFp8Gemm::create(0, 90, unsupported, 0);
  ASSERT_FALSE(silu);
  EXPECT_NE(silu.error().message.find("has no cuBLASLt epilogue"), std::string::npos) << silu.error().to_string();
  // An empty problem needs no GPU: its run writes nothing (here no amax either).
  Fp8GemmLaunch empty = problem;
  empty.m = 0;
  auto e = CublasLtFp8Gemm::create(0, 90, empty, 0);
  ASSERT_TRUE(e) << e.error().to_string();
  EXPECT_EQ((*e)->workspace_size(), 0u);
  EXPECT_TRUE((*e)->can_run(empty));
  EXPECT_TRUE((*e)->run(nullptr, empty, nullptr, 0));
  EXPECT_EQ((*e)->can_run(problem).code(), ErrorCode::InvalidProblem);
}

}  // namespace
}  // namespace baracuda::detail::cublaslt_fp8_test
