// NormPlan's fused variants: the residual add and the quantized outputs (static int8, dynamic per-token int8
// symmetric and asymmetric, FP8 E4M3 with amax) under every convention that applies, bit for bit against the
// unfused chain on the same device (BinaryPlan add → NormPlan → QuantizePlan / DynamicRangeQuantizePlan /
// Fp8QuantizePlan), on rows served by the row kernel (a warp, a block) and by the composed path (rows over
// kNormRowBytes); sim and cuda also against the host within a step of the quantization; in-place h and y;
// empty problems.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "baracuda/baracuda.hpp"
#include "support/devices.hpp"
#include "support/numeric.hpp"
#include "support/random.hpp"
#include "support/tensor.hpp"

namespace baracuda::test {
namespace {

using K = ElementKind;

/// The operands of one problem, as element bytes.
struct Inputs {
  std::vector<uint8_t> x, residual, w, b;
  double static_scale = 0;  ///< exact in f32
  std::optional<int32_t> zero_point;
  float fp8_scale = 0;
};

/// What a run wrote, as bytes (empty when the variant has no such output).
struct Outputs {
  std::vector<uint8_t> h, y, mean, rstd, q, q_scale, q_zero_point, amax;
};

ElementKind stats_kind(K k) { return k == K::F64 ? K::F64 : K::F32; }
Shape rows_of(const Shape& s) {
  Shape r = s;
  --r.rank;
  return r;
}

/// Allocates (and fills) device tensors, remembering whether every allocation succeeded.
struct Arena {
  explicit Arena(const Stream& s) : stream(s) {}
  const Stream& stream;
  std::vector<DeviceTensor> held;
  bool ok = true;
  DynTensor make(K k, const Shape& s, std::vector<uint8_t> init = {}) {
    if (init.empty()) init = sentinel_storage(k, s.numel());
    auto t = make_device_tensor(stream, k, s, dense_layout(s), init);
    if (!t) {
      ok = false;
      return {};
    }
    held.push_back(std::move(t).value());
    return held.back().view;
  }
  std::vector<uint8_t> bytes(const DynTensor& v) const {
    for (const auto& t : held)
      if (t.view.data == v.data) return download(t);
    return {};
  }
};

std::vector<uint8_t> encode_one(K k, double v) {
  std::vector<uint8_t> b(static_cast<size_t>(element_bytes(k)));
  encode_exact(k, v, b.data());
  return b;
}

/// The fused plan: NormPlan with `d`'s residual and quantized output, y, mean and rstd kept.
Outputs run_fused(const Stream& stream, const NormDescriptor& d, const Inputs& in) {
  Outputs o;
  auto plan = dynamic::NormPlan::select(stream, d);
  EXPECT_TRUE(plan) << plan.status().to_string();
  if (!plan) return o;
  Arena a(stream);
  const K k = d.element, sk = stats_kind(k);
  const Shape& s = d.shape;
  const Shape h{s.dims[s.rank - 1]}, rows = rows_of(s), one{1};
  dynamic::NormArgs args;
  args.x = a.make(k, s, in.x);
  if (d.has_weight) args.weight = a.make(k, h, in.w);
  if (d.has_bias) args.bias = a.make(k, h, in.b);
  args.y = a.make(k, s);
  if (d.op == NormOp::LayerNorm) args.mean = a.make(sk, rows);
  args.rstd = a.make(sk, rows);
  if (d.has_residual) args.residual = a.make(k, s, in.residual), args.h = a.make(k, s);
  if (d.quant != NormQuant::None) args.q = a.make(*plan->quant_kind(), s);
  if (d.quant == NormQuant::Static) {
    args.scale = a.make(sk, one, encode_one(sk, in.static_scale));
    if (in.zero_point) args.zero_point = a.make(K::S32, one, encode_one(K::S32, *in.zero_point));
  }
  if (d.quant == NormQuant::Dynamic) {
    args.q_scale = a.make(sk, rows);
    args.q_zero_point = a.make(K::S32, rows);
  }
  if (d.quant == NormQuant::Fp8) args.scale = a.make(K::F32, one, encode_one(K::F32, in.fp8_scale));
  if (d.quant == NormQuant::Fp8) args.amax = a.make(K::F32, one);
  auto ws = Buffer::allocate(stream, std::max<size_t>(plan->workspace_size(), 1));
  EXPECT_TRUE(a.ok && ws);
  if (!a.ok || !ws) return o;
  const Status st = plan->run(stream, Workspace(ws->data(), plan->workspace_size()), args);
  EXPECT_TRUE(st) << st.to_string();
  o.h = a.bytes(args.h), o.y = a.bytes(args.y), o.mean = a.bytes(args.mean), o.rstd = a.bytes(args.rstd);
  o.q = a.bytes(args.q), o.q_scale = a.bytes(args.q_scale), o.q_zero_point = a.bytes(args.q_zero_point);
  o.amax = a.bytes(args.amax);
  return o;
}

/// The same through the unfused plans: BinaryPlan add, NormPlan without the fused parts, the quantize plan.
Outputs run_chain(const Stream& stream, const NormDescriptor& d, const Inputs& in) {
  Outputs o;
  Arena a(stream);
  const K k = d.element, sk = stats_kind(k);
  const Shape& s = d.shape;
  const Shape h{s.dims[s.rank - 1]}, rows = rows_of(s), one{1};
  const DynTensor x = a.make(k, s, in.x);
  DynTensor src = x;
  if (d.has_residual) {
    auto add =
        dynamic::BinaryPlan::select(stream, BinaryDescriptor().with_op(BinaryOp::Add).with_element(k).with_shape(s));
    EXPECT_TRUE(add);
    if (!add) return o;
    src = a.make(k, s);
    const DynTensor r = a.make(k, s, in.residual);
    EXPECT_TRUE(a.ok && add->run(stream, Workspace{}, {x, r, src}));
  }
  NormDescriptor plain = d;
  plain.has_residual = false, plain.quant = NormQuant::None;
  auto norm = dynamic::NormPlan::select(stream, plain);
  EXPECT_TRUE(norm);
  if (!norm) return o;
  dynamic::NormArgs na;
  na.x = src;
  if (d.has_weight) na.weight = a.make(k, h, in.w);
  if (d.has_bias) na.bias = a.make(k, h, in.b);
  na.y = a.make(k, s);
  if (d.op == NormOp::LayerNorm) na.mean = a.make(sk, rows);
  na.rstd = a.make(sk, rows);
  auto ws = Buffer::allocate(stream, std::max<size_t>(norm->workspace_size(), 1));
  EXPECT_TRUE(a.ok && ws);
  if (!a.ok || !ws) return o;
  EXPECT_TRUE(norm->run(stream, Workspace(ws->data(), norm->workspace_size()), na));
  if (d.has_residual) o.h = a.bytes(src);
  o.y = a.bytes(na.y), o.mean = a.bytes(na.mean), o.rstd = a.bytes(na.rstd);
  const ConstDynTensor y = na.y;
  if (d.quant == NormQuant::Static) {
    auto p = dynamic::QuantizePlan::select(stream, QuantizeDescriptor()
                                                       .with_element(k)
                                                       .with_quantized(K::S8)
                                                       .with_shape(s)
                                                       .with_granularity(QuantGranularity::per_tensor())
                                                       .with_convention(d.convention));
    EXPECT_TRUE(p);
    if (!p) return o;
    dynamic::QuantizeArgs qa;
    qa.x = y, qa.y = a.make(K::S8, s), qa.scale = a.make(sk, one, encode_one(sk, in.static_scale));
    qa.zero_point = a.make(K::S32, one, encode_one(K::S32, in.zero_point.value_or(0)));
    auto qws = Buffer::allocate(stream, std::max<size_t>(p->workspace_size(), 1));
    EXPECT_TRUE(a.ok && qws && p->run(stream, Workspace(qws->data(), p->workspace_size()), qa));
    o.q = a.bytes(qa.y);
  } else if (d.quant == NormQuant::Dynamic) {
    auto p = dynamic::DynamicRangeQuantizePlan::select(
        stream, DynamicRangeQuantizeDescriptor()
                    .with_element(k)
                    .with_quantized(K::S8)
                    .with_shape(s)
                    .with_granularity(s.rank >= 2 ? QuantGranularity::per_token() : QuantGranularity::per_tensor())
                    .with_mode(d.dynamic_mode)
                    .with_convention(d.convention));
    EXPECT_TRUE(p);
    if (!p) return o;
    const Shape params = p->param_shape();
    const DynTensor q = a.make(K::S8, s), sc = a.make(sk, params), zp = a.make(K::S32, params);
    auto qws = Buffer::allocate(stream, std::max<size_t>(p->workspace_size(), 1));
    EXPECT_TRUE(a.ok && qws && p->run(stream, Workspace(qws->data(), p->workspace_size()), {y, q, sc, zp}));
    o.q = a.bytes(q), o.q_scale = a.bytes(sc), o.q_zero_point = a.bytes(zp);
  } else if (d.quant == NormQuant::Fp8) {
    auto p = dynamic::Fp8QuantizePlan::select(
        stream,
        Fp8QuantizeDescriptor().with_input(k).with_output(K::Fp8E4M3).with_shape(s).with_convention(d.convention));
    EXPECT_TRUE(p);
    if (!p) return o;
    const DynTensor q = a.make(K::Fp8E4M3, s), amax = a.make(K::F32, one);
    const DynTensor scale = a.make(K::F32, one, encode_one(K::F32, in.fp8_scale));
    EXPECT_TRUE(a.ok && p->run(stream, Workspace{}, {y, scale, q, amax}));
    o.q = a.bytes(q), o.amax = a.bytes(amax);
  }
  return o;
}

struct Case {
  NormOp op;
  K kind;
  Shape shape;
  bool residual;
  NormQuant quant;
  DynamicRangeMode mode;
  QuantConvention convention;
  DeviceKind device;
  std::string name;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

std::vector<Case> cases() {
  struct Q {
    NormQuant quant;
    DynamicRangeMode mode;
    QuantConvention convention;
    const char* name;
  };
  using C = QuantConvention;
  const Q quants[] = {{NormQuant::None, DynamicRangeMode::Symmetric, C::PyTorch, "plain"},
                      {NormQuant::Static, DynamicRangeMode::Symmetric, C::PyTorch, "static_pytorch"},
                      {NormQuant::Static, DynamicRangeMode::Symmetric, C::Exact, "static_exact"},
                      {NormQuant::Static, DynamicRangeMode::Symmetric, C::Vllm, "static_vllm"},
                      {NormQuant::Dynamic, DynamicRangeMode::Symmetric, C::PyTorch, "dynamic_sym_pytorch"},
                      {NormQuant::Dynamic, DynamicRangeMode::Symmetric, C::Vllm, "dynamic_sym_vllm"},
                      {NormQuant::Dynamic, DynamicRangeMode::Asymmetric, C::PyTorch, "dynamic_asym_pytorch"},
                      {NormQuant::Dynamic, DynamicRangeMode::Asymmetric, C::Vllm, "dynamic_asym_vllm"},
                      {NormQuant::Fp8, DynamicRangeMode::Symmetric, C::PyTorch, "fp8_pytorch"},
                      {NormQuant::Fp8, DynamicRangeMode::Symmetric, C::TransformerEngine, "fp8_te"}};
  // A warp per row, a block per row, and rows over kNormRowBytes in every kind (the composed path).
  const std::pair<const char*, Shape> shapes[] = {
      {"warp_9x200", Shape{9, 200}}, {"block_3x2x2500", Shape{3, 2, 2500}}, {"long_2x33000", Shape{2, 33000}}};
  std::vector<Case> v;
  for (const Q& q : quants)
    for (K k : {K::F32, K::Bf16, K::F16, K::F64}) {
      const bool vllm_or_te = q.convention == C::Vllm || q.convention == C::TransformerEngine;
      if (k == K::F64 && vllm_or_te) continue;  // neither models f64
      for (size_t si = 0; si < std::size(shapes); ++si)
        for (DeviceKind dev : kTestDevices) {
          const NormOp op = (si + static_cast<size_t>(k)) % 2 ? NormOp::LayerNorm : NormOp::RmsNorm;
          const bool residual = q.quant == NormQuant::None || si != 1;
          v.push_back({op, k, shapes[si].second, residual, q.quant, q.mode, q.convention, dev,
                       std::string(q.name) + "_" + std::string(to_string(op)) + "_" + std::string(to_string(k)) + "_" +
                           shapes[si].first + (residual ? "_residual_" : "_") + std::string(to_string(dev))});
        }
    }
  return v;
}

Inputs make_inputs(const NormDescriptor& d, uint64_t seed) {
  Inputs in;
  std::vector<double> unused;
  const K k = d.element;
  const int64_t n = d.shape.numel(), h = d.shape.dims[d.shape.rank - 1];
  in.x = random_floats(k, n, -2, 3, seed, &unused);
  in.residual = random_floats(k, n, -1, 1, seed + 1, &unused);
  in.w = random_floats(k, h, 0.5, 1.5, seed + 2, &unused);
  in.b = random_floats(k, h, -0.5, 0.5, seed + 3, &unused);
  in.static_scale = static_cast<float>(0.0297);  // |y| ≲ 4.5: most values in range, some clamped
  if (d.convention != QuantConvention::PyTorch) in.zero_point = 3;
  in.fp8_scale = 96.0f;  // |y · scale| past 448 saturates
  return in;
}

/// Integer bytes as values (s8 or s32).
std::vector<int64_t> ints(K k, const std::vector<uint8_t>& b) {
  std::vector<int64_t> v;
  for (size_t i = 0; i < b.size(); i += static_cast<size_t>(element_bytes(k)))
    v.push_back(static_cast<int64_t>(decode_value(k, &b[i])));
  return v;
}

class NormFusedSweep : public ::testing::TestWithParam<Case> {};

TEST_P(NormFusedSweep, EqualsTheUnfusedChainBitForBit) {
  const Case& c = GetParam();
  BARACUDA_TEST_STREAM(stream, c.device);
  NormDescriptor d = NormDescriptor()
                         .with_op(c.op)
                         .with_element(c.kind)
                         .with_shape(c.shape)
                         .with_bias(c.op == NormOp::LayerNorm)
                         .with_residual(c.residual)
                         .with_quant(c.quant)
                         .with_dynamic_mode(c.mode)
                         .with_convention(c.convention);
  auto probe = dynamic::NormPlan::select(stream, d);
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(probe, c.device);
  ASSERT_TRUE(probe) << probe.status().to_string();
  const bool long_rows = c.shape.dims[c.shape.rank - 1] * element_bytes(c.kind) > kNormRowBytes;
  EXPECT_EQ(probe->sku().variant.find("rows_") == 0, c.device != DeviceKind::Host && !long_rows)
      << probe->sku().variant;
  const Inputs in = make_inputs(d, 11);
  const Outputs fused = run_fused(stream, d, in);
  const Outputs chain = run_chain(stream, d, in);
  EXPECT_EQ(fused.h, chain.h);
  EXPECT_EQ(fused.y, chain.y);
  EXPECT_EQ(fused.mean, chain.mean);
  EXPECT_EQ(fused.rstd, chain.rstd);
  EXPECT_EQ(fused.q, chain.q);
  EXPECT_EQ(fused.q_scale, chain.q_scale);
  EXPECT_EQ(fused.q_zero_point, chain.q_zero_point);
  EXPECT_EQ(fused.amax, chain.amax);
  if (c.device == DeviceKind::Host) return;
  // Against the host: y within the statistics' rounding, so q within one step where y sits near a rounding
  // boundary of the quantization.
  const Outputs host = run_fused(Stream::host(), d, in);
  EXPECT_EQ(fused.h, host.h);
  if (c.quant == NormQuant::None || c.quant == NormQuant::Fp8) return;
  const std::vector<int64_t> got = ints(K::S8, fused.q), want = ints(K::S8, host.q);
  ASSERT_EQ(got.size(), want.size());
  int64_t off = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_LE(std::llabs(got[i] - want[i]), 1) << i;
    off += got[i] != want[i];
  }
  EXPECT_LE(off, static_cast<int64_t>(got.size()) / 50);  // rare: a boundary case, not a systematic shift
}

INSTANTIATE_TEST_SUITE_P(Fused, NormFusedSweep, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& i) { return i.param.name; });

class NormFusedDevices : public ::testing::TestWithParam<DeviceKind> {};

/// vLLM's fused_add_rms_norm writes h over the residual and y over x: the same as out of place.
TEST_P(NormFusedDevices, InPlaceResidualAndOutput) {
  BARACUDA_TEST_STREAM(stream, GetParam());
  for (const Shape& s : {Shape{5, 300}, Shape{2, 33000}}) {
    const NormDescriptor d = NormDescriptor().with_element(K::Bf16).with_shape(s).with_residual(true);
    auto plan = dynamic::NormPlan::select(stream, d);
    BARACUDA_SKIP_IF_NO_CUDA_KERNELS(plan, GetParam());
    ASSERT_TRUE(plan);
    const Inputs in = make_inputs(d, 5);
    const Outputs want = run_fused(stream, d, in);
    Arena a(stream);
    const DynTensor x = a.make(K::Bf16, s, in.x), r = a.make(K::Bf16, s, in.residual);
    const DynTensor w = a.make(K::Bf16, Shape{s.dims[1]}, in.w);
    auto ws = Buffer::allocate(stream, std::max<size_t>(plan->workspace_size(), 1));
    ASSERT_TRUE(a.ok && ws);
    dynamic::NormArgs args;
    args.x = x, args.weight = w, args.y = x, args.residual = r, args.h = r;
    const Status st = plan->run(stream, Workspace(ws->data(), plan->workspace_size()), args);
    ASSERT_TRUE(st) << st.to_string();
    EXPECT_EQ(a.bytes(x), want.y);
    EXPECT_EQ(a.bytes(r), want.h);
  }
}

/// Empty problems: the quantize plans' own rules (an empty row's scale is 1, an empty tensor's amax 0).
TEST_P(NormFusedDevices, EmptyRowsFollowTheQuantizePlans) {
  BARACUDA_TEST_STREAM(stream, GetParam());
  for (NormQuant q : {NormQuant::Dynamic, NormQuant::Fp8}) {
    const NormDescriptor d = NormDescriptor().with_shape(Shape{3, 0}).with_quant(q);
    auto plan = dynamic::NormPlan::select(stream, d);
    BARACUDA_SKIP_IF_NO_CUDA_KERNELS(plan, GetParam());
    ASSERT_TRUE(plan);
    const Outputs o = run_fused(stream, d, make_inputs(d, 1));
    const Outputs c = run_chain(stream, d, make_inputs(d, 1));
    EXPECT_EQ(o.q_scale, c.q_scale);
    EXPECT_EQ(o.amax, c.amax);
    if (q == NormQuant::Dynamic) {
      ASSERT_EQ(o.q_scale.size(), 12u);
      for (int i = 0; i < 3; ++i) EXPECT_EQ(decode_value(K::F32, &o.q_scale[4 * static_cast<size_t>(i)]), 1.0);
    } else {
      ASSERT_EQ(o.amax.size(), 4u);
      EXPECT_EQ(decode_value(K::F32, o.amax.data()), 0.0);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, NormFusedDevices, ::testing::ValuesIn(kTestDevices),
                         [](const ::testing::TestParamInfo<DeviceKind>& i) { return std::string(to_string(i.param)); });

}  // namespace
}  // namespace baracuda::test
