// DynamicRangeQuantizePlan: every (x kind × q kind × scope × mode) on the sim (and cuda) device against the
// host reference — q, scale and zero point compared bit for bit — over 0-size, one-element, odd, strided
// and long-row shapes with an all-zero segment, the convention rotating through PyTorch, Exact and Vllm;
// hand-computed values (ties, the asymmetric zero point), NaN / inf / underflow rules; the fused single-pass
// path and its fallback (SKU variant, edge-case rows, strided and unaligned operands) under every
// convention; and a negative test per rejection. The conventions themselves (against an independent
// reference, by hand, vLLM's golden data) are in dynamic_range_convention_test.cpp and
// dynamic_range_vllm_golden_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "baracuda/baracuda.hpp"
#include "support/compare.hpp"
#include "support/devices.hpp"
#include "support/doc_table.hpp"
#include "support/random.hpp"
#include "support/tensor.hpp"
#include "dynamic_range_test_support.hpp"

namespace baracuda::test {
namespace {

using Desc = DynamicRangeQuantizeDescriptor;

// Outputs as bytes; run_plan runs a plan over x and returns them (dynamic_range_test_support.hpp).
using Outputs = dynamic_range::RawOutputs;
using dynamic_range::catalog_modes;
using dynamic_range::mode_text;
using dynamic_range::PathCase;
Result<Outputs> run_plan(const Stream& stream, const Desc& desc, const std::vector<uint8_t>& x_storage,
                         const Strided& x_layout, bool pass_zp = true) {
  return dynamic_range::run_plan_bytes(stream, desc, x_storage, x_layout, pass_zp);
}

Stream host() { return Stream::host(); }

void expect_same(const Outputs& got, const Outputs& want, const Desc& d, int64_t q_n, int64_t p_n) {
  const ElementKind sk = d.element == ElementKind::F64 ? ElementKind::F64 : ElementKind::F32;
  EXPECT_TRUE(same_elements(d.quantized, got.q, want.q, is_packed(d.quantized) ? q_n / 2 : q_n)) << "q";
  EXPECT_TRUE(same_elements(sk, got.scale, want.scale, p_n)) << "scale";
  if (!want.zp.empty()) {
    EXPECT_TRUE(same_elements(ElementKind::S32, got.zp, want.zp, p_n)) << "zero point";
  }
}

struct ShapeCase {
  std::string name;
  Shape shape;
  bool transposed = false;  // x viewed column-major (rank 2)
};

std::vector<ShapeCase> shape_cases() {
  return {{"6x8", Shape{6, 8}},     {"1x2", Shape{1, 2}},        {"3x5x6", Shape{3, 5, 6}},
          {"0x8", Shape{0, 8}},     {"5x0", Shape{5, 0}},        {"7x4_transposed", Shape{7, 4}, true},
          {"2x1030", Shape{2, 1030}}, {"1x2100", Shape{1, 2100}}};
}

std::vector<QuantGranularity> scopes() {
  return {QuantGranularity::per_token(),         QuantGranularity::per_tensor(),
          QuantGranularity::per_channel(0),      QuantGranularity::per_channel(-1),
          QuantGranularity::per_group(-1, 2),    QuantGranularity::per_group(0, 1)};
}

// One case per (device, x kind), named <device>_<kind>, so that a filter can pick kinds (the reverse-schedule
// twin runs f32 and bf16: tests/ops/CMakeLists.txt).
class DynamicRangeSweep : public ::testing::TestWithParam<std::tuple<DeviceKind, ElementKind>> {};

TEST_P(DynamicRangeSweep, EveryKindScopeAndModeMatchesTheHostReference) {
  const auto [device, xk] = GetParam();
  BARACUDA_TEST_STREAM(stream, device);
  const ElementKind qs[] = {ElementKind::S8, ElementKind::U8, ElementKind::S4, ElementKind::U4};
  const QuantConvention conventions[] = {QuantConvention::PyTorch, QuantConvention::Exact, QuantConvention::Vllm};
  uint64_t seed = 1 + static_cast<uint64_t>(xk) * 1000;
  int turn = 0;
  for (const ShapeCase& c : shape_cases()) {
    const int64_t n = c.shape.numel();
    Strided layout = dense_layout(c.shape);
    if (c.transposed) layout.stride = {1, c.shape[0]};
    std::vector<double> values;
    auto x = random_floats(xk, n, -3.0, 2.0, seed++, &values);
    // An all-zero segment: the first row (per token) / the first elements.
    const int64_t zeros = std::min<int64_t>(n, c.shape[c.shape.rank - 1]);
    if (zeros > 0) std::memset(x.data(), 0, static_cast<size_t>(storage_bytes(xk, zeros)));
    for (ElementKind qk : qs)
      for (const QuantGranularity& g : scopes())
        for (DynamicRangeMode m : catalog_modes()) {
          // The convention rotates (Vllm skips f64, which it does not take).
          QuantConvention conv = conventions[turn++ % 3];
          if (conv == QuantConvention::Vllm && xk == ElementKind::F64) conv = QuantConvention::Exact;
          SCOPED_TRACE(c.name + " " + std::string(to_string(xk)) + "→" + std::string(to_string(qk)) + " " +
                       g.to_string() + mode_text(m) + std::string(to_string(conv)));
          const Desc d = Desc{}.with_element(xk).with_quantized(qk).with_shape(c.shape).with_granularity(g).with_mode(m)
                             .with_convention(conv);
          auto want_plan = dynamic::DynamicRangeQuantizePlan::select(host(), d);
          if (!want_plan) {  // the shape does not fit this scope or packing: every device must agree
            auto p = dynamic::DynamicRangeQuantizePlan::select(stream, d);
            ASSERT_FALSE(p.is_ok());
            EXPECT_EQ(p.error().code, want_plan.error().code);
            continue;
          }
          auto want = run_plan(host(), d, x, layout);
          ASSERT_TRUE(want.is_ok()) << want.error().to_string();
          auto got = run_plan(stream, d, x, layout);
          ASSERT_TRUE(got.is_ok()) << got.error().to_string();
          expect_same(*got, *want, d, n, want_plan->param_shape().numel());
        }
  }
}

/// The float kinds by device, named <device>_<kind>.
const auto kDevicesAndKinds =
    ::testing::Combine(::testing::Values(DeviceKind::Sim, DeviceKind::Cuda),
                       ::testing::Values(ElementKind::F16, ElementKind::Bf16, ElementKind::F32, ElementKind::F64));
std::string device_and_kind(const ::testing::TestParamInfo<std::tuple<DeviceKind, ElementKind>>& info) {
  return std::string(to_string(std::get<0>(info.param))) + "_" + std::string(to_string(std::get<1>(info.param)));
}

INSTANTIATE_TEST_SUITE_P(Devices, DynamicRangeSweep, kDevicesAndKinds, device_and_kind);

// The fused single-pass path (a warp or a block per row) and its fallback to the two passes: the plan's
// SKU variant names the path, and q, scale and zero point match the host reference bit for bit over rows
// that are all zero, all −0, hold NaN / +inf / −inf, have odd lengths (tails, rows not 16-byte aligned),
// strided x, per-group and per-channel segments that are rows, and rows too long for shared memory.
class DynamicRangeFused : public ::testing::TestWithParam<DeviceKind> {};

// Sets storage element i of a float kind to v (NaN, ±inf, −0 included).
void set_special(ElementKind k, std::vector<uint8_t>& x, int64_t i, double v) {
  const size_t at = static_cast<size_t>(i);
  if (k == ElementKind::F32) {
    const float f = static_cast<float>(v);
    std::memcpy(x.data() + 4 * at, &f, 4);
  } else if (k == ElementKind::F64) {
    std::memcpy(x.data() + 8 * at, &v, 8);
  } else {  // f16 / bf16: the bit patterns of NaN, ±inf, −0
    const bool h = k == ElementKind::F16;
    uint16_t b = 0;
    if (v != v) b = h ? 0x7E00 : 0x7FC0;
    else if (std::isinf(v)) b = static_cast<uint16_t>((v < 0 ? 0x8000 : 0) | (h ? 0x7C00 : 0x7F80));
    else if (v == 0 && std::signbit(v)) b = 0x8000;
    std::memcpy(x.data() + 2 * at, &b, 2);
  }
}

// The edge cases per (device, x kind), named <device>_<kind> as the sweep, so that the reverse-schedule twin can
// pick kinds (tests/ops/CMakeLists.txt).
class DynamicRangeFusedEdges : public ::testing::TestWithParam<std::tuple<DeviceKind, ElementKind>> {};

TEST_P(DynamicRangeFusedEdges, BothPathsMatchTheHostReference) {
  const auto [device, xk] = GetParam();
  BARACUDA_TEST_STREAM(stream, device);
  const std::vector<PathCase> cases{
      {"5x7", Shape{5, 7}, QuantGranularity::per_token(), true, 7},
      {"9x33", Shape{9, 33}, QuantGranularity::per_token(), true, 33},
      {"300x6 (grid-stride)", Shape{300, 6}, QuantGranularity::per_token(), true, 6},
      {"2x3x40", Shape{2, 3, 40}, QuantGranularity::per_token(), true, 40},
      {"6x1030", Shape{6, 1030}, QuantGranularity::per_token(), true, 1030},
      {"40x1100 (grid-stride)", Shape{40, 1100}, QuantGranularity::per_token(), true, 1100},
      {"5x2051", Shape{5, 2051}, QuantGranularity::per_token(), true, 2051},
      {"2x12500 (fallback for f32/f64)", Shape{2, 12500}, QuantGranularity::per_token(), true, 12500},
      {"2x25000 (fallback)", Shape{2, 25000}, QuantGranularity::per_token(), true, 25000},
      {"6x16 per group 4", Shape{6, 16}, QuantGranularity::per_group(-1, 4), true, 4},
      {"5x8 per channel 0", Shape{5, 8}, QuantGranularity::per_channel(0), true, 8},
      {"100 per tensor", Shape{100}, QuantGranularity::per_tensor(), true, 100},
      {"7x6 transposed x", Shape{7, 6}, QuantGranularity::per_token(), true, 6, true},
      {"6x8 per channel -1", Shape{6, 8}, QuantGranularity::per_channel(-1), false, 6},
      {"4x8 per tensor", Shape{4, 8}, QuantGranularity::per_tensor(), false, 32},
  };
  const ElementKind qs[] = {ElementKind::S8, ElementKind::U8, ElementKind::S4, ElementKind::U4};
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  // Seeds 100 + 4·case + the kind's place among f16, bf16, f32, f64.
  const uint64_t kind_place = xk == ElementKind::F16 ? 0 : xk == ElementKind::Bf16 ? 1 : xk == ElementKind::F32 ? 2 : 3;
  uint64_t seed = 100 + kind_place;
  for (const PathCase& c : cases) {
    const int64_t n = c.shape.numel();
    const int64_t last = c.shape[c.shape.rank - 1];
    Strided layout = dense_layout(c.shape);
    if (c.transposed) layout.stride = {1, c.shape[0]};
    std::vector<double> values;
    auto x = random_floats(xk, n, -3.0, 2.0, seed, &values);
    seed += 4;
    // Row 0 all zero, row 1 all −0, a NaN in row 2, +inf in row 3, −inf in row 4 (storage rows).
    for (int64_t i = 0; i < std::min(n, last); ++i) set_special(xk, x, i, 0.0);
    if (n >= 2 * last)
      for (int64_t i = last; i < 2 * last; ++i) set_special(xk, x, i, -0.0);
    if (n >= 3 * last) set_special(xk, x, 2 * last + last / 2, nan);
    if (n >= 4 * last) set_special(xk, x, 4 * last - 1, inf);
    if (n >= 5 * last) set_special(xk, x, 4 * last, -inf);
    for (ElementKind qk : qs)
      for (DynamicRangeMode m : catalog_modes())
        for (QuantConvention conv : {QuantConvention::PyTorch, QuantConvention::Exact, QuantConvention::Vllm}) {
          if (conv == QuantConvention::Vllm && xk == ElementKind::F64) continue;  // Unsupported (f32 arithmetic)
          SCOPED_TRACE(c.name + " " + std::string(to_string(xk)) + "→" + std::string(to_string(qk)) + mode_text(m) +
                       std::string(to_string(conv)));
          const Desc d = Desc{}
                             .with_element(xk)
                             .with_quantized(qk)
                             .with_shape(c.shape)
                             .with_granularity(c.g)
                             .with_mode(m)
                             .with_convention(conv);
          auto want_plan = dynamic::DynamicRangeQuantizePlan::select(host(), d);
          if (!want_plan) {  // odd last extent with packed q
            ASSERT_TRUE(is_packed(qk)) << want_plan.error().to_string();
            continue;
          }
          auto plan = dynamic::DynamicRangeQuantizePlan::select(stream, d);
          ASSERT_TRUE(plan.is_ok()) << plan.error().to_string();
          EXPECT_EQ(plan->sku().variant, expected_variant(c, xk));
          EXPECT_EQ(want_plan->sku().variant, "segment_reduce+quantize");  // the reference is the two passes
          auto want = run_plan(host(), d, x, layout);
          ASSERT_TRUE(want.is_ok()) << want.error().to_string();
          auto got = run_plan(stream, d, x, layout);
          ASSERT_TRUE(got.is_ok()) << got.error().to_string();
          expect_same(*got, *want, d, n, want_plan->param_shape().numel());
          // The fused path needs no reduction workspace (nor vLLM's multipliers).
          if (plan->sku().variant != "segment_reduce+quantize" && m == DynamicRangeMode::Asymmetric) {
            EXPECT_EQ(plan->workspace_size(), 0u);
          }
        }
  }
}

TEST_P(DynamicRangeFused, StridedOutputsAndUnalignedRows) {
  BARACUDA_TEST_STREAM(stream, GetParam());
  // x offset by one element (rows never 16-byte aligned) and q / scale / zp written through strided views.
  const Shape shape{9, 64};
  const Desc d = Desc{}.with_element(ElementKind::Bf16).with_shape(shape).with_mode(DynamicRangeMode::Asymmetric);
  std::vector<double> values;
  const auto x = random_floats(ElementKind::Bf16, 9 * 64 + 1, -4, 1, 7, &values);
  auto run = [&](const Stream& st) -> Result<Outputs> {
    auto plan = dynamic::DynamicRangeQuantizePlan::select(st, d);
    if (!plan) return plan.error();
    Strided xl = dense_layout(shape);
    xl.offset = 1;
    auto xt = make_device_tensor(st, ElementKind::Bf16, shape, xl, x);
    Strided ql = dense_layout(shape);
    ql.stride = {128, 2};
    auto qt = make_device_tensor(st, ElementKind::S8, shape, ql, {});
    Strided pl = dense_layout(Shape{9});
    pl.stride = {3};
    auto s = make_device_tensor(st, ElementKind::F32, Shape{9}, pl, {});
    auto z = make_device_tensor(st, ElementKind::S32, Shape{9}, pl, {});
    if (!xt || !qt || !s || !z) return Error::internal("allocation failed");
    BARACUDA_TRY(plan->run(st, Workspace{}, {xt->view, qt->view, s->view, z->view}));
    BARACUDA_TRY(st.synchronize());
    return Outputs{gather(ElementKind::S8, download(*qt), shape, ql), gather(ElementKind::F32, download(*s), Shape{9}, pl),
                   gather(ElementKind::S32, download(*z), Shape{9}, pl)};
  };
  auto want = run(host());
  ASSERT_TRUE(want.is_ok()) << want.error().to_string();
  auto got = run(stream);
  ASSERT_TRUE(got.is_ok()) << got.error().to_string();
  expect_same(*got, *want, d, 9 * 64, 9);
}

INSTANTIATE_TEST_SUITE_P(Devices, DynamicRangeFusedEdges, kDevicesAndKinds, device_and_kind);
INSTANTIATE_TEST_SUITE_P(Devices, DynamicRangeFused, ::testing::Values(DeviceKind::Sim, DeviceKind::Cuda),
                         [](const auto& info) { return std::string(to_string(info.param)); });

// The typed wrapper runs the dynamic plan: same outputs as the host reference; kind and rank mismatches rejected.
TEST_P(DynamicRangeFused, TypedPlanMatchesTheDynamicPlan) {
  BARACUDA_TEST_STREAM(stream, GetParam());
  const Desc d = Desc{}.with_shape(Shape{3, 40}).with_mode(DynamicRangeMode::Asymmetric).with_quantized(ElementKind::U8);
  auto plan = DynamicRangeQuantizePlan<float, uint8_t, 2>::select(stream, d);
  ASSERT_TRUE(plan.is_ok()) << plan.error().to_string();
  EXPECT_EQ(plan->sku().variant, "fused_rows_warp");
  std::vector<double> values;
  const auto xb = random_floats(ElementKind::F32, 120, -2, 5, 11, &values);
  auto x = make_device_tensor(stream, ElementKind::F32, d.shape, dense_layout(d.shape), xb);
  auto q = make_device_tensor(stream, ElementKind::U8, d.shape, dense_layout(d.shape), {});
  auto sc = make_device_tensor(stream, ElementKind::F32, Shape{3}, dense_layout(Shape{3}), {});
  auto zp = make_device_tensor(stream, ElementKind::S32, Shape{3}, dense_layout(Shape{3}), {});
  ASSERT_TRUE(x && q && sc && zp);
  const std::array<int64_t, 2> shape{3, 40};
  const auto xv = TensorRef<float, 2>::dense(static_cast<const float*>(x->view.data), shape);
  const auto qv = TensorMut<uint8_t, 2>::dense(static_cast<uint8_t*>(q->view.data), shape);
  const DynamicRangeQuantizeArgs<float, uint8_t, 2> args{xv, qv, sc->view, zp->view};
  ASSERT_TRUE(plan->can_implement(args).is_ok());
  EXPECT_EQ(plan->param_shape(), (Shape{3}));
  auto ws = Buffer::allocate(stream, plan->workspace_size());
  ASSERT_TRUE(ws.is_ok());
  ASSERT_TRUE(plan->run(stream, Workspace(ws->data(), plan->workspace_size()), args).is_ok());
  ASSERT_TRUE(stream.synchronize().is_ok());
  auto want = run_plan(host(), d, xb, dense_layout(d.shape));
  ASSERT_TRUE(want.is_ok());
  expect_same(Outputs{download(*q), download(*sc), download(*zp)}, *want, d, 120, 3);
  EXPECT_FALSE((DynamicRangeQuantizePlan<__half, uint8_t, 2>::select(stream, d).is_ok()));
  EXPECT_FALSE((DynamicRangeQuantizePlan<float, int8_t, 2>::select(stream, d).is_ok()));
  EXPECT_FALSE((DynamicRangeQuantizePlan<float, uint8_t, 3>::select(stream, d).is_ok()));
}

// Hand-computed values, on every device.
class DynamicRangeValues : public ::testing::TestWithParam<DeviceKind> {};

std::vector<uint8_t> f32_bytes(const std::vector<float>& v) {
  std::vector<uint8_t> b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}
float f32_at(const std::vector<uint8_t>& b, size_t i) {
  float v;
  std::memcpy(&v, b.data() + 4 * i, 4);
  return v;
}
int32_t s32_at(const std::vector<uint8_t>& b, size_t i) {
  int32_t v;
  std::memcpy(&v, b.data() + 4 * i, 4);
  return v;
}

TEST_P(DynamicRangeValues, SymmetricTiesRoundHalfToEven) {
  BARACUDA_TEST_STREAM(stream, GetParam());
  const std::vector<float> x{127, 2.5f, 3.5f, -2.5f, -0.5f, 0.5f, 1.5f, -127};  // max|x| = 127: s = 1
  const Desc d = Desc{}.with_shape(Shape{1, 8});
  auto out = run_plan(stream, d, f32_bytes(x), dense_layout(d.shape));
  ASSERT_TRUE(out.is_ok()) << out.error().to_string();
  EXPECT_EQ(f32_at(out->scale, 0), 1.0f);
  EXPECT_EQ(s32_at(out->zp, 0), 0);
  const std::vector<int8_t> want{127, 2, 4, -2, 0, 0, 2, -127};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(static_cast<int8_t>(out->q[i]), want[i]) << i;
}

TEST_P(DynamicRangeValues, AsymmetricZeroPointAndWideningToZero) {
  BARACUDA_TEST_STREAM(stream, GetParam());
  // Row 0: [-1, 3] → s = 4/255, zp = 0 − nearbyint(−1 / s) = 64 (−63.75 rounds to −64).
  // Row 1: [2, 6] widens to [0, 6] → s = 6/255, zp = 0.
  const std::vector<float> x{-1, 0, 3, 2, 4, 6};
  const Desc d = Desc{}.with_quantized(ElementKind::U8).with_shape(Shape{2, 3}).with_mode(DynamicRangeMode::Asymmetric);
  auto out = run_plan(stream, d, f32_bytes(x), dense_layout(d.shape));
  ASSERT_TRUE(out.is_ok()) << out.error().to_string();
  EXPECT_EQ(f32_at(out->scale, 0), 4.0f / 255.0f);
  EXPECT_EQ(s32_at(out->zp, 0), 64);
  EXPECT_EQ(f32_at(out->scale, 1), 6.0f / 255.0f);
  EXPECT_EQ(s32_at(out->zp, 1), 0);
  EXPECT_EQ(out->q[0], 0);    // −1
  EXPECT_EQ(out->q[1], 64);   // 0 maps to the zero point exactly
  EXPECT_EQ(out->q[2], 255);  // 3
  EXPECT_EQ(out->q[5], 255);  // 6
}

TEST_P(DynamicRangeValues, NanPropagatesInfSaturatesUnderflowIsAllZero) {
  BARACUDA_TEST_STREAM(stream, GetParam());
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const float tiny = std::numeric_limits<float>::denorm_min();
  const std::vector<float> x{1, nan, -2, 3,  /* NaN row */ 1, inf, -2, 3, /* inf row */
                             tiny, 0, -tiny, 0, /* s underflows */ 0, 0, 0, 0 /* all zero */};
  for (DynamicRangeMode m : {DynamicRangeMode::Symmetric, DynamicRangeMode::Asymmetric}) {
    const Desc d = Desc{}.with_shape(Shape{4, 4}).with_mode(m);
    auto out = run_plan(stream, d, f32_bytes(x), dense_layout(d.shape));
    ASSERT_TRUE(out.is_ok()) << out.error().to_string();
    EXPECT_TRUE(std::isnan(f32_at(out->scale, 0)));
    EXPECT_EQ(f32_at(out->scale, 1), inf);
    EXPECT_EQ(f32_at(out->scale, 2), 1.0f);
    EXPECT_EQ(f32_at(out->scale, 3), 1.0f);
    for (int r = 0; r < 4; ++r) EXPECT_EQ(s32_at(out->zp, r), 0) << "row " << r;
    for (int i = 0; i < 16; ++i) EXPECT_EQ(out->q[i], 0) << i;  // everything quantizes to zp = 0
    // Compared with the host reference bit for bit, too.
    auto want = run_plan(host(), d, f32_bytes(x), dense_layout(d.shape));
    ASSERT_TRUE(want.is_ok());
    expect_same(*out, *want, d, 16, 4);
  }
}

TEST_P(DynamicRangeValues, SymmetricZeroPointMayBeOmitted) {
  BARACUDA_TEST_STREAM(stream, GetParam());
  std::vector<double> values;
  const Desc d = Desc{}.with_shape(Shape{5, 300});
  const auto x = random_floats(ElementKind::F32, 1500, -1, 1, 42, &values);
  auto with = run_plan(stream, d, x, dense_layout(d.shape), true);
  auto without = run_plan(stream, d, x, dense_layout(d.shape), false);
  ASSERT_TRUE(with.is_ok() && without.is_ok());
  EXPECT_EQ(with->q, without->q);
  EXPECT_EQ(with->scale, without->scale);
}

TEST_P(DynamicRangeValues, BitIdenticalRunToRun) {
  BARACUDA_TEST_STREAM(stream, GetParam());
  std::vector<double> values;
  const Desc d = Desc{}.with_shape(Shape{4100}).with_granularity(QuantGranularity::per_tensor())
                     .with_mode(DynamicRangeMode::Asymmetric).with_quantized(ElementKind::U8);
  const auto x = random_floats(ElementKind::F32, 4100, -5, 7, 43, &values);
  auto a = run_plan(stream, d, x, dense_layout(d.shape));
  auto b = run_plan(stream, d, x, dense_layout(d.shape));
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  EXPECT_EQ(a->q, b->q);
  EXPECT_EQ(a->scale, b->scale);
  EXPECT_EQ(a->zp, b->zp);
}

INSTANTIATE_TEST_SUITE_P(Devices, DynamicRangeValues,
                         ::testing::Values(DeviceKind::Host, DeviceKind::Sim, DeviceKind::Cuda),
                         [](const auto& info) { return std::string(to_string(info.param)); });

// Rejections (host device: validation does not depend on it).
void expect_rejected(const Desc& d, ErrorCode code, const std::string& words) {
  auto p = dynamic::DynamicRangeQuantizePlan::select(host(), d);
  ASSERT_FALSE(p.is_ok());
  EXPECT_EQ(p.error().code, code) << p.error().to_string();
  EXPECT_NE(p.error().message.find(words), std::string::npos) << p.error().message;
  EXPECT_NE(p.error().message.find("DynamicRangeQuantizePlan"), std::string::npos);
}

TEST(DynamicRangeRejects, DescriptorRules) {
  const Desc ok = Desc{}.with_shape(Shape{4, 8});
  ASSERT_TRUE(dynamic::DynamicRangeQuantizePlan::select(host(), ok).is_ok());
  expect_rejected(Desc{ok}.with_element(ElementKind::S32), ErrorCode::Unsupported, "element kind");
  expect_rejected(Desc{ok}.with_quantized(ElementKind::F16), ErrorCode::Unsupported, "quantized kind");
  expect_rejected(Desc{ok}.with_range(5, -5), ErrorCode::InvalidProblem, "quant_min > quant_max");
  expect_rejected(Desc{ok}.with_range(-129, 127), ErrorCode::InvalidProblem, "exceeds");
  expect_rejected(Desc{ok}.with_quantized(ElementKind::U4).with_range(0, 16), ErrorCode::InvalidProblem, "exceeds");
  expect_rejected(Desc{ok}.with_range(1, 100), ErrorCode::InvalidProblem, "must include 0");
  expect_rejected(Desc{ok}.with_range(-100, -1), ErrorCode::InvalidProblem, "must include 0");
  expect_rejected(Desc{ok}.with_range(-8, 0), ErrorCode::InvalidProblem, "quant_max > 0");
  expect_rejected(Desc{ok}.with_range(0, 0).with_mode(DynamicRangeMode::Asymmetric), ErrorCode::InvalidProblem,
                  "quant_min < quant_max");
  expect_rejected(Desc{ok}.with_shape(Shape{}), ErrorCode::InvalidProblem, "rank >= 1");
  expect_rejected(Desc{ok}.with_shape(Shape{8}), ErrorCode::InvalidProblem, "per-token");
  expect_rejected(Desc{ok}.with_granularity(QuantGranularity::per_group(-1, 3)), ErrorCode::InvalidProblem,
                  "does not divide");
  expect_rejected(Desc{ok}.with_quantized(ElementKind::S4).with_shape(Shape{4, 7}), ErrorCode::InvalidProblem,
                  "must be even");
  auto m = Desc{ok};
  m.mode = static_cast<DynamicRangeMode>(7);
  expect_rejected(m, ErrorCode::InvalidProblem, "invalid DynamicRangeMode");
  // Asymmetric with its full default range, and a custom symmetric range, are fine.
  EXPECT_TRUE(dynamic::DynamicRangeQuantizePlan::select(host(), Desc{ok}.with_mode(DynamicRangeMode::Asymmetric)).is_ok());
  EXPECT_TRUE(dynamic::DynamicRangeQuantizePlan::select(host(), Desc{ok}.with_range(-127, 127)).is_ok());
}

TEST(DynamicRangeRejects, OperandRules) {
  const Stream st = Stream::sim();
  const Desc d = Desc{}.with_shape(Shape{4, 8}).with_mode(DynamicRangeMode::Asymmetric);
  auto plan = dynamic::DynamicRangeQuantizePlan::select(st, d);
  ASSERT_TRUE(plan.is_ok());
  std::vector<float> x(32, 1.0f), scale(4);
  std::vector<int8_t> q(32);
  std::vector<int32_t> zp(4);
  const ConstDynTensor xv = ConstDynTensor::dense(x.data(), ElementKind::F32, d.shape);
  const DynTensor qv = DynTensor::dense(q.data(), ElementKind::S8, d.shape);
  const DynTensor sv = DynTensor::dense(scale.data(), ElementKind::F32, Shape{4});
  const DynTensor zv = DynTensor::dense(zp.data(), ElementKind::S32, Shape{4});
  EXPECT_TRUE(plan->can_implement({xv, qv, sv, zv}).is_ok());
  auto invalid = [&](const dynamic::DynamicRangeQuantizeArgs& t, const std::string& words) {
    const Status s = plan->can_implement(t);
    ASSERT_FALSE(s.is_ok());
    EXPECT_NE(s.error().message.find(words), std::string::npos) << s.error().message;
  };
  invalid({xv, qv, sv, DynTensor{}}, "zero_point is missing");                              // asymmetric needs zp
  invalid({xv, qv, DynTensor::dense(scale.data(), ElementKind::F64, Shape{4}), zv}, "scale");  // wrong kind
  invalid({xv, qv, DynTensor::dense(scale.data(), ElementKind::F32, Shape{8}), zv}, "scale");  // wrong shape
  invalid({xv, qv, sv, DynTensor::dense(x.data() + 2, ElementKind::S32, Shape{4})}, "overlap");
  DynTensor broadcast_q = qv;
  broadcast_q.stride[0] = 0;
  invalid({xv, broadcast_q, sv, zv}, "y has stride 0");
  // Too small a workspace (a per-tensor problem long enough for two passes on sim).
  const Desc big = Desc{}.with_shape(Shape{4096}).with_granularity(QuantGranularity::per_tensor());
  auto bp = dynamic::DynamicRangeQuantizePlan::select(st, big);
  ASSERT_TRUE(bp.is_ok());
  ASSERT_GT(bp->workspace_size(), 0u);
  std::vector<float> bx(4096);
  std::vector<int8_t> bq(4096);
  const Status s = bp->run(st, Workspace{}, {ConstDynTensor::dense(bx.data(), ElementKind::F32, Shape{4096}),
                                             DynTensor::dense(bq.data(), ElementKind::S8, Shape{4096}),
                                             DynTensor::dense(scale.data(), ElementKind::F32, Shape{1}), DynTensor{}});
  EXPECT_EQ(s.code(), ErrorCode::WorkspaceTooSmall);
}

// The mode table of docs/ops/dynamic_range_quantize.md is the catalog's (baracuda/ops/dynamic_range_modes.def).
TEST(DynamicRangeDocs, TableIsTheCatalog) {
  std::string t = "| mode | SKU op and profiler --op | zero point operand | scale s, zero point zp |\n|---|---|---|---|\n";
#define BARACUDA_DYNAMIC_RANGE_MODE(name, Enum, zero_point, doc)                                      \
  t += "| `" #Enum "` | `" + std::string(detail::kDynamicRangeModes[size_t(DynamicRangeMode::Enum)].op) + \
       "` | " + (std::string_view(#zero_point) == "Required" ? "required" : "optional") + " | " + doc + " |\n";
#include "baracuda/ops/dynamic_range_modes.def"
#undef BARACUDA_DYNAMIC_RANGE_MODE
  expect_doc_table("dynamic_range_quantize.md", "dynamic_range_modes.def", "dynamic_range_quantize_test", t);
}

}  // namespace
}  // namespace baracuda::test
