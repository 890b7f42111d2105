// GemmPlan's run captured in a CUDA graph (cuda only; skipped without a GPU): the default plan (cuBLASLt) and the
// bespoke kernels allocate nothing and synchronise nothing in run, so a captured run replayed twice gives the
// contract's values (gemm_test_support.hpp's bound), and on the bespoke kernels the same bits as an uncaptured run.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gemm_test_support.hpp"
#include "support/devices.hpp"

namespace baracuda::test::gemm {
namespace {

TEST(GemmCuda, RunCapturedInACudaGraph) {
  BARACUDA_TEST_STREAM(any, DeviceKind::Cuda);
  cudaStream_t raw = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&raw, cudaStreamNonBlocking), cudaSuccess);
  auto st = Stream::cuda(any.device_index(), raw);
  ASSERT_TRUE(st.is_ok()) << st.error().to_string();
  const auto g = GemmDescriptor{}
                     .with_shape(64, 96, 128)
                     .with_kinds(ElementKind::Bf16, ElementKind::Bf16)
                     .with_layouts(MatrixLayout::RowMajor, MatrixLayout::ColMajor)
                     .with_bias()
                     .with_activation(LinearActivation::GeluTanh)
                     .with_alpha_beta(1.0, 0.5);
  const Data x(g, 11);
  for (bool bespoke : {false, true}) {
    SCOPED_TRACE(bespoke ? "bespoke" : "default");
    auto plan = dynamic::GemmPlan::select(
        *st, g, bespoke ? PlanPreference{}.with_backend(BackendKind::Bespoke) : PlanPreference{});
    BARACUDA_SKIP_IF_NO_CUDA_KERNELS(plan, DeviceKind::Cuda);
    ASSERT_TRUE(plan.is_ok()) << plan.error().to_string();
    auto up = [&](const std::vector<uint8_t>& s) {
      auto b = Buffer::allocate(*st, s.size());
      EXPECT_TRUE(b.is_ok());
      EXPECT_TRUE(b->copy_from_host(s.data(), s.size()).is_ok());
      return std::move(b).value();
    };
    Buffer a = up(x.sa), b = up(x.sb), c = up(x.sc), bias = up(x.sbias), d = up(x.sd), d2 = up(x.sd);
    auto ws = Buffer::allocate(*st, plan->workspace_size());
    ASSERT_TRUE(ws.is_ok());
    auto args = [&](Buffer& out) {
      dynamic::GemmArgs t;
      t.a = x.view<ConstDynTensor>(static_cast<const void*>(a.data()), g.input, x.a);
      t.b = x.view<ConstDynTensor>(static_cast<const void*>(b.data()), g.input, x.b);
      t.c = x.view<ConstDynTensor>(static_cast<const void*>(c.data()), g.output, x.c);
      t.bias = ConstDynTensor::dense(bias.data(), g.output, Shape{g.n});
      t.d = x.view<DynTensor>(out.data(), g.output, x.d);
      return t;
    };
    ASSERT_TRUE(st->synchronize().is_ok());
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    ASSERT_EQ(cudaStreamBeginCapture(raw, cudaStreamCaptureModeThreadLocal), cudaSuccess);
    const Status s = plan->run(*st, ws->as_workspace(), args(d));
    ASSERT_EQ(cudaStreamEndCapture(raw, &graph), cudaSuccess);
    ASSERT_TRUE(s.is_ok()) << s.to_string();
    ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
    ASSERT_EQ(cudaGraphLaunch(exec, raw), cudaSuccess);
    ASSERT_EQ(cudaGraphLaunch(exec, raw), cudaSuccess);
    ASSERT_TRUE(plan->run(*st, ws->as_workspace(), args(d2)).is_ok());  // uncaptured
    ASSERT_EQ(cudaStreamSynchronize(raw), cudaSuccess);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    Outputs o{x.sd, x.saux, x.sbg};
    std::vector<uint8_t> direct(x.sd.size());
    ASSERT_TRUE(d.copy_to_host(o.d.data(), o.d.size()).is_ok());
    ASSERT_TRUE(d2.copy_to_host(direct.data(), direct.size()).is_ok());
    const bool lt = plan->sku().backend == BackendKind::CublasLt;
    check_outputs(x, o, kernel_unit(g.input), lt ? "cublaslt" : "bespoke", false, lt ? kCublasLtEpilogueUlps : 0);
    if (bespoke) EXPECT_EQ(o.d, direct) << "the captured run differs from an uncaptured one";
  }
  cudaStreamDestroy(raw);
}

}  // namespace
}  // namespace baracuda::test::gemm
