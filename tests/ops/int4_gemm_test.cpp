// The int4_gemm family (Int4MarlinGemmPlan, W4A16 over Marlin-packed weights).
// - Host: the plan against an independent double recomputation from the LOGICAL weights (the quantizer's q,
//   zeros and f16 scales, dequantized here as round_T((q − z)·s), with the un-permuted activation), for every
//   group size, both schemes, act-order, f16 and bf16, bias, M ∈ {1, 7, 16, 33, 130}, N ∈ {64, 128},
//   K ∈ {128, 256}, with weights made by quantize_int4 on non-uniform f32 weights and packed by
//   marlin_from_int4, gptq_pack → gptq_to_marlin and awq_pack → awq_to_marlin; tolerance: one rounding of T.
//   And against the f32 weights within the derived quantization-error bound.
// - Golden: the Marlin tensors of tests/data/w4a16_golden.txt (independent numpy) through the plan with an
//   identity activation give w_deq bit for bit (f16; bf16 within the scale and weight roundings), and a
//   random activation matches the double product with w_deq.
// - Every select / can_implement / run rejection, empty problems, the workspace.
// - Devices/Int4GemmOnDevice (sim, cuda): the device against the host (cuda skipped with
//   the reason when no GPU is usable or the library has no CUDA kernels), within the derived
//   f32-accumulation tolerance.
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
const int64_t kGroups[] = {-1, 32, 64, 128};

template <class T>
void host_sweep() {
  uint64_t seed = 1;
  for (const NK& nk : kNKs)
    for (int64_t group : kGroups)
      for (Int4Scheme scheme : {Int4Scheme::Symmetric, Int4Scheme::Asymmetric})
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
  for (Int4Scheme scheme : {Int4Scheme::Symmetric, Int4Scheme::Asymmetric})
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

// The deterministic claim: two runs give the same bits.
TEST(Int4MarlinGemm, Deterministic) {
  const Weights W = make_weights(256, 128, 32, Int4Scheme::Asymmetric, true, 31);
  const HostProblem<__half> p(W, W.marlin, 33, true, 3);
  const std::vector<__half> c1 = run_host(p), c2 = run_host(p);
  ASSERT_EQ(c1.size(), c2.size());
  EXPECT_EQ(std::memcmp(c1.data(), c2.data(), c1.size() * 2), 0);
}

// ------------------------------------------------------------- the tensor-core kernel: sim / cuda vs host

DeviceTensor upload(const Stream& st, const DynTensor& host_view, int64_t storage_elems) {
  Strided l;
  for (int i = 0; i < host_view.rank(); ++i) l.stride[i] = host_view.stride[i];
  const size_t bytes = static_cast<size_t>(storage_elems) * (element_bits(host_view.kind) / 8);
  const auto* p = static_cast<const uint8_t*>(host_view.data);
  auto t =
      make_device_tensor(st, host_view.kind, host_view.shape, l, std::vector<uint8_t>(p, p + bytes), storage_elems);
  EXPECT_TRUE(t.is_ok()) << t.error().to_string();
  return std::move(t).value();
}

class Int4GemmOnDevice : public ::testing::TestWithParam<DeviceKind> {};

struct DeviceCase {
  int64_t m, n, k, group;
  Int4Scheme scheme;
  bool act, bias;
  int64_t pad;
};

template <class T>
void device_case(const Stream& dev, const DeviceCase& dc, uint64_t seed) {
  SCOPED_TRACE(std::string(name_t<T>()) + " M=" + std::to_string(dc.m) + " N=" + std::to_string(dc.n) +
               " K=" + std::to_string(dc.k) + " group=" + std::to_string(dc.group) +
               (dc.scheme == Int4Scheme::Symmetric ? " sym" : " asym") + (dc.act ? " act_order" : "") +
               (dc.bias ? " bias" : "") + (dc.pad ? " padded" : ""));
  const Weights W = make_weights(dc.k, dc.n, dc.group, dc.scheme, dc.act, seed);
  const HostProblem<T> p(W, W.marlin, dc.m, dc.bias, seed + 1, dc.pad);
  const std::vector<T> want = run_host(p);
  ASSERT_FALSE(want.empty());
  std::vector<double> y, abs_sum;
  recompute(p, logical_weight_t<T>(W.logical), &y, &abs_sum);

  auto plan = dynamic::Int4MarlinGemmPlan::select(dev, p.desc);
  ASSERT_TRUE(plan.is_ok()) << plan.error().to_string();
  EXPECT_TRUE(plan->precision_guarantee().deterministic);
  Arr<T> c0(static_cast<size_t>(dc.m * p.ldc), to_t<T>(-768.0f));
  const Int4GemmTensors ht = p.tensors(c0.data());
  const int64_t G = p.desc.weight_shape().num_groups();
  DeviceTensor da = upload(dev, ht.a, dc.m * p.lda);
  DeviceTensor db = upload(dev, ht.b_q, dc.k / 16 * 2 * dc.n);
  DeviceTensor ds = upload(dev, ht.scales, G * dc.n);
  DeviceTensor dc_ = upload(dev, ht.c, dc.m * p.ldc);
  std::optional<DeviceTensor> dz, dp, dbias;
  Int4GemmTensors t{da.view, db.view, ds.view, {}, {}, {}, dc_.view};
  if (ht.zeros.data) dz = upload(dev, ht.zeros, G * dc.n / 8), t.zeros = dz->view;
  if (ht.perm.data) dp = upload(dev, ht.perm, dc.k), t.perm = dp->view;
  if (ht.bias.data) dbias = upload(dev, ht.bias, dc.n), t.bias = dbias->view;
  auto ws = Buffer::allocate(dev, plan->workspace_size());
  ASSERT_TRUE(ws.is_ok());
  const Status st = plan->run(dev, Workspace(ws->data(), plan->workspace_size()), t);
  ASSERT_TRUE(st.is_ok()) << st.error().to_string();
  const std::vector<uint8_t> got_bytes = download(dc_);
  ASSERT_GE(got_bytes.size(), want.size() * sizeof(T));
  // Tolerance: the device sums the exact f32 products in f32 (error ≤ (K + 1)·2⁻²⁴·Σ|a·w| with the bias
  // addition), the host in double (error negligible); both round once to T. So
  // |dev − host| ≤ E + u_T·(|host| + |dev|) with E = (K + 2)·2⁻²⁴·(Σ|a·w| + |bias|).
  const double u = unit_roundoff_t<T>();
  for (int64_t m = 0; m < dc.m; ++m)
    for (int64_t n = 0; n < p.ldc; ++n) {
      T g;
      std::memcpy(&g, got_bytes.data() + (m * p.ldc + n) * sizeof(T), sizeof(T));
      const double got = from_t<T>(g), host = from_t<T>(want[m * p.ldc + n]);
      if (n >= dc.n) {
        ASSERT_EQ(got, -768.0) << "the padding of c was written at m=" << m << " n=" << n;
        continue;
      }
      const double E = (dc.k + 2) * 0x1p-24 * abs_sum[m * dc.n + n];
      ASSERT_LE(std::fabs(got - host), E + u * (std::fabs(host) + std::fabs(got)) + abs_floor_t<T>())
          << "m=" << m << " n=" << n << " device " << got << " host " << host;
    }
}

TEST_P(Int4GemmOnDevice, MatchesHost) {
  BARACUDA_TEST_STREAM(stream, GetParam());
  auto probe = dynamic::Int4MarlinGemmPlan::select(stream, Int4GemmDescriptor{}.with_shape(1, 64, 128));
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(probe, GetParam());
  ASSERT_TRUE(probe.is_ok()) << probe.error().to_string();
  // Small shapes (sim runs threads as fibers); every group size, both schemes, act-order, bias, M not a
  // multiple of 16 and in each of the kernel's row-block sizes (16, 32, 64 rows), padded row strides, K long
  // enough (384, 512) for the 4-stage pipeline to wrap around its buffers, and K split into parts.
  const DeviceCase cases[] = {
      {1, 64, 128, 128, Int4Scheme::Symmetric, false, false, 0},
      {7, 128, 256, 32, Int4Scheme::Symmetric, true, true, 8},
      {16, 64, 256, 64, Int4Scheme::Asymmetric, false, true, 0},
      {33, 128, 128, -1, Int4Scheme::Asymmetric, true, false, 0},
      {5, 64, 256, 128, Int4Scheme::Asymmetric, true, true, 16},
      {17, 128, 256, -1, Int4Scheme::Symmetric, false, true, 0},
      {2, 64, 128, 32, Int4Scheme::Asymmetric, false, false, 8},
      {9, 64, 256, 64, Int4Scheme::Symmetric, true, false, 0},
      {3, 64, 512, 128, Int4Scheme::Symmetric, false, false, 0},
      {20, 64, 384, 64, Int4Scheme::Asymmetric, true, true, 8},
      // K cut into parts (tables.hpp's int4_gemm_splits: 2, 4 and 3 here), with act-order and bias.
      {1, 64, 1024, 128, Int4Scheme::Asymmetric, true, true, 0},
      {2, 128, 768, 64, Int4Scheme::Symmetric, false, true, 8},
  };
  uint64_t seed = 500;
  for (const DeviceCase& dc : cases) {
    device_case<__half>(stream, dc, seed++);
    if (HasFatalFailure()) return;
    device_case<__nv_bfloat16>(stream, dc, seed++);
    if (HasFatalFailure()) return;
  }
}

TEST_P(Int4GemmOnDevice, EmptyProblem) {
  BARACUDA_TEST_STREAM(stream, GetParam());
  auto plan = dynamic::Int4MarlinGemmPlan::select(stream, Int4GemmDescriptor{}.with_shape(0, 64, 128));
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(plan, GetParam());
  ASSERT_TRUE(plan.is_ok()) << plan.error().to_string();
  auto c = Buffer::allocate(stream, 16);
  auto a = Buffer::allocate(stream, 16);
  ASSERT_TRUE(c.is_ok() && a.is_ok());
  Int4GemmTensors t;
  t.a = DynTensor::dense(a->data(), ElementKind::F16, Shape{0, 128});
  t.b_q = DynTensor::dense(a->data(), ElementKind::S32, Shape{8, 128});  // not read
  t.scales = DynTensor::dense(a->data(), ElementKind::F16, Shape{1, 64});
  t.c = DynTensor::dense(c->data(), ElementKind::F16, Shape{0, 64});
  EXPECT_TRUE(plan->run(stream, {}, t).is_ok());
}

// The split-K rule (a function of the problem only) and the workspace it gives on the devices.
TEST(Int4MarlinGemm, SplitKRuleAndWorkspace) {
  EXPECT_EQ(detail::int4_gemm_splits(1, 4096, 4096), 5);     // 64 blocks → 5 parts for 264 blocks
  EXPECT_EQ(detail::int4_gemm_splits(16, 8192, 8192), 3);    // 128 blocks
  EXPECT_EQ(detail::int4_gemm_splits(1, 11008, 4096), 2);    // 172 blocks
  EXPECT_EQ(detail::int4_gemm_splits(128, 4096, 4096), 2);   // the partial sums' traffic bound K / 16M
  EXPECT_EQ(detail::int4_gemm_splits(2048, 4096, 4096), 1);  // enough blocks
  EXPECT_EQ(detail::int4_gemm_splits(1, 64, 128), 1);        // fewer than 4 slices per part
  EXPECT_EQ(detail::int4_gemm_splits(1, 64, 1024), 4);       // at most K / 256 parts
  // sim: splits·M·N·4 bytes after act-order's permuted activation (rounded up to 256 bytes); host: none.
  const Int4GemmDescriptor d = Int4GemmDescriptor{}.with_shape(1, 64, 1024).with_group(128);
  auto sim = dynamic::Int4MarlinGemmPlan::select(Stream::sim(), d);
  ASSERT_TRUE(sim.is_ok());
  EXPECT_EQ(sim->workspace_size(), 4u * 64u * 4u);
  auto sim_act = dynamic::Int4MarlinGemmPlan::select(Stream::sim(), Int4GemmDescriptor(d).with_act_order());
  ASSERT_TRUE(sim_act.is_ok());
  EXPECT_EQ(sim_act->workspace_size(), 2048u + 4u * 64u * 4u);
  auto host = dynamic::Int4MarlinGemmPlan::select(Stream::host(), d);
  ASSERT_TRUE(host.is_ok());
  EXPECT_EQ(host->workspace_size(), 0u);
  // run on sim: the partial sums need their workspace, which must overlap no tensor.
  Arr<__half> a(1024, __float2half(1.0f)), scales(8 * 64, __float2half(0.5f)), c(64);
  Arr<int32_t> b_q(64 * 128, 0x12345678);
  Int4GemmTensors t;
  t.a = mat(a.data(), ElementKind::F16, 1, 1024, 1024);
  t.b_q = DynTensor::dense(b_q.data(), ElementKind::S32, Shape{64, 128});
  t.scales = DynTensor::dense(scales.data(), ElementKind::F16, Shape{8, 64});
  t.c = mat(c.data(), ElementKind::F16, 1, 64, 64);
  const size_t need = sim->workspace_size();
  Arr<uint8_t> ws(need);
  expect_error(sim->run(Stream::sim(), Workspace(ws.data(), need - 1), t), ErrorCode::WorkspaceTooSmall, "workspace");
  expect_error(sim->run(Stream::sim(), Workspace(b_q.data(), need), t), ErrorCode::InvalidProblem,
               "the workspace overlaps b_q");
  EXPECT_TRUE(sim->run(Stream::sim(), Workspace(ws.data(), need), t).is_ok());
}

INSTANTIATE_TEST_SUITE_P(Devices, Int4GemmOnDevice, ::testing::Values(DeviceKind::Sim, DeviceKind::Cuda),
                         [](const auto& info) { return std::string(to_string(info.param)); });

}  // namespace
}  // namespace baracuda::test
