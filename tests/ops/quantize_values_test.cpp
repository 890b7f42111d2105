// QuantizePlan, hand-computed: values that pin what every convention shares, on every device and under each
// convention that applies (PyTorch, Exact; vLLM for Quantize / Dequantize): ties to even, zp added after
// rounding, clamping, NaN → zp, s = 0, qmin = qmax, the STE mask on the unclamped value, the packed nibble
// order, per-channel and per-group parameter mapping, dequantize, the learnable gradients. The scales are
// powers of two, so x · (1/s) and x / s are the same number and the conventions agree except where noted
// (vLLM's int32 wrap-around); where they differ: quantize_conventions_test. And a negative test for every
// select / can_implement / run rejection.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "baracuda/baracuda.hpp"
#include "support/devices.hpp"

namespace baracuda::test {
namespace {

using G = QuantGranularity;
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

/// A dense device copy of a host vector, downloaded again by `get`.
template <class T>
struct On {
  Buffer buffer;
  DynTensor view;
  On(const Stream& stream, const std::vector<T>& v, const Shape& shape) {
    auto b = Buffer::allocate(stream, std::max<size_t>(1, v.size() * sizeof(T)));
    EXPECT_TRUE(b.is_ok());
    buffer = std::move(b).value();
    if (!v.empty()) EXPECT_TRUE(buffer.copy_from_host(v.data(), v.size() * sizeof(T)).is_ok());
    view = DynTensor::dense(buffer.data(), kind_of<T>, shape);
  }
  std::vector<T> get(const Stream& stream, size_t n) const {
    EXPECT_TRUE(stream.synchronize().is_ok());
    std::vector<T> out(n);
    EXPECT_TRUE(buffer.copy_to_host(out.data(), n * sizeof(T)).is_ok());
    return out;
  }
};

dynamic::QuantizePlan must_select(const Stream& s, QuantizeOp op, const QuantizeDescriptor& d) {
  auto p = dynamic::QuantizePlan::select(s, QuantizeDescriptor{d}.with_op(op));
  EXPECT_TRUE(p.is_ok()) << (p ? "" : p.error().message);
  return std::move(p).value();
}

Status run(const Stream& s, const dynamic::QuantizePlan& p, const dynamic::QuantizeArgs& t) {
  Buffer ws;
  if (p.workspace_size() > 0) ws = std::move(Buffer::allocate(s, p.workspace_size())).value();
  return p.run(s, Workspace(ws.data(), p.workspace_size()), t);
}

/// q = quantize(x) per tensor (scale s, zero point zp) through `plan` on `stream`, into q storage first holding
/// `q_before`; the q storage after the run.
template <class TQ>
std::vector<TQ> quantize_per_tensor(const Stream& stream, const dynamic::QuantizePlan& plan,
                                    const std::vector<float>& x, float s, int32_t zp, const std::vector<TQ>& q_before) {
  const Shape shape{static_cast<int64_t>(x.size())};
  On<float> dx(stream, x, shape), ds(stream, {s}, Shape{1});
  On<int32_t> dz(stream, {zp}, Shape{1});
  On<TQ> dq(stream, q_before, shape);
  dynamic::QuantizeArgs t;
  t.x = dx.view, t.scale = ds.view, t.zero_point = dz.view, t.y = dq.view;
  EXPECT_TRUE(run(stream, plan, t).is_ok());
  return dq.get(stream, q_before.size());
}

/// Tests of ops every convention has (Quantize, Dequantize): PyTorch, Exact and vLLM.
class QuantizeValuesAll : public ::testing::TestWithParam<std::tuple<DeviceKind, QuantConvention>> {};
/// Tests of ops vLLM lacks: PyTorch and Exact.
class QuantizeValues : public ::testing::TestWithParam<std::tuple<DeviceKind, QuantConvention>> {};

QuantizeDescriptor with_conv(ElementKind e, ElementKind q, const Shape& shape, QuantConvention c) {
  return QuantizeDescriptor{}.with_element(e).with_quantized(q).with_shape(shape).with_convention(c);
}

// s = 0.5, zp = 1 (odd, so adding zp before rounding would move every tie): 1.25 / 0.5 = 2.5 → 2 → 3;
// 3.5 → 4 → 5; −2.5 → −2 → −1; ±0.5 → ±0 → 1; far values clamp; NaN → zp; 1/0 = inf clamps, except under
// vLLM: inf saturates to INT32_MAX, + zp 1 wraps to INT32_MIN, which clamps to qmin.
TEST_P(QuantizeValuesAll, TiesToEvenThenZeroPointThenClamp) {
  const auto [device, conv] = GetParam();
  BARACUDA_TEST_STREAM(stream, device);
  auto plan = dynamic::QuantizePlan::select(
      stream, with_conv(ElementKind::F32, ElementKind::S8, Shape{9}, conv).with_op(QuantizeOp::Quantize));
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(plan, device);
  const int8_t inf_q = conv == QuantConvention::Vllm ? -128 : 127;
  EXPECT_EQ(quantize_per_tensor(stream, *plan, {1.25f, 1.75f, -1.25f, 0.25f, -0.25f, 100.0f, -100.0f, kNaN, kInf},
                                0.5f, 1, std::vector<int8_t>(9, 99)),
            (std::vector<int8_t>{3, 5, -1, 1, 1, 127, -128, 1, inf_q}));
}

// s = 0: ±1 / 0 = ±inf clamps (255, 0) and 0 / 0 = NaN quantizes to zp 7 (PyTorch's 1.0f / 0 = inf times x
// gives the same); vLLM wraps ±inf + 7 around int32 (INT32_MAX + 7 < 0 → 0; INT32_MIN + 7 → 0). f64 data
// (vLLM: f32, it takes no f64).
TEST_P(QuantizeValuesAll, ZeroScaleAndSingletonRange) {
  const auto [device, conv] = GetParam();
  BARACUDA_TEST_STREAM(stream, device);
  const Shape shape{3};
  const bool vllm = conv == QuantConvention::Vllm;
  auto d = with_conv(vllm ? ElementKind::F32 : ElementKind::F64, ElementKind::U8, shape, conv);
  auto plan = dynamic::QuantizePlan::select(stream, QuantizeDescriptor{d}.with_op(QuantizeOp::Quantize));
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(plan, device);
  On<double> x(stream, {1.0, -1.0, 0.0}, shape);
  On<double> s(stream, {0.0}, Shape{1});
  On<float> xf(stream, {1.0f, -1.0f, 0.0f}, shape);
  On<float> sf(stream, {0.0f}, Shape{1});
  On<int32_t> z(stream, {7}, Shape{1});
  On<uint8_t> q(stream, std::vector<uint8_t>(3, 99), shape);
  dynamic::QuantizeArgs t;
  t.x = vllm ? xf.view : x.view, t.scale = vllm ? sf.view : s.view, t.zero_point = z.view, t.y = q.view;
  ASSERT_TRUE(run(stream, *plan, t).is_ok());
  EXPECT_EQ(q.get(stream, 3), vllm ? (std::vector<uint8_t>{0, 0, 7}) : (std::vector<uint8_t>{255, 0, 7}));

  const auto single = must_select(stream, QuantizeOp::Quantize, d.with_range(5, 5));
  On<double> s1(stream, {1.0}, Shape{1});
  On<float> s1f(stream, {1.0f}, Shape{1});
  On<int32_t> z5(stream, {5}, Shape{1});  // a zero point lies in [qmin, qmax]
  t.scale = vllm ? s1f.view : s1.view, t.zero_point = z5.view;
  ASSERT_TRUE(run(stream, single, t).is_ok());
  EXPECT_EQ(q.get(stream, 3), (std::vector<uint8_t>{5, 5, 5}));
}

// Under PyTorch and Exact an s32 zero point outside [qmin, qmax] is an InvalidProblem where the device reads it
// at run (host, sim); cuda does not check the value, and vLLM takes any (quantize.hpp).
TEST_P(QuantizeValuesAll, ZeroPointOutsideTheRangeIsRejectedWhereReadable) {
  const auto [device, conv] = GetParam();
  if (device == DeviceKind::Cuda) GTEST_SKIP() << "cuda does not check the zero point's value";
  BARACUDA_TEST_STREAM(stream, device);
  const Shape shape{3};
  const bool vllm = conv == QuantConvention::Vllm;
  if (vllm) GTEST_SKIP() << "vLLM adds any zero point";
  auto d = with_conv(ElementKind::F64, ElementKind::U8, shape, conv);
  const auto plan = must_select(stream, QuantizeOp::Quantize, d.with_range(0, 100));
  On<double> x(stream, {1.0, -1.0, 0.0}, shape);
  On<float> xf(stream, {1.0f, -1.0f, 0.0f}, shape);
  On<double> s(stream, {1.0}, Shape{1});
  On<float> sf(stream, {1.0f}, Shape{1});
  On<int32_t> z(stream, {101}, Shape{1});
  On<uint8_t> q(stream, std::vector<uint8_t>(3, 99), shape);
  dynamic::QuantizeArgs t;
  t.x = vllm ? xf.view : x.view, t.scale = vllm ? sf.view : s.view, t.zero_point = z.view, t.y = q.view;
  const Status st = run(stream, plan, t);
  EXPECT_EQ(st.code(), ErrorCode::InvalidProblem) << st.to_string();
  EXPECT_NE(st.to_string().find("zero_point holds 101 at element 0, outside [0, 100]"), std::string::npos)
      << st.to_string();
  EXPECT_EQ(q.get(stream, 3), std::vector<uint8_t>(3, 99)) << "nothing is written";
}

// Even index in the low nibble; s4 two's complement, u4 plain.
TEST_P(QuantizeValuesAll, PackedNibbleOrder) {
  const auto [device, conv] = GetParam();
  BARACUDA_TEST_STREAM(stream, device);
  const Shape shape{6};
  const auto d = with_conv(ElementKind::F32, ElementKind::S4, shape, conv);
  auto plan = dynamic::QuantizePlan::select(stream, QuantizeDescriptor{d}.with_op(QuantizeOp::Quantize));
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(plan, device);
  On<float> x(stream, {-1, 2, 7, -8, 9, -9}, shape);
  On<float> s(stream, {1.0f}, Shape{1});
  On<int32_t> z(stream, {0}, Shape{1});
  On<uint8_t> q(stream, {0, 0, 0}, shape);
  dynamic::QuantizeArgs t;
  t.x = x.view, t.scale = s.view, t.zero_point = z.view, t.y = q.view;
  t.y.kind = ElementKind::S4;
  ASSERT_TRUE(run(stream, *plan, t).is_ok());
  EXPECT_EQ(q.get(stream, 3), (std::vector<uint8_t>{0x2F, 0x87, 0x87}));

  // Dequantize the same bytes back: s4 values −1, 2, 7, −8, 7, −8 with zp 1, s 0.5.
  const auto dq = must_select(stream, QuantizeOp::Dequantize, d);
  On<float> s2(stream, {0.5f}, Shape{1});
  On<int32_t> z2(stream, {1}, Shape{1});
  On<float> y(stream, std::vector<float>(6, 0.0f), shape);
  dynamic::QuantizeArgs u;
  u.x = t.y, u.scale = s2.view, u.zero_point = z2.view, u.y = y.view;
  ASSERT_TRUE(run(stream, dq, u).is_ok());
  EXPECT_EQ(y.get(stream, 6), (std::vector<float>{-1.0f, 0.5f, 3.0f, -4.5f, 3.0f, -4.5f}));

  // u4 with zp 8: −1 → 7, 2 → 10.
  const auto du = must_select(stream, QuantizeOp::Quantize,
                              QuantizeDescriptor{d}.with_quantized(ElementKind::U4).with_shape(Shape{2}));
  On<float> x2(stream, {-1, 2}, Shape{2});
  On<int32_t> z8(stream, {8}, Shape{1});
  On<uint8_t> q2(stream, {0}, Shape{2});
  dynamic::QuantizeArgs w;
  w.x = x2.view, w.scale = s.view, w.zero_point = z8.view, w.y = q2.view;
  w.y.kind = ElementKind::U4;
  ASSERT_TRUE(run(stream, du, w).is_ok());
  EXPECT_EQ(q2.get(stream, 1), (std::vector<uint8_t>{0xA7}));
}

// The straight-through mask is taken on the unclamped nearbyint(x / s) + zp, both ends inclusive.
TEST_P(QuantizeValues, StraightThroughMaskIsInclusiveOnTheUnclampedValue) {
  const auto [device, conv] = GetParam();
  BARACUDA_TEST_STREAM(stream, device);
  const Shape shape{5};
  const auto d = with_conv(ElementKind::F32, ElementKind::S8, shape, conv).with_range(-2, 2);
  auto plan = dynamic::QuantizePlan::select(stream, QuantizeDescriptor{d}.with_op(QuantizeOp::QuantizeBackward));
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(plan, device);
  On<float> x(stream, {1.0f, 1.25f, 1.5f, -1.25f, -1.5f}, shape);  // /0.5: 2, 2.5→2, 3, −2.5→−2, −3
  On<float> s(stream, {0.5f}, Shape{1});
  On<int32_t> z(stream, {0}, Shape{1});
  On<float> dy(stream, {1, 1, 1, 1, 1}, shape);
  On<float> dx(stream, std::vector<float>(5, 9.0f), shape);
  dynamic::QuantizeArgs t;
  t.x = x.view, t.scale = s.view, t.zero_point = z.view, t.dy = dy.view, t.dx = dx.view;
  ASSERT_TRUE(run(stream, *plan, t).is_ok());
  EXPECT_EQ(dx.get(stream, 5), (std::vector<float>{2, 2, 0, 2, 0}));  // dy / s inside, 0 outside

  const auto fq = must_select(stream, QuantizeOp::FakeQuantizeBackward, d);
  ASSERT_TRUE(run(stream, fq, t).is_ok());
  EXPECT_EQ(dx.get(stream, 5), (std::vector<float>{1, 1, 0, 1, 0}));  // dy inside, 0 outside
}

// Per-channel along axis 1 of [2, 3] and per-group of 2 along the last axis of [2, 4].
TEST_P(QuantizeValuesAll, ChannelAndGroupParameterMapping) {
  const auto [device, conv] = GetParam();
  BARACUDA_TEST_STREAM(stream, device);
  auto d = with_conv(ElementKind::F32, ElementKind::S8, Shape{2, 3}, conv).with_granularity(G::per_channel(1));
  auto plan = dynamic::QuantizePlan::select(stream, QuantizeDescriptor{d}.with_op(QuantizeOp::Quantize));
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(plan, device);
  EXPECT_EQ(plan->param_shape(), (Shape{3}));
  On<float> x(stream, {8, 8, 8, -4, -4, -4}, Shape{2, 3});
  On<float> s(stream, {1, 2, 4}, Shape{3});
  On<int32_t> z(stream, {0, 1, 2}, Shape{3});
  On<int8_t> q(stream, std::vector<int8_t>(6), Shape{2, 3});
  dynamic::QuantizeArgs t;
  t.x = x.view, t.scale = s.view, t.zero_point = z.view, t.y = q.view;
  ASSERT_TRUE(run(stream, *plan, t).is_ok());
  EXPECT_EQ(q.get(stream, 6), (std::vector<int8_t>{8, 5, 4, -4, -1, 1}));

  d.with_shape(Shape{2, 4}).with_granularity(G::per_group(-1, 2));
  const auto grouped = must_select(stream, QuantizeOp::Quantize, d);
  EXPECT_EQ(grouped.param_shape(), (Shape{2, 2}));
  On<float> xg(stream, {1, 1, 4, 4, 8, 8, 8, 8}, Shape{2, 4});
  On<float> sg(stream, {1, 2, 4, 8}, Shape{2, 2});
  On<int32_t> zg(stream, {0, 0, 0, 0}, Shape{2, 2});
  On<int8_t> qg(stream, std::vector<int8_t>(8), Shape{2, 4});
  dynamic::QuantizeArgs u;
  u.x = xg.view, u.scale = sg.view, u.zero_point = zg.view, u.y = qg.view;
  ASSERT_TRUE(run(stream, grouped, u).is_ok());
  EXPECT_EQ(qg.get(stream, 8), (std::vector<int8_t>{1, 1, 2, 2, 2, 2, 1, 1}));
}

// zp 0.6 rounds to 1 (PyTorch's per-tensor backward: trunc(0.6 + 0.5) = 1 as well); range [−4, 3]; s = 0.5;
// grad_factor 0.5. x = 0.375 → 0.75 → 1 + 1 = 2 inside (y = 0.5, ds = (0.5 − 0.375)/0.5 = 0.25); x = 5 → 11
// above (ds = 3 − 1 = 2, dzp = −0.5); x = −5 → −9 below (ds = −4 − 1 = −5, dzp = −0.5). Σ ds · 0.5 = −1.375,
// Σ dzp · 0.5 = −0.5 (PyTorch: each term times 0.5, the same here); dx = (1, 0, 0).
TEST_P(QuantizeValues, LearnableForwardAndGradients) {
  const auto [device, conv] = GetParam();
  BARACUDA_TEST_STREAM(stream, device);
  const Shape shape{3};
  const auto d = with_conv(ElementKind::F32, ElementKind::S8, shape, conv).with_range(-4, 3).with_grad_factor(0.5);
  auto plan =
      dynamic::QuantizePlan::select(stream, QuantizeDescriptor{d}.with_op(QuantizeOp::FakeQuantizeLearnableBackward));
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(plan, device);
  On<float> x(stream, {0.375f, 5.0f, -5.0f}, shape);
  On<float> s(stream, {0.5f}, Shape{1});
  On<float> z(stream, {0.6f}, Shape{1});
  On<float> dy(stream, {1, 1, 1}, shape);
  On<float> dx(stream, {9, 9, 9}, shape), ds(stream, {9}, Shape{1}), dz(stream, {9}, Shape{1});
  dynamic::QuantizeArgs t;
  t.x = x.view, t.scale = s.view, t.zero_point = z.view, t.dy = dy.view, t.dx = dx.view;
  t.dscale = ds.view, t.dzero_point = dz.view;
  ASSERT_TRUE(run(stream, *plan, t).is_ok());
  EXPECT_EQ(dx.get(stream, 3), (std::vector<float>{1, 0, 0}));
  EXPECT_EQ(ds.get(stream, 1), (std::vector<float>{-1.375f}));
  EXPECT_EQ(dz.get(stream, 1), (std::vector<float>{-0.5f}));

  const auto fwd = must_select(stream, QuantizeOp::FakeQuantizeLearnable, d);
  On<float> y(stream, {9, 9, 9}, shape);
  dynamic::QuantizeArgs u;
  u.x = x.view, u.scale = s.view, u.zero_point = z.view, u.y = y.view;
  ASSERT_TRUE(run(stream, fwd, u).is_ok());
  EXPECT_EQ(y.get(stream, 3), (std::vector<float>{0.5f, 1.0f, -2.5f}));  // (3 − 1)·0.5, (−4 − 1)·0.5
}

/// Runs a typed plan with a workspace of its size.
template <class Plan, class Args>
Status run_typed(const Stream& s, const Plan& p, const Args& a) {
  Buffer ws;
  if (p.workspace_size() > 0) ws = std::move(Buffer::allocate(s, p.workspace_size())).value();
  return p.run(s, Workspace(ws.data(), p.workspace_size()), a);
}

/// Typed dense views of an On<T>.
template <class T, size_t N>
TensorRef<T, N> ref(const On<T>& t, const int64_t (&shape)[N]) {
  return TensorRef<T, N>::dense(static_cast<const T*>(t.buffer.data()), std::to_array(shape));
}
template <class T, size_t N>
TensorMut<T, N> mut(const On<T>& t, const int64_t (&shape)[N]) {
  return TensorMut<T, N>::dense(static_cast<T*>(t.buffer.data()), std::to_array(shape));
}

// The typed plan serves every op through its template argument: Dequantize (x quantized, y float) and the
// learnable backward (x, dy → dx, dscale, dzero_point), each equal to the dynamic plan on the same operands
// and to the values of ChannelAndGroupParameterMapping / LearnableForwardAndGradients.
TEST_P(QuantizeValues, TypedPlanRunsEachOp) {
  const auto [device, conv] = GetParam();
  BARACUDA_TEST_STREAM(stream, device);
  constexpr QuantizeOp kDq = QuantizeOp::Dequantize;
  const auto dd = with_conv(ElementKind::F32, ElementKind::S8, Shape{2, 3}, conv)
                      .with_granularity(G::per_channel(1))
                      .with_op(kDq);
  auto typed = QuantizePlan<float, int8_t, 2, kDq>::select(stream, dd);
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(typed, device);
  ASSERT_TRUE(typed.is_ok()) << typed.error().message;
  EXPECT_EQ(typed->param_shape(), (Shape{3}));
  EXPECT_EQ(typed->erased().op(), kDq);
  On<int8_t> q(stream, {8, 5, 4, -4, -1, 1}, Shape{2, 3});
  On<float> s(stream, {1, 2, 4}, Shape{3});
  On<int32_t> z(stream, {0, 1, 2}, Shape{3});
  On<float> y(stream, std::vector<float>(6, 9.0f), Shape{2, 3});
  On<float> y_dyn(stream, std::vector<float>(6, 9.0f), Shape{2, 3});
  QuantizeArgs<float, int8_t, 2, kDq> a;
  a.x = ref(q, {2, 3});
  a.scale = s.view;
  a.zero_point = z.view;
  a.y = mut(y, {2, 3});
  ASSERT_TRUE(typed->can_implement(a).is_ok());
  ASSERT_TRUE(run_typed(stream, *typed, a).is_ok());
  dynamic::QuantizeArgs b;
  b.x = q.view, b.scale = s.view, b.zero_point = z.view, b.y = y_dyn.view;
  ASSERT_TRUE(run(stream, must_select(stream, kDq, dd), b).is_ok());
  EXPECT_EQ(y.get(stream, 6), (std::vector<float>{8, 8, 8, -4, -4, -4}));
  EXPECT_EQ(y.get(stream, 6), y_dyn.get(stream, 6));
  // An operand the op does not use, given anyway, is rejected by name.
  On<float> dy6(stream, std::vector<float>(6, 1.0f), Shape{2, 3});
  a.dy = ref(dy6, {2, 3});
  const Status unused = typed->can_implement(a);
  ASSERT_FALSE(unused.is_ok());
  EXPECT_NE(unused.error().message.find("'dy'"), std::string::npos) << unused.error().message;

  constexpr QuantizeOp kLb = QuantizeOp::FakeQuantizeLearnableBackward;
  const auto ld = with_conv(ElementKind::F32, ElementKind::S8, Shape{3}, conv)
                      .with_range(-4, 3)
                      .with_grad_factor(0.5)
                      .with_op(kLb);
  auto lb = QuantizePlan<float, int8_t, 1, kLb>::select(stream, ld);
  ASSERT_TRUE(lb.is_ok()) << lb.error().message;
  On<float> x(stream, {0.375f, 5.0f, -5.0f}, Shape{3});
  On<float> ls(stream, {0.5f}, Shape{1});
  On<float> lz(stream, {0.6f}, Shape{1});
  On<float> dy(stream, {1, 1, 1}, Shape{3});
  On<float> dx(stream, {9, 9, 9}, Shape{3}), ds(stream, {9}, Shape{1}), dz(stream, {9}, Shape{1});
  QuantizeArgs<float, int8_t, 1, kLb> g;
  g.x = ref(x, {3});
  g.scale = ls.view;
  g.zero_point = lz.view;
  g.dy = ref(dy, {3});
  g.dx = mut(dx, {3});
  g.dscale = ds.view;
  g.dzero_point = dz.view;
  ASSERT_TRUE(run_typed(stream, *lb, g).is_ok());
  EXPECT_EQ(dx.get(stream, 3), (std::vector<float>{1, 0, 0}));
  EXPECT_EQ(ds.get(stream, 1), (std::vector<float>{-1.375f}));
  EXPECT_EQ(dz.get(stream, 1), (std::vector<float>{-0.5f}));
  On<float> dx2(stream, {9, 9, 9}, Shape{3}), ds2(stream, {9}, Shape{1}), dz2(stream, {9}, Shape{1});
  dynamic::QuantizeArgs h = g.erased();
  h.dx = dx2.view, h.dscale = ds2.view, h.dzero_point = dz2.view;
  ASSERT_TRUE(run(stream, must_select(stream, kLb, ld), h).is_ok());
  EXPECT_EQ(dx.get(stream, 3), dx2.get(stream, 3));
  EXPECT_EQ(ds.get(stream, 1), ds2.get(stream, 1));
  EXPECT_EQ(dz.get(stream, 1), dz2.get(stream, 1));
}

std::string param_name(const ::testing::TestParamInfo<std::tuple<DeviceKind, QuantConvention>>& info) {
  return std::string(to_string(std::get<0>(info.param))) + "_" + std::string(to_string(std::get<1>(info.param)));
}
INSTANTIATE_TEST_SUITE_P(Devices, QuantizeValuesAll,
                         ::testing::Combine(::testing::ValuesIn(kTestDevices),
                                            ::testing::Values(QuantConvention::PyTorch, QuantConvention::Exact,
                                                              QuantConvention::Vllm)),
                         param_name);
INSTANTIATE_TEST_SUITE_P(Devices, QuantizeValues,
                         ::testing::Combine(::testing::ValuesIn(kTestDevices),
                                            ::testing::Values(QuantConvention::PyTorch, QuantConvention::Exact)),
                         param_name);

// ---------------------------------------------------------------------------------------------------
// Rejections
// ---------------------------------------------------------------------------------------------------

QuantizeDescriptor base() {
  return QuantizeDescriptor{}.with_element(ElementKind::F32).with_quantized(ElementKind::S8).with_shape(Shape{4, 6});
}

void expect_rejected(QuantizeOp op, const QuantizeDescriptor& d, ErrorCode code, std::string_view fragment) {
  for (const Stream& s : {Stream::host(), Stream::sim()}) {
    auto p = dynamic::QuantizePlan::select(s, QuantizeDescriptor{d}.with_op(op));
    ASSERT_FALSE(p.is_ok()) << fragment;
    EXPECT_EQ(p.error().code, code) << p.error().message;
    EXPECT_NE(p.error().message.find(fragment), std::string::npos) << p.error().message;
  }
}

TEST(QuantizeReject, Select) {
  using O = QuantizeOp;
  expect_rejected(O::Quantize, base().with_element(ElementKind::S8), ErrorCode::Unsupported, "element kind s8");
  expect_rejected(O::Quantize, base().with_quantized(ElementKind::F16), ErrorCode::Unsupported, "quantized kind f16");
  expect_rejected(O::Quantize, base().with_shape(Shape{}), ErrorCode::InvalidProblem, "rank >= 1");
  expect_rejected(O::Quantize, base().with_shape(Shape{4, -1}), ErrorCode::InvalidProblem, "shape");
  expect_rejected(O::Quantize, base().with_granularity(G::per_channel(2)), ErrorCode::InvalidProblem, "axis 2");
  expect_rejected(O::Quantize, base().with_granularity(G::per_channel(-3)), ErrorCode::InvalidProblem, "axis -3");
  expect_rejected(O::Quantize, base().with_shape(Shape{8}).with_granularity(G::per_token()),
                  ErrorCode::InvalidProblem, "per-token");
  expect_rejected(O::Quantize, base().with_granularity(G::per_group(-1, 0)), ErrorCode::InvalidProblem,
                  "group size must be positive");
  expect_rejected(O::Quantize, base().with_granularity(G::per_group(-1, 4)), ErrorCode::InvalidProblem,
                  "does not divide");
  expect_rejected(O::Quantize, base().with_granularity(G{static_cast<G::Kind>(9), 0, 0}), ErrorCode::InvalidProblem,
                  "invalid QuantGranularity");
  expect_rejected(O::Quantize, base().with_shape(Shape{1, 1, 1, 1, 1, 1, 1, 4}).with_granularity(G::per_group(-1, 2)),
                  ErrorCode::Unsupported, "needs rank 9");
  expect_rejected(O::Quantize, base().with_range(3, 2), ErrorCode::InvalidProblem, "quant_min 3 > quant_max 2");
  expect_rejected(O::Quantize, base().with_range(-129, 0), ErrorCode::InvalidProblem, "exceeds what s8 stores");
  expect_rejected(O::Quantize, base().with_quantized(ElementKind::U4).with_range(0, 16), ErrorCode::InvalidProblem,
                  "exceeds what u4 stores");
  expect_rejected(O::FakeQuantizeLearnable, base().with_quantized(ElementKind::U8).with_range(1, 255),
                  ErrorCode::InvalidProblem, "must include 0");
  expect_rejected(O::FakeQuantizeLearnableBackward, base().with_grad_factor(std::nan("")), ErrorCode::InvalidProblem,
                  "grad_factor");
  expect_rejected(O::Quantize, base().with_quantized(ElementKind::S4).with_shape(Shape{4, 5}),
                  ErrorCode::InvalidProblem, "must be even");
  expect_rejected(O::Dequantize,
                  base().with_quantized(ElementKind::U4).with_shape(Shape{4, 6}).with_granularity(G::per_group(-1, 3)),
                  ErrorCode::InvalidProblem, "the group size along it must be even; got 3");
  expect_rejected(static_cast<O>(42), base(), ErrorCode::InvalidProblem, "invalid QuantizeOp");
}

// The typed plan's op is its template argument: a descriptor naming another op, or other kinds or rank.
TEST(QuantizeReject, TypedPlanOfAnotherOp) {
  const auto d = base().with_op(QuantizeOp::Quantize);
  const auto p = QuantizePlan<float, int8_t, 2, QuantizeOp::Dequantize>::select(Stream::host(), d);
  ASSERT_FALSE(p.is_ok());
  EXPECT_EQ(p.error().code, ErrorCode::InvalidProblem);
  EXPECT_NE(p.error().message.find("op is quantize"), std::string::npos) << p.error().message;
  EXPECT_NE(p.error().message.find("dequantize"), std::string::npos) << p.error().message;
  EXPECT_FALSE((QuantizePlan<float, int8_t, 2>::select(Stream::host(), base().with_op(QuantizeOp::FakeQuantize))));
  EXPECT_TRUE((QuantizePlan<float, int8_t, 2>::select(Stream::host(), d)));
  EXPECT_FALSE((QuantizePlan<float, uint8_t, 2>::select(Stream::host(), d)));
  EXPECT_FALSE((QuantizePlan<double, int8_t, 2>::select(Stream::host(), d)));
  EXPECT_FALSE((QuantizePlan<float, int8_t, 3>::select(Stream::host(), d)));
}

TEST(QuantizeReject, CanImplementAndRun) {
  const Stream host = Stream::host();
  const auto plan = must_select(host, QuantizeOp::Quantize, base());
  std::vector<float> xs(24), ss(1), big(64);
  std::vector<int32_t> zs(1);
  std::vector<int8_t> qs(24);
  dynamic::QuantizeArgs ok;
  ok.x = ConstDynTensor::dense(xs.data(), ElementKind::F32, Shape{4, 6});
  ok.scale = ConstDynTensor::dense(ss.data(), ElementKind::F32, Shape{1});
  ok.zero_point = ConstDynTensor::dense(zs.data(), ElementKind::S32, Shape{1});
  ok.y = DynTensor::dense(qs.data(), ElementKind::S8, Shape{4, 6});
  ASSERT_TRUE(plan.can_implement(ok).is_ok());

  auto expect = [&](const dynamic::QuantizeArgs& t, std::string_view fragment) {
    const Status st = plan.can_implement(t);
    ASSERT_FALSE(st.is_ok()) << fragment;
    EXPECT_NE(st.error().message.find(fragment), std::string::npos) << st.error().message;
    EXPECT_FALSE(plan.run(host, {}, t).is_ok());
  };
  dynamic::QuantizeArgs t = ok;
  t.scale.kind = ElementKind::F16;
  expect(t, "scale");
  t = ok;
  t.zero_point = ConstDynTensor::dense(zs.data(), ElementKind::S32, Shape{4});
  expect(t, "zero_point");
  t = ok;
  t.dx = DynTensor::dense(big.data(), ElementKind::F32, Shape{4, 6});
  expect(t, "does not use operand 'dx'");
  t = ok;
  t.y.data = nullptr;
  expect(t, "y");
  t = ok;
  t.y = DynTensor::dense(ss.data(), ElementKind::S8, Shape{4, 6});  // over the scale
  expect(t, "may not overwrite 'scale'");

  // Outputs sharing memory; in place with other strides; a strided packed tensor.
  const auto lb = must_select(host, QuantizeOp::FakeQuantizeLearnableBackward, base());
  std::vector<float> dys(24), dxs(24), dss(1), dzs(1), zf(1);
  dynamic::QuantizeArgs b;
  b.x = ok.x;
  b.scale = ok.scale;
  b.zero_point = ConstDynTensor::dense(zf.data(), ElementKind::F32, Shape{1});
  b.dy = ConstDynTensor::dense(dys.data(), ElementKind::F32, Shape{4, 6});
  b.dx = DynTensor::dense(dxs.data(), ElementKind::F32, Shape{4, 6});
  b.dscale = DynTensor::dense(dss.data(), ElementKind::F32, Shape{1});
  b.dzero_point = DynTensor::dense(dzs.data(), ElementKind::F32, Shape{1});
  ASSERT_TRUE(lb.can_implement(b).is_ok());
  dynamic::QuantizeArgs c = b;
  c.dzero_point = c.dscale;
  EXPECT_NE(lb.can_implement(c).error().message.find("share memory"), std::string::npos);
  c = b;
  c.dx = DynTensor::dense(dys.data(), ElementKind::F32, Shape{4, 6});  // over dy
  c.dx.stride = {1, 4};  // same pointer, other strides
  c.dx.shape = Shape{4, 6};
  EXPECT_FALSE(lb.can_implement(c).is_ok());

  const auto packed = must_select(host, QuantizeOp::Quantize, base().with_quantized(ElementKind::S4));
  dynamic::QuantizeArgs p = ok;
  p.y = DynTensor::dense(qs.data(), ElementKind::S4, Shape{4, 6});
  ASSERT_TRUE(packed.can_implement(p).is_ok());
  p.y.stride = {12, 2};
  EXPECT_FALSE(packed.can_implement(p).is_ok());

  // A run with a too-small workspace (the learnable backward's two-pass reduction on sim).
  const Stream sim = Stream::sim();
  const auto big_desc = base().with_shape(Shape{512, 512});
  const auto lsim = must_select(sim, QuantizeOp::FakeQuantizeLearnableBackward, big_desc);
  ASSERT_GT(lsim.workspace_size(), 0u) << "expected the two-pass schedule for a 2^18-element per-tensor sum";
  std::vector<float> bx(512 * 512), bdy(512 * 512), bdx(512 * 512);
  dynamic::QuantizeArgs w = b;
  w.x = ConstDynTensor::dense(bx.data(), ElementKind::F32, Shape{512, 512});
  w.dy = ConstDynTensor::dense(bdy.data(), ElementKind::F32, Shape{512, 512});
  w.dx = DynTensor::dense(bdx.data(), ElementKind::F32, Shape{512, 512});
  const Status st = lsim.run(sim, Workspace(nullptr, 0), w);
  ASSERT_FALSE(st.is_ok());
  EXPECT_EQ(st.error().code, ErrorCode::WorkspaceTooSmall);

  // A run on another device than the plan's.
  EXPECT_FALSE(plan.run(sim, {}, ok).is_ok());
}

}  // namespace
}  // namespace baracuda::test
