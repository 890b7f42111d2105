// LinearPlan and LinearBackwardPlan on host and sim (and cuda, skipped without a GPU) against the test's own f64
// evaluation (linear_test_support.hpp): ragged shapes, kinds, leading batch dimensions, with and without bias,
// every subset of the gradients, strided and column-major x and dy, the fused activation with its saved
// pre-activation, empty problems, bit-stable reruns, the SKUs, and the typed wrappers.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "ops/linear_test_support.hpp"
#include "support/devices.hpp"

namespace baracuda::test::linear {
namespace {

constexpr MatrixLayout R = MatrixLayout::RowMajor, C = MatrixLayout::ColMajor;
constexpr ElementKind F16 = ElementKind::F16, Bf16 = ElementKind::Bf16, F32 = ElementKind::F32, F64 = ElementKind::F64;

struct Mnk {
  int64_t m, n, k;
};

std::string name(const LinearDescriptor& d, DeviceKind dev) {
  return std::string(to_string(dev)) + " " + std::string(to_string(d.input)) + "->" + std::string(to_string(d.output)) +
         " " + std::to_string(d.rows) + "x" + std::to_string(d.out_features) + "x" + std::to_string(d.in_features);
}

/// Runs forward and backward of `d` over `lead` on `dev` and checks every output; returns the elements checked.
int64_t run_and_check(DeviceKind dev, const LinearDescriptor& d, std::vector<int64_t> lead, uint64_t seed,
                      bool forward = true, bool backward = true) {
  std::string why_not;
  const auto st = stream_for(dev, &why_not);
  if (!st) return 0;
  const Layer L(d, std::move(lead), seed);
  auto o = run_layer(*st, L, forward, backward);
  if (dev == DeviceKind::Cuda && !o && o.error().message.find("without CUDA kernels") != std::string::npos) return 0;
  EXPECT_TRUE(o) << name(d, dev) << ": " << o.error().to_string();
  if (!o) return 0;
  return check_layer(name(d, dev), L, *o, unit_on(dev, d.input), forward, backward);
}

LinearDescriptor layer(Mnk s, ElementKind in, ElementKind out) {
  return LinearDescriptor{}.with_shape(s.m, s.k, s.n).with_kinds(in, out).with_gradients(true, true, true);
}

TEST(Linear, RaggedShapesAndKindsMatchF64) {
  const std::pair<ElementKind, ElementKind> kinds[] = {{F16, F16},  {Bf16, Bf16}, {F16, F32},
                                                       {Bf16, F32}, {F32, F32},   {F64, F64}};
  int64_t checked = 0;
  for (DeviceKind dev : kTestDevices)
    for (const auto& [in, out] : kinds)
      for (Mnk s : {Mnk{1, 1, 16}, Mnk{17, 33, 48}})
        for (bool bias : {false, true}) {
          checked += run_and_check(dev, layer(s, in, out).with_bias(bias), {s.m}, 11 + s.m);
          if (HasFailure()) return;
        }
  EXPECT_GT(checked, 0);
}

TEST(Linear, LargerShapeMatchesF64) {
  for (DeviceKind dev : kTestDevices)
    for (const auto& [in, out] : {std::pair{F16, F16}, std::pair{F32, F32}}) {
      run_and_check(dev, layer({129, 65, 96}, in, out).with_bias(), {129}, 5);
      if (HasFailure()) return;
    }
}

TEST(Linear, LeadingBatchDimensionsAreRows) {
  // x [3, 1, 5, K]: 15 rows; a rank-1 x [K] is one row.
  for (DeviceKind dev : {DeviceKind::Host, DeviceKind::Sim}) {
    EXPECT_GT(run_and_check(dev, layer({15, 33, 48}, F32, F32).with_bias(), {3, 1, 5}, 3), 0);
    EXPECT_GT(run_and_check(dev, layer({1, 9, 16}, F16, F32).with_bias(), {}, 4), 0);
  }
}

TEST(Linear, EachGradientAlone) {
  for (DeviceKind dev : {DeviceKind::Host, DeviceKind::Sim})
    for (int mask = 1; mask < 8; ++mask) {
      const LinearDescriptor d = layer({17, 33, 48}, Bf16, F32).with_gradients(mask & 1, mask & 2, mask & 4);
      EXPECT_GT(run_and_check(dev, d, {17}, 100 + mask, false, true), 0) << "gradients mask " << mask;
      if (HasFailure()) return;
    }
}

TEST(Linear, StridedAndColumnMajorOperands) {
  // x and dy as column slices of wider rows (ld > features), or transposed tensors (column-major); W
  // column-major; y, dx and dW with padded rows.
  for (DeviceKind dev : {DeviceKind::Host, DeviceKind::Sim})
    for (MatrixLayout lx : {R, C})
      for (MatrixLayout ldy : {R, C}) {
        LinearDescriptor d = layer({17, 33, 48}, F16, F16).with_bias();
        d.with_x(lx, lx == R ? 48 + 5 : 17 + 3).with_dy(ldy, ldy == R ? 33 + 7 : 17 + 1);
        d.with_w(lx == R ? C : R, lx == R ? 33 + 2 : 48 + 2).with_ld_y(40).with_ld_dx(50).with_ld_dw(49);
        // A column-major x or dy with leading dimensions flattens too: x [17, K] only then (rank 2).
        EXPECT_GT(run_and_check(dev, d, {17}, 7 + static_cast<int>(lx) * 2 + static_cast<int>(ldy)), 0);
        if (HasFailure()) return;
      }
  // Row-major padded rows under leading dimensions: [3, 5, K] with a row stride of K + 4.
  for (DeviceKind dev : {DeviceKind::Host, DeviceKind::Sim}) {
    LinearDescriptor d = layer({15, 20, 24}, F32, F32).with_x(R, 28).with_dy(R, 23);
    EXPECT_GT(run_and_check(dev, d, {3, 5}, 21), 0);
  }
}

TEST(Linear, ActivationWithSavedPreactivation) {
  for (DeviceKind dev : {DeviceKind::Host, DeviceKind::Sim})
    for (LinearActivation a : {LinearActivation::Relu, LinearActivation::GeluTanh, LinearActivation::Silu}) {
      const LinearDescriptor d = layer({17, 33, 48}, F32, F32).with_bias().with_activation(a).with_preactivation();
      EXPECT_GT(run_and_check(dev, d, {17}, 31, true, false), 0) << to_string(a);
    }
}

/// The derivative of each activation, in f64 from its definition (PyTorch's F.relu, F.silu, F.gelu).
double act_slope(LinearActivation a, double z) {
  switch (a) {
    case LinearActivation::Relu:
      return z > 0 ? 1.0 : 0.0;
    case LinearActivation::Silu: {
      const double s = 1.0 / (1.0 + std::exp(-z));
      return s * (1.0 + z * (1.0 - s));
    }
    case LinearActivation::GeluErf:
      return 0.5 * std::erfc(-z / std::sqrt(2.0)) + z * std::exp(-0.5 * z * z) / std::sqrt(2.0 * M_PI);
    case LinearActivation::GeluTanh: {
      const double k = std::sqrt(2.0 / M_PI), t = std::tanh(k * (z + 0.044715 * z * z * z));
      return 0.5 * (1.0 + t) + 0.5 * z * (1.0 - t * t) * k * (1.0 + 3.0 * 0.044715 * z * z);
    }
    default:
      return 1.0;
  }
}

TEST(Linear, ActivationBackwardThroughTheSavedPreactivation) {
  // The backward of a forward with an activation: dy is y's gradient, dz = dy·act'(z) from the saved z (the
  // device's, downloaded), then dx, dW and db from dz; each against the f64 evaluation from that z, within the
  // GEMM's bound, dz's rounding to the input kind and the libm terms.
  for (DeviceKind dev : {DeviceKind::Host, DeviceKind::Sim})
    for (ElementKind kind : {F32, Bf16})
      for (LinearActivation a :
           {LinearActivation::Relu, LinearActivation::Silu, LinearActivation::GeluErf, LinearActivation::GeluTanh}) {
        BARACUDA_TEST_STREAM(st, dev);
        const LinearDescriptor d = layer({17, 33, 48}, kind, kind).with_bias().with_activation(a).with_preactivation();
        const Layer L(d, {17}, 40 + static_cast<int>(a));
        auto o = run_layer(st, L, true, true);
        ASSERT_TRUE(o) << o.error().to_string();
        const double u = unit_on(dev, kind), ur = unit(kind) + 32.0 * std::ldexp(1.0, -24);
        auto dz = [&](int64_t r, int64_t n) { return L.DY(r, n) * act_slope(a, get(kind, o->pre, L.pre.at(r, n))); };
        auto expect = [&](double v, double mag, int64_t terms) {
          Expect e = bound(v, mag, terms, u, kind);
          e.tol += ur * mag;
          return e;
        };
        const std::string what = name(d, dev) + " " + std::string(to_string(a));
        check_matrix(what + " dx", L.dx, kind, o->dx, [&](int64_t r, int64_t k) {
          double v = 0, mag = 0;
          for (int64_t n = 0; n < d.out_features; ++n)
            v += dz(r, n) * L.W(n, k), mag += std::fabs(dz(r, n) * L.W(n, k));
          return expect(v, mag, d.out_features);
        });
        check_matrix(what + " dw", L.dw, kind, o->dw, [&](int64_t n, int64_t k) {
          double v = 0, mag = 0;
          for (int64_t r = 0; r < d.rows; ++r) v += dz(r, n) * L.X(r, k), mag += std::fabs(dz(r, n) * L.X(r, k));
          return expect(v, mag, d.rows);
        });
        check_matrix(what + " db", geo({d.out_features}, d.out_features, 1, R, 0), kind, o->db,
                     [&](int64_t n, int64_t) {
                       double v = 0, mag = 0;
                       for (int64_t r = 0; r < d.rows; ++r) v += dz(r, n), mag += std::fabs(dz(r, n));
                       return expect(v, mag, d.rows);
                     });
        if (HasFailure()) return;
        auto p = dynamic::LinearBackwardPlan::select(st, d);
        ASSERT_TRUE(p);
        ASSERT_NE(p->activation_backward(), nullptr);
        EXPECT_EQ(p->workspace_size() % 256, 0u);
        EXPECT_GE(p->workspace_size(), static_cast<size_t>(17 * 33) * bytes_of(kind));
      }
}

TEST(Linear, EmptyProblems) {
  for (DeviceKind dev : {DeviceKind::Host, DeviceKind::Sim}) {
    BARACUDA_TEST_STREAM(st, dev);
    // No rows: the forward writes nothing; dW and db are zeros (sums of nothing).
    const Layer L(layer({0, 5, 7}, F32, F32).with_bias(), {0}, 1);
    auto o = run_layer(st, L, true, true);
    ASSERT_TRUE(o) << o.error().to_string();
    for (uint8_t b : o->y) EXPECT_EQ(b, 0xA5);
    check_layer("no rows", L, *o, unit_on(dev, F32), false, true);
    // No input features: y = bias, dx is empty, db is still written.
    const Layer K0(layer({4, 5, 0}, F32, F32).with_bias(), {4}, 2);
    auto o2 = run_layer(st, K0, true, true);
    ASSERT_TRUE(o2) << o2.error().to_string();
    check_layer("no input features", K0, *o2, unit_on(dev, F32), true, true);
  }
}

TEST(Linear, RerunsAreBitEqual) {
  for (DeviceKind dev : {DeviceKind::Host, DeviceKind::Sim}) {
    BARACUDA_TEST_STREAM(st, dev);
    const Layer L(layer({33, 17, 40}, Bf16, Bf16).with_bias(), {33}, 9);
    auto a = run_layer(st, L, true, true), b = run_layer(st, L, true, true);
    ASSERT_TRUE(a && b);
    EXPECT_EQ(a->y, b->y);
    EXPECT_EQ(a->dx, b->dx);
    EXPECT_EQ(a->dw, b->dw);
    EXPECT_EQ(a->db, b->db);
    auto p = dynamic::LinearBackwardPlan::select(st, L.d);
    ASSERT_TRUE(p);
    EXPECT_TRUE(p->precision_guarantee().deterministic);
    EXPECT_TRUE(p->precision_guarantee().bit_stable_on_same_hardware);
  }
}

TEST(Linear, SkusNameTheGemms) {
  for (DeviceKind dev : {DeviceKind::Host, DeviceKind::Sim}) {
    BARACUDA_TEST_STREAM(st, dev);
    const LinearDescriptor d = layer({17, 33, 48}, F16, F16).with_bias();
    auto f = dynamic::LinearPlan::select(st, d);
    ASSERT_TRUE(f) << f.error().to_string();
    EXPECT_EQ(f->sku().op, "linear");
    EXPECT_EQ(f->sku().backend, backend_of(dev));
    EXPECT_EQ(f->sku().layout, LayoutKind::Rcr);
    EXPECT_EQ(f->sku().epilogue, EpilogueKind::Bias);
    EXPECT_EQ(f->sku().variant, f->gemm().sku().variant);
    if (dev == DeviceKind::Sim) EXPECT_EQ(f->sku().variant, "tc_m16n8k16");
    EXPECT_EQ(f->workspace_size(), 0u);
    auto b = dynamic::LinearBackwardPlan::select(st, d);
    ASSERT_TRUE(b) << b.error().to_string();
    EXPECT_EQ(b->sku().op, "linear_backward");
    ASSERT_NE(b->grad_input_gemm(), nullptr);
    ASSERT_NE(b->grad_weight_gemm(), nullptr);
    EXPECT_EQ(b->grad_input_gemm()->sku().layout, LayoutKind::Rrr);
    EXPECT_EQ(b->grad_weight_gemm()->sku().layout, LayoutKind::Crr);
    EXPECT_TRUE(b->grad_weight_gemm()->descriptor().bias_grad);
    auto db_only = dynamic::LinearBackwardPlan::select(st, LinearDescriptor(d).with_gradients(false, false, true));
    ASSERT_TRUE(db_only) << db_only.error().to_string();
    EXPECT_EQ(db_only->grad_input_gemm(), nullptr);
    EXPECT_EQ(db_only->grad_weight_gemm()->descriptor().n, 0);
  }
}

TEST(Linear, WorkspaceWithinThePreference) {
  // The GemmPlans' workspaces together stay within max_workspace_bytes (on cuda cuBLASLt's algorithms take
  // some; host and sim take none, and a bound of 0 is served there).
  for (DeviceKind dev : kTestDevices) {
    std::string why_not;
    const auto st = stream_for(dev, &why_not);
    if (!st) continue;
    const LinearDescriptor d = layer({512, 256, 384}, F16, F16).with_bias();
    for (size_t cap : {size_t{0}, size_t{1} << 20, SIZE_MAX}) {
      const PlanPreference pref = PlanPreference{}.with_max_workspace_bytes(cap);
      auto f = dynamic::LinearPlan::select(*st, d, pref);
      auto b = dynamic::LinearBackwardPlan::select(*st, d, pref);
      if (dev == DeviceKind::Cuda && !f && f.error().message.find("without CUDA kernels") != std::string::npos) break;
      ASSERT_TRUE(f) << f.error().to_string();
      ASSERT_TRUE(b) << b.error().to_string();
      EXPECT_LE(f->workspace_size(), cap);
      EXPECT_LE(b->workspace_size(), cap);
      EXPECT_EQ(b->workspace_size() % 256, 0u);
      if (dev != DeviceKind::Cuda) EXPECT_EQ(b->workspace_size(), 0u);
    }
  }
}

TEST(Linear, DescriptorHashAndEquality) {
  const LinearDescriptor a = layer({4, 5, 6}, F16, F16);
  LinearDescriptor b = a;
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.hash(), b.hash());
  b.with_ld_dw(9);
  EXPECT_FALSE(a == b);
  EXPECT_NE(a.hash(), b.hash());
}

TEST(Linear, TypedWrappers) {
  const Stream st = Stream::sim();
  const int64_t m = 6, k = 16, n = 5;
  std::vector<float> x(m * k), w(n * k), bias(n), y(m * n, -1.0f), dy(m * n), dx(m * k), dw(n * k), db(n);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 7) % 11) / 8.0f - 0.5f;
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>((i * 5) % 13) / 16.0f - 0.25f;
  for (size_t i = 0; i < dy.size(); ++i) dy[i] = static_cast<float>((i * 3) % 7) / 4.0f - 0.75f;
  for (int64_t j = 0; j < n; ++j) bias[j] = 0.125f * static_cast<float>(j);
  auto up = [&](std::vector<float>& v) { return Buffer::from_host(st, std::span<const float>(v)); };
  auto bx = up(x), bw = up(w), bb = up(bias), by = up(y), bdy = up(dy), bdx = up(dx), bdw = up(dw), bdb = up(db);
  ASSERT_TRUE(bx && bw && bb && by && bdy && bdx && bdw && bdb);
  const LinearDescriptor d =
      LinearDescriptor{}.with_shape(m, k, n).with_kinds(F32, F32).with_bias().with_gradients(true, true, true);
  auto fwd = LinearPlan<float, float>::select(st, d);
  ASSERT_TRUE(fwd) << fwd.error().to_string();
  LinearArgs<float, float> fa{TensorRef<float, 2>::dense(static_cast<const float*>(bx->data()), {m, k}),
                              TensorRef<float, 2>::dense(static_cast<const float*>(bw->data()), {n, k}),
                              TensorRef<float, 1>::dense(static_cast<const float*>(bb->data()), {n}),
                              TensorMut<float, 2>::dense(static_cast<float*>(by->data()), {m, n})};
  ASSERT_TRUE(fwd->run(st, Workspace{}, fa));
  auto bwd = LinearBackwardPlan<float, float>::select(st, d);
  ASSERT_TRUE(bwd) << bwd.error().to_string();
  LinearBackwardArgs<float, float> ba{TensorRef<float, 2>::dense(static_cast<const float*>(bdy->data()), {m, n}),
                                      TensorRef<float, 2>::dense(static_cast<const float*>(bx->data()), {m, k}),
                                      TensorRef<float, 2>::dense(static_cast<const float*>(bw->data()), {n, k}),
                                      {},
                                      TensorMut<float, 2>::dense(static_cast<float*>(bdx->data()), {m, k}),
                                      TensorMut<float, 2>::dense(static_cast<float*>(bdw->data()), {n, k}),
                                      TensorMut<float, 1>::dense(static_cast<float*>(bdb->data()), {n})};
  ASSERT_TRUE(bwd->run(st, Workspace{}, ba));
  ASSERT_TRUE(by->copy_to_host(y.data(), y.size() * 4) && bdb->copy_to_host(db.data(), db.size() * 4));
  ASSERT_TRUE(bdw->copy_to_host(dw.data(), dw.size() * 4) && bdx->copy_to_host(dx.data(), dx.size() * 4));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double ref = bias[j];
      for (int64_t q = 0; q < k; ++q) ref += static_cast<double>(x[i * k + q]) * w[j * k + q];
      EXPECT_NEAR(y[i * n + j], ref, 1e-5) << i << ", " << j;
    }
  for (int64_t j = 0; j < n; ++j) {
    double s = 0;
    for (int64_t i = 0; i < m; ++i) s += dy[i * n + j];
    EXPECT_NEAR(db[j], s, 1e-5);
    for (int64_t q = 0; q < k; ++q) {
      double g = 0;
      for (int64_t i = 0; i < m; ++i) g += static_cast<double>(dy[i * n + j]) * x[i * k + q];
      EXPECT_NEAR(dw[j * k + q], g, 1e-5);
    }
  }
  for (int64_t i = 0; i < m; ++i)
    for (int64_t q = 0; q < k; ++q) {
      double g = 0;
      for (int64_t j = 0; j < n; ++j) g += static_cast<double>(dy[i * n + j]) * w[j * k + q];
      EXPECT_NEAR(dx[i * k + q], g, 1e-5);
    }
  // A typed select with the wrong element type is rejected.
  EXPECT_FALSE((LinearPlan<double, double>::select(st, d)));
  EXPECT_FALSE((LinearBackwardPlan<float, double>::select(st, d)));
}

}  // namespace
}  // namespace baracuda::test::linear
