// GroupedGemmPlan's run captured in a CUDA graph (cuda only; skipped without a GPU). The kernel reads the
// offsets from device memory when it runs, never the host when run is called: so a graph captured with one
// routing, replayed after new offsets are copied into the same buffer, computes the new routing's groups (the
// MoE pattern of a captured decode step), and gives the same bits as an uncaptured run with those offsets.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "grouped_gemm_test_support.hpp"
#include "support/devices.hpp"

namespace baracuda::test::grouped_gemm {
namespace {

TEST(GroupedGemmCuda, CapturedRunReadsTheOffsetsAtReplay) {
  BARACUDA_TEST_STREAM(any, DeviceKind::Cuda);
  cudaStream_t raw = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&raw, cudaStreamNonBlocking), cudaSuccess);
  // Destroyed last, after every Buffer allocated on it (their cudaFreeAsync needs the stream: buffer.hpp). This
  // test used to destroy it first; the executable crashed on an H100 (docs/perf/2026-11-27-h100, the likely cause).
  struct StreamGuard {
    cudaStream_t s;
    ~StreamGuard() { cudaStreamDestroy(s); }
  } guard{raw};
  auto st = Stream::cuda(any.device_index(), raw);
  ASSERT_TRUE(st.is_ok()) << st.error().to_string();
  // Two routings of the same 150 tokens over 4 experts (the same x, w and bias: same shapes, same seed).
  const Problem first =
      Problem::of_sizes({100, 0, 20, 30}, 72, 64, ElementKind::Bf16, ElementKind::Bf16, true, ElementKind::S32);
  const Problem second =
      Problem::of_sizes({3, 130, 0, 17}, 72, 64, ElementKind::Bf16, ElementKind::Bf16, true, ElementKind::S32);
  const Data d1(first, 5), d2(second, 5);
  ASSERT_EQ(d1.x, d2.x);
  ASSERT_EQ(d1.w, d2.w);
  auto plan = dynamic::GroupedGemmPlan::select(*st, first.g);
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(plan, DeviceKind::Cuda);
  ASSERT_TRUE(plan.is_ok()) << plan.error().to_string();
  auto up = [&](const std::vector<uint8_t>& s) {
    auto b = Buffer::allocate(*st, s.size());
    EXPECT_TRUE(b.is_ok());
    EXPECT_TRUE(b->copy_from_host(s.data(), s.size()).is_ok());
    return std::move(b).value();
  };
  Buffer x = up(d1.x), w = up(d1.w), off = up(d1.off), bias = up(d1.bias), y = up(d1.y), y2 = up(d1.y);
  const GroupedGemmDescriptor& g = first.g;
  auto args = [&](Buffer& out) {
    dynamic::GroupedGemmArgs a;
    a.x = ConstDynTensor::dense(static_cast<const void*>(x.data()), g.input, Shape{g.total_m, g.k});
    a.w = ConstDynTensor::dense(static_cast<const void*>(w.data()), g.input, Shape{g.groups, g.n, g.k});
    a.offsets = ConstDynTensor::dense(static_cast<const void*>(off.data()), g.offsets, Shape{g.groups + 1});
    a.bias = ConstDynTensor::dense(static_cast<const void*>(bias.data()), g.output, Shape{g.groups, g.n});
    a.y = DynTensor::dense(out.data(), g.output, Shape{g.total_m, g.n});
    return a;
  };
  ASSERT_TRUE(st->synchronize().is_ok());
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaStreamBeginCapture(raw, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  const Status s = plan->run(*st, {}, args(y));
  ASSERT_EQ(cudaStreamEndCapture(raw, &graph), cudaSuccess);
  ASSERT_TRUE(s.is_ok()) << s.to_string();
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, raw), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(raw), cudaSuccess);
  std::vector<uint8_t> got(d1.y.size());
  ASSERT_TRUE(y.copy_to_host(got.data(), got.size()).is_ok());
  check_y(d1, got, "replay with the first routing");
  // New routing, copied into the captured offsets buffer; the same graph replayed.
  ASSERT_TRUE(off.copy_from_host(d2.off.data(), d2.off.size()).is_ok());
  ASSERT_TRUE(y.copy_from_host(d2.y.data(), d2.y.size()).is_ok());
  ASSERT_TRUE(st->synchronize().is_ok());
  ASSERT_EQ(cudaGraphLaunch(exec, raw), cudaSuccess);
  ASSERT_TRUE(plan->run(*st, {}, args(y2)).is_ok());  // uncaptured, the second routing
  ASSERT_EQ(cudaStreamSynchronize(raw), cudaSuccess);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  std::vector<uint8_t> replayed(d2.y.size()), direct(d2.y.size());
  ASSERT_TRUE(y.copy_to_host(replayed.data(), replayed.size()).is_ok());
  ASSERT_TRUE(y2.copy_to_host(direct.data(), direct.size()).is_ok());
  EXPECT_EQ(check_y(d2, replayed, "replay with the second routing"), 150 * 72);
  EXPECT_EQ(replayed, direct) << "the replay differs from an uncaptured run";
}

}  // namespace
}  // namespace baracuda::test::grouped_gemm
