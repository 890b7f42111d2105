// The int4_marlin_repack family (Int4MarlinRepackPlan: GPTQ / AWQ checkpoint tensors → Marlin's, on a device).
// - On every device (host, sim, cuda — skipped with the reason when no GPU is usable): checkpoints packed by
//   gptq_pack / awq_pack from int4 weights quantized from non-uniform f32 weights, every group size, GPTQ with
//   and without act-order (and act-order with a single group, planned without), AWQ, f16 and bf16 scales,
//   N of one and of several 64-column runs; the outputs must equal, byte for byte, the host converters
//   gptq_to_marlin / awq_to_marlin (themselves checked against independent golden data) with the scales
//   rounded once to bf16 here.
// - The golden checkpoints of tests/data/w4a16_golden.json (independent numpy) through the plan on every device
//   give the golden Marlin tensors byte for byte.
// - The typed Int4MarlinRepackPlan<TScale> on host and sim against the host converters.
// - Every select / can_implement / run rejection; empty problems; the SKU and guarantees.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "baracuda/baracuda.hpp"
#include "support/devices.hpp"
#include "support/expect_error.hpp"
#include "support/tensor.hpp"
#include "support/w4a16_golden.hpp"
#include "support/w4a16_inputs.hpp"

namespace baracuda::test {
namespace {

// ------------------------------------------------------------------------------------------ helpers

template <class V>
std::vector<uint8_t> bytes_of(const std::vector<V>& v) {
  std::vector<uint8_t> b(v.size() * sizeof(V));
  if (!b.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

/// A device copy of `v` viewed as a dense `shape` of `kind` (an empty view when `v` is empty and the shape
/// has no elements).
DeviceTensor upload(const Stream& st, ElementKind kind, const Shape& shape, const std::vector<uint8_t>& v) {
  auto t = make_device_tensor(st, kind, shape, dense_layout(shape), v);
  EXPECT_TRUE(t.is_ok()) << t.error().to_string();
  return std::move(t).value();
}

/// A device tensor of `shape` filled with 0xA5 bytes (so that an unwritten output shows).
DeviceTensor output(const Stream& st, ElementKind kind, const Shape& shape) {
  const size_t bytes = static_cast<size_t>(shape.numel()) * (element_bits(kind) / 8);
  return upload(st, kind, shape, std::vector<uint8_t>(bytes, 0xA5));
}

/// The f16 scales as `kind` (f16 unchanged; bf16: f16 → f32 exactly, then one rounding).
std::vector<uint8_t> scales_as(const std::vector<__half>& s, ElementKind kind) {
  if (kind == ElementKind::F16) return bytes_of(s);
  std::vector<__nv_bfloat16> b;
  for (__half h : s) b.push_back(__float2bfloat16_rn(__half2float(h)));
  return bytes_of(b);
}

/// A checkpoint on the host, the Marlin tensors it must give, and the descriptor.
struct Problem {
  Int4RepackDescriptor desc;
  std::vector<int32_t> qweight, qzeros, perm;
  std::vector<__half> scales;
  std::vector<uint8_t> want_qweight, want_scales, want_zeros;
};

Problem make_problem(const Int4RepackDescriptor& desc, uint64_t seed) {
  Problem p;
  p.desc = desc;
  const Int4Shape shape = desc.weight_shape();
  const bool awq = desc.format == Int4CheckpointFormat::Awq;
  const std::vector<int32_t> g_idx = desc.act_order ? random_act_order_g_idx(shape, seed + 1) : std::vector<int32_t>{};
  auto w = quantize_int4(random_int4_source_weight(shape.k, shape.n, seed), shape, desc.scheme, g_idx);
  EXPECT_TRUE(w.is_ok()) << w.error().to_string();
  if (!w) return p;
  Result<MarlinInt4Weights> m = Error::invalid("unset");
  if (awq) {
    auto c = awq_pack(w.value());
    EXPECT_TRUE(c.is_ok()) << c.error().to_string();
    p.qweight = c->qweight, p.qzeros = c->qzeros, p.scales = c->scales;
    m = awq_to_marlin({c->qweight, c->qzeros, c->scales}, shape);
  } else {
    auto c = gptq_pack(w.value());
    EXPECT_TRUE(c.is_ok()) << c.error().to_string();
    p.qweight = c->qweight, p.qzeros = c->qzeros, p.scales = c->scales;
    m = gptq_to_marlin({c->qweight, c->qzeros, c->scales, c->g_idx}, shape, desc.scheme, desc.act_order);
    if (desc.act_order_effective()) {
      auto perm = marlin_act_order_perm(c->g_idx, shape);
      EXPECT_TRUE(perm.is_ok()) << perm.error().to_string();
      p.perm = perm.value();
    }
  }
  EXPECT_TRUE(m.is_ok()) << m.error().to_string();
  if (!m) return p;
  EXPECT_EQ(m->perm, p.perm) << "marlin_act_order_perm and gptq_to_marlin disagree";
  p.want_qweight = bytes_of(m->qweight);
  p.want_scales = scales_as(m->scales, desc.scale_element);
  p.want_zeros = bytes_of(m->zeros);
  return p;
}

/// Runs the plan on `st` for `p`; returns the three outputs' bytes (zeros empty for GPTQ).
struct Outputs {
  std::vector<uint8_t> qweight, scales, zeros;
};

std::optional<Outputs> run_on(const Stream& st, const Problem& p) {
  const Int4RepackDescriptor& d = p.desc;
  const int64_t K = d.k, N = d.n, G = d.weight_shape().num_groups();
  const bool awq = d.format == Int4CheckpointFormat::Awq;
  auto plan = dynamic::Int4MarlinRepackPlan::select(st, d);
  EXPECT_TRUE(plan.is_ok()) << plan.error().to_string();
  if (!plan) return std::nullopt;
  EXPECT_EQ(plan->workspace_size(), 0u);
  DeviceTensor qw = upload(st, ElementKind::S32, awq ? Shape{K, N / 8} : Shape{K / 8, N}, bytes_of(p.qweight));
  DeviceTensor sc = upload(st, ElementKind::F16, Shape{G, N}, bytes_of(p.scales));
  DeviceTensor oq = output(st, ElementKind::S32, Shape{K / 16, 2 * N});
  DeviceTensor os = output(st, d.scale_element, Shape{G, N});
  std::optional<DeviceTensor> qz, pm, oz;
  dynamic::Int4MarlinRepackArgs t;
  t.qweight = qw.view, t.scales = sc.view, t.out_qweight = oq.view, t.out_scales = os.view;
  if (awq) {
    qz = upload(st, ElementKind::S32, Shape{G, N / 8}, bytes_of(p.qzeros)), t.qzeros = qz->view;
    oz = output(st, ElementKind::S32, Shape{G, N / 8}), t.out_zeros = oz->view;
  }
  if (!p.perm.empty()) pm = upload(st, ElementKind::S32, Shape{K}, bytes_of(p.perm)), t.perm = pm->view;
  const Status s = plan->run(st, {}, t);
  EXPECT_TRUE(s.is_ok()) << s.to_string();
  if (!s.is_ok()) return std::nullopt;
  EXPECT_TRUE(st.synchronize().is_ok());
  Outputs o{download(oq), download(os), {}};
  if (oz) o.zeros = download(*oz);
  return o;
}

std::string describe(const Int4RepackDescriptor& d) {
  return std::string(d.format == Int4CheckpointFormat::Awq ? "awq" : "gptq") + " K=" + std::to_string(d.k) +
         " N=" + std::to_string(d.n) + " group=" + std::to_string(d.group) + (d.act_order ? " act_order" : "") +
         " scales=" + std::string(to_string(d.scale_element));
}

// ------------------------------------------------------------------------------ every device vs host

class Int4MarlinRepackOnDevice : public ::testing::TestWithParam<DeviceKind> {};

TEST_P(Int4MarlinRepackOnDevice, MatchesHostConverters) {
  BARACUDA_TEST_STREAM(stream, GetParam());
  auto probe = dynamic::Int4MarlinRepackPlan::select(stream, Int4RepackDescriptor{}.with_shape(16, 64).with_group(-1));
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(probe, GetParam());
  ASSERT_TRUE(probe.is_ok()) << probe.error().to_string();
  const auto bf16 = ElementKind::Bf16;
  const Int4RepackDescriptor cases[] = {
      Int4RepackDescriptor{}.with_shape(128, 64).with_group(128).gptq(),
      Int4RepackDescriptor{}.with_shape(256, 128).with_group(32).gptq(true),
      Int4RepackDescriptor{}.with_shape(256, 64).with_group(64).gptq(true).with_scale_element(bf16),
      Int4RepackDescriptor{}.with_shape(128, 128).with_group(-1).gptq(true),  // one group: no perm
      Int4RepackDescriptor{}.with_shape(48, 64).with_group(-1).gptq().with_scale_element(bf16),
      Int4RepackDescriptor{}.with_shape(256, 192).with_group(128).awq().with_scale_element(bf16),
      Int4RepackDescriptor{}.with_shape(128, 64).with_group(32).awq(),
      Int4RepackDescriptor{}.with_shape(64, 128).with_group(-1).awq(),
  };
  uint64_t seed = 100;
  for (const Int4RepackDescriptor& d : cases) {
    SCOPED_TRACE(describe(d));
    const Problem p = make_problem(d, seed += 10);
    ASSERT_FALSE(p.want_qweight.empty());
    const auto got = run_on(stream, p);
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(got->qweight, p.want_qweight);
    EXPECT_EQ(got->scales, p.want_scales);
    EXPECT_EQ(got->zeros, p.want_zeros);
  }
}

TEST_P(Int4MarlinRepackOnDevice, GoldenCheckpointsGiveGoldenMarlin) {
  BARACUDA_TEST_STREAM(stream, GetParam());
  auto probe = dynamic::Int4MarlinRepackPlan::select(stream, Int4RepackDescriptor{}.with_shape(16, 64).with_group(-1));
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(probe, GetParam());
  std::string error;
  const auto cases = load_w4a16_golden(&error);
  ASSERT_TRUE(error.empty()) << error;
  auto i32 = [](const W4a16Tensor& t) { return t.as_i32(); };
  auto f16 = [](const W4a16Tensor& t) { return t.as_f16(); };
  auto f16_bytes = [](const W4a16Tensor& t) { return bytes_of(t.as_f16()); };
  int gptq = 0, awq = 0;
  for (const W4a16Case& c : cases) {
    SCOPED_TRACE(c.name);
    if (c.has("gptq_qweight") && c.sym) {  // vLLM's gptq_marlin path: symmetric only
      ++gptq;
      Problem p;
      p.desc = Int4RepackDescriptor{}.with_shape(c.shape.k, c.shape.n).with_group(c.shape.group).gptq(c.act_order);
      p.qweight = i32(c.at("gptq_qweight"));
      p.scales = f16(c.at("gptq_scales"));
      if (p.desc.act_order_effective()) {
        auto perm = marlin_act_order_perm(i32(c.at("gptq_g_idx")), c.shape);
        ASSERT_TRUE(perm.is_ok()) << perm.error().to_string();
        EXPECT_EQ(perm.value(), i32(c.at("marlin_perm")));
        p.perm = perm.value();
      }
      const auto got = run_on(stream, p);
      ASSERT_TRUE(got.has_value());
      EXPECT_EQ(got->qweight, bytes_of(i32(c.at("marlin_qweight"))));
      EXPECT_EQ(got->scales, f16_bytes(c.at("marlin_scales")));
    }
    if (c.has("awq_qweight")) {
      ++awq;
      Problem p;
      p.desc = Int4RepackDescriptor{}.with_shape(c.shape.k, c.shape.n).with_group(c.shape.group).awq();
      p.qweight = i32(c.at("awq_qweight"));
      p.qzeros = i32(c.at("awq_qzeros"));
      p.scales = f16(c.at("awq_scales"));
      const auto got = run_on(stream, p);
      ASSERT_TRUE(got.has_value());
      EXPECT_EQ(got->qweight, bytes_of(i32(c.at("marlin_qweight"))));
      EXPECT_EQ(got->scales, f16_bytes(c.at("marlin_scales")));
      if (c.has("marlin_zp")) {
        EXPECT_EQ(got->zeros, bytes_of(i32(c.at("marlin_zp"))));
      } else {  // a symmetric weight stored in AWQ's format: every Marlin zero point is 8
        std::vector<int32_t> z(got->zeros.size() / 4);
        std::memcpy(z.data(), got->zeros.data(), got->zeros.size());
        for (int32_t v : z) EXPECT_EQ(static_cast<uint32_t>(v), 0x88888888u);
      }
    }
  }
  EXPECT_GT(gptq, 0) << "missing golden data: no symmetric GPTQ case";
  EXPECT_GT(awq, 0) << "missing golden data: no AWQ case";
}

// Int4MarlinRepackPlan<TScale> on host and sim (host memory serves both): the same bytes as the host
// converters, for GPTQ with act-order (qzeros and out_zeros left default) and AWQ (every operand); a
// descriptor whose scale_element is not TScale is rejected at select.
template <class TScale>
void typed_repack(const Stream& st, const Int4RepackDescriptor& d, uint64_t seed) {
  SCOPED_TRACE(describe(d) + " on " + std::string(to_string(st.device())));
  const Problem p = make_problem(d, seed);
  ASSERT_FALSE(p.want_qweight.empty());
  const int64_t K = d.k, N = d.n, G = d.weight_shape().num_groups();
  const bool awq = d.format == Int4CheckpointFormat::Awq;
  auto plan = Int4MarlinRepackPlan<TScale>::select(st, d);
  ASSERT_TRUE(plan.is_ok()) << plan.error().to_string();
  auto erased = dynamic::Int4MarlinRepackPlan::select(st, d);
  ASSERT_TRUE(erased.is_ok());
  EXPECT_EQ(plan->sku(), erased->sku());
  std::vector<int32_t> out_qweight(static_cast<size_t>(K / 16 * 2 * N)), out_zeros(static_cast<size_t>(G * N / 8));
  std::vector<TScale> out_scales(static_cast<size_t>(G * N));
  Int4MarlinRepackArgs<TScale> args;
  args.qweight = TensorRef<int32_t, 2>::dense(p.qweight.data(), awq ? std::array<int64_t, 2>{K, N / 8}
                                                                    : std::array<int64_t, 2>{K / 8, N});
  args.scales = TensorRef<__half, 2>::dense(p.scales.data(), {G, N});
  if (!p.perm.empty()) args.perm = TensorRef<int32_t, 1>::dense(p.perm.data(), {K});
  args.out_qweight = TensorMut<int32_t, 2>::dense(out_qweight.data(), {K / 16, 2 * N});
  args.out_scales = TensorMut<TScale, 2>::dense(out_scales.data(), {G, N});
  if (awq) {
    args.qzeros = TensorRef<int32_t, 2>::dense(p.qzeros.data(), {G, N / 8});
    args.out_zeros = TensorMut<int32_t, 2>::dense(out_zeros.data(), {G, N / 8});
  }
  ASSERT_TRUE(plan->can_implement(args).is_ok()) << plan->can_implement(args).to_string();
  ASSERT_TRUE(plan->run(st, {}, args).is_ok());
  EXPECT_EQ(bytes_of(out_qweight), p.want_qweight);
  EXPECT_EQ(bytes_of(out_scales), p.want_scales);
  if (awq) EXPECT_EQ(bytes_of(out_zeros), p.want_zeros);
}

TEST(Int4MarlinRepack, TypedPlan) {
  for (const Stream& st : {Stream::host(), Stream::sim()}) {
    typed_repack<__nv_bfloat16>(st, Int4RepackDescriptor{}.with_shape(256, 64).with_group(32).gptq(true)
                                        .with_scale_element(ElementKind::Bf16), 700);
    typed_repack<__half>(st, Int4RepackDescriptor{}.with_shape(128, 128).with_group(64).awq(), 710);
  }
  const auto bf16 =
      Int4RepackDescriptor{}.with_shape(128, 64).with_group(32).gptq().with_scale_element(ElementKind::Bf16);
  expect_error(Int4MarlinRepackPlan<__half>::select(Stream::host(), bf16).status(), ErrorCode::InvalidProblem,
               "the descriptor's out_scales kind");
}

INSTANTIATE_TEST_SUITE_P(Devices, Int4MarlinRepackOnDevice, ::testing::ValuesIn(kTestDevices),
                         [](const auto& info) { return std::string(to_string(info.param)); });

// ------------------------------------------------------------------------------------------ rejections

TEST(Int4MarlinRepack, SelectRejections) {
  const Stream host = Stream::host();
  auto sel = [&](const Int4RepackDescriptor& d) { return dynamic::Int4MarlinRepackPlan::select(host, d).status(); };
  const auto base = Int4RepackDescriptor{}.with_shape(128, 64).with_group(32).gptq();
  expect_error(sel(Int4RepackDescriptor{base}.with_shape(-16, 64)), ErrorCode::InvalidProblem, "must be >= 0");
  expect_error(sel(Int4RepackDescriptor{base}.with_shape(128, -64)), ErrorCode::InvalidProblem, "must be >= 0");
  expect_error(sel(Int4RepackDescriptor{base}.with_group(16)), ErrorCode::InvalidProblem, "group must be");
  expect_error(sel(Int4RepackDescriptor{base}.with_shape(120, 64).with_group(-1)), ErrorCode::InvalidProblem,
               "multiple of 16");
  expect_error(sel(Int4RepackDescriptor{base}.with_shape(96, 64).with_group(64)), ErrorCode::InvalidProblem,
               "and of the group");
  expect_error(sel(Int4RepackDescriptor{base}.with_shape(128, 96)), ErrorCode::InvalidProblem, "multiple of 64");
  auto bad_format = base;
  bad_format.format = static_cast<Int4CheckpointFormat>(7);
  expect_error(sel(bad_format), ErrorCode::InvalidProblem, "unknown Int4CheckpointFormat");
  auto bad_scheme = base;
  bad_scheme.scheme = static_cast<Int4Scheme>(9);
  expect_error(sel(bad_scheme), ErrorCode::InvalidProblem, "unknown Int4Scheme");
  auto gptq_asym = base;
  gptq_asym.scheme = Int4Scheme::Asymmetric;
  expect_error(sel(gptq_asym), ErrorCode::Unsupported, "use gptq_to_marlin on the host");
  auto awq_sym = Int4RepackDescriptor{base}.awq();
  awq_sym.scheme = Int4Scheme::Symmetric;
  expect_error(sel(awq_sym), ErrorCode::InvalidProblem, "must be Asymmetric");
  auto awq_act = Int4RepackDescriptor{base}.awq();
  awq_act.act_order = true;
  expect_error(sel(awq_act), ErrorCode::InvalidProblem, "no act-order");
  expect_error(sel(Int4RepackDescriptor{base}.with_scale_element(ElementKind::F32)), ErrorCode::Unsupported,
               "scale kind must be f16 or bf16");
  // What select accepts: the checked SKU and guarantees.
  auto ok = dynamic::Int4MarlinRepackPlan::select(host, Int4RepackDescriptor{base}.gptq(true));
  ASSERT_TRUE(ok.is_ok()) << ok.error().to_string();
  EXPECT_EQ(ok->sku().op, "int4_marlin_repack");
  EXPECT_EQ(ok->sku().variant, "reference_gptq_act_order");
  EXPECT_TRUE(ok->precision_guarantee().deterministic);
  auto sim = dynamic::Int4MarlinRepackPlan::select(Stream::sim(), Int4RepackDescriptor{base}.awq());
  ASSERT_TRUE(sim.is_ok()) << sim.error().to_string();
  EXPECT_EQ(sim->sku().variant, "gather_awq");
}

/// Host tensors of a valid GPTQ act-order (or AWQ) problem, for mutating one at a time.
struct HostTensors {
  static constexpr int64_t K = 128, N = 64, G = 4;  // group 32
  std::vector<int32_t> qweight_gptq = std::vector<int32_t>(K / 8 * N), qweight_awq = std::vector<int32_t>(K * N / 8),
                       qzeros = std::vector<int32_t>(G * N / 8), perm = std::vector<int32_t>(K),
                       out_qweight = std::vector<int32_t>(K / 16 * 2 * N), out_zeros = std::vector<int32_t>(G * N / 8);
  std::vector<__half> scales = std::vector<__half>(G * N, __float2half(0.5f)),
                      out_scales = std::vector<__half>(G * N);
  HostTensors() {
    for (int64_t i = 0; i < K; ++i) perm[i] = static_cast<int32_t>(K - 1 - i);
  }
  static DynTensor v(void* p, ElementKind k, const Shape& s) { return DynTensor::dense(p, k, s); }
  dynamic::Int4MarlinRepackArgs gptq() {
    return {v(qweight_gptq.data(), ElementKind::S32, {K / 8, N}), {}, v(scales.data(), ElementKind::F16, {G, N}),
            v(perm.data(), ElementKind::S32, {K}), v(out_qweight.data(), ElementKind::S32, {K / 16, 2 * N}),
            v(out_scales.data(), ElementKind::F16, {G, N}), {}};
  }
  dynamic::Int4MarlinRepackArgs awq() {
    return {v(qweight_awq.data(), ElementKind::S32, {K, N / 8}), v(qzeros.data(), ElementKind::S32, {G, N / 8}),
            v(scales.data(), ElementKind::F16, {G, N}), {}, v(out_qweight.data(), ElementKind::S32, {K / 16, 2 * N}),
            v(out_scales.data(), ElementKind::F16, {G, N}), v(out_zeros.data(), ElementKind::S32, {G, N / 8})};
  }
};

TEST(Int4MarlinRepack, CanImplementRejections) {
  const Stream host = Stream::host();
  HostTensors h;
  constexpr int64_t K = HostTensors::K, N = HostTensors::N, G = HostTensors::G;
  const auto base = Int4RepackDescriptor{}.with_shape(K, N).with_group(32);
  auto gptq = dynamic::Int4MarlinRepackPlan::select(host, Int4RepackDescriptor{base}.gptq(true));
  auto awq = dynamic::Int4MarlinRepackPlan::select(host, Int4RepackDescriptor{base}.awq());
  ASSERT_TRUE(gptq.is_ok() && awq.is_ok());
  ASSERT_TRUE(gptq->can_implement(h.gptq()).is_ok()) << gptq->can_implement(h.gptq()).to_string();
  ASSERT_TRUE(awq->can_implement(h.awq()).is_ok()) << awq->can_implement(h.awq()).to_string();
  const auto I = ErrorCode::InvalidProblem;
  auto gcheck = [&](auto mutate, const std::string& needle) {
    dynamic::Int4MarlinRepackArgs t = h.gptq();
    mutate(t);
    expect_error(gptq->can_implement(t), I, needle);
  };
  auto acheck = [&](auto mutate, const std::string& needle) {
    dynamic::Int4MarlinRepackArgs t = h.awq();
    mutate(t);
    expect_error(awq->can_implement(t), I, needle);
  };
  // Shapes and kinds of every tensor.
  gcheck([&](auto& t) { t.qweight.shape = Shape{K, N / 8}; }, "qweight has shape");
  acheck([&](auto& t) { t.qweight.shape = Shape{K / 8, N}; }, "qweight has shape");
  gcheck([&](auto& t) { t.qweight.kind = ElementKind::U32; }, "qweight has element kind");
  gcheck([&](auto& t) { t.qzeros = HostTensors::v(h.qzeros.data(), ElementKind::S32, {G, N}); }, "qzeros has shape");
  acheck([&](auto& t) { t.qzeros = {}; }, "qzeros");
  gcheck([&](auto& t) { t.scales.kind = ElementKind::Bf16; }, "scales has element kind");
  acheck([&](auto& t) { t.scales.shape = Shape{1, N}; }, "scales has shape");
  gcheck([&](auto& t) { t.perm = {}; }, "perm");
  gcheck([&](auto& t) { t.perm.shape = Shape{K / 2}; }, "perm has shape");
  acheck([&](auto& t) { t.perm = HostTensors::v(h.perm.data(), ElementKind::S32, {K}); }, "no act-order");
  gcheck([&](auto& t) { t.out_qweight.shape = Shape{K / 8, N}; }, "out_qweight has shape");
  gcheck([&](auto& t) { t.out_scales.kind = ElementKind::Bf16; }, "out_scales has element kind");
  gcheck([&](auto& t) { t.out_zeros = HostTensors::v(h.out_zeros.data(), ElementKind::S32, {G, N / 8}); },
         "out_zeros must be empty");
  acheck([&](auto& t) { t.out_zeros = {}; }, "out_zeros");
  // Density.
  gcheck([&](auto& t) { t.qweight.stride[0] = 2 * N; }, "must be dense");
  // Overlaps: an output with an input, and two outputs.
  gcheck([&](auto& t) { t.out_scales.data = h.scales.data(); }, "overlap");
  acheck([&](auto& t) { t.out_zeros.data = h.out_qweight.data(); }, "overlap");
  // Act-order with a single group is planned without: perm must then be empty.
  auto single = dynamic::Int4MarlinRepackPlan::select(host, Int4RepackDescriptor{base}.with_group(-1).gptq(true));
  ASSERT_TRUE(single.is_ok());
  dynamic::Int4MarlinRepackArgs t = h.gptq();
  t.scales.shape = Shape{1, N}, t.out_scales.shape = Shape{1, N};
  expect_error(single->can_implement(t), I, "single group");
  t.perm = {};
  EXPECT_TRUE(single->can_implement(t).is_ok());
}

TEST(Int4MarlinRepack, RunRejections) {
  HostTensors h;
  const Stream host = Stream::host();
  // A plan that select did not produce.
  expect_error(dynamic::Int4MarlinRepackPlan{}.run(host, {}, h.gptq()), ErrorCode::InvalidProblem,
               "select did not produce");
  auto plan = dynamic::Int4MarlinRepackPlan::select(
      host, Int4RepackDescriptor{}.with_shape(HostTensors::K, HostTensors::N).with_group(32).gptq(true));
  ASSERT_TRUE(plan.is_ok());
  // Another device's stream.
  EXPECT_FALSE(plan->run(Stream::sim(), {}, h.gptq()).is_ok());
  // run re-validates.
  dynamic::Int4MarlinRepackArgs t = h.gptq();
  t.out_qweight.shape = Shape{1, 1};
  expect_error(plan->run(host, {}, t), ErrorCode::InvalidProblem, "out_qweight has shape");
  // The host and sim devices check perm's values at run (cuda does not: it needs a synchronisation).
  for (const Stream& st : {host, Stream::sim()}) {
    auto p = dynamic::Int4MarlinRepackPlan::select(
        st, Int4RepackDescriptor{}.with_shape(HostTensors::K, HostTensors::N).with_group(32).gptq(true));
    ASSERT_TRUE(p.is_ok());
    HostTensors bad;
    bad.perm[5] = bad.perm[6];
    expect_error(p->run(st, {}, bad.gptq()), ErrorCode::InvalidProblem, "not a permutation of [0, K): perm[6]");
    bad.perm[5] = static_cast<int32_t>(HostTensors::K);
    expect_error(p->run(st, {}, bad.gptq()), ErrorCode::InvalidProblem, "is out of range");
  }
}

TEST(Int4MarlinRepack, EmptyProblems) {
  for (const Stream& st : {Stream::host(), Stream::sim()}) {
    for (const auto& [k, n] : {std::pair<int64_t, int64_t>{0, 64}, {128, 0}}) {
      const auto d = Int4RepackDescriptor{}.with_shape(k, n).with_group(-1).awq();
      auto plan = dynamic::Int4MarlinRepackPlan::select(st, d);
      ASSERT_TRUE(plan.is_ok()) << plan.error().to_string();
      const int64_t G = k == 0 ? 0 : 1;
      dynamic::Int4MarlinRepackArgs t;
      t.qweight = ConstDynTensor::dense(nullptr, ElementKind::S32, Shape{k, n / 8});
      t.qzeros = ConstDynTensor::dense(nullptr, ElementKind::S32, Shape{G, n / 8});
      t.scales = ConstDynTensor::dense(nullptr, ElementKind::F16, Shape{G, n});
      t.out_qweight = DynTensor::dense(nullptr, ElementKind::S32, Shape{k / 16, 2 * n});
      t.out_scales = DynTensor::dense(nullptr, ElementKind::F16, Shape{G, n});
      t.out_zeros = DynTensor::dense(nullptr, ElementKind::S32, Shape{G, n / 8});
      EXPECT_TRUE(plan->run(st, {}, t).is_ok()) << plan->run(st, {}, t).to_string();
    }
  }
}

}  // namespace
}  // namespace baracuda::test
