// QuantizedLinearPlan on a caller-quantized x (dynamic::QuantizedLinearArgs' x_q, x_scale, x_zero_point): on
// host, sim and cuda, y is bit for bit the float-x path's when x_q, x_scale and x_zero_point are what
// DynamicRangeQuantizePlan (per token, the descriptor's mode and convention) writes from x, and the run leaves
// the workspace's quantized-x region alone; every rejection the x_q operands add.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "int_gemm_test_support.hpp"

namespace baracuda::test {
namespace {

/// A buffer of `bytes` on `st`, holding `init` (its first `bytes` bytes) or, without it, kSentinel.
Buffer device_buffer(const Stream& st, size_t bytes, const void* init = nullptr) {
  auto b = Buffer::allocate(st, bytes);
  EXPECT_TRUE(b.is_ok()) << b.error().to_string();
  if (!b) return {};
  const Status s = init != nullptr ? b->copy_from_host(init, bytes) : b->fill_bytes(kSentinel);
  EXPECT_TRUE(s.is_ok()) << s.error().to_string();
  return std::move(b).value();
}

std::vector<uint8_t> to_bytes(const Buffer& b) {
  std::vector<uint8_t> v(b.size());
  const Status s = b.copy_to_host(v.data(), v.size());
  EXPECT_TRUE(s.is_ok()) << s.error().to_string();
  return v;
}

struct XqCase {
  DynamicRangeMode mode;
  ElementKind x_quantized;
  ElementKind element;  // x: f16 or bf16
  QuantConvention convention;
  int64_t m;
  int64_t ldq;  // x_q's row stride (K, or padded)
};

/// The float-x run and the x_q run (x quantized by DynamicRangeQuantizePlan on the same stream) of one
/// descriptor: the same y, bit for bit.
void expect_xq_matches_float_x(const Stream& st, const XqCase& c) {
  const int64_t M = c.m, N = 48, K = 64;
  const bool asym = c.mode == DynamicRangeMode::Asymmetric;
  SCOPED_TRACE(std::string(asym ? "asymmetric " : "symmetric ") + std::string(to_string(c.x_quantized)) + " x " +
               std::string(to_string(c.element)) + " " + std::string(to_string(c.convention)) +
               " M = " + std::to_string(M) + " ldq = " + std::to_string(c.ldq));
  const auto desc = QuantizedLinearDescriptor{}
                        .with_shape(M, N, K)
                        .with_element(c.element)
                        .with_output(ElementKind::F32)
                        .with_x_quantized(c.x_quantized)
                        .with_mode(c.mode)
                        .with_convention(c.convention)
                        .with_bias();
  // x: rows in [-3, 3], rows off zero (asymmetric ranges that do not hold 0), and an all-zero row (s = 1).
  std::mt19937_64 g(static_cast<uint64_t>(M * 31 + static_cast<int>(c.element)));
  std::uniform_real_distribution<double> dx(-3, 3);
  std::uniform_int_distribution<int> dw(-127, 127);
  std::vector<uint8_t> x(static_cast<size_t>(M * K) * 2);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t k = 0; k < K; ++k)
      write_float(c.element, x.data(), m * K + k, m == 3 ? 0.0 : dx(g) + (m % 4 == 1 ? 5.0 : 0.0));
  Arr<int8_t> w(static_cast<size_t>(N * K));
  for (size_t i = 0; i < w.n; ++i) w[i] = static_cast<int8_t>(dw(g));
  Arr<float> sw(static_cast<size_t>(N)), bias(static_cast<size_t>(N));
  for (int64_t n = 0; n < N; ++n) sw[n] = 0.001f * static_cast<float>(n + 1), bias[n] = static_cast<float>(dx(g));

  Buffer bx = device_buffer(st, x.size(), x.data()), bw = device_buffer(st, w.n, w.data());
  Buffer bsw = device_buffer(st, sw.n * 4, sw.data()), bbias = device_buffer(st, bias.n * 4, bias.data());
  const size_t y_bytes = static_cast<size_t>(M * N) * 4;
  Buffer by_float = device_buffer(st, y_bytes), by_xq = device_buffer(st, y_bytes);
  Buffer bq = device_buffer(st, static_cast<size_t>(M * c.ldq)), bscale = device_buffer(st, static_cast<size_t>(M) * 4);
  Buffer bzp = device_buffer(st, static_cast<size_t>(M) * 4);
  const DynTensor xv = mat(bx.data(), c.element, M, K, K), wv = mat(bw.data(), ElementKind::S8, N, K, K);
  const DynTensor swv = vec(bsw.data(), ElementKind::F32, N), biasv = vec(bbias.data(), ElementKind::F32, N);
  const DynTensor qv = mat(bq.data(), c.x_quantized, M, K, c.ldq), scalev = vec(bscale.data(), ElementKind::F32, M);
  const DynTensor zpv = asym ? vec(bzp.data(), ElementKind::S32, M) : DynTensor{};

  auto plan = dynamic::QuantizedLinearPlan::select(st, desc);
  ASSERT_TRUE(plan.is_ok()) << plan.error().to_string();
  Buffer ws = device_buffer(st, plan->workspace_size());
  const Workspace wsv(ws.data(), plan->workspace_size());
  Status s = plan->run(st, wsv, {xv, wv, swv, biasv, mat(by_float.data(), ElementKind::F32, M, N, N)});
  ASSERT_TRUE(s.is_ok()) << s.error().to_string();

  auto quant = dynamic::DynamicRangeQuantizePlan::select(st, DynamicRangeQuantizeDescriptor{}
                                                                 .with_element(c.element)
                                                                 .with_quantized(c.x_quantized)
                                                                 .with_shape(Shape{M, K})
                                                                 .with_granularity(QuantGranularity::per_token())
                                                                 .with_mode(c.mode)
                                                                 .with_convention(c.convention));
  ASSERT_TRUE(quant.is_ok()) << quant.error().to_string();
  Buffer qws = device_buffer(st, quant->workspace_size());
  s = quant->run(st, Workspace(qws.data(), quant->workspace_size()), {xv, qv, scalev, zpv});
  ASSERT_TRUE(s.is_ok()) << s.error().to_string();

  ASSERT_TRUE(ws.fill_bytes(kSentinel).is_ok());
  dynamic::QuantizedLinearArgs args{{}, wv, swv, biasv, mat(by_xq.data(), ElementKind::F32, M, N, N)};
  args.x_q = qv, args.x_scale = scalev, args.x_zero_point = zpv;
  s = plan->run(st, wsv, args);
  ASSERT_TRUE(s.is_ok()) << s.error().to_string();
  ASSERT_TRUE(st.synchronize().is_ok());

  const std::vector<uint8_t> want = to_bytes(by_float), got = to_bytes(by_xq);
  ASSERT_EQ(got.size(), want.size());
  int differ = 0;
  for (size_t i = 0; i < want.size(); i += 4)
    if (std::memcmp(got.data() + i, want.data() + i, 4) != 0 && ++differ <= 5)
      ADD_FAILURE() << "y[" << i / 4 / N << ", " << i / 4 % N << "] differs";
  EXPECT_EQ(differ, 0);
  // The x_q run quantized nothing: the workspace's quantized x, scales and zero points keep the sentinel.
  const std::vector<uint8_t> wsb = to_bytes(ws);
  const auto region = [&](const DynTensor& t) {
    return static_cast<size_t>(static_cast<const uint8_t*>(t.data) - static_cast<const uint8_t*>(ws.data()));
  };
  const size_t q_end = region(plan->quantized_x(wsv)) + static_cast<size_t>(M * K);
  const size_t zp_end = region(plan->x_zero_point(wsv)) + static_cast<size_t>(M) * 4;
  for (size_t i = 0; i < q_end; ++i) ASSERT_EQ(wsb[i], kSentinel) << "workspace byte " << i;
  for (size_t i = region(plan->x_scale(wsv)); i < zp_end; ++i) ASSERT_EQ(wsb[i], kSentinel) << "workspace byte " << i;
}

class QuantizedLinearXq : public ::testing::TestWithParam<DeviceKind> {};

// Symmetric (s8) and asymmetric (s8, u8), f16 and bf16 x, f32 y with a bias; M = 37 (ragged) with dense x_q
// rows, M = 5 (decode) with padded ones; the PyTorch and Vllm conventions (Vllm asymmetric: unclamped zero
// points on the rows off zero).
TEST_P(QuantizedLinearXq, MatchesFloatXBitForBit) {
  BARACUDA_TEST_STREAM(stream, GetParam());
  auto probe = dynamic::QuantizedLinearPlan::select(stream, QuantizedLinearDescriptor{}.with_shape(1, 1, 16));
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(probe, GetParam());
  using Mode = DynamicRangeMode;
  const std::pair<Mode, ElementKind> quants[] = {
      {Mode::Symmetric, ElementKind::S8}, {Mode::Asymmetric, ElementKind::S8}, {Mode::Asymmetric, ElementKind::U8}};
  for (const auto& [mode, xq] : quants)
    for (ElementKind element : {ElementKind::F16, ElementKind::Bf16})
      for (QuantConvention conv : {QuantConvention::PyTorch, QuantConvention::Vllm})
        for (const auto& [m, ldq] : {std::pair<int64_t, int64_t>{37, 64}, {5, 96}}) {
          expect_xq_matches_float_x(stream, XqCase{mode, xq, element, conv, m, ldq});
          if (HasFatalFailure()) return;
        }
}

INSTANTIATE_TEST_SUITE_P(Devices, QuantizedLinearXq,
                         ::testing::Values(DeviceKind::Host, DeviceKind::Sim, DeviceKind::Cuda),
                         [](const auto& info) { return std::string(to_string(info.param)); });

// Every rule of the x_q operands, on the host (can_implement; run re-validates and checks the workspace).
TEST(QuantizedLinearXqRejects, Operands) {
  const Stream host = Stream::host();
  const int64_t M = 4, N = 5, K = 32;
  using D = QuantizedLinearDescriptor;
  const D sym_desc = D{}.with_shape(M, N, K).with_element(ElementKind::F32).with_output(ElementKind::F32);
  auto sym = dynamic::QuantizedLinearPlan::select(host, sym_desc);
  auto asym = dynamic::QuantizedLinearPlan::select(host, D(sym_desc).with_mode(DynamicRangeMode::Asymmetric));
  ASSERT_TRUE(sym.is_ok() && asym.is_ok());
  Arr<float> x(M * K), sw(N), y(M * N), scale(M + 1);
  Arr<double> scale64(M);
  Arr<int8_t> w(N * K), xq(M * 64 + 64);
  Arr<int32_t> zp(M + 1);
  using Args = dynamic::QuantizedLinearArgs;
  Args ok{{},
          mat(w.data(), ElementKind::S8, N, K, K),
          vec(sw.data(), ElementKind::F32, N),
          {},
          mat(y.data(), ElementKind::F32, M, N, N)};
  ok.x_q = mat(xq.data(), ElementKind::S8, M, K, K), ok.x_scale = vec(scale.data(), ElementKind::F32, M);
  Args ok_asym = ok;
  ok_asym.x_zero_point = vec(zp.data(), ElementKind::S32, M);
  ASSERT_TRUE(sym->can_implement(ok).is_ok());
  ASSERT_TRUE(asym->can_implement(ok_asym).is_ok());
  auto with = [&](auto f) {
    Args t = ok;
    f(t);
    return sym->can_implement(t);
  };
  auto with_asym = [&](auto f) {
    Args t = ok_asym;
    f(t);
    return asym->can_implement(t);
  };

  // Exactly one of x and x_q; x_scale and x_zero_point only with x_q.
  expect_error(with([&](Args& t) { t.x = mat(x.data(), ElementKind::F32, M, K, K); }), ErrorCode::InvalidProblem,
               "not both");
  expect_error(with([&](Args& t) { t.x_q = {}; }), ErrorCode::InvalidProblem, "x is missing, and so is x_q");
  expect_error(with([&](Args& t) { t.x_q = {}, t.x_scale = {}; }), ErrorCode::InvalidProblem,
               "x is missing, and so is x_q");
  expect_error(with([&](Args& t) { t.x_q = {}, t.x = mat(x.data(), ElementKind::F32, M, K, K); }),
               ErrorCode::InvalidProblem, "x_scale must be empty: it is read with x_q only");
  expect_error(with_asym([&](Args& t) { t.x_q = {}, t.x_scale = {}, t.x = mat(x.data(), ElementKind::F32, M, K, K); }),
               ErrorCode::InvalidProblem, "x_zero_point must be empty: it is read with x_q only");
  // x_scale required; x_zero_point required iff asymmetric.
  expect_error(with([&](Args& t) { t.x_scale = {}; }), ErrorCode::InvalidProblem,
               "x_scale ([M] f32, x_q's per-token scales) is required with x_q");
  expect_error(with_asym([&](Args& t) { t.x_zero_point = {}; }), ErrorCode::InvalidProblem,
               "x_zero_point ([M] s32, x_q's per-token zero points) is required with x_q in asymmetric mode");
  expect_error(with([&](Args& t) { t.x_zero_point = vec(zp.data(), ElementKind::S32, M); }), ErrorCode::InvalidProblem,
               "x_zero_point must be empty: symmetric mode has no zero point");
  // Kinds and shapes.
  expect_error(with([&](Args& t) { t.x_q.kind = ElementKind::U8; }), ErrorCode::InvalidProblem,
               "x_q has element kind u8");
  expect_error(with([&](Args& t) { t.x_q = mat(xq.data(), ElementKind::S8, M + 1, K, K); }), ErrorCode::InvalidProblem,
               "x_q has shape");
  expect_error(with([&](Args& t) { t.x_scale = vec(scale64.data(), ElementKind::F64, M); }), ErrorCode::InvalidProblem,
               "x_scale has element kind f64");
  expect_error(with([&](Args& t) { t.x_scale = vec(scale.data(), ElementKind::F32, M + 1); }),
               ErrorCode::InvalidProblem, "x_scale has shape");
  expect_error(with_asym([&](Args& t) { t.x_zero_point.kind = ElementKind::F32; }), ErrorCode::InvalidProblem,
               "x_zero_point has element kind f32");
  expect_error(with_asym([&](Args& t) { t.x_zero_point = vec(zp.data(), ElementKind::S32, M + 1); }),
               ErrorCode::InvalidProblem, "x_zero_point has shape");
  expect_error(with([&](Args& t) { t.x_scale.data = nullptr; }), ErrorCode::InvalidProblem, "x_scale is null");
  // x_q's alignment: SmoothQuantLinear's x_q rule (unit stride along K, row stride a multiple of 16 >= K,
  // 16-byte aligned base).
  expect_error(with([&](Args& t) { t.x_q = mat(xq.data(), ElementKind::S8, M, K, 40); }), ErrorCode::MisalignedOperand,
               "x_q's row stride must be a multiple of 16");
  expect_error(with([&](Args& t) { t.x_q = mat(xq.data(), ElementKind::S8, M, K, 16); }), ErrorCode::MisalignedOperand,
               "x_q's row stride");  // < K
  expect_error(with([&](Args& t) { t.x_q.stride[1] = 2, t.x_q.stride[0] = 64; }), ErrorCode::MisalignedOperand,
               "x_q must be contiguous along K");
  expect_error(with([&](Args& t) { t.x_q.data = xq.data() + 8; }), ErrorCode::MisalignedOperand,
               "x_q must be 16-byte aligned");
  EXPECT_TRUE(with([&](Args& t) { t.x_q = mat(xq.data(), ElementKind::S8, M, K, 48); }).is_ok());  // padded rows
  // y overlaps none of them.
  expect_error(with([&](Args& t) { t.y = mat(xq.data(), ElementKind::F32, M, N, N); }), ErrorCode::InvalidProblem,
               "y overlaps x_q");
  Arr<float> big(M * N + M + 1);
  expect_error(with([&](Args& t) {
                 t.y = mat(big.data(), ElementKind::F32, M, N, N), t.x_scale = vec(big.data() + 3, ElementKind::F32, M);
               }),
               ErrorCode::InvalidProblem, "y overlaps x_scale");
  expect_error(with_asym([&](Args& t) {
                 t.y = mat(big.data(), ElementKind::F32, M, N, N);
                 t.x_zero_point = DynTensor::dense(big.data() + M * N - 1, ElementKind::S32, Shape{M});
               }),
               ErrorCode::InvalidProblem, "y overlaps x_zero_point");

  // run re-validates, and the workspace may overlap none of them.
  Arr<uint8_t> ws(asym->workspace_size() + 256);
  const size_t wsb = asym->workspace_size();
  expect_error(sym->run(host, Workspace(ws.data(), wsb), Args{}), ErrorCode::InvalidProblem,
               "x is missing, and so is x_q");
  Arr<uint8_t> shared(wsb + 1024);
  Args in_ws = ok_asym;
  in_ws.x_q = mat(shared.data() + 256, ElementKind::S8, M, K, K);
  expect_error(asym->run(host, Workspace(shared.data(), wsb), in_ws), ErrorCode::InvalidProblem,
               "the workspace overlaps x_q");
  in_ws = ok_asym;
  in_ws.x_zero_point = vec(shared.data() + wsb - 8, ElementKind::S32, M);
  expect_error(asym->run(host, Workspace(shared.data(), wsb), in_ws), ErrorCode::InvalidProblem,
               "the workspace overlaps x_zero_point");
  EXPECT_TRUE(asym->run(host, Workspace(ws.data(), wsb), ok_asym).is_ok());
}

// Empty problems with x_q: K = 0 gives y = bias as the float-x path does (the scales are not applied to an
// empty sum); M = 0 writes nothing. The same rules hold.
TEST(QuantizedLinearXqRejects, EmptyProblems) {
  const Stream host = Stream::host();
  const int64_t M = 3, N = 4;
  const auto d = QuantizedLinearDescriptor{}
                     .with_shape(M, N, 0)
                     .with_element(ElementKind::F32)
                     .with_output(ElementKind::F32)
                     .with_mode(DynamicRangeMode::Asymmetric)
                     .with_bias();
  auto plan = dynamic::QuantizedLinearPlan::select(host, d);
  ASSERT_TRUE(plan.is_ok());
  Arr<float> sw(N, 0.5f), bias(N), y_float(M * N, -1.0f), y_xq(M * N, -2.0f), scale(M, 3.0f);
  Arr<int32_t> zp(M, 7);
  for (int64_t n = 0; n < N; ++n) bias[n] = 0.25f * static_cast<float>(n + 1);
  const DynTensor empty_w = DynTensor::dense(nullptr, ElementKind::S8, Shape{N, 0});
  Arr<uint8_t> ws(plan->workspace_size() + 256);
  const Workspace wsv(ws.data(), plan->workspace_size());
  ASSERT_TRUE(
      plan->run(host, wsv,
                {DynTensor::dense(nullptr, ElementKind::F32, Shape{M, 0}), empty_w, vec(sw.data(), ElementKind::F32, N),
                 vec(bias.data(), ElementKind::F32, N), mat(y_float.data(), ElementKind::F32, M, N, N)})
          .is_ok());
  dynamic::QuantizedLinearArgs args{{},
                                    empty_w,
                                    vec(sw.data(), ElementKind::F32, N),
                                    vec(bias.data(), ElementKind::F32, N),
                                    mat(y_xq.data(), ElementKind::F32, M, N, N)};
  args.x_q = DynTensor::dense(nullptr, ElementKind::S8, Shape{M, 0});
  args.x_scale = vec(scale.data(), ElementKind::F32, M), args.x_zero_point = vec(zp.data(), ElementKind::S32, M);
  ASSERT_TRUE(plan->run(host, wsv, args).is_ok());
  for (int64_t i = 0; i < M * N; ++i) {
    EXPECT_EQ(y_xq[i], bias[i % N]) << i;
    EXPECT_EQ(std::memcmp(&y_xq[i], &y_float[i], 4), 0) << i;
  }
  args.x_zero_point = {};
  expect_error(plan->can_implement(args), ErrorCode::InvalidProblem, "x_zero_point ([M] s32");

  auto m0 = dynamic::QuantizedLinearPlan::select(host, QuantizedLinearDescriptor{d}.with_shape(0, N, 32));
  ASSERT_TRUE(m0.is_ok());
  Arr<int8_t> w0(N * 32);
  dynamic::QuantizedLinearArgs a0{{},
                                  mat(w0.data(), ElementKind::S8, N, 32, 32),
                                  vec(sw.data(), ElementKind::F32, N),
                                  vec(bias.data(), ElementKind::F32, N),
                                  DynTensor::dense(nullptr, ElementKind::F32, Shape{0, N})};
  a0.x_q = DynTensor::dense(nullptr, ElementKind::S8, Shape{0, 32});
  a0.x_scale = DynTensor::dense(nullptr, ElementKind::F32, Shape{0});
  a0.x_zero_point = DynTensor::dense(nullptr, ElementKind::S32, Shape{0});
  EXPECT_TRUE(m0->run(host, Workspace(ws.data(), m0->workspace_size()), a0).is_ok());
}

}  // namespace
}  // namespace baracuda::test
