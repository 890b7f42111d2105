// UnaryPlan / UnaryBackwardPlan against independent values: PyTorch's golden data, finite differences, hand values.
// - UnaryGolden: host, sim and cuda against PyTorch 1.13's values and autograd gradients, f64 and f32,
//   over special values (±0, ±inf, NaN, huge |x|, domain edges, kinks) and random points
//   (tests/data/unary_golden.json, made by tests/data/gen_unary_golden.py).
// - UnaryFiniteDifferences: every op's f64 backward against central differences of its forward.
// - UnarySpecialValues: hand-checked results, zero signs and the documented conventions, all dtypes.
#include <gtest/gtest.h>

#include "support/golden.hpp"
#include "unary_test_support.hpp"

namespace baracuda::test {
namespace {

// ---------------------------------------------------------------------------------------------------
// Golden data from PyTorch (tests/data/gen_unary_golden.py)
// ---------------------------------------------------------------------------------------------------

struct GoldenPoint {
  uint64_t x, y, dy, dx;
  bool has_y, has_dx;  // false: "-", not compared
};

struct GoldenSection {
  std::string title;  // "softplus f64 beta=2.0 threshold=10.0"
  UnaryDescriptor desc;
  std::vector<GoldenPoint> points;
};

/// The section of one golden case; false (with `error` set) when its op, dtype or a parameter is unknown.
bool to_section(const GoldenCase& c, GoldenSection* s, std::string* error) {
  UnaryKind kind{};
  ElementKind k{};
  if (!parse_unary_kind(c.param<std::string>("op"), &kind) || !parse_element_kind(c.param<std::string>("dtype"), &k)) {
    *error = "bad case " + c.name;
    return false;
  }
  s->title = c.name;
  s->desc = UnaryDescriptor().with_kind(kind).with_element(k);
  for (const auto& [key, value] : c.params.items()) {
    if (key == "op" || key == "dtype" || key == "y_not_compared" || key == "dx_not_compared") continue;
    bool found = false;
    for (size_t i = 0; i < kNumUnaryParams; ++i)
      if (to_string(static_cast<UnaryParam>(i)) == key) {
        s->desc.with_parameter(static_cast<UnaryParam>(i), c.param<double>(key));
        found = true;
      }
    if (!found) {
      *error = c.name + ": unknown parameter " + key;
      return false;
    }
  }
  const std::vector<uint64_t>& x = c.tensor("x").bits;
  const std::vector<uint64_t>& y = c.tensor("y").bits;
  const std::vector<uint64_t>& dy = c.tensor("dy").bits;
  const std::vector<uint64_t>& dx = c.tensor("dx").bits;
  for (size_t i = 0; i < x.size(); ++i) s->points.push_back({x[i], y.at(i), dy.at(i), dx.at(i), true, true});
  for (size_t i : c.param<std::vector<size_t>>("y_not_compared")) s->points.at(i).has_y = false;
  for (size_t i : c.param<std::vector<size_t>>("dx_not_compared")) s->points.at(i).has_dx = false;
  return true;
}

const std::vector<GoldenSection>& golden_sections(std::string* error) {
  static std::string load_error;
  static const std::vector<GoldenSection> sections = [] {
    std::vector<GoldenSection> v = load_golden_as<GoldenSection>("unary", &load_error, [](const GoldenCase& c) {
      GoldenSection s;
      to_section(c, &s, &load_error);  // a bad case sets load_error: then none is used
      return s;
    });
    if (!load_error.empty()) v.clear();
    return v;
  }();
  *error = load_error;
  return sections;
}

/// Where baracuda deliberately differs from PyTorch (documented in include/baracuda/ops/unary.hpp).
bool known_deviation(UnaryKind op, bool backward, double x) {
  // softsign' = dy/(1+|x|)² is 0 at ±inf; PyTorch's composite autograd gives NaN.
  return op == UnaryKind::Softsign && backward && std::isinf(x);
}

/// got vs PyTorch's value: NaN with NaN, infinities exactly, finite values within `tol` (the sign of a zero
/// is not compared: PyTorch's own CPU and CUDA kernels disagree about it, e.g. elu(-0)).
bool golden_close(double got, double want, const Tolerance& tol) {
  if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got);
  if (std::isinf(want) || std::isinf(got) || tol.exact) return got == want;
  return std::fabs(got - want) <= tol.atol + tol.rtol * std::fabs(want);
}

struct GoldenParam {
  size_t section;
  DeviceKind device;
};

std::vector<GoldenParam> golden_cases() {
  std::string error;
  const std::vector<GoldenSection>& sections = golden_sections(&error);
  std::vector<GoldenParam> v;
  for (size_t i = 0; i < std::max<size_t>(sections.size(), 1); ++i)
    for (DeviceKind d : kTestDevices) v.push_back({i, d});
  return v;
}

class UnaryGolden : public ::testing::TestWithParam<GoldenParam> {};

TEST_P(UnaryGolden, MatchesPyTorch) {
  std::string error;
  const std::vector<GoldenSection>& sections = golden_sections(&error);
  ASSERT_TRUE(error.empty()) << error;
  ASSERT_LT(GetParam().section, sections.size());
  const GoldenSection& g = sections[GetParam().section];
  BARACUDA_TEST_STREAM(stream, GetParam().device);
  SCOPED_TRACE(g.title);
  const ElementKind k = g.desc.element;
  const CatalogOp& op = op_of(g.desc.kind);
  const int w = element_bytes(k);
  const auto n = static_cast<int64_t>(g.points.size());
  std::vector<uint8_t> x(static_cast<size_t>(n * w)), y(x.size()), dy(x.size());
  for (int64_t i = 0; i < n; ++i) {
    store_bits(k, &x[static_cast<size_t>(i * w)], g.points[static_cast<size_t>(i)].x);
    store_bits(k, &y[static_cast<size_t>(i * w)], g.points[static_cast<size_t>(i)].y);
    store_bits(k, &dy[static_cast<size_t>(i * w)], g.points[static_cast<size_t>(i)].dy);
  }
  UnaryDescriptor desc = g.desc;
  desc.shape = Shape{n};
  auto fwd = dynamic::UnaryPlan::select(stream, desc);
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(fwd, GetParam().device);
  ASSERT_TRUE(fwd) << fwd.error().to_string();
  auto bwd = dynamic::UnaryBackwardPlan::select(stream, desc);
  ASSERT_TRUE(bwd) << bwd.error().to_string();

  auto tx = make_device_tensor(stream, k, desc.shape, dense_layout(desc.shape), x);
  auto ty = make_device_tensor(stream, k, desc.shape, dense_layout(desc.shape), sentinel_storage(k, n));
  auto tgy = make_device_tensor(stream, k, desc.shape, dense_layout(desc.shape), y);  // PyTorch's y
  auto tdy = make_device_tensor(stream, k, desc.shape, dense_layout(desc.shape), dy);
  auto tdx = make_device_tensor(stream, k, desc.shape, dense_layout(desc.shape), sentinel_storage(k, n));
  ASSERT_TRUE(tx && ty && tgy && tdy && tdx);
  ASSERT_TRUE(fwd->run(stream, {}, {tx->view, ty->view}));
  const ConstDynTensor saved = op.saved == UnarySaved::Output ? tgy->view : tx->view;
  ASSERT_TRUE(bwd->run(stream, {}, {tdy->view, saved, tdx->view}));
  const std::vector<uint8_t> got_y = download(*ty), got_dx = download(*tdx);

  const Tolerance fwd_tol = op.fwd_tol(k), bwd_tol = op.bwd_tol(k);
  int reported = 0;
  for (int64_t i = 0; i < n; ++i) {
    const GoldenPoint& p = g.points[static_cast<size_t>(i)];
    const double xv = decode_value(k, &x[static_cast<size_t>(i * w)]);
    const double want_y = decode_value(k, &y[static_cast<size_t>(i * w)]);
    const double gy = decode_value(k, &got_y[static_cast<size_t>(i * w)]);
    if (p.has_y && !golden_close(gy, want_y, fwd_tol) && !known_deviation(g.desc.kind, false, xv) && reported++ < 8)
      ADD_FAILURE() << "f(" << xv << ") = " << gy << ", PyTorch " << want_y;
    if (!p.has_dx || (!p.has_y && op.saved == UnarySaved::Output) || known_deviation(g.desc.kind, true, xv))
      continue;
    uint8_t buf[8];
    store_bits(k, buf, p.dx);
    const double want_dx = decode_value(k, buf);
    const double gdx = decode_value(k, &got_dx[static_cast<size_t>(i * w)]);
    if (!golden_close(gdx, want_dx, bwd_tol) && reported++ < 8)
      ADD_FAILURE() << "backward at x = " << xv << ", dy = " << decode_value(k, &dy[static_cast<size_t>(i * w)])
                    << ": " << gdx << ", PyTorch " << want_dx;
  }
}

INSTANTIATE_TEST_SUITE_P(PyTorch, UnaryGolden, ::testing::ValuesIn(golden_cases()),
                         [](const ::testing::TestParamInfo<GoldenParam>& info) {
                           std::string error;
                           const auto& sections = golden_sections(&error);
                           std::string name = "missing_data";
                           if (info.param.section < sections.size()) {
                             name.clear();
                             for (char ch : sections[info.param.section].title)
                               name += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
                           }
                           return name + "_" + std::to_string(info.param.section) + "_" +
                                  std::string(to_string(info.param.device));
                         });

// ---------------------------------------------------------------------------------------------------
// Gradients against central finite differences (f64)
// ---------------------------------------------------------------------------------------------------

struct FdCase {
  UnaryKind op;
  DeviceKind device;
};

std::vector<FdCase> fd_cases() {
  std::vector<FdCase> v;
  for (const CatalogOp& op : catalog())
    for (DeviceKind d : kTestDevices) v.push_back({op.kind, d});
  return v;
}

class UnaryFiniteDifferences : public ::testing::TestWithParam<FdCase> {};

std::vector<double> run_f64_forward(const Stream& stream, const dynamic::UnaryPlan& plan, std::vector<double> x) {
  const Shape s{static_cast<int64_t>(x.size())};
  std::vector<uint8_t> bytes(x.size() * 8);
  std::memcpy(bytes.data(), x.data(), bytes.size());
  auto in = make_device_tensor(stream, ElementKind::F64, s, dense_layout(s), bytes);
  auto out = make_device_tensor(stream, ElementKind::F64, s, dense_layout(s), bytes);
  EXPECT_TRUE(in && out && plan.run(stream, {}, {in->view, out->view}));
  if (!in || !out) return {};
  return values_of(ElementKind::F64, download(*out));
}

TEST_P(UnaryFiniteDifferences, BackwardMatchesCentralDifferences) {
  const FdCase& c = GetParam();
  const CatalogOp& op = op_of(c.op);
  BARACUDA_TEST_STREAM(stream, c.device);
  constexpr int64_t n = 64;
  const Shape s{n};
  const UnaryDescriptor desc = test_desc(c.op, ElementKind::F64, s);
  auto fwd = dynamic::UnaryPlan::select(stream, desc);
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(fwd, c.device);
  ASSERT_TRUE(fwd) << fwd.error().to_string();
  auto bwd = dynamic::UnaryBackwardPlan::select(stream, desc);
  ASSERT_TRUE(bwd) << bwd.error().to_string();

  std::vector<double> x, dy;
  (void)random_floats(ElementKind::F64, n, op.domain.lo, op.domain.hi, 4242 + static_cast<uint64_t>(c.op), &x);
  (void)random_floats(ElementKind::F64, n, -2.0, 2.0, 4343 + static_cast<uint64_t>(c.op), &dy);
  std::vector<double> xp(n), xm(n);
  for (int64_t i = 0; i < n; ++i) {
    const double h = 1e-5 * std::max(1.0, std::fabs(x[i]));
    xp[i] = x[i] + h;
    xm[i] = x[i] - h;
  }
  const std::vector<double> y = run_f64_forward(stream, *fwd, x);
  const std::vector<double> yp = run_f64_forward(stream, *fwd, xp);
  const std::vector<double> ym = run_f64_forward(stream, *fwd, xm);
  ASSERT_EQ(y.size(), static_cast<size_t>(n));

  std::vector<uint8_t> dy_bytes(n * 8), saved_bytes(n * 8);
  std::memcpy(dy_bytes.data(), dy.data(), dy_bytes.size());
  std::memcpy(saved_bytes.data(), (op.saved == UnarySaved::Output ? y : x).data(), saved_bytes.size());
  auto tdy = make_device_tensor(stream, ElementKind::F64, s, dense_layout(s), dy_bytes);
  auto tsaved = make_device_tensor(stream, ElementKind::F64, s, dense_layout(s), saved_bytes);
  auto tdx = make_device_tensor(stream, ElementKind::F64, s, dense_layout(s), sentinel_storage(ElementKind::F64, n));
  ASSERT_TRUE(tdy && tsaved && tdx);
  ASSERT_TRUE(bwd->run(stream, {}, {tdy->view, tsaved->view, tdx->view}));
  const std::vector<double> dx = values_of(ElementKind::F64, download(*tdx));
  for (int64_t i = 0; i < n; ++i) {
    const double fd = dy[i] * (yp[i] - ym[i]) / (xp[i] - xm[i]);
    // Truncation error ~h²·f''' and cancellation ~eps·|f|/h, both far below this.
    const double tol = 1e-6 * (std::fabs(dx[i]) + std::fabs(fd)) + 1e-9 * (1 + std::fabs(y[i])) * std::fabs(dy[i]);
    EXPECT_LE(std::fabs(dx[i] - fd), tol) << op.name << " at x = " << x[i] << ": backward " << dx[i]
                                          << ", central difference " << fd;
  }
}

INSTANTIATE_TEST_SUITE_P(Catalog, UnaryFiniteDifferences, ::testing::ValuesIn(fd_cases()),
                         [](const ::testing::TestParamInfo<FdCase>& info) {
                           return std::string(to_string(info.param.op)) + "_" + std::string(to_string(info.param.device));
                         });

// ---------------------------------------------------------------------------------------------------
// Special values worked out by hand (all dtypes; zero signs compared)
// ---------------------------------------------------------------------------------------------------

constexpr double kSkip = 1234.5;  // "do not check"

struct SpecialCase {
  UnaryKind op;
  ElementKind kind;
  double x, y;    // y: expected forward value (NaN: any NaN; kSkip: not checked)
  double dy, dx;  // backward with saved = x or y as the catalog says (dx kSkip: not checked)
  std::vector<std::pair<UnaryParam, double>> params = {};
};

std::vector<SpecialCase> special_cases() {
  using K = ElementKind;
  using U = UnaryKind;
  std::vector<SpecialCase> v = {
      // Overflow and underflow of the 16-bit kinds (computed in f32, rounded once).
      {U::Exp, K::F16, 12, kInf, 1, kInf},
      {U::Exp, K::F16, -20, 0, 1, 0},
      {U::Exp2, K::F16, 16, kInf, 1, kInf},
      {U::Exp, K::Bf16, 89, kInf, 1, kInf},
      {U::Sigmoid, K::F16, -20, 0, 1, 0},
      {U::Sigmoid, K::F16, 20, 1, 1, 0},
      {U::Sigmoid, K::Bf16, -100, 0, 1, 0},
      {U::Tanh, K::F16, 10, 1, 1, 0},
      {U::Softplus, K::F16, 60000, 60000, 1, 1},
      {U::Softplus, K::F16, -60000, 0, 1, 0},
      {U::Gelu, K::F16, 60000, 60000, 1, 1},
      {U::Silu, K::F16, -60000, -0.0, 1, kSkip},
      {U::Mish, K::Bf16, -0x1p100, -0.0, 1, kSkip},
      // Huge |x|: sigmoid, softplus and exp overflow internally, the results do not.
      {U::Sigmoid, K::F32, 0x1p100, 1, 1, 0},
      {U::Sigmoid, K::F32, -0x1p100, 0, 1, 0},
      {U::Sigmoid, K::F64, -1e300, 0, 1, 0},
      {U::Softplus, K::F32, 0x1p100, 0x1p100, 1, 1},
      {U::Softplus, K::F64, -1e300, 0, 1, 0},
      {U::Exp, K::F32, 0x1p100, kInf, 1, kInf},
      {U::Exp, K::F32, -0x1p100, 0, 1, 0},
      {U::Silu, K::F32, 0x1p100, 0x1p100, 1, 1},
      {U::Gelu, K::F64, -1e300, -0.0, 1, kSkip},
      {U::Tanhshrink, K::F32, -kInf, -kInf, 1, 1},
      // Domain edges.
      {U::Log, K::F32, 0, -kInf, 1, kInf},
      {U::Log, K::Bf16, -1, kNaN, 1, -1},
      {U::Log1p, K::F64, -1, -kInf, 1, kInf},
      {U::Sqrt, K::F16, -1, kNaN, 1, kNaN},
      {U::Sqrt, K::F32, -0.0, -0.0, 1, -kInf},
      {U::Sqrt, K::F64, 0, 0, 1, kInf},
      {U::Rsqrt, K::F32, 0, kInf, 1, -kInf},
      {U::Rsqrt, K::F64, -0.0, -kInf, 1, kInf},
      {U::Reciprocal, K::Bf16, -0.0, -kInf, 1, -kInf},
      {U::Acosh, K::F32, 0.5, kNaN, 1, kNaN},
      {U::Acosh, K::F64, 1, 0, 1, kInf},
      {U::Atanh, K::F16, 1, kInf, 1, kInf},
      {U::Atanh, K::F32, -1, -kInf, 1, kInf},
      {U::Asin, K::F64, 2, kNaN, 1, kNaN},
      {U::Asin, K::F32, 1, kSkip, 1, kInf},
      {U::Lgamma, K::F32, 0, kInf, 1, -kInf},
      {U::Lgamma, K::F64, -0.0, kInf, 1, kInf},
      {U::Lgamma, K::F64, -1, kInf, 1, kNaN},
      {U::Lgamma, K::F16, 1, 0, 1, kSkip},
      {U::Lgamma, K::Bf16, 2, 0, 1, kSkip},
      {U::Logit, K::F32, 0, -kInf, 1, kInf},
      {U::Logit, K::F64, 1, kInf, 1, kInf},
      {U::Logit, K::F64, -0.5, kNaN, 1, kNaN},
      {U::Logit, K::F32, 0.125, kSkip, 1, 0, {{UnaryParam::Eps, 0.25}}},
      {U::Logit, K::F32, kNaN, kNaN, 1, kNaN, {{UnaryParam::Eps, 0.25}}},
      {U::Logit, K::F64, -0.0, -kInf, 1.5, kInf},  // dy·inf at 0, as PyTorch
      {U::Erfc, K::F64, 30, 0, 1, -0.0},
      {U::Expm1, K::F32, -kInf, -1, 1, 0},
      // Rounding: ties to even, signed zeros, ±inf, NaN.
      {U::Round, K::F32, 2.5, 2, kNaN, 0},
      {U::Round, K::F16, -0.5, -0.0, 1, 0},
      {U::Round, K::F64, 0.5, 0, 1, 0},
      {U::Round, K::Bf16, 3.5, 4, 1, 0},
      {U::Floor, K::F64, -0.5, -1, 1, 0},
      {U::Ceil, K::F32, -0.5, -0.0, 1, 0},
      {U::Trunc, K::Bf16, -0.75, -0.0, 1, 0},
      {U::Frac, K::F32, kInf, kNaN, 1.5, 1.5},
      {U::Frac, K::F64, -2.5, -0.5, -3, -3},
      {U::Frac, K::F16, -0.0, 0, 1, 1},
      {U::Sign, K::F32, kNaN, 0, 1, 0},
      {U::Sign, K::F64, -0.0, 0, 1, 0},
      {U::Sign, K::Bf16, -3, -1, kInf, 0},
      {U::Abs, K::F32, -0.0, 0, 1.25, 0},
      {U::Abs, K::F64, kNaN, kNaN, 1.25, 0},
      {U::Neg, K::F16, 0, -0.0, 2, -2},
      // Activations at kinks and NaN (PyTorch's scalar kernels).
      {U::Relu, K::F32, -0.0, 0, 1.5, 0},  // relu(-0) = +0, documented
      {U::Relu, K::F64, kNaN, kNaN, 1.5, 1.5},
      {U::Relu, K::Bf16, 0, 0, 1.5, 0},
      {U::Relu6, K::F32, -0.0, -0.0, 1.5, 0},
      {U::Relu6, K::F64, 6, 6, 1.5, 0},
      {U::Relu6, K::F16, kNaN, kNaN, 1.5, 1.5},
      {U::Hardtanh, K::F64, -1, -1, 1.5, 0},
      {U::Hardtanh, K::F32, 1, 1, 1.5, 0},
      {U::Hardtanh, K::F32, -0.0, -0.0, 1.5, 1.5},
      {U::Hardtanh, K::F64, kNaN, kNaN, 1.5, 1.5},
      {U::LeakyRelu, K::F64, 0, 0, 1, 0.01},
      {U::LeakyRelu, K::F32, -0.0, -0.0, 2, kSkip},
      {U::LeakyRelu, K::F64, kNaN, kNaN, 1, 0.01},
      {U::Hardshrink, K::F64, 0.5, 0, 1.5, 0},
      {U::Hardshrink, K::F32, -0.5, 0, 1.5, 0},
      {U::Hardshrink, K::F32, kNaN, kNaN, 1.5, 1.5},
      {U::Softshrink, K::F64, 0.5, 0, 1.5, 0},
      {U::Softshrink, K::F32, kNaN, 0, 1.5, 1.5},
      {U::Threshold, K::F32, 1, -2, 1.5, 0, {{UnaryParam::Threshold, 1}, {UnaryParam::Value, -2}}},
      {U::Threshold, K::F32, kNaN, kNaN, 1.5, 1.5, {{UnaryParam::Threshold, 1}, {UnaryParam::Value, -2}}},
      {U::Hardswish, K::F64, -3, -0.0, 1, -0.5},
      {U::Hardswish, K::F32, 3, 3, 1, 1.5},
      {U::Hardswish, K::F16, -kInf, kNaN, 1, 0},
      {U::Hardsigmoid, K::F64, 3, 1, 1, 0},
      {U::Hardsigmoid, K::F32, -3, 0, 1, 0},
      {U::Hardsigmoid, K::F32, kNaN, kNaN, 1, 0},
      {U::Elu, K::F64, 0, 0, 1.5, 1.5},
      {U::Elu, K::F32, kNaN, kNaN, 1.5, 1.5},
      {U::Selu, K::F64, kInf, kInf, 1, kSkip},
      {U::Celu, K::F64, -kInf, -2, 1, 0, {{UnaryParam::Alpha, 2}}},
      {U::Softsign, K::F32, kInf, kNaN, 1, 0},  // forward as PyTorch; backward 0 (documented)
      {U::Softplus, K::F64, 800, 800, 1, 1, {{UnaryParam::Threshold, 1000}}},  // no overflow (PyTorch: inf)
      {U::Gelu, K::F32, -kInf, kNaN, 1, kNaN},
      {U::Silu, K::F32, -kInf, kNaN, 1, kNaN},
      {U::Mish, K::F64, kInf, kInf, 1, kNaN},
  };
  return v;
}

class UnarySpecialValues : public ::testing::TestWithParam<DeviceKind> {};

bool special_equal(double got, double want) {
  if (want == kSkip) return true;
  if (std::isnan(want)) return std::isnan(got);
  return got == want && std::signbit(got) == std::signbit(want);
}

TEST_P(UnarySpecialValues, HandComputed) {
  BARACUDA_TEST_STREAM(stream, GetParam());
  const Shape s{3};
  for (const SpecialCase& c : special_cases()) {
    SCOPED_TRACE(std::string(to_string(c.op)) + " " + std::string(to_string(c.kind)) + " x=" + std::to_string(c.x));
    UnaryDescriptor d = UnaryDescriptor().with_kind(c.op).with_element(c.kind).with_shape(s);
    for (const auto& [p, value] : c.params) d.with_parameter(p, value);
    auto fwd = dynamic::UnaryPlan::select(stream, d);
    BARACUDA_SKIP_IF_NO_CUDA_KERNELS(fwd, GetParam());
    ASSERT_TRUE(fwd) << fwd.error().to_string();
    auto bwd = dynamic::UnaryBackwardPlan::select(stream, d);
    ASSERT_TRUE(bwd) << bwd.error().to_string();
    const int w = element_bytes(c.kind);
    std::vector<uint8_t> xb(3 * w), dyb(3 * w);
    for (int i = 0; i < 3; ++i) {
      ASSERT_TRUE(encode_exact(c.kind, c.x, &xb[i * w]));
      ASSERT_TRUE(encode_exact(c.kind, c.dy, &dyb[i * w]));
    }
    auto tx = make_device_tensor(stream, c.kind, s, dense_layout(s), xb);
    auto ty = make_device_tensor(stream, c.kind, s, dense_layout(s), sentinel_storage(c.kind, 3));
    auto tdy = make_device_tensor(stream, c.kind, s, dense_layout(s), dyb);
    auto tdx = make_device_tensor(stream, c.kind, s, dense_layout(s), sentinel_storage(c.kind, 3));
    ASSERT_TRUE(tx && ty && tdy && tdx);
    ASSERT_TRUE(fwd->run(stream, {}, {tx->view, ty->view}));
    const ConstDynTensor saved = bwd->saved_operand() == UnarySaved::Output ? ty->view : tx->view;
    ASSERT_TRUE(bwd->run(stream, {}, {tdy->view, saved, tdx->view}));
    const std::vector<uint8_t> y = download(*ty), dx = download(*tdx);
    for (int i = 0; i < 3; ++i) {
      EXPECT_TRUE(special_equal(decode_value(c.kind, &y[i * w]), c.y))
          << "forward: " << describe(c.kind, &y[i * w]) << ", expected " << c.y;
      EXPECT_TRUE(special_equal(decode_value(c.kind, &dx[i * w]), c.dx))
          << "backward: " << describe(c.kind, &dx[i * w]) << ", expected " << c.dx;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, UnarySpecialValues, ::testing::ValuesIn(kTestDevices),
                         [](const auto& info) { return std::string(to_string(info.param)); });

}  // namespace
}  // namespace baracuda::test
