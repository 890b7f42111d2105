// CastPlan tests:
// - CastSweep: every (in, out) pair of the catalog × device × layout, on values exactly representable in
//   every kind, against the expectation of the conversion rules computed here; sim/cuda also bit-exact
//   against host, and run twice (determinism).
// - CastRandomBits: every pair on uniformly random bit patterns (NaN, inf, subnormals, both fp8 modes),
//   sim/cuda bit-exact against the host reference.
// - CastGolden: the NumPy/ml_dtypes golden data of tests/data (see gen_cast_golden.py), bit-exact on
//   every device.
// - CastValues: special values worked out by hand (ties, fp8 boundaries, saturation, int64 above 2^53,
//   truncation, wrap-around, bool).
// - CastReject / CastCanImplement: a negative test for every rejection.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "baracuda/baracuda.hpp"
#include "support/compare.hpp"
#include "support/devices.hpp"
#include "support/golden.hpp"
#include "support/in_out_fixture.hpp"
#include "support/in_out_sweep.hpp"
#include "support/numeric.hpp"
#include "support/random.hpp"
#include "support/tensor.hpp"
#include "support/tolerance.hpp"

namespace baracuda::test {
namespace {

/// Runs a cast of dense 1-D input bytes on `stream`; the output bytes, or the failure.
Result<std::vector<uint8_t>> run_dense(const Stream& stream, ElementKind in, ElementKind out, bool saturate,
                                       const std::vector<uint8_t>& in_bytes, int64_t n) {
  const Shape shape{n};
  auto plan = dynamic::CastPlan::select(
      stream, CastDescriptor().with_input(in).with_output(out).with_shape(shape).with_saturate_fp8(saturate));
  if (!plan) return plan.error();
  auto a = make_device_tensor(stream, in, shape, dense_layout(shape), in_bytes);
  if (!a) return a.error();
  auto b = make_device_tensor(stream, out, shape, dense_layout(shape), sentinel_storage(out, n));
  if (!b) return b.error();
  BARACUDA_TRY(plan->run(stream, {}, {a->view, b->view}));
  return download(*b);
}

/// True (and a skip message) when this device cannot run the cast kernels here.
bool cannot_run(DeviceKind d, const Stream& s, std::string* why) {
  if (d != DeviceKind::Cuda) return false;
  auto p = dynamic::CastPlan::select(s, CastDescriptor().with_shape(Shape{1}));
  if (p) return false;
  *why = p.error().to_string();
  return true;
}

#define BARACUDA_SKIP_IF_CANNOT_RUN(DEVICE, STREAM)                  \
  do {                                                               \
    std::string why_;                                                \
    if (cannot_run((DEVICE), (STREAM), &why_)) GTEST_SKIP() << why_; \
  } while (0)

/// The value CastPlan's rules give for an input value v (exact in every kind) converted in → out.
double expected_value(double v, ElementKind in, ElementKind out) {
  if (is_floating(out)) return v;  // exact in every floating kind (signed zeros kept)
  if (out == ElementKind::Bool) return v != 0 ? 1 : 0;
  double lo = 0, hi = 0;
  int bits = element_bits(out);
  const bool is_signed = out == ElementKind::S8 || out == ElementKind::S32 || out == ElementKind::S64;
  if (is_signed) {
    lo = -std::ldexp(1.0, bits - 1), hi = std::ldexp(1.0, bits - 1) - 1;
  } else {
    lo = 0, hi = std::ldexp(1.0, bits) - 1;
  }
  if (is_floating(in)) {  // truncate toward zero, saturate
    const double t = std::trunc(v) + 0.0;
    return std::min(std::max(t, lo), hi);
  }
  // integer → integer: wrap modulo 2^bits
  const double m = std::ldexp(1.0, bits);
  double w = std::fmod(v, m);
  if (w < lo) w += m;
  if (w > hi) w -= m;
  return w;
}

// ---------------------------------------------------------------------------------------------------
// The sweep, generated from the catalog
// ---------------------------------------------------------------------------------------------------

std::vector<InOutCase> cast_cases() {
  std::vector<InOutCase> v;
  auto add = [&](std::string_view op, auto in_types, auto out_types, Tolerance tol) {
    for_each_type(in_types, [&]<class TIn>() {
      for_each_type(out_types, [&]<class TOut>() {
        for (DeviceKind d : kTestDevices)
          for (const LayoutCase& l : unary_layouts()) {
            if (l.in_place && sizeof(TIn) != sizeof(TOut)) continue;  // in place needs equal element sizes
            v.push_back({kind_of<TIn>, kind_of<TOut>, d, l, std::string(op), resolve(tol, kind_of<TOut>)});
          }
      });
    });
  };
#define BARACUDA_CAST_OP(name, in_types, out_types, tol, doc) \
  add(#name, in_types{}, out_types{}, ::baracuda::test::tolerances::tol);
#include "ops/cast/cast.def"
#undef BARACUDA_CAST_OP
  return v;
}

class CastSweep : public ::testing::TestWithParam<InOutCase> {};

// On input storage of values exactly representable in every kind.
TEST_P(CastSweep, FollowsTheConversionRules) {
  const InOutCase& c = GetParam();
  const CastDescriptor desc = CastDescriptor().with_input(c.in).with_output(c.out).with_shape(c.layout.shape);
  check_in_out_case<dynamic::CastPlan>(
      c, desc,
      [&](int64_t elements) {
        std::vector<double> values;
        return exact_small_values(c.in, elements, 1234 + elements, &values);
      },
      [&](double x) { return expected_value(x, c.in, c.out); });
}

INSTANTIATE_TEST_SUITE_P(Catalog, CastSweep, ::testing::ValuesIn(cast_cases()), in_out_case_name);

// ---------------------------------------------------------------------------------------------------
// Random bit patterns: devices against the host reference
// ---------------------------------------------------------------------------------------------------

/// A pair of the catalog on a device (its sweep case of the "one" layout), and whether fp8 outputs saturate.
struct BitsCase {
  InOutCase pair;
  bool saturate;
};

std::vector<BitsCase> bits_cases() {
  std::vector<BitsCase> v;
  for (const InOutCase& c : cast_cases()) {
    if (c.layout.name != "one" || c.device == DeviceKind::Host) continue;  // one entry per (pair, device)
    v.push_back({c, false});
    if (is_fp8(c.out)) v.push_back({c, true});
  }
  return v;
}

class CastRandomBits : public ::testing::TestWithParam<BitsCase> {};

TEST_P(CastRandomBits, MatchesTheHostReference) {
  const auto& [c, saturate] = GetParam();
  BARACUDA_TEST_STREAM(stream, c.device);
  BARACUDA_SKIP_IF_CANNOT_RUN(c.device, stream);
  constexpr int64_t n = 4099;
  const std::vector<uint8_t> in =
      random_bits(c.in, n, 99 + static_cast<uint64_t>(c.in) * 16 + static_cast<uint64_t>(c.out));
  auto got = run_dense(stream, c.in, c.out, saturate, in, n);
  ASSERT_TRUE(got) << got.error().to_string();
  auto want = run_dense(Stream::host(), c.in, c.out, saturate, in, n);
  ASSERT_TRUE(want) << want.error().to_string();
  EXPECT_TRUE(same_elements(c.out, *got, *want, n));
}

std::string bits_case_name(const ::testing::TestParamInfo<BitsCase>& info) {
  const auto& [c, saturate] = info.param;
  return std::string(to_string(c.in)) + "_" + std::string(to_string(c.out)) + (saturate ? "_sat_" : "_") +
         std::string(to_string(c.device));
}

INSTANTIATE_TEST_SUITE_P(Catalog, CastRandomBits, ::testing::ValuesIn(bits_cases()), bits_case_name);

// ---------------------------------------------------------------------------------------------------
// Golden data from NumPy / ml_dtypes (tests/data/gen_cast_golden.py)
// ---------------------------------------------------------------------------------------------------

struct GoldenColumn {
  ElementKind out;
  bool saturate;
  std::vector<uint8_t> bytes;
};
struct GoldenSection {
  std::string title;
  ElementKind in;
  std::vector<uint8_t> in_bytes;
  std::vector<GoldenColumn> columns;
  int64_t n = 0;
};

std::vector<GoldenSection> golden_sections(std::string* error) {
  return load_golden_as<GoldenSection>("cast", error, [](const GoldenCase& c) {
    const GoldenTensor& x = c.tensor("x");
    GoldenSection s{c.name, x.kind, x.bytes(), {}, x.numel()};
    for (const auto& target : c.param<std::vector<std::string>>("targets")) {
      const GoldenTensor& y = c.tensor(target);
      s.columns.push_back({y.kind, target.ends_with(":sat"), y.bytes()});
    }
    return s;
  });
}

class CastGolden : public ::testing::TestWithParam<DeviceKind> {};

TEST_P(CastGolden, MatchesNumPyAndMlDtypes) {
  BARACUDA_TEST_STREAM(stream, GetParam());
  BARACUDA_SKIP_IF_CANNOT_RUN(GetParam(), stream);
  std::string error;
  const std::vector<GoldenSection> sections = golden_sections(&error);
  ASSERT_TRUE(error.empty()) << error;
  ASSERT_EQ(sections.size(), 5u);
  int64_t checked = 0;
  for (const GoldenSection& s : sections) {
    for (const GoldenColumn& col : s.columns) {
      SCOPED_TRACE(s.title + " column " + std::string(to_string(col.out)) + (col.saturate ? " saturating" : ""));
      auto got = run_dense(stream, s.in, col.out, col.saturate, s.in_bytes, s.n);
      ASSERT_TRUE(got) << got.error().to_string();
      EXPECT_TRUE(same_elements(col.out, *got, col.bytes, s.n));
      checked += s.n;
    }
  }
  EXPECT_GT(checked, 20000);
}

INSTANTIATE_TEST_SUITE_P(Devices, CastGolden, ::testing::ValuesIn(kTestDevices),
                         [](const auto& info) { return std::string(to_string(info.param)); });

// ---------------------------------------------------------------------------------------------------
// Special values worked out by hand
// ---------------------------------------------------------------------------------------------------

constexpr uint64_t kAnyNaN = ~uint64_t{0};

struct ValueCase {
  ElementKind in;
  uint64_t in_bits;
  ElementKind out;
  bool saturate;
  uint64_t out_bits;  // kAnyNaN: any NaN
};

uint64_t s64(int64_t v) { return static_cast<uint64_t>(v); }

std::vector<ValueCase> value_cases() {
  using K = ElementKind;
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float next464 = std::nextafter(464.0f, 1000.0f);
  return {
      // float → integer: truncation toward zero, saturation, NaN → 0
      {K::F32, f32_bits(2.5f), K::S32, false, 2},
      {K::F32, f32_bits(-2.5f), K::S32, false, s64(-2) & 0xFFFFFFFF},
      {K::F32, f32_bits(nan), K::S32, false, 0},
      {K::F32, f32_bits(inf), K::S32, false, 0x7FFFFFFF},
      {K::F32, f32_bits(-inf), K::S32, false, 0x80000000},
      {K::F32, f32_bits(3e9f), K::S32, false, 0x7FFFFFFF},
      {K::F32, f32_bits(-1.5f), K::U8, false, 0},
      {K::F32, f32_bits(-0.5f), K::U8, false, 0},
      {K::F32, f32_bits(300.7f), K::U8, false, 255},
      {K::F32, f32_bits(-3.7f), K::U32, false, 0},
      {K::F32, f32_bits(4294967296.0f), K::U32, false, 0xFFFFFFFF},
      {K::F32, f32_bits(1e20f), K::S64, false, 0x7FFFFFFFFFFFFFFF},
      {K::F64, f64_bits(-128.9), K::S8, false, 0x80},
      {K::F64, f64_bits(-129.0), K::S8, false, 0x80},
      {K::F64, f64_bits(9223372036854775808.0), K::S64, false, 0x7FFFFFFFFFFFFFFF},
      {K::F16, 0x4170, K::S8, false, 2},  // 2.71875 → 2
      // ties to even and subnormals
      {K::F32, f32_bits(1.0f + 0x1p-11f), K::F16, false, 0x3C00},
      {K::F32, f32_bits(1.0f + 3 * 0x1p-11f), K::F16, false, 0x3C02},
      {K::F32, f32_bits(1.0f + 0x1p-8f), K::Bf16, false, 0x3F80},
      {K::F32, f32_bits(1.0f + 3 * 0x1p-8f), K::Bf16, false, 0x3F82},
      {K::F32, f32_bits(2.5f), K::F16, false, 0x4100},
      {K::F32, f32_bits(0x1p-24f), K::F16, false, 0x0001},
      {K::F32, f32_bits(0x1p-25f), K::F16, false, 0x0000},
      {K::F32, f32_bits(3 * 0x1p-26f), K::F16, false, 0x0001},
      {K::F32, f32_bits(0x1p-9f), K::Fp8E4M3, false, 0x01},
      {K::F32, f32_bits(0x1p-10f), K::Fp8E4M3, false, 0x00},
      {K::F32, f32_bits(0x1p-16f), K::Fp8E5M2, false, 0x01},
      {K::F32, f32_bits(-0.0f), K::F16, false, 0x8000},
      // fp8 overflow boundaries, both modes
      {K::F32, f32_bits(448.0f), K::Fp8E4M3, false, 0x7E},
      {K::F32, f32_bits(464.0f), K::Fp8E4M3, false, 0x7E},
      {K::F32, f32_bits(next464), K::Fp8E4M3, false, kAnyNaN},
      {K::F32, f32_bits(480.0f), K::Fp8E4M3, false, kAnyNaN},
      {K::F32, f32_bits(inf), K::Fp8E4M3, false, kAnyNaN},
      {K::F32, f32_bits(480.0f), K::Fp8E4M3, true, 0x7E},
      {K::F32, f32_bits(inf), K::Fp8E4M3, true, 0x7E},
      {K::F32, f32_bits(-inf), K::Fp8E4M3, true, 0xFE},
      {K::F32, f32_bits(nan), K::Fp8E4M3, true, kAnyNaN},
      {K::F32, f32_bits(57344.0f), K::Fp8E5M2, false, 0x7B},
      {K::F32, f32_bits(61439.0f), K::Fp8E5M2, false, 0x7B},
      {K::F32, f32_bits(61440.0f), K::Fp8E5M2, false, 0x7C},
      {K::F32, f32_bits(inf), K::Fp8E5M2, false, 0x7C},
      {K::F32, f32_bits(-61440.0f), K::Fp8E5M2, true, 0xFB},
      {K::F32, f32_bits(inf), K::Fp8E5M2, true, 0x7B},
      {K::F16, 0x5F80, K::Fp8E4M3, false, kAnyNaN},  // f16 480
      {K::F16, 0x7BFF, K::Fp8E5M2, false, 0x7C},     // f16 65504 → inf
      {K::S32, 1000, K::Fp8E4M3, false, kAnyNaN},
      {K::S32, 1000, K::Fp8E4M3, true, 0x7E},
      // f64 rounds once (no f32 step)
      {K::F64, f64_bits(1 + 0x1p-11 + 0x1p-40), K::F16, false, 0x3C01},
      {K::F64, f64_bits(1 + 0x1p-8 + 0x1p-30), K::Bf16, false, 0x3F81},
      {K::F64, f64_bits(1 + 0x1p-4 + 0x1p-40), K::Fp8E4M3, false, 0x39},
      {K::F64, f64_bits(1 + 0x1p-24 + 0x1p-50), K::F32, false, 0x3F800001},
      {K::F64, f64_bits(1 + 0x1p-24), K::F32, false, 0x3F800000},  // tie → even
      {K::F64, f64_bits(464.0 + 0x1p-30), K::Fp8E4M3, false, kAnyNaN},
      // integers above 2^24 / 2^53
      {K::S64, s64((int64_t{1} << 53) + 1), K::F32, false, 0x5A000000},
      {K::S64, s64((int64_t{1} << 53) + 1), K::F64, false, 0x4340000000000000},
      {K::S64, s64((int64_t{1} << 53) + 3), K::F64, false, 0x4340000000000002},
      {K::S64, s64((int64_t{1} << 40) + (int64_t{1} << 32) + 1), K::Bf16, false,
       0x5381},                                                                        // f32 first would give 0x5380
      {K::S64, s64((int64_t{1} << 40) + (int64_t{1} << 32)), K::Bf16, false, 0x5380},  // tie → even
      {K::S64, s64(-((int64_t{1} << 53) + 1)), K::Bf16, false, 0xDA00},
      {K::S32, (1 << 24) + 1, K::F32, false, 0x4B800000},
      {K::S64, 65519, K::F16, false, 0x7BFF},
      {K::S64, 65520, K::F16, false, 0x7C00},
      {K::U32, 0xFFFFFFFF, K::F32, false, 0x4F800000},  // 2^32
      // integer → integer wraps
      {K::S32, 300, K::S8, false, 44},
      {K::S32, s64(-1) & 0xFFFFFFFF, K::U8, false, 255},
      {K::S64, s64(-1), K::U32, false, 0xFFFFFFFF},
      {K::U32, 0xFFFFFFFF, K::S32, false, 0xFFFFFFFF},
      {K::S64, s64((int64_t{1} << 40) + 5), K::S32, false, 5},
      {K::U8, 200, K::S8, false, 0xC8},
      {K::S8, 0x80, K::S64, false, s64(-128)},
      {K::U32, 0x80000000, K::S64, false, 0x80000000},
      // bool
      {K::S32, 2, K::Bool, false, 1},
      {K::F32, f32_bits(nan), K::Bool, false, 1},
      {K::F32, f32_bits(-0.0f), K::Bool, false, 0},
      {K::F32, f32_bits(0x1p-149f), K::Bool, false, 1},
      {K::Bool, 1, K::F16, false, 0x3C00},
      {K::Bool, 1, K::S64, false, 1},
      {K::Bool, 1, K::Fp8E4M3, false, 0x38},
      // fp8 → wider
      {K::Fp8E4M3, 0x7E, K::F32, false, f32_bits(448.0f)},
      {K::Fp8E4M3, 0x7F, K::F32, false, kAnyNaN},
      {K::Fp8E4M3, 0x01, K::F32, false, f32_bits(0x1p-9f)},
      {K::Fp8E5M2, 0x7C, K::F32, false, f32_bits(inf)},
      {K::Fp8E5M2, 0xFB, K::F16, false, 0xFB00},
      {K::Fp8E4M3, 0x7E, K::Fp8E5M2, false, 0x5F},  // 448 → e5m2 448 exact (1.75·2^8)
      // a copy keeps NaN payloads
      {K::F32, 0x7FC00123, K::F32, false, 0x7FC00123},
  };
}

class CastValues : public ::testing::TestWithParam<DeviceKind> {};

TEST_P(CastValues, HandComputed) {
  BARACUDA_TEST_STREAM(stream, GetParam());
  BARACUDA_SKIP_IF_CANNOT_RUN(GetParam(), stream);
  for (const ValueCase& v : value_cases()) {
    SCOPED_TRACE(std::string(to_string(v.in)) + " 0x" +
                 [&] {
                   std::ostringstream os;
                   os << std::hex << v.in_bits;
                   return os.str();
                 }() +
                 " -> " + std::string(to_string(v.out)) + (v.saturate ? " (saturating)" : ""));
    std::vector<uint8_t> in(static_cast<size_t>(element_bytes(v.in)));
    store_bits(v.in, in.data(), v.in_bits);
    auto got = run_dense(stream, v.in, v.out, v.saturate, in, 1);
    ASSERT_TRUE(got) << got.error().to_string();
    if (v.out_bits == kAnyNaN)
      EXPECT_TRUE(is_nan(v.out, got->data())) << describe(v.out, got->data());
    else
      EXPECT_EQ(load_bits(v.out, got->data()), v.out_bits) << describe(v.out, got->data());
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, CastValues, ::testing::ValuesIn(kTestDevices),
                         [](const auto& info) { return std::string(to_string(info.param)); });

// ---------------------------------------------------------------------------------------------------
// Every rejection of select, can_implement and run
// ---------------------------------------------------------------------------------------------------

CastDescriptor f32_to_f16(Shape s = Shape{4, 3}) {
  return CastDescriptor().with_input(ElementKind::F32).with_output(ElementKind::F16).with_shape(s);
}

void expect_select_error(const Result<dynamic::CastPlan>& p, ErrorCode code) {
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().code, code) << p.error().to_string();
  EXPECT_NE(p.error().message.find("CastPlan"), std::string::npos) << "the message names the plan";
}

TEST(CastReject, TypedPlanWrongTypes) {
  auto a = CastPlan<double, __half, 2>::select(Stream::host(), f32_to_f16());
  ASSERT_FALSE(a);
  EXPECT_EQ(a.error().code, ErrorCode::InvalidProblem);
  auto b = CastPlan<float, float, 2>::select(Stream::host(), f32_to_f16());
  ASSERT_FALSE(b);
  EXPECT_EQ(b.error().code, ErrorCode::InvalidProblem);
  auto c = CastPlan<float, __half, 1>::select(Stream::host(), f32_to_f16());
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().code, ErrorCode::InvalidProblem);
}

TEST(CastReject, RankAboveEightAndNegativeExtent) {
  expect_select_error(dynamic::CastPlan::select(Stream::host(), f32_to_f16(Shape{1, 1, 1, 1, 1, 1, 1, 1, 1})),
                      ErrorCode::InvalidProblem);
  expect_select_error(dynamic::CastPlan::select(Stream::host(), f32_to_f16(Shape{-2})), ErrorCode::InvalidProblem);
}

TEST(CastReject, PackedKindsAreUnsupported) {
  for (ElementKind k : {ElementKind::S4, ElementKind::U4}) {
    for (DeviceKind d : {DeviceKind::Host, DeviceKind::Sim}) {
      const Stream s = *Stream::for_device(d);
      expect_select_error(dynamic::CastPlan::select(s, f32_to_f16().with_input(k)), ErrorCode::Unsupported);
      expect_select_error(dynamic::CastPlan::select(s, f32_to_f16().with_output(k)), ErrorCode::Unsupported);
    }
  }
}

TEST(CastReject, InvalidElementKindValue) {
  expect_select_error(dynamic::CastPlan::select(Stream::host(), f32_to_f16().with_output(static_cast<ElementKind>(99))),
                      ErrorCode::InvalidProblem);
}

TEST(CastReject, ForcedBackendThatCannotServe) {
  expect_select_error(
      dynamic::CastPlan::select(Stream::sim(), f32_to_f16(), PlanPreference().with_backend(BackendKind::Host)),
      ErrorCode::Unsupported);
  expect_select_error(
      dynamic::CastPlan::select(Stream::host(), f32_to_f16(), PlanPreference().with_backend(BackendKind::Cudnn)),
      ErrorCode::Unsupported);
}

TEST(CastReject, RunOnAnotherDevice) {
  auto p = dynamic::CastPlan::select(Stream::sim(), f32_to_f16());
  ASSERT_TRUE(p);
  float in[12] = {};
  __half out[12];
  const Status s = p->run(Stream::host(), {}, {ConstDynTensor::dense(in, ElementKind::F32, Shape{4, 3}),
                           DynTensor::dense(out, ElementKind::F16, Shape{4, 3})});
  ASSERT_FALSE(s);
  EXPECT_EQ(s.code(), ErrorCode::InvalidProblem);
}

TEST(CastReject, RunWithoutSelect) {
  dynamic::CastPlan p;
  float in[1] = {};
  EXPECT_FALSE(p.run(Stream::host(), {}, {ConstDynTensor::dense(in, ElementKind::F32, Shape{1}),
                      DynTensor::dense(in, ElementKind::F32, Shape{1})}));
}

class CastCanImplement : public test::InOutCanImplement<dynamic::CastPlan> {
 protected:
  void SetUp() override { select(f32_to_f16(), ElementKind::F32, ElementKind::F16); }
};

TEST_F(CastCanImplement, AcceptsTheDescribedTensors) { EXPECT_TRUE(plan_->can_implement({in(), out()})); }

TEST_F(CastCanImplement, ShapeMismatch) {
  expect(ConstDynTensor::dense(in_, ElementKind::F32, Shape{12}), out(), ErrorCode::InvalidProblem);
  expect(in(), DynTensor::dense(out_, ElementKind::F16, Shape{3, 4}), ErrorCode::InvalidProblem);
}

TEST_F(CastCanImplement, KindMismatch) {
  ConstDynTensor a = in();
  a.kind = ElementKind::S32;
  expect(a, out(), ErrorCode::InvalidProblem);
  DynTensor b = out();
  b.kind = ElementKind::Bf16;
  expect(in(), b, ErrorCode::InvalidProblem);
}

TEST_F(CastCanImplement, NullData) {
  expect_null_input_rejected();
  DynTensor b = out();
  b.data = nullptr;
  const Status s = plan_->can_implement({in(), b});
  ASSERT_FALSE(s);
  EXPECT_EQ(s.code(), ErrorCode::InvalidProblem);
}

TEST_F(CastCanImplement, MisalignedPointers) {
  expect_misaligned_input_rejected(1);
  DynTensor b = out();
  b.data = reinterpret_cast<char*>(out_) + 1;
  const Status s = plan_->can_implement({in(), b});
  ASSERT_FALSE(s);
  EXPECT_EQ(s.code(), ErrorCode::MisalignedOperand);
}

TEST_F(CastCanImplement, StrideZeroOutput) { expect_stride_zero_output_rejected(1); }

TEST_F(CastCanImplement, BroadcastInputIsAccepted) {
  ConstDynTensor a = in();
  a.stride[0] = 0;
  EXPECT_TRUE(plan_->can_implement({a, out()}));
}

TEST(CastAlias, InPlaceNeedsEqualStridesAndSizes) {
  alignas(16) float buf[32] = {};
  {  // f32 → s32 in place, same strides: accepted
    auto p = dynamic::CastPlan::select(
        Stream::host(),
        CastDescriptor().with_input(ElementKind::F32).with_output(ElementKind::S32).with_shape(Shape{4, 3}));
    ASSERT_TRUE(p);
    const ConstDynTensor a = ConstDynTensor::dense(buf, ElementKind::F32, Shape{4, 3});
    DynTensor b = DynTensor::dense(buf, ElementKind::S32, Shape{4, 3});
    EXPECT_TRUE(p->can_implement({a, b}));
    b.stride = {1, 4};  // same pointer, other strides
    const Status s = p->can_implement({a, b});
    ASSERT_FALSE(s);
    EXPECT_EQ(s.code(), ErrorCode::InvalidProblem);
  }
  {  // f32 → f16 in place: element sizes differ
    auto p = dynamic::CastPlan::select(Stream::host(), f32_to_f16());
    ASSERT_TRUE(p);
    const Status s = p->can_implement({ConstDynTensor::dense(buf, ElementKind::F32, Shape{4, 3}),
                                       DynTensor::dense(buf, ElementKind::F16, Shape{4, 3})});
    ASSERT_FALSE(s);
    EXPECT_EQ(s.code(), ErrorCode::InvalidProblem);
  }
}

TEST(CastPlanApi, EmptyTensorTouchesNothing) {
  for (DeviceKind d : {DeviceKind::Host, DeviceKind::Sim}) {
    const Stream s = *Stream::for_device(d);
    auto p = dynamic::CastPlan::select(s, f32_to_f16(Shape{3, 0}));
    ASSERT_TRUE(p);
    EXPECT_TRUE(p->run(s, {}, {ConstDynTensor::dense(nullptr, ElementKind::F32, Shape{3, 0}),
                        DynTensor::dense(nullptr, ElementKind::F16, Shape{3, 0})}));
  }
}

TEST(CastPlanApi, TypedWrapperSkuAndHash) {
  alignas(16) float in[6] = {1, 2, 3, 4, 5, 6};
  alignas(16) __nv_bfloat16 out[6];
  const CastDescriptor d =
      CastDescriptor().with_input(ElementKind::F32).with_output(ElementKind::Bf16).with_shape(Shape{2, 3});
  auto p = CastPlan<float, __nv_bfloat16, 2>::select(Stream::sim(), d);
  ASSERT_TRUE(p) << p.error().to_string();
  EXPECT_EQ(to_string(p->sku()), "cast/f32->bf16/sim/exact/elementwise");
  ASSERT_TRUE(p->run(Stream::sim(), {},
                     CastArgs<float, __nv_bfloat16, 2>{TensorRef<float, 2>::dense(in, {2, 3}),
                                                       TensorMut<__nv_bfloat16, 2>::dense(out, {2, 3})}));
  for (int i = 0; i < 6; ++i) EXPECT_EQ(decode_value(ElementKind::Bf16, &out[i]), in[i]);
  EXPECT_NE(d.hash(), CastDescriptor(d).with_saturate_fp8(true).hash());
}

}  // namespace
}  // namespace baracuda::test
