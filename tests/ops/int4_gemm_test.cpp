// Int4MarlinGemmPlan (W4A16 over Marlin-packed weights) on the host device:
// - Host: the plan against an independent double recomputation from the LOGICAL weights (the quantizer's q,
//   zeros and f16 scales, dequantized here as round_T((q − z)·s), with the un-permuted activation), for every
//   group size, both schemes, act-order, f16 and bf16, bias, M ∈ {1, 7, 16, 33, 130}, N ∈ {64, 128},
//   K ∈ {128, 256}, with weights made by quantize_int4 on non-uniform f32 weights and packed by
//   marlin_from_int4, gptq_pack → gptq_to_marlin and awq_pack → awq_to_marlin; tolerance: one rounding of T.
//   And against the f32 weights within the derived quantization-error bound.
// - The typed Int4MarlinGemmPlan<T> against the dynamic plan on host and sim.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "int4_gemm_test_support.hpp"

namespace baracuda::test {
namespace {

// ------------------------------------------------------------------------------------------ host

template <class T>
void check_host_against_logical(const Weights& W, Source src, int64_t M, uint64_t seed) {
  const MarlinInt4Weights& mw = src == Source::Logical ? W.marlin : *W.from_checkpoint;
  const bool bias = (M + seed) % 2 == 1;
  SCOPED_TRACE(std::string(name_t<T>()) + " K=" + std::to_string(W.shape.k) + " N=" + std::to_string(W.shape.n) +
               " group=" + std::to_string(W.shape.group) + (W.scheme == Int4Scheme::Symmetric ? " sym" : " asym") +
               (W.act_order ? " act_order" : "") + (src == Source::Logical ? " marlin_from_int4" : " from checkpoint") +
               " M=" + std::to_string(M) + (bias ? " bias" : ""));
  const HostProblem<T> p(W, mw, M, bias, seed, /*pad=*/M % 3 == 0 ? 8 : 0);
  const std::vector<T> c = run_host(p);
  ASSERT_EQ(c.size(), static_cast<size_t>(M * p.ldc));
  const std::vector<double> wt = logical_weight_t<T>(W.logical);
  std::vector<double> y, abs_sum;
  recompute(p, wt, &y, &abs_sum);
  const int64_t N = p.desc.n, K = p.desc.k;
  const double u = unit_roundoff_t<T>();
  // The quantization-error bound against the f32 weights: per weight |w32 − w_T| ≤ s·(1/2 + 2⁻⁶) (the
  // quantizer's rounding, with margin for the f16 scale's rounding and clamping at the range's edge)
  // + 15·s·u_T for a bf16-rounded scale + u_T·|w_T| (the weight's rounding to T).
  const double scale_round = std::is_same_v<T, __half> ? 0.0 : 15 * u;
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < p.ldc; ++n) {
      const float got = from_t<T>(c[m * p.ldc + n]);
      if (n >= N) {
        ASSERT_EQ(got, -768.0f) << "the padding of c was written at m=" << m << " n=" << n;
        continue;
      }
      const double want = y[m * N + n];
      ASSERT_LE(std::fabs(got - want), u * std::fabs(want) + 1e-12 * abs_sum[m * N + n] + abs_floor_t<T>())
          << "m=" << m << " n=" << n << " got " << got << " want " << want;
      double y32 = p.desc.has_bias ? from_t<T>(p.bias[n]) : 0.0, bound = u * std::fabs(got) + abs_floor_t<T>();
      for (int64_t k = 0; k < K; ++k) {
        const double a = from_t<T>(p.a[m * p.lda + k]);
        const double s = __half2float(W.logical.scales[group_of(W.logical, k) * N + n]);
        y32 += a * W.w32[k * N + n];
        bound += std::fabs(a) * (s * (0.5 + 0x1p-6 + scale_round) + u * std::fabs(wt[k * N + n]));
      }
      ASSERT_LE(std::fabs(got - y32), bound) << "quantization bound at m=" << m << " n=" << n;
    }
}

const int64_t kMs[] = {1, 7, 16, 33, 130};
struct NK {
  int64_t n, k;
};
const NK kNKs[] = {{64, 128}, {128, 256}};
constexpr const auto& kGroups = kInt4Groups;  // every group size of the catalog (int4_formats.def)

/// Every scheme of the catalog.
std::vector<Int4Scheme> catalog_schemes() {
  std::vector<Int4Scheme> v;
  for (size_t s = 0; s < kNumInt4Schemes; ++s) v.push_back(static_cast<Int4Scheme>(s));
  return v;
}

template <class T>
void host_sweep() {
  uint64_t seed = 1;
  for (const NK& nk : kNKs)
    for (int64_t group : kGroups)
      for (Int4Scheme scheme : catalog_schemes())
        for (bool act : {false, true}) {
          const Weights W = make_weights(nk.k, nk.n, group, scheme, act, 1000 + seed++);
          for (int64_t M : kMs) {
            check_host_against_logical<T>(W, Source::Logical, M, seed + M);
            if (::testing::Test::HasFatalFailure()) return;
          }
          if (W.from_checkpoint) check_host_against_logical<T>(W, Source::Checkpoint, 7, seed);
          if (::testing::Test::HasFatalFailure()) return;
        }
}

TEST(Int4MarlinGemm, HostMatchesLogicalWeightsF16) { host_sweep<__half>(); }
TEST(Int4MarlinGemm, HostMatchesLogicalWeightsBf16) { host_sweep<__nv_bfloat16>(); }

// The checkpoint converters give the same Marlin tensors as marlin_from_int4 (so the sweep above is not
// vacuous about which path it ran).
TEST(Int4MarlinGemm, CheckpointPathsGiveTheSameTensors) {
  for (Int4Scheme scheme : catalog_schemes())
    for (bool act : {false, true}) {
      const Weights W = make_weights(256, 128, 64, scheme, act, 77);
      if (!W.from_checkpoint) continue;
      EXPECT_EQ(W.from_checkpoint->qweight, W.marlin.qweight);
      EXPECT_EQ(W.from_checkpoint->zeros, W.marlin.zeros);
      EXPECT_EQ(W.from_checkpoint->perm, W.marlin.perm);
      ASSERT_EQ(W.from_checkpoint->scales.size(), W.marlin.scales.size());
      for (size_t i = 0; i < W.marlin.scales.size(); ++i)
        EXPECT_EQ(static_cast<__half_raw>(W.from_checkpoint->scales[i]).x,
                  static_cast<__half_raw>(W.marlin.scales[i]).x);
    }
}

// Act-order is in effect only with more than one group: with group −1 (or group = K) the plan needs no perm
// and no workspace, and gives the same result as without act-order.
TEST(Int4MarlinGemm, ActOrderWithOneGroupIsIgnored) {
  for (int64_t group : {int64_t{-1}, int64_t{128}}) {
    const Weights W = make_weights(128, 64, group, Int4Scheme::Symmetric, /*act_order=*/true, 5);
    EXPECT_TRUE(W.marlin.perm.empty());
    const HostProblem<__half> p(W, W.marlin, 5, false, 9);
    EXPECT_FALSE(p.desc.act_order_effective());
    auto plan = dynamic::Int4MarlinGemmPlan::select(Stream::host(), p.desc);
    ASSERT_TRUE(plan.is_ok());
    EXPECT_EQ(plan->workspace_size(), 0u);
    EXPECT_EQ(plan->sku().variant, "reference_sym");
    HostProblem<__half> q(W, W.marlin, 5, false, 9);
    q.desc.act_order = false;
    const std::vector<__half> c1 = run_host(p), c2 = run_host(q);
    ASSERT_EQ(c1.size(), c2.size());
    EXPECT_EQ(std::memcmp(c1.data(), c2.data(), c1.size() * 2), 0);
  }
}

TEST(Int4MarlinGemm, SkuAndPrecision) {
  auto plan = dynamic::Int4MarlinGemmPlan::select(Stream::host(), Int4GemmDescriptor{}
                                                                      .with_shape(4, 64, 128)
                                                                      .with_scheme(Int4Scheme::Asymmetric)
                                                                      .with_act_order()
                                                                      .with_group(32)
                                                                      .with_element(ElementKind::Bf16)
                                                                      .with_bias());
  ASSERT_TRUE(plan.is_ok()) << plan.error().to_string();
  const KernelSku sku = plan->sku();
  EXPECT_EQ(sku.op, "int4_marlin_gemm");
  EXPECT_EQ(sku.element, ElementKind::Bf16);
  EXPECT_EQ(sku.aux_element, ElementKind::U4);
  EXPECT_EQ(sku.epilogue, EpilogueKind::Bias);
  EXPECT_EQ(sku.backend, BackendKind::Host);
  EXPECT_EQ(sku.variant, "reference_asym_act_order");
  EXPECT_EQ(plan->workspace_size(), 4u * 128u * 2u);
  const PrecisionGuarantee pg = plan->precision_guarantee();
  EXPECT_EQ(pg.math_precision, MathPrecision::Bf16);
  EXPECT_EQ(pg.accumulator, MathPrecision::F64);
  EXPECT_TRUE(pg.deterministic);
  EXPECT_NE(to_string(sku).find("int4_marlin_gemm"), std::string::npos) << to_string(sku);
  const Int4GemmDescriptor d = plan->descriptor();
  EXPECT_EQ(d.hash(), Int4GemmDescriptor(d).hash());
  EXPECT_NE(d.hash(), Int4GemmDescriptor(d).with_group(64).hash());
}

// Int4MarlinGemmPlan<T> forwards to the dynamic plan: on host and sim the same SKU and bytes, with every
// optional operand given (asymmetric, act-order, bias) and with none (default TensorRefs); a descriptor whose
// element is not T is rejected at select.
TEST(Int4MarlinGemm, TypedPlanMatchesDynamic) {
  using T = __nv_bfloat16;
  for (bool full : {true, false}) {
    SCOPED_TRACE(full ? "asym act_order bias" : "sym");
    const Weights W = make_weights(256, 64, 32, full ? Int4Scheme::Asymmetric : Int4Scheme::Symmetric, full, 41);
    const HostProblem<T> p(W, W.marlin, 5, full, 42);
    const int64_t M = p.desc.m, N = p.desc.n, K = p.desc.k, G = p.desc.weight_shape().num_groups();
    for (DeviceKind d : {DeviceKind::Host, DeviceKind::Sim}) {
      SCOPED_TRACE(std::string(to_string(d)));
      const Stream st = d == DeviceKind::Host ? Stream::host() : Stream::sim();
      auto dp = dynamic::Int4MarlinGemmPlan::select(st, p.desc);
      auto tp = Int4MarlinGemmPlan<T>::select(st, p.desc);
      ASSERT_TRUE(dp.is_ok() && tp.is_ok()) << (dp ? tp.error() : dp.error()).to_string();
      EXPECT_EQ(tp->sku(), dp->sku());
      ASSERT_EQ(tp->workspace_size(), dp->workspace_size());
      Arr<uint8_t> ws(tp->workspace_size());
      const Workspace wsv(ws.data(), tp->workspace_size());
      const auto elems = static_cast<size_t>(M * p.ldc);
      Arr<T> want(elems, to_t<T>(-768.0f)), got(elems, to_t<T>(-768.0f));
      ASSERT_TRUE(dp->run(st, wsv, p.tensors(want.data())).is_ok());
      Int4MarlinGemmArgs<T> args;
      args.a = TensorRef<T, 2>(p.a.data(), {M, K}, {p.lda, 1});
      args.b_q = TensorRef<int32_t, 2>::dense(p.b_q.data(), {K / 16, 2 * N});
      args.scales = TensorRef<T, 2>::dense(p.scales.data(), {G, N});
      if (full) {
        args.zeros = TensorRef<int32_t, 2>::dense(p.zeros.data(), {G, N / 8});
        args.perm = TensorRef<int32_t, 1>::dense(p.perm.data(), {K});
        args.bias = TensorRef<T, 1>::dense(p.bias.data(), {N});
      }
      args.c = TensorMut<T, 2>(got.data(), {M, N}, {p.ldc, 1});
      ASSERT_TRUE(tp->can_implement(args).is_ok()) << tp->can_implement(args).to_string();
      ASSERT_TRUE(tp->run(st, wsv, args).is_ok());
      EXPECT_EQ(std::memcmp(got.data(), want.data(), got.n * sizeof(T)), 0);
      EXPECT_NE(from_t<T>(got[0]), -768.0f);
    }
  }
  expect_error(Int4MarlinGemmPlan<__half>::select(
                   Stream::host(), Int4GemmDescriptor{}.with_shape(4, 64, 128).with_element(ElementKind::Bf16))
                   .status(),
               ErrorCode::InvalidProblem, "the descriptor's a/scales/bias/c kind");
}

// The host and sim devices check perm's values at run: a repeated or out-of-range row is an InvalidProblem
// (cuda cannot without a synchronisation: int4_gemm.hpp).
TEST(Int4MarlinGemm, PermValuesAreCheckedOnHostAndSim) {
  const Weights W = make_weights(256, 128, 32, Int4Scheme::Asymmetric, true, 31);
  HostProblem<__half> p(W, W.marlin, 5, true, 3);
  for (const Stream& st : {Stream::host(), Stream::sim()}) {
    SCOPED_TRACE(std::string(to_string(st.device())));
    auto plan = dynamic::Int4MarlinGemmPlan::select(st, p.desc);
    ASSERT_TRUE(plan.is_ok()) << plan.error().to_string();
    Arr<uint8_t> ws(plan->workspace_size());
    const Workspace wsv(ws.data(), plan->workspace_size());
    Arr<__half> c(static_cast<size_t>(p.desc.m * p.ldc), to_t<__half>(0.0f));
    const int32_t saved = p.perm[3];
    p.perm[3] = p.perm[4];
    expect_error(plan->run(st, wsv, p.tensors(c.data())), ErrorCode::InvalidProblem,
                 "perm is not a permutation of [0, K): perm[4]");
    p.perm[3] = static_cast<int32_t>(p.desc.k);
    expect_error(plan->run(st, wsv, p.tensors(c.data())), ErrorCode::InvalidProblem, "perm[3] = 256 is out of range");
    p.perm[3] = saved;
    EXPECT_TRUE(plan->run(st, wsv, p.tensors(c.data())).is_ok());
  }
}

// The deterministic claim: two runs give the same bits.
TEST(Int4MarlinGemm, Deterministic) {
  const Weights W = make_weights(256, 128, 32, Int4Scheme::Asymmetric, true, 31);
  const HostProblem<__half> p(W, W.marlin, 33, true, 3);
  const std::vector<__half> c1 = run_host(p), c2 = run_host(p);
  ASSERT_EQ(c1.size(), c2.size());
  EXPECT_EQ(std::memcmp(c1.data(), c2.data(), c1.size() * 2), 0);
}

}  // namespace
}  // namespace baracuda::test
