// Gated activations against independent values: PyTorch's golden data, finite differences, hand values, rounding.
// - GatedGolden: PyTorch's F.glu / relu / silu / gelu products, gpt-oss's clamped SwiGLU and their autograd
//   gradients in f64 and f32 (tests/data/gated_golden.json, made by gen_gated_golden.py), on every device.
// - GatedGradient: the backward against central finite differences of the forward, in f64.
// - GatedValues: hand-derived special values (±0, ±inf, NaN in either half, huge |x|, the clamp bounds).
// - GatedHost: the host reference's f16/bf16/f32 results are its double results correctly rounded.
#include <gtest/gtest.h>

#include "gated_activation_test_support.hpp"
#include "support/golden.hpp"

namespace baracuda::test {
namespace {

// ---------------------------------------------------------------------------------------------------
// Golden data from PyTorch
// ---------------------------------------------------------------------------------------------------

struct GoldenCase {
  std::string line;  // the case's name, for messages
  GatedActivationDescriptor desc;
  std::vector<uint8_t> x, dy, y, dx;
  std::vector<uint8_t> y64, dx64;  // f32 cases: PyTorch's computation in f64, rounded once to f32
};

/// The rule of support/compare.hpp's close_elements for one element.
bool within(double got, double want, const Tolerance& tol) {
  if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got);
  if (std::isinf(want) || std::isinf(got)) return got == want;
  return std::fabs(got - want) <= tol.atol + tol.rtol * std::fabs(want);
}

/// Every element of `got` is within `tol` of `a` or of `b`.
::testing::AssertionResult close_to_either(ElementKind k, const std::vector<uint8_t>& got, const std::vector<double>& a,
                                           const std::vector<double>& b, const Tolerance& tol) {
  const std::vector<double> g = values_of(k, got);
  if (g.size() != a.size() || g.size() != b.size()) return ::testing::AssertionFailure() << "sizes differ";
  std::ostringstream os;
  int bad = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    if (within(g[i], a[i], tol) || within(g[i], b[i], tol)) continue;
    if (bad++ < 8) os << "\n  [" << i << "] got " << g[i] << ", expected " << a[i] << " or " << b[i];
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " of " << g.size() << " elements differ:" << os.str();
}

std::vector<GoldenCase> golden_cases() {
  std::map<std::string, GatedActivationKind> kinds;
  for (const KindInfo& k : catalog()) kinds[k.name] = k.kind;
  std::map<std::string, GateLayout> layouts;
  for (GateLayout l : kLayouts) layouts[std::string(to_string(l))] = l;
  return load_golden_as<GoldenCase>("gated", nullptr, [&](const test::GoldenCase& g) {
    GoldenCase c;
    c.line = g.name;
    const std::string kind = g.param<std::string>("kind"), layout = g.param<std::string>("layout");
    ElementKind e = ElementKind::F32;
    EXPECT_TRUE(parse_element_kind(g.param<std::string>("dtype"), &e)) << g.name;
    EXPECT_TRUE(kinds.count(kind) && layouts.count(layout)) << g.name;
    const GoldenTensor& x = g.tensor("x");
    Shape s;
    s.rank = static_cast<int>(x.shape.size());
    for (int i = 0; i < s.rank; ++i) s.dims[i] = x.shape[static_cast<size_t>(i)];
    c.desc = GatedActivationDescriptor()
                 .with_kind(kinds[kind])
                 .with_element(e)
                 .with_layout(layouts[layout])
                 .with_input_shape(s)
                 .with_split_dim(g.param<int>("split_dim"))
                 .with_alpha(g.param<double>("alpha"))
                 .with_limit(g.param<double>("limit"));
    c.x = x.bytes();
    c.dy = g.tensor("dy").bytes();
    c.y = g.tensor("y").bytes();
    c.dx = g.tensor("dx").bytes();
    if (g.has("y64")) c.y64 = g.tensor("y64").bytes();
    if (g.has("dx64")) c.dx64 = g.tensor("dx64").bytes();
    return c;
  });
}

class GatedGolden : public ::testing::TestWithParam<DeviceKind> {};

TEST_P(GatedGolden, MatchesPyTorch) {
  BARACUDA_TEST_STREAM(stream, GetParam());
  const std::vector<GoldenCase> cases = golden_cases();
  ASSERT_GE(cases.size(), 150u) << "tests/data/gated_golden.json is missing or short";
  std::map<std::string, int> seen;
  for (const GoldenCase& c : cases) {
    SCOPED_TRACE(c.line);
    const ElementKind k = c.desc.element;
    ASSERT_EQ(c.x.size(), static_cast<size_t>(storage_bytes(k, c.desc.input_shape.numel())));
    ASSERT_EQ(c.dx.size(), c.x.size());
    ASSERT_EQ(c.y.size(), c.dy.size());
    auto fwd = dynamic::GatedActivationPlan::select(stream, c.desc);
    BARACUDA_SKIP_IF_NO_CUDA_KERNELS(fwd, GetParam());
    ASSERT_TRUE(fwd) << fwd.error().to_string();
    auto bwd = dynamic::GatedActivationBackwardPlan::select(stream, c.desc);
    ASSERT_TRUE(bwd) << bwd.error().to_string();
    const Tolerance tol = default_tolerance(k);
    const std::vector<uint8_t> y = device_forward(stream, *fwd, c.x);
    const std::vector<uint8_t> dx = device_backward(stream, *bwd, c.dy, c.x);
    if (k == ElementKind::F64) {
      EXPECT_TRUE(close_elements(k, y, values_of(k, c.y), tol)) << "forward";
      EXPECT_TRUE(close_elements(k, dx, values_of(k, c.dx), tol)) << "backward";
    } else {
      ASSERT_EQ(c.y64.size(), c.y.size());
      ASSERT_EQ(c.dx64.size(), c.dx.size());
      if (GetParam() == DeviceKind::Host) {
        // The host computes in double and rounds once: PyTorch's float64 evaluation rounded to f32.
        EXPECT_TRUE(close_elements(k, y, values_of(k, c.y64), tol)) << "forward";
        EXPECT_TRUE(close_elements(k, dx, values_of(k, c.dx64), tol)) << "backward";
      } else {
        // The devices compute in f32: each element matches PyTorch's f32 result or its f64 evaluation.
        EXPECT_TRUE(close_to_either(k, y, values_of(k, c.y), values_of(k, c.y64), tol)) << "forward";
        EXPECT_TRUE(close_to_either(k, dx, values_of(k, c.dx), values_of(k, c.dx64), tol)) << "backward";
      }
    }
    ++seen[std::string(to_string(c.desc.kind)) + "/" + std::string(to_string(c.desc.layout)) + "/" +
           std::string(to_string(k))];
  }
  // Every kind × layout × {f32, f64} is covered.
  EXPECT_EQ(seen.size(), catalog().size() * kLayouts.size() * 2);
}

INSTANTIATE_TEST_SUITE_P(Devices, GatedGolden, ::testing::ValuesIn(kTestDevices),
                         [](const auto& info) { return std::string(to_string(info.param)); });

// ---------------------------------------------------------------------------------------------------
// The backward against central finite differences of the forward, in f64
// ---------------------------------------------------------------------------------------------------

struct GradientCase {
  GatedActivationKind kind;
  GateLayout layout;
  DeviceKind device;
  double alpha;
  double limit;
};

std::vector<GradientCase> gradient_cases() {
  std::vector<GradientCase> v;
  for (const KindInfo& k : catalog())
    for (GateLayout l : kLayouts)
      for (DeviceKind d : kTestDevices) {
        v.push_back({k.kind, l, d, 1.702, 7.0});
        if (k.kind == GatedActivationKind::SwiGluClamped) v.push_back({k.kind, l, d, 1.25, 2.5});
      }
  return v;
}

void PrintTo(const GradientCase& c, std::ostream* os) {
  *os << to_string(c.kind) << "/" << to_string(c.layout) << "/" << to_string(c.device) << " alpha=" << c.alpha
      << " limit=" << c.limit;
}

class GatedGradient : public ::testing::TestWithParam<GradientCase> {};

TEST_P(GatedGradient, MatchesCentralDifferencesF64) {
  const GradientCase& c = GetParam();
  BARACUDA_TEST_STREAM(stream, c.device);
  const Shape in{2, 6, 3};  // split the middle dimension
  const GatedActivationDescriptor desc = GatedActivationDescriptor()
                                             .with_kind(c.kind)
                                             .with_element(ElementKind::F64)
                                             .with_layout(c.layout)
                                             .with_input_shape(in)
                                             .with_split_dim(1)
                                             .with_alpha(c.alpha)
                                             .with_limit(c.limit);
  auto fwd = dynamic::GatedActivationPlan::select(stream, desc);
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(fwd, c.device);
  ASSERT_TRUE(fwd) << fwd.error().to_string();
  auto bwd = dynamic::GatedActivationBackwardPlan::select(stream, desc);
  ASSERT_TRUE(bwd) << bwd.error().to_string();

  // Values away from the kinks (ReLU's 0, the clamps' ±limit) by much more than the step.
  Rng rng(seed_of(std::string(to_string(c.kind)) + std::string(to_string(c.layout))));
  const int64_t n = in.numel(), m = desc.output_shape().numel();
  std::vector<double> x(static_cast<size_t>(n)), dy(static_cast<size_t>(m));
  for (double& v : x) {
    do v = rng.uniform(-3.2 * c.limit / 2.5, 3.2 * c.limit / 2.5);  // beyond ±limit on both sides
    while (std::fabs(v) < 1e-2 || std::fabs(std::fabs(v) - c.limit) < 1e-2);
  }
  for (double& v : dy) v = rng.uniform(-2, 2);
  auto bytes = [](const std::vector<double>& v) {
    std::vector<uint8_t> b(v.size() * 8);
    std::memcpy(b.data(), v.data(), b.size());
    return b;
  };
  auto loss = [&](const std::vector<double>& xv) {
    const std::vector<double> y = values_of(ElementKind::F64, device_forward(stream, *fwd, bytes(xv)));
    double s = 0;
    for (int64_t i = 0; i < m; ++i) s += dy[static_cast<size_t>(i)] * y[static_cast<size_t>(i)];
    return s;
  };
  const std::vector<double> dx = values_of(ElementKind::F64, device_backward(stream, *bwd, bytes(dy), bytes(x)));
  ASSERT_EQ(dx.size(), x.size());
  const double h = 1e-6;
  for (int64_t i = 0; i < n; ++i) {
    std::vector<double> xp = x, xm = x;
    xp[static_cast<size_t>(i)] += h;
    xm[static_cast<size_t>(i)] -= h;
    const double numeric = (loss(xp) - loss(xm)) / (2 * h);
    EXPECT_NEAR(dx[static_cast<size_t>(i)], numeric, 1e-6 * (1 + std::fabs(numeric)))
        << "element " << i << " x=" << x[static_cast<size_t>(i)];
  }
}

INSTANTIATE_TEST_SUITE_P(Catalog, GatedGradient, ::testing::ValuesIn(gradient_cases()),
                         [](const ::testing::TestParamInfo<GradientCase>& info) {
                           const GradientCase& c = info.param;
                           std::string s = std::string(to_string(c.kind)) + "_" + std::string(to_string(c.layout));
                           if (c.limit != 7.0) s += "_limit2_5";
                           return s + "_" + std::string(to_string(c.device));
                         });

// ---------------------------------------------------------------------------------------------------
// Special values worked out by hand
// ---------------------------------------------------------------------------------------------------

// One (g, l, dy) and the expected (y, dg, dl); kNaN: any NaN. Zeros compare by value (either sign).
// Every input and expected value is exact in f16, bf16, f32 and f64.
struct ValueCase {
  GatedActivationKind kind;
  double g, l, dy;
  double y, dg, dl;
};

std::vector<ValueCase> value_cases() {
  using K = GatedActivationKind;
  const double big = 16384;  // σ(±big) is exactly 1 / 0 in every precision; big³ does not overflow f32
  return {
      {K::Glu, kInf, 1.5, 2, 1.5, 0, 2},           // σ(inf) = 1, σ'(inf) = 0
      {K::Glu, -kInf, 1.5, 2, 0, 0, 0},
      {K::Glu, 0, -3, 2, -1.5, -1.5, 1},           // σ(0) = 0.5, σ' = 0.25
      {K::Glu, 0, kNaN, 2, kNaN, kNaN, 1},         // NaN in the linear half
      {K::Glu, kNaN, 1, 2, kNaN, kNaN, kNaN},      // NaN in the gate half
      {K::ReGlu, 2.5, -2, 2, -5, -4, 5},
      {K::ReGlu, -0.0, 1.5, 2, 0, 0, 0},
      {K::ReGlu, kNaN, 1.5, 2, kNaN, 3, kNaN},     // relu(NaN) = NaN; its gradient passes (PyTorch)
      {K::ReGlu, -kInf, 1, 2, 0, 0, 0},
      {K::ReGlu, kInf, 0, 2, kNaN, 0, kInf},       // inf·0
      {K::SwiGlu, 0, 5, 2, 0, 5, 0},               // silu'(0) = 0.5
      {K::SwiGlu, big, 1.5, 2, 24576, 3, 32768},
      {K::SwiGlu, -big, 1.5, 2, 0, 0, 0},
      {K::SwiGlu, -kInf, 1, 2, kNaN, kNaN, kNaN},  // −inf·σ(−inf) = −inf·0, as PyTorch's silu
      {K::SwiGlu, kInf, 1.5, 2, kInf, kNaN, kInf},
      {K::GeGlu, 0, 5, 2, 0, 5, 0},                // gelu'(0) = Φ(0) = 0.5
      {K::GeGlu, big, 1.5, 2, 24576, 3, 32768},
      {K::GeGlu, -big, 1.5, 2, 0, 0, 0},
      {K::GeGlu, kInf, 1.5, 2, kInf, kNaN, kInf},
      {K::GeGlu, -kInf, 1.5, 2, kNaN, kNaN, kNaN},
      {K::GeGluTanh, 0, 5, 2, 0, 5, 0},
      {K::GeGluTanh, big, 1.5, 2, 24576, 3, 32768},
      {K::GeGluTanh, -big, 1.5, 2, 0, 0, 0},
      {K::GeGluTanh, kNaN, 1.5, 2, kNaN, kNaN, kNaN},
      {K::SwiGluClamped, 0, 0, 2, 0, 1, 0},        // σ(0)·(0 + 1)·2 = 1
      {K::SwiGluClamped, -big, 1, 2, 0, 0, 0},
      {K::SwiGluClamped, kNaN, 1, 2, kNaN, 0, kNaN},   // the clamp keeps NaN; its gradient is 0
      {K::SwiGluClamped, 1, kNaN, 2, kNaN, kNaN, 0},
      {K::SwiGluClamped, -kInf, 1, 2, kNaN, kNaN, kNaN},
  };
}

/// Runs fwd and bwd of `kind` on pairs (g, l) (second-half layout, x = [n, 2]); returns y, dg, dl.
struct PairResults {
  std::vector<double> y, dg, dl;
};
PairResults run_pairs(const Stream& stream, GatedActivationKind kind, ElementKind k,
                      const std::vector<std::array<double, 3>>& gld, bool* skipped) {
  const int64_t n = static_cast<int64_t>(gld.size());
  const int w = element_bytes(k);
  std::vector<uint8_t> x(static_cast<size_t>(2 * n * w)), dy(static_cast<size_t>(n * w));
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_TRUE(encode_exact(k, gld[i][1], &x[(2 * i) * w]));  // linear: first half
    EXPECT_TRUE(encode_exact(k, gld[i][0], &x[(2 * i + 1) * w]));
    EXPECT_TRUE(encode_exact(k, gld[i][2], &dy[i * w]));
  }
  const GatedActivationDescriptor d =
      GatedActivationDescriptor().with_kind(kind).with_element(k).with_input_shape(Shape{n, 2});
  auto fwd = dynamic::GatedActivationPlan::select(stream, d);
  auto bwd = dynamic::GatedActivationBackwardPlan::select(stream, d);
  *skipped = !fwd && stream.device() == DeviceKind::Cuda;
  PairResults r;
  if (*skipped || !fwd || !bwd) return r;
  r.y = values_of(k, device_forward(stream, *fwd, x));
  const std::vector<double> dx = values_of(k, device_backward(stream, *bwd, dy, x));
  for (int64_t i = 0; i < n; ++i) {
    r.dl.push_back(dx[static_cast<size_t>(2 * i)]);
    r.dg.push_back(dx[static_cast<size_t>(2 * i + 1)]);
  }
  return r;
}

struct ValueParam {
  DeviceKind device;
  ElementKind element;
};

void PrintTo(const ValueParam& p, std::ostream* os) { *os << to_string(p.element) << "/" << to_string(p.device); }

class GatedValues : public ::testing::TestWithParam<ValueParam> {};

void expect_value(double got, double want, const std::string& what) {
  if (std::isnan(want))
    EXPECT_TRUE(std::isnan(got)) << what << ": got " << got << ", expected NaN";
  else
    EXPECT_EQ(got, want) << what;
}

TEST_P(GatedValues, HandComputed) {
  const ValueParam& p = GetParam();
  BARACUDA_TEST_STREAM(stream, p.device);
  for (const KindInfo& info : catalog()) {
    std::vector<ValueCase> cases;
    std::vector<std::array<double, 3>> gld;
    for (const ValueCase& v : value_cases())
      if (v.kind == info.kind) {
        cases.push_back(v);
        gld.push_back({v.g, v.l, v.dy});
      }
    bool skipped = false;
    const PairResults r = run_pairs(stream, info.kind, p.element, gld, &skipped);
    if (skipped) GTEST_SKIP() << "built without CUDA kernels";
    ASSERT_EQ(r.y.size(), cases.size());
    for (size_t i = 0; i < cases.size(); ++i) {
      const ValueCase& v = cases[i];
      const std::string what =
          info.name + "(g=" + std::to_string(v.g) + ", l=" + std::to_string(v.l) + ", dy=" + std::to_string(v.dy) + ")";
      expect_value(r.y[i], v.y, what + " y");
      expect_value(r.dg[i], v.dg, what + " dg");
      expect_value(r.dl[i], v.dl, what + " dl");
    }
  }
}

TEST_P(GatedValues, ClampBoundaries) {
  const ValueParam& p = GetParam();
  BARACUDA_TEST_STREAM(stream, p.device);
  // limit 7: the gate is clamped from above only, the linear half on both sides; the gradients pass on the
  // closed intervals, so at ±7 exactly they pass and beyond they are 0 while y stays at the bound's value.
  const std::vector<std::array<double, 3>> gld = {
      {7, 1, 2},  {7.5, 1, 2}, {kInf, 1, 2},  // [0..2] gate at, beyond, far beyond the limit
      {1, 7, 2},  {1, 7.5, 2}, {1, kInf, 2},  // [3..5] linear above
      {1, -7, 2}, {1, -7.5, 2}, {1, -kInf, 2},  // [6..8] linear below
      {-7.5, 1, 2},                          // [9] the gate is not clamped from below
  };
  bool skipped = false;
  const PairResults r = run_pairs(stream, GatedActivationKind::SwiGluClamped, p.element, gld, &skipped);
  if (skipped) GTEST_SKIP() << "built without CUDA kernels";
  ASSERT_EQ(r.y.size(), gld.size());
  EXPECT_NE(r.dg[0], 0.0) << "the gradient passes at g = limit";
  EXPECT_EQ(r.y[1], r.y[0]);
  EXPECT_EQ(r.y[2], r.y[0]);
  EXPECT_EQ(r.dg[1], 0.0);
  EXPECT_EQ(r.dg[2], 0.0);
  EXPECT_EQ(r.dl[1], r.dl[0]) << "the linear gradient does not depend on the gate's clamp";
  EXPECT_NE(r.dl[3], 0.0) << "the gradient passes at l = limit";
  EXPECT_EQ(r.y[4], r.y[3]);
  EXPECT_EQ(r.y[5], r.y[3]);
  EXPECT_EQ(r.dl[4], 0.0);
  EXPECT_EQ(r.dl[5], 0.0);
  EXPECT_NE(r.dl[6], 0.0) << "the gradient passes at l = -limit";
  EXPECT_EQ(r.y[7], r.y[6]);
  EXPECT_EQ(r.y[8], r.y[6]);
  EXPECT_EQ(r.dl[7], 0.0);
  EXPECT_EQ(r.dl[8], 0.0);
  EXPECT_NE(r.dg[9], 0.0);
  EXPECT_NE(r.y[9], r.y[0]);
}

std::vector<ValueParam> value_params() {
  std::vector<ValueParam> v;
  for (DeviceKind d : kTestDevices)
    for_each_type(FloatTypes{}, [&]<class T>() { v.push_back({d, kind_of<T>}); });
  return v;
}

INSTANTIATE_TEST_SUITE_P(Devices, GatedValues, ::testing::ValuesIn(value_params()),
                         [](const ::testing::TestParamInfo<ValueParam>& info) {
                           return std::string(to_string(info.param.element)) + "_" +
                                  std::string(to_string(info.param.device));
                         });

// ---------------------------------------------------------------------------------------------------
// The host reference rounds once: its f16/bf16/f32 results are its double results correctly rounded
// ---------------------------------------------------------------------------------------------------

/// `h` (an element of kind k) is `v` rounded to nearest, ties to even: no neighbour of h is closer to v.
bool correctly_rounded(ElementKind k, const uint8_t* h, double v) {
  const double hv = decode_value(k, h);
  if (std::isnan(v) || std::isnan(hv)) return std::isnan(v) && std::isnan(hv);
  if (std::isinf(v)) return hv == v;
  const uint64_t bits = load_bits(k, h);
  const int w = element_bytes(k);
  const uint64_t sign = uint64_t{1} << (8 * w - 1);
  // The neighbours of hv: one step up and one down in magnitude (across zero for ±0).
  std::vector<double> near;
  for (int step : {-1, 1}) {
    uint64_t b = bits;
    if ((bits & ~sign) == 0 && step < 0) b = (bits ^ sign) + 1;  // from ±0 to the other side's smallest
    else b = bits + static_cast<uint64_t>(static_cast<int64_t>(step));
    std::vector<uint8_t> nb(static_cast<size_t>(w));
    store_bits(k, nb.data(), b);
    near.push_back(decode_value(k, nb.data()));
  }
  for (double n : near) {
    if (std::isnan(n)) continue;
    const double dh = std::fabs(v - hv), dn = std::fabs(v - n);
    if (dn < dh) return false;
    if (dn == dh && (bits & 1)) return false;  // a tie must go to the even significand
  }
  return true;
}

TEST(GatedHost, RoundsOnceFromDouble) {
  const Shape in{9, 40};
  for (const KindInfo& info : catalog())
    for (GateLayout layout : kLayouts)
      for (ElementKind k : {ElementKind::F16, ElementKind::Bf16, ElementKind::F32}) {
        SCOPED_TRACE(info.name + " " + std::string(to_string(k)) + " " + std::string(to_string(layout)));
        const GatedActivationDescriptor d =
            f32_desc(in).with_kind(info.kind).with_element(k).with_layout(layout).with_limit(3.0);
        GatedActivationDescriptor d64 = d;
        d64.element = ElementKind::F64;
        std::vector<double> xv, dyv;
        // Wide enough for tiny results (σ(−30) ≈ 1e-13: subnormal or zero in f16) and both clamp sides.
        const std::vector<uint8_t> x = random_floats(k, in.numel(), -30, 30, seed_of(info.name) + 1, &xv);
        const std::vector<uint8_t> dy = random_floats(k, in.numel() / 2, -3, 3, seed_of(info.name) + 2, &dyv);
        auto f64_bytes = [](const std::vector<double>& v) {
          std::vector<uint8_t> b(v.size() * 8);
          std::memcpy(b.data(), v.data(), b.size());
          return b;
        };
        // The host computes f64 data with α and limit in double, f32-class data with them rounded to f32;
        // α = 1.702 differs, so compare against an f64 problem with α already rounded to f32.
        d64.alpha = static_cast<float>(d.alpha);
        const std::vector<double> y64 = values_of(ElementKind::F64, host_forward(d64, f64_bytes(xv)));
        const std::vector<double> dx64 = values_of(ElementKind::F64, host_backward(d64, f64_bytes(dyv), f64_bytes(xv)));
        const std::vector<uint8_t> y = host_forward(d, x);
        const std::vector<uint8_t> dx = host_backward(d, dy, x);
        const int w = element_bytes(k);
        int bad = 0;
        for (size_t i = 0; i < y64.size(); ++i)
          if (!correctly_rounded(k, &y[i * w], y64[i]) && bad++ < 4)
            ADD_FAILURE() << "y[" << i << "] = " << describe(k, &y[i * w]) << " for " << y64[i];
        for (size_t i = 0; i < dx64.size(); ++i)
          if (!correctly_rounded(k, &dx[i * w], dx64[i]) && bad++ < 8)
            ADD_FAILURE() << "dx[" << i << "] = " << describe(k, &dx[i * w]) << " for " << dx64[i];
      }
}

}  // namespace
}  // namespace baracuda::test
