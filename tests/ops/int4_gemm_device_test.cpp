// Int4MarlinGemmPlan's tensor-core kernel on sim and cuda against the host (cuda skipped with the reason when
// no GPU is usable or the library has no CUDA kernels), within the derived f32-accumulation tolerance; the
// split-K rule and its workspace.
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

// ------------------------------------------------------------- the tensor-core kernel: sim / cuda vs host

DeviceTensor upload(const Stream& st, const ConstDynTensor& host_view, int64_t storage_elems) {
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
  const dynamic::Int4MarlinGemmArgs ht = p.tensors(c0.data());
  const int64_t G = p.desc.weight_shape().num_groups();
  DeviceTensor da = upload(dev, ht.a, dc.m * p.lda);
  DeviceTensor db = upload(dev, ht.b_q, dc.k / 16 * 2 * dc.n);
  DeviceTensor ds = upload(dev, ht.scales, G * dc.n);
  DeviceTensor dc_ = upload(dev, ht.c, dc.m * p.ldc);
  std::optional<DeviceTensor> dz, dp, dbias;
  dynamic::Int4MarlinGemmArgs t{da.view, db.view, ds.view, {}, {}, {}, dc_.view};
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
  // enough (512, 768, 1024) for the 3-stage pipeline of 128-row slices to wrap around its buffers, and K
  // split into parts.
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
      // K cut into parts (tables.hpp's int4_gemm_splits: 2, 3 and 4 here), with act-order and bias.
      {1, 64, 1024, 128, Int4Scheme::Asymmetric, true, true, 0},
      {2, 128, 1536, 64, Int4Scheme::Symmetric, false, true, 8},
      {3, 64, 2048, 32, Int4Scheme::Symmetric, true, false, 8},  // 4 parts, 4 slices each
  };
  uint64_t seed = 500;
  for (const DeviceCase& dc : cases)
    if (!check_f16_and_bf16(seed, [&]<class T>(uint64_t s) { device_case<T>(stream, dc, s); })) return;
}

TEST_P(Int4GemmOnDevice, EmptyProblem) {
  BARACUDA_TEST_STREAM(stream, GetParam());
  auto plan = dynamic::Int4MarlinGemmPlan::select(stream, Int4GemmDescriptor{}.with_shape(0, 64, 128));
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(plan, GetParam());
  ASSERT_TRUE(plan.is_ok()) << plan.error().to_string();
  auto c = Buffer::allocate(stream, 16);
  auto a = Buffer::allocate(stream, 16);
  ASSERT_TRUE(c.is_ok() && a.is_ok());
  dynamic::Int4MarlinGemmArgs t;
  t.a = ConstDynTensor::dense(a->data(), ElementKind::F16, Shape{0, 128});
  t.b_q = ConstDynTensor::dense(a->data(), ElementKind::S32, Shape{8, 128});  // not read
  t.scales = ConstDynTensor::dense(a->data(), ElementKind::F16, Shape{1, 64});
  t.c = DynTensor::dense(c->data(), ElementKind::F16, Shape{0, 64});
  EXPECT_TRUE(plan->run(stream, {}, t).is_ok());
}

// The split-K rule (a function of the problem only) and the workspace it gives on the devices.
TEST(Int4MarlinGemm, SplitKRuleAndWorkspace) {
  EXPECT_EQ(detail::int4_gemm_splits(1, 4096, 4096), 8);     // 32 blocks of 128 columns → 8 parts (K / 512)
  EXPECT_EQ(detail::int4_gemm_splits(16, 8192, 8192), 5);    // 64 blocks
  EXPECT_EQ(detail::int4_gemm_splits(1, 11008, 4096), 4);    // 86 blocks
  EXPECT_EQ(detail::int4_gemm_splits(128, 4096, 4096), 2);   // the partial sums' traffic bound K / 16M
  EXPECT_EQ(detail::int4_gemm_splits(2048, 4096, 4096), 1);  // enough blocks
  EXPECT_EQ(detail::int4_gemm_splits(1, 64, 128), 1);        // fewer than 4 slices per part
  EXPECT_EQ(detail::int4_gemm_splits(1, 64, 1024), 2);       // at most K / 512 parts (128-row slices)
  // sim: splits·M·N·4 bytes after act-order's permuted activation (rounded up to 256 bytes); host: none.
  const Int4GemmDescriptor d = Int4GemmDescriptor{}.with_shape(1, 64, 1024).with_group(128);
  auto sim = dynamic::Int4MarlinGemmPlan::select(Stream::sim(), d);
  ASSERT_TRUE(sim.is_ok());
  EXPECT_EQ(sim->workspace_size(), 2u * 64u * 4u);
  auto sim_act = dynamic::Int4MarlinGemmPlan::select(Stream::sim(), Int4GemmDescriptor(d).with_act_order());
  ASSERT_TRUE(sim_act.is_ok());
  EXPECT_EQ(sim_act->workspace_size(), 2048u + 2u * 64u * 4u);
  auto host = dynamic::Int4MarlinGemmPlan::select(Stream::host(), d);
  ASSERT_TRUE(host.is_ok());
  EXPECT_EQ(host->workspace_size(), 0u);
  // run on sim: the partial sums need their workspace, which must overlap no tensor.
  Arr<__half> a(1024, __float2half(1.0f)), scales(8 * 64, __float2half(0.5f)), c(64);
  Arr<int32_t> b_q(64 * 128, 0x12345678);
  dynamic::Int4MarlinGemmArgs t;
  t.a = mat(a.data(), ElementKind::F16, 1, 1024, 1024);
  t.b_q = ConstDynTensor::dense(b_q.data(), ElementKind::S32, Shape{64, 128});
  t.scales = ConstDynTensor::dense(scales.data(), ElementKind::F16, Shape{8, 64});
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
