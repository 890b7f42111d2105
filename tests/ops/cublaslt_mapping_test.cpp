// The gemm family's cuBLASLt backend (src/ops/gemm/cublaslt.hpp): its row-major → column-major mapping, checked
// two ways without a GPU: the expected cuBLASLt arguments of the standard layouts, and, for every layout, what
// cublasLtMatmul computes by its documented semantics (column-major storage, op, ld, batch offsets, BIAS along
// D's rows, BGRADA/BGRADB over k) on host arrays against the launch computed directly from its strides; its
// rejections; create without a GPU. The backend itself on a GPU: cublaslt_mapping_gpu_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "baracuda/core/stream.hpp"
#include "cublaslt_test_support.hpp"
#include "ops/gemm/cublaslt.hpp"

namespace baracuda::detail::cublaslt_test {
namespace {

/// Element (r, c) of op(X) for a cuBLASLt matrix: the stored column-major matrix, transposed when `transpose`.
double lt_at(const CublasLtMatrix& x, const double* data, int64_t batch, int64_t r, int64_t c) {
  if (x.transpose) std::swap(r, c);
  EXPECT_TRUE(r >= 0 && r < x.rows && c >= 0 && c < x.cols) << "outside the stored " << x.rows << "x" << x.cols;
  return data[batch * x.batch_stride + r + c * x.ld];
}

/// What cublasLtMatmul computes for `m` with the pointers run passes (cublaslt_pointers), by cuBLASLt's
/// documented semantics: D' = act(α·op(A')·op(B') + β·C' + bias), bias[i] along D's rows (BIAS), GELU's input
/// to aux at i + j·aux_ld (GELU_AUX), Σ_k op(B')[k, j] (BGRADB) or Σ_k op(A')[i, k] (BGRADA) to the bias pointer.
void lt_model(const CublasLtMapping& m, const GemmLaunch& l) {
  const CublasLtPointers p = cublaslt_pointers(l, m);
  auto in = [](const void* ptr) { return static_cast<const double*>(ptr); };
  auto out = [](const void* ptr) { return static_cast<double*>(const_cast<void*>(ptr)); };
  // op(A') is m×k, op(B') k×n, C' and D' m×n: the stored shapes must say so.
  EXPECT_EQ(m.a.transpose ? m.a.cols : m.a.rows, m.m);
  EXPECT_EQ(m.a.transpose ? m.a.rows : m.a.cols, m.k);
  EXPECT_EQ(m.b.transpose ? m.b.cols : m.b.rows, m.k);
  EXPECT_EQ(m.b.transpose ? m.b.rows : m.b.cols, m.n);
  for (const CublasLtMatrix* x : {&m.c, &m.d}) {
    EXPECT_FALSE(x->transpose);
    EXPECT_EQ(x->rows, m.m);
    EXPECT_EQ(x->cols, m.n);
  }
  using E = CublasLtEpilogue;
  const E e = m.epilogue;
  const bool bias = e == E::Bias || e == E::ReluBias || e == E::GeluBias || e == E::GeluAuxBias;
  const bool relu = e == E::Relu || e == E::ReluBias;
  const bool gelu = e == E::Gelu || e == E::GeluBias || e == E::GeluAux || e == E::GeluAuxBias;
  const bool aux = e == E::GeluAux || e == E::GeluAuxBias;
  if (bias || e == E::BgradA) {
    EXPECT_EQ(m.bias_length, m.m);
  }
  if (e == E::BgradB) {
    EXPECT_EQ(m.bias_length, m.n);
  }
  if (aux) {
    ASSERT_NE(p.aux, nullptr);
  }
  if (bias || e == E::BgradA || e == E::BgradB) {
    ASSERT_NE(p.bias, nullptr);
  }
  for (int64_t b = 0; b < m.batch_count; ++b)
    for (int64_t i = 0; i < m.m; ++i)
      for (int64_t j = 0; j < m.n; ++j) {
        double acc = 0;
        for (int64_t q = 0; q < m.k; ++q) acc += lt_at(m.a, in(p.a), b, i, q) * lt_at(m.b, in(p.b), b, q, j);
        double v = l.alpha * acc + l.beta * lt_at(m.c, in(p.c), b, i, j);
        if (bias) v += in(p.bias)[i];
        if (aux) out(p.aux)[b * m.aux_batch_stride + i + j * m.aux_ld] = v;
        if (relu) v = v > 0 ? v : 0;
        if (gelu) v = ::baracuda::test::reference_activation(LinearActivation::GeluTanh, v);
        out(p.d)[b * m.d.batch_stride + i + j * m.d.ld] = v;
      }
  if (e == E::BgradB || e == E::BgradA) {
    const bool on_b = e == E::BgradB;
    for (int64_t x = 0; x < (on_b ? m.n : m.m); ++x) {
      double s = 0;
      for (int64_t q = 0; q < m.k; ++q) s += on_b ? lt_at(m.b, in(p.b), 0, q, x) : lt_at(m.a, in(p.a), 0, x, q);
      out(p.bias)[x] = s;
    }
  }
}

/// The mapping of `g`'s launch, modelled, against the direct computation: D, aux and bias_grad bit for bit
/// (small integers; GELU's values are computed by the same function in both).
void expect_model_matches(HostGemm g) {
  auto map = cublaslt_mapping(g.l);
  ASSERT_TRUE(map) << map.error().to_string();
  HostGemm want = g;
  direct(g.l, g, want);
  lt_model(*map, g.l);  // writes through g's pointers
  EXPECT_EQ(g.d, want.d) << to_string(*map);
  EXPECT_EQ(g.aux, want.aux) << to_string(*map);
  EXPECT_EQ(g.bgrad, want.bgrad) << to_string(*map);
}

TEST(CublasLtMapping, ModelOfEveryLayoutMatchesTheLaunch) {
  const Case shapes[] = {{3, 5, 7, 1}, {1, 5, 7, 1}, {3, 1, 7, 1}, {3, 5, 1, 1},
                         {1, 1, 1, 1}, {4, 6, 3, 3}, {3, 8, 4, 2}, {17, 9, 5, 2}};
  for (Case cs : shapes)
    for (int layout = 0; layout < 4; ++layout)
      for (int64_t pad : {0, 3})
        for (char broadcast : {' ', 'a', 'b'}) {
          if (broadcast != ' ' && cs.batch == 1) continue;
          cs.a_col_major = layout & 1, cs.b_col_major = layout & 2, cs.pad = pad, cs.broadcast = broadcast;
          SCOPED_TRACE(::testing::Message() << "M=" << cs.m << " N=" << cs.n << " K=" << cs.k << " batch=" << cs.batch
                                            << " layout=" << layout << " pad=" << pad << " broadcast=" << broadcast);
          HostGemm g = make_gemm(cs);
          g.l.alpha = 2, g.l.beta = -1;
          g.bind(true, false, true, false);  // C and bias
          expect_model_matches(g);
          g.l.beta = 0;
          g.l.activation = LinearActivation::Relu;
          g.bind(false, false, false, false);
          expect_model_matches(g);
          if ((cs.n + pad) % 8 == 0 || cs.m == 1) {
            g.l.activation = LinearActivation::GeluTanh;
            g.bind(false, true, true, false);  // GELU_AUX_BIAS
            expect_model_matches(g);
          }
          if (cs.batch == 1) {
            g.l.activation = LinearActivation::None;
            g.bind(false, false, false, true);  // BGRADB
            expect_model_matches(g);
          }
        }
}

// The four layouts, by the cuBLASLt arguments each must give (M = 3, N = 5, K = 7, dense).
TEST(CublasLtMapping, FourLayouts) {
  struct Want {
    bool a_col, b_col;
    bool transa, transb;
    int64_t lda, ldb;
  };
  // cuBLASLt's A is op(B)ᵀ (N×K), its B is op(A)ᵀ (K×M).
  const Want wants[] = {{false, false, false, false, 5, 7},  // A row-major, B row-major: NN
                        {true, false, false, true, 5, 3},    // A column-major: transb = T, ldb = M
                        {false, true, true, false, 7, 7},    // B column-major: transa = T, lda = K (the TN form)
                        {true, true, true, true, 7, 3}};
  for (const Want& w : wants) {
    HostGemm g = make_gemm({3, 5, 7, 1, w.a_col, w.b_col});
    g.bind(false, false, false, false);
    auto map = cublaslt_mapping(g.l);
    ASSERT_TRUE(map) << map.error().to_string();
    SCOPED_TRACE(to_string(*map));
    EXPECT_EQ(map->m, 5);
    EXPECT_EQ(map->n, 3);
    EXPECT_EQ(map->k, 7);
    EXPECT_EQ(map->a.transpose, w.transa);
    EXPECT_EQ(map->b.transpose, w.transb);
    EXPECT_EQ(map->a.ld, w.lda);
    EXPECT_EQ(map->b.ld, w.ldb);
    EXPECT_EQ(map->a.rows, w.transa ? 7 : 5);
    EXPECT_EQ(map->b.rows, w.transb ? 3 : 7);
    EXPECT_EQ(map->d.rows, 5);
    EXPECT_EQ(map->d.cols, 3);
    EXPECT_EQ(map->d.ld, 5);
    EXPECT_EQ(map->c, map->d);
    EXPECT_FALSE(map->has_c);
    EXPECT_EQ(map->epilogue, CublasLtEpilogue::Default);
    EXPECT_EQ(map->batch_count, 1);
    const CublasLtPointers p = cublaslt_pointers(g.l, *map);
    EXPECT_EQ(p.a, g.l.b.data);
    EXPECT_EQ(p.b, g.l.a.data);
    EXPECT_EQ(p.c, g.l.d.data);
  }
}

// The linear layer's three GEMMs (x [T, K], W [N, K], dY [T, N], all row-major), as cuBLASLt sees them.
TEST(CublasLtMapping, LinearLayerForwardAndBackward) {
  const int64_t t = 16, k = 32, n = 24;
  GemmLaunch fwd;  // y = x·Wᵀ + b: op(B) = Wᵀ, element (k, n) at n·K + k
  fwd.m = t, fwd.n = n, fwd.k = k;
  fwd.a = {reinterpret_cast<const void*>(256), 0, k, 1};
  fwd.b = {reinterpret_cast<const void*>(512), 0, 1, k};
  fwd.d = {reinterpret_cast<const void*>(768), 0, n, 1};
  fwd.bias = {CublasLtGemm::present_marker(), 0, 0, 1};  // how a plan marks an operand present at select
  auto f = cublaslt_mapping(fwd);
  ASSERT_TRUE(f) << f.error().to_string();
  EXPECT_EQ(to_string(*f),
            "f16->f16 transa=T transb=N m=24 n=16 k=32 lda=32 ldb=32 ldc=24 ldd=24 batch=1 "
            "epilogue=BIAS");
  EXPECT_EQ(f->bias_length, n);  // one bias value per output feature: D's columns, D''s rows

  GemmLaunch dx;  // dX = dY·W: both row-major
  dx.m = t, dx.n = k, dx.k = n;
  dx.a = {fwd.a.data, 0, n, 1};
  dx.b = {fwd.b.data, 0, k, 1};
  dx.d = {fwd.d.data, 0, k, 1};
  auto x = cublaslt_mapping(dx);
  ASSERT_TRUE(x) << x.error().to_string();
  EXPECT_EQ(to_string(*x),
            "f16->f16 transa=N transb=N m=32 n=16 k=24 lda=32 ldb=24 ldc=32 ldd=32 batch=1 "
            "epilogue=DEFAULT");

  GemmLaunch dw;  // dW = dYᵀ·X and db = Σ_t dY[t, :]: op(A) = dYᵀ, element (n, t) at t·N + n
  dw.m = n, dw.n = k, dw.k = t;
  dw.a = {fwd.a.data, 0, 1, n};
  dw.b = {fwd.b.data, 0, k, 1};
  dw.d = {fwd.d.data, 0, k, 1};
  dw.bias_grad = {fwd.bias.data, 0, 0, 1};
  auto w = cublaslt_mapping(dw);
  ASSERT_TRUE(w) << w.error().to_string();
  EXPECT_EQ(to_string(*w),
            "f16->f16 transa=N transb=T m=32 n=24 k=16 lda=32 ldb=24 ldc=32 ldd=32 batch=1 "
            "epilogue=BGRADB");
  EXPECT_EQ(w->bias_length, n);  // Σ over cuBLASLt's B (= dY) along k: one value per column of D' = row of D
  EXPECT_EQ(cublaslt_pointers(dw, *w).bias, dw.bias_grad.data);
}

TEST(CublasLtMapping, LeadingDimensionsAndBatchStrides) {
  HostGemm g = make_gemm({4, 6, 3, 3, false, true, 5, 'a'});
  g.bind(true, false, false, false);
  g.l.c.row = 16, g.l.c.batch = 0;  // C: its own ld, broadcast over the batch
  auto map = cublaslt_mapping(g.l);
  ASSERT_TRUE(map) << map.error().to_string();
  EXPECT_EQ(map->b.ld, 3 + 5);  // op(A) row-major: its row stride
  EXPECT_EQ(map->a.ld, 3 + 5);  // op(B) column-major: its column stride
  EXPECT_EQ(map->d.ld, 6 + 5);
  EXPECT_EQ(map->c.ld, 16);
  EXPECT_TRUE(map->has_c);
  EXPECT_EQ(map->batch_count, 3);
  EXPECT_EQ(map->b.batch_stride, 0);  // the broadcast op(A)
  EXPECT_EQ(map->a.batch_stride, g.l.b.batch);
  EXPECT_EQ(map->c.batch_stride, 0);
  EXPECT_EQ(map->d.batch_stride, g.l.d.batch);

  // One batch: batch strides address nothing and map to 0.
  HostGemm one = make_gemm({4, 6, 3, 1, false, false});
  one.bind(false, false, false, false);
  auto m1 = cublaslt_mapping(one.l);
  one.l.a.batch = 12345, one.l.d.batch = -7;
  auto m2 = cublaslt_mapping(one.l);
  ASSERT_TRUE(m1 && m2);
  EXPECT_EQ(*m1, *m2);
  EXPECT_EQ(m1->a.batch_stride, 0);
  EXPECT_EQ(m1->d.batch_stride, 0);
}

// A stride along an extent of 1 addresses nothing: launches differing only there map to one cuBLASLt problem,
// whose ld is the stored rows rounded up to 16 bytes.
TEST(CublasLtMapping, StridesOfUnitExtentsAreNormalised) {
  HostGemm g = make_gemm({1, 6, 5, 1, false, false}, ElementKind::F16);
  g.bind(false, false, false, false);
  auto m1 = cublaslt_mapping(g.l);
  g.l.a.row = 0, g.l.d.row = 3;  // M = 1: the row strides of op(A) and D are unused
  auto m2 = cublaslt_mapping(g.l);
  ASSERT_TRUE(m1 && m2) << (m1 ? m2.error() : m1.error()).to_string();
  EXPECT_EQ(*m1, *m2);
  EXPECT_EQ(m1->b.ld, 8);  // op(A)ᵀ stored 5×1: ld = 5 rounded up to 8 f16
  EXPECT_EQ(m1->d.ld, 8);  // D' stored 6×1
  EXPECT_FALSE(m1->b.transpose);

  // A column vector op(A) [M, 1] with a strided column: stored as one row of M with ld = its stride.
  HostGemm v = make_gemm({5, 4, 1, 1, false, false}, ElementKind::F32);
  v.l.a = {nullptr, 0, 3, 7};
  v.a.assign(20, 1);
  v.bind(false, false, false, false);
  auto mv = cublaslt_mapping(v.l);
  ASSERT_TRUE(mv) << mv.error().to_string();
  EXPECT_FALSE(mv->b.transpose);
  EXPECT_EQ(mv->b.rows, 1);
  EXPECT_EQ(mv->b.cols, 5);
  EXPECT_EQ(mv->b.ld, 3);
  v.l.a = {v.a.data(), 0, 1, 9};  // a contiguous column: op(A) stored column-major
  mv = cublaslt_mapping(v.l);
  ASSERT_TRUE(mv) << mv.error().to_string();
  EXPECT_TRUE(mv->b.transpose);
  EXPECT_EQ(mv->b.rows, 5);
  EXPECT_EQ(mv->b.ld, 8);  // 5 f32 rounded up to 16 bytes
}

TEST(CublasLtMapping, Epilogues) {
  using A = LinearActivation;
  using E = CublasLtEpilogue;
  struct Row {
    A act;
    bool bias, aux;
    E want;
  };
  const Row rows[] = {{A::None, false, false, E::Default},    {A::None, true, false, E::Bias},
                      {A::Relu, false, false, E::Relu},       {A::Relu, true, false, E::ReluBias},
                      {A::GeluTanh, false, false, E::Gelu},   {A::GeluTanh, true, false, E::GeluBias},
                      {A::GeluTanh, false, true, E::GeluAux}, {A::GeluTanh, true, true, E::GeluAuxBias}};
  for (const Row& r : rows) {
    HostGemm g = make_gemm({3, 16, 4, 2, false, false, 8});
    g.l.activation = r.act;
    g.bind(false, r.aux, r.bias, false);
    auto map = cublaslt_mapping(g.l);
    ASSERT_TRUE(map) << map.error().to_string();
    EXPECT_EQ(map->epilogue, r.want) << to_string(r.want);
    EXPECT_EQ(map->bias_length, r.bias ? 16 : 0);
    EXPECT_EQ(map->aux_ld, r.aux ? 24 : 0);
    EXPECT_EQ(map->aux_batch_stride, r.aux ? 3 * 24 : 0);
    const CublasLtPointers p = cublaslt_pointers(g.l, *map);
    EXPECT_EQ(p.bias, r.bias ? g.l.bias.data : nullptr);
    EXPECT_EQ(p.aux, r.aux ? g.l.aux.data : nullptr);
  }
  HostGemm one = make_gemm({1, 5, 4, 1, false, false}, ElementKind::F32);  // M = 1: aux's ld is free
  one.l.activation = A::GeluTanh;
  one.bind(false, true, false, false);
  auto map = cublaslt_mapping(one.l);
  ASSERT_TRUE(map) << map.error().to_string();
  EXPECT_EQ(map->aux_ld, 8);
}

/// `launch` is rejected with `code`, naming the backend and containing `why`.
void expect_rejected(const GemmLaunch& launch, ErrorCode code, const std::string& why) {
  auto map = cublaslt_mapping(launch);
  ASSERT_FALSE(map) << to_string(*map);
  EXPECT_EQ(map.error().code, code) << map.error().to_string();
  EXPECT_NE(map.error().message.find("cuBLASLt"), std::string::npos) << map.error().to_string();
  EXPECT_NE(map.error().message.find(why), std::string::npos) << map.error().to_string();
}

TEST(CublasLtMapping, Rejections) {
  const auto base = [] {
    HostGemm g = make_gemm({8, 16, 8, 1, false, false});
    g.bind(false, false, false, false);
    return g;
  };
  const ErrorCode U = ErrorCode::Unsupported;
  auto with = [&](const std::function<void(HostGemm&)>& change) {
    HostGemm g = base();
    change(g);
    return g.l;
  };
  expect_rejected(with([](HostGemm& g) { g.l.activation = LinearActivation::Silu; }), U, "silu");
  expect_rejected(with([](HostGemm& g) { g.l.activation = LinearActivation::GeluErf; }), U, "gelu_erf");
  expect_rejected(with([](HostGemm& g) { g.l.activation = static_cast<LinearActivation>(9); }),
                  ErrorCode::InvalidProblem, "activation");
  // bias_grad: batch 1 only, alone, packed.
  expect_rejected(with([](HostGemm& g) {
                    g.l.batch = 2;
                    g.l.bias_grad.data = g.bgrad.data();
                  }),
                  U, "bias_grad with 2 batches");
  expect_rejected(with([](HostGemm& g) { g.bind(false, false, true, true); }), U, "bias_grad with a bias");
  expect_rejected(with([](HostGemm& g) {
                    g.bind(false, false, false, true);
                    g.l.activation = LinearActivation::Relu;
                  }),
                  U, "BGRADB");
  expect_rejected(with([](HostGemm& g) {
                    g.bind(false, false, false, true);
                    g.l.bias_grad.col = 2;
                  }),
                  U, "packed");
  expect_rejected(with([](HostGemm& g) {
                    g.bind(false, false, true, false);
                    g.l.bias.col = 0;
                  }),
                  U, "packed");
  // aux: the pre-activation of the tanh GELU only, ld and batch stride multiples of 8.
  expect_rejected(with([](HostGemm& g) {
                    g.bind(false, true, false, false);
                    g.l.activation = LinearActivation::Relu;
                  }),
                  U, "bit mask");
  expect_rejected(with([](HostGemm& g) { g.bind(false, true, false, false); }), U, "aux with the activation none");
  expect_rejected(with([](HostGemm& g) {
                    g.bind(false, true, false, false);
                    g.l.activation = LinearActivation::GeluTanh;
                    g.l.aux.row = 20;
                  }),
                  U, "multiple of 8");
  expect_rejected(with([](HostGemm& g) {
                    g.bind(false, true, false, false);
                    g.l.activation = LinearActivation::GeluTanh;
                    g.l.batch = 2;
                    g.l.aux.batch = 8 * 16 + 4;
                  }),
                  U, "EPILOGUE_AUX_BATCH_STRIDE");
  // Layouts cuBLASLt cannot take.
  expect_rejected(with([](HostGemm& g) { g.l.a.row = 0; }), U, "below the 8 rows");  // a broadcast row of op(A)
  expect_rejected(with([](HostGemm& g) { g.l.b.col = 3; }), U, "exactly one of them to be 1");
  expect_rejected(with([](HostGemm& g) { g.l.a.row = 1; }), U, "exactly one of them to be 1");
  expect_rejected(with([](HostGemm& g) { g.l.d.row = 12; }), U, "below the 16 rows");
  expect_rejected(with([](HostGemm& g) {
                    g.l.batch = 2;
                    g.l.b.batch = -128;
                  }),
                  U, "negative");
  expect_rejected(with([](HostGemm& g) { g.l.d.col = 2; }), ErrorCode::InvalidProblem, "column stride");
  expect_rejected(with([](HostGemm& g) {
                    g.bind(true, false, false, false);
                    g.l.c.col = 16;
                  }),
                  ErrorCode::InvalidProblem, "C's column stride");
  expect_rejected(with([](HostGemm& g) {
                    g.l.batch = 2;
                    g.l.d.batch = 0;
                  }),
                  ErrorCode::InvalidProblem, "batch stride is 0");
  // Extents.
  expect_rejected(with([](HostGemm& g) { g.l.k = 0; }), U, "K = 0");
  expect_rejected(with([](HostGemm& g) { g.l.m = 0; }), U, "empty");
  expect_rejected(with([](HostGemm& g) { g.l.n = -1; }), ErrorCode::InvalidProblem, "negative extent");
  expect_rejected(with([](HostGemm& g) { g.l.k = int64_t{1} << 31; }), U, "INT32_MAX");
  // Kinds.
  const ElementKind F16 = ElementKind::F16, Bf16 = ElementKind::Bf16, F32 = ElementKind::F32, F64 = ElementKind::F64;
  const std::pair<ElementKind, ElementKind> bad[] = {{F16, Bf16}, {Bf16, F16}, {F32, F16}, {F32, F64},
                                                     {F64, F32},  {ElementKind::S8, ElementKind::F32},
                                                     {ElementKind::U8, ElementKind::S32}};
  for (const auto& kinds : bad) {
    const ElementKind ab = kinds.first, cd = kinds.second;
    expect_rejected(with([&](HostGemm& g) { g.l.ab = ab, g.l.cd = cd; }), U, "kind " + std::string(to_string(ab)));
  }
  const std::pair<ElementKind, ElementKind> good[] = {{F16, F16},  {F16, F32}, {Bf16, Bf16},
                                                      {Bf16, F32}, {F32, F32}, {F64, F64}};
  for (const auto& kinds : good) {
    const ElementKind ab = kinds.first, cd = kinds.second;
    auto map = cublaslt_mapping(with([&](HostGemm& g) { g.l.ab = ab, g.l.cd = cd, g.l.tf32 = true; }));
    ASSERT_TRUE(map) << map.error().to_string();
    EXPECT_EQ(map->tf32, ab == F32);  // TF32 concerns f32 inputs only
  }
}

// IntGemmPlan's cuBLASLt backend: s8 x s8 -> s32 in the TN form (a [M, K] and b [N, K] both K-contiguous, packed),
// cuBLASLt's IMMA rules (N, K and the leading dimensions multiples of 4), and nothing but the plain sum.
TEST(CublasLtMapping, IntegerGemm) {
  const auto tn = [](int64_t m, int64_t n, int64_t k) {
    HostGemm g = make_gemm({m, n, k, 1, false, true});  // op(B) column-major: b [N, K] row-major
    g.l.ab = ElementKind::S8, g.l.cd = ElementKind::S32;
    g.bind(false, false, false, false);
    return g;
  };
  HostGemm g = tn(5, 8, 16);
  auto map = cublaslt_mapping(g.l);
  ASSERT_TRUE(map) << map.error().to_string();
  EXPECT_TRUE(map->a.transpose);  // cuBLASLt's A = b: transa = T, lda = K
  EXPECT_FALSE(map->b.transpose);
  EXPECT_EQ(map->a.ld, 16);
  EXPECT_EQ(map->b.ld, 16);
  EXPECT_EQ(map->d.ld, 8);
  EXPECT_EQ(map->m, 8);
  EXPECT_EQ(map->n, 5);
  EXPECT_EQ(map->k, 16);
  EXPECT_EQ(map->epilogue, CublasLtEpilogue::Default);
  EXPECT_FALSE(map->has_c);
  const ErrorCode U = ErrorCode::Unsupported;
  auto with = [&](const std::function<void(HostGemm&)>& change) {
    HostGemm h = tn(5, 8, 16);
    change(h);
    return h.l;
  };
  HostGemm nn = make_gemm({5, 8, 16, 1, false, false});  // op(B) row-major: the NN form
  nn.l.ab = ElementKind::S8, nn.l.cd = ElementKind::S32;
  nn.bind(false, false, false, false);
  expect_rejected(nn.l, U, "TN form");
  expect_rejected(tn(5, 6, 16).l, U, "multiples of 4");  // N = 6
  expect_rejected(tn(5, 8, 18).l, U, "multiples of 4");  // K = 18
  expect_rejected(with([](HostGemm& h) { h.l.d.row = 10; }), U, "leading dimensions");
  expect_rejected(with([](HostGemm& h) { h.l.bias.data = h.bias.data(); }), U, "plain sum");
  expect_rejected(with([](HostGemm& h) { h.l.activation = LinearActivation::Relu; }), U, "plain sum");
  expect_rejected(with([](HostGemm& h) { h.l.alpha = 2; }), U, "plain sum");
  expect_rejected(with([](HostGemm& h) {
                    h.l.c.data = h.c.data();
                    h.l.beta = 1;
                  }),
                  U, "plain sum");
}

TEST(CublasLtMapping, WorkspaceCap) {
  EXPECT_EQ(cublaslt_workspace_cap(80), size_t{4} << 20);
  EXPECT_EQ(cublaslt_workspace_cap(89), size_t{4} << 20);
  EXPECT_EQ(cublaslt_workspace_cap(90), size_t{32} << 20);
}

// Without a usable GPU (or without the cuda kernels) create fails with the reason; an empty problem needs none.
TEST(CublasLtGemm, CreateWithoutAGpu) {
  HostGemm g = make_gemm({8, 16, 8, 1, false, false}, ElementKind::F32);
  g.bind(false, false, false, false);
  GemmLaunch no_columns = g.l;  // N = 0 with a bias_grad: M sums to write, which cuBLASLt cannot compute alone
  no_columns.n = 0;
  no_columns.bias_grad.data = CublasLtGemm::present_marker();
  auto sums = CublasLtGemm::create(0, no_columns, 0);
  ASSERT_FALSE(sums);
  EXPECT_EQ(sums.error().code, ErrorCode::Unsupported) << sums.error().to_string();
  auto made = CublasLtGemm::create(0, g.l, size_t{1} << 22);
  if (!CublasLtGemm::compiled_in()) {
    ASSERT_FALSE(made);
    EXPECT_EQ(made.error().code, ErrorCode::Unsupported);
    EXPECT_NE(made.error().message.find("without CUDA kernels"), std::string::npos) << made.error().to_string();
    return;
  }
  if (!cuda_availability().usable) {
    ASSERT_FALSE(made);
    EXPECT_EQ(made.error().code, ErrorCode::Unsupported) << made.error().to_string();
  }
  GemmLaunch empty = g.l;
  empty.m = 0;
  auto e = CublasLtGemm::create(0, empty, 0);
  ASSERT_TRUE(e) << e.error().to_string();
  EXPECT_EQ((*e)->workspace_size(), 0u);
  EXPECT_TRUE((*e)->run(nullptr, empty, nullptr, 0));
  const Status other = (*e)->run(nullptr, g.l, nullptr, 0);
  EXPECT_EQ(other.code(), ErrorCode::InvalidProblem) << other.to_string();
}

}  // namespace
}  // namespace baracuda::detail::cublaslt_test
