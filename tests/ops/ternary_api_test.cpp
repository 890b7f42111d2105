// The ternary family's exact expectations and API: special values on every device (clamp's NaN, signed-zero
// and crossed-bound rules, lerp's exact end points, fma's single rounding, where's bit copies), the typed
// wrappers, the catalog names, and every rejection of select, can_implement and run.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "baracuda/baracuda.hpp"
#include "baracuda/ops/ternary.hpp"
#include "support/devices.hpp"
#include "support/expect_error.hpp"
#include "support/numeric.hpp"
#include "support/random.hpp"
#include "support/tensor.hpp"

namespace baracuda::test {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

/// f32 vectors on a device, run through a plan, and read back.
struct F32 {
  Buffer buf;
  DynTensor view;
};
Result<F32> upload(const Stream& s, const std::vector<float>& v) {
  auto b = Buffer::allocate(s, std::max<size_t>(v.size(), 1) * sizeof(float));
  if (!b) return b.error();
  if (!v.empty()) BARACUDA_TRY(b->copy_from_host(v.data(), v.size() * sizeof(float)));
  F32 t{std::move(*b), {}};
  t.view = DynTensor::dense(t.buf.data(), ElementKind::F32, Shape{static_cast<int64_t>(v.size())});
  return t;
}
std::vector<float> read(const F32& t, size_t n) {
  std::vector<float> v(n);
  (void)t.buf.copy_to_host(v.data(), n * sizeof(float));
  return v;
}
uint32_t bits(float f) { return std::bit_cast<uint32_t>(f); }

/// Expects `got` equal to `want` bit for bit, any NaN matching a NaN.
void expect_bits(const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << what << " [" << i << "]: got " << got[i] << ", expected NaN";
    } else {
      EXPECT_EQ(bits(got[i]), bits(want[i])) << what << " [" << i << "]: got " << got[i] << ", expected " << want[i];
    }
  }
}

/// The forward op on f32 vectors of equal length on `s`.
Result<std::vector<float>> forward(const Stream& s, TernaryOp op, const std::vector<float>& a,
                                   const std::vector<float>& b, const std::vector<float>& c, double value = 1.0) {
  const Shape shape{static_cast<int64_t>(a.size())};
  auto plan = dynamic::TernaryPlan::select(s, TernaryDescriptor().with_op(op).with_shape(shape).with_value(value));
  if (!plan) return plan.error();
  auto ta = upload(s, a), tb = upload(s, b), tc = upload(s, c), out = upload(s, std::vector<float>(a.size(), 7.f));
  if (!ta || !tb || !tc || !out) return Error::internal("upload failed");
  BARACUDA_TRY(plan->run(s, {}, {ta->view, tb->view, tc->view, out->view}));
  BARACUDA_TRY(s.synchronize());
  return read(*out, a.size());
}

class TernarySpecial : public ::testing::TestWithParam<DeviceKind> {};

TEST_P(TernarySpecial, ClampFollowsPyTorch) {
  BARACUDA_TEST_STREAM(s, GetParam());
  // NaN x propagates; a NaN bound gives NaN; max(-0, +0) keeps the first (-0); crossed bounds give c;
  // infinities clamp.
  const std::vector<float> x = {kNaN, 0.5f, 0.5f, -0.f, 0.f, 5.f, -kInf, kInf, 2.f, 1.f};
  const std::vector<float> lo = {0.f, kNaN, 0.f, 0.f, -0.f, 3.f, -1.f, -1.f, -kInf, 1.f};
  const std::vector<float> hi = {1.f, 1.f, kNaN, 1.f, 1.f, 2.f, 1.f, 1.f, kInf, 1.f};
  const std::vector<float> want = {kNaN, kNaN, kNaN, -0.f, 0.f, 2.f, -1.f, 1.f, 2.f, 1.f};
  auto got = forward(s, TernaryOp::Clamp, x, lo, hi);
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(got, GetParam());
  ASSERT_TRUE(got) << got.error().message;
  expect_bits(*got, want, "clamp");
}

TEST_P(TernarySpecial, LerpEndPointsAreExact) {
  BARACUDA_TEST_STREAM(s, GetParam());
  // Weight 0 gives a and weight 1 gives b exactly (a + w·(b − a) would not: 0.1 + (0.7 − 0.1) ≠ 0.7 in f32).
  std::vector<double> va, vb;
  const auto ba = random_floats(ElementKind::F32, 64, -4, 4, 1, &va);
  const auto bb = random_floats(ElementKind::F32, 64, -4, 4, 2, &vb);
  std::vector<float> a(va.begin(), va.end()), b(vb.begin(), vb.end());
  a.push_back(0.1f);
  b.push_back(0.7f);
  auto at0 = forward(s, TernaryOp::Lerp, a, b, std::vector<float>(a.size(), 0.f));
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(at0, GetParam());
  ASSERT_TRUE(at0) << at0.error().message;
  expect_bits(*at0, a, "lerp(a, b, 0)");
  auto at1 = forward(s, TernaryOp::Lerp, a, b, std::vector<float>(a.size(), 1.f));
  ASSERT_TRUE(at1) << at1.error().message;
  expect_bits(*at1, b, "lerp(a, b, 1)");
  auto half = forward(s, TernaryOp::Lerp, {1.f, -3.f}, {3.f, 5.f}, {0.5f, 0.5f});
  ASSERT_TRUE(half);
  expect_bits(*half, {2.f, 1.f}, "lerp(a, b, 0.5)");
}

TEST_P(TernarySpecial, FmaRoundsOnce) {
  BARACUDA_TEST_STREAM(s, GetParam());
  // (1 + 2^-12)² − (1 + 2^-11) = 2^-24 exactly; rounding the product first gives 0.
  const float e = 1.f + 0x1p-12f;
  auto got = forward(s, TernaryOp::Fma, {e, 2.f}, {e, 3.f}, {-(1.f + 0x1p-11f), 1.f});
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(got, GetParam());
  ASSERT_TRUE(got) << got.error().message;
  expect_bits(*got, {0x1p-24f, 7.f}, "fma");
  auto cm = forward(s, TernaryOp::Addcmul, {1.f, 1.f}, {3.f, -2.f}, {5.f, 0.25f}, 0.5);
  ASSERT_TRUE(cm);
  expect_bits(*cm, {8.5f, 0.75f}, "addcmul");
  auto cd = forward(s, TernaryOp::Addcdiv, {1.f, 0.f}, {3.f, 1.f}, {4.f, 0.f}, 2.0);
  ASSERT_TRUE(cd);
  expect_bits(*cd, {2.5f, kInf}, "addcdiv");
}

TEST_P(TernarySpecial, ClampGradientsAtTheEdges) {
  BARACUDA_TEST_STREAM(s, GetParam());
  // From PyTorch 1.13's autograd: x on a bound passes dy to x; crossed bounds send it to c; NaN x to none.
  const std::vector<float> x = {0.f, 1.f, 2.f, 3.f, 5.f, kNaN, 1.f, 2.f};
  const std::vector<float> lo = {1.f, 1.f, 1.f, 1.f, 1.f, 1.f, 3.f, 2.f};
  const std::vector<float> hi = {3.f, 3.f, 3.f, 3.f, 3.f, 3.f, 2.f, 2.f};
  const Shape shape{8};
  auto plan = dynamic::TernaryBackwardPlan::select(s, TernaryDescriptor().with_op(TernaryOp::Clamp).with_shape(shape));
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(plan, GetParam());
  ASSERT_TRUE(plan) << plan.error().message;
  auto dy = upload(s, std::vector<float>(8, 7.f));
  auto tx = upload(s, x), tl = upload(s, lo), th = upload(s, hi);
  auto da = upload(s, std::vector<float>(8, -1.f)), dl = upload(s, std::vector<float>(8, -1.f)),
       dh = upload(s, std::vector<float>(8, -1.f));
  ASSERT_TRUE(dy && tx && tl && th && da && dl && dh);
  ASSERT_TRUE(plan->run(s, {}, {dy->view, tx->view, tl->view, th->view, da->view, dl->view, dh->view}));
  ASSERT_TRUE(s.synchronize());
  expect_bits(read(*da, 8), {0, 7, 7, 7, 0, 0, 0, 7}, "dx");
  expect_bits(read(*dl, 8), {7, 0, 0, 0, 0, 0, 0, 0}, "dmin");
  expect_bits(read(*dh, 8), {0, 0, 0, 0, 7, 0, 7, 0}, "dmax");
}

TEST_P(TernarySpecial, WhereCopiesBits) {
  BARACUDA_TEST_STREAM(s, GetParam());
  // Every byte-stored kind: out is cond ? a : b bit for bit (NaN payloads and -0 included), a and b broadcast.
  for_each_type(ByteTypes{}, [&]<class T>() {
    const ElementKind k = kind_of<T>;
    SCOPED_TRACE(std::string(to_string(k)));
    const Shape cs{5, 1}, as{5, 9}, bs{9}, os{5, 9};
    const auto cond = random_bits(ElementKind::Bool, cs.numel(), 11);
    const auto a = random_bits(k, as.numel(), 12), b = random_bits(k, bs.numel(), 13);
    auto plan = dynamic::WherePlan::select(s, WhereDescriptor().with_element(k).with_shapes(cs, as, bs));
    BARACUDA_SKIP_IF_NO_CUDA_KERNELS(plan, GetParam());
    ASSERT_TRUE(plan) << plan.error().message;
    auto tc = make_device_tensor(s, ElementKind::Bool, cs, dense_layout(cs), cond);
    auto ta = make_device_tensor(s, k, as, dense_layout(as), a);
    auto tb = make_device_tensor(s, k, bs, dense_layout(bs), b);
    auto to = make_device_tensor(s, k, os, dense_layout(os), {});
    ASSERT_TRUE(tc && ta && tb && to);
    ASSERT_TRUE(plan->run(s, {}, {tc->view, ta->view, tb->view, to->view}));
    ASSERT_TRUE(s.synchronize());
    const auto out = download(*to);
    const int eb = element_bytes(k);
    for (int64_t r = 0; r < 5; ++r)
      for (int64_t c = 0; c < 9; ++c) {
        const uint8_t* want = cond[r] != 0 ? &a[(r * 9 + c) * eb] : &b[c * eb];
        EXPECT_EQ(std::memcmp(&out[(r * 9 + c) * eb], want, eb), 0) << r << "," << c;
      }
  });
}

TEST_P(TernarySpecial, WhereGradientsRouteDy) {
  BARACUDA_TEST_STREAM(s, GetParam());
  const Shape shape{4};
  auto plan = dynamic::WhereBackwardPlan::select(s, WhereDescriptor().with_shape(shape));
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(plan, GetParam());
  ASSERT_TRUE(plan) << plan.error().message;
  const std::vector<uint8_t> cond = {1, 0, 1, 0};
  auto tc = make_device_tensor(s, ElementKind::Bool, shape, dense_layout(shape), cond);
  auto dy = upload(s, {1.f, -2.f, kNaN, -0.f});
  auto da = upload(s, std::vector<float>(4, 9.f)), db = upload(s, std::vector<float>(4, 9.f));
  ASSERT_TRUE(tc && dy && da && db);
  ASSERT_TRUE(plan->run(s, {}, {tc->view, dy->view, da->view, db->view}));
  ASSERT_TRUE(s.synchronize());
  expect_bits(read(*da, 4), {1.f, 0.f, kNaN, 0.f}, "da");
  expect_bits(read(*db, 4), {0.f, -2.f, 0.f, -0.f}, "db");
  // db alone: da's slot is not written.
  auto db_only = upload(s, std::vector<float>(4, 9.f));
  ASSERT_TRUE(db_only);
  ASSERT_TRUE(plan->run(s, {}, {tc->view, dy->view, DynTensor{}, db_only->view}));
  ASSERT_TRUE(s.synchronize());
  expect_bits(read(*db_only, 4), {0.f, -2.f, 0.f, -0.f}, "db only");
}

INSTANTIATE_TEST_SUITE_P(Ternary, TernarySpecial, ::testing::ValuesIn(kTestDevices),
                         [](const auto& i) { return std::string(to_string(i.param)); });

// ---------------------------------------------------------------------------------------------------
// Typed wrappers and catalog names
// ---------------------------------------------------------------------------------------------------

TEST(TernaryApi, TypedPlansForward) {
  const Stream host = Stream::host();
  float a[6] = {1, 2, 3, 4, 5, 6}, lo[3] = {2, 2, 2}, hi[1] = {4}, out[6] = {};
  auto p = TernaryPlan<float, 2>::select(
      host, TernaryDescriptor().with_op(TernaryOp::Clamp).with_shapes(Shape{2, 3}, Shape{1, 3}, Shape{1, 1}));
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->sku().op, "clamp");
  EXPECT_EQ(p->output_shape(), (Shape{2, 3}));
  TernaryArgs<float, 2> args{TensorRef<float, 2>::dense(a, {2, 3}), TensorRef<float, 2>::dense(lo, {1, 3}),
                             TensorRef<float, 2>::dense(hi, {1, 1}), TensorMut<float, 2>::dense(out, {2, 3})};
  ASSERT_TRUE(p->can_implement(args));
  ASSERT_TRUE(p->run(host, {}, args));
  EXPECT_EQ(std::vector<float>(out, out + 6), (std::vector<float>{2, 2, 3, 4, 4, 4}));

  bool cond[2] = {true, false};
  double x[2] = {1, 2}, y[2] = {3, 4}, w[2] = {}, dx[2] = {}, dyv[2] = {5, 6};
  auto wp = WherePlan<double, 1>::select(host, WhereDescriptor().with_element(ElementKind::F64).with_shape(Shape{2}));
  ASSERT_TRUE(wp) << wp.error().message;
  ASSERT_TRUE(wp->run(host, {}, {TensorRef<bool, 1>::dense(cond, {2}), TensorRef<double, 1>::dense(x, {2}),
                                 TensorRef<double, 1>::dense(y, {2}), TensorMut<double, 1>::dense(w, {2})}));
  EXPECT_EQ(w[0], 1);
  EXPECT_EQ(w[1], 4);
  auto wb =
      WhereBackwardPlan<double, 1>::select(host, WhereDescriptor().with_element(ElementKind::F64).with_shape(Shape{2}));
  ASSERT_TRUE(wb);
  ASSERT_TRUE(wb->run(host, {}, {TensorRef<bool, 1>::dense(cond, {2}), TensorRef<double, 1>::dense(dyv, {2}),
                                 TensorMut<double, 1>::dense(dx, {2}), TensorMut<double, 1>{}}));
  EXPECT_EQ(dx[0], 5);
  EXPECT_EQ(dx[1], 0);

  float ga[2] = {1, 2}, gb[2] = {3, 4}, gc[2] = {5, 6}, dy[2] = {1, 1}, d0[2] = {}, d2[2] = {};
  auto bp =
      TernaryBackwardPlan<float, 1>::select(host, TernaryDescriptor().with_op(TernaryOp::Fma).with_shape(Shape{2}));
  ASSERT_TRUE(bp);
  TernaryBackwardArgs<float, 1> bargs{TensorRef<float, 1>::dense(dy, {2}), TensorRef<float, 1>::dense(ga, {2}),
                                      TensorRef<float, 1>::dense(gb, {2}), TensorRef<float, 1>::dense(gc, {2}),
                                      TensorMut<float, 1>::dense(d0, {2}), {}, TensorMut<float, 1>::dense(d2, {2})};
  ASSERT_TRUE(bp->run(host, {}, bargs));
  EXPECT_EQ(d0[1], 4);  // da = dy·b
  EXPECT_EQ(d2[1], 1);  // dc = dy
}

TEST(TernaryApi, TypedPlansCheckKindAndRank) {
  const Stream host = Stream::host();
  const auto d = TernaryDescriptor().with_op(TernaryOp::Fma).with_element(ElementKind::F64).with_shape(Shape{2, 2});
  expect_error(TernaryPlan<float, 2>::select(host, d).status(), ErrorCode::InvalidProblem, "TernaryPlan");
  expect_error(TernaryPlan<double, 1>::select(host, d).status(), ErrorCode::InvalidProblem, "TernaryPlan");
  const auto w = WhereDescriptor().with_shapes(Shape{2}, Shape{2, 2}, Shape{2});
  expect_error(WherePlan<float, 2>::select(host, w).status(), ErrorCode::InvalidProblem, "WherePlan");
  expect_error(WhereBackwardPlan<double, 2>::select(host, WhereDescriptor().with_shape(Shape{2, 2})).status(),
               ErrorCode::InvalidProblem, "WhereBackwardPlan");
  expect_error(TernaryBackwardPlan<float, 2>::select(host, d).status(), ErrorCode::InvalidProblem,
               "TernaryBackwardPlan");
}

TEST(TernaryApi, CatalogNames) {
  for (size_t i = 0; i < kNumTernaryOps; ++i) {
    const auto op = static_cast<TernaryOp>(i);
    TernaryOp parsed{};
    ASSERT_TRUE(parse_ternary_op(to_string(op), &parsed)) << to_string(op);
    EXPECT_EQ(parsed, op);
  }
  TernaryOp unused{};
  EXPECT_FALSE(parse_ternary_op("where", &unused));
  EXPECT_EQ(to_string(static_cast<TernaryOp>(200)), "?");
  const auto d = TernaryDescriptor().with_op(TernaryOp::Addcdiv).with_shape(Shape{3});
  EXPECT_EQ(d, TernaryDescriptor(d));
  EXPECT_NE(d.hash(), TernaryDescriptor(d).with_value(2).hash());
  EXPECT_NE(WhereDescriptor().with_shape(Shape{3}).hash(), WhereDescriptor().with_shape(Shape{4}).hash());
}

// ---------------------------------------------------------------------------------------------------
// Rejections
// ---------------------------------------------------------------------------------------------------

using K = ElementKind;

TernaryDescriptor fma3(const Shape& s = Shape{3}) { return TernaryDescriptor().with_op(TernaryOp::Fma).with_shape(s); }

TEST(TernaryReject, Select) {
  const Stream s = Stream::host();
  constexpr auto kInvalid = ErrorCode::InvalidProblem;
  constexpr auto kUnsupported = ErrorCode::Unsupported;
  expect_error(dynamic::TernaryPlan::select(s, fma3().with_op(static_cast<TernaryOp>(99))).status(), kInvalid,
               "TernaryPlan");
  expect_error(dynamic::TernaryPlan::select(s, fma3().with_value(2)).status(), kInvalid, "only addcmul and addcdiv");
  expect_error(dynamic::TernaryBackwardPlan::select(s, fma3().with_op(TernaryOp::Clamp).with_value(0)).status(),
               kInvalid, "TernaryBackwardPlan");
  expect_error(dynamic::TernaryPlan::select(s, fma3().with_shapes(Shape{3}, Shape{-1}, Shape{3})).status(), kInvalid,
               "b shape");
  expect_error(dynamic::TernaryPlan::select(s, fma3().with_shapes(Shape{3}, Shape{3}, Shape{4})).status(), kInvalid,
               "do not broadcast");
  const int64_t big = int64_t{1} << 20;  // three valid shapes broadcasting to 2^60 elements
  const TernaryDescriptor huge = fma3().with_shapes(Shape{big, 1, 1}, Shape{1, big, 1}, Shape{1, 1, big});
  expect_error(dynamic::TernaryPlan::select(s, huge).status(), kInvalid, "broadcast output");
  expect_error(dynamic::TernaryPlan::select(s, fma3().with_element(static_cast<K>(200))).status(), kInvalid,
               "not a valid ElementKind");
  expect_error(dynamic::TernaryPlan::select(s, fma3().with_op(TernaryOp::Lerp).with_element(K::S32)).status(),
               kUnsupported, "lerp does not support element kind s32");
  expect_error(dynamic::TernaryPlan::select(s, fma3().with_op(TernaryOp::Clamp).with_element(K::Bool)).status(),
               kUnsupported, "clamp does not support element kind bool");
  expect_error(dynamic::TernaryBackwardPlan::select(s, fma3().with_op(TernaryOp::Clamp).with_element(K::S32)).status(),
               kUnsupported, "has no gradient");
  PlanPreference cublas;
  cublas.prefer_backend = BackendKind::CublasLt;
  expect_error(dynamic::TernaryPlan::select(s, fma3(), cublas).status(), kUnsupported, "TernaryPlan");

  const auto w = WhereDescriptor().with_shape(Shape{3});
  expect_error(dynamic::WherePlan::select(s, WhereDescriptor(w).with_shapes(Shape{-2}, Shape{3}, Shape{3})).status(),
               kInvalid, "cond shape");
  expect_error(dynamic::WherePlan::select(s, WhereDescriptor(w).with_shapes(Shape{2}, Shape{3}, Shape{3})).status(),
               kInvalid, "cond [2], a [3] and b [3] do not broadcast");
  expect_error(dynamic::WherePlan::select(s, WhereDescriptor(w).with_element(K::S4)).status(), kUnsupported,
               "where does not support element kind s4");
  expect_error(dynamic::WhereBackwardPlan::select(s, WhereDescriptor(w).with_element(K::S32)).status(), kUnsupported,
               "has no gradient");
  expect_error(dynamic::WhereBackwardPlan::select(s, WhereDescriptor(w).with_element(static_cast<K>(200))).status(),
               kInvalid, "WhereBackwardPlan");
  expect_error(dynamic::WherePlan::select(s, w, cublas).status(), kUnsupported, "WherePlan");
}

/// Host tensors for the can_implement and run rejections.
struct Arrays {
  float a[12] = {}, b[12] = {}, c[12] = {}, out[12] = {}, g0[12] = {}, g1[12] = {}, g2[12] = {};
  bool cond[12] = {};
  DynTensor f(float* p, const Shape& s = Shape{3, 4}) { return DynTensor::dense(p, K::F32, s); }
  ConstDynTensor bools(const Shape& s = Shape{3, 4}) { return ConstDynTensor::dense(cond, K::Bool, s); }
};

TEST(TernaryReject, CanImplementAndRun) {
  const Stream s = Stream::host();
  constexpr auto kInvalid = ErrorCode::InvalidProblem;
  Arrays x;
  auto p = dynamic::TernaryPlan::select(s, fma3(Shape{3, 4}).with_shapes(Shape{3, 4}, Shape{4}, Shape{3, 1}));
  ASSERT_TRUE(p) << p.error().message;
  const ConstDynTensor a = x.f(x.a), b = x.f(x.b, Shape{4}), c = x.f(x.c, Shape{3, 1});
  const DynTensor out = x.f(x.out);
  ASSERT_TRUE(p->can_implement({a, b, c, out}));
  expect_error(p->can_implement({ConstDynTensor::dense(x.a, K::F64, Shape{3, 4}), b, c, out}), kInvalid, "a");
  expect_error(p->can_implement({a, x.f(x.b, Shape{3, 4}), c, out}), kInvalid, "b");
  expect_error(p->can_implement({a, b, DynTensor{}, out}), kInvalid, "c is missing");
  expect_error(p->can_implement({a, b, c, x.f(x.out, Shape{4, 3})}), kInvalid, "out");
  expect_error(p->can_implement({a, b, c, x.f(nullptr)}), kInvalid, "out");
  DynTensor broadcast_out = out;
  broadcast_out.stride = {0, 1};
  expect_error(p->can_implement({a, b, c, broadcast_out}), kInvalid, "out");
  ConstDynTensor transposed_a = a;  // the same memory as out with other strides: not in place
  transposed_a.stride = {1, 3};
  expect_error(p->can_implement({transposed_a, b, c, x.f(x.a)}), kInvalid, "TernaryPlan");
  ASSERT_TRUE(p->can_implement({a, b, c, x.f(x.a)}));  // in place: the same view
  // run checks what can_implement checks, and that select produced the plan for this device.
  expect_error(p->run(s, {}, {a, b, DynTensor{}, out}), kInvalid, "c is missing");
  expect_error(dynamic::TernaryPlan{}.run(s, {}, {a, b, c, out}), kInvalid, "did not produce");
  expect_error(p->run(Stream::sim(), {}, {a, b, c, out}), kInvalid, "TernaryPlan");

  auto bp = dynamic::TernaryBackwardPlan::select(s, fma3(Shape{3, 4}));
  ASSERT_TRUE(bp);
  const ConstDynTensor dy = x.f(x.out), full_b = x.f(x.b), full_c = x.f(x.c);
  ASSERT_TRUE(bp->can_implement({dy, a, full_b, full_c, x.f(x.g0), DynTensor{}, x.f(x.g2)}));
  expect_error(bp->can_implement({dy, a, full_b, full_c, DynTensor{}, DynTensor{}, DynTensor{}}), kInvalid,
               "none of da, db, dc is requested");
  expect_error(bp->can_implement({dy, a, full_b, full_c, x.f(x.g0), x.f(x.g0), DynTensor{}}), kInvalid, "overlap");
  expect_error(bp->can_implement({x.f(x.out, Shape{12}), a, full_b, full_c, x.f(x.g0), DynTensor{}, DynTensor{}}),
               kInvalid, "dy");
  const DynTensor f16_dc = DynTensor::dense(x.g2, K::F16, Shape{3, 4});
  expect_error(bp->can_implement({dy, a, full_b, full_c, x.f(x.g0), DynTensor{}, f16_dc}), kInvalid, "dc");
  expect_error(dynamic::TernaryBackwardPlan{}.run(s, {}, {dy, a, full_b, full_c, x.f(x.g0), {}, {}}), kInvalid,
               "did not produce");

  auto wp = dynamic::WherePlan::select(s, WhereDescriptor().with_shape(Shape{3, 4}));
  ASSERT_TRUE(wp);
  ASSERT_TRUE(wp->can_implement({x.bools(), a, full_b, out}));
  expect_error(wp->can_implement({x.f(x.c), a, full_b, out}), kInvalid, "cond");
  expect_error(wp->can_implement({x.bools(), a, full_b, DynTensor{}}), kInvalid, "out is missing");
  expect_error(dynamic::WherePlan{}.run(s, {}, {x.bools(), a, full_b, out}), kInvalid, "did not produce");

  auto wb = dynamic::WhereBackwardPlan::select(s, WhereDescriptor().with_shape(Shape{3, 4}));
  ASSERT_TRUE(wb);
  ASSERT_TRUE(wb->can_implement({x.bools(), dy, x.f(x.g0), DynTensor{}}));
  expect_error(wb->can_implement({x.bools(), dy, DynTensor{}, DynTensor{}}), kInvalid, "neither da nor db");
  expect_error(wb->can_implement({x.bools(Shape{4}), dy, x.f(x.g0), x.f(x.g1)}), kInvalid, "cond");
  DynTensor overlapping = x.f(x.g0);
  overlapping.data = x.g0 + 1;
  expect_error(wb->can_implement({x.bools(), dy, x.f(x.g0), overlapping}), kInvalid, "overlap");
  expect_error(dynamic::WhereBackwardPlan{}.run(s, {}, {x.bools(), dy, x.f(x.g0), {}}), kInvalid, "did not produce");
}

TEST(TernaryReject, EmptyProblemsNeedNoData) {
  const Stream s = Stream::host();
  auto p = dynamic::TernaryPlan::select(s, fma3(Shape{0, 4}));
  ASSERT_TRUE(p);
  const DynTensor e = DynTensor::dense(nullptr, K::F32, Shape{0, 4});
  EXPECT_TRUE(p->run(s, {}, {e, e, e, e}));
  auto bp = dynamic::TernaryBackwardPlan::select(s, fma3(Shape{0, 4}));
  ASSERT_TRUE(bp);
  EXPECT_TRUE(bp->run(s, {}, {e, e, e, e, {}, {}, {}}));  // no gradient asked of an empty problem: nothing to do
}

}  // namespace
}  // namespace baracuda::test
