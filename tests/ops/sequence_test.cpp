// SequencePlan (arange, linspace): every kind × device × layout against values the test computes itself (the
// f64 formula of the header, then a check that no value of y's kind is nearer), PyTorch's documented examples,
// the counts of arange's ceil rule, the typed plan, and a negative test for every rejection.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include "baracuda/baracuda.hpp"
#include "support/devices.hpp"
#include "support/expect_error.hpp"
#include "support/numeric.hpp"
#include "support/tensor.hpp"

namespace baracuda::test {
namespace {

using K = ElementKind;
constexpr K kKinds[] = {K::F16, K::Bf16, K::F32, K::F64, K::S8, K::U8, K::S32, K::S64};

/// y's values from `plan` on `stream`, written through a [count] view (stride +1, +3 or −2, `lead` elements
/// after the storage's start: 1 makes a contiguous view that is not 16-byte aligned) over sentinel storage;
/// the elements the view does not reach must keep the sentinel.
std::vector<double> run_values(const Stream& stream, const dynamic::SequencePlan& plan, int64_t stride,
                               std::vector<uint64_t>* bits, int64_t lead = 0) {
  const K k = plan.descriptor().element;
  const int64_t n = plan.count();
  const Shape shape{n};
  Strided l;
  l.stride[0] = stride;
  l.offset = lead + (stride < 0 && n > 0 ? (n - 1) * -stride : 0);
  const int64_t storage = storage_elements(shape, l);
  auto y = make_device_tensor(stream, k, shape, l, sentinel_storage(k, storage), 1);
  EXPECT_TRUE(y) << y.error().to_string();
  if (!y) return {};
  const Status s = plan.run(stream, Workspace::none(), {y->view});
  EXPECT_TRUE(s) << s.to_string();
  const std::vector<uint8_t> got = download(*y);
  const std::vector<uint8_t> untouched = sentinel_storage(k, storage);
  std::vector<double> v;
  const int64_t bytes = element_bytes(k);
  std::vector<bool> reached(static_cast<size_t>(std::max<int64_t>(storage, 1)), false);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t at = l.offset + i * stride;
    reached[static_cast<size_t>(at)] = true;
    v.push_back(decode_value(k, &got[static_cast<size_t>(at * bytes)]));
    bits->push_back(load_bits(k, &got[static_cast<size_t>(at * bytes)]));
  }
  for (int64_t e = 0; e < storage; ++e)
    if (!reached[static_cast<size_t>(e)])
      EXPECT_EQ(std::memcmp(&got[static_cast<size_t>(e * bytes)], &untouched[static_cast<size_t>(e * bytes)],
                            static_cast<size_t>(bytes)),
                0)
          << "element " << e << " outside the view was written";
  return v;
}

/// The exact value the header's formula gives for index i, before the conversion to y's kind (f64).
double formula(const SequenceDescriptor& d, int64_t i) {
  if (d.op == SequenceOp::Arange) return std::fma(d.step, static_cast<double>(i), d.start);
  if (d.steps == 1) return d.start;
  const double step = (d.end - d.start) / static_cast<double>(d.steps - 1);
  return i < d.steps / 2 ? std::fma(step, static_cast<double>(i), d.start)
                         : std::fma(-step, static_cast<double>(d.steps - 1 - i), d.end);
}

/// The neighbours of a float value in its kind's grid, from its bits (sign-magnitude: ±1 on the magnitude).
std::pair<double, double> neighbours(K k, uint64_t bits) {
  const int width = element_bytes(k) * 8;
  const uint64_t sign = uint64_t{1} << (width - 1), mag = bits & (sign - 1);
  std::vector<uint8_t> up(8), down(8);
  const uint64_t next_away = (bits & sign) | (mag + 1);
  const uint64_t next_toward = mag == 0 ? (sign ^ (bits & sign)) | 1 : (bits & sign) | (mag - 1);
  store_bits(k, up.data(), next_away);
  store_bits(k, down.data(), next_toward);
  return {decode_value(k, up.data()), decode_value(k, down.data())};
}

/// y[i] is `v` rounded to y's kind: floats, no representable value nearer (a tie: the even one); integers,
/// truncated toward zero.
::testing::AssertionResult rounded_from(K k, double got, uint64_t bits, double v) {
  if (is_integral(k)) {
    if (got == std::trunc(v)) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "got " << got << ", want trunc(" << v << ")";
  }
  if (k == K::F64) {
    if (got == v) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "got " << got << ", want " << v;
  }
  const auto [a, b] = neighbours(k, bits);
  const double e = std::fabs(got - v);
  for (double c : {a, b}) {
    const double ec = std::fabs(c - v);
    if (ec < e || (ec == e && (bits & 1) != 0))
      return ::testing::AssertionFailure() << std::to_string(c) << " is nearer to " << v << " than " << got;
  }
  return ::testing::AssertionSuccess();
}

// ---------------------------------------------------------------------------------------------------
// The sweep: every kind × op × device × layout
// ---------------------------------------------------------------------------------------------------

struct SweepCase {
  K kind;
  SequenceDescriptor desc;  // element set from kind
  int64_t stride;
  int64_t lead;  // elements before the view
  DeviceKind device;
  std::string name;
};

std::vector<SweepCase> sweep_cases() {
  std::vector<SweepCase> v;
  for (K k : kKinds) {
    const bool integral = is_integral(k);
    const bool small = k == K::S8 || k == K::U8;
    const std::vector<std::pair<std::string, SequenceDescriptor>> descs = {
        {"arange_1000", SequenceDescriptor().arange(0, small ? 100 : 1000)},
        {"arange_down", SequenceDescriptor().arange(small ? 120 : 3001, small ? 3 : -5, integral ? -3 : -2.75)},
        {"arange_fraction", SequenceDescriptor().arange(integral ? 1 : 0.1, small ? 97 : integral ? 777 : 777.7,
                                                         integral ? 2 : 0.3)},
        {"linspace_513", SequenceDescriptor().linspace(k == K::U8 ? 0 : -1.5, small ? 100.25 : 7777.25, 513)},
        {"linspace_even", SequenceDescriptor().linspace(small && k == K::U8 ? 0 : -3, 1.0 / 3, 10)},
        {"linspace_one", SequenceDescriptor().linspace(2.75, 99, 1)},
        {"linspace_empty", SequenceDescriptor().linspace(0, 1, 0)},
        {"arange_empty", SequenceDescriptor().arange(5, 5)},
    };
    for (const auto& [name, d] : descs)
      for (const auto& [stride, lead] : {std::pair<int64_t, int64_t>{1, 0}, {1, 1}, {3, 0}, {-2, 0}})
        for (DeviceKind dev : kTestDevices) {
          SequenceDescriptor dk = d;
          dk.with_element(k);
          v.push_back({k, dk, stride, lead, dev,
                       name + "_" + std::string(to_string(k)) + "_stride" +
                           (stride < 0 ? "m2" : std::to_string(stride)) + (lead ? "_lead1" : "") + "_" +
                           std::string(to_string(dev))});
        }
  }
  return v;
}

void PrintTo(const SweepCase& c, std::ostream* os) { *os << c.name; }

class SequenceSweep : public ::testing::TestWithParam<SweepCase> {};

TEST_P(SequenceSweep, ValuesAreTheFormulaRoundedOnceAndMatchTheHost) {
  const SweepCase& c = GetParam();
  BARACUDA_TEST_STREAM(stream, c.device);
  auto plan = dynamic::SequencePlan::select(stream, c.desc);
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(plan, c.device);
  ASSERT_TRUE(plan) << plan.error().to_string();
  EXPECT_EQ(plan->sku().op, to_string(c.desc.op));
  EXPECT_EQ(plan->sku().backend, backend_of(c.device));
  EXPECT_EQ(plan->workspace_size(), 0u);
  std::vector<uint64_t> bits;
  const std::vector<double> got = run_values(stream, *plan, c.stride, &bits, c.lead);
  ASSERT_EQ(static_cast<int64_t>(got.size()), plan->count());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_TRUE(rounded_from(c.kind, got[i], bits[i], formula(c.desc, static_cast<int64_t>(i)))) << "i = " << i;
  if (c.device == DeviceKind::Host) return;
  // Bit for bit the host's, and the same twice.
  auto host = dynamic::SequencePlan::select(Stream::host(), c.desc);
  ASSERT_TRUE(host);
  std::vector<uint64_t> host_bits, again;
  run_values(Stream::host(), *host, 1, &host_bits);
  run_values(stream, *plan, 1, &again);
  EXPECT_EQ(bits, host_bits);
  EXPECT_EQ(again, bits);
}

INSTANTIATE_TEST_SUITE_P(AllKinds, SequenceSweep, ::testing::ValuesIn(sweep_cases()),
                         [](const ::testing::TestParamInfo<SweepCase>& i) { return i.param.name; });

// ---------------------------------------------------------------------------------------------------
// Values and counts worked out by hand (PyTorch's documentation examples among them)
// ---------------------------------------------------------------------------------------------------

std::vector<double> host_values(const SequenceDescriptor& d) {
  auto plan = dynamic::SequencePlan::select(Stream::host(), d);
  EXPECT_TRUE(plan) << plan.error().to_string();
  if (!plan) return {};
  std::vector<uint64_t> bits;
  return run_values(Stream::host(), *plan, 1, &bits);
}

TEST(SequenceValues, PyTorchDocumentationExamples) {
  EXPECT_EQ(host_values(SequenceDescriptor().arange(0, 5).with_element(K::S64)), (std::vector<double>{0, 1, 2, 3, 4}));
  EXPECT_EQ(host_values(SequenceDescriptor().arange(1, 4).with_element(K::S64)), (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(host_values(SequenceDescriptor().arange(1, 2.5, 0.5)), (std::vector<double>{1, 1.5, 2}));
  EXPECT_EQ(host_values(SequenceDescriptor().linspace(3, 10, 5)), (std::vector<double>{3, 4.75, 6.5, 8.25, 10}));
  EXPECT_EQ(host_values(SequenceDescriptor().linspace(-10, 10, 5)), (std::vector<double>{-10, -5, 0, 5, 10}));
  EXPECT_EQ(host_values(SequenceDescriptor().linspace(-10, 10, 1)), (std::vector<double>{-10}));
}

TEST(SequenceValues, CountsFollowTheCeilRule) {
  const auto count = [](const SequenceDescriptor& d) {
    auto p = dynamic::SequencePlan::select(Stream::host(), d);
    return p ? p->count() : -1;
  };
  EXPECT_EQ(count(SequenceDescriptor().arange(0, 1, 0.1)), 10);  // 1 / 0.1 = 10 in f64
  EXPECT_EQ(count(SequenceDescriptor().arange(1, 0, -0.25)), 4);
  EXPECT_EQ(count(SequenceDescriptor().arange(0, 10, 3).with_element(K::S32)), 4);    // 0 3 6 9
  EXPECT_EQ(count(SequenceDescriptor().arange(0, 9, 3).with_element(K::S32)), 3);     // 9 excluded
  EXPECT_EQ(count(SequenceDescriptor().arange(10, -1, -5).with_element(K::S8)), 3);   // 10 5 0
  EXPECT_EQ(count(SequenceDescriptor().arange(7, 7, -2).with_element(K::S8)), 0);
  EXPECT_EQ(count(SequenceDescriptor().linspace(0, 1, 0)), 0);
}

TEST(SequenceValues, EndPointsAreExactAndIntegersTruncate) {
  // Both ends of a linspace are start and end themselves, whatever the rounding of the spacing.
  const std::vector<double> v = host_values(SequenceDescriptor().linspace(0.1, 0.7, 7).with_element(K::F64));
  ASSERT_EQ(v.size(), 7u);
  EXPECT_EQ(v.front(), 0.1);
  EXPECT_EQ(v.back(), 0.7);
  // An integer linspace truncates toward zero: -2.5 → -2, 0.5 → 0, 3.5 → 3.
  EXPECT_EQ(host_values(SequenceDescriptor().linspace(-2.5, 3.5, 4).with_element(K::S32)),
            (std::vector<double>{-2, 0, 1, 3}));
  // An f16 arange rounds each value once from f64: 2049 is not an f16 (2048 and 2050 are; the tie goes even).
  EXPECT_EQ(host_values(SequenceDescriptor().arange(2047, 2052).with_element(K::F16)),
            (std::vector<double>{2047, 2048, 2048, 2050, 2052}));
}

TEST(SequenceValues, TypedPlanMatchesTheDynamicPlan) {
  for (DeviceKind dev : {DeviceKind::Host, DeviceKind::Sim}) {
    const Stream stream = dev == DeviceKind::Host ? Stream::host() : Stream::sim();
    const auto d = SequenceDescriptor().arange(-4, 4, 0.5).with_element(K::Bf16);
    auto typed = SequencePlan<__nv_bfloat16>::select(stream, d);
    ASSERT_TRUE(typed) << typed.error().to_string();
    EXPECT_EQ(typed->count(), 16);
    auto buf = Buffer::allocate_for<__nv_bfloat16>(stream, 16);
    ASSERT_TRUE(buf);
    const auto y = TensorMut<__nv_bfloat16, 1>::dense(static_cast<__nv_bfloat16*>(buf->data()), {16});
    ASSERT_TRUE(typed->run(stream, Workspace::none(), {y}));
    std::vector<uint16_t> got(16);
    ASSERT_TRUE(buf->copy_to_host(got.data(), 32));
    for (int i = 0; i < 16; ++i) {
      uint16_t want = 0;
      ASSERT_TRUE(encode_exact(K::Bf16, -4 + 0.5 * i, &want));
      EXPECT_EQ(got[i], want) << i;
    }
    auto wrong = SequencePlan<float>::select(stream, d);
    ASSERT_FALSE(wrong);
    EXPECT_EQ(wrong.error().code, ErrorCode::InvalidProblem);
  }
}

// ---------------------------------------------------------------------------------------------------
// Rejections
// ---------------------------------------------------------------------------------------------------

void expect_rejected(const SequenceDescriptor& d, ErrorCode code, const std::string& words) {
  for (const Stream& stream : {Stream::host(), Stream::sim()}) {
    auto p = dynamic::SequencePlan::select(stream, d);
    ASSERT_FALSE(p) << "accepted: " << words;
    EXPECT_EQ(p.error().code, code) << p.error().to_string();
    EXPECT_NE(p.error().message.find("SequencePlan"), std::string::npos) << p.error().to_string();
    EXPECT_NE(p.error().message.find(words), std::string::npos) << p.error().to_string();
  }
}

TEST(SequenceRejects, DescriptorRules) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  const auto I = ErrorCode::InvalidProblem;
  SequenceDescriptor bad_op;
  bad_op.op = static_cast<SequenceOp>(2);
  expect_rejected(bad_op, I, "invalid SequenceOp");
  expect_rejected(SequenceDescriptor().arange(0, 1).with_element(static_cast<K>(200)), I, "not a valid ElementKind");
  expect_rejected(SequenceDescriptor().arange(0, 4).with_element(K::Bool), ErrorCode::Unsupported, "bool");
  expect_rejected(SequenceDescriptor().arange(0, 4).with_element(K::Fp8E4M3), ErrorCode::Unsupported, "fp8e4m3");
  expect_rejected(SequenceDescriptor().arange(0, 1, 0), I, "nonzero");
  expect_rejected(SequenceDescriptor().arange(0, 5, -1), I, "inconsistent with step sign");
  expect_rejected(SequenceDescriptor().arange(5, 0, 1), I, "inconsistent with step sign");
  expect_rejected(SequenceDescriptor().arange(0, inf), I, "finite");
  expect_rejected(SequenceDescriptor().arange(nan, 1), I, "finite");
  expect_rejected(SequenceDescriptor().arange(0, 1, nan), I, "finite");
  expect_rejected(SequenceDescriptor().linspace(0, inf, 3), I, "finite");
  expect_rejected(SequenceDescriptor().arange(0, 1e300, 1e-300), I, "more values than a tensor may hold");
  expect_rejected(SequenceDescriptor().linspace(0, 1, -1), I, "steps must be >= 0");
  expect_rejected(SequenceDescriptor().linspace(0, 1, int64_t{1} << 57), I, "more values");
  expect_rejected(SequenceDescriptor().linspace(-1.7e308, 1.7e308, 2), I, "spacing");
  expect_rejected(SequenceDescriptor().arange(0.5, 4).with_element(K::S32), I, "integral");
  expect_rejected(SequenceDescriptor().arange(0, 4, 0.5).with_element(K::S64), I, "integral");
  expect_rejected(SequenceDescriptor().arange(0, 1e17).with_element(K::S64), I, "integral");
  expect_rejected(SequenceDescriptor().arange(0, 300).with_element(K::S8), I, "the last value");
  expect_rejected(SequenceDescriptor().arange(-1, 3).with_element(K::U8), I, "the first value");
  expect_rejected(SequenceDescriptor().linspace(0, 256, 3).with_element(K::U8), I, "the last value");
  expect_rejected(SequenceDescriptor().arange(0, 80000, 10000).with_element(K::F16), I, "overflows f16");
  expect_rejected(SequenceDescriptor().linspace(-65520, 0, 2).with_element(K::F16), I, "overflows f16");
  // At the edges, accepted: 65519 rounds to 65504, 255 fits u8, -128 fits s8.
  EXPECT_TRUE(
      dynamic::SequencePlan::select(Stream::host(), SequenceDescriptor().linspace(0, 65519, 2).with_element(K::F16)));
  EXPECT_TRUE(dynamic::SequencePlan::select(Stream::host(), SequenceDescriptor().arange(0, 256).with_element(K::U8)));
  EXPECT_TRUE(dynamic::SequencePlan::select(Stream::host(), SequenceDescriptor().arange(-128, 0).with_element(K::S8)));
}

TEST(SequenceRejects, OperandRules) {
  const Stream host = Stream::host();
  auto plan = dynamic::SequencePlan::select(host, SequenceDescriptor().arange(0, 6).with_element(K::S32));
  ASSERT_TRUE(plan);
  alignas(8) int32_t storage[16] = {};
  const auto check = [&](DynTensor y, ErrorCode code, const char* what) {
    SCOPED_TRACE(what);
    expect_error(plan->can_implement({y}), code, "SequencePlan");
    expect_error(plan->run(host, Workspace::none(), {y}), code, "SequencePlan");
  };
  const auto I = ErrorCode::InvalidProblem;
  check(DynTensor{}, I, "missing");
  check(DynTensor::dense(storage, K::F32, Shape{6}), I, "kind");
  check(DynTensor::dense(storage, K::S32, Shape{5}), I, "shape");
  check(DynTensor::dense(storage, K::S32, Shape{2, 3}), I, "rank");
  check(DynTensor::dense(nullptr, K::S32, Shape{6}), I, "null");
  check(DynTensor::dense(reinterpret_cast<uint8_t*>(storage) + 1, K::S32, Shape{6}), ErrorCode::MisalignedOperand,
        "misaligned");
  DynTensor broadcast = DynTensor::dense(storage, K::S32, Shape{6});
  broadcast.stride[0] = 0;
  check(broadcast, I, "stride 0");
  // Another device's stream.
  expect_error(plan->run(Stream::sim(), Workspace::none(), {DynTensor::dense(storage, K::S32, Shape{6})}), I,
               "SequencePlan");
  EXPECT_TRUE(plan->run(host, Workspace::none(), {DynTensor::dense(storage, K::S32, Shape{6})}));
  EXPECT_EQ(storage[5], 5);
  EXPECT_EQ(storage[6], 0);
}

TEST(SequenceApi, SkusHashAndPrecision) {
  auto f = dynamic::SequencePlan::select(Stream::sim(), SequenceDescriptor().linspace(0, 1, 5).with_element(K::F32));
  ASSERT_TRUE(f);
  EXPECT_EQ(to_string(f->sku()), "linspace/f32/sim/f64/grid_stride");
  EXPECT_EQ(f->precision_guarantee().math_precision, MathPrecision::F64);
  auto i = dynamic::SequencePlan::select(Stream::host(), SequenceDescriptor().arange(0, 5).with_element(K::S64));
  ASSERT_TRUE(i);
  EXPECT_EQ(i->precision_guarantee().math_precision, MathPrecision::Exact);
  EXPECT_TRUE(i->precision_guarantee().deterministic);
  const auto d = SequenceDescriptor().arange(0, 5);
  EXPECT_EQ(d.hash(), SequenceDescriptor().arange(0, 5).hash());
  EXPECT_NE(d.hash(), SequenceDescriptor().arange(0, 5, 2).hash());
  EXPECT_NE(d.hash(), SequenceDescriptor().linspace(0, 5, 1).hash());
  EXPECT_EQ(to_string(SequenceOp::Linspace), "linspace");
  EXPECT_EQ(to_string(static_cast<SequenceOp>(7)), "?");
}

}  // namespace
}  // namespace baracuda::test
