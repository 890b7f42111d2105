// Fp8QuantizePlan / Fp8DequantizePlan / Fp8ScalingUpdatePlan tests:
// - Fp8QuantizeSweep: every (input kind × fp8 kind × device × layout): amax exact against max |x| computed
//   here in double, y bit-exact against the host reference, no write outside y, two runs give equal bits.
// - Fp8QuantizeGolden: NumPy/ml_dtypes golden bytes and amax (tests/data/gen_fp8_golden.py), every device.
// - Fp8QuantizeSpecials: random bit patterns (NaN, ±inf, subnormals): saturation, NaN in y and amax.
// - Fp8QuantizeAmaxModes: accumulate_amax, empty inputs.
// - Fp8DequantizeSweep: every (fp8 kind × output kind × device × layout) against x·scale_inv rounded here.
// - Fp8Recipe: several quantize → update steps with known amaxes against a model of TransformerEngine's
//   amax_and_scale_update written here (history ring, scale, scale_inv), for both algorithms, H = 1, 4
//   and 300 (more than one block of threads), a strided history column, margins, NaN/inf/0/tiny amaxes.
// The plan API and every rejection are in fp8_plan_test.cpp, the quantization conventions and scale_inv in
// fp8_convention_test.cpp (one executable; helpers in fp8_test_support.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "baracuda/baracuda.hpp"
#include "core/reference_formats.hpp"
#include "support/compare.hpp"
#include "support/devices.hpp"
#include "support/golden.hpp"
#include "support/in_out_sweep.hpp"
#include "support/numeric.hpp"
#include "support/random.hpp"
#include "support/tensor.hpp"

#include "fp8_test_support.hpp"

namespace baracuda::test {
namespace {

/// The scale each fp8 kind's sweep uses, and the input range: a third of the values saturate.
float sweep_scale(K fp8) { return fp8 == K::Fp8E4M3 ? 0.75f : 1.5f; }
double sweep_range(K fp8) { return 1.5 * fp8_max_finite(fp8) / sweep_scale(fp8); }

// ---------------------------------------------------------------------------------------------------
// Quantize sweep
// ---------------------------------------------------------------------------------------------------

/// Every (in, out) pair of the catalog family × device × layout but in place: y never aliases x (different
/// element sizes).
std::vector<InOutCase> sweep_cases(const char* family) {
  std::vector<InOutCase> v;
  for (const auto& [in, out] : catalog_pairs(family))
    for (DeviceKind d : kTestDevices)
      for (const LayoutCase& l : unary_layouts())
        if (!l.in_place) v.push_back({in, out, d, l});
  return v;
}

class Fp8QuantizeSweep : public ::testing::TestWithParam<InOutCase> {};

TEST_P(Fp8QuantizeSweep, AmaxExactAndMatchesHostReference) {
  const InOutCase& c = GetParam();
  BARACUDA_TEST_STREAM(stream, c.device);
  const LayoutCase& l = c.layout;
  const Fp8QuantizeDescriptor desc = Fp8QuantizeDescriptor().with_input(c.in).with_output(c.out).with_shape(l.shape);
  auto plan = dynamic::Fp8QuantizePlan::select(stream, desc);
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(plan, c.device);
  ASSERT_TRUE(plan) << plan.error().to_string();
  EXPECT_EQ(plan->sku().backend, backend_of(c.device));

  const int64_t in_elems = storage_elements(l.shape, l.in);
  std::vector<double> unused;
  const double r = sweep_range(c.out);
  const std::vector<uint8_t> in_storage = random_floats(c.in, in_elems, -r, r, 31 + in_elems, &unused);
  const float scale = sweep_scale(c.out);
  const QuantizeOutputs got = run_quantize(stream, *plan, c.in, c.out, l, in_storage, scale);
  if (HasFailure()) return;

  EXPECT_EQ(got.amax, l.shape.numel() == 0 ? 0u : expected_amax(c.in, gather(c.in, in_storage, l.shape, l.in)))
      << "amax " << float_of(got.amax);
  // Saturation happened and every byte is a finite fp8 value.
  const std::vector<uint8_t> y = gather(c.out, got.y, l.shape, l.out);
  const uint8_t max_code = c.out == K::Fp8E4M3 ? 0x7E : 0x7B;
  if (l.shape.numel() > 1000)
    EXPECT_NE(std::count_if(y.begin(), y.end(), [&](uint8_t b) { return (b & 0x7F) == max_code; }), 0);
  for (uint8_t b : y) ASSERT_LE(b & 0x7F, max_code) << "not a finite, saturated fp8 value";
  expect_only_view_written(c.out, got.y, y, l.shape, l.out);

  if (c.device != DeviceKind::Host) {
    auto host_plan = dynamic::Fp8QuantizePlan::select(Stream::host(), desc);
    ASSERT_TRUE(host_plan);
    const QuantizeOutputs want = run_quantize(Stream::host(), *host_plan, c.in, c.out, l, in_storage, scale);
    EXPECT_EQ(got.y, want.y) << "differs from the host reference";
    EXPECT_EQ(got.amax, want.amax);
    const QuantizeOutputs again = run_quantize(stream, *plan, c.in, c.out, l, in_storage, scale);
    EXPECT_EQ(again.y, got.y) << "two runs gave different bits";
    EXPECT_EQ(again.amax, got.amax);
  }
}

INSTANTIATE_TEST_SUITE_P(All, Fp8QuantizeSweep, ::testing::ValuesIn(sweep_cases("fp8_quantize")), in_out_case_name);

// ---------------------------------------------------------------------------------------------------
// Golden data from NumPy / ml_dtypes
// ---------------------------------------------------------------------------------------------------

struct GoldenSection {
  K in;
  K out;
  uint32_t scale_bits;
  uint32_t amax_bits;
  std::vector<uint64_t> x;
  std::vector<uint8_t> y;
};


std::vector<GoldenSection> golden_sections() {
  return load_golden_as<GoldenSection>("fp8", nullptr, [](const GoldenCase& c) {
    const GoldenTensor& y = c.tensor("y");
    return GoldenSection{c.tensor("x").kind, y.kind, static_cast<uint32_t>(c.tensor("scale").bits.at(0)),
                         static_cast<uint32_t>(c.tensor("amax").bits.at(0)), c.tensor("x").bits, y.bytes()};
  });
}

class Fp8QuantizeGolden : public ::testing::TestWithParam<DeviceKind> {};

TEST_P(Fp8QuantizeGolden, BytesAndAmaxMatchMlDtypes) {
  BARACUDA_TEST_STREAM(stream, GetParam());
  const std::vector<GoldenSection> sections = golden_sections();
  ASSERT_EQ(sections.size(), 4u * 2u * 4u);
  for (const GoldenSection& g : sections) {
    SCOPED_TRACE(name_of(g.in) + "->" + name_of(g.out) + " scale=" + std::to_string(float_of(g.scale_bits)));
    const Shape shape{static_cast<int64_t>(g.x.size())};
    auto plan = dynamic::Fp8QuantizePlan::select(
        stream, Fp8QuantizeDescriptor().with_input(g.in).with_output(g.out).with_shape(shape));
    BARACUDA_SKIP_IF_NO_CUDA_KERNELS(plan, GetParam());
    ASSERT_TRUE(plan) << plan.error().to_string();
    std::vector<uint8_t> xb(g.x.size() * element_bytes(g.in));
    for (size_t i = 0; i < g.x.size(); ++i) store_bits(g.in, &xb[i * element_bytes(g.in)], g.x[i]);
    const LayoutCase l{"golden", shape, dense_layout(shape), dense_layout(shape), false};
    const QuantizeOutputs got = run_quantize(stream, *plan, g.in, g.out, l, xb, float_of(g.scale_bits));
    ASSERT_EQ(got.y.size(), g.y.size());
    for (size_t i = 0; i < g.y.size(); ++i) {
      if (fp8_is_nan(g.out, g.y[i]))
        EXPECT_TRUE(fp8_is_nan(g.out, got.y[i])) << "x=" << describe(g.in, &xb[i * element_bytes(g.in)]);
      else
        EXPECT_EQ(got.y[i], g.y[i]) << "x=" << describe(g.in, &xb[i * element_bytes(g.in)]);
    }
    EXPECT_EQ(got.amax, g.amax_bits) << float_of(got.amax);
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, Fp8QuantizeGolden, ::testing::ValuesIn(kTestDevices),
                         [](const auto& info) { return std::string(to_string(info.param)); });

// ---------------------------------------------------------------------------------------------------
// Special values and the amax modes
// ---------------------------------------------------------------------------------------------------

class Fp8QuantizeSpecials : public ::testing::TestWithParam<DeviceKind> {};

TEST_P(Fp8QuantizeSpecials, RandomBitPatterns) {
  BARACUDA_TEST_STREAM(stream, GetParam());
  for (K in : kInputs)
    for (K out : kFp8) {
      SCOPED_TRACE(name_of(in) + "->" + name_of(out));
      const Shape shape{1031};
      auto plan = dynamic::Fp8QuantizePlan::select(
          stream, Fp8QuantizeDescriptor().with_input(in).with_output(out).with_shape(shape));
      BARACUDA_SKIP_IF_NO_CUDA_KERNELS(plan, GetParam());
      ASSERT_TRUE(plan);
      const LayoutCase l{"bits", shape, dense_layout(shape), dense_layout(shape), false};
      std::vector<uint8_t> xb = random_bits(in, shape.numel(), 5 + static_cast<int>(in));
      // Besides the random patterns: a NaN, -inf and the smallest subnormal for certain.
      const uint64_t nan_bits = in == K::F16 ? 0x7E00 : in == K::Bf16 ? 0x7FC0 : in == K::F32 ? 0x7FC00000 : 0x7FF8ull << 48;
      const uint64_t ninf_bits = in == K::F16 ? 0xFC00 : in == K::Bf16 ? 0xFF80 : in == K::F32 ? 0xFF800000 : 0xFFF0ull << 48;
      store_bits(in, &xb[0], nan_bits);
      store_bits(in, &xb[element_bytes(in)], ninf_bits);
      store_bits(in, &xb[2 * element_bytes(in)], 1);
      const QuantizeOutputs got = run_quantize(stream, *plan, in, out, l, xb, 1.0f);
      auto host_plan = dynamic::Fp8QuantizePlan::select(
          Stream::host(), Fp8QuantizeDescriptor().with_input(in).with_output(out).with_shape(shape));
      const QuantizeOutputs want = run_quantize(Stream::host(), *host_plan, in, out, l, xb, 1.0f);
      EXPECT_EQ(got.amax, expected_amax(in, xb));
      EXPECT_EQ(got.amax, kQuietNaN) << "one NaN makes amax the quiet NaN";
      const int eb = element_bytes(in);
      for (int64_t i = 0; i < shape.numel(); ++i) {
        const double x = decode_value(in, &xb[i * eb]);
        const uint8_t yb = got.y[i];
        if (std::isnan(x)) {
          EXPECT_TRUE(fp8_is_nan(out, yb)) << describe(in, &xb[i * eb]);
          continue;
        }
        ASSERT_FALSE(fp8_is_nan(out, yb)) << describe(in, &xb[i * eb]);
        EXPECT_EQ(yb, want.y[i]) << describe(in, &xb[i * eb]);
        const double yv = decode_value(out, &yb);
        if (std::fabs(x) >= 2 * fp8_max_finite(out))  // far out of range, ±inf included: ±max finite
          EXPECT_EQ(yv, std::copysign(static_cast<double>(fp8_max_finite(out)), x)) << describe(in, &xb[i * eb]);
      }
    }
}

TEST_P(Fp8QuantizeSpecials, HandPicked) {
  BARACUDA_TEST_STREAM(stream, GetParam());
  const Shape shape{8};
  auto plan = dynamic::Fp8QuantizePlan::select(
      stream, Fp8QuantizeDescriptor().with_input(K::F32).with_output(K::Fp8E4M3).with_shape(shape));
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(plan, GetParam());
  ASSERT_TRUE(plan);
  const float inf = std::numeric_limits<float>::infinity();
  // scale 2: 232·2 = 464 is the tie between 448 and 480 (→ 448, even); 1e30 and inf saturate; 2^-10·2 is
  // E4M3's smallest subnormal 2^-9 (0x01); 2^-11·2 = 2^-10, the tie between 0 and 2^-9 (→ +0); -0 stays -0.
  const std::vector<float> x = {232.0f, -1e30f, inf, -inf, 0x1p-10f, 0x1p-11f, -0.0f, 0.75f};
  const std::vector<uint8_t> want = {0x7E, 0xFE, 0x7E, 0xFE, 0x01, 0x00, 0x80, 0x3C};
  const LayoutCase l{"hand", shape, dense_layout(shape), dense_layout(shape), false};
  const QuantizeOutputs got = run_quantize(stream, *plan, K::F32, K::Fp8E4M3, l, f32_bytes(x), 2.0f);
  EXPECT_EQ(got.y, want);
  EXPECT_EQ(got.amax, bits_of(inf)) << "amax is of the unscaled input; inf is its maximum";
}

TEST_P(Fp8QuantizeSpecials, AmaxModes) {
  BARACUDA_TEST_STREAM(stream, GetParam());
  const Shape shape{300};
  const LayoutCase l{"modes", shape, dense_layout(shape), dense_layout(shape), false};
  auto acc = dynamic::Fp8QuantizePlan::select(
      stream, Fp8QuantizeDescriptor().with_input(K::F32).with_shape(shape).with_accumulate_amax(true));
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(acc, GetParam());
  ASSERT_TRUE(acc);
  std::vector<float> x(300);
  for (int i = 0; i < 300; ++i) x[i] = std::sin(0.1f * i) * 3.0f;  // max |x| just below 3
  const uint32_t m = expected_amax(K::F32, f32_bytes(x));
  EXPECT_EQ(run_quantize(stream, *acc, K::F32, K::Fp8E4M3, l, f32_bytes(x), 1.0f, 5.0f).amax, bits_of(5.0f));
  EXPECT_EQ(run_quantize(stream, *acc, K::F32, K::Fp8E4M3, l, f32_bytes(x), 1.0f, 1.0f).amax, m);
  EXPECT_EQ(run_quantize(stream, *acc, K::F32, K::Fp8E4M3, l, f32_bytes(x), 1.0f, -1.0f).amax, m)
      << "a negative starting value counts as below 0";
  EXPECT_EQ(run_quantize(stream, *acc, K::F32, K::Fp8E4M3, l, f32_bytes(x), 1.0f, NAN).amax, kQuietNaN);

  const Shape empty{0, 5};
  const LayoutCase le{"empty", empty, dense_layout(empty), dense_layout(empty), false};
  auto acc0 = dynamic::Fp8QuantizePlan::select(
      stream, Fp8QuantizeDescriptor().with_input(K::F32).with_shape(empty).with_accumulate_amax(true));
  auto set0 = dynamic::Fp8QuantizePlan::select(stream, Fp8QuantizeDescriptor().with_input(K::F32).with_shape(empty));
  ASSERT_TRUE(acc0 && set0);
  EXPECT_EQ(run_quantize(stream, *acc0, K::F32, K::Fp8E4M3, le, {}, 1.0f, 2.5f).amax, bits_of(2.5f));
  EXPECT_EQ(run_quantize(stream, *set0, K::F32, K::Fp8E4M3, le, {}, 1.0f, 2.5f).amax, 0u)
      << "an empty input's amax is 0";
}

INSTANTIATE_TEST_SUITE_P(Devices, Fp8QuantizeSpecials, ::testing::ValuesIn(kTestDevices),
                         [](const auto& info) { return std::string(to_string(info.param)); });

// ---------------------------------------------------------------------------------------------------
// Dequantize sweep
// ---------------------------------------------------------------------------------------------------

/// x · scale_inv as the plan defines it, computed from the format model: exact product in double, rounded
/// to f32 (a correctly rounded f32 product), then to 16 bits; f64: the exact product.
uint64_t expected_dequantized(K out, double x, float scale_inv) {
  using namespace reference;
  const double p = x * static_cast<double>(scale_inv);  // exact: 4 × 24 significant bits
  if (out == K::F64) {
    uint64_t b;
    std::memcpy(&b, &p, 8);
    return b;
  }
  const long double p32 = decode(encode(p, kFormatF32), kFormatF32);
  return encode(p32, out == K::F32 ? kFormatF32 : out == K::F16 ? kFormatF16 : kFormatBf16);
}

class Fp8DequantizeSweep : public ::testing::TestWithParam<InOutCase> {};

TEST_P(Fp8DequantizeSweep, MatchesProductRoundedOnce) {
  const InOutCase& c = GetParam();
  BARACUDA_TEST_STREAM(stream, c.device);
  const LayoutCase& l = c.layout;
  auto plan = dynamic::Fp8DequantizePlan::select(
      stream, Fp8DequantizeDescriptor().with_input(c.in).with_output(c.out).with_shape(l.shape));
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(plan, c.device);
  ASSERT_TRUE(plan) << plan.error().to_string();
  const int64_t in_elems = storage_elements(l.shape, l.in);
  const std::vector<uint8_t> in_storage = random_bits(c.in, in_elems, 99 + in_elems);  // every code
  const float scale_inv = 1.0f / 0.3f;
  auto x = make_device_tensor(stream, c.in, l.shape, l.in, in_storage, in_elems);
  const int64_t out_elems = storage_elements(l.shape, l.out);
  auto y = make_device_tensor(stream, c.out, l.shape, l.out,
                              std::vector<uint8_t>(static_cast<size_t>(storage_bytes(c.out, out_elems)), kSentinel));
  auto si = f32_scalar(stream, scale_inv);
  ASSERT_TRUE(x && y && si);
  ASSERT_TRUE(plan->run(stream, {}, {x->view, si->view, y->view}));
  const std::vector<uint8_t> got = download(*y);
  const std::vector<uint8_t> logical_in = gather(c.in, in_storage, l.shape, l.in);
  const std::vector<uint8_t> logical_out = gather(c.out, got, l.shape, l.out);
  const int eb = element_bytes(c.out);
  for (size_t i = 0; i < logical_in.size(); ++i) {
    const double xv = decode_value(c.in, &logical_in[i]);
    if (std::isnan(xv)) {
      ASSERT_TRUE(is_nan(c.out, &logical_out[i * eb]));
      continue;
    }
    ASSERT_EQ(load_bits(c.out, &logical_out[i * eb]), expected_dequantized(c.out, xv, scale_inv))
        << "x=" << describe(c.in, &logical_in[i]) << " got " << describe(c.out, &logical_out[i * eb]);
  }
  expect_only_view_written(c.out, got, logical_out, l.shape, l.out);
}

INSTANTIATE_TEST_SUITE_P(All, Fp8DequantizeSweep, ::testing::ValuesIn(sweep_cases("fp8_dequantize")),
                         in_out_case_name);

// ---------------------------------------------------------------------------------------------------
// The delayed-scaling recipe, step by step
// ---------------------------------------------------------------------------------------------------

/// TransformerEngine's amax_and_scale_update for one tensor, written from its definition: amax from the
/// history (fmaxf from 0 over all slots, or slot 0), scale = fp8_max·2^-margin / amax when amax is finite
/// and positive (else unchanged), inf → FLT_MAX, scale_inv = 1/scale; then roll left by one and clear slot 0.
struct TeModel {
  std::vector<float> history;
  float scale = 1.0f;
  float scale_inv = 1.0f;

  void update(AmaxComputeAlgo algo, float fp8_max, int margin) {
    float amax = 0.0f;
    for (float a : history) amax = std::fmax(amax, a);
    if (algo == AmaxComputeAlgo::MostRecent) amax = history[0];
    const float scaled_max = fp8_max * std::pow(2.0f, static_cast<float>(-margin));
    if (std::isfinite(amax) && amax > 0.0f) scale = scaled_max / amax;
    if (std::isinf(scale)) scale = FLT_MAX;
    scale_inv = 1.0f / scale;
    std::rotate(history.begin(), history.begin() + 1, history.end());  // torch.roll(history, -1)
    history[0] = 0.0f;
  }
};

struct RecipeCase {
  DeviceKind device;
  AmaxComputeAlgo algo;
  int64_t history_length;
  int64_t history_stride;  // a column of a [H, stride] history
  int margin;
  K fp8;
};

class Fp8Recipe : public ::testing::TestWithParam<RecipeCase> {};

TEST_P(Fp8Recipe, StepsMatchTransformerEngine) {
  const RecipeCase& c = GetParam();
  BARACUDA_TEST_STREAM(stream, c.device);
  const int64_t H = c.history_length;
  const Shape xs{7, 37};
  auto quantize = dynamic::Fp8QuantizePlan::select(
      stream, Fp8QuantizeDescriptor().with_input(K::Bf16).with_output(c.fp8).with_shape(xs));
  auto update = dynamic::Fp8ScalingUpdatePlan::select(stream, Fp8ScalingUpdateDescriptor()
                                                                  .with_fp8_kind(c.fp8)
                                                                  .with_history_length(H)
                                                                  .with_amax_compute_algo(c.algo)
                                                                  .with_margin(c.margin));
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(quantize, c.device);
  ASSERT_TRUE(quantize && update) << (quantize ? update.error().to_string() : quantize.error().to_string());

  // The history is column 1 of a [H, stride] f32 array; the other columns must stay untouched.
  Strided hl;
  hl.stride[0] = c.history_stride;
  hl.offset = c.history_stride > 1 ? 1 : 0;
  const int64_t hstore = storage_elements(Shape{H}, hl);
  std::vector<float> hinit(static_cast<size_t>(hstore), -3.0f);
  for (int64_t i = 0; i < H; ++i) hinit[hl.offset + i * hl.stride[0]] = 0.0f;
  auto hist = make_device_tensor(stream, K::F32, Shape{H}, hl, f32_bytes(hinit), hstore);
  auto scale = f32_scalar(stream, 1.0f);
  auto scale_inv = f32_scalar(stream, 1.0f);
  ASSERT_TRUE(hist && scale && scale_inv);
  DynTensor slot0 = hist->view;  // quantize writes the current amax into history[0]
  slot0.shape = Shape{1};

  TeModel te;
  te.history.assign(static_cast<size_t>(H), 0.0f);
  // Known amaxes: ordinary values, a zero step, a NaN step, an inf step, a tiny one (scale → FLT_MAX).
  const std::vector<float> amaxes = {2.0f, 0.5f, 100.0f, 0.0f, 3.0f, NAN, 7.0f, INFINITY, 1.5f, 1e-38f, 4.0f, 0.25f};
  bool saw_flt_max = false;
  for (size_t step = 0; step < amaxes.size(); ++step) {
    SCOPED_TRACE("step " + std::to_string(step) + " amax " + std::to_string(amaxes[step]));
    // x: small values, one element carrying the step's amax (its sign alternating).
    std::vector<uint8_t> xb(static_cast<size_t>(xs.numel()) * 2);
    for (int64_t i = 0; i < xs.numel(); ++i) {
      const float v = !(amaxes[step] >= 0.01f) ? 0.0f : static_cast<float>((i % 5) - 2) * 0x1p-8f;
      ASSERT_TRUE(encode_exact(K::Bf16, v, &xb[i * 2]));
    }
    const double carried = (step % 2 ? -1.0 : 1.0) * amaxes[step];
    const uint64_t carried_bits = reference::encode(carried, reference::kFormatBf16);
    store_bits(K::Bf16, &xb[2 * (step * 13 % xs.numel())], carried_bits);
    const float amax_bf16 = std::isnan(amaxes[step]) ? NAN : static_cast<float>(std::fabs(
                                                                  reference::decode(carried_bits, reference::kFormatBf16)));
    auto x = make_device_tensor(stream, K::Bf16, xs, dense_layout(xs), xb);
    auto y = make_device_tensor(stream, c.fp8, xs, dense_layout(xs), {});
    ASSERT_TRUE(x && y);
    ASSERT_TRUE(quantize->run(stream, {}, {x->view, scale->view, y->view, slot0}));

    // The model: the same amax lands in slot 0, then TE's update.
    te.history[0] = amax_bf16;
    {
      const std::vector<float> hnow = f32_values(download(*hist));
      const float slot = hnow[hl.offset];
      if (std::isnan(amax_bf16))
        EXPECT_EQ(bits_of(slot), kQuietNaN);
      else
        EXPECT_EQ(slot, amax_bf16) << "quantize wrote the step's amax into slot 0";
    }
    // y used the scale of the previous update.
    auto host_q = dynamic::Fp8QuantizePlan::select(
        Stream::host(), Fp8QuantizeDescriptor().with_input(K::Bf16).with_output(c.fp8).with_shape(xs));
    const LayoutCase l{"recipe", xs, dense_layout(xs), dense_layout(xs), false};
    EXPECT_TRUE(same_elements(c.fp8, download(*y), run_quantize(Stream::host(), *host_q, K::Bf16, c.fp8, l, xb, te.scale).y,
                              xs.numel()));

    ASSERT_TRUE(update->run(stream, {}, {hist->view, scale->view, scale_inv->view}));
    te.update(c.algo, fp8_max_finite(c.fp8), c.margin);
    saw_flt_max = saw_flt_max || te.scale == FLT_MAX;

    const std::vector<float> hnow = f32_values(download(*hist));
    for (int64_t i = 0; i < H; ++i) {
      const float got = hnow[hl.offset + i * hl.stride[0]];
      EXPECT_TRUE(bits_of(got) == bits_of(te.history[i]) || (std::isnan(got) && std::isnan(te.history[i])))
          << "history[" << i << "] = " << got << ", TransformerEngine: " << te.history[i];
    }
    EXPECT_EQ(hnow[hl.offset], 0.0f) << "slot 0 is cleared for the next step";
    if (H > 1 && !std::isnan(amax_bf16)) EXPECT_EQ(hnow[hl.offset + (H - 1) * hl.stride[0]], amax_bf16);
    for (int64_t j = 0; j < hstore; ++j)
      if (j < hl.offset || (j - hl.offset) % hl.stride[0] != 0) EXPECT_EQ(hnow[j], -3.0f) << "other column changed";
    EXPECT_EQ(bits_of(download_f32(*scale)), bits_of(te.scale)) << download_f32(*scale) << " vs " << te.scale;
    EXPECT_EQ(bits_of(download_f32(*scale_inv)), bits_of(te.scale_inv));
  }
  if (c.algo == AmaxComputeAlgo::MostRecent || c.history_length == 1)
    EXPECT_TRUE(saw_flt_max) << "the tiny amax's infinite scale became FLT_MAX";
}

std::vector<RecipeCase> recipe_cases() {
  std::vector<RecipeCase> v;
  for (DeviceKind d : kTestDevices)
    for (AmaxComputeAlgo a : {AmaxComputeAlgo::Max, AmaxComputeAlgo::MostRecent}) {
      v.push_back({d, a, 4, 1, 0, K::Fp8E4M3});
      v.push_back({d, a, 1, 1, 0, K::Fp8E5M2});
      v.push_back({d, a, 300, 3, 2, K::Fp8E4M3});
      v.push_back({d, a, 5, 2, -1, K::Fp8E5M2});
    }
  return v;
}

INSTANTIATE_TEST_SUITE_P(Steps, Fp8Recipe, ::testing::ValuesIn(recipe_cases()),
                         [](const ::testing::TestParamInfo<RecipeCase>& info) {
                           const RecipeCase& c = info.param;
                           return std::string(c.algo == AmaxComputeAlgo::Max ? "max" : "most_recent") + "_H" +
                                  std::to_string(c.history_length) + "_stride" + std::to_string(c.history_stride) +
                                  "_margin" + (c.margin < 0 ? "m" : "") + std::to_string(std::abs(c.margin)) + "_" +
                                  name_of(c.fp8) + "_" + std::string(to_string(c.device));
                         });

}  // namespace
}  // namespace baracuda::test
