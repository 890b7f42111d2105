// The gemm family's cuBLASLt backend on a GPU (skipped without one, or without the cuda kernels): every layout and
// epilogue against the direct computation of the launch, f16 inputs to f32 and TF32, in place, captured in a CUDA
// graph, bit-stable run to run, and run's rejections of what create did not plan. Part of cublaslt_mapping_test.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "baracuda/core/stream.hpp"
#include "cublaslt_test_support.hpp"
#include "ops/gemm/cublaslt.hpp"

namespace baracuda::detail::cublaslt_test {
namespace {

/// A device copy of a host buffer in `kind`, freed on scope exit.
struct DeviceBuffer {
  void* p = nullptr;
  size_t count = 0;
  ElementKind kind = ElementKind::F32;
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (p) cudaFree(p);
  }
  void upload(const std::vector<double>& v, ElementKind k) {
    kind = k, count = v.size();
    const size_t bytes = count * static_cast<size_t>(element_bits(k) / 8);
    std::vector<unsigned char> host(bytes);
    for (size_t i = 0; i < count; ++i) {
      if (k == ElementKind::F64)
        reinterpret_cast<double*>(host.data())[i] = v[i];
      else if (k == ElementKind::F32)
        reinterpret_cast<float*>(host.data())[i] = static_cast<float>(v[i]);
      else if (k == ElementKind::F16)
        reinterpret_cast<__half*>(host.data())[i] = __double2half(v[i]);
      else
        reinterpret_cast<__nv_bfloat16*>(host.data())[i] = __double2bfloat16(v[i]);
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
      if (kind == ElementKind::F64)
        v[i] = reinterpret_cast<const double*>(host.data())[i];
      else if (kind == ElementKind::F32)
        v[i] = reinterpret_cast<const float*>(host.data())[i];
      else if (kind == ElementKind::F16)
        v[i] = __half2float(reinterpret_cast<const __half*>(host.data())[i]);
      else
        v[i] = __bfloat162float(reinterpret_cast<const __nv_bfloat16*>(host.data())[i]);
    }
    return v;
  }
};

#define BARACUDA_SKIP_WITHOUT_GPU()                                                                 \
  if (!CublasLtGemm::compiled_in()) GTEST_SKIP() << "built without the cuda kernels (no cuBLASLt)"; \
  if (!cuda_availability().usable) GTEST_SKIP() << "no usable GPU: " << cuda_availability().reason

void expect_near_all(const std::vector<double>& got, const std::vector<double>& want, double tol, const char* what) {
  ASSERT_EQ(got.size(), want.size());
  size_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (!(std::abs(got[i] - want[i]) <= tol * (1 + std::abs(want[i]))) && bad++ < 5)
      ADD_FAILURE() << what << "[" << i << "] = " << got[i] << ", want " << want[i];
  EXPECT_EQ(bad, 0u) << what;
}

/// Runs `g` (its launch with the given optional operands) through the backend on the GPU, on `stream`, captured
/// in a CUDA graph when `capture`; compares D, aux and bias_grad with the direct computation. A create that
/// answers Unsupported is reported and accepted only where `may_be_unsupported`.
void run_on_gpu(HostGemm g, bool c, bool aux, bool bias, bool bgrad, double tol, bool may_be_unsupported = false,
                bool capture = false) {
  g.bind(c, aux, bias, bgrad);
  HostGemm want = g;
  direct(g.l, g, want);
  const ElementKind ab = g.l.ab, cd = g.l.cd;
  DeviceBuffer da, db, dc, dd, daux, dbias, dbg;
  da.upload(g.a, ab), db.upload(g.b, ab), dc.upload(g.c, cd), dd.upload(g.d, cd), daux.upload(g.aux, cd);
  dbias.upload(g.bias, cd), dbg.upload(g.bgrad, cd);
  GemmLaunch l = g.l;
  l.a.data = da.p, l.b.data = db.p, l.d.data = dd.p;
  l.c.data = c ? dc.p : nullptr, l.aux.data = aux ? daux.p : nullptr;
  l.bias.data = bias ? dbias.p : nullptr, l.bias_grad.data = bgrad ? dbg.p : nullptr;
  auto lt = CublasLtGemm::create(0, l, size_t{32} << 20);
  if (!lt && may_be_unsupported && lt.error().code == ErrorCode::Unsupported) {
    std::printf("[ note     ] %s\n", lt.error().to_string().c_str());
    return;
  }
  ASSERT_TRUE(lt) << lt.error().to_string();
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
    const Status s = (*lt)->run(stream, l, ws.p, (*lt)->workspace_size());
    ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
    ASSERT_TRUE(s) << s.to_string();
    ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
    ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
    ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);  // twice: the same D (β·C reads C, not D)
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
  } else {
    const Status s = (*lt)->run(stream, l, ws.p, (*lt)->workspace_size());
    ASSERT_TRUE(s) << s.to_string();
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  }
  cudaStreamDestroy(stream);
  SCOPED_TRACE(to_string((*lt)->mapping()));
  expect_near_all(dd.download(), want.d, tol, "D");
  expect_near_all(daux.download(), want.aux, tol, "aux");
  expect_near_all(dbg.download(), want.bgrad, tol, "bias_grad");
}

TEST(CublasLtGemmGpu, EveryLayoutAgainstTheDirectComputation) {
  BARACUDA_SKIP_WITHOUT_GPU();
  const Case shapes[] = {{3, 5, 7, 1},
                         {64, 48, 32, 1},
                         {1, 40, 16, 1},
                         {33, 40, 16, 3, false, false, 0, 'a'},
                         {17, 24, 8, 2, false, false, 0, 'b'}};
  for (ElementKind kind : {ElementKind::F32, ElementKind::F64, ElementKind::F16})
    for (Case cs : shapes)
      for (int layout = 0; layout < 4; ++layout)
        for (int64_t pad : {0, 8}) {
          cs.a_col_major = layout & 1, cs.b_col_major = layout & 2, cs.pad = pad;
          SCOPED_TRACE(::testing::Message() << to_string(kind) << " M=" << cs.m << " N=" << cs.n << " K=" << cs.k
                                            << " batch=" << cs.batch << " layout=" << layout << " pad=" << pad);
          HostGemm g = make_gemm(cs, kind);  // small integers: exact in every kind here
          g.l.alpha = 2, g.l.beta = -1;
          run_on_gpu(g, true, false, false, false, 0);
          g.l.beta = 0, g.l.activation = LinearActivation::Relu;
          run_on_gpu(g, false, false, true, false, 0, kind == ElementKind::F64);  // f64 epilogues: may be absent
          // cuBLASLt's GELU may use a fast tanh: the tolerance checks the mapping, not GELU's last bits.
          g.l.activation = LinearActivation::GeluTanh;
          run_on_gpu(g, false, (cs.n + pad) % 8 == 0, true, false, 2e-3, true);
          g.l.activation = LinearActivation::None;
          if (cs.batch == 1) run_on_gpu(g, false, false, false, true, 0, true);
        }
}

TEST(CublasLtGemmGpu, F16InputsToF32AndTf32) {
  BARACUDA_SKIP_WITHOUT_GPU();
  HostGemm g = make_gemm({40, 24, 16, 1, false, true}, ElementKind::F16);
  g.l.cd = ElementKind::F32;
  run_on_gpu(g, true, false, true, false, 0);
  HostGemm t = make_gemm({40, 24, 16, 1, false, true}, ElementKind::F32);
  t.l.tf32 = true;  // small integers are exact in TF32 too
  run_on_gpu(t, false, false, true, false, 0);
}

TEST(CublasLtGemmGpu, GraphCapture) {
  BARACUDA_SKIP_WITHOUT_GPU();
  HostGemm g = make_gemm({128, 96, 64, 2, false, true}, ElementKind::F16);
  g.l.beta = 1;
  run_on_gpu(g, true, false, true, false, 0, false, /*capture=*/false);  // loads the kernels before the capture
  run_on_gpu(g, true, false, true, false, 0, false, /*capture=*/true);
}

// D += A·B in place: C is D (same pointer and layout), β = 1.
TEST(CublasLtGemmGpu, InPlaceAccumulate) {
  BARACUDA_SKIP_WITHOUT_GPU();
  HostGemm g = make_gemm({32, 24, 16, 1, false, true}, ElementKind::F32);
  g.d = g.c;  // C and D have one layout (make_gemm): D starts as C
  g.l.beta = 1;
  g.bind(true, false, false, false);
  HostGemm want = g;
  direct(g.l, g, want);
  DeviceBuffer da, db, dd;
  da.upload(g.a, ElementKind::F32), db.upload(g.b, ElementKind::F32), dd.upload(g.d, ElementKind::F32);
  GemmLaunch l = g.l;
  l.a.data = da.p, l.b.data = db.p, l.c.data = dd.p, l.d.data = dd.p;
  auto lt = CublasLtGemm::create(0, l, size_t{32} << 20);
  ASSERT_TRUE(lt) << lt.error().to_string();
  DeviceBuffer ws;
  if ((*lt)->workspace_size() > 0) {
    ASSERT_EQ(cudaMalloc(&ws.p, (*lt)->workspace_size()), cudaSuccess);
  }
  const Status s = (*lt)->run(nullptr, l, ws.p, (*lt)->workspace_size());
  ASSERT_TRUE(s) << s.to_string();
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  expect_near_all(dd.download(), want.d, 0, "D");
}

// Random f16 data at a shape where split-K is likely: two runs give the same bits (the plan's determinism).
TEST(CublasLtGemmGpu, BitStableRunToRun) {
  BARACUDA_SKIP_WITHOUT_GPU();
  HostGemm g = make_gemm({16, 64, 8192, 1, false, true}, ElementKind::F16);
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  for (std::vector<double>* v : {&g.a, &g.b})
    for (double& x : *v) x = u(rng);
  g.bind(false, false, false, false);
  DeviceBuffer da, db, dd;
  da.upload(g.a, ElementKind::F16), db.upload(g.b, ElementKind::F16), dd.upload(g.d, ElementKind::F16);
  GemmLaunch l = g.l;
  l.a.data = da.p, l.b.data = db.p, l.d.data = dd.p;
  auto lt = CublasLtGemm::create(0, l, size_t{32} << 20);
  ASSERT_TRUE(lt) << lt.error().to_string();
  DeviceBuffer ws;
  if ((*lt)->workspace_size() > 0) {
    ASSERT_EQ(cudaMalloc(&ws.p, (*lt)->workspace_size()), cudaSuccess);
  }
  std::vector<double> first;
  for (int run = 0; run < 2; ++run) {
    const Status s = (*lt)->run(nullptr, l, ws.p, (*lt)->workspace_size());
    ASSERT_TRUE(s) << s.to_string();
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    if (run == 0) {
      first = dd.download();
    } else {
      EXPECT_EQ(dd.download(), first) << "workspace " << (*lt)->workspace_size();
    }
  }
}

TEST(CublasLtGemmGpu, RunRejectsWhatCreateDidNotPlan) {
  BARACUDA_SKIP_WITHOUT_GPU();
  HostGemm g = make_gemm({64, 64, 64, 1, false, false}, ElementKind::F32);
  g.bind(false, false, true, false);
  DeviceBuffer da, db, dd, dbias;
  da.upload(g.a, ElementKind::F32), db.upload(g.b, ElementKind::F32), dd.upload(g.d, ElementKind::F32);
  dbias.upload(g.bias, ElementKind::F32);
  GemmLaunch l = g.l;
  l.a.data = da.p, l.b.data = db.p, l.d.data = dd.p, l.bias.data = dbias.p;
  auto lt = CublasLtGemm::create(0, l, size_t{32} << 20);
  ASSERT_TRUE(lt) << lt.error().to_string();
  EXPECT_LE((*lt)->workspace_size(), cublaslt_workspace_cap(cuda_device_info(0)->sm));
  GemmLaunch other = l;
  other.a.row = 128;  // another leading dimension than the one planned
  EXPECT_EQ((*lt)->run(nullptr, other, nullptr, 1 << 20).code(), ErrorCode::InvalidProblem);
  other = l;
  other.a.data = static_cast<const char*>(da.p) + 4;
  EXPECT_EQ((*lt)->run(nullptr, other, nullptr, 1 << 20).code(), ErrorCode::MisalignedOperand);
  other = l;
  other.bias.data = nullptr;  // planned with a bias
  EXPECT_EQ((*lt)->run(nullptr, other, nullptr, 1 << 20).code(), ErrorCode::InvalidProblem);
  other = l;
  other.beta = 1;  // β without C
  EXPECT_EQ((*lt)->run(nullptr, other, nullptr, 1 << 20).code(), ErrorCode::InvalidProblem);
  if ((*lt)->workspace_size() > 0) {
    const Status s = (*lt)->run(nullptr, l, nullptr, (*lt)->workspace_size() - 1);
    EXPECT_EQ(s.code(), ErrorCode::WorkspaceTooSmall) << s.to_string();
  }
}

}  // namespace
}  // namespace baracuda::detail::cublaslt_test
