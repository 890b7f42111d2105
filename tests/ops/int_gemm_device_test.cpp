// The int8 tensor-core kernel on sim (and cuda when a GPU is usable) against the host, bit for bit (IntGemm on
// ragged shapes; the linear epilogues without activation and with ReLU), within a few ulps for SiLU/GELU
// (libm); split-K decode and its workspace's rejections.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "int_gemm_test_support.hpp"

namespace baracuda::test {
namespace {

// ------------------------------------------------------------- the tensor-core kernel: sim / cuda vs host

size_t element_bytes(ElementKind k) { return static_cast<size_t>(element_bits(k) / 8); }

/// Uploads `rows` rows of `ld` elements (row stride `ld`, view [rows, cols]) from host memory.
DeviceTensor upload_mat(const Stream& st, ElementKind k, int64_t rows, int64_t cols, int64_t ld, const void* host) {
  Strided l;
  l.stride[0] = ld, l.stride[1] = 1;
  const size_t nbytes = static_cast<size_t>(rows * ld) * element_bytes(k);
  const auto* c = static_cast<const uint8_t*>(host);
  auto t = make_device_tensor(st, k, Shape{rows, cols}, l, std::vector<uint8_t>(c, c + nbytes), rows * ld);
  EXPECT_TRUE(t.is_ok()) << t.error().to_string();
  return std::move(t).value();
}
DeviceTensor upload_vec(const Stream& st, ElementKind k, int64_t n, const void* host) {
  Strided l;
  l.stride[0] = 1;
  const auto* c = static_cast<const uint8_t*>(host);
  auto t = make_device_tensor(st, k, Shape{n}, l,
                              std::vector<uint8_t>(c, c + static_cast<size_t>(n) * element_bytes(k)), n);
  EXPECT_TRUE(t.is_ok()) << t.error().to_string();
  return std::move(t).value();
}

class IntGemmOnDevice : public ::testing::TestWithParam<DeviceKind> {};

/// The bespoke kernels on `st`: by preference on cuda, where cuBLASLt is the default (int_gemm.hpp).
PlanPreference bespoke_on(const Stream& st) {
  return st.device() == DeviceKind::Cuda ? PlanPreference{}.with_backend(BackendKind::Bespoke) : PlanPreference{};
}

// Every tile of the set (tuning.hpp: decode M ≤ 16, medium M ≤ 128, large), at its M bounds, with ragged
// edges, and with K long enough for the pipeline to wrap around its stages (decode 4 × 256, medium 3 × 128,
// large 3 × 64 bytes of K per round).
const GemmShape kDeviceShapes[] = {{1, 1, 16},      {1, 1, 32},     {17, 33, 64},    {129, 65, 96},
                                   {1, 70, 96},     {40, 100, 48},  {33, 129, 16},   {5, 7, 16 * 13},
                                   {64, 64, 160},   {16, 65, 272},  {1, 40, 1040},   {128, 33, 48},
                                   {33, 70, 400},   {130, 40, 272}};

/// o.c set to the host plan's result: the reference every device run is compared with.
template <class TA, class TB>
void host_reference(const GemmOperands<TA, TB>& o) {
  auto hp = dynamic::IntGemmPlan::select(Stream::host(), o.descriptor());
  ASSERT_TRUE(hp.is_ok());
  ASSERT_TRUE(hp->run(Stream::host(), {}, o.args()).is_ok());
}

/// Runs `plan` on `dev` over o's a and b into a c whose rows, padding included, start as 0x5a5a5a5a, and compares
/// every element with the host reference o.c (so the padding must stay untouched).
template <class TA, class TB>
void run_and_compare(const Stream& dev, const dynamic::IntGemmPlan& plan, const GemmOperands<TA, TB>& o) {
  const GemmShape& sh = o.sh;
  const Arr<int32_t> c0(sh.m * o.ldc, 0x5a5a5a5a);
  DeviceTensor da = upload_mat(dev, kind_of<TA>, sh.m, sh.k, o.lda, o.a.data());
  DeviceTensor db = upload_mat(dev, kind_of<TB>, sh.n, sh.k, o.ldb, o.b.data());
  DeviceTensor dc = upload_mat(dev, ElementKind::S32, sh.m, sh.n, o.ldc, c0.data());
  auto ws = Buffer::allocate(dev, std::max<size_t>(plan.workspace_size(), 1));  // split-K parts, cuBLASLt's
  ASSERT_TRUE(ws.is_ok());
  const Status st = plan.run(dev, Workspace(ws->data(), plan.workspace_size()), {da.view, db.view, dc.view});
  ASSERT_TRUE(st.is_ok()) << st.error().to_string();
  const std::vector<uint8_t> got = download(dc);
  ASSERT_GE(got.size(), static_cast<size_t>(sh.m * o.ldc) * 4);
  for (int64_t i = 0; i < sh.m * o.ldc; ++i) {
    int32_t v;
    std::memcpy(&v, got.data() + i * 4, 4);
    ASSERT_EQ(v, o.c[i]) << "m=" << i / o.ldc << " n=" << i % o.ldc;  // the padding stays untouched too
  }
}

template <class TA, class TB>
void device_int_gemm(const Stream& dev, const GemmShape& sh, bool padded) {
  SCOPED_TRACE(std::to_string(sh.m) + "x" + std::to_string(sh.n) + "x" + std::to_string(sh.k) +
               (padded ? " padded" : ""));
  const GemmOperands<TA, TB> o(sh, padded, 11);
  host_reference(o);
  auto dp = dynamic::IntGemmPlan::select(dev, o.descriptor(), bespoke_on(dev));  // IntGemmCublasLt tests cuBLASLt
  ASSERT_TRUE(dp.is_ok()) << dp.error().to_string();
  // The mma.sync kernel, or on a 9.0 GPU past decode the wgmma one (128 columns: these shapes give fewer
  // wide blocks than an H100 has SMs), in builds with sm_90a kernels.
  if (dev.device() == DeviceKind::Cuda && dev.sm() == 90 && sh.m > 16 && dp->sku().variant != "tc_m16n8k32")
    EXPECT_EQ(dp->sku().variant, "wgmma_m64n128k32_tma");
  else
    EXPECT_EQ(dp->sku().variant, "tc_m16n8k32");
  run_and_compare(dev, *dp, o);
}

TEST_P(IntGemmOnDevice, ExactOnRaggedShapesEveryKindPair) {
  BARACUDA_TEST_STREAM(stream, GetParam());
  auto probe = dynamic::IntGemmPlan::select(stream, IntGemmDescriptor{}.with_shape(1, 1, 16));
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(probe, GetParam());
  for (const GemmShape& sh : kDeviceShapes)
    for (bool padded : {false, true}) {
      device_int_gemm<int8_t, int8_t>(stream, sh, padded);
      device_int_gemm<int8_t, uint8_t>(stream, sh, padded);
      device_int_gemm<uint8_t, int8_t>(stream, sh, padded);
      device_int_gemm<uint8_t, uint8_t>(stream, sh, padded);
    }
}

TEST_P(IntGemmOnDevice, ExtremeValuesAndEmptyK) {
  BARACUDA_TEST_STREAM(stream, GetParam());
  auto probe = dynamic::IntGemmPlan::select(stream, IntGemmDescriptor{}.with_shape(1, 1, 16));
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(probe, GetParam());
  // all -128 x -128 and 255 x 255 over a long K: large exact sums
  const int64_t m = 9, n = 10, k = 1024;
  Arr<int8_t> a(m * k, -128), b(n * k, -128);
  Arr<uint8_t> ua(m * k, 255), ub(n * k, 255);
  Arr<int32_t> c0(m * n, 7);
  for (int pass = 0; pass < 2; ++pass) {
    const ElementKind kk = pass == 0 ? ElementKind::S8 : ElementKind::U8;
    DeviceTensor da = upload_mat(stream, kk, m, k, k, pass == 0 ? static_cast<void*>(a.data()) : ua.data());
    DeviceTensor db = upload_mat(stream, kk, n, k, k, pass == 0 ? static_cast<void*>(b.data()) : ub.data());
    DeviceTensor dc = upload_mat(stream, ElementKind::S32, m, n, n, c0.data());
    for (const PlanPreference& pref : {PlanPreference{}, bespoke_on(stream)}) {  // cuda: cuBLASLt for s8, bespoke
      auto p = dynamic::IntGemmPlan::select(stream, IntGemmDescriptor{}.with_shape(m, n, k).with_kinds(kk, kk), pref);
      ASSERT_TRUE(p.is_ok());
      auto ws = Buffer::allocate(stream, std::max<size_t>(p->workspace_size(), 1));
      ASSERT_TRUE(ws.is_ok());
      ASSERT_TRUE(p->run(stream, Workspace(ws->data(), p->workspace_size()), {da.view, db.view, dc.view}).is_ok());
    }
    const std::vector<uint8_t> got = download(dc);
    const int32_t want = pass == 0 ? 1024 * 16384 : 1024 * 65025;
    for (int64_t i = 0; i < m * n; ++i) {
      int32_t v;
      std::memcpy(&v, got.data() + i * 4, 4);
      ASSERT_EQ(v, want);
    }
  }
  // K = 0: C = 0
  DeviceTensor dc = upload_mat(stream, ElementKind::S32, 3, 5, 5, Arr<int32_t>(15, 7).data());
  auto p = dynamic::IntGemmPlan::select(stream, IntGemmDescriptor{}.with_shape(3, 5, 0));
  ASSERT_TRUE(p.is_ok());
  ASSERT_TRUE(p->run(stream, {}, {DynTensor::dense(nullptr, ElementKind::S8, Shape{3, 0}),
                                  DynTensor::dense(nullptr, ElementKind::S8, Shape{5, 0}), dc.view})
                  .is_ok());
  for (uint8_t byte : download(dc)) ASSERT_EQ(byte, 0);
}

// IntGemmPlan on cuBLASLt (cuda: by preference, and the default on a 9.0 GPU): the exact integer sum like the
// bespoke kernels, on s8 operands with N a multiple of 4, packed or with the descriptor's row strides (c's
// padding untouched); u8 and N % 4 != 0 rejected as the header says, or on the default path the bespoke kernels.
TEST(IntGemmCublasLt, ExactAndItsRules) {
  BARACUDA_TEST_STREAM(stream, DeviceKind::Cuda);
  const PlanPreference lt = PlanPreference{}.with_backend(BackendKind::CublasLt);
  auto probe = dynamic::IntGemmPlan::select(stream, IntGemmDescriptor{}.with_shape(4, 4, 16), lt);
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(probe, DeviceKind::Cuda);
  for (const GemmShape& sh : {GemmShape{1, 4, 16}, GemmShape{17, 32, 64}, GemmShape{129, 68, 96},
                              GemmShape{64, 64, 16 * 65}, GemmShape{256, 256, 512}})
    for (bool padded : {false, true}) {
      SCOPED_TRACE(std::to_string(sh.m) + "x" + std::to_string(sh.n) + "x" + std::to_string(sh.k) +
                   (padded ? " padded" : ""));
      const GemmOperands<int8_t, int8_t> o(sh, padded, 29, 4);  // ldc % 4 == 0 (IMMA)
      host_reference(o);
      for (const PlanPreference& pref : {lt, PlanPreference{}}) {
        auto dp = dynamic::IntGemmPlan::select(stream, o.descriptor(), pref);
        ASSERT_TRUE(dp.is_ok()) << dp.error().to_string();
        if (pref.prefer_backend || stream.sm() == 90) {  // the default takes cuBLASLt on 9.0 (int_gemm.hpp)
          EXPECT_EQ(dp->sku().backend, BackendKind::CublasLt);
          EXPECT_EQ(dp->sku().variant, "cublaslt_imma");
        }
        run_and_compare(stream, *dp, o);
      }
    }
  // The rules: s8 only, N and ldc multiples of 4 (by preference: Unsupported; by default: the bespoke kernels).
  const IntGemmDescriptor u8 = IntGemmDescriptor{}.with_shape(4, 4, 16).with_kinds(ElementKind::U8, ElementKind::S8);
  const IntGemmDescriptor n6 = IntGemmDescriptor{}.with_shape(4, 6, 16);
  const IntGemmDescriptor ldc7 = IntGemmDescriptor{}.with_shape(4, 4, 16).with_leading_dims(0, 0, 7);
  expect_select_error(dynamic::IntGemmPlan::select(stream, u8, lt), ErrorCode::Unsupported, "s8 x s8 only");
  expect_select_error(dynamic::IntGemmPlan::select(stream, n6, lt), ErrorCode::Unsupported, "multiples of 4");
  expect_select_error(dynamic::IntGemmPlan::select(stream, ldc7, lt), ErrorCode::Unsupported, "multiples of 4");
  for (const IntGemmDescriptor& d : {u8, n6, ldc7}) {
    auto p = dynamic::IntGemmPlan::select(stream, d);
    ASSERT_TRUE(p.is_ok()) << p.error().to_string();
    EXPECT_EQ(p->sku().backend, BackendKind::Bespoke);
  }
  // Row strides other than the descriptor's: the layouts were built at select.
  const GemmShape sh{8, 8, 32};
  const GemmOperands<int8_t, int8_t> padded(sh, true, 3);
  auto dp = dynamic::IntGemmPlan::select(stream, IntGemmDescriptor{}.with_shape(8, 8, 32), lt);
  ASSERT_TRUE(dp.is_ok()) << dp.error().to_string();
  DeviceTensor da = upload_mat(stream, ElementKind::S8, sh.m, sh.k, padded.lda, padded.a.data());
  DeviceTensor db = upload_mat(stream, ElementKind::S8, sh.n, sh.k, sh.k, padded.b.data());
  DeviceTensor dc = upload_mat(stream, ElementKind::S32, sh.m, sh.n, sh.n, Arr<int32_t>(64, 0).data());
  expect_error(dp->can_implement({da.view, db.view, dc.view}), ErrorCode::InvalidProblem, "the descriptor's 32");
}

/// Compares a device output [m, n] (row stride ldc) with the host's: bit for bit, or within a few ulps of
/// the output kind (SiLU/GELU, whose f32 libm functions may differ by an ulp between host and device).
void compare_outputs(ElementKind out, const std::vector<uint8_t>& got, const void* want, int64_t m, int64_t n,
                     int64_t ldc, bool exact) {
  const size_t eb = element_bytes(out);
  ASSERT_GE(got.size(), static_cast<size_t>(m * ldc) * eb);
  for (int64_t r = 0; r < m; ++r)
    for (int64_t c = 0; c < ldc; ++c) {
      const int64_t i = r * ldc + c;
      if (exact || c >= n) {
        ASSERT_EQ(std::memcmp(got.data() + i * eb, static_cast<const uint8_t*>(want) + i * eb, eb), 0)
            << "m=" << r << " n=" << c << " got " << read_out(out, got.data(), i) << " want "
            << read_out(out, want, i);
      } else {
        const double g = read_out(out, got.data(), i), w = read_out(out, want, i);
        ASSERT_NEAR(g, w, 4 * unit_roundoff(out) * std::fabs(w) + 1e-6) << "m=" << r << " n=" << c;
      }
    }
}

TEST_P(IntGemmOnDevice, SmoothQuantLinearMatchesHost) {
  BARACUDA_TEST_STREAM(stream, GetParam());
  auto probe = dynamic::SmoothQuantLinearPlan::select(stream, SmoothQuantLinearDescriptor{}.with_shape(1, 1, 16));
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(probe, GetParam());
  const GemmShape shapes[] = {{17, 33, 64}, {40, 37, 48}};
  for (const GemmShape& sh : shapes)
    for (ElementKind out : {ElementKind::F16, ElementKind::Bf16, ElementKind::F32})
      for (WeightScaleGranularity g : {WeightScaleGranularity::PerChannel, WeightScaleGranularity::PerTensor})
        for (bool bias : {false, true})
          for (size_t i = 0; i < kNumLinearActivations; ++i) {  // every activation of the catalog
            const auto act = static_cast<LinearActivation>(i);
            SCOPED_TRACE(std::string(to_string(out)) + " " + std::to_string(sh.m) + "x" + std::to_string(sh.n) +
                         "x" + std::to_string(sh.k) + (bias ? " bias " : " ") + std::string(to_string(act)) +
                         (g == WeightScaleGranularity::PerTensor ? " per-tensor" : ""));
            const int64_t ld = sh.k + 16, ldc = sh.n + 3, nsw = g == WeightScaleGranularity::PerChannel ? sh.n : 1;
            Arr<int8_t> a(sh.m * ld), w(sh.n * ld);
            fill_random(a, 21 + sh.m), fill_random(w, 22 + sh.n);
            Arr<float> sw(nsw);
            std::mt19937_64 gen(5);
            std::uniform_real_distribution<double> us(0.0005, 0.004), ub(-2.0, 2.0);
            for (int64_t i = 0; i < nsw; ++i) sw[i] = static_cast<float>(us(gen));
            const size_t eb = element_bytes(out);
            std::vector<uint8_t> bmem(static_cast<size_t>(sh.n) * eb), y(static_cast<size_t>(sh.m * ldc) * eb, 0xAB);
            for (int64_t i = 0; i < sh.n; ++i) write_float(out, bmem.data(), i, ub(gen));
            const auto desc = SmoothQuantLinearDescriptor{}
                                  .with_shape(sh.m, sh.n, sh.k)
                                  .with_x_scale(0.0173f)
                                  .with_output(out)
                                  .with_weight_scale_granularity(g)
                                  .with_bias(bias)
                                  .with_activation(act);
            auto hp = dynamic::SmoothQuantLinearPlan::select(Stream::host(), desc);
            ASSERT_TRUE(hp.is_ok());
            std::vector<uint8_t> yh = y;
            ASSERT_TRUE(hp->run(Stream::host(), {},
                                {mat(a.data(), ElementKind::S8, sh.m, sh.k, ld),
                                 mat(w.data(), ElementKind::S8, sh.n, sh.k, ld), vec(sw.data(), ElementKind::F32, nsw),
                                 bias ? vec(bmem.data(), out, sh.n) : DynTensor{}, mat(yh.data(), out, sh.m, sh.n, ldc)})
                            .is_ok());
            DeviceTensor da = upload_mat(stream, ElementKind::S8, sh.m, sh.k, ld, a.data());
            DeviceTensor dw = upload_mat(stream, ElementKind::S8, sh.n, sh.k, ld, w.data());
            DeviceTensor ds = upload_vec(stream, ElementKind::F32, nsw, sw.data());
            DeviceTensor dbias = upload_vec(stream, out, sh.n, bmem.data());
            DeviceTensor dy = upload_mat(stream, out, sh.m, sh.n, ldc, y.data());
            auto dp = dynamic::SmoothQuantLinearPlan::select(stream, desc);
            ASSERT_TRUE(dp.is_ok()) << dp.error().to_string();
            const Status st = dp->run(stream, {}, {da.view, dw.view, ds.view, bias ? dbias.view : DynTensor{}, dy.view});
            ASSERT_TRUE(st.is_ok()) << st.error().to_string();
            compare_outputs(out, download(dy), yh.data(), sh.m, sh.n, ldc,
                            act == LinearActivation::None || act == LinearActivation::Relu);
          }
}

TEST_P(IntGemmOnDevice, QuantizedLinearMatchesHost) {
  BARACUDA_TEST_STREAM(stream, GetParam());
  auto probe = dynamic::QuantizedLinearPlan::select(stream, QuantizedLinearDescriptor{}.with_shape(1, 1, 16));
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(probe, GetParam());
  struct Mode {
    DynamicRangeMode mode;
    ElementKind aq;
    QuantConvention conv;  // of x's quantization
  };
  const Mode modes[] = {{DynamicRangeMode::Symmetric, ElementKind::S8, QuantConvention::PyTorch},
                        {DynamicRangeMode::Symmetric, ElementKind::S8, QuantConvention::Exact},
                        {DynamicRangeMode::Symmetric, ElementKind::S8, QuantConvention::Vllm},
                        {DynamicRangeMode::Asymmetric, ElementKind::S8, QuantConvention::PyTorch},
                        {DynamicRangeMode::Asymmetric, ElementKind::S8, QuantConvention::Vllm},
                        {DynamicRangeMode::Asymmetric, ElementKind::U8, QuantConvention::Exact},
                        {DynamicRangeMode::Asymmetric, ElementKind::U8, QuantConvention::Vllm}};
  const GemmShape shapes[] = {{19, 35, 64}, {33, 40, 96}};
  for (const GemmShape& sh : shapes)
    for (ElementKind xk : {ElementKind::F32, ElementKind::F16, ElementKind::Bf16})
      for (ElementKind out : {ElementKind::F16, ElementKind::Bf16, ElementKind::F32})
        for (const Mode& md : modes)
          for (LinearActivation act : {LinearActivation::None, LinearActivation::Relu, LinearActivation::Silu}) {
            const bool bias = act != LinearActivation::Silu;
            SCOPED_TRACE(std::string(to_string(xk)) + "->" + std::string(to_string(out)) + " " +
                         std::to_string(sh.m) + "x" + std::to_string(sh.n) + "x" + std::to_string(sh.k) + " " +
                         std::string(to_string(md.aq)) +
                         (md.mode == DynamicRangeMode::Asymmetric ? " asym " : " sym ") + std::string(to_string(act)) +
                         " " + std::string(to_string(md.conv)));
            const int64_t ldc = sh.n + 1;
            const size_t xb = element_bytes(xk), eb = element_bytes(out);
            std::vector<uint8_t> x(static_cast<size_t>(sh.m * sh.k) * xb), bmem(static_cast<size_t>(sh.n) * eb);
            std::mt19937_64 gen(77 + sh.m);
            std::uniform_real_distribution<double> ux(-3.0, 2.0), us(0.001, 0.01), ub(-1.0, 1.0);
            for (int64_t i = 0; i < sh.m * sh.k; ++i) write_float(xk, x.data(), i, ux(gen));
            Arr<int8_t> w(sh.n * sh.k);
            fill_random(w, 31 + sh.n);
            Arr<float> sw(sh.n);
            for (int64_t i = 0; i < sh.n; ++i) sw[i] = static_cast<float>(us(gen));
            for (int64_t i = 0; i < sh.n; ++i) write_float(out, bmem.data(), i, ub(gen));
            std::vector<uint8_t> y(static_cast<size_t>(sh.m * ldc) * eb, 0xCD);
            const auto desc = QuantizedLinearDescriptor{}
                                  .with_shape(sh.m, sh.n, sh.k)
                                  .with_element(xk)
                                  .with_output(out)
                                  .with_mode(md.mode)
                                  .with_x_quantized(md.aq)
                                  .with_bias(bias)
                                  .with_activation(act)
                                  .with_convention(md.conv);
            auto hp = dynamic::QuantizedLinearPlan::select(Stream::host(), desc);
            ASSERT_TRUE(hp.is_ok()) << hp.error().to_string();
            std::vector<uint8_t> yh = y;
            Arr<uint8_t> hws(hp->workspace_size());
            ASSERT_TRUE(hp->run(Stream::host(), Workspace(hws.data(), hp->workspace_size()),
                                {DynTensor::dense(x.data(), xk, Shape{sh.m, sh.k}),
                                 mat(w.data(), ElementKind::S8, sh.n, sh.k, sh.k), vec(sw.data(), ElementKind::F32, sh.n),
                                 bias ? vec(bmem.data(), out, sh.n) : DynTensor{}, mat(yh.data(), out, sh.m, sh.n, ldc)})
                            .is_ok());
            auto dp = dynamic::QuantizedLinearPlan::select(stream, desc);
            ASSERT_TRUE(dp.is_ok()) << dp.error().to_string();
            DeviceTensor dx = upload_mat(stream, xk, sh.m, sh.k, sh.k, x.data());
            DeviceTensor dw = upload_mat(stream, ElementKind::S8, sh.n, sh.k, sh.k, w.data());
            DeviceTensor ds = upload_vec(stream, ElementKind::F32, sh.n, sw.data());
            DeviceTensor dbias = upload_vec(stream, out, sh.n, bmem.data());
            DeviceTensor dy = upload_mat(stream, out, sh.m, sh.n, ldc, y.data());
            auto ws = Buffer::allocate(stream, dp->workspace_size());
            ASSERT_TRUE(ws.is_ok());
            const Status st = dp->run(stream, Workspace(ws->data(), dp->workspace_size()),
                                      {dx.view, dw.view, ds.view, bias ? dbias.view : DynTensor{}, dy.view});
            ASSERT_TRUE(st.is_ok()) << st.error().to_string();
            compare_outputs(out, download(dy), yh.data(), sh.m, sh.n, ldc, act != LinearActivation::Silu);
          }
}

// Decode shapes (M ≤ 16) whose decode-tile blocks are few: K is cut into parts (tuning.hpp's int_gemm_splits)
// whose s32 sums meet in the workspace. The result must be the host's bit for bit — integer sums — for
// IntGemm, SmoothQuantLinear and QuantizedLinear (symmetric, and asymmetric whose column sums are split too),
// with a K whose last slice is partial; with the preference's max_workspace_bytes at 0 the plan runs unsplit.
const GemmShape kSplitShapes[] = {{1, 40, 2048}, {16, 70, 4096}, {5, 33, 3008}};

size_t split_bytes(const GemmShape& sh, bool colsums) {
  const auto s = static_cast<size_t>(detail::int_gemm_splits(detail::kIntGemmTilesSm90, sh.m, sh.n, sh.k));
  auto up = [](size_t v) { return (v + 255) / 256 * 256; };
  return up(s * sh.m * sh.n * 4) + (colsums ? up(s * sh.n * 4) : 0);
}

TEST_P(IntGemmOnDevice, SplitKDecodeExact) {
  BARACUDA_TEST_STREAM(stream, GetParam());
  auto probe = dynamic::IntGemmPlan::select(stream, IntGemmDescriptor{}.with_shape(1, 1, 16));
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(probe, GetParam());
  for (const GemmShape& sh : kSplitShapes) {
    ASSERT_GT(detail::int_gemm_splits(detail::kIntGemmTilesSm90, sh.m, sh.n, sh.k), 1);
    const auto desc = IntGemmDescriptor{}.with_shape(sh.m, sh.n, sh.k);
    const PlanPreference bespoke = bespoke_on(stream);
    EXPECT_EQ(dynamic::IntGemmPlan::select(stream, desc, bespoke)->workspace_size(), split_bytes(sh, false));
    EXPECT_EQ(dynamic::IntGemmPlan::select(Stream::host(), desc)->workspace_size(), 0u);
    EXPECT_EQ(dynamic::IntGemmPlan::select(stream, desc, PlanPreference{bespoke}.with_max_workspace_bytes(0))
                  ->workspace_size(),
              0u);
    device_int_gemm<int8_t, int8_t>(stream, sh, false);
    device_int_gemm<uint8_t, int8_t>(stream, sh, true);
  }
  // all −128 × −128: every part's sum and their total are large
  const int64_t m = 3, n = 40, k = 4096;
  Arr<int8_t> a(m * k, -128), b(n * k, -128);
  DeviceTensor da = upload_mat(stream, ElementKind::S8, m, k, k, a.data());
  DeviceTensor db = upload_mat(stream, ElementKind::S8, n, k, k, b.data());
  DeviceTensor dc = upload_mat(stream, ElementKind::S32, m, n, n, Arr<int32_t>(m * n, 7).data());
  auto p = dynamic::IntGemmPlan::select(stream, IntGemmDescriptor{}.with_shape(m, n, k), bespoke_on(stream));
  ASSERT_TRUE(p.is_ok());
  ASSERT_GT(p->workspace_size(), 0u);
  auto ws = Buffer::allocate(stream, p->workspace_size());
  ASSERT_TRUE(ws.is_ok());
  ASSERT_TRUE(p->run(stream, Workspace(ws->data(), p->workspace_size()), {da.view, db.view, dc.view}).is_ok());
  const std::vector<uint8_t> got = download(dc);
  for (int64_t i = 0; i < m * n; ++i) {
    int32_t v;
    std::memcpy(&v, got.data() + i * 4, 4);
    ASSERT_EQ(v, 4096 * 16384);
  }
}

TEST_P(IntGemmOnDevice, SplitKDecodeLinearExact) {
  BARACUDA_TEST_STREAM(stream, GetParam());
  auto probe = dynamic::IntGemmPlan::select(stream, IntGemmDescriptor{}.with_shape(1, 1, 16));
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(probe, GetParam());
  for (const GemmShape& sh : kSplitShapes)
    for (size_t max_ws : {~size_t{0}, size_t{0}})
      for (ElementKind out : {ElementKind::Bf16, ElementKind::F32}) {
        const bool bias = out == ElementKind::Bf16;
        const LinearActivation act = bias ? LinearActivation::Relu : LinearActivation::None;
        SCOPED_TRACE(std::string(to_string(out)) + " " + std::to_string(sh.m) + "x" + std::to_string(sh.n) + "x" +
                     std::to_string(sh.k) + (max_ws == 0 ? " unsplit" : " split"));
        const PlanPreference pref = PlanPreference{}.with_max_workspace_bytes(max_ws);
        const size_t eb = element_bytes(out);
        std::mt19937_64 gen(91 + sh.n);
        std::uniform_real_distribution<double> us(0.0005, 0.004), ub(-2.0, 2.0), ux(-3.0, 2.0);
        Arr<int8_t> a(sh.m * sh.k), w(sh.n * sh.k);
        fill_random(a, 41 + sh.m), fill_random(w, 42 + sh.n);
        Arr<float> sw(sh.n);
        for (int64_t i = 0; i < sh.n; ++i) sw[i] = static_cast<float>(us(gen));
        std::vector<uint8_t> bmem(static_cast<size_t>(sh.n) * eb), y(static_cast<size_t>(sh.m * sh.n) * eb, 0xAB);
        for (int64_t i = 0; i < sh.n; ++i) write_float(out, bmem.data(), i, ub(gen));
        DeviceTensor dw = upload_mat(stream, ElementKind::S8, sh.n, sh.k, sh.k, w.data());
        DeviceTensor ds = upload_vec(stream, ElementKind::F32, sh.n, sw.data());
        DeviceTensor dbias = upload_vec(stream, out, sh.n, bmem.data());
        const DynTensor hbias = bias ? vec(bmem.data(), out, sh.n) : DynTensor{};
        // The device plan `dp`, run on x (and the operands above) over y's first bytes, gives the host's `yh`.
        auto expect_device_y = [&](const auto& dp, const DynTensor& x, const std::vector<uint8_t>& yh) {
          using Args = typename std::decay_t<decltype(dp)>::Args;
          DeviceTensor dy = upload_mat(stream, out, sh.m, sh.n, sh.n, y.data());
          auto ws = Buffer::allocate(stream, dp.workspace_size());
          ASSERT_TRUE(ws.is_ok());
          const Status st = dp.run(stream, Workspace(ws->data(), dp.workspace_size()),
                                   Args{x, dw.view, ds.view, bias ? dbias.view : DynTensor{}, dy.view});
          ASSERT_TRUE(st.is_ok()) << st.error().to_string();
          compare_outputs(out, download(dy), yh.data(), sh.m, sh.n, sh.n, true);
        };
        // SmoothQuantLinear
        {
          const auto desc = SmoothQuantLinearDescriptor{}.with_shape(sh.m, sh.n, sh.k).with_x_scale(0.0173f)
                                .with_output(out).with_bias(bias).with_activation(act);
          std::vector<uint8_t> yh = y;
          auto hp = dynamic::SmoothQuantLinearPlan::select(Stream::host(), desc);
          ASSERT_TRUE(hp->run(Stream::host(), {},
                              {mat(a.data(), ElementKind::S8, sh.m, sh.k, sh.k), mat(w.data(), ElementKind::S8, sh.n, sh.k, sh.k),
                               vec(sw.data(), ElementKind::F32, sh.n), hbias, mat(yh.data(), out, sh.m, sh.n, sh.n)})
                          .is_ok());
          auto dp = dynamic::SmoothQuantLinearPlan::select(stream, desc, pref);
          ASSERT_TRUE(dp.is_ok()) << dp.error().to_string();
          EXPECT_EQ(dp->workspace_size(), max_ws == 0 ? 0 : split_bytes(sh, false));
          DeviceTensor da = upload_mat(stream, ElementKind::S8, sh.m, sh.k, sh.k, a.data());
          expect_device_y(*dp, da.view, yh);
        }
        // QuantizedLinear, symmetric and asymmetric (u8: the column sums are split too)
        std::vector<uint8_t> x(static_cast<size_t>(sh.m * sh.k) * 4);
        for (int64_t i = 0; i < sh.m * sh.k; ++i) write_float(ElementKind::F32, x.data(), i, ux(gen));
        DeviceTensor dx = upload_mat(stream, ElementKind::F32, sh.m, sh.k, sh.k, x.data());
        for (DynamicRangeMode mode : {DynamicRangeMode::Symmetric, DynamicRangeMode::Asymmetric}) {
          const bool asym = mode == DynamicRangeMode::Asymmetric;
          const auto desc = QuantizedLinearDescriptor{}.with_shape(sh.m, sh.n, sh.k).with_element(ElementKind::F32)
                                .with_output(out).with_mode(mode)
                                .with_x_quantized(asym ? ElementKind::U8 : ElementKind::S8)
                                .with_bias(bias).with_activation(act);
          std::vector<uint8_t> yh = y;
          auto hp = dynamic::QuantizedLinearPlan::select(Stream::host(), desc);
          Arr<uint8_t> hws(hp->workspace_size());
          ASSERT_TRUE(hp->run(Stream::host(), Workspace(hws.data(), hp->workspace_size()),
                              {DynTensor::dense(x.data(), ElementKind::F32, Shape{sh.m, sh.k}),
                               mat(w.data(), ElementKind::S8, sh.n, sh.k, sh.k), vec(sw.data(), ElementKind::F32, sh.n),
                               hbias, mat(yh.data(), out, sh.m, sh.n, sh.n)})
                          .is_ok());
          auto dp = dynamic::QuantizedLinearPlan::select(stream, desc);
          ASSERT_TRUE(dp.is_ok()) << dp.error().to_string();
          EXPECT_GE(dp->workspace_size(), hp->workspace_size() + split_bytes(sh, asym)) << (asym ? "asym" : "sym");
          expect_device_y(*dp, dx.view, yh);
        }
      }
}

// The split-K workspace's rejections in run (sim: its device memory is host memory, so a tensor can sit in it).
TEST(IntGemmSplitK, WorkspaceRejections) {
  const Stream sim = Stream::sim();
  const GemmShape sh{2, 40, 2048};
  Arr<int8_t> a(sh.m * sh.k), w(sh.n * sh.k);
  Arr<int32_t> c(sh.m * sh.n);
  Arr<float> sw(sh.n, 0.01f), y(sh.m * sh.n);
  auto gp = dynamic::IntGemmPlan::select(sim, IntGemmDescriptor{}.with_shape(sh.m, sh.n, sh.k));
  auto sp = dynamic::SmoothQuantLinearPlan::select(
      sim, SmoothQuantLinearDescriptor{}.with_shape(sh.m, sh.n, sh.k).with_output(ElementKind::F32));
  ASSERT_TRUE(gp.is_ok() && sp.is_ok());
  const size_t need = split_bytes(sh, false);
  ASSERT_EQ(gp->workspace_size(), need);
  ASSERT_EQ(sp->workspace_size(), need);
  Arr<uint8_t> ws(need + 256);
  const dynamic::IntGemmArgs gt{mat(a.data(), ElementKind::S8, sh.m, sh.k, sh.k),
                                mat(w.data(), ElementKind::S8, sh.n, sh.k, sh.k),
                                mat(c.data(), ElementKind::S32, sh.m, sh.n, sh.n)};
  const dynamic::SmoothQuantLinearArgs st{gt.a, gt.b, vec(sw.data(), ElementKind::F32, sh.n), {},
                                          mat(y.data(), ElementKind::F32, sh.m, sh.n, sh.n)};
  expect_error(gp->run(sim, Workspace(ws.data(), need - 1), gt), ErrorCode::WorkspaceTooSmall, "workspace too small");
  expect_error(gp->run(sim, Workspace{}, gt), ErrorCode::WorkspaceTooSmall, "split-K parts");
  expect_error(gp->run(sim, Workspace(ws.data() + 16, need), gt), ErrorCode::MisalignedOperand, "256-byte aligned");
  expect_error(gp->run(sim, Workspace(c.data(), need), gt), ErrorCode::InvalidProblem, "the workspace overlaps c");
  expect_error(sp->run(sim, Workspace(ws.data(), need - 1), st), ErrorCode::WorkspaceTooSmall, "workspace too small");
  expect_error(sp->run(sim, Workspace(ws.data() + 16, need), st), ErrorCode::MisalignedOperand, "256-byte aligned");
  expect_error(sp->run(sim, Workspace(w.data(), need), st), ErrorCode::InvalidProblem, "the workspace overlaps weight");
  EXPECT_TRUE(gp->run(sim, Workspace(ws.data(), need), gt).is_ok());
  EXPECT_TRUE(sp->run(sim, Workspace(ws.data(), need), st).is_ok());
}

TEST_P(IntGemmOnDevice, F64OutputIsTheHostsOnly) {
  BARACUDA_TEST_STREAM(stream, GetParam());
  auto probe = dynamic::IntGemmPlan::select(stream, IntGemmDescriptor{}.with_shape(1, 1, 16));
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(probe, GetParam());
  auto sq = dynamic::SmoothQuantLinearPlan::select(
      stream, SmoothQuantLinearDescriptor{}.with_shape(4, 4, 16).with_output(ElementKind::F64));
  expect_select_error(sq, ErrorCode::Unsupported, "f64 outputs run on the host device");
}

INSTANTIATE_TEST_SUITE_P(Devices, IntGemmOnDevice, ::testing::Values(DeviceKind::Sim, DeviceKind::Cuda),
                         [](const auto& info) { return std::string(to_string(info.param)); });

}  // namespace
}  // namespace baracuda::test
