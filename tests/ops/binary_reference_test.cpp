// The binary plans against independent values: PyTorch's golden data, finite differences, hand values.
// - BinaryGolden: PyTorch's results (tests/data/binary_golden.json, gen_binary_golden.py): forward values
//   and comparisons for every kind, autograd gradients in f32 and f64, special values included.
// - BinaryGradCheck: backward vs central finite differences of the forward, in f64, at smooth points.
// - BinaryValues: hand-computed special values (integer division by zero, MIN % -1, wrap-around, signed
//   zeros, pow's and remainder's edge cases, NaN in comparisons).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "binary_test_support.hpp"
#include "support/golden.hpp"

namespace baracuda::test {
namespace {

// ---------------------------------------------------------------------------------------------------
// Golden data from PyTorch (tests/data/gen_binary_golden.py)
// ---------------------------------------------------------------------------------------------------

/// The rows of one op in one section: columns of element bytes (forward/compare: a, b, out; backward:
/// dy, a, b, da, db).
struct GoldenGroup {
  std::string section;  // "forward", "compare", "backward"
  ElementKind kind;
  std::string op;
  std::vector<std::vector<uint8_t>> cols;
  int64_t n = 0;
};

std::vector<GoldenGroup> golden_groups(std::string* error) {
  return load_golden_as<GoldenGroup>("binary", error, [&](const GoldenCase& c) {
    GoldenGroup g{c.param<std::string>("section"), ElementKind::F32, c.param<std::string>("op"), {}, 0};
    if (!parse_element_kind(c.param<std::string>("kind"), &g.kind)) *error = "bad case " + c.name;
    const bool backward = g.section == "backward";
    for (const char* name : backward ? std::vector<const char*>{"dy", "a", "b", "da", "db"}
                                     : std::vector<const char*>{"a", "b", "out"})
      g.cols.push_back(c.tensor(name).bytes());
    g.n = c.tensor("a").numel();
    return g;
  });
}

class BinaryGolden : public ::testing::TestWithParam<DeviceKind> {};

TEST_P(BinaryGolden, MatchesPyTorch) {
  BARACUDA_TEST_STREAM(stream, GetParam());
  std::string error;
  const std::vector<GoldenGroup> groups = golden_groups(&error);
  ASSERT_TRUE(error.empty()) << error;
  std::map<std::string, int64_t> checked;
  for (const GoldenGroup& g : groups) {
    SCOPED_TRACE(g.section + " " + g.op + " " + std::string(to_string(g.kind)));
    const OpEntry& e = entry_named(g.op);
    const Shape shape{g.n};
    if (g.section == "backward") {
      auto sel = select_backward(stream, e, g.kind, shape, shape);
      BARACUDA_SKIP_IF_NO_CUDA_KERNELS(sel, GetParam());
      ASSERT_TRUE(sel) << sel.error().to_string();
      auto dy = dense_tensor(stream, g.kind, shape, g.cols[0]);
      auto a = dense_tensor(stream, g.kind, shape, g.cols[1]);
      auto b = dense_tensor(stream, g.kind, shape, g.cols[2]);
      auto da = dense_tensor(stream, g.kind, shape, sentinel_storage(g.kind, g.n));
      auto db = dense_tensor(stream, g.kind, shape, sentinel_storage(g.kind, g.n));
      ASSERT_TRUE(dy && a && b && da && db);
      ASSERT_TRUE(sel->run(stream, dy->view, a->view, b->view, da->view, db->view));
      const Tolerance tol = resolve(e.grad_tol, g.kind);
      EXPECT_TRUE(close_elements(g.kind, download(*da), values_of(g.kind, g.cols[3]), tol)) << "da";
      EXPECT_TRUE(close_elements(g.kind, download(*db), values_of(g.kind, g.cols[4]), tol)) << "db";
    } else {
      auto sel = select_forward(stream, e, g.kind, shape, shape);
      BARACUDA_SKIP_IF_NO_CUDA_KERNELS(sel, GetParam());
      ASSERT_TRUE(sel) << sel.error().to_string();
      const ElementKind out_k = e.is_compare ? ElementKind::Bool : g.kind;
      auto a = dense_tensor(stream, g.kind, shape, g.cols[0]);
      auto b = dense_tensor(stream, g.kind, shape, g.cols[1]);
      auto out = dense_tensor(stream, out_k, shape, sentinel_storage(out_k, g.n));
      ASSERT_TRUE(a && b && out);
      ASSERT_TRUE(sel->run(stream, a->view, b->view, out->view));
      // Exactly PyTorch's bits (NaN = any NaN, signed zeros included) for correctly rounded ops, integers
      // and comparisons; libm-style ops (pow, atan2, hypot) within the tolerance.
      EXPECT_TRUE(matches_reference(out_k, e.bitwise, resolve(e.tol, g.kind), download(*out), g.cols[2]));
    }
    checked[g.section] += g.n;
  }
  EXPECT_GT(checked["forward"], 10000);
  EXPECT_GT(checked["compare"], 5000);
  EXPECT_GT(checked["backward"], 4000);
}

INSTANTIATE_TEST_SUITE_P(Devices, BinaryGolden, ::testing::ValuesIn(kTestDevices),
                         [](const auto& info) { return std::string(to_string(info.param)); });

// ---------------------------------------------------------------------------------------------------
// Gradients against central finite differences (f64, smooth points)
// ---------------------------------------------------------------------------------------------------

/// Points (a, b) where op is smooth: away from kinks, poles and the discontinuities of fmod/remainder.
bool smooth_at(BinaryOp op, double a, double b) {
  switch (op) {
    case BinaryOp::Div:
      return std::fabs(b) > 0.5;
    case BinaryOp::Pow:
      return a > 0.25;
    case BinaryOp::Maximum:
    case BinaryOp::Minimum:
      return std::fabs(a - b) > 0.1;
    case BinaryOp::Atan2:
    case BinaryOp::Hypot:
      return std::hypot(a, b) > 0.5;
    case BinaryOp::Fmod:
    case BinaryOp::Remainder: {
      const double q = a / b, frac = q - std::floor(q);
      return std::fabs(b) > 0.5 && frac > 0.1 && frac < 0.9;
    }
    case BinaryOp::Copysign:
      return std::fabs(a) > 0.1 && std::fabs(b) > 0.1;
    default:
      return true;
  }
}

class BinaryGradCheck : public ::testing::TestWithParam<DeviceKind> {};

TEST_P(BinaryGradCheck, MatchesFiniteDifferencesInF64) {
  BARACUDA_TEST_STREAM(stream, GetParam());
  const ElementKind k = ElementKind::F64;
  constexpr int64_t n = 64;
  const Shape shape{n};
  for (const OpEntry& e : binary_catalog()) {
    if (!e.has_backward) continue;
    SCOPED_TRACE(e.name);
    Rng rng(seed_of(e.name));
    std::vector<double> a, b, dy;
    while (static_cast<int64_t>(a.size()) < n) {
      const double x = rng.uniform(-3, 3), y = rng.uniform(-3, 3);
      if (!smooth_at(e.op, x, y)) continue;
      a.push_back(x), b.push_back(y), dy.push_back(rng.uniform(-2, 2));
    }
    auto bytes = [](const std::vector<double>& v) {
      std::vector<uint8_t> r(v.size() * 8);
      std::memcpy(r.data(), v.data(), r.size());
      return r;
    };
    auto fwd = [&](const std::vector<double>& x, const std::vector<double>& y) {
      std::vector<double> r(n);
      const std::vector<uint8_t> out = host_forward(e, k, k, shape, shape, bytes(x), bytes(y));
      std::memcpy(r.data(), out.data(), out.size());
      return r;
    };
    auto bwd = select_backward(stream, e, k, shape, shape);
    BARACUDA_SKIP_IF_NO_CUDA_KERNELS(bwd, GetParam());
    ASSERT_TRUE(bwd) << bwd.error().to_string();
    auto tdy = dense_tensor(stream, k, shape, bytes(dy));
    auto ta = dense_tensor(stream, k, shape, bytes(a));
    auto tb = dense_tensor(stream, k, shape, bytes(b));
    auto tda = dense_tensor(stream, k, shape, sentinel_storage(k, n));
    auto tdb = dense_tensor(stream, k, shape, sentinel_storage(k, n));
    ASSERT_TRUE(tdy && ta && tb && tda && tdb);
    ASSERT_TRUE(bwd->run(stream, tdy->view, ta->view, tb->view, tda->view, tdb->view));
    std::vector<double> da(n), db(n);
    std::memcpy(da.data(), download(*tda).data(), n * 8);
    std::memcpy(db.data(), download(*tdb).data(), n * 8);

    const double h = 1e-6;
    std::vector<double> ap = a, am = a, bp = b, bm = b;
    for (int64_t i = 0; i < n; ++i) ap[i] += h, am[i] -= h, bp[i] += h, bm[i] -= h;
    const std::vector<double> fap = fwd(ap, b), fam = fwd(am, b), fbp = fwd(a, bp), fbm = fwd(a, bm);
    for (int64_t i = 0; i < n; ++i) {
      const double fd_a = dy[i] * (fap[i] - fam[i]) / (2 * h);
      const double fd_b = dy[i] * (fbp[i] - fbm[i]) / (2 * h);
      EXPECT_NEAR(da[i], fd_a, 1e-6 * (1 + std::fabs(fd_a))) << "da at a=" << a[i] << " b=" << b[i];
      EXPECT_NEAR(db[i], fd_b, 1e-6 * (1 + std::fabs(fd_b))) << "db at a=" << a[i] << " b=" << b[i];
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, BinaryGradCheck, ::testing::ValuesIn(kTestDevices),
                         [](const auto& info) { return std::string(to_string(info.param)); });

// ---------------------------------------------------------------------------------------------------
// Values worked out by hand
// ---------------------------------------------------------------------------------------------------

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

struct HandCase {
  std::string op;
  ElementKind kind;
  double a, b, want;  // integers: exact values up to 2^53; kNaN: any NaN; signed zeros must match
};

/// Integers that double cannot hold (s64 extremes) go as raw bits.
struct HandBitsCase {
  std::string op;
  ElementKind kind;
  uint64_t a, b, want;
};

std::vector<HandCase> hand_cases() {
  using K = ElementKind;
  const double pi = 3.14159265358979323846;
  return {
      // Integer division by zero is 0 (baracuda's choice; PyTorch raises on the CPU), and MIN % -1 = 0.
      {"fmod", K::S32, 7, 0, 0},        {"remainder", K::S32, -7, 0, 0},   {"fmod", K::U8, 200, 0, 0},
      {"remainder", K::S8, -128, 0, 0}, {"fmod", K::S8, -128, -1, 0},      {"remainder", K::S8, -128, -1, 0},
      {"fmod", K::S32, -2147483648.0, -1, 0}, {"remainder", K::S32, -2147483648.0, -1, 0},
      // fmod has the dividend's sign, remainder the divisor's.
      {"fmod", K::S8, -7, 3, -1},       {"remainder", K::S8, -7, 3, 2},     {"fmod", K::S32, 7, -3, 1},
      {"remainder", K::S32, 7, -3, -2}, {"remainder", K::S64, -9, -4, -1},  {"fmod", K::U8, 255, 7, 3},
      // Wrap-around.
      {"add", K::S8, 127, 1, -128},     {"sub", K::S8, -128, 1, 127},       {"mul", K::U8, 200, 2, 144},
      {"mul", K::S8, -128, -1, -128},   {"add", K::U8, 255, 1, 0},          {"sub", K::U8, 0, 1, 255},
      {"add", K::S32, 2147483647.0, 1, -2147483648.0}, {"mul", K::S32, 65536, 65536, 0},
      {"maximum", K::S8, -128, 127, 127}, {"minimum", K::U8, 0, 255, 0},
      // Floats: division by zero, signed zeros, NaN.
      {"div", K::F32, 1, 0, kInf},      {"div", K::F32, -1, 0, -kInf},      {"div", K::F64, 0, 0, kNaN},
      {"div", K::F16, 1, -0.0, -kInf},  {"div", K::Bf16, 0, 5, 0},
      {"maximum", K::F32, -0.0, 0.0, 0.0}, {"maximum", K::F32, 0.0, -0.0, 0.0}, {"minimum", K::F64, 0.0, -0.0, -0.0},
      {"minimum", K::F16, -0.0, 0.0, -0.0}, {"maximum", K::Bf16, kNaN, 1, kNaN}, {"minimum", K::F64, 1, kNaN, kNaN},
      {"maximum", K::F32, -kInf, kNaN, kNaN}, {"maximum", K::F64, 3, -kInf, 3},
      // pow: pow(x, 0) = 1 even for NaN; 0^negative = inf; negative base, non-integer exponent: NaN.
      {"pow", K::F32, 0, 0, 1},         {"pow", K::F64, kNaN, 0, 1},        {"pow", K::F16, 0, -1, kInf},
      {"pow", K::F64, -8, 1.0 / 3, kNaN}, {"pow", K::F32, -2, 3, -8},       {"pow", K::Bf16, 1, kNaN, 1},
      {"pow", K::F64, -0.0, -1, -kInf}, {"pow", K::F32, 2, -kInf, 0},
      // fmod/remainder: signs, zeros and infinities as PyTorch.
      {"fmod", K::F32, -4, 2, -0.0},    {"remainder", K::F32, -4, 2, -0.0}, {"remainder", K::F64, -1, kInf, kInf},
      {"remainder", K::F64, 1, -kInf, -kInf}, {"fmod", K::F64, -1, kInf, -1}, {"fmod", K::F32, 5, 0, kNaN},
      {"remainder", K::F16, 5, 0, kNaN}, {"remainder", K::F32, 5, -3, -1},  {"fmod", K::Bf16, -5, 3, -2},
      {"remainder", K::F64, kInf, 2, kNaN},
      // copysign, hypot, atan2 at their special points.
      {"copysign", K::F32, 2, -0.0, -2}, {"copysign", K::F16, -3, kNaN, 3}, {"copysign", K::F64, 0, -1, -0.0},
      {"hypot", K::F32, kInf, kNaN, kInf}, {"hypot", K::F64, kNaN, -kInf, kInf}, {"hypot", K::F32, 3, 4, 5},
      {"atan2", K::F64, 0, -0.0, pi},   {"atan2", K::F64, -0.0, -0.0, -pi}, {"atan2", K::F64, 0, 0, 0},
      {"atan2", K::F64, 1, 0, pi / 2},  {"add", K::F32, kInf, -kInf, kNaN}, {"mul", K::F64, 0, kInf, kNaN},
      {"sub", K::F32, 0, 0, 0},         {"add", K::F64, -0.0, -0.0, -0.0},
      {"add", K::F16, 65504, 15, 65504}, {"add", K::F16, 65504, 16, kInf}, {"mul", K::Bf16, 0x1p127, 2, kInf},
      // Comparisons: NaN compares false except ne; -0 == +0.
      {"eq", K::F32, kNaN, kNaN, 0},    {"ne", K::F32, kNaN, kNaN, 1},      {"lt", K::F64, kNaN, 1, 0},
      {"ge", K::F16, 1, kNaN, 0},       {"eq", K::F64, -0.0, 0.0, 1},       {"le", K::Bf16, -0.0, 0.0, 1},
      {"gt", K::S8, -128, 127, 0},      {"lt", K::U8, 0, 255, 1},           {"ge", K::S32, 5, 5, 1},
      {"ne", K::S64, -1, -1, 0},
  };
}

std::vector<HandBitsCase> hand_bits_cases() {
  using K = ElementKind;
  const uint64_t min64 = uint64_t{1} << 63, max64 = min64 - 1, m1 = ~uint64_t{0};
  return {
      {"fmod", K::S64, min64, m1, 0},        {"remainder", K::S64, min64, m1, 0},
      {"remainder", K::S64, min64, 0, 0},    {"add", K::S64, max64, 1, min64},
      {"sub", K::S64, min64, 1, max64},      {"mul", K::S64, min64, m1, min64},
      {"mul", K::S64, uint64_t{1} << 32, uint64_t{1} << 32, 0},
      {"maximum", K::S64, min64, max64, max64}, {"lt", K::S64, min64, max64, 1},
  };
}

class BinaryValues : public ::testing::TestWithParam<DeviceKind> {};

/// Runs op on n copies of (a, b) given as raw bits; returns the n output bit patterns.
std::vector<uint8_t> run_filled(const Stream& stream, const OpEntry& e, ElementKind k, uint64_t a, uint64_t b,
                                int64_t n) {
  const Shape shape{n};
  auto sel = select_forward(stream, e, k, shape, shape);
  EXPECT_TRUE(sel) << sel.error().to_string();
  if (!sel) return {};
  const ElementKind out_k = e.is_compare ? ElementKind::Bool : k;
  auto ta = dense_tensor(stream, k, shape, filled(k, n, a));
  auto tb = dense_tensor(stream, k, shape, filled(k, n, b));
  auto to = dense_tensor(stream, out_k, shape, sentinel_storage(out_k, n));
  EXPECT_TRUE(ta && tb && to);
  if (!ta || !tb || !to) return {};
  EXPECT_TRUE(sel->run(stream, ta->view, tb->view, to->view));
  return download(*to);
}

TEST_P(BinaryValues, HandComputed) {
  BARACUDA_TEST_STREAM(stream, GetParam());
  {
    auto probe = dynamic::BinaryPlan::select(stream, BinaryDescriptor().with_shape(Shape{1}));
    BARACUDA_SKIP_IF_NO_CUDA_KERNELS(probe, GetParam());
  }
  constexpr int64_t n = 37;  // a vector's worth of every width, and a tail
  for (const HandCase& h : hand_cases()) {
    SCOPED_TRACE(h.op + " " + std::string(to_string(h.kind)) + " a=" + std::to_string(h.a) +
                 " b=" + std::to_string(h.b));
    const OpEntry& e = entry_named(h.op);
    uint8_t abuf[8] = {}, bbuf[8] = {};
    ASSERT_TRUE(encode_exact(h.kind, h.a, abuf) && encode_exact(h.kind, h.b, bbuf)) << "inputs not exact";
    const std::vector<uint8_t> got = run_filled(stream, e, h.kind, load_bits(h.kind, abuf), load_bits(h.kind, bbuf), n);
    const ElementKind out_k = e.is_compare ? ElementKind::Bool : h.kind;
    EXPECT_TRUE(close_elements(out_k, got, std::vector<double>(n, h.want), tolerances::exact));
  }
  for (const HandBitsCase& h : hand_bits_cases()) {
    SCOPED_TRACE(h.op + " " + std::string(to_string(h.kind)));
    const OpEntry& e = entry_named(h.op);
    const ElementKind out_k = e.is_compare ? ElementKind::Bool : h.kind;
    EXPECT_TRUE(same_elements(out_k, run_filled(stream, e, h.kind, h.a, h.b, n), filled(out_k, n, h.want), n));
  }
}

TEST_P(BinaryValues, BackwardSpecialPoints) {
  BARACUDA_TEST_STREAM(stream, GetParam());
  struct G {
    std::string op;
    double dy, a, b, da, db;  // kNaN: any NaN; zeros compare by value
  };
  const G cases[] = {
      {"pow", 1, 0, 0, 0, 0},        {"pow", 1, 0, 2, 0, 0},          {"pow", 1, 2, 0, 0, std::log(2.0)},
      {"pow", 1, -2, 2, -4, kNaN},   {"pow", 1, 0, -1, -kInf, -kInf}, {"pow", 2, 4, 0.5, 0.5, 2 * 2 * std::log(4.0)},
      {"maximum", 1, 1, 1, 0.5, 0.5}, {"maximum", 1, kNaN, 1, 1, 1},  {"maximum", 1, 3, 2, 1, 0},
      {"minimum", 1, 3, 2, 0, 1},    {"minimum", 2, -0.0, 0, 1, 1},   {"copysign", 1, 0, -1, 0, 0},
      {"copysign", 1, -2, 1, -1, 0}, {"copysign", 1, kInf, -1, kNaN, 0}, {"hypot", 1, 0, 0, kNaN, kNaN},
      {"hypot", 1, 3, 4, 0.6, 0.8},  {"atan2", 1, 0, 0, kNaN, kNaN},  {"atan2", 1, 1, 1, 0.5, -0.5},
      {"div", 1, 1, 0, kInf, -kInf}, {"div", 1, 1, 2, 0.5, -0.25},    {"fmod", 1, -7, 2, 1, 3},
      {"remainder", 1, -7, 2, 1, 4}, {"remainder", 1, 5, 0, 1, -kInf}, {"remainder", 1, 1, kInf, 1, 0},
      {"fmod", 1, 1, kInf, 1, 0},    {"sub", 3, 1, 2, 3, -3},         {"mul", 3, 2, 5, 15, 6},
  };
  for (ElementKind k : {ElementKind::F32, ElementKind::F64}) {
    for (const G& g : cases) {
      SCOPED_TRACE(g.op + " " + std::string(to_string(k)) + " a=" + std::to_string(g.a) + " b=" + std::to_string(g.b));
      const Shape shape{5};
      auto sel = select_backward(stream, entry_named(g.op), k, shape, shape);
      BARACUDA_SKIP_IF_NO_CUDA_KERNELS(sel, GetParam());
      ASSERT_TRUE(sel) << sel.error().to_string();
      uint8_t x[8], y[8], d[8];
      ASSERT_TRUE(encode_exact(k, g.a, x) && encode_exact(k, g.b, y) && encode_exact(k, g.dy, d));
      auto dy = dense_tensor(stream, k, shape, filled(k, 5, load_bits(k, d)));
      auto a = dense_tensor(stream, k, shape, filled(k, 5, load_bits(k, x)));
      auto b = dense_tensor(stream, k, shape, filled(k, 5, load_bits(k, y)));
      auto da = dense_tensor(stream, k, shape, sentinel_storage(k, 5));
      auto db = dense_tensor(stream, k, shape, sentinel_storage(k, 5));
      ASSERT_TRUE(dy && a && b && da && db);
      ASSERT_TRUE(sel->run(stream, dy->view, a->view, b->view, da->view, db->view));
      const Tolerance tol = default_tolerance(k);
      EXPECT_TRUE(close_elements(k, download(*da), std::vector<double>(5, g.da), tol)) << "da";
      EXPECT_TRUE(close_elements(k, download(*db), std::vector<double>(5, g.db), tol)) << "db";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, BinaryValues, ::testing::ValuesIn(kTestDevices),
                         [](const auto& info) { return std::string(to_string(info.param)); });

}  // namespace
}  // namespace baracuda::test
