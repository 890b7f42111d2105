// Fp8QuantizePlan / Fp8DequantizePlan / Fp8ScalingUpdatePlan: the plan API (SKUs, precision, hashes, the
// typed wrappers) and a negative test for every rejection of select, can_implement and run
// (Fp8Reject / Fp8CanImplement). Part of the fp8_test executable (helpers in fp8_test_support.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "baracuda/baracuda.hpp"

#include "fp8_test_support.hpp"
#include "support/doc_table.hpp"

namespace baracuda::test {
namespace {

// ---------------------------------------------------------------------------------------------------
// Every rejection of select, can_implement and run
// ---------------------------------------------------------------------------------------------------

Fp8QuantizeDescriptor qdesc(Shape s = Shape{4, 3}) { return Fp8QuantizeDescriptor().with_input(K::F32).with_shape(s); }
Fp8DequantizeDescriptor ddesc(Shape s = Shape{4, 3}) {
  return Fp8DequantizeDescriptor().with_output(K::F32).with_shape(s);
}
Fp8ScalingUpdateDescriptor udesc() { return Fp8ScalingUpdateDescriptor().with_history_length(8); }

/// The rejections of Plan::select (its messages name `plan`), around `desc`: each of `inputs` as the input kind
/// and of `outputs` as the output kind is Unsupported on host and sim; each `malformed` descriptor is
/// InvalidProblem; asking `stream` for `other_backend` (another device's) is Unsupported; and each typed plan of
/// `Typed` rejects `desc`, its element types or rank not being the descriptor's.
template <class Plan, class... Typed, class Descriptor>
void expect_select_rejections(std::string_view plan, const Descriptor& desc, std::initializer_list<K> inputs,
                              std::initializer_list<K> outputs, std::initializer_list<Descriptor> malformed,
                              const Stream& stream, BackendKind other_backend) {
  for (DeviceKind d : {DeviceKind::Host, DeviceKind::Sim}) {
    const Stream s = *Stream::for_device(d);
    for (K k : inputs)
      expect_error(Plan::select(s, Descriptor(desc).with_input(k)).status(), ErrorCode::Unsupported, plan);
    for (K k : outputs)
      expect_error(Plan::select(s, Descriptor(desc).with_output(k)).status(), ErrorCode::Unsupported, plan);
  }
  for (const Descriptor& bad : malformed)
    expect_error(Plan::select(Stream::host(), bad).status(), ErrorCode::InvalidProblem, plan);
  expect_other_backend_unsupported<Plan>(stream, desc, other_backend, plan);
  expect_typed_plans_reject<Typed...>(desc, plan);
}

TEST(Fp8Reject, QuantizeSelect) {
  expect_select_rejections<dynamic::Fp8QuantizePlan, Fp8QuantizePlan<double, __nv_fp8_e4m3, 2>,
                           Fp8QuantizePlan<float, __nv_fp8_e5m2, 2>, Fp8QuantizePlan<float, __nv_fp8_e4m3, 1>>(
      "Fp8QuantizePlan", qdesc(), {K::S32, K::U8, K::Fp8E4M3, K::S4}, {K::F16, K::S8, K::F32},
      {qdesc(Shape{3, -1}), qdesc(Shape{1, 1, 1, 1, 1, 1, 1, 1, 1}), qdesc().with_output(static_cast<K>(200))},
      Stream::host(), BackendKind::Sim);
}

TEST(Fp8Reject, QuantizeConvention) {
  constexpr std::string_view p = "Fp8QuantizePlan";
  for (DeviceKind d : {DeviceKind::Host, DeviceKind::Sim}) {
    const Stream s = *Stream::for_device(d);
    for (K in : {K::F16, K::Bf16, K::F32, K::F64})  // vLLM's FP8 path is not modelled
      expect_error(dynamic::Fp8QuantizePlan::select(s, qdesc().with_input(in).with_convention(QuantConvention::Vllm))
                       .status(),
                   ErrorCode::Unsupported, p);
    for (K out : kFp8)  // TransformerEngine's cast takes no f64
      expect_error(dynamic::Fp8QuantizePlan::select(
                       s, qdesc().with_input(K::F64).with_output(out).with_convention(QuantConvention::TransformerEngine))
                       .status(),
                   ErrorCode::Unsupported, p);
    for (uint8_t bad : {4, 9, 255})
      expect_error(
          dynamic::Fp8QuantizePlan::select(s, qdesc().with_convention(static_cast<QuantConvention>(bad))).status(),
          ErrorCode::InvalidProblem, p);
    // The accepted ones, for contrast: every convention but Vllm with f32, and f64 with PyTorch and Exact.
    for (QuantConvention c : {QuantConvention::PyTorch, QuantConvention::Exact, QuantConvention::TransformerEngine})
      EXPECT_TRUE(dynamic::Fp8QuantizePlan::select(s, qdesc().with_convention(c))) << to_string(c);
    for (QuantConvention c : {QuantConvention::PyTorch, QuantConvention::Exact})
      EXPECT_TRUE(dynamic::Fp8QuantizePlan::select(s, qdesc().with_input(K::F64).with_convention(c))) << to_string(c);
  }
  // The typed wrapper forwards the convention's rejection.
  expect_error(Fp8QuantizePlan<float, __nv_fp8_e4m3, 2>::select(Stream::host(),
                                                                 qdesc().with_convention(QuantConvention::Vllm))
                   .status(),
               ErrorCode::Unsupported, p);
}

TEST(Fp8Reject, DequantizeSelect) {
  expect_select_rejections<dynamic::Fp8DequantizePlan, Fp8DequantizePlan<__nv_fp8_e5m2, float, 2>,
                           Fp8DequantizePlan<__nv_fp8_e4m3, double, 2>, Fp8DequantizePlan<__nv_fp8_e4m3, float, 3>>(
      "Fp8DequantizePlan", ddesc(), {K::F32, K::S8, K::U8}, {K::S32, K::Fp8E5M2, K::Bool},
      {ddesc(Shape{-2}), ddesc().with_input(static_cast<K>(99))}, Stream::sim(), BackendKind::Host);
}

TEST(Fp8Reject, ScalingUpdateSelect) {
  constexpr std::string_view p = "Fp8ScalingUpdatePlan";
  const Stream s = Stream::host();
  for (K k : {K::F32, K::F16, K::S8})
    expect_error(dynamic::Fp8ScalingUpdatePlan::select(s, udesc().with_fp8_kind(k)).status(), ErrorCode::Unsupported,
                 p);
  expect_error(dynamic::Fp8ScalingUpdatePlan::select(s, udesc().with_history_length(0)).status(),
               ErrorCode::InvalidProblem, p);
  expect_error(
      dynamic::Fp8ScalingUpdatePlan::select(s, udesc().with_amax_compute_algo(static_cast<AmaxComputeAlgo>(7))).status(),
      ErrorCode::InvalidProblem, p);
  expect_error(dynamic::Fp8ScalingUpdatePlan::select(s, udesc().with_margin(65)).status(), ErrorCode::InvalidProblem,
               p);
  expect_error(dynamic::Fp8ScalingUpdatePlan::select(s, udesc().with_margin(-65)).status(), ErrorCode::InvalidProblem,
               p);
  expect_error(dynamic::Fp8ScalingUpdatePlan::select(s, udesc(), PlanPreference().with_backend(BackendKind::Bespoke))
                   .status(),
               ErrorCode::Unsupported, p);
  EXPECT_TRUE(Fp8ScalingUpdatePlan::select(s, udesc().with_margin(64)));
}

TEST(Fp8Reject, RunOnAnotherDevice) {
  alignas(16) float buf[16] = {};
  const DynTensor f = DynTensor::dense(buf, K::F32, Shape{4, 3});
  const DynTensor one = DynTensor::dense(buf + 12, K::F32, Shape{1});
  const DynTensor one2 = DynTensor::dense(buf + 13, K::F32, Shape{1});
  const DynTensor hist = DynTensor::dense(buf, K::F32, Shape{8});
  alignas(16) uint8_t q[16] = {};
  const DynTensor fp8 = DynTensor::dense(q, K::Fp8E4M3, Shape{4, 3});
  auto qp = dynamic::Fp8QuantizePlan::select(Stream::host(), qdesc());
  auto dp = dynamic::Fp8DequantizePlan::select(Stream::host(), ddesc());
  auto up = dynamic::Fp8ScalingUpdatePlan::select(Stream::host(), udesc());
  ASSERT_TRUE(qp && dp && up);
  expect_error(qp->run(Stream::sim(), {}, {f, one, fp8, one2}), ErrorCode::InvalidProblem, "Fp8QuantizePlan");
  expect_error(dp->run(Stream::sim(), {}, {fp8, one, f}), ErrorCode::InvalidProblem, "Fp8DequantizePlan");
  expect_error(up->run(Stream::sim(), {}, {hist, one, one2}), ErrorCode::InvalidProblem, "Fp8ScalingUpdatePlan");
}

class Fp8CanImplement : public ::testing::Test {
 protected:
  DynTensor x() { return DynTensor::dense(x_, K::F32, Shape{4, 3}); }
  DynTensor y() { return DynTensor::dense(y_, K::Fp8E4M3, Shape{4, 3}); }
  DynTensor s1() { return DynTensor::dense(&s_[0], K::F32, Shape{1}); }
  DynTensor s2() { return DynTensor::dense(&s_[4], K::F32, Shape{1}); }
  DynTensor s3() { return DynTensor::dense(&s_[6], K::F32, Shape{1}); }
  DynTensor hist() { return DynTensor::dense(h_, K::F32, Shape{8}); }
  void quantize_rejects(const ConstDynTensor& a, const ConstDynTensor& sc, const DynTensor& b, const DynTensor& am,
                        ErrorCode code, const DynTensor& si = {}) {
    auto p = dynamic::Fp8QuantizePlan::select(Stream::host(), qdesc());
    ASSERT_TRUE(p);
    expect_error(p->can_implement({a, sc, b, am, si}), code, "Fp8QuantizePlan");
    std::fill(std::begin(y_), std::end(y_), uint8_t{7});
    s_[4] = 9.0f;
    s_[6] = 11.0f;
    expect_error(p->run(Stream::host(), {}, {a, sc, b, am, si}), code, "Fp8QuantizePlan");
    for (uint8_t v : y_) EXPECT_EQ(v, 7) << "run wrote despite the rejection";
    EXPECT_EQ(s_[4], 9.0f) << "run wrote amax despite the rejection";
    EXPECT_EQ(s_[6], 11.0f) << "run wrote scale_inv despite the rejection";
  }
  void dequantize_rejects(const ConstDynTensor& a, const ConstDynTensor& si, const DynTensor& b, ErrorCode code) {
    auto p = dynamic::Fp8DequantizePlan::select(Stream::host(), ddesc());
    ASSERT_TRUE(p);
    expect_rejected(*p, {a, si, b}, code, "Fp8DequantizePlan", {x_});
  }
  void update_rejects(const DynTensor& h, const DynTensor& sc, const DynTensor& si, ErrorCode code) {
    auto p = dynamic::Fp8ScalingUpdatePlan::select(Stream::host(), udesc());
    ASSERT_TRUE(p);
    expect_rejected(*p, {h, sc, si}, code, "Fp8ScalingUpdatePlan", {h_});
  }
  alignas(16) float x_[32] = {};
  alignas(16) uint8_t y_[32] = {};
  alignas(16) float s_[8] = {1.0f, 0, 0, 0, 0, 0, 0, 0};
  alignas(16) float h_[16] = {};
};

TEST_F(Fp8CanImplement, AcceptsTheDescribedTensors) {
  auto q = dynamic::Fp8QuantizePlan::select(Stream::host(), qdesc());
  auto d = dynamic::Fp8DequantizePlan::select(Stream::host(), ddesc());
  auto u = dynamic::Fp8ScalingUpdatePlan::select(Stream::host(), udesc());
  ASSERT_TRUE(q && d && u);
  EXPECT_TRUE(q->can_implement({x(), s1(), y(), s2()}));
  EXPECT_TRUE(q->can_implement({x(), s1(), y(), s2(), s3()}));
  // An omitted scale_inv (null data) is not checked further, whatever its kind and shape say.
  DynTensor omitted = DynTensor::dense(nullptr, K::S8, Shape{5, 2});
  EXPECT_TRUE(q->can_implement({x(), s1(), y(), s2(), omitted}));
  EXPECT_TRUE(d->can_implement({y(), s1(), x()}));
  EXPECT_TRUE(u->can_implement({hist(), s1(), s2()}));
}

TEST_F(Fp8CanImplement, QuantizeOperands) {
  const ErrorCode inv = ErrorCode::InvalidProblem;
  quantize_rejects(DynTensor::dense(x_, K::F32, Shape{3, 4}), s1(), y(), s2(), inv);        // x shape
  quantize_rejects(DynTensor::dense(x_, K::F16, Shape{4, 3}), s1(), y(), s2(), inv);        // x kind
  quantize_rejects(x(), s1(), DynTensor::dense(y_, K::Fp8E5M2, Shape{4, 3}), s2(), inv);   // y kind
  quantize_rejects(x(), s1(), DynTensor::dense(y_, K::Fp8E4M3, Shape{12}), s2(), inv);     // y shape
  quantize_rejects(x(), DynTensor::dense(&s_[0], K::F16, Shape{1}), y(), s2(), inv);       // scale kind
  quantize_rejects(x(), DynTensor::dense(&s_[0], K::F32, Shape{2}), y(), s2(), inv);       // scale shape
  quantize_rejects(x(), DynTensor::dense(&s_[0], K::F32, Shape{}), y(), s2(), inv);        // scale rank 0
  quantize_rejects(x(), s1(), y(), DynTensor::dense(&s_[4], K::F32, Shape{1, 1}), inv);    // amax shape
  quantize_rejects(x(), s1(), y(), DynTensor::dense(&s_[4], K::Bf16, Shape{1}), inv);      // amax kind
  quantize_rejects(x(), s1(), y(), s1(), inv);                                             // amax is scale
  DynTensor yb = y();
  yb.stride[0] = 0;
  quantize_rejects(x(), s1(), yb, s2(), inv);  // y broadcasts
  DynTensor xn = x();
  xn.data = nullptr;
  quantize_rejects(xn, s1(), y(), s2(), inv);
  DynTensor sn = s1();
  sn.data = nullptr;
  quantize_rejects(x(), sn, y(), s2(), inv);
  DynTensor am = s2();
  am.data = reinterpret_cast<char*>(&s_[4]) + 2;
  quantize_rejects(x(), s1(), y(), am, ErrorCode::MisalignedOperand);
  quantize_rejects(x(), s1(), DynTensor::dense(x_, K::Fp8E4M3, Shape{4, 3}), s2(), inv);  // y is x
}

TEST_F(Fp8CanImplement, QuantizeScaleInv) {
  const ErrorCode inv = ErrorCode::InvalidProblem;
  quantize_rejects(x(), s1(), y(), s2(), inv, DynTensor::dense(&s_[6], K::F16, Shape{1}));     // kind
  quantize_rejects(x(), s1(), y(), s2(), inv, DynTensor::dense(&s_[6], K::F32, Shape{2}));     // shape
  quantize_rejects(x(), s1(), y(), s2(), inv, DynTensor::dense(&s_[6], K::F32, Shape{}));      // rank 0
  quantize_rejects(x(), s1(), y(), s2(), inv, DynTensor::dense(&s_[6], K::F32, Shape{1, 1}));  // rank 2
  quantize_rejects(x(), s1(), y(), s2(), inv, s1());                                          // scale_inv is scale
  quantize_rejects(x(), s1(), y(), s2(), inv, s2());                                          // scale_inv is amax
  DynTensor sm = s3();
  sm.data = reinterpret_cast<char*>(&s_[6]) + 1;
  quantize_rejects(x(), s1(), y(), s2(), ErrorCode::MisalignedOperand, sm);
}

TEST_F(Fp8CanImplement, DequantizeOperands) {
  const ErrorCode inv = ErrorCode::InvalidProblem;
  dequantize_rejects(DynTensor::dense(y_, K::Fp8E4M3, Shape{4, 4}), s1(), x(), inv);   // x shape
  dequantize_rejects(DynTensor::dense(y_, K::Fp8E5M2, Shape{4, 3}), s1(), x(), inv);   // x kind
  dequantize_rejects(y(), s1(), DynTensor::dense(x_, K::F64, Shape{4, 3}), inv);       // y kind
  dequantize_rejects(y(), DynTensor::dense(&s_[0], K::F32, Shape{3}), x(), inv);       // scale_inv shape
  dequantize_rejects(y(), DynTensor::dense(&s_[0], K::S32, Shape{1}), x(), inv);       // scale_inv kind
  dequantize_rejects(y(), DynTensor::dense(x_, K::F32, Shape{1}), x(), inv);           // y is scale_inv
  dequantize_rejects(DynTensor::dense(x_, K::Fp8E4M3, Shape{4, 3}), s1(), x(), inv);   // y is x
  DynTensor xb = x();
  xb.stride[1] = 0;
  dequantize_rejects(y(), s1(), xb, inv);
  DynTensor xm = x();
  xm.data = reinterpret_cast<char*>(x_) + 1;
  dequantize_rejects(y(), s1(), xm, ErrorCode::MisalignedOperand);
}

TEST_F(Fp8CanImplement, ScalingUpdateOperands) {
  const ErrorCode inv = ErrorCode::InvalidProblem;
  update_rejects(DynTensor::dense(h_, K::F32, Shape{7}), s1(), s2(), inv);     // history length
  update_rejects(DynTensor::dense(h_, K::F32, Shape{2, 4}), s1(), s2(), inv);  // history rank
  update_rejects(DynTensor::dense(h_, K::F16, Shape{8}), s1(), s2(), inv);     // history kind
  update_rejects(hist(), DynTensor::dense(&s_[0], K::F32, Shape{2}), s2(), inv);
  update_rejects(hist(), s1(), DynTensor::dense(&s_[4], K::F64, Shape{1}), inv);
  update_rejects(hist(), s1(), s1(), inv);                                          // scale is scale_inv
  update_rejects(hist(), DynTensor::dense(h_, K::F32, Shape{1}), s2(), inv);        // history is scale
  update_rejects(hist(), s1(), DynTensor::dense(h_, K::F32, Shape{1}), inv);        // history is scale_inv
  DynTensor hb = hist();
  hb.stride[0] = 0;
  update_rejects(hb, s1(), s2(), inv);
  DynTensor hm = hist();
  hm.data = reinterpret_cast<char*>(h_) + 2;
  update_rejects(hm, s1(), s2(), ErrorCode::MisalignedOperand);
}

TEST(Fp8PlanApi, SkusPrecisionHashAndTypedWrappers) {
  auto q = dynamic::Fp8QuantizePlan::select(Stream::sim(), qdesc().with_output(K::Fp8E5M2));
  ASSERT_TRUE(q);
  EXPECT_EQ(to_string(q->sku()), "fp8_quantize/f32->fp8e5m2/sim/f32/fused_amax");
  EXPECT_TRUE(q->precision_guarantee().deterministic);
  EXPECT_NE(qdesc().hash(), qdesc().with_accumulate_amax(true).hash());
  EXPECT_EQ(qdesc().convention, QuantConvention::PyTorch) << "the default convention";
  EXPECT_NE(qdesc().hash(), qdesc().with_convention(QuantConvention::TransformerEngine).hash());
  EXPECT_NE(qdesc().with_convention(QuantConvention::Exact).hash(),
            qdesc().with_convention(QuantConvention::TransformerEngine).hash());
  EXPECT_FALSE(qdesc() == qdesc().with_convention(QuantConvention::Exact));
  auto te = dynamic::Fp8QuantizePlan::select(Stream::sim(), qdesc().with_convention(QuantConvention::TransformerEngine));
  ASSERT_TRUE(te);
  EXPECT_EQ(to_string(te->sku()), "fp8_quantize/f32->fp8e4m3/sim/f32/fused_amax_skip_nan");
  EXPECT_EQ(te->descriptor().convention, QuantConvention::TransformerEngine);
  EXPECT_NE(udesc().hash(), udesc().with_margin(1).hash());
  EXPECT_NE(ddesc().hash(), ddesc().with_output(K::F16).hash());
  EXPECT_EQ(fp8_max_finite(K::Fp8E4M3), 448.0f);
  EXPECT_EQ(fp8_max_finite(K::Fp8E5M2), 57344.0f);

  // Typed: quantize → update → dequantize on sim.
  alignas(16) float x[6] = {1.0f, -2.0f, 0.5f, 896.0f, -0.25f, 3.0f};
  alignas(16) __nv_fp8_e4m3 y[6];
  alignas(16) float back[6];
  alignas(16) float hist[2] = {0.0f, 0.0f};
  alignas(16) float scale = 0.5f, scale_inv = 2.0f;
  auto tq = Fp8QuantizePlan<float, __nv_fp8_e4m3, 1>::select(Stream::sim(), qdesc(Shape{6}));
  auto tu = Fp8ScalingUpdatePlan::select(Stream::sim(), udesc().with_history_length(2));
  auto td = Fp8DequantizePlan<__nv_fp8_e4m3, float, 1>::select(Stream::sim(), ddesc(Shape{6}));
  ASSERT_TRUE(tq && tu && td);
  const auto xv = TensorRef<float, 1>::dense(x, {6});
  const auto yv = TensorMut<__nv_fp8_e4m3, 1>::dense(y, {6});
  ASSERT_TRUE(tq->run(Stream::sim(), {},
                      {xv, TensorRef<float, 1>::dense(&scale, {1}), yv, TensorMut<float, 1>::dense(hist, {1})}));
  EXPECT_EQ(hist[0], 896.0f);
  EXPECT_EQ(y[3].__x, 0x7E) << "896 · 0.5 = 448";
  // The typed arguments' optional scale_inv: written (1 / 0.5), and can_implement checks it.
  alignas(16) float typed_scale_inv = -1.0f;
  const Fp8QuantizeArgs<float, __nv_fp8_e4m3, 1> with_inv{xv, TensorRef<float, 1>::dense(&scale, {1}), yv,
                                                          TensorMut<float, 1>::dense(hist, {1}),
                                                          TensorMut<float, 1>::dense(&typed_scale_inv, {1})};
  EXPECT_TRUE(tq->can_implement(with_inv));
  ASSERT_TRUE(tq->run(Stream::sim(), {}, with_inv));
  EXPECT_EQ(typed_scale_inv, 2.0f);
  Fp8QuantizeArgs<float, __nv_fp8_e4m3, 1> inv_is_amax = with_inv;
  inv_is_amax.scale_inv = TensorMut<float, 1>::dense(hist, {1});
  expect_error(tq->can_implement(inv_is_amax), ErrorCode::InvalidProblem, "Fp8QuantizePlan");
  ASSERT_TRUE(tu->run(Stream::sim(), {},
                      {TensorMut<float, 1>::dense(hist, {2}), TensorMut<float, 1>::dense(&scale, {1}),
                       TensorMut<float, 1>::dense(&scale_inv, {1})}));
  EXPECT_EQ(scale, 0.5f);
  EXPECT_EQ(scale_inv, 2.0f);
  EXPECT_EQ(hist[0], 0.0f);
  EXPECT_EQ(hist[1], 896.0f);
  ASSERT_TRUE(td->run(Stream::sim(), {},
                      {TensorRef<__nv_fp8_e4m3, 1>::dense(y, {6}), TensorRef<float, 1>::dense(&scale_inv, {1}),
                       TensorMut<float, 1>::dense(back, {6})}));
  for (int i = 0; i < 6; ++i) EXPECT_EQ(back[i], x[i]) << "these values survive the round trip exactly";
}

// The table of docs/ops/fp8.md is the catalog's (baracuda/ops/fp8_ops.def).
TEST(Fp8Docs, TableIsTheCatalog) {
  std::string t = "| plan | op | x | y | computes |\n|---|---|---|---|---|\n";
#define BARACUDA_FP8_PLAN(name, Plan, table, inputs, outputs, doc)                                          \
  t += "| `" #Plan "` | `" #name "` | " + kinds_text(kinds_of_list(inputs{})) + " | " +                      \
       kinds_text(kinds_of_list(outputs{})) + " | " + std::string(doc) + " |\n";
#include "baracuda/ops/fp8_ops.def"
#undef BARACUDA_FP8_PLAN
  expect_doc_table("fp8.md", "fp8_ops.def", "fp8_test", t);
}

}  // namespace
}  // namespace baracuda::test
