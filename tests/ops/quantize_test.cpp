// QuantizePlan sweep: every (op, convention, float kind, quantized kind, granularity, shape, layout) on sim
// and cuda, compared bit for bit with the host reference (integer and packed outputs, and every float output:
// each is one rounding of the same opmath formula); learnable ds/dzp (sums) within a tolerance. Conventions:
// PyTorch, Exact, and Vllm for Quantize / Dequantize of f16, bf16, f32 data. A third of the inputs x sit
// within a few ulps of a rounding tie of their own scale, where the conventions' arithmetic differs.
// Hand-computed values and every rejection: quantize_values_test and quantize_conventions_test; independent
// golden data from PyTorch (and a numpy model of Exact): quantize_golden_test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "baracuda/baracuda.hpp"
#include "support/devices.hpp"
#include "support/doc_table.hpp"
#include "support/numeric.hpp"
#include "support/random.hpp"
#include "support/tensor.hpp"

namespace baracuda::test {
namespace {

using G = QuantGranularity;

ElementKind scale_kind_of(ElementKind e) { return e == ElementKind::F64 ? ElementKind::F64 : ElementKind::F32; }

bool uses(QuantizeOp op, std::string_view role) {
  using O = QuantizeOp;
  const bool bwd = op == O::QuantizeBackward || op == O::DequantizeBackward || op == O::FakeQuantizeBackward ||
                   op == O::FakeQuantizeLearnableBackward;
  if (role == "x") return op != O::DequantizeBackward;
  if (role == "scale") return true;
  if (role == "zero_point") return op != O::DequantizeBackward;
  if (role == "y") return !bwd;
  if (role == "dy" || role == "dx") return bwd;
  if (role == "dscale" || role == "dzero_point") return op == O::FakeQuantizeLearnableBackward;
  return false;
}
bool is_output(std::string_view role) {
  return role == "y" || role == "dx" || role == "dscale" || role == "dzero_point";
}
bool is_param(std::string_view role) {
  return role == "scale" || role == "zero_point" || role == "dscale" || role == "dzero_point";
}
const detail::QuantizeOpInfo& info_of(QuantizeOp op) { return detail::kQuantizeOps[static_cast<size_t>(op)]; }
/// The quantized operand (the catalog's form): Quantize's y, Dequantize's x.
bool is_quantized(QuantizeOp op, std::string_view role) {
  return (role == "y" && info_of(op).form == detail::QuantizeForm::Quantizes) ||
         (role == "x" && info_of(op).form == detail::QuantizeForm::Dequantizes);
}
/// y can overwrite x in place (the ops that read x and write y of one element kind).
bool y_over_x(QuantizeOp op) {
  const detail::QuantizeOpInfo& i = info_of(op);
  return (i.reads & detail::quantize_operand::X) && (i.writes & detail::quantize_operand::Y) &&
         (i.form == detail::QuantizeForm::Float || i.form == detail::QuantizeForm::Learnable);
}

constexpr std::array<std::string_view, 8> kRoles = {"x", "scale", "zero_point", "dy", "y", "dx", "dscale",
                                                    "dzero_point"};

/// Binds `view` to the operand `role` (an input as read-only).
void bind_operand(dynamic::QuantizeArgs& t, std::string_view role, const DynTensor& view) {
  if (role == "x") t.x = view;
  else if (role == "scale") t.scale = view;
  else if (role == "zero_point") t.zero_point = view;
  else if (role == "dy") t.dy = view;
  else if (role == "y") t.y = view;
  else if (role == "dx") t.dx = view;
  else if (role == "dscale") t.dscale = view;
  else t.dzero_point = view;
}

/// A problem: the descriptor, the op, and the logical (row-major) bytes of every input.
struct Problem {
  QuantizeOp op;
  QuantizeDescriptor desc;
  Shape param_shape;
  std::map<std::string, std::vector<uint8_t>, std::less<>> inputs;
};

ElementKind kind_of_role(const Problem& p, std::string_view role) {
  if (is_quantized(p.op, role)) return p.desc.quantized;
  if (role == "zero_point")
    return info_of(p.op).form == detail::QuantizeForm::Learnable ? scale_kind_of(p.desc.element) : ElementKind::S32;
  if (is_param(role)) return scale_kind_of(p.desc.element);
  return p.desc.element;
}
const Shape& shape_of_role(const Problem& p, std::string_view role) {
  return is_param(role) ? p.param_shape : p.desc.shape;
}

/// Layouts: dense; strided (every float/int8 operand with padded rows and reversed innermost dimension
/// for a float x, parameters with stride 2); in place (y over x where their kinds agree, dx over dy).
enum class Layout { Dense, Strided, InPlace };

Strided layout_for(const Problem& p, std::string_view role, Layout l) {
  const Shape& shape = shape_of_role(p, role);
  Strided s = dense_layout(shape);
  if (l != Layout::Strided || (is_quantized(p.op, role) && is_packed(p.desc.quantized)) || shape.rank == 0) return s;
  if (is_param(role)) {  // every stride doubled
    for (int d = 0; d < shape.rank; ++d) s.stride[d] *= 2;
    return s;
  }
  // Rows padded by 3 elements; a float x walks its innermost dimension backwards.
  int64_t stride = 1;
  for (int d = shape.rank - 1; d >= 0; --d) {
    s.stride[d] = stride;
    stride *= shape.dims[d] + (d == shape.rank - 1 ? 3 : 0);
  }
  if (role == "x" && !is_quantized(p.op, role) && shape.dims[shape.rank - 1] > 0) {
    const int last = shape.rank - 1;
    s.offset = (shape.dims[last] - 1) * s.stride[last];
    s.stride[last] = -s.stride[last];
  }
  return s;
}

/// Runs the problem on `stream`; returns the logical bytes of every output.
std::map<std::string, std::vector<uint8_t>> run(const Stream& stream, const Problem& p, Layout layout) {
  auto plan = dynamic::QuantizePlan::select(stream, p.desc);
  EXPECT_TRUE(plan.is_ok()) << (plan ? "" : plan.error().message);
  if (!plan) return {};
  std::map<std::string, DeviceTensor, std::less<>> tensors;
  dynamic::QuantizeArgs t;
  for (std::string_view role : kRoles) {
    if (!uses(p.op, role)) continue;
    const bool aliased = layout == Layout::InPlace && ((role == "y" && y_over_x(p.op)) ||
                                                       (role == "dx" && uses(p.op, "dy")));
    if (aliased) continue;  // bound below
    const ElementKind k = kind_of_role(p, role);
    const Shape& shape = shape_of_role(p, role);
    const Strided l = layout_for(p, role, layout);
    std::vector<uint8_t> storage(static_cast<size_t>(storage_bytes(k, storage_elements(shape, l))), 0xA5);
    auto in = p.inputs.find(role);
    if (in != p.inputs.end()) {
      if (is_packed(k)) {
        const size_t bytes = std::min(storage.size(), in->second.size());
        if (bytes > 0) std::memcpy(storage.data(), in->second.data(), bytes);
      } else {
        scatter(k, in->second, &storage, shape, l);
      }
    }
    auto dt = make_device_tensor(stream, k, shape, l, storage);
    EXPECT_TRUE(dt.is_ok());
    if (!dt) return {};
    tensors.emplace(std::string(role), std::move(dt).value());
    bind_operand(t, role, tensors.at(std::string(role)).view);
  }
  if (layout == Layout::InPlace) {
    if (y_over_x(p.op)) t.y = tensors.at("x").view;
    if (uses(p.op, "dx")) t.dx = tensors.at("dy").view;
  }
  std::vector<uint8_t> ws(plan->workspace_size());
  Buffer wsb;
  if (!ws.empty()) {
    auto b = Buffer::allocate(stream, ws.size());
    EXPECT_TRUE(b.is_ok());
    wsb = std::move(b).value();
  }
  const Status st = plan->run(stream, Workspace(wsb.data(), ws.size()), t);
  EXPECT_TRUE(st.is_ok()) << st.to_string();
  EXPECT_TRUE(stream.synchronize().is_ok());
  std::map<std::string, std::vector<uint8_t>> out;
  for (std::string_view role : kRoles) {
    if (!uses(p.op, role) || !is_output(role)) continue;
    const bool aliased_y = layout == Layout::InPlace && role == "y" && y_over_x(p.op);
    const bool aliased_dx = layout == Layout::InPlace && role == "dx";
    const std::string_view src = aliased_y ? "x" : aliased_dx ? "dy" : role;
    const DeviceTensor& dt = tensors.at(std::string(src));
    const ElementKind k = kind_of_role(p, role);
    const std::vector<uint8_t> storage = download(dt);
    if (is_packed(k)) out[std::string(role)] = storage;
    else out[std::string(role)] = gather(k, storage, shape_of_role(p, role), layout_for(p, src, layout));
  }
  return out;
}

/// The row-major number, in the parameter shape, of the parameters of data element `flat` (from the
/// granularity's definition: per channel the axis coordinate, per token every coordinate but the last, per
/// group the coordinates with the axis one divided by the group size).
int64_t param_index(const G& g, const Shape& shape, int64_t flat) {
  std::array<int64_t, kMaxRank> idx{};
  for (int d = shape.rank - 1; d >= 0; --d) {
    idx[d] = flat % shape.dims[d];
    flat /= shape.dims[d];
  }
  const int axis = g.axis < 0 ? g.axis + shape.rank : g.axis;
  int64_t p = 0;
  switch (g.kind) {
    case G::Kind::PerTensor: return 0;
    case G::Kind::PerChannel: return idx[axis];
    case G::Kind::PerToken:
      for (int d = 0; d + 1 < shape.rank; ++d) p = p * shape.dims[d] + idx[d];
      return p;
    case G::Kind::PerGroup:
      for (int d = 0; d < shape.rank; ++d)
        p = d == axis ? p * (shape.dims[d] / g.group_size) + idx[d] / g.group_size : p * shape.dims[d] + idx[d];
      return p;
  }
  return 0;
}

/// Writes into element i of `bytes` (float kind k) a value within a few ulps of v: v's significand cut to
/// k's width, its bit pattern then moved by `step` (a magnitude change of |step| ulps).
void put_near(ElementKind k, std::vector<uint8_t>* bytes, int64_t i, double v, int step) {
  const int bits = k == ElementKind::F16 ? 10 : k == ElementKind::Bf16 ? 7 : k == ElementKind::F32 ? 23 : 52;
  const int e = v == 0 ? 0 : std::ilogb(v);
  const double cut = std::ldexp(std::trunc(std::ldexp(v, bits - e)), e - bits);
  void* at = bytes->data() + i * element_bytes(k);
  if (!encode_exact(k, cut, at)) return;  // out of k's range: keep the random value
  if (cut != 0) store_bits(k, at, load_bits(k, at) + static_cast<uint64_t>(static_cast<int64_t>(step)));
}

/// Random inputs for the problem: x spread over about 1.3 × the representable range (some clamp), a third of
/// them moved to within 0..2 ulps of a rounding tie (k + ½)·s of their own scale; positive scales, zero points
/// inside the range (learnable: with fractions), a quantized x (Dequantize) and dy random.
Problem make_problem(QuantizeOp op, QuantConvention conv, ElementKind e, ElementKind q, const G& g,
                     const Shape& shape, uint64_t seed) {
  Problem p;
  p.op = op;
  p.desc = QuantizeDescriptor{}
               .with_op(op)
               .with_element(e)
               .with_quantized(q)
               .with_shape(shape)
               .with_granularity(g)
               .with_convention(conv);
  if (op == QuantizeOp::FakeQuantizeLearnableBackward) p.desc.with_grad_factor(0.75);
  auto plan = dynamic::QuantizePlan::select(Stream::host(), p.desc);
  EXPECT_TRUE(plan.is_ok()) << (plan ? "" : plan.error().message);
  if (!plan) return p;
  p.param_shape = plan->param_shape();
  const int32_t qmin = plan->quant_min(), qmax = plan->quant_max();
  const int64_t n = shape.numel(), np = p.param_shape.numel();
  const ElementKind sk = scale_kind_of(e);
  std::vector<double> values, scales;
  p.inputs["scale"] = random_floats(sk, np, 0.02, 0.25, seed + 1, &scales);
  const double span = 0.25 * (qmax - qmin) * 1.3;
  if (uses(op, "x") && !is_quantized(op, "x")) {
    p.inputs["x"] = random_floats(e, n, -span, span, seed + 2, &values);
    Rng rng(seed + 6);
    for (int64_t i = 0; i < n; ++i) {
      if (rng.below(3) != 0) continue;
      const double k = std::floor(values[static_cast<size_t>(i)] / 0.25) + 0.5;
      put_near(e, &p.inputs["x"], i, k * scales[static_cast<size_t>(param_index(g, shape, i))],
               static_cast<int>(rng.below(5)) - 2);
    }
  }
  if (uses(op, "dy")) p.inputs["dy"] = random_floats(e, n, -2.0, 2.0, seed + 3, &values);
  if (uses(op, "zero_point")) {
    if (kind_of_role(p, "zero_point") == ElementKind::S32) {
      Rng rng(seed + 4);
      std::vector<uint8_t> z(static_cast<size_t>(np) * 4);
      for (int64_t i = 0; i < np; ++i) {
        const int32_t v = qmin + static_cast<int32_t>(rng.below(static_cast<uint64_t>(qmax - qmin + 1)));
        std::memcpy(&z[static_cast<size_t>(i) * 4], &v, 4);
      }
      p.inputs["zero_point"] = z;
    } else {
      p.inputs["zero_point"] = random_floats(sk, np, qmin - 0.4, qmax + 0.4, seed + 4, &values);
    }
  }
  if (is_quantized(op, "x")) p.inputs["x"] = random_bits(q, n, seed + 5);
  return p;
}

std::string shape_name(const Shape& s) {
  std::string n;
  for (int d = 0; d < s.rank; ++d) n += (d ? "x" : "") + std::to_string(s.dims[d]);
  return n;
}

struct SweepCase {
  QuantizeOp op;
  QuantConvention conv;
  ElementKind e;
  ElementKind q;
  G g;
  Shape shape;
  Layout layout;
  DeviceKind device;
  std::string name;
};

std::vector<SweepCase> sweep_cases() {
  std::vector<SweepCase> v;
  std::vector<QuantizeOp> ops;  // every line of the catalog (quantize_ops.def)
  for (size_t i = 0; i < std::size(detail::kQuantizeOps); ++i) ops.push_back(static_cast<QuantizeOp>(i));
  struct ShapeCase {
    Shape shape;
    std::vector<G> gs;
  };
  const std::vector<ShapeCase> shapes = {
      {Shape{0, 4}, {G::per_tensor(), G::per_token(), G::per_group(-1, 2)}},
      {Shape{2}, {G::per_tensor(), G::per_channel(0)}},
      {Shape{6, 10}, {G::per_tensor(), G::per_channel(0), G::per_channel(-1), G::per_token(), G::per_group(-1, 2),
                      G::per_group(0, 3)}},
      {Shape{3, 5, 4}, {G::per_channel(1), G::per_token(), G::per_group(1, 5)}},
      // Large enough for the learnable backward's two-pass per-tensor reduction on sim.
      {Shape{160, 128}, {G::per_tensor(), G::per_group(-1, 64)}},
  };
  const std::array<QuantConvention, 3> conventions = {QuantConvention::PyTorch, QuantConvention::Exact,
                                                      QuantConvention::Vllm};
  for (QuantizeOp op : ops)
    for_each_type(FloatTypes{}, [&]<class T>() {
      const ElementKind e = kind_of<T>;
      const bool has_q = info_of(op).form == detail::QuantizeForm::Quantizes ||
                         info_of(op).form == detail::QuantizeForm::Dequantizes;
      const std::vector<ElementKind> qs = has_q ? std::vector<ElementKind>{ElementKind::S8, ElementKind::U8,
                                                                           ElementKind::S4, ElementKind::U4}
                                                : std::vector<ElementKind>{ElementKind::S8, ElementKind::U4};
      for (QuantConvention conv : conventions) {
        if (conv == QuantConvention::Vllm && (!has_q || e == ElementKind::F64)) continue;  // Unsupported
        for (ElementKind q : qs)
          for (const ShapeCase& sc : shapes)
            for (const G& g : sc.gs)
              for (Layout l : {Layout::Dense, Layout::Strided, Layout::InPlace}) {
                if (l == Layout::InPlace && !y_over_x(op) && !uses(op, "dx")) continue;
                for (DeviceKind d : {DeviceKind::Sim, DeviceKind::Cuda}) {
                  std::string name = std::string(to_string(op)) + "_" + std::string(to_string(conv)) + "_" +
                                     std::string(to_string(e)) + "_" + std::string(to_string(q)) + "_" +
                                     g.to_string() + "_" + shape_name(sc.shape) + "_" +
                                     (l == Layout::Dense ? "dense" : l == Layout::Strided ? "strided" : "inplace") +
                                     "_" + std::string(to_string(d));
                  for (char& c : name)
                    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                  v.push_back({op, conv, e, q, g, sc.shape, l, d, name});
                }
              }
      }
    });
  return v;
}

void PrintTo(const SweepCase& c, std::ostream* os) { *os << c.name; }

class QuantizeSweep : public ::testing::TestWithParam<SweepCase> {};

TEST_P(QuantizeSweep, MatchesHostReference) {
  const SweepCase& c = GetParam();
  BARACUDA_TEST_STREAM(stream, c.device);
  const Problem p = make_problem(c.op, c.conv, c.e, c.q, c.g, c.shape, 0x5eed + c.shape.numel());
  {
    auto probe = dynamic::QuantizePlan::select(stream, p.desc);
    BARACUDA_SKIP_IF_NO_CUDA_KERNELS(probe, c.device);
  }
  const auto expected = run(Stream::host(), p, Layout::Dense);
  const auto got = run(stream, p, c.layout);
  const auto again = run(stream, p, c.layout);
  ASSERT_EQ(got.size(), expected.size());
  for (const auto& [role, bytes] : expected) {
    ASSERT_TRUE(got.count(role)) << role;
    EXPECT_EQ(got.at(role), again.at(role)) << role << ": not deterministic";
    if (role == "dscale" || role == "dzero_point") {  // sums: the order differs from the host's
      const ElementKind k = scale_kind_of(c.e);
      const size_t w = static_cast<size_t>(element_bytes(k));
      ASSERT_EQ(bytes.size(), got.at(role).size());
      for (size_t i = 0; i < bytes.size(); i += w) {
        const double want = decode_value(k, &bytes[i]), have = decode_value(k, &got.at(role)[i]);
        EXPECT_NEAR(have, want, 1e-4 * (1.0 + std::fabs(want))) << role << "[" << i / w << "]";
      }
    } else {
      EXPECT_EQ(got.at(role), bytes) << role << " differs from the host reference";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Quantize, QuantizeSweep, ::testing::ValuesIn(sweep_cases()),
                         [](const auto& info) { return info.param.name; });

/// The ops' table of docs/ops/quantize.md, from the catalog.
std::string catalog_table() {
  const auto fields = [](unsigned flags) {
    std::string r;
    for (std::string_view role : kRoles)
      if (flags & detail::quantize_operand_flag(role)) r += (r.empty() ? "" : ", ") + std::string(role);
    return r;
  };
  const auto form = [](detail::QuantizeForm f) -> std::string_view {
    switch (f) {
      case detail::QuantizeForm::Quantizes: return "y / s32";
      case detail::QuantizeForm::Dequantizes: return "x / s32";
      case detail::QuantizeForm::Float: return "none / s32";
      case detail::QuantizeForm::Learnable: return "none / the scale's kind";
    }
    return "?";
  };
  std::string t = "| op | reads | writes | quantized operand / zero point | computes |\n|---|---|---|---|---|\n";
  for (const detail::QuantizeOpInfo& i : detail::kQuantizeOps)
    t += "| `" + std::string(i.name) + "` | " + fields(i.reads) + " | " + fields(i.writes) + " | " +
         std::string(form(i.form)) + " | " + std::string(i.doc) + " |\n";
  return t;
}

TEST(QuantizeDocs, TableIsTheCatalog) {
  expect_doc_table("quantize.md", "quantize_ops.def", "quantize_test", catalog_table());
}

}  // namespace
}  // namespace baracuda::test
