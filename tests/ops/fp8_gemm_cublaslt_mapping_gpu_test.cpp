// The fp8_gemm family's cuBLASLt backend on a GPU (skipped without one, or without the cuda kernels): tensor scaling
// for every output kind and epilogue, Block128 on sm_90 (Unsupported elsewhere), the FP8 output's scale, saturation and
// amax, a run captured in a CUDA graph that re-reads its scales on replay, and run's rejections, each against the
// header's formula in double (fp8_gemm_cublaslt_test_support.hpp). Part of fp8_gemm_cublaslt_mapping_test.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "baracuda/core/stream.hpp"
#include "fp8_gemm_cublaslt_test_support.hpp"
#include "ops/fp8_gemm/cublaslt_fp8.hpp"

namespace baracuda::detail::cublaslt_fp8_test {
namespace {

using E = ElementKind;

/// A device copy of a host buffer of doubles in `kind` (fp8, 16-bit or f32), freed on scope exit.
struct DeviceBuffer {
  void* p = nullptr;
  size_t count = 0;
  E kind = E::F32;
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (p) cudaFree(p);
  }
  void upload(const std::vector<double>& v, E k) {
    kind = k, count = v.size();
    const size_t bytes = std::max<size_t>(count * static_cast<size_t>(element_bits(k) / 8), 16);
    std::vector<unsigned char> host(bytes);
    for (size_t i = 0; i < count; ++i) {
      const float x = static_cast<float>(v[i]);
      switch (k) {
        case E::Fp8E4M3:
          reinterpret_cast<__nv_fp8_e4m3*>(host.data())[i] = __nv_fp8_e4m3(x);
          break;
        case E::Fp8E5M2:
          reinterpret_cast<__nv_fp8_e5m2*>(host.data())[i] = __nv_fp8_e5m2(x);
          break;
        case E::F16:
          reinterpret_cast<__half*>(host.data())[i] = __float2half(x);
          break;
        case E::Bf16:
          reinterpret_cast<__nv_bfloat16*>(host.data())[i] = __float2bfloat16(x);
          break;
        default:
          reinterpret_cast<float*>(host.data())[i] = x;
      }
    }
    ASSERT_EQ(cudaMalloc(&p, bytes), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(p, host.data(), bytes, cudaMemcpyHostToDevice), cudaSuccess);
  }
  std::vector<double> download() const {
    const size_t bytes = count * static_cast<size_t>(element_bits(kind) / 8);
    std::vector<unsigned char> host(bytes);
    EXPECT_EQ(cudaMemcpy(host.data(), p, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
    std::vector<double> v(count);
    for (size_t i = 0; i < count; ++i) {
      switch (kind) {
        case E::Fp8E4M3:
          v[i] = static_cast<float>(reinterpret_cast<const __nv_fp8_e4m3*>(host.data())[i]);
          break;
        case E::Fp8E5M2:
          v[i] = static_cast<float>(reinterpret_cast<const __nv_fp8_e5m2*>(host.data())[i]);
          break;
        case E::F16:
          v[i] = __half2float(reinterpret_cast<const __half*>(host.data())[i]);
          break;
        case E::Bf16:
          v[i] = __bfloat162float(reinterpret_cast<const __nv_bfloat16*>(host.data())[i]);
          break;
        default:
          v[i] = reinterpret_cast<const float*>(host.data())[i];
      }
    }
    return v;
  }
};

#define BARACUDA_SKIP_WITHOUT_GPU()                                                                    \
  if (!CublasLtFp8Gemm::compiled_in()) GTEST_SKIP() << "built without the cuda kernels (no cuBLASLt)"; \
  if (!cuda_availability().usable) GTEST_SKIP() << "no usable GPU: " << cuda_availability().reason;    \
  if (cuda_device_info(0)->sm < 89) GTEST_SKIP() << "no FP8 tensor cores below compute capability 8.9"

int device_sm() { return cuda_device_info(0)->sm; }

/// The relative error one rounding to `k` may add.
double rounding(E k) {
  switch (k) {
    case E::Fp8E4M3:
      return 1.0 / 16;
    case E::Fp8E5M2:
      return 1.0 / 8;
    case E::Bf16:
      return 1.0 / 256;
    case E::F16:
      return 1.0 / 2048;
    default:
      return 0;
  }
}

/// The header's D and amax for `g` (direct), D saturated as an FP8 D is: d = sat(v·d_scale).
void expected(const HostFp8Gemm& g, std::vector<double>& want, double& want_amax) {
  direct(g, want, want_amax);
  const double max = g.l.d_kind == E::Fp8E4M3 ? 448.0 : g.l.d_kind == E::Fp8E5M2 ? 57344.0 : HUGE_VAL;
  for (double& x : want) x = std::clamp(x, -max, max);
}

void expect_near_all(const std::vector<double>& got, const std::vector<double>& want, double tol, const char* what) {
  ASSERT_EQ(got.size(), want.size());
  size_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (!(std::abs(got[i] - want[i]) <= tol * (1 + std::abs(want[i]))) && bad++ < 5)
      ADD_FAILURE() << what << "[" << i << "] = " << got[i] << ", want " << want[i];
  EXPECT_EQ(bad, 0u) << what;
}

/// The device copies of a HostFp8Gemm and its launch over them.
struct DeviceGemm {
  DeviceBuffer a, b, a_scale, b_scale, bias, d, d_scale, amax;
  Fp8GemmLaunch l;
  DeviceGemm(const HostFp8Gemm& g) : l(g.l) {
    a.upload(g.a, g.l.a_kind), b.upload(g.b, g.l.b_kind), a_scale.upload(g.a_scale, E::F32);
    b_scale.upload(g.b_scale, E::F32), bias.upload(g.bias, g.l.bias_kind), d.upload(g.d, g.l.d_kind);
    d_scale.upload(g.d_scale, E::F32), amax.upload({-1.0}, E::F32);
    l.a = a.p, l.b = b.p, l.d = d.p;
    l.a_scale = static_cast<const float*>(a_scale.p), l.b_scale = static_cast<const float*>(b_scale.p);
    l.bias = g.l.bias != nullptr ? bias.p : nullptr;
    l.d_scale = g.l.d_scale != nullptr ? static_cast<const float*>(d_scale.p) : nullptr;
    l.amax = g.l.amax != nullptr ? static_cast<float*>(amax.p) : nullptr;
  }
};

/// Runs `g` through the backend on the GPU (captured in a CUDA graph and replayed twice when `capture`) and compares D
/// and the amax with the header's formula within one rounding to D's kind (+ `extra` for GELU). A create that answers
/// Unsupported is reported and accepted only where `may_be_unsupported`.
void run_on_gpu(const HostFp8Gemm& g, double extra = 0, bool may_be_unsupported = false, bool capture = false) {
  std::vector<double> want;
  double want_amax = 0;
  expected(g, want, want_amax);
  DeviceGemm dev(g);
  auto lt = CublasLtFp8Gemm::create(0, device_sm(), dev.l, size_t{32} << 20);
  if (!lt && may_be_unsupported && lt.error().code == ErrorCode::Unsupported) {
    std::printf("[ note     ] %s\n", lt.error().to_string().c_str());
    return;
  }
  ASSERT_TRUE(lt) << lt.error().to_string();
  SCOPED_TRACE(to_string((*lt)->mapping()));
  DeviceBuffer ws;
  if ((*lt)->workspace_size() > 0) {
    ASSERT_EQ(cudaMalloc(&ws.p, (*lt)->workspace_size()), cudaSuccess);
  }
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  if (capture) {
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), cudaSuccess);
    const Status s = (*lt)->run(stream, dev.l, ws.p, (*lt)->workspace_size());
    ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
    ASSERT_TRUE(s) << s.to_string();
    ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
    ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    const double tol = rounding(g.l.d_kind) + extra;
    expect_near_all(dev.d.download(), want, tol, "D (first replay)");
    // New scales between replays: the graph re-reads them (the header's CUDA-graph promise).
    const float twice[] = {static_cast<float>(2 * g.a_scale[0])};
    if (g.l.scaling == Fp8GemmScaling::Tensor) {
      ASSERT_EQ(cudaMemcpy(dev.a_scale.p, twice, sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
      HostFp8Gemm g2 = g;
      g2.a_scale[0] = twice[0];
      expected(g2, want, want_amax);
    }
    ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
  } else {
    const Status s = (*lt)->run(stream, dev.l, ws.p, (*lt)->workspace_size());
    ASSERT_TRUE(s) << s.to_string();
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  }
  cudaStreamDestroy(stream);
  const double tol = rounding(g.l.d_kind) + extra;
  expect_near_all(dev.d.download(), want, tol, "D");
  if (g.l.amax != nullptr) expect_near_all(dev.amax.download(), {want_amax}, 1e-6 + extra, "amax");
}

TEST(CublasLtFp8GemmGpu, TensorScalingEveryOutputAndEpilogue) {
  BARACUDA_SKIP_WITHOUT_GPU();
  const Fp8Case shapes[] = {{16, 32, 64}, {5, 48, 64}, {1, 16, 32}, {33, 272, 160, 16, 32, 16}, {128, 256, 512}};
  for (const Fp8Case& cs : shapes)
    for (E d : {E::F32, E::Bf16, E::F16, E::Fp8E4M3, E::Fp8E5M2})
      for (LinearActivation act : {LinearActivation::None, LinearActivation::Relu, LinearActivation::GeluTanh}) {
        SCOPED_TRACE(::testing::Message() << "M=" << cs.m << " N=" << cs.n << " K=" << cs.k << " D=" << to_string(d)
                                          << " act=" << static_cast<int>(act));
        // e4m3 x e5m2 serves every output kind in cuBLASLt's FP8 table.
        HostFp8Gemm g = make_fp8_gemm(cs, E::Fp8E4M3, E::Fp8E5M2, d);
        g.l.alpha = 0.5;
        g.l.activation = act;
        if (is_fp8(d)) g.l.bias_kind = E::Bf16;
        const bool plain = act == LinearActivation::None && !is_fp8(d);
        g.bind(false, is_fp8(d));
        run_on_gpu(g, act == LinearActivation::GeluTanh ? 2e-3 : 0, !plain);
        g.bind(true, is_fp8(d));
        run_on_gpu(g, act == LinearActivation::GeluTanh ? 2e-3 : 0, true);
      }
}

TEST(CublasLtFp8GemmGpu, FastAccumAndE5m2Activations) {
  BARACUDA_SKIP_WITHOUT_GPU();
  HostFp8Gemm g = make_fp8_gemm({64, 128, 1024}, E::Fp8E5M2, E::Fp8E4M3, E::Bf16);
  g.l.fast_accum = true;  // small integers: exact either way
  run_on_gpu(g);
}

TEST(CublasLtFp8GemmGpu, Fp8OutputSaturatesAndAmaxPrecedesTheScale) {
  BARACUDA_SKIP_WITHOUT_GPU();
  HostFp8Gemm g = make_fp8_gemm({32, 64, 256}, E::Fp8E4M3, E::Fp8E4M3, E::Fp8E4M3);
  g.d_scale = {64.0};  // |v|·64 overflows e4m3's 448 for most elements
  g.bind(false, true);
  run_on_gpu(g);
}

TEST(CublasLtFp8GemmGpu, Block128OnHopperOnly) {
  BARACUDA_SKIP_WITHOUT_GPU();
  const Fp8Case shapes[] = {{8, 272, 512, 0, 0, 0, Fp8GemmScaling::Block128},
                            {64, 256, 1024, 16, 0, 0, Fp8GemmScaling::Block128},
                            {4, 128, 4096, 0, 0, 0, Fp8GemmScaling::Block128}};
  for (const Fp8Case& cs : shapes) {
    SCOPED_TRACE(::testing::Message() << "M=" << cs.m << " N=" << cs.n << " K=" << cs.k);
    HostFp8Gemm g = make_fp8_gemm(cs, E::Fp8E4M3, E::Fp8E4M3, E::Bf16);
    if (device_sm() != 90) {
      DeviceGemm dev(g);
      auto lt = CublasLtFp8Gemm::create(0, device_sm(), dev.l, size_t{32} << 20);
      ASSERT_FALSE(lt);
      EXPECT_EQ(lt.error().code, ErrorCode::Unsupported) << lt.error().to_string();
      continue;
    }
    run_on_gpu(g);
    g.l.activation = LinearActivation::Relu;
    g.bind(true, false);
    run_on_gpu(g, 0, /*may_be_unsupported=*/true);
  }
}

TEST(CublasLtFp8GemmGpu, GraphCaptureRereadsTheScales) {
  BARACUDA_SKIP_WITHOUT_GPU();
  HostFp8Gemm g = make_fp8_gemm({64, 128, 256}, E::Fp8E4M3, E::Fp8E4M3, E::Fp8E4M3);
  g.d_scale = {1.0 / 64};  // |v|·d_scale below e4m3's 448 before and after the scale doubles: D shows the new scale
  g.bind(true, true);
  run_on_gpu(g);  // loads the kernels before the capture
  run_on_gpu(g, 0, /*may_be_unsupported=*/false, /*capture=*/true);
}

TEST(CublasLtFp8GemmGpu, EmptyProblemZeroesTheAmax) {
  BARACUDA_SKIP_WITHOUT_GPU();
  HostFp8Gemm g = make_fp8_gemm({16, 32, 64}, E::Fp8E4M3, E::Fp8E4M3, E::Fp8E4M3);
  g.bind(false, true);
  DeviceGemm dev(g);
  dev.l.m = 0;
  auto lt = CublasLtFp8Gemm::create(0, device_sm(), dev.l, 0);
  ASSERT_TRUE(lt) << lt.error().to_string();
  ASSERT_TRUE((*lt)->run(nullptr, dev.l, nullptr, 0));
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(dev.amax.download(), std::vector<double>{0.0});  // was -1
}

TEST(CublasLtFp8GemmGpu, RunRejectsWhatCreateDidNotPlan) {
  BARACUDA_SKIP_WITHOUT_GPU();
  HostFp8Gemm g = make_fp8_gemm({64, 64, 64}, E::Fp8E4M3, E::Fp8E4M3, E::Bf16);
  g.bind(true, false);
  DeviceGemm dev(g);
  auto lt = CublasLtFp8Gemm::create(0, device_sm(), dev.l, size_t{32} << 20);
  ASSERT_TRUE(lt) << lt.error().to_string();
  EXPECT_LE((*lt)->workspace_size(), cublaslt_workspace_cap(device_sm()));
  Fp8GemmLaunch other = dev.l;
  other.lda = 128;  // another leading dimension than the one planned
  EXPECT_EQ((*lt)->run(nullptr, other, nullptr, 1 << 20).code(), ErrorCode::InvalidProblem);
  other = dev.l;
  other.a = static_cast<const char*>(dev.a.p) + 4;
  EXPECT_EQ((*lt)->run(nullptr, other, nullptr, 1 << 20).code(), ErrorCode::MisalignedOperand);
  other = dev.l;
  other.bias = nullptr;  // planned with a bias
  EXPECT_EQ((*lt)->run(nullptr, other, nullptr, 1 << 20).code(), ErrorCode::InvalidProblem);
  other = dev.l;
  other.fast_accum = true;
  EXPECT_EQ((*lt)->run(nullptr, other, nullptr, 1 << 20).code(), ErrorCode::InvalidProblem);
  if ((*lt)->workspace_size() > 0) {
    const Status s = (*lt)->run(nullptr, dev.l, nullptr, (*lt)->workspace_size() - 1);
    EXPECT_EQ(s.code(), ErrorCode::WorkspaceTooSmall) << s.to_string();
  }
}

}  // namespace
}  // namespace baracuda::detail::cublaslt_fp8_test
