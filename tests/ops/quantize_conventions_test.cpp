// QuantizePlan's conventions (include/baracuda/ops/quant_convention.hpp) on every device, each against a
// tiny model written here from the conventions' definitions (not from the library's code):
// - a near tie that separates the reciprocal (PyTorch, vLLM) from the division (Exact), through every op;
// - vLLM's integer path: the rounded value saturates to int32, the zero point wraps around in 32 bits, the
//   sum saturates to [qmin, qmax] (and NaN counts as 0), for every data kind vLLM takes and every quantized kind;
// - f64 data under PyTorch: the scale is used as f32;
// - the rejections: vLLM beyond Quantize / Dequantize or with f64 data, TransformerEngine, an invalid value;
//   packed 4-bit with an odd group size along the last axis;
// - odd group sizes with packed storage along other axes, and every granularity with packed storage, against
//   the model (host, sim and cuda).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstring>
#include <deque>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "baracuda/baracuda.hpp"
#include "support/devices.hpp"
#include "support/numeric.hpp"
#include "support/random.hpp"
#include "support/tensor.hpp"

namespace baracuda::test {
namespace {

using G = QuantGranularity;
using C = QuantConvention;
using O = QuantizeOp;
using Bytes = std::vector<uint8_t>;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// ---------------------------------------------------------------------------------------------------
// The model
// ---------------------------------------------------------------------------------------------------

/// x against the scale before rounding, in f32: x · (1.0f / s) (PyTorch, vLLM) or x / s (Exact).
float scaled(C conv, float x, float s) { return conv == C::Exact ? x / s : x * (1.0f / s); }

/// The stored value of x (an f32 value) under `conv`.
int32_t model_q(C conv, float x, float s, int32_t zp, int32_t qmin, int32_t qmax) {
  const float r = scaled(conv, x, s);
  if (conv == C::Vllm) {  // cvt.rni.sat.s32 (NaN → 0), + zp in wrap-around int32, saturated to the range
    int64_t t = 0;
    if (!std::isnan(r)) {
      const double v = std::nearbyint(static_cast<double>(r));
      t = v >= 2147483647.0 ? INT32_MAX : (v <= -2147483648.0 ? INT32_MIN : static_cast<int64_t>(v));
    }
    const uint32_t wrapped = static_cast<uint32_t>(t) + static_cast<uint32_t>(zp);
    const int64_t sum = wrapped >= 0x80000000u ? static_cast<int64_t>(wrapped) - 0x100000000ll : wrapped;
    return static_cast<int32_t>(std::clamp<int64_t>(sum, qmin, qmax));
  }
  const double v = std::isnan(r) ? zp : std::nearbyint(static_cast<double>(r)) + zp;  // NaN quantizes to zp
  return v < qmin ? qmin : (v > qmax ? qmax : static_cast<int32_t>(v));
}

/// Whether nearbyint(scaled) + zp lies in [qmin, qmax] (the straight-through mask).
bool model_inside(C conv, float x, float s, int32_t zp, int32_t qmin, int32_t qmax) {
  const double v = std::nearbyint(static_cast<double>(scaled(conv, x, s))) + zp;
  return v >= qmin && v <= qmax;
}

// ---------------------------------------------------------------------------------------------------
// Device tensors
// ---------------------------------------------------------------------------------------------------

Bytes encode(ElementKind k, const std::vector<double>& v) {
  Bytes out(v.size() * static_cast<size_t>(element_bytes(k)));
  for (size_t i = 0; i < v.size(); ++i)
    EXPECT_TRUE(encode_exact(k, v[i], out.data() + i * static_cast<size_t>(element_bytes(k)))) << v[i];
  return out;
}
std::vector<double> decode(ElementKind k, const Bytes& b) {
  std::vector<double> v(b.size() / static_cast<size_t>(element_bytes(k)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = decode_value(k, b.data() + i * static_cast<size_t>(element_bytes(k)));
  return v;
}
Bytes int32s(const std::vector<int32_t>& v) {
  Bytes out(v.size() * 4);
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

/// Dense device tensors of one test; inputs uploaded, outputs filled with 0xA5.
class Tensors {
 public:
  explicit Tensors(const Stream& s) : stream_(s) {}
  DynTensor in(ElementKind k, const Shape& shape, const Bytes& bytes) {
    auto t = make_device_tensor(stream_, k, shape, dense_layout(shape), bytes);
    EXPECT_TRUE(t) << t.error().to_string();
    held_.push_back(std::move(t).value());
    return held_.back().view;
  }
  DynTensor out(ElementKind k, const Shape& shape) {
    return in(k, shape, Bytes(static_cast<size_t>(storage_bytes(k, shape.numel())), 0xA5));
  }
  Bytes get(const ConstDynTensor& v) const {
    EXPECT_TRUE(stream_.synchronize().is_ok());
    for (const DeviceTensor& t : held_)
      if (t.view.data == v.data) return download(t);
    ADD_FAILURE() << "unknown tensor";
    return {};
  }

 private:
  const Stream& stream_;
  std::deque<DeviceTensor> held_;
};

/// select, can_implement and run; the select result's error when select fails.
Status run(const Stream& s, O op, const QuantizeDescriptor& d, const dynamic::QuantizeArgs& t) {
  auto p = dynamic::QuantizePlan::select(s, QuantizeDescriptor{d}.with_op(op));
  if (!p) return p.error();
  BARACUDA_TRY(p->can_implement(t));
  Buffer ws;
  if (p->workspace_size() > 0) ws = std::move(Buffer::allocate(s, p->workspace_size())).value();
  return p->run(s, Workspace(ws.data(), p->workspace_size()), t);
}

QuantizeDescriptor desc(ElementKind e, ElementKind q, const Shape& shape, C conv) {
  return QuantizeDescriptor{}.with_element(e).with_quantized(q).with_shape(shape).with_convention(conv);
}

class QuantizeConventions : public ::testing::TestWithParam<std::tuple<DeviceKind, C>> {};
/// f64 data: PyTorch and Exact (vLLM takes none: QuantizeConventionReject.WhatAConventionLacks).
class QuantizeConventionsF64 : public ::testing::TestWithParam<std::tuple<DeviceKind, C>> {};

std::string param_name(const ::testing::TestParamInfo<std::tuple<DeviceKind, C>>& info) {
  return std::string(to_string(std::get<0>(info.param))) + "_" + std::string(to_string(std::get<1>(info.param)));
}

// ---------------------------------------------------------------------------------------------------
// A near tie through every op
// ---------------------------------------------------------------------------------------------------

// s = 0.3f: 1.65f / 0.3f rounds to 5.4999995 (→ 5) but 1.65f · f32(1 / 0.3f) to 5.5 (→ 6); likewise ±2.25f
// (±7 or ±8: on the edge of the range [−7, 7], so the masks differ too) and the f32 successor of 0.75f.
TEST_P(QuantizeConventions, NearTieThroughEveryOp) {
  const auto [device, conv] = GetParam();
  BARACUDA_TEST_STREAM(stream, device);
  const float s = 0.3f, above = std::nextafter(0.75f, 1.0f);
  const std::vector<float> xs = {2.25f, -2.25f, 1.65f, -1.65f, above, -above, 0.3f, -1.0f};
  int split = 0;
  for (float x : xs) split += std::nearbyint(x * (1.0f / s)) != std::nearbyint(x / s);
  ASSERT_EQ(split, 6) << "the inputs must separate the reciprocal from the division";
  const Shape shape{static_cast<int64_t>(xs.size())};
  const int32_t zp = 0, qmin = -7, qmax = 7;
  const auto d = desc(ElementKind::F32, ElementKind::S8, shape, conv).with_range(qmin, qmax).with_grad_factor(1.0);
  {
    auto probe = dynamic::QuantizePlan::select(stream, QuantizeDescriptor{d}.with_op(O::Quantize));
    BARACUDA_SKIP_IF_NO_CUDA_KERNELS(probe, device);
  }
  Tensors t(stream);
  const std::vector<double> xd(xs.begin(), xs.end());
  const DynTensor x = t.in(ElementKind::F32, shape, encode(ElementKind::F32, xd));
  const DynTensor sc = t.in(ElementKind::F32, Shape{1}, encode(ElementKind::F32, {s}));
  const DynTensor z = t.in(ElementKind::S32, Shape{1}, int32s({zp}));
  const DynTensor zf = t.in(ElementKind::F32, Shape{1}, encode(ElementKind::F32, {0.0}));
  const DynTensor dy = t.in(ElementKind::F32, shape, encode(ElementKind::F32, std::vector<double>(xs.size(), 1.0)));
  std::vector<double> q_want, y_want, mask_want, qb_want;
  for (float v : xs) {
    const int32_t q = model_q(conv, v, s, zp, qmin, qmax);
    const bool in = model_inside(conv, v, s, zp, qmin, qmax);
    q_want.push_back(q);
    y_want.push_back(static_cast<float>(q - zp) * s);
    mask_want.push_back(in ? 1.0 : 0.0);
    qb_want.push_back(in ? 1.0f / s : 0.0f);
  }
  {  // Quantize (every convention) and Dequantize of the result
    dynamic::QuantizeArgs a;
    a.x = x, a.scale = sc, a.zero_point = z, a.y = t.out(ElementKind::S8, shape);
    ASSERT_TRUE(run(stream, O::Quantize, d, a).is_ok());
    EXPECT_EQ(decode(ElementKind::S8, t.get(a.y)), q_want);
    dynamic::QuantizeArgs b;
    b.x = a.y, b.scale = sc, b.zero_point = z, b.y = t.out(ElementKind::F32, shape);
    ASSERT_TRUE(run(stream, O::Dequantize, d, b).is_ok());
    EXPECT_EQ(decode(ElementKind::F32, t.get(b.y)), y_want);
  }
  if (conv == C::Vllm) return;  // the rest is Unsupported (QuantizeConventionReject)
  {  // FakeQuantize, the learnable forward (zp 0.0), and the backward passes
    dynamic::QuantizeArgs a;
    a.x = x, a.scale = sc, a.zero_point = z, a.y = t.out(ElementKind::F32, shape);
    ASSERT_TRUE(run(stream, O::FakeQuantize, d, a).is_ok());
    EXPECT_EQ(decode(ElementKind::F32, t.get(a.y)), y_want);
    a.zero_point = zf;
    ASSERT_TRUE(run(stream, O::FakeQuantizeLearnable, d, a).is_ok());
    EXPECT_EQ(decode(ElementKind::F32, t.get(a.y)), y_want);
    dynamic::QuantizeArgs b;
    b.x = x, b.scale = sc, b.zero_point = z, b.dy = dy, b.dx = t.out(ElementKind::F32, shape);
    ASSERT_TRUE(run(stream, O::FakeQuantizeBackward, d, b).is_ok());
    EXPECT_EQ(decode(ElementKind::F32, t.get(b.dx)), mask_want);
    ASSERT_TRUE(run(stream, O::QuantizeBackward, d, b).is_ok());
    EXPECT_EQ(decode(ElementKind::F32, t.get(b.dx)), qb_want);
    b.zero_point = zf, b.dscale = t.out(ElementKind::F32, Shape{1}), b.dzero_point = t.out(ElementKind::F32, Shape{1});
    ASSERT_TRUE(run(stream, O::FakeQuantizeLearnableBackward, d, b).is_ok());
    EXPECT_EQ(decode(ElementKind::F32, t.get(b.dx)), mask_want);  // zp 0: fused or not, the same rounding
  }
}

// ---------------------------------------------------------------------------------------------------
// vLLM's integer path
// ---------------------------------------------------------------------------------------------------

// s = 2^-16: x = ±49152 gives x · (1/s) ≈ ±3.2e9, beyond int32. vLLM saturates that to INT32_MAX / INT32_MIN,
// then the zero point wraps it around: INT32_MAX + 5 is negative, so the stored value is qmin, and
// INT32_MIN − 5 is positive, so qmax. NaN counts as 0: the zero point, clamped. PyTorch and Exact clamp the
// unbounded value instead (+huge → qmax). Every data kind vLLM takes, every quantized kind.
TEST_P(QuantizeConventions, VllmSaturatesThenWrapsTheZeroPoint) {
  const auto [device, conv] = GetParam();
  BARACUDA_TEST_STREAM(stream, device);
  const float s = 0x1p-16f;
  const std::vector<double> xs = {49152.0, -49152.0, kInf, -kInf, kNaN, 5 * 0x1p-17, -5 * 0x1p-17, 100 * 0x1p-16,
                                  -3 * 0x1p-16, 0.0, 7 * 0x1p-17, 0x1p15};
  const Shape shape{static_cast<int64_t>(xs.size())};
  int checked_wrap = 0;
  for (ElementKind e : {ElementKind::F32, ElementKind::F16, ElementKind::Bf16})
    for (ElementKind qk : {ElementKind::S8, ElementKind::U8, ElementKind::S4, ElementKind::U4})
      for (int32_t zp : {5, -5, 300, 0}) {
        SCOPED_TRACE(std::string(to_string(e)) + " " + std::string(to_string(qk)) + " zp " + std::to_string(zp));
        const auto d = desc(e, qk, shape, conv);
        auto plan = dynamic::QuantizePlan::select(stream, QuantizeDescriptor{d}.with_op(O::Quantize));
        BARACUDA_SKIP_IF_NO_CUDA_KERNELS(plan, device);
        ASSERT_TRUE(plan) << plan.error().to_string();
        const int32_t qmin = plan->quant_min(), qmax = plan->quant_max();
        Tensors t(stream);
        dynamic::QuantizeArgs a;
        a.x = t.in(e, shape, encode(e, xs));
        a.scale = t.in(ElementKind::F32, Shape{1}, encode(ElementKind::F32, {s}));
        a.zero_point = t.in(ElementKind::S32, Shape{1}, int32s({zp}));
        a.y = t.out(qk, shape);
        // PyTorch and Exact take a zero point in [qmin, qmax]: the host and sim devices reject another at
        // run (quantize.hpp); vLLM adds any zero point.
        const Status st = run(stream, O::Quantize, d, a);
        if (conv != C::Vllm && device != DeviceKind::Cuda && (zp < qmin || zp > qmax)) {
          EXPECT_EQ(st.code(), ErrorCode::InvalidProblem) << st.to_string();
          continue;
        }
        ASSERT_TRUE(st.is_ok()) << st.to_string();
        const Bytes got = t.get(a.y);
        for (size_t i = 0; i < xs.size(); ++i) {
          int32_t v = 0;
          if (is_packed(qk)) {
            v = (got[i / 2] >> (4 * (i % 2))) & 0xF;
            if (qk == ElementKind::S4 && v >= 8) v -= 16;
          } else {
            v = qk == ElementKind::S8 ? static_cast<int8_t>(got[i]) : got[i];
          }
          const int32_t want = model_q(conv, static_cast<float>(xs[i]), s, zp, qmin, qmax);
          EXPECT_EQ(v, want) << "x = " << xs[i];
          if (conv == C::Vllm && zp == 5 && i == 0) {  // the wrap-around, spelled out
            EXPECT_EQ(v, qmin);
            ++checked_wrap;
          }
          if (conv == C::Vllm && zp == -5 && i == 1) {
            EXPECT_EQ(v, qmax);
          }
          if (conv != C::Vllm && i == 0) {
            EXPECT_EQ(v, qmax);
          }
          if (i == 4) {
            EXPECT_EQ(v, std::clamp(zp, qmin, qmax)) << "NaN quantizes to the clamped zero point";
          }
        }
      }
  EXPECT_EQ(checked_wrap, conv == C::Vllm ? 12 : 0);
}

// f64 data under PyTorch: its kernels take the scale as f32 (s = 0.1 → 0.100000001490116…), for the
// reciprocal and for the output; Exact uses the f64 scale.
TEST_P(QuantizeConventionsF64, ScaleIsUsedAsF32UnderPyTorch) {
  const auto [device, conv] = GetParam();
  BARACUDA_TEST_STREAM(stream, device);
  const double s = 0.1;
  const std::vector<double> xs = {0.25, 0.15, -0.35, 12.7, 0.1, 1e-3, -12.85};
  const Shape shape{static_cast<int64_t>(xs.size())};
  const auto d = desc(ElementKind::F64, ElementKind::S8, shape, conv);
  auto plan = dynamic::QuantizePlan::select(stream, QuantizeDescriptor{d}.with_op(O::FakeQuantize));
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(plan, device);
  Tensors t(stream);
  dynamic::QuantizeArgs a;
  a.x = t.in(ElementKind::F64, shape, encode(ElementKind::F64, xs));
  a.scale = t.in(ElementKind::F64, Shape{1}, encode(ElementKind::F64, {s}));
  a.zero_point = t.in(ElementKind::S32, Shape{1}, int32s({3}));
  a.y = t.out(ElementKind::F64, shape);
  ASSERT_TRUE(run(stream, O::FakeQuantize, d, a).is_ok());
  const double s32 = static_cast<float>(s), inv = static_cast<double>(1.0f / static_cast<float>(s));
  std::vector<double> want;
  int differ = 0;
  for (double x : xs) {
    const double qt = std::clamp(std::nearbyint(x * inv) + 3, -128.0, 127.0) - 3, qe =
                                 std::clamp(std::nearbyint(x / s) + 3, -128.0, 127.0) - 3;
    differ += qt * s32 != qe * s;
    want.push_back(conv == C::PyTorch ? qt * s32 : qe * s);
  }
  EXPECT_EQ(differ, static_cast<int>(xs.size()) - 1) << "every nonzero output differs between the conventions";
  EXPECT_EQ(decode(ElementKind::F64, t.get(a.y)), want);
}

INSTANTIATE_TEST_SUITE_P(Devices, QuantizeConventions,
                         ::testing::Combine(::testing::ValuesIn(kTestDevices),
                                            ::testing::Values(C::PyTorch, C::Exact, C::Vllm)),
                         param_name);
INSTANTIATE_TEST_SUITE_P(Devices, QuantizeConventionsF64,
                         ::testing::Combine(::testing::ValuesIn(kTestDevices), ::testing::Values(C::PyTorch, C::Exact)),
                         param_name);

// ---------------------------------------------------------------------------------------------------
// Packed storage: odd group sizes and every granularity
// ---------------------------------------------------------------------------------------------------

/// The row-major parameter number of element (r, c) of an [R, K] tensor under granularity g.
int64_t param_of(const G& g, int64_t r, int64_t c, int64_t K) {
  const int axis = g.axis < 0 ? g.axis + 2 : g.axis;
  switch (g.kind) {
    case G::Kind::PerTensor: return 0;
    case G::Kind::PerChannel: return axis == 0 ? r : c;
    case G::Kind::PerToken: return r;
    case G::Kind::PerGroup: return axis == 0 ? (r / g.group_size) * K + c : r * (K / g.group_size) + c / g.group_size;
  }
  return 0;
}

class QuantizePackedGranularity : public ::testing::TestWithParam<std::tuple<DeviceKind, C>> {};

// [6, 18] with s4 and u4 under every granularity that keeps (even, odd) pairs of the last axis inside one
// parameter set, odd group sizes along axis 0 included: Quantize against the model (packed: even element in
// the low nibble), Dequantize of random bytes against (q − zp) · s rounded once to f32.
TEST_P(QuantizePackedGranularity, MatchesTheModel) {
  const auto [device, conv] = GetParam();
  BARACUDA_TEST_STREAM(stream, device);
  const int64_t R = 6, K = 18;
  const Shape shape{R, K};
  const std::vector<G> gs = {G::per_tensor(), G::per_channel(0), G::per_channel(-1), G::per_token(),
                             G::per_group(0, 3), G::per_group(0, 1), G::per_group(0, 6), G::per_group(-1, 2),
                             G::per_group(1, 6), G::per_group(-1, 18)};
  Rng rng(77);
  for (ElementKind qk : {ElementKind::S4, ElementKind::U4})
    for (const G& g : gs) {
      SCOPED_TRACE(std::string(to_string(qk)) + " " + g.to_string());
      const auto d = desc(ElementKind::F32, qk, shape, conv).with_granularity(g);
      auto plan = dynamic::QuantizePlan::select(stream, QuantizeDescriptor{d}.with_op(O::Quantize));
      BARACUDA_SKIP_IF_NO_CUDA_KERNELS(plan, device);
      ASSERT_TRUE(plan) << plan.error().to_string();
      const Shape ps = plan->param_shape();
      const int32_t qmin = plan->quant_min(), qmax = plan->quant_max();
      std::vector<double> x(static_cast<size_t>(R * K)), s(static_cast<size_t>(ps.numel()));
      std::vector<int32_t> zp(s.size());
      for (size_t i = 0; i < s.size(); ++i) {
        s[i] = static_cast<float>(rng.uniform(0.05, 0.4));
        zp[i] = qmin + static_cast<int32_t>(rng.below(static_cast<uint64_t>(qmax - qmin + 1)));
      }
      for (int64_t r = 0; r < R; ++r)
        for (int64_t c = 0; c < K; ++c) {  // half near a tie of the element's own scale
          const double sc = s[static_cast<size_t>(param_of(g, r, c, K))];
          const double k = static_cast<double>(static_cast<int64_t>(rng.below(24))) - 12.0 + 0.5;
          x[static_cast<size_t>(r * K + c)] =
              rng.below(2) ? static_cast<float>(k * sc) : static_cast<float>(rng.uniform(-12.0, 12.0) * sc);
        }
      Tensors t(stream);
      dynamic::QuantizeArgs a;
      a.x = t.in(ElementKind::F32, shape, encode(ElementKind::F32, x));
      a.scale = t.in(ElementKind::F32, ps, encode(ElementKind::F32, s));
      a.zero_point = t.in(ElementKind::S32, ps, int32s(zp));
      a.y = t.out(qk, shape);
      ASSERT_TRUE(run(stream, O::Quantize, d, a).is_ok());
      Bytes want(static_cast<size_t>(R * K / 2), 0);
      for (int64_t i = 0; i < R * K; ++i) {
        const size_t p = static_cast<size_t>(param_of(g, i / K, i % K, K));
        const int32_t q = model_q(conv, static_cast<float>(x[static_cast<size_t>(i)]), static_cast<float>(s[p]), zp[p],
                                  qmin, qmax);
        want[static_cast<size_t>(i / 2)] |= static_cast<uint8_t>((q & 0xF) << (4 * (i % 2)));
      }
      EXPECT_EQ(t.get(a.y), want) << "quantize";

      Bytes bytes(want.size());
      for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng.below(256));
      dynamic::QuantizeArgs b;
      b.x = t.in(qk, shape, bytes);
      b.scale = a.scale, b.zero_point = a.zero_point, b.y = t.out(ElementKind::F32, shape);
      ASSERT_TRUE(run(stream, O::Dequantize, d, b).is_ok());
      std::vector<double> y(static_cast<size_t>(R * K));
      for (int64_t i = 0; i < R * K; ++i) {
        const size_t p = static_cast<size_t>(param_of(g, i / K, i % K, K));
        int32_t n = (bytes[static_cast<size_t>(i / 2)] >> (4 * (i % 2))) & 0xF;
        if (qk == ElementKind::S4 && n >= 8) n -= 16;
        y[static_cast<size_t>(i)] = static_cast<float>(static_cast<double>(n - zp[p]) * s[p]);  // exact, then f32
      }
      EXPECT_EQ(decode(ElementKind::F32, t.get(b.y)), y) << "dequantize";
    }
}

INSTANTIATE_TEST_SUITE_P(Devices, QuantizePackedGranularity,
                         ::testing::Combine(::testing::ValuesIn(kTestDevices),
                                            ::testing::Values(C::PyTorch, C::Exact, C::Vllm)),
                         param_name);

// ---------------------------------------------------------------------------------------------------
// Rejections
// ---------------------------------------------------------------------------------------------------

void expect_rejected(O op, const QuantizeDescriptor& d, ErrorCode code, std::string_view fragment) {
  for (const Stream& s : {Stream::host(), Stream::sim()}) {
    auto p = dynamic::QuantizePlan::select(s, QuantizeDescriptor{d}.with_op(op));
    ASSERT_FALSE(p.is_ok()) << to_string(op) << ": " << fragment;
    EXPECT_EQ(p.error().code, code) << p.error().message;
    EXPECT_NE(p.error().message.find(fragment), std::string::npos) << p.error().message;
  }
}

/// Every op of the catalog (quantize_ops.def).
const std::vector<O> kOps = [] {
  std::vector<O> v;
  for (size_t i = 0; i < std::size(detail::kQuantizeOps); ++i) v.push_back(static_cast<O>(i));
  return v;
}();

TEST(QuantizeConventionReject, WhatAConventionLacks) {
  const auto base = desc(ElementKind::F32, ElementKind::S8, Shape{4, 6}, C::PyTorch);
  for (O op : kOps) {
    SCOPED_TRACE(to_string(op));
    const bool q_or_dq = op == O::Quantize || op == O::Dequantize;
    for (ElementKind e : {ElementKind::F16, ElementKind::Bf16, ElementKind::F32}) {
      auto d = QuantizeDescriptor{base}.with_element(e).with_convention(C::Vllm);
      if (q_or_dq) EXPECT_TRUE(dynamic::QuantizePlan::select(Stream::host(), d.with_op(op)).is_ok());
      else expect_rejected(op, d, ErrorCode::Unsupported, "vllm convention covers quantize and dequantize");
    }
    expect_rejected(op, QuantizeDescriptor{base}.with_element(ElementKind::F64).with_convention(C::Vllm),
                    ErrorCode::Unsupported, q_or_dq ? "f64" : "vllm convention covers");
    expect_rejected(op, QuantizeDescriptor{base}.with_convention(C::TransformerEngine), ErrorCode::Unsupported,
                    "transformer_engine convention applies to FP8");
    expect_rejected(op, QuantizeDescriptor{base}.with_convention(static_cast<C>(9)), ErrorCode::InvalidProblem,
                    "invalid QuantConvention");
    for (C conv : {C::PyTorch, C::Exact})
      EXPECT_TRUE(
          dynamic::QuantizePlan::select(Stream::sim(), QuantizeDescriptor{base}.with_convention(conv).with_op(op)));
  }
}

// Packed s4/u4 pair elements along the last axis: a per-group granularity along it needs an even group size
// (an odd one would split a byte between two groups), whatever the extent; along another axis any size works.
TEST(QuantizeConventionReject, PackedOddGroupAlongTheLastAxis) {
  for (ElementKind qk : {ElementKind::S4, ElementKind::U4})
    for (O op : {O::Quantize, O::Dequantize})
      for (C conv : {C::PyTorch, C::Exact, C::Vllm}) {
        SCOPED_TRACE(std::string(to_string(qk)) + " " + std::string(to_string(op)) + " " +
                     std::string(to_string(conv)));
        const auto d = desc(ElementKind::F32, qk, Shape{6, 18}, conv);
        for (int size : {3, 9, 1})
          expect_rejected(op, QuantizeDescriptor{d}.with_granularity(G::per_group(-1, size)),
                          ErrorCode::InvalidProblem, "group size along it must be even; got " + std::to_string(size));
        expect_rejected(op, QuantizeDescriptor{d}.with_granularity(G::per_group(1, 3)), ErrorCode::InvalidProblem,
                        "group size");
        expect_rejected(op, QuantizeDescriptor{d}.with_shape(Shape{6, 9}), ErrorCode::InvalidProblem,
                        "its extent must be even; got 9");
        for (const G& g : {G::per_group(0, 3), G::per_group(-1, 2), G::per_channel(-1), G::per_token()})
          EXPECT_TRUE(
              dynamic::QuantizePlan::select(Stream::host(), QuantizeDescriptor{d}.with_granularity(g).with_op(op)))
              << g.to_string();
        // An 8-bit kind takes any group size; the fake-quantize ops store no packed tensor.
        const auto s8 = QuantizeDescriptor{d}.with_quantized(ElementKind::S8).with_granularity(G::per_group(-1, 3));
        EXPECT_TRUE(dynamic::QuantizePlan::select(Stream::host(), QuantizeDescriptor{s8}.with_op(op)));
      }
  EXPECT_TRUE(dynamic::QuantizePlan::select(Stream::host(),
                                            desc(ElementKind::F32, ElementKind::U4, Shape{6, 18}, C::PyTorch)
                                                .with_granularity(G::per_group(-1, 3))
                                                .with_op(O::FakeQuantize)));
}

}  // namespace
}  // namespace baracuda::test
