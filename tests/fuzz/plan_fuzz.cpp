// libFuzzer target: random descriptors, shapes, strides, operands and workspace sizes for every plan of every
// family, on the host and sim devices (fuzz_support.hpp says what is checked). The scenario adapter reaches
// every plan the profiler has a scenario for (so a new family is fuzzed without a line here) with random
// kinds, shapes and operands; one adapter per family also fuzzes the descriptor's own fields (op selectors
// out of range, parameters, flags) and names the shapes and kinds its operands are drawn from.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>

#include "baracuda/baracuda.hpp"
#include "fuzz_support.hpp"
#include "scenario.hpp"

namespace baracuda::fuzz {
namespace {

/// Fuzzes one selected plan with `n` operands; `call(plan, workspace_or_null, operands)` calls can_implement
/// (null workspace) or run.
template <class Plan, class Call>
void drive(FuzzInput& in, const Stream& s, const Result<Plan>& p, const Pools& pools, size_t n, Call call) {
  if (!p) return;
  exercise(
      in, s, p->workspace_size(), pools, n, [&](const std::vector<DynTensor>& t) { return call(*p, nullptr, t); },
      [&](const Workspace& ws, const std::vector<DynTensor>& t) { return call(*p, &ws, t); });
}

/// Forwards the operands, in order (inputs, then outputs: every family's `Args` convention), as the plan's
/// `Args` to can_implement (ws null) or run.
template <size_t N>
struct Forward {
  const Stream& s;
  template <class Plan>
  Status operator()(const Plan& p, const Workspace* ws, const std::vector<DynTensor>& t) const {
    return [&]<size_t... I>(std::index_sequence<I...>) {
      const typename Plan::Args args{t[I]...};
      return ws == nullptr ? p.can_implement(args) : p.run(s, *ws, args);
    }(std::make_index_sequence<N>{});
  }
};

Scalar scalar(FuzzInput& in) {
  switch (in.u8() % 3) {
    case 0: return Scalar(in.real());
    case 1: return Scalar(in.integer());
    default: return Scalar(in.flag());
  }
}

// ---------------------------------------------------------------------------------------------------
// Elementwise families
// ---------------------------------------------------------------------------------------------------

void fill(FuzzInput& in, const Stream& s) {
  FillDescriptor d;
  d.element = in.kind();
  d.shape = in.shape();
  d.value = scalar(in);
  drive(in, s, dynamic::FillPlan::select(s, d), {{d.shape}, {d.element}}, 1, Forward<1>{s});
}

void cast(FuzzInput& in, const Stream& s) {
  CastDescriptor d;
  d.input = in.kind();
  d.output = in.kind();
  d.shape = in.shape();
  d.saturate_fp8 = in.flag();
  drive(in, s, dynamic::CastPlan::select(s, d), {{d.shape}, {d.input, d.output}}, 2, Forward<2>{s});
}

void affine(FuzzInput& in, const Stream& s) {
  const auto d = AffineDescriptor().with_element(in.kind()).with_shape(in.shape()).with_alpha(in.real()).with_beta(
      in.real());
  drive(in, s, dynamic::AffinePlan::select(s, d), {{d.shape}, {d.element}}, 2, Forward<2>{s});
}

UnaryDescriptor unary_descriptor(FuzzInput& in) {
  UnaryDescriptor d;
  d.kind = in.enum_of<UnaryKind>(kNumUnaryKinds);
  d.element = in.kind();
  d.shape = in.shape();
  for (auto& p : d.params)
    if (in.chance(40)) p = in.real();
  return d;
}

void unary(FuzzInput& in, const Stream& s) {
  const UnaryDescriptor d = unary_descriptor(in);
  const Pools pools{{d.shape}, {d.element}};
  if (in.flag())
    drive(in, s, dynamic::UnaryPlan::select(s, d), pools, 2, Forward<2>{s});
  else
    drive(in, s, dynamic::UnaryBackwardPlan::select(s, d), pools, 3, Forward<3>{s});
}

void binary(FuzzInput& in, const Stream& s) {
  const Shape a = in.shape(), b = in.chance(128) ? a : in.shape();
  const ElementKind k = in.kind();
  auto out = broadcast_shapes(a, b);
  const Pools pools{{a, b, out ? *out : a}, {k, ElementKind::Bool}};
  switch (in.u8() % 3) {
    case 0: {
      const auto d = BinaryDescriptor().with_op(in.enum_of<BinaryOp>(kNumBinaryOps)).with_element(k).with_shapes(a, b);
      drive(in, s, dynamic::BinaryPlan::select(s, d), pools, 3, Forward<3>{s});
      break;
    }
    case 1: {
      const auto d =
          CompareDescriptor().with_op(in.enum_of<CompareOp>(kNumCompareOps)).with_element(k).with_shapes(a, b);
      drive(in, s, dynamic::ComparePlan::select(s, d), pools, 3, Forward<3>{s});
      break;
    }
    default: {
      const auto d = BinaryDescriptor().with_op(in.enum_of<BinaryOp>(kNumBinaryOps)).with_element(k).with_shapes(a, b);
      drive(in, s, dynamic::BinaryBackwardPlan::select(s, d), pools, 5, Forward<5>{s});
    }
  }
}

void ternary(FuzzInput& in, const Stream& s) {
  const Shape a = in.shape(), b = in.chance(100) ? a : in.shape(), c = in.chance(100) ? a : in.shape();
  const ElementKind k = in.kind();
  auto ab = broadcast_shapes(a, b);
  auto out = ab ? broadcast_shapes(*ab, c) : ab;
  const Pools pools{{a, b, c, out ? *out : a}, {k, ElementKind::Bool}};
  const auto td = TernaryDescriptor().with_op(in.enum_of<TernaryOp>(kNumTernaryOps)).with_element(k).with_shapes(
      a, b, c).with_value(in.chance(200) ? 1.0 : in.real());
  const auto wd = WhereDescriptor().with_element(k).with_shapes(a, b, c);
  switch (in.u8() % 4) {
    case 0: drive(in, s, dynamic::TernaryPlan::select(s, td), pools, 4, Forward<4>{s}); break;
    case 1: drive(in, s, dynamic::TernaryBackwardPlan::select(s, td), pools, 7, Forward<7>{s}); break;
    case 2: drive(in, s, dynamic::WherePlan::select(s, wd), pools, 4, Forward<4>{s}); break;
    default: drive(in, s, dynamic::WhereBackwardPlan::select(s, wd), pools, 4, Forward<4>{s});
  }
}

void gated(FuzzInput& in, const Stream& s) {
  GatedActivationDescriptor d;
  d.kind = in.enum_of<GatedActivationKind>(kNumGatedActivationKinds);
  d.input_shape = in.shape();
  d.split_dim = static_cast<int>(in.u8() % 20) - 10;
  d.element = in.kind();
  d.layout = in.enum_of<GateLayout>(3);
  d.alpha = in.real();
  d.limit = in.real();
  const Pools pools{{d.input_shape, d.input_shape.valid() ? d.output_shape() : d.input_shape}, {d.element}};
  if (in.flag())
    drive(in, s, dynamic::GatedActivationPlan::select(s, d), pools, 2, Forward<2>{s});
  else
    drive(in, s, dynamic::GatedActivationBackwardPlan::select(s, d), pools, 3, Forward<3>{s});
}

// ---------------------------------------------------------------------------------------------------
// Quantization
// ---------------------------------------------------------------------------------------------------

QuantGranularity granularity(FuzzInput& in) {
  const int axis = static_cast<int>(in.u8() % 12) - 3;
  switch (in.u8() % 5) {
    case 0: return QuantGranularity::per_tensor();
    case 1: return QuantGranularity::per_channel(axis);
    case 2: return QuantGranularity::per_token();
    case 3: return QuantGranularity::per_group(axis, in.chance(200) ? 1 + in.u8() % 8 : in.integer());
    default: return QuantGranularity{in.enum_of<QuantGranularity::Kind>(4), axis, in.integer()};
  }
}

/// The quantizing families' shape pool: the data shape and its parameter shape.
Pools quant_pools(const Shape& shape, const QuantGranularity& g, std::initializer_list<ElementKind> kinds) {
  Pools p{{shape, Shape{1}}, kinds};
  if (auto ps = g.param_shape("fuzz", shape)) p.shapes.push_back(*ps);
  return p;
}

/// The problem of a quantizing descriptor (quantize, dynamic range), drawn in this order: the element and
/// quantized kinds, the shape, the granularity.
template <class Descriptor>
void draw_quant_problem(FuzzInput& in, Descriptor& d) {
  d.element = in.kind();
  d.quantized = in.kind();
  d.shape = in.shape();
  d.granularity = granularity(in);
}

/// A quantizing descriptor's range: quant_min, then quant_max, each drawn or left at its default.
template <class Descriptor>
void draw_quant_range(FuzzInput& in, Descriptor& d) {
  if (in.chance(40)) d.quant_min = static_cast<int32_t>(in.integer());
  if (in.chance(40)) d.quant_max = static_cast<int32_t>(in.integer());
}

/// The shape pool of a quantizing descriptor, and its kinds with f32 (scales) and s32 (zero points).
template <class Descriptor>
Pools quant_pools(const Descriptor& d) {
  return quant_pools(d.shape, d.granularity, {d.element, d.quantized, ElementKind::F32, ElementKind::S32});
}

void quantize(FuzzInput& in, const Stream& s) {
  QuantizeDescriptor d;
  draw_quant_problem(in, d);
  draw_quant_range(in, d);
  d.grad_factor = in.chance(200) ? 1.0 : in.real();
  d.convention = in.enum_of<QuantConvention>(4);
  d.op = in.enum_of<QuantizeOp>(8);
  drive(in, s, dynamic::QuantizePlan::select(s, d), quant_pools(d), 8, Forward<8>{s});
}

void dynamic_range(FuzzInput& in, const Stream& s) {
  DynamicRangeQuantizeDescriptor d;
  draw_quant_problem(in, d);
  d.mode = in.enum_of<DynamicRangeMode>(2);
  draw_quant_range(in, d);
  d.convention = in.enum_of<QuantConvention>(4);
  drive(in, s, dynamic::DynamicRangeQuantizePlan::select(s, d), quant_pools(d), 4, Forward<4>{s});
}

void fp8(FuzzInput& in, const Stream& s) {
  const Shape shape = in.shape();
  switch (in.u8() % 3) {
    case 0: {
      Fp8QuantizeDescriptor d;
      d.input = in.kind();
      d.output = in.kind();
      d.shape = shape;
      d.accumulate_amax = in.flag();
      d.convention = in.enum_of<QuantConvention>(4);
      drive(in, s, dynamic::Fp8QuantizePlan::select(s, d), {{shape, Shape{1}, Shape{}}, {d.input, d.output,
                                                                                         ElementKind::F32}},
            5, Forward<5>{s});
      break;
    }
    case 1: {
      Fp8DequantizeDescriptor d;
      d.input = in.kind();
      d.output = in.kind();
      d.shape = shape;
      drive(in, s, dynamic::Fp8DequantizePlan::select(s, d),
            {{shape, Shape{1}, Shape{}}, {d.input, d.output, ElementKind::F32}}, 3, Forward<3>{s});
      break;
    }
    default: {
      Fp8ScalingUpdateDescriptor d;
      d.fp8_kind = in.kind();
      d.history_length = in.chance(200) ? 1 + in.u8() % 40 : in.integer();
      d.amax_compute_algo = in.enum_of<AmaxComputeAlgo>(2);
      d.margin = static_cast<int>(in.integer());
      drive(in, s, dynamic::Fp8ScalingUpdatePlan::select(s, d),
            {{Shape{d.history_length}, Shape{1}, Shape{}}, {ElementKind::F32}}, 3, Forward<3>{s});
    }
  }
}

// ---------------------------------------------------------------------------------------------------
// GEMMs and the int4 repack
// ---------------------------------------------------------------------------------------------------

int64_t dim(FuzzInput& in) { return in.chance(220) ? (in.u8() % 5) * 16 + in.u8() % 3 * 8 + (in.chance(40) ? 1 : 0) : in.extent(); }

/// v·f, or v itself when that would overflow (the harness's own arithmetic must not).
int64_t times(int64_t v, int64_t f) { return (v > (int64_t{1} << 40) || v < -(int64_t{1} << 40)) ? v : v * f; }

Pools gemm_pools(int64_t m, int64_t n, int64_t k, std::initializer_list<ElementKind> kinds) {
  return {{Shape{m, k}, Shape{n, k}, Shape{k, n}, Shape{m, n}, Shape{n}, Shape{1}, Shape{m}}, kinds};
}

void int_gemm(FuzzInput& in, const Stream& s) {
  const int64_t m = dim(in), n = dim(in), k = dim(in);
  switch (in.u8() % 3) {
    case 0: {
      IntGemmDescriptor d;
      d.m = m, d.n = n, d.k = k;
      d.a = in.kind(), d.b = in.kind(), d.c = in.kind();
      if (in.chance(60)) d.lda = dim(in), d.ldb = dim(in), d.ldc = dim(in);  // 0 (packed) or any extent
      drive(in, s, dynamic::IntGemmPlan::select(s, d), gemm_pools(m, n, k, {d.a, d.b, d.c}), 3, Forward<3>{s});
      break;
    }
    case 1: {
      QuantizedLinearDescriptor d;
      d.m = m, d.n = n, d.k = k;
      d.element = in.kind(), d.output = in.kind(), d.x_quantized = in.kind(), d.weight_element = in.kind();
      d.mode = in.enum_of<DynamicRangeMode>(2);
      d.weight_scale_granularity = in.enum_of<WeightScaleGranularity>(2);
      d.has_bias = in.flag();
      d.activation = in.enum_of<LinearActivation>(3);
      d.convention = in.enum_of<QuantConvention>(4);
      drive(in, s, dynamic::QuantizedLinearPlan::select(s, d),
            gemm_pools(m, n, k, {d.element, d.output, d.weight_element, ElementKind::F32}), 5, Forward<5>{s});
      break;
    }
    default: {
      SmoothQuantLinearDescriptor d;
      d.m = m, d.n = n, d.k = k;
      d.x_scale = static_cast<float>(in.real());
      d.x_quantized = in.kind(), d.weight_element = in.kind(), d.output = in.kind();
      d.weight_scale_granularity = in.enum_of<WeightScaleGranularity>(2);
      d.has_bias = in.flag();
      d.activation = in.enum_of<LinearActivation>(3);
      drive(in, s, dynamic::SmoothQuantLinearPlan::select(s, d),
            gemm_pools(m, n, k, {d.weight_element, d.output, ElementKind::F32}), 5, Forward<5>{s});
    }
  }
}

/// GemmPlan's descriptor fields: shapes, a small batch, kinds, layouts, leading dimensions (0, packed or a little
/// more, or anything), batch strides (packed, 0, or anything), α/β and the epilogue flags; its seven operands
/// (a, b, c, bias; d, aux, bias_grad) drawn from the matrices' shapes with and without the batch.
void gemm(FuzzInput& in, const Stream& s) {
  GemmDescriptor d;
  d.m = dim(in), d.n = dim(in), d.k = dim(in);
  d.batch = in.chance(200) ? in.u8() % 4 : in.integer();
  d.input = in.kind(), d.output = in.chance(128) ? d.input : in.kind();
  d.layout_a = in.enum_of<MatrixLayout>(2), d.layout_b = in.enum_of<MatrixLayout>(2);
  auto ld = [&] { return in.chance(160) ? 0 : in.chance(200) ? int64_t{in.u8() % 80} : in.integer(); };
  d.lda = ld(), d.ldb = ld(), d.ldc = ld(), d.ldd = ld(), d.ld_aux = ld();
  auto bs = [&] { return in.chance(160) ? kPackedBatchStride : in.chance(128) ? 0 : in.integer(); };
  d.batch_stride_a = bs(), d.batch_stride_b = bs(), d.batch_stride_c = bs(), d.batch_stride_d = bs();
  d.batch_stride_aux = bs();
  d.alpha = in.chance(200) ? 1.0 : in.real();
  d.beta = in.chance(128) ? 0.0 : in.real();
  d.has_bias = in.flag(), d.has_aux = in.flag(), d.bias_grad = in.flag(), d.allow_tf32 = in.flag();
  d.activation = in.enum_of<LinearActivation>(kNumLinearActivations);
  const int64_t b = d.batch;
  const Pools pools{{Shape{d.m, d.k}, Shape{d.k, d.n}, Shape{d.m, d.n}, Shape{b, d.m, d.k}, Shape{b, d.k, d.n},
                     Shape{b, d.m, d.n}, Shape{d.n}, Shape{d.m}},
                    {d.input, d.output}};
  drive(in, s, dynamic::GemmPlan::select(s, d), pools, 7, Forward<7>{s});
}

/// Fp8GemmPlan's descriptor fields: shapes (K often a multiple of 16), A's and B's kinds (mostly FP8), D's and
/// the bias's kinds, leading dimensions (0, packed or a little more, or anything), the scaling (sometimes out of
/// range) and a_scale's layout, α, bias, activation, amax and fast_accum; its eight operands (a, b, a_scale,
/// b_scale, bias, d_scale; d, amax) drawn from the problem's shapes, both scalings' scale shapes among them.
void fp8_gemm(FuzzInput& in, const Stream& s) {
  Fp8GemmDescriptor d;
  d.m = dim(in), d.n = dim(in), d.k = in.chance(160) ? int64_t{in.u8() % 20} * 16 : dim(in);
  const auto fp8_kind = [&] {
    return in.chance(160) ? (in.flag() ? ElementKind::Fp8E4M3 : ElementKind::Fp8E5M2) : in.kind();
  };
  d.a_kind = fp8_kind(), d.b_kind = fp8_kind();
  d.output = in.chance(64) ? fp8_kind() : in.kind();
  auto ld = [&] { return in.chance(160) ? 0 : in.chance(200) ? int64_t{in.u8() % 80} : in.integer(); };
  d.lda = ld(), d.ldb = ld(), d.ldd = ld();
  d.scaling = in.enum_of<Fp8GemmScaling>(2), d.a_scale_m_major = in.flag();
  d.alpha = in.chance(200) ? 1.0 : in.real();
  d.has_bias = in.flag(), d.bias_kind = in.kind();
  d.activation = in.enum_of<LinearActivation>(kNumLinearActivations);
  d.has_amax = in.flag(), d.fast_accum = in.flag();
  const auto blocks = [](int64_t x) { return x < 0 || x > (int64_t{1} << 40) ? x : (x + 127) / 128; };
  const int64_t kb = blocks(d.k), nb = blocks(d.n);
  const Pools pools{{Shape{d.m, d.k}, Shape{d.n, d.k}, Shape{d.m, d.n}, Shape{1}, Shape{1, 1}, Shape{d.m, kb},
                     Shape{nb, kb}, Shape{d.n}},
                    {d.a_kind, d.b_kind, d.output, d.bias_kind, ElementKind::F32}};
  drive(in, s, dynamic::Fp8GemmPlan::select(s, d), pools, 8, Forward<8>{s});
}

/// LinearPlan's and LinearBackwardPlan's descriptor fields: shapes, kinds, layouts and leading dimensions of
/// x, W and dy (0, packed or a little more, or anything), the outputs' leading dimensions, bias, activation,
/// pre-activation, which gradients and TF32; the operands (forward: x, w, bias; y, preactivation; backward: dy,
/// x, w, preactivation; dx, dw, db) drawn from the layer's shapes, with and without leading dimensions.
void linear(FuzzInput& in, const Stream& s) {
  LinearDescriptor d;
  d.rows = dim(in), d.in_features = dim(in), d.out_features = dim(in);
  d.input = in.kind(), d.output = in.chance(128) ? d.input : in.kind();
  d.layout_x = in.enum_of<MatrixLayout>(2), d.layout_w = in.enum_of<MatrixLayout>(2);
  d.layout_dy = in.enum_of<MatrixLayout>(2);
  auto ld = [&] { return in.chance(160) ? 0 : in.chance(200) ? int64_t{in.u8() % 80} : in.integer(); };
  d.ld_x = ld(), d.ld_w = ld(), d.ld_y = ld(), d.ld_preactivation = ld(), d.ld_dy = ld(), d.ld_dx = ld();
  d.ld_dw = ld();
  d.has_bias = in.flag(), d.has_preactivation = in.flag(), d.allow_tf32 = in.chance(32);
  d.activation = in.chance(128) ? LinearActivation::None : in.enum_of<LinearActivation>(kNumLinearActivations);
  d.grad_input = in.flag(), d.grad_weight = in.flag(), d.grad_bias = in.flag();
  const int64_t m = d.rows, k = d.in_features, n = d.out_features, half = m / 2;
  const Pools pools{{Shape{m, k}, Shape{n, k}, Shape{m, n}, Shape{n}, Shape{2, half, k}, Shape{2, half, n}, Shape{k}},
                    {d.input, d.output}};
  if (in.flag())
    drive(in, s, dynamic::LinearPlan::select(s, d), pools, 5, Forward<5>{s});
  else
    drive(in, s, dynamic::LinearBackwardPlan::select(s, d), pools, 7, Forward<7>{s});
}

/// The int4 families' shape pool: every shape their operands take (Int4MarlinGemmArgs, Int4MarlinRepackArgs).
Pools int4_pools(int64_t m, int64_t n, int64_t k, int64_t group, ElementKind t) {
  const int64_t g = group == -1 ? 1 : (group > 0 ? k / group : 1);
  return {{Shape{m, k}, Shape{k / 16, times(n, 2)}, Shape{g, n}, Shape{g, n / 8}, Shape{k}, Shape{m, n}, Shape{k / 8, n},
           Shape{k, n / 8}, Shape{n}},
          {t, ElementKind::S32, ElementKind::F16}};
}

void int4(FuzzInput& in, const Stream& s) {
  const int64_t m = dim(in), n = times(dim(in), 4), k = times(dim(in), 4);
  const int64_t group = in.chance(200) ? std::array<int64_t, 4>{-1, 32, 64, 128}[in.u8() % 4] : in.integer();
  if (in.flag()) {
    Int4GemmDescriptor d;
    d.m = m, d.n = n, d.k = k, d.group = group;
    d.scheme = in.enum_of<Int4Scheme>(2);
    d.act_order = in.flag();
    d.element = in.kind();
    d.has_bias = in.flag();
    drive(in, s, dynamic::Int4MarlinGemmPlan::select(s, d), int4_pools(m, n, k, group, d.element), 7, Forward<7>{s});
    return;
  }
  Int4RepackDescriptor d;
  d.k = k, d.n = n, d.group = group;
  d.format = in.enum_of<Int4CheckpointFormat>(2);
  d.scheme = in.enum_of<Int4Scheme>(2);
  d.act_order = in.flag();
  d.scale_element = in.kind();
  drive(in, s, dynamic::Int4MarlinRepackPlan::select(s, d), int4_pools(m, n, k, group, d.scale_element), 7,
        Forward<7>{s});
}

/// RopePlan's descriptor fields: style, source and scaling (sometimes out of range), kinds, the head shape and
/// rot_dim, the scalings' parameters and the cache's rows; its operands drawn from q's, k's, the positions' and
/// the cache's shapes.
void rope(FuzzInput& in, const Stream& s) {
  RopeDescriptor d;
  d.style = in.enum_of<RopeStyle>(2);
  d.element = in.kind();
  d.position_kind = in.chance(200) ? (in.flag() ? ElementKind::S32 : ElementKind::S64) : in.kind();
  d.num_tokens = in.extent(), d.num_heads = in.extent(), d.num_kv_heads = in.extent();
  d.head_dim = in.chance(160) ? 2 * (1 + in.u8() % 40) : in.extent();
  d.rot_dim = in.chance(128) ? 0 : in.integer();
  d.inverse = in.flag();
  d.source = in.enum_of<CosSinSource>(2);
  d.cache_kind = in.chance(128) ? ElementKind::F32 : in.kind();
  d.max_position = in.chance(200) ? 1 + in.u8() % 64 : in.integer();
  d.theta = in.chance(160) ? 10000.0 : in.real();
  d.scaling = in.enum_of<RopeScaling>(5);
  d.factor = in.chance(128) ? 1.0 + in.u8() % 40 : in.real();
  d.low_freq_factor = in.chance(200) ? 1.0 : in.real();
  d.high_freq_factor = in.chance(200) ? 4.0 : in.real();
  d.original_max_position = in.chance(200) ? 4096 : in.integer();
  d.beta_fast = in.chance(200) ? 32.0 : in.real();
  d.beta_slow = in.chance(200) ? 1.0 : in.real();
  d.mscale = in.chance(200) ? 0.0 : in.real();
  d.mscale_all_dim = in.chance(200) ? 0.0 : in.real();
  d.attention_factor = in.chance(200) ? 0.0 : in.real();
  d.truncate = in.flag();
  const int64_t t = d.num_tokens, dim = d.head_dim;
  const Pools pools{{Shape{t}, Shape{d.max_position, d.rotary_dim()}, Shape{t, d.num_heads, dim},
                     Shape{t, d.num_kv_heads, dim}},
                    {d.element, d.position_kind, d.cache_kind}};
  drive(in, s, dynamic::RopePlan::select(s, d), pools, 6, Forward<6>{s});
}

/// KvCacheAppendPlan's descriptor fields: the kinds (the cache's and the slots' often valid ones), the scale
/// layout (sometimes out of range), tokens, heads, head dim and pages; its operands drawn from key's, the
/// slots', the scales' and the caches' shapes.
void kv_cache(FuzzInput& in, const Stream& s) {
  KvCacheAppendDescriptor d;
  d.element = in.kind();
  d.cache_kind = in.chance(128) ? (in.flag() ? ElementKind::Fp8E4M3 : d.element) : in.kind();
  d.slot_kind = in.chance(200) ? (in.flag() ? ElementKind::S32 : ElementKind::S64) : in.kind();
  d.scale_layout = in.enum_of<KvScaleLayout>(2);
  d.num_tokens = in.extent(), d.num_kv_heads = in.extent(), d.head_dim = in.extent();
  d.num_blocks = in.extent(), d.block_size = in.chance(128) ? 16 : in.extent();
  const Pools pools{{d.token_shape(), Shape{d.num_tokens}, d.scale_shape(), d.cache_shape()},
                    {d.element, d.slot_kind, ElementKind::F32, d.cache_kind}};
  drive(in, s, dynamic::KvCacheAppendPlan::select(s, d), pools, 7, Forward<7>{s});
}

/// PagedDecodePlan's descriptor fields: the kinds (the cache's often q's, fp8e4m3 or s8), the scale layout
/// (sometimes out of range), batch, q_len, heads, kv heads, head dim (often a supported one), pages, page size
/// (often 16), table width, window, scale, lse, splits and the kernel (sometimes out of range); its operands drawn from q's, the caches', the block
/// table's, the lengths', the scales' and lse's shapes. Random tables and lengths are data: the kernels clamp
/// the lengths and mask page ids outside the cache.
void paged_decode(FuzzInput& in, const Stream& s) {
  PagedDecodeDescriptor d;
  d.element = in.chance(160) ? (in.flag() ? ElementKind::F16 : ElementKind::Bf16) : in.kind();
  d.cache_kind = in.chance(160) ? (in.flag() ? d.element : in.flag() ? ElementKind::Fp8E4M3 : ElementKind::S8)
                                : in.kind();
  d.scale_layout = in.enum_of<KvScaleLayout>(2);
  d.batch = in.extent(), d.q_len = in.chance(160) ? 1 + in.u8() % 4 : in.extent();
  d.heads = in.extent(), d.kv_heads = in.chance(128) ? 1 : in.extent();
  d.head_dim = in.chance(160) ? int64_t{64} << (in.u8() % 3) : in.extent();
  d.num_blocks = in.extent(), d.block_size = in.chance(160) ? 16 : in.extent();
  d.max_blocks_per_seq = in.extent();
  d.window_left = in.chance(200) ? -1 : in.integer();
  d.softmax_scale = in.chance(200) ? 0.0 : in.real();
  d.return_lse = in.flag();
  d.num_splits = in.chance(128) ? in.u8() % 5 : in.integer();
  d.kernel = in.enum_of<PagedDecodeKernel>(3);
  const Pools pools{{d.q_shape(), d.cache_shape(), Shape{d.batch, d.max_blocks_per_seq}, Shape{d.batch},
                     d.scale_shape(), Shape{d.tokens(), d.heads}},
                    {d.element, d.cache_kind, ElementKind::S32, ElementKind::F32}};
  drive(in, s, dynamic::PagedDecodePlan::select(s, d), pools, 9, Forward<9>{s});
}

/// PagedPrefillPlan's descriptor fields: paged_decode's cache fields (kinds, scale layout, heads, head dim, pages),
/// batch, the packed tokens and longest chunk, causal, window, scale, lse and the query tile; its ten operands drawn from q's, the
/// caches', the table's, the lengths', cu_seqlens_q's, the scales' and lse's shapes. Random tables, lengths and
/// offsets are data: the kernels clamp them and mask page ids outside the cache.
void paged_prefill(FuzzInput& in, const Stream& s) {
  PagedPrefillDescriptor d;
  d.element = in.chance(160) ? (in.flag() ? ElementKind::F16 : ElementKind::Bf16) : in.kind();
  d.cache_kind = in.chance(160) ? (in.flag() ? d.element : in.flag() ? ElementKind::Fp8E4M3 : ElementKind::S8)
                                : in.kind();
  d.scale_layout = in.enum_of<KvScaleLayout>(2);
  d.batch = in.extent(), d.total_q = in.extent(), d.max_seqlen_q = in.extent();
  d.heads = in.extent(), d.kv_heads = in.chance(128) ? 1 : in.extent();
  d.head_dim = in.chance(160) ? int64_t{64} << (in.u8() % 3) : in.extent();
  d.num_blocks = in.extent(), d.block_size = in.chance(160) ? 16 : in.extent();
  d.max_blocks_per_seq = in.extent();
  d.causal = in.flag();
  d.window_left = in.chance(200) ? -1 : in.integer();
  d.softmax_scale = in.chance(200) ? 0.0 : in.real();
  d.return_lse = in.flag();
  d.tile = in.enum_of<FlashAttentionTile>(3);
  const Pools pools{{d.q_shape(), d.cache_shape(), Shape{d.batch, d.max_blocks_per_seq}, Shape{d.batch},
                     Shape{d.batch == INT64_MAX ? d.batch : d.batch + 1}, d.scale_shape(), Shape{d.heads, d.total_q}},
                    {d.element, d.cache_kind, ElementKind::S32, ElementKind::F32}};
  drive(in, s, dynamic::PagedPrefillPlan::select(s, d), pools, 10, Forward<10>{s});
}

/// FlashAttentionBackwardPlan's descriptor fields: the kind, batch, lengths, heads, kv heads, head dim (often a
/// supported one), packed batches and their totals, causal, windows (sometimes out of range) and the scale; its
/// eleven operands drawn from q's, k's, lse's (both layouts) and cu_seqlens' shapes. Random lse and cu_seqlens are
/// data: the kernels use the effective offsets, and any lse gives finite or infinite values, never a fault.
void attention_backward(FuzzInput& in, const Stream& s) {
  FlashAttentionDescriptor d;
  d.element = in.chance(200) ? (in.flag() ? ElementKind::F16 : ElementKind::Bf16) : in.kind();
  d.batch = in.extent(), d.seqlen_q = in.extent(), d.seqlen_k = in.extent();
  d.heads = in.extent(), d.kv_heads = in.chance(128) ? 1 : in.extent();
  d.head_dim = in.chance(200) ? (in.flag() ? 64 : in.flag() ? 96 : 128) : in.extent();
  if (in.chance(96)) d.with_varlen(in.extent(), in.extent(), d.seqlen_q, d.seqlen_k);
  d.causal = in.flag();
  d.window_left = in.chance(160) ? -1 : in.integer();
  d.window_right = in.chance(160) ? -1 : in.integer();
  d.softmax_scale = in.chance(200) ? 0.0 : in.real();
  d.tile = in.enum_of<FlashAttentionTile>(3);  // the forward's; the backward checks its range only
  // T_q and T_k as tokens_q()/tokens_k() give them, saturated (random extents may overflow B·S and B + 1)
  auto sat = [](int64_t a, int64_t b) {
    int64_t r;
    return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
  };
  const int64_t tq = d.varlen ? d.total_q : sat(d.batch, d.seqlen_q);
  const int64_t tk = d.varlen ? d.total_k : sat(d.batch, d.seqlen_k);
  const Shape q{tq, d.heads, d.head_dim}, k{tk, d.kv_heads, d.head_dim};
  const Pools pools{{q, k, Shape{d.batch, d.heads, d.seqlen_q}, Shape{d.heads, tq},
                     Shape{d.batch == INT64_MAX ? d.batch : d.batch + 1}},
                    {d.element, ElementKind::F32, ElementKind::S32}};
  drive(in, s, dynamic::FlashAttentionBackwardPlan::select(s, d), pools, 11, Forward<11>{s});
}

// ---------------------------------------------------------------------------------------------------
// Every profiler scenario
// ---------------------------------------------------------------------------------------------------

inline constexpr double kMaxScenarioBytes = 256 * 1024;  // a prepared scenario's operands, about

/// A scenario's problem with random kinds and shape (often one of its defaults): `select` sees it whatever it
/// is; a small valid one is prepared (the plan and its operands), and the plan is exercised on operands drawn
/// from the prepared ones' shapes and kinds.
void scenario(FuzzInput& in, const Stream& s) {
  const auto all = profiler::scenarios();
  const profiler::Scenario& sc = all[in.pick(all.size())];
  profiler::Problem p;
  const std::vector<profiler::Problem> kinds = sc.default_kinds ? sc.default_kinds(sc.variant) : std::vector<profiler::Problem>{};
  if (!kinds.empty() && !in.chance(48)) p = kinds[in.pick(kinds.size())];
  p.dtype = in.chance(32) ? in.kind() : p.dtype;
  p.out_dtype = in.chance(32) ? in.kind() : sc.output_kind(p.dtype, p.out_dtype);
  const std::vector<Shape> shapes = sc.default_shapes(DeviceKind::Sim);
  p.shape = in.chance(64) || shapes.empty() ? in.shape() : shapes[in.pick(shapes.size())];
  if (p.shape.rank > 0 && in.chance(128)) p.shape.dims[p.shape.rank - 1] = in.extent();  // ragged
  p.strided = in.flag();
  p.variant = sc.variant;
  // Only the problems the profiler's --shape can give (rank 1 to 8, a valid shape): its scenarios are written
  // for those.
  if (p.shape.rank < 1 || !p.shape.valid()) return;
  if (!sc.select(s, p)) return;  // prepare would stop at the same error
  int64_t extent_product = 1;  // of the extents taken as at least 1: a scenario may size an operand by one alone
  for (int d = 0; d < p.shape.rank && extent_product <= kMaxOperandElements; ++d)
    extent_product *= std::clamp<int64_t>(p.shape.dims[d], 1, kMaxOperandElements + 1);
  if (extent_product > kMaxOperandElements) return;
  // A short shape takes a scenario's default sizes for the rest (attention: 32 heads of 128), so small extents can
  // still mean megabytes of operands, which the prepared instance fills value by value (seconds each under the
  // fuzzer's instrumentation): the bytes a run moves bound them.
  if (!(sc.traffic(p).bytes <= kMaxScenarioBytes)) return;
  auto inst = sc.prepare(s, p);
  if (!inst) return;
  const std::vector<DynTensor> views = (*inst)->views();
  Pools pools;
  for (const DynTensor& v : views) {
    pools.shapes.push_back(v.shape);
    pools.kinds.push_back(v.kind);
  }
  const profiler::Instance& plan = **inst;
  exercise(
      in, s, plan.workspace().size, pools, views.size(),
      [&](const std::vector<DynTensor>& t) { return plan.check_views(t); },
      [&](const Workspace& ws, const std::vector<DynTensor>& t) { return plan.run_views(s, ws, t); });
}

using Adapter = void (*)(FuzzInput&, const Stream&);
constexpr Adapter kAdapters[] = {fill,     cast, affine,   unary, binary, ternary, gated,    quantize,
                                 dynamic_range, fp8,  int_gemm, gemm,  linear, int4,    fp8_gemm, rope, kv_cache,
                                 paged_decode, paged_prefill, attention_backward, scenario};

}  // namespace
}  // namespace baracuda::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace baracuda;
  fuzz::FuzzInput in(data, size);
  const Stream stream = in.flag() ? Stream::sim() : Stream::host();
  fuzz::kAdapters[in.pick(std::size(fuzz::kAdapters))](in, stream);
  return 0;
}
