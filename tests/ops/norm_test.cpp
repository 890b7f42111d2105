// NormPlan and NormBackwardPlan (RMSNorm, LayerNorm): every op × kind × problem (rows for a warp and for a
// block of the row kernels, forward and backward, up to their limits; a few rows over them for the composed
// path, a single row, a transposed input; with and without weight and bias) on sim and cuda against the host
// reference, forward (y, mean, rstd) and backward (dx, dweight, dbias); the host against an explicit f64
// formula and its backward against central finite differences in f64; a row of identical values (variance 0);
// every rejection.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "baracuda/baracuda.hpp"
#include "support/devices.hpp"
#include "support/expect_error.hpp"
#include "support/numeric.hpp"
#include "support/random.hpp"
#include "support/tensor.hpp"

namespace baracuda::test {
namespace {

using K = ElementKind;

std::vector<double> decode(K k, const std::vector<uint8_t>& b, int64_t n) {
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(decode_value(k, &b[static_cast<size_t>(i * element_bytes(k))]));
  return v;
}

std::vector<uint8_t> encode(K k, const std::vector<double>& v) {
  std::vector<uint8_t> b(static_cast<size_t>(storage_bytes(k, static_cast<int64_t>(v.size()))));
  for (size_t i = 0; i < v.size(); ++i) encode_exact(k, v[i], &b[i * static_cast<size_t>(element_bytes(k))]);
  return b;
}

/// The tensors of one problem, as logical row-major values.
struct Values {
  std::vector<double> x, w, b, dy;
};

struct Result2 {
  std::vector<double> y, mean, rstd, dx, dw, db;
};

/// Runs forward then backward on `stream` (the backward from the forward's own mean and rstd).
Result2 run_both(const Stream& stream, const NormDescriptor& d, const Values& v, bool transposed) {
  Result2 r;
  auto fwd = dynamic::NormPlan::select(stream, d);
  auto bwd = dynamic::NormBackwardPlan::select(stream, d);
  EXPECT_TRUE(fwd && bwd);
  if (!fwd || !bwd) return r;
  const K k = d.element, sk = fwd->stats_kind();
  const Shape& s = d.shape;
  const Shape h{s.dims[s.rank - 1]};
  const Shape rows = fwd->stats_shape();
  Strided xl = dense_layout(s);
  if (transposed && s.rank == 2) xl.stride[0] = 1, xl.stride[1] = s.dims[0];
  std::vector<uint8_t> xs = sentinel_storage(k, storage_elements(s, xl));
  scatter(k, encode(k, v.x), &xs, s, xl);
  auto x = make_device_tensor(stream, k, s, xl, xs);
  auto w = make_device_tensor(stream, k, h, dense_layout(h), encode(k, v.w));
  auto b = make_device_tensor(stream, k, h, dense_layout(h), encode(k, v.b));
  auto y = make_device_tensor(stream, k, s, dense_layout(s), sentinel_storage(k, s.numel()));
  auto mean = make_device_tensor(stream, sk, rows, dense_layout(rows), sentinel_storage(sk, rows.numel()));
  auto rstd = make_device_tensor(stream, sk, rows, dense_layout(rows), sentinel_storage(sk, rows.numel()));
  auto dy = make_device_tensor(stream, k, s, dense_layout(s), encode(k, v.dy));
  auto dx = make_device_tensor(stream, k, s, dense_layout(s), sentinel_storage(k, s.numel()));
  auto dw = make_device_tensor(stream, k, h, dense_layout(h), sentinel_storage(k, h.numel()));
  auto db = make_device_tensor(stream, k, h, dense_layout(h), sentinel_storage(k, h.numel()));
  auto ws = Buffer::allocate(stream, std::max({fwd->workspace_size(), bwd->workspace_size(), size_t{1}}));
  EXPECT_TRUE(x && w && b && y && mean && rstd && dy && dx && dw && db && ws);
  if (!x || !w || !b || !y || !mean || !rstd || !dy || !dx || !dw || !db || !ws) return r;
  const bool layer = d.op == NormOp::LayerNorm;
  const DynTensor wv = d.has_weight ? w->view : DynTensor{}, bv = d.has_bias ? b->view : DynTensor{};
  const DynTensor mv = layer ? mean->view : DynTensor{};
  Status st =
      fwd->run(stream, Workspace(ws->data(), fwd->workspace_size()), {x->view, wv, bv, y->view, mv, rstd->view});
  EXPECT_TRUE(st) << st.to_string();
  st = bwd->run(stream, Workspace(ws->data(), bwd->workspace_size()),
                {dy->view, x->view, wv, mv, rstd->view, dx->view, d.has_weight ? dw->view : DynTensor{},
                 d.has_bias ? db->view : DynTensor{}});
  EXPECT_TRUE(st) << st.to_string();
  r.y = decode(k, download(*y), s.numel());
  if (layer) r.mean = decode(sk, download(*mean), rows.numel());
  r.rstd = decode(sk, download(*rstd), rows.numel());
  r.dx = decode(k, download(*dx), s.numel());
  if (d.has_weight) r.dw = decode(k, download(*dw), h.numel());
  if (d.has_bias) r.db = decode(k, download(*db), h.numel());
  return r;
}

Values make_values(K k, const Shape& s, uint64_t seed) {
  Values v;
  const Shape h{s.dims[s.rank - 1]};
  random_floats(k, s.numel(), -2, 3, seed, &v.x);
  random_floats(k, h.numel(), 0.5, 1.5, seed + 1, &v.w);
  random_floats(k, h.numel(), -1, 1, seed + 2, &v.b);
  random_floats(k, s.numel(), -1, 1, seed + 3, &v.dy);
  return v;
}

void expect_close(const std::vector<double>& got, const std::vector<double>& want, double rel, double abs,
                  const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], rel * std::fabs(want[i]) + abs) << what << " " << i;
}

struct Case {
  NormOp op;
  K kind;
  Shape shape;
  bool weight, bias, transposed;
  DeviceKind device;
  std::string name;
};

std::vector<Case> cases() {
  std::vector<Case> v;
  const std::vector<std::pair<std::string, Shape>> shapes = {{"rows_9x200", Shape{9, 200}},
                                                             {"rows_4x3x700", Shape{4, 3, 700}},
                                                             {"split_2x3000", Shape{2, 3000}},
                                                             {"long_1x17000", Shape{1, 17000}},
                                                             {"wide_1x16000", Shape{1, 16000}},
                                                             {"bwd_wide_2x8000", Shape{2, 8000}},
                                                             {"one_row_64", Shape{64}}};
  for (NormOp op : {NormOp::RmsNorm, NormOp::LayerNorm})
    for (K k : {K::F32, K::Bf16, K::F16, K::F64})
      for (const auto& [name, s] : shapes)
        for (int affine : {0, 1, 2})  // none, weight, weight and bias (LayerNorm)
          for (bool transposed : {false, true}) {
            if ((affine == 2 && op == NormOp::RmsNorm) || (transposed && s.rank != 2)) continue;
            // Rows near or over kNormRowBytes (f32 1×16000 fills 64000 bytes of the row kernel's slot; the
            // others take the composed path): f32 and f64 with every affine part only, as the sim is slow on them.
            const bool long_rows = s.dims[s.rank - 1] > 10000;
            if (long_rows && (transposed || k == K::F16 || k == K::Bf16 || affine != (op == NormOp::RmsNorm ? 1 : 2)))
              continue;
            // The backward's widest block row (f32 2×8000: 64000 bytes of slots, the launch's opt-in above
            // 48 KiB): f32 with every affine part only (the other kinds' block rows: split_2x3000).
            if (name == "bwd_wide_2x8000" && (transposed || k != K::F32 || affine != (op == NormOp::RmsNorm ? 1 : 2)))
              continue;
            for (DeviceKind dev : {DeviceKind::Sim, DeviceKind::Cuda})
              v.push_back({op, k, s, affine >= 1, affine == 2, transposed, dev,
                           std::string(to_string(op)) + "_" + std::string(to_string(k)) + "_" + name + "_affine" +
                               std::to_string(affine) + (transposed ? "_transposed" : "") + "_" +
                               std::string(to_string(dev))});
          }
  return v;
}

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class NormSweep : public ::testing::TestWithParam<Case> {};

TEST_P(NormSweep, ForwardAndBackwardMatchTheHost) {
  const Case& c = GetParam();
  BARACUDA_TEST_STREAM(stream, c.device);
  const NormDescriptor d =
      NormDescriptor().with_op(c.op).with_element(c.kind).with_shape(c.shape).with_weight(c.weight).with_bias(c.bias);
  auto probe = dynamic::NormPlan::select(stream, d);
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(probe, c.device);
  // The backward's path, by its own rule (dy and x on chip: two 16-byte-rounded slots of the row within
  // 64 KiB, a warp's within 4 KiB and 1024 elements): f32 2×8000 is the widest block row (64000 bytes).
  const int64_t len = c.shape.dims[c.shape.rank - 1], bytes = 2 * len * element_bytes(c.kind);
  const char* want_path = len <= 1024 && bytes <= 4096 ? "rows_warp"
                          : bytes <= 64 * 1024         ? "rows_block"
                                                       : "segment_reduce+elementwise";
  auto bwd = dynamic::NormBackwardPlan::select(stream, d);
  ASSERT_TRUE(bwd) << bwd.status().to_string();
  EXPECT_EQ(bwd->sku().variant, want_path);
  const Values v = make_values(c.kind, c.shape, 3);
  const Result2 want = run_both(Stream::host(), d, v, c.transposed);
  const Result2 got = run_both(stream, d, v, c.transposed);
  const double ulp = c.kind == K::F16 ? 0x1p-10 : c.kind == K::Bf16 ? 0x1p-7 : c.kind == K::F64 ? 0x1p-52 : 0x1p-23;
  const double acc = (c.kind == K::F64 ? 0x1p-52 : 0x1p-23) * 64;  // the f32 statistics' rounding
  const double rows = static_cast<double>(c.shape.numel() / c.shape.dims[c.shape.rank - 1]);
  expect_close(got.rstd, want.rstd, acc, 0, "rstd");
  expect_close(got.mean, want.mean, 0, acc * 3, "mean");
  expect_close(got.y, want.y, ulp, acc * 8, "y");
  expect_close(got.dx, want.dx, ulp, acc * 16, "dx");
  expect_close(got.dw, want.dw, ulp, acc * rows * 4, "dweight");
  expect_close(got.db, want.db, ulp, acc * rows * 2, "dbias");
  // The same bits again.
  const Result2 again = run_both(stream, d, v, c.transposed);
  EXPECT_EQ(again.y, got.y);
  EXPECT_EQ(again.dx, got.dx);
  EXPECT_EQ(again.dw, got.dw);
}

INSTANTIATE_TEST_SUITE_P(AllKinds, NormSweep, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& i) { return i.param.name; });

/// The host reference against the formulas in f64, and its backward against central differences of
/// L = Σ u ⊙ y (plus the gradients of w and b).
TEST(NormHost, FormulasAndFiniteDifferences) {
  const Shape s{3, 7};
  Values v;
  for (int i = 0; i < 21; ++i) v.x.push_back(std::sin(0.9 * i) * 2), v.dy.push_back(std::cos(1.7 * i));
  for (int j = 0; j < 7; ++j) v.w.push_back(1 + 0.1 * j), v.b.push_back(0.3 - 0.05 * j);
  for (NormOp op : {NormOp::RmsNorm, NormOp::LayerNorm}) {
    const bool layer = op == NormOp::LayerNorm;
    const NormDescriptor d =
        NormDescriptor().with_op(op).with_element(K::F64).with_shape(s).with_eps(1e-5).with_bias(layer);
    const Result2 r = run_both(Stream::host(), d, v, false);
    for (int row = 0; row < 3; ++row) {
      double mean = 0, sq = 0;
      for (int j = 0; j < 7; ++j) mean += v.x[row * 7 + j] / 7;
      if (!layer) mean = 0;
      for (int j = 0; j < 7; ++j) sq += (v.x[row * 7 + j] - mean) * (v.x[row * 7 + j] - mean) / 7;
      const double rstd = 1 / std::sqrt(sq + 1e-5);
      EXPECT_NEAR(r.rstd[row], rstd, 1e-14);
      for (int j = 0; j < 7; ++j)
        EXPECT_NEAR(r.y[row * 7 + j], (v.x[row * 7 + j] - mean) * rstd * v.w[j] + (layer ? v.b[j] : 0), 1e-14);
    }
    const auto loss = [&](const Values& p) {
      const Result2 q = run_both(Stream::host(), d, p, false);
      double l = 0;
      for (size_t i = 0; i < q.y.size(); ++i) l += v.dy[i] * q.y[i];
      return l;
    };
    const auto check = [&](std::vector<double> Values::*field, const std::vector<double>& grad, const char* what) {
      for (size_t i = 0; i < grad.size(); ++i) {
        Values hi = v, lo = v;
        (hi.*field)[i] += 1e-6, (lo.*field)[i] -= 1e-6;
        EXPECT_NEAR(grad[i], (loss(hi) - loss(lo)) / 2e-6, 1e-7) << to_string(op) << " " << what << " " << i;
      }
    };
    check(&Values::x, r.dx, "dx");
    check(&Values::w, r.dw, "dweight");
    if (layer) check(&Values::b, r.db, "dbias");
  }
}

class NormValues : public ::testing::TestWithParam<DeviceKind> {};

TEST_P(NormValues, IdenticalValuesHaveVarianceZero) {
  BARACUDA_TEST_STREAM(stream, GetParam());
  const NormDescriptor d = NormDescriptor().with_op(NormOp::LayerNorm).with_shape(Shape{2, 300}).with_eps(1e-5);
  auto probe = dynamic::NormPlan::select(stream, d);
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(probe, GetParam());
  Values v;
  v.x.assign(600, 0.75);
  v.w.assign(300, 1.0);
  v.b.assign(300, 0.0);
  v.dy.assign(600, 0.5);
  const Result2 r = run_both(stream, d, v, false);
  for (double y : r.y) EXPECT_EQ(y, 0);  // x − mean is exactly 0
  for (double m : r.mean) EXPECT_EQ(m, 0.75);
  EXPECT_NEAR(r.rstd[0], 1 / std::sqrt(1e-5), 1e-2);
}

INSTANTIATE_TEST_SUITE_P(Devices, NormValues, ::testing::ValuesIn(kTestDevices),
                         [](const ::testing::TestParamInfo<DeviceKind>& i) { return std::string(to_string(i.param)); });

TEST(NormRejects, DescriptorAndOperands) {
  const NormDescriptor ok = NormDescriptor().with_shape(Shape{4, 5});
  const auto status = [](const NormDescriptor& d) { return dynamic::NormPlan::select(Stream::host(), d).status(); };
  expect_error(status(NormDescriptor(ok).with_op(static_cast<NormOp>(9))), ErrorCode::InvalidProblem, "NormPlan");
  expect_error(status(NormDescriptor(ok).with_shape(Shape{})), ErrorCode::InvalidProblem, "NormPlan");
  expect_error(status(NormDescriptor(ok).with_shape(Shape{4, -5})), ErrorCode::InvalidProblem, "NormPlan");
  for (double e : {-1.0, std::numeric_limits<double>::infinity(), std::nan("")})
    expect_error(status(NormDescriptor(ok).with_eps(e)), ErrorCode::InvalidProblem, "NormPlan");
  expect_error(status(NormDescriptor(ok).with_bias(true)), ErrorCode::InvalidProblem, "NormPlan");  // RmsNorm
  expect_error(status(NormDescriptor(ok).with_element(K::S32)), ErrorCode::Unsupported, "NormPlan");
  expect_error(dynamic::NormBackwardPlan::select(Stream::host(), NormDescriptor(ok).with_element(K::U8)).status(),
               ErrorCode::Unsupported, "NormBackwardPlan");

  auto plan = dynamic::NormPlan::select(Stream::host(), ok);
  ASSERT_TRUE(plan);
  std::vector<float> x(20), w(5), y(20), rstd(4), mean(4);
  const DynTensor xv = DynTensor::dense(x.data(), K::F32, Shape{4, 5}),
                  wv = DynTensor::dense(w.data(), K::F32, Shape{5});
  const DynTensor yv = DynTensor::dense(y.data(), K::F32, Shape{4, 5});
  const DynTensor rv = DynTensor::dense(rstd.data(), K::F32, Shape{4});
  EXPECT_TRUE(plan->can_implement({xv, wv, {}, yv, {}, rv}));
  expect_error(plan->can_implement({xv, {}, {}, yv, {}, rv}), ErrorCode::InvalidProblem, "weight");
  expect_error(plan->can_implement({xv, wv, wv, yv, {}, rv}), ErrorCode::InvalidProblem, "bias");
  expect_error(plan->can_implement({xv, wv, {}, yv, DynTensor::dense(mean.data(), K::F32, Shape{4}), rv}),
               ErrorCode::InvalidProblem, "mean");
  EXPECT_TRUE(plan->can_implement({xv, wv, {}, xv, {}, rv}));  // in place: y exactly x
  expect_error(plan->can_implement({xv, wv, {}, DynTensor::dense(x.data() + 1, K::F32, Shape{4, 5}), {}, rv}),
               ErrorCode::InvalidProblem, "other than exactly");  // y over x, shifted
  expect_error(plan->can_implement({xv, wv, {}, yv, {}, DynTensor::dense(rstd.data(), K::F64, Shape{4})}),
               ErrorCode::InvalidProblem, "rstd");
  expect_error(dynamic::NormPlan{}.run(Stream::host(), {}, {xv, wv, {}, yv, {}, rv}), ErrorCode::InvalidProblem,
               "select did not produce");

  auto bwd = dynamic::NormBackwardPlan::select(Stream::host(), ok);
  ASSERT_TRUE(bwd);
  std::vector<float> dy(20), dx(20), dw(5);
  const DynTensor dyv = DynTensor::dense(dy.data(), K::F32, Shape{4, 5});
  const DynTensor dxv = DynTensor::dense(dx.data(), K::F32, Shape{4, 5});
  expect_error(bwd->can_implement({dyv, xv, wv, {}, rv, {}, {}, {}}), ErrorCode::InvalidProblem, "none of dx");
  expect_error(bwd->can_implement({dyv, xv, wv, {}, {}, dxv, {}, {}}), ErrorCode::InvalidProblem, "rstd");
  expect_error(bwd->can_implement({dyv, xv, wv, {}, rv, dxv, {}, DynTensor::dense(dw.data(), K::F32, Shape{5})}),
               ErrorCode::InvalidProblem, "dbias");
  expect_error(bwd->can_implement({dyv, xv, wv, {}, rv, dyv, {}, {}}), ErrorCode::InvalidProblem, "overlaps");
  EXPECT_TRUE(bwd->can_implement({dyv, xv, wv, {}, rv, dxv, DynTensor::dense(dw.data(), K::F32, Shape{5}), {}}));
  // RmsNorm's backward takes no mean; without a weight, no dweight.
  std::vector<float> mean_b(4);
  expect_error(bwd->can_implement({dyv, xv, wv, DynTensor::dense(mean_b.data(), K::F32, Shape{4}), rv, dxv, {}, {}}),
               ErrorCode::InvalidProblem, "mean");
  auto no_weight = dynamic::NormBackwardPlan::select(Stream::host(), NormDescriptor(ok).with_weight(false));
  ASSERT_TRUE(no_weight);
  expect_error(no_weight->can_implement({dyv, xv, {}, {}, rv, dxv, DynTensor::dense(dw.data(), K::F32, Shape{5}), {}}),
               ErrorCode::InvalidProblem, "dweight");
  expect_error(bwd->run(Stream::host(), Workspace(dx.data(), 4), {dyv, xv, wv, {}, rv, dxv, {}, {}}),
               ErrorCode::WorkspaceTooSmall, "NormBackwardPlan");
}

}  // namespace
}  // namespace baracuda::test
