// Fp8QuantizePlan's quantization conventions and its optional scale_inv output (part of fp8_test):
// - Fp8Convention: every convention (PyTorch, Exact, TransformerEngine) × input kind × path (contiguous
//   vectorized, strided with gaps that hold the largest finite value) × accumulate_amax × device, on data
//   with NaNs (several payloads, both signs), ±inf, all NaN, none, and empty: amax against max |x| computed
//   here (NaN propagates, or is skipped by TransformerEngine's fmaxf; the starting-value rule for
//   accumulate_amax), y against x · scale rounded here (the same for every convention), scale_inv against
//   1.0f / scale, with and without the scale_inv operand. TransformerEngine × f64 is Unsupported.
// - Fp8ScaleInv: special scales (±0, ±inf, NaN, a subnormal, a scale whose reciprocal is subnormal), each
//   path and empty x; a dequantize on the same stream reads the written scale_inv.
// - Fp8TeGolden: tests/data/fp8_te_golden.json, from a NumPy model of TransformerEngine's cast kernel
//   (tests/data/gen_fp8_te_golden.py): y bytes, amax and scale_inv bit for bit (a NaN byte as any NaN),
//   contiguous and through a stride-2 x, accumulating from the section's starting amax and (start 0) not;
//   the same x under the PyTorch convention gives the same y and a NaN amax wherever x has a NaN.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "baracuda/baracuda.hpp"
#include "core/reference_formats.hpp"
#include "support/devices.hpp"
#include "support/golden.hpp"
#include "support/numeric.hpp"
#include "support/random.hpp"
#include "support/tensor.hpp"

#include "fp8_test_support.hpp"

namespace baracuda::test {
namespace {

using QC = QuantConvention;
constexpr QC kConventions[] = {QC::PyTorch, QC::Exact, QC::TransformerEngine};

const reference::BinaryFormat& fp8_format(K k) {
  return k == K::Fp8E4M3 ? reference::kFormatE4M3 : reference::kFormatE5M2;
}

/// The fp8 byte of x · scale as the plan defines it, written here: the f32 product (f64 for f64 x) of
/// the exact x, rounded once to fp8, saturating (NaN for a NaN product).
uint8_t expected_y(K in, K out, const uint8_t* xp, float scale) {
  const double xv = decode_value(in, xp);
  long double p;
  if (in == K::F64)
    p = xv * static_cast<double>(scale);
  else
    p = static_cast<float>(xv) * scale;  // xv is exact in f32
  return static_cast<uint8_t>(reference::encode(p, fp8_format(out), /*saturate=*/true));
}

/// The amax the plan writes: max |x| by the convention's NaN rule, then, when accumulating, the larger
/// of it and the starting value as signed f32 bit patterns (an empty x leaves the start).
uint32_t expected_amax_after(K in, const std::vector<uint8_t>& logical, bool skip_nan, bool accumulate,
                             float start) {
  const uint32_t m = expected_amax(in, logical, skip_nan);
  if (!accumulate) return m;
  if (logical.empty()) return bits_of(start);
  return static_cast<uint32_t>(std::max(static_cast<int32_t>(m), static_cast<int32_t>(bits_of(start))));
}

/// NaN patterns (quiet, signalling, negative, all ones) and ±inf of each input kind.
std::vector<uint64_t> nan_patterns(K k) {
  switch (k) {
    case K::F16: return {0x7E00, 0xFE00, 0x7C01, 0xFFFF};
    case K::Bf16: return {0x7FC0, 0xFFC0, 0x7F81, 0xFFFF};
    case K::F32: return {0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFFFFFFF};
    default: return {0x7FF8000000000000ull, 0xFFF8000000000000ull, 0x7FF0000000000001ull, ~0ull};
  }
}
uint64_t inf_bits(K k, bool negative) {
  const uint64_t b = k == K::F16 ? 0x7C00 : k == K::Bf16 ? 0x7F80 : k == K::F32 ? 0x7F800000 : 0x7FF0000000000000ull;
  return negative ? b | (uint64_t{1} << (8 * element_bytes(k) - 1)) : b;
}
uint64_t max_finite_bits(K k) {
  return k == K::F16 ? 0x7BFF : k == K::Bf16 ? 0x7F7F : k == K::F32 ? 0x7F7FFFFF : 0x7FEFFFFFFFFFFFFFull;
}

/// x's storage for layout `l`: the logical elements `logical`, and the largest finite value in every gap
/// (an amax that read a gap would show it).
std::vector<uint8_t> storage_of(K in, const LayoutCase& l, const std::vector<uint8_t>& logical) {
  std::vector<uint8_t> s = filled(in, storage_elements(l.shape, l.in), max_finite_bits(in));
  scatter(in, logical, &s, l.shape, l.in);
  return s;
}

// ---------------------------------------------------------------------------------------------------
// Every convention × input kind × path × accumulate_amax × device
// ---------------------------------------------------------------------------------------------------

struct ConventionCase {
  QC convention;
  K in;
  K out;
  bool strided;
  bool accumulate;
  DeviceKind device;
};

LayoutCase contiguous_layout() {
  const Shape s{67, 131};  // 8777 elements: several blocks of 16-element vectors and a ragged tail
  return {"contiguous", s, dense_layout(s), dense_layout(s), false};
}
LayoutCase strided_layout() {  // x walks columns with a step of 2, y has padded rows
  LayoutCase c{"strided", Shape{37, 41}, {}, {}, false};
  c.in.stride = {2, 74};
  c.out.stride = {48, 1};
  return c;
}

class Fp8Convention : public ::testing::TestWithParam<ConventionCase> {};

TEST_P(Fp8Convention, AmaxYAndScaleInv) {
  const ConventionCase& c = GetParam();
  BARACUDA_TEST_STREAM(stream, c.device);
  const LayoutCase l = c.strided ? strided_layout() : contiguous_layout();
  const bool skip_nan = c.convention == QC::TransformerEngine;
  const auto desc = [&](const Shape& s) {
    return Fp8QuantizeDescriptor()
        .with_input(c.in)
        .with_output(c.out)
        .with_shape(s)
        .with_accumulate_amax(c.accumulate)
        .with_convention(c.convention);
  };
  auto plan = dynamic::Fp8QuantizePlan::select(stream, desc(l.shape));
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(plan, c.device);
  if (c.convention == QC::TransformerEngine && c.in == K::F64) {
    ASSERT_FALSE(plan);
    EXPECT_EQ(plan.error().code, ErrorCode::Unsupported) << "TransformerEngine's cast takes no f64";
    return;
  }
  ASSERT_TRUE(plan) << plan.error().to_string();
  EXPECT_EQ(plan->sku().backend, backend_of(c.device));

  const int64_t n = l.shape.numel();
  const int eb = element_bytes(c.in);
  const float scale = c.out == K::Fp8E4M3 ? 0.3f : 1.7f;  // not powers of two: 1 / scale is inexact
  const uint32_t scale_inv_bits = bits_of(1.0f / scale);
  const double r = 1.5 * fp8_max_finite(c.out) / scale;  // a third of the finite values saturate
  std::vector<double> unused;
  const std::vector<uint8_t> finite = random_floats(c.in, n, -r, r, 7 + static_cast<int>(c.in), &unused);
  const std::vector<uint64_t> nans = nan_patterns(c.in);

  struct Data {
    std::string name;
    std::vector<uint8_t> logical;
  };
  std::vector<Data> data;
  data.push_back({"finite", finite});
  {  // NaNs spread over the blocks and in the vectorized path's tail; no inf: a finite amax under skip-NaN
    std::vector<uint8_t> v = finite;
    for (int64_t i = 0; i < n; i += 613) store_bits(c.in, &v[i * eb], nans[(i / 613) % nans.size()]);
    store_bits(c.in, &v[(n - 1) * eb], nans[1]);
    data.push_back({"nan", v});
    store_bits(c.in, &v[(n / 2) * eb], inf_bits(c.in, true));  // and a -inf: TransformerEngine's amax is +inf
    data.push_back({"nan_inf", v});
  }
  {
    std::vector<uint8_t> v(static_cast<size_t>(n * eb));
    for (int64_t i = 0; i < n; ++i) store_bits(c.in, &v[i * eb], nans[i % nans.size()]);
    data.push_back({"all_nan", v});
  }
  // The starting amax of accumulate_amax (ignored otherwise), one per data set: above the data's maximum,
  // below it, NaN (which stays), negative (below 0: all NaN under TransformerEngine gives 0).
  const float starts[] = {1e30f, 0.5f, NAN, -1.0f};

  for (size_t d = 0; d < data.size(); ++d) {
    const Data& dd = data[d];
    const float start = c.accumulate ? starts[d % std::size(starts)] : -7.0f;
    SCOPED_TRACE(dd.name + " amax start " + std::to_string(start));
    const std::vector<uint8_t> storage = storage_of(c.in, l, dd.logical);
    const QuantizeOutputs got = run_quantize(stream, *plan, c.in, c.out, l, storage, scale, start, -5.0f);
    if (HasFailure()) return;
    EXPECT_EQ(got.amax, expected_amax_after(c.in, dd.logical, skip_nan, c.accumulate, start))
        << "amax " << float_of(got.amax);
    ASSERT_TRUE(got.scale_inv.has_value());
    EXPECT_EQ(*got.scale_inv, scale_inv_bits) << float_of(*got.scale_inv);

    const std::vector<uint8_t> y = gather(c.out, got.y, l.shape, l.out);
    for (int64_t i = 0; i < n; ++i) {
      const uint8_t want = expected_y(c.in, c.out, &dd.logical[i * eb], scale);
      if (fp8_is_nan(c.out, want))
        ASSERT_TRUE(fp8_is_nan(c.out, y[i])) << describe(c.in, &dd.logical[i * eb]);
      else
        ASSERT_EQ(y[i], want) << describe(c.in, &dd.logical[i * eb]);
    }
    std::vector<uint8_t> untouched(got.y.size(), kSentinel);
    scatter(c.out, y, &untouched, l.shape, l.out);
    EXPECT_EQ(got.y, untouched) << "elements outside the output view changed";

    // Without the scale_inv operand: the same y and amax.
    const QuantizeOutputs bare = run_quantize(stream, *plan, c.in, c.out, l, storage, scale, start);
    EXPECT_EQ(bare.y, got.y);
    EXPECT_EQ(bare.amax, got.amax);
    EXPECT_FALSE(bare.scale_inv.has_value());
  }

  // Empty x: amax 0 (or the start, accumulating), scale_inv written all the same.
  const Shape empty{0, 5};
  const LayoutCase le{"empty", empty, dense_layout(empty), dense_layout(empty), false};
  auto plan0 = dynamic::Fp8QuantizePlan::select(stream, desc(empty));
  ASSERT_TRUE(plan0);
  for (float start : {2.5f, -1.0f}) {
    const QuantizeOutputs e = run_quantize(stream, *plan0, c.in, c.out, le, {}, scale, start, -5.0f);
    EXPECT_EQ(e.amax, c.accumulate ? bits_of(start) : 0u) << "empty x, start " << start;
    ASSERT_TRUE(e.scale_inv.has_value());
    EXPECT_EQ(*e.scale_inv, scale_inv_bits) << "empty x";
    EXPECT_EQ(run_quantize(stream, *plan0, c.in, c.out, le, {}, scale, start).amax, e.amax);
  }
}

std::vector<ConventionCase> convention_cases() {
  std::vector<ConventionCase> v;
  for (QC conv : kConventions)
    for (size_t i = 0; i < std::size(kInputs); ++i)
      for (bool strided : {false, true})
        for (bool acc : {false, true})
          for (DeviceKind d : kTestDevices)  // both fp8 kinds, alternating
            v.push_back({conv, kInputs[i], kFp8[(i + (strided ? 1 : 0)) % 2], strided, acc, d});
  return v;
}

INSTANTIATE_TEST_SUITE_P(All, Fp8Convention, ::testing::ValuesIn(convention_cases()),
                         [](const ::testing::TestParamInfo<ConventionCase>& info) {
                           const ConventionCase& c = info.param;
                           return std::string(to_string(c.convention)) + "_" + name_of(c.in) + "_" + name_of(c.out) +
                                  (c.strided ? "_strided" : "_contiguous") + (c.accumulate ? "_accumulate" : "") +
                                  "_" + std::string(to_string(c.device));
                         });

// ---------------------------------------------------------------------------------------------------
// scale_inv: special scales, and a dequantize that reads it
// ---------------------------------------------------------------------------------------------------

class Fp8ScaleInv : public ::testing::TestWithParam<DeviceKind> {};

TEST_P(Fp8ScaleInv, SpecialScalesAndStreamOrder) {
  BARACUDA_TEST_STREAM(stream, GetParam());
  const float inf = std::numeric_limits<float>::infinity();
  // ±0 → ±inf, ±inf → ±0, NaN → NaN, the smallest subnormal → +inf (overflow), 2^127 → 2^-127 and 3e38 →
  // subnormal reciprocals, 2^-126 → 2^126, and ordinary inexact ones.
  const float scales[] = {0.0f,     -0.0f,   inf,      -inf, NAN, 0x1p-149f, 0x1p127f, 3e38f, 0x1p-126f, 0.3f,
                          -0.7f,    7.0f,    1.0f / 3, 448.0f / 3.0f};
  for (bool strided : {false, true})
    for (bool acc : {false, true})
      for (QC conv : {QC::PyTorch, QC::TransformerEngine}) {
        const LayoutCase l = strided ? strided_layout() : contiguous_layout();
        auto plan = dynamic::Fp8QuantizePlan::select(stream, Fp8QuantizeDescriptor()
                                                                 .with_input(K::F32)
                                                                 .with_shape(l.shape)
                                                                 .with_accumulate_amax(acc)
                                                                 .with_convention(conv));
        BARACUDA_SKIP_IF_NO_CUDA_KERNELS(plan, GetParam());
        ASSERT_TRUE(plan);
        std::vector<double> unused;
        const std::vector<uint8_t> xs =
            storage_of(K::F32, l, random_floats(K::F32, l.shape.numel(), -100, 100, 3, &unused));
        for (float s : scales) {
          SCOPED_TRACE(std::string(strided ? "strided" : "contiguous") + (acc ? " accumulate " : " ") +
                       std::string(to_string(conv)) + " scale " + std::to_string(s));
          const QuantizeOutputs got = run_quantize(stream, *plan, K::F32, K::Fp8E4M3, l, xs, s, 0.0f, 123.0f);
          ASSERT_TRUE(got.scale_inv.has_value());
          const float want = 1.0f / s;
          if (std::isnan(want))
            EXPECT_TRUE(std::isnan(float_of(*got.scale_inv))) << float_of(*got.scale_inv);
          else
            EXPECT_EQ(*got.scale_inv, bits_of(want)) << float_of(*got.scale_inv) << " vs " << want;
        }
      }

  // Quantize writes scale_inv, then a dequantize on the same stream reads it: y · (1 / scale) for each
  // element, as the dequantize plan defines it.
  const Shape s{1000};
  auto q = dynamic::Fp8QuantizePlan::select(stream, Fp8QuantizeDescriptor().with_input(K::Bf16).with_shape(s));
  auto dq = dynamic::Fp8DequantizePlan::select(stream, Fp8DequantizeDescriptor().with_output(K::F32).with_shape(s));
  ASSERT_TRUE(q && dq);
  std::vector<double> unused;
  auto x = make_device_tensor(stream, K::Bf16, s, dense_layout(s), random_floats(K::Bf16, 1000, -50, 50, 11, &unused));
  auto y = make_device_tensor(stream, K::Fp8E4M3, s, dense_layout(s), {});
  auto back = make_device_tensor(stream, K::F32, s, dense_layout(s), {});
  auto scale = f32_scalar(stream, 1.0f / 0.15f);
  auto amax = f32_scalar(stream, 0.0f);
  auto scale_inv = f32_scalar(stream, -1.0f);
  ASSERT_TRUE(x && y && back && scale && amax && scale_inv);
  ASSERT_TRUE(q->run(stream, {}, {x->view, scale->view, y->view, amax->view, scale_inv->view}));
  ASSERT_TRUE(dq->run(stream, {}, {y->view, scale_inv->view, back->view}));
  const float inv = 1.0f / (1.0f / 0.15f);
  EXPECT_EQ(bits_of(download_f32(*scale_inv)), bits_of(inv));
  const std::vector<uint8_t> yb = download(*y);
  const std::vector<float> got = f32_values(download(*back));
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_EQ(bits_of(got[i]), bits_of(static_cast<float>(decode_value(K::Fp8E4M3, &yb[i])) * inv)) << i;
}

INSTANTIATE_TEST_SUITE_P(Devices, Fp8ScaleInv, ::testing::ValuesIn(kTestDevices),
                         [](const auto& info) { return std::string(to_string(info.param)); });

// ---------------------------------------------------------------------------------------------------
// Golden data from the NumPy model of TransformerEngine's cast
// ---------------------------------------------------------------------------------------------------

struct TeSection {
  K in;
  K out;
  uint32_t scale_bits, start_bits, amax_bits, scale_inv_bits;
  std::vector<uint64_t> x;
  std::vector<uint8_t> y;
};

std::vector<TeSection> load_te_golden() {
  auto bits32 = [](const GoldenCase& c, const char* name) { return static_cast<uint32_t>(c.tensor(name).bits.at(0)); };
  return load_golden_as<TeSection>("fp8_te", nullptr, [&](const GoldenCase& c) {
    const GoldenTensor& y = c.tensor("y");
    return TeSection{c.tensor("x").kind, y.kind, bits32(c, "scale"), bits32(c, "amax_start"), bits32(c, "amax"),
                     bits32(c, "scale_inv"), c.tensor("x").bits, y.bytes()};
  });
}

class Fp8TeGolden : public ::testing::TestWithParam<DeviceKind> {};

TEST_P(Fp8TeGolden, MatchesTheNumPyModelOfTransformerEngine) {
  BARACUDA_TEST_STREAM(stream, GetParam());
  const std::vector<TeSection> sections = load_te_golden();
  ASSERT_EQ(sections.size(), 3u * 2u * 11u);
  int nan_skipped = 0;
  for (size_t si = 0; si < sections.size(); ++si) {
    const TeSection& g = sections[si];
    const float scale = float_of(g.scale_bits), start = float_of(g.start_bits);
    const int eb = element_bytes(g.in);
    const Shape shape{static_cast<int64_t>(g.x.size())};
    std::vector<uint8_t> logical(g.x.size() * eb);
    bool has_nan = false;
    for (size_t i = 0; i < g.x.size(); ++i) {
      store_bits(g.in, &logical[i * eb], g.x[i]);
      has_nan = has_nan || is_nan(g.in, &logical[i * eb]);
    }
    nan_skipped += has_nan && g.amax_bits != kQuietNaN;
    LayoutCase dense{"dense", shape, dense_layout(shape), dense_layout(shape), false};
    LayoutCase stride2{"stride2", shape, {}, dense_layout(shape), false};
    stride2.in.stride[0] = 2;
    for (const LayoutCase& l : {dense, stride2})
      for (QC conv : {QC::TransformerEngine, QC::PyTorch})
        for (bool acc : {true, false}) {
          if (!acc && g.start_bits != 0) continue;  // the non-accumulating plan starts from 0
          SCOPED_TRACE("section " + std::to_string(si) + " " + name_of(g.in) + "->" + name_of(g.out) + " scale " +
                       std::to_string(scale) + " start " + std::to_string(start) + " " + l.name + " " +
                       std::string(to_string(conv)) + (acc ? " accumulate" : ""));
          auto plan = dynamic::Fp8QuantizePlan::select(stream, Fp8QuantizeDescriptor()
                                                                   .with_input(g.in)
                                                                   .with_output(g.out)
                                                                   .with_shape(shape)
                                                                   .with_accumulate_amax(acc)
                                                                   .with_convention(conv));
          BARACUDA_SKIP_IF_NO_CUDA_KERNELS(plan, GetParam());
          ASSERT_TRUE(plan) << plan.error().to_string();
          const QuantizeOutputs got = run_quantize(stream, *plan, g.in, g.out, l, storage_of(g.in, l, logical), scale,
                                                   acc ? start : -7.0f, 0.0f);
          ASSERT_EQ(got.y.size(), g.y.size());
          for (size_t i = 0; i < g.y.size(); ++i) {
            if (fp8_is_nan(g.out, g.y[i]))
              EXPECT_TRUE(fp8_is_nan(g.out, got.y[i])) << "x=" << describe(g.in, &logical[i * eb]);
            else
              EXPECT_EQ(got.y[i], g.y[i]) << "x=" << describe(g.in, &logical[i * eb]);
          }
          ASSERT_TRUE(got.scale_inv.has_value());
          EXPECT_EQ(*got.scale_inv, g.scale_inv_bits);
          if (conv == QC::TransformerEngine)
            EXPECT_EQ(got.amax, g.amax_bits) << float_of(got.amax);
          else  // PyTorch: a NaN in x is the quiet NaN, above every start; else TransformerEngine's amax
            EXPECT_EQ(got.amax, has_nan ? kQuietNaN : g.amax_bits) << float_of(got.amax);
        }
  }
  EXPECT_GE(nan_skipped, 20) << "sections where a NaN was skipped and the amax stayed a number";
}

INSTANTIATE_TEST_SUITE_P(Devices, Fp8TeGolden, ::testing::ValuesIn(kTestDevices),
                         [](const auto& info) { return std::string(to_string(info.param)); });

}  // namespace
}  // namespace baracuda::test
