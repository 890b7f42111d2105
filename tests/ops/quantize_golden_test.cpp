// QuantizePlan against PyTorch 1.13's CPU quantization kernels (tests/data/quantize_golden.json, made by
// tests/data/gen_quantize_golden.py; the script's docstring documents which PyTorch function made each tensor
// and every fact used here). Each case runs through dynamic::QuantizePlan (select, can_implement, run) on the host,
// sim and cuda devices, under each convention that applies:
// - PyTorch (the default): every element bit for bit, nothing skipped — quantize (s8, u8, and u4 as PyTorch's
//   quint4x2 bytes), dequantize, fake-quantize (f16, f32, f64) and its backward, the learnable fake-quantize
//   (f16, f32, f64 forward; f32 backward: dx bit for bit, dscale / dzero_point bit for bit where each parameter
//   has one element, within `sum_tolerance` otherwise, as PyTorch sums in f32 in another order). The
//   QuantizeBackward expectations (`qb_dx`, an op PyTorch lacks) are the script's numpy model of baracuda's
//   dy / s · mask, with PyTorch's mask.
// - Vllm: quantize equals PyTorch's q on these inputs (vLLM's azp formula is the same reciprocal product; its
//   int32 saturation never triggers here), dequantize equals PyTorch's y.
// - Exact: the `exact_*` lines, a numpy model of one correctly rounded division x / s (NOT PyTorch).
// The inputs are dense in near rounding ties at non-power-of-two scales; the test counts, per section, the
// elements where PyTorch's expectation and Exact's differ and requires some in every section, so that a
// convention mix-up cannot pass.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <deque>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "baracuda/baracuda.hpp"
#include "baracuda/ops/quantize.hpp"
#include "support/devices.hpp"
#include "support/golden.hpp"
#include "support/numeric.hpp"
#include "support/tensor.hpp"

namespace baracuda::test {
namespace {

using C = QuantConvention;
using Bytes = std::vector<uint8_t>;

// ---------------------------------------------------------------------------------------------------
// The golden file
// ---------------------------------------------------------------------------------------------------

struct GoldenCase {
  std::string line;  // the case's name, for messages
  std::string kind;  // quantize | fake | learnable
  std::string element_name;
  ElementKind element = ElementKind::F32;
  std::string qdtype;
  bool per_channel = false;
  int axis = 0;
  int32_t qmin = 0, qmax = 0;
  double grad_factor = 1.0;
  Shape shape;
  std::map<std::string, Bytes> floats;                 // raw little-endian bytes of each float tensor
  std::map<std::string, std::vector<int64_t>> ints;  // q, exact_q, zp (quantize/fake), zp_fwd, zp_bwd, mask
  Bytes packed;

  bool has(const std::string& tag) const { return floats.count(tag) != 0; }
  const Bytes& f(const std::string& tag) const {
    static const Bytes empty;
    auto it = floats.find(tag);
    return it == floats.end() ? empty : it->second;
  }
  const std::vector<int64_t>& i(const std::string& tag) const {
    static const std::vector<int64_t> empty;
    auto it = ints.find(tag);
    return it == ints.end() ? empty : it->second;
  }
  int64_t params() const { return per_channel ? shape.dims[axis] : 1; }
  ElementKind scale_kind() const { return element == ElementKind::F64 ? ElementKind::F64 : ElementKind::F32; }
  std::string section() const { return kind + "/" + element_name; }
};

std::vector<GoldenCase> golden_cases() {
  return load_golden_as<GoldenCase>("quantize", nullptr, [](const test::GoldenCase& g) {
    GoldenCase c;
    c.line = g.name;
    c.kind = g.param<std::string>("kind");
    c.element_name = g.param<std::string>("element");
    EXPECT_TRUE(parse_element_kind(c.element_name, &c.element)) << g.name;
    c.qdtype = g.param<std::string>("qdtype");
    c.per_channel = g.param<std::string>("granularity") == "per_channel";
    c.axis = g.param<int>("axis");
    c.qmin = g.param<int32_t>("qmin");
    c.qmax = g.param<int32_t>("qmax");
    c.grad_factor = g.param<double>("grad_factor");
    const auto dims = g.param<std::vector<int64_t>>("shape");
    c.shape.rank = static_cast<int>(dims.size());
    for (size_t d = 0; d < dims.size(); ++d) c.shape.dims[d] = dims[d];
    for (const auto& [tag, t] : g.tensors) {
      if (tag == "packed") c.packed = t.bytes();
      else if (t.kind == ElementKind::S32) c.ints[tag] = t.ints();
      else c.floats[tag] = t.bytes();  // f16, f32 or f64 storage
    }
    return c;
  });
}

ElementKind quantized_kind(const std::string& qdtype) {
  if (qdtype == "s8") return ElementKind::S8;
  if (qdtype == "u8") return ElementKind::U8;
  return ElementKind::U4;
}

/// The descriptor of a case under convention `conv` (fake / learnable: the 8-bit kind that holds the range).
QuantizeDescriptor descriptor_of(const GoldenCase& c, C conv) {
  const ElementKind qk = c.kind == "quantize" ? quantized_kind(c.qdtype)
                                              : (c.qmin < 0 ? ElementKind::S8 : ElementKind::U8);
  return QuantizeDescriptor()
      .with_element(c.element)
      .with_quantized(qk)
      .with_shape(c.shape)
      .with_granularity(c.per_channel ? QuantGranularity::per_channel(c.axis) : QuantGranularity::per_tensor())
      .with_range(c.qmin, c.qmax)
      .with_grad_factor(c.grad_factor)
      .with_convention(conv);
}

Bytes int32_bytes(const std::vector<int64_t>& v) {
  Bytes out(v.size() * 4);
  for (size_t i = 0; i < v.size(); ++i) {
    const auto z = static_cast<int32_t>(v[i]);
    std::memcpy(&out[i * 4], &z, 4);
  }
  return out;
}

/// The storage bytes of integer values q in quantized kind k (u4: packed, even element in the low nibble).
Bytes q_bytes(ElementKind k, const std::vector<int64_t>& q) {
  Bytes out;
  if (k == ElementKind::U4) {
    for (size_t i = 0; i + 1 < q.size(); i += 2) out.push_back(static_cast<uint8_t>(q[i] | (q[i + 1] << 4)));
  } else {
    for (int64_t v : q) out.push_back(static_cast<uint8_t>(v));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------
// Running one op on a device
// ---------------------------------------------------------------------------------------------------

/// Owns the device tensors of one run; inputs are uploaded, outputs start as sentinel bytes.
class Operands {
 public:
  explicit Operands(const Stream& stream) : stream_(stream) {}
  DynTensor input(ElementKind k, const Shape& s, const Bytes& bytes) {
    EXPECT_EQ(bytes.size(), static_cast<size_t>(storage_bytes(k, s.numel()))) << "golden operand size";
    return make(k, s, bytes);
  }
  DynTensor output(ElementKind k, const Shape& s, DeviceTensor** out) {
    DynTensor v = make(k, s, Bytes(static_cast<size_t>(storage_bytes(k, s.numel())), kSentinel));
    *out = &tensors_.back();
    return v;
  }

 private:
  DynTensor make(ElementKind k, const Shape& s, const Bytes& bytes) {
    auto t = make_device_tensor(stream_, k, s, dense_layout(s), bytes);
    EXPECT_TRUE(t) << t.error().to_string();
    if (!t) return {};
    tensors_.push_back(std::move(*t));
    return tensors_.back().view;
  }
  const Stream& stream_;
  std::deque<DeviceTensor> tensors_;
};

/// select → can_implement → run (with a workspace of workspace_size()); false with a failure recorded otherwise.
bool run_op(const Stream& stream, QuantizeOp op, const QuantizeDescriptor& d, const dynamic::QuantizeArgs& t) {
  auto plan = dynamic::QuantizePlan::select(stream, QuantizeDescriptor{d}.with_op(op));
  EXPECT_TRUE(plan) << to_string(op) << ": " << plan.error().to_string();
  if (!plan) return false;
  const Status ok = plan->can_implement(t);
  EXPECT_TRUE(ok) << ok.to_string();
  if (!ok) return false;
  Buffer ws;
  if (plan->workspace_size() > 0) {
    auto b = Buffer::allocate(stream, plan->workspace_size());
    EXPECT_TRUE(b) << b.error().to_string();
    if (!b) return false;
    ws = std::move(*b);
  }
  const Status s = plan->run(stream, Workspace(ws.data(), ws.size()), t);
  EXPECT_TRUE(s) << s.to_string();
  if (!s) return false;
  const Status sync = stream.synchronize();
  EXPECT_TRUE(sync) << sync.to_string();
  return static_cast<bool>(sync);
}

// ---------------------------------------------------------------------------------------------------
// Comparisons
// ---------------------------------------------------------------------------------------------------

struct Counts {
  std::map<std::string, int64_t> compared;  // elements compared bit for bit, per convention
  std::map<std::string, int64_t> differ;    // per section: elements where PyTorch's and Exact's expectations differ
  int64_t sums_exact = 0, sums_tolerance = 0;
};

/// Element-by-element bit equality of two arrays of kind k.
::testing::AssertionResult same_bits(ElementKind k, const Bytes& got, const Bytes& want, int64_t* compared) {
  if (got.size() != want.size() || want.empty())
    return ::testing::AssertionFailure() << "sizes differ: " << got.size() << " vs " << want.size();
  const auto w = static_cast<size_t>(element_bytes(k));
  std::ostringstream os;
  int64_t bad = 0;
  for (size_t i = 0; i < want.size() / w; ++i) {
    ++*compared;
    if (std::memcmp(&got[i * w], &want[i * w], w) == 0) continue;
    if (bad++ < 8)
      os << "\n  [" << i << "] got " << describe(k, &got[i * w]) << ", expected " << describe(k, &want[i * w]);
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " of " << want.size() / w << " elements differ:" << os.str();
}

/// Elements of kind k (width w) where a and b differ.
int64_t count_differing(ElementKind k, const Bytes& a, const Bytes& b) {
  const auto w = static_cast<size_t>(element_bytes(k));
  int64_t n = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()) / w; ++i) n += std::memcmp(&a[i * w], &b[i * w], w) != 0;
  return n;
}

double f32_at(const Bytes& bytes, size_t i) {
  float v;
  std::memcpy(&v, &bytes[i * 4], 4);
  return v;
}

/// The tolerance on a learnable parameter gradient with n > 1 terms t_i per parameter, Σ|t_i| = abs_sum (the
/// file's ds_abs / dzp_abs and exact_* variants). PyTorch: the terms are bit-identical on both sides (checked
/// through dx and the one-element cases); PyTorch adds them in f32 in its own order, at most (n − 1)·u·Σ|t_i|
/// apart from the exact sum (u = 2^-24), baracuda in f64 and rounds once (u·Σ|t_i|): we allow (n + 2)·u·Σ|t_i|.
/// Exact: both sums are in f64 (n·2^-53·Σ|t_i| each) and rounded once to f32 (1 ulp ≤ 2^-23·Σ|t_i| apart).
double sum_tolerance(C conv, int64_t n, double abs_sum) {
  const double u = std::ldexp(1.0, -24);
  if (conv == C::PyTorch) return (static_cast<double>(n) + 2.0) * u * abs_sum + 1e-30;
  return (2.0 * u + 2.0 * static_cast<double>(n) * std::ldexp(1.0, -53)) * abs_sum + 1e-30;
}

/// A learnable parameter gradient: bit for bit with one element per parameter, within sum_tolerance otherwise.
void check_sums(C conv, const Bytes& got, const Bytes& want, const Bytes& abs_sum, int64_t n, const char* what,
                Counts* counts) {
  if (n == 1) {
    ++counts->sums_exact;
    EXPECT_TRUE(same_bits(ElementKind::F32, got, want, &counts->compared[std::string(to_string(conv))])) << what;
    return;
  }
  ++counts->sums_tolerance;
  ASSERT_EQ(got.size(), want.size());
  ASSERT_EQ(abs_sum.size(), want.size());
  for (size_t i = 0; i < want.size() / 4; ++i) {
    const double g = f32_at(got, i), w = f32_at(want, i), tol = sum_tolerance(conv, n, f32_at(abs_sum, i));
    EXPECT_LE(std::fabs(g - w), tol) << what << "[" << i << "]: got " << g << ", expected " << w << " (sum|terms| "
                                     << f32_at(abs_sum, i) << ")";
  }
}

// ---------------------------------------------------------------------------------------------------
// The cases
// ---------------------------------------------------------------------------------------------------

void run_quantize_case(const Stream& stream, const GoldenCase& c, Counts* counts) {
  const ElementKind qk = quantized_kind(c.qdtype);
  const Shape pshape{c.params()};
  if (qk == ElementKind::U4) {  // PyTorch's quint4x2 bytes are the packing of its q values
    EXPECT_EQ(c.packed, q_bytes(qk, c.i("q"))) << "golden data inconsistent";
  }
  const Bytes q_torch = qk == ElementKind::U4 ? c.packed : q_bytes(qk, c.i("q"));
  const Bytes q_exact = q_bytes(qk, c.i("exact_q"));
  counts->differ[c.section()] += count_differing(ElementKind::S32, int32_bytes(c.i("q")), int32_bytes(c.i("exact_q")));
  for (C conv : {C::PyTorch, C::Vllm, C::Exact}) {
    SCOPED_TRACE(to_string(conv));
    const QuantizeDescriptor d = descriptor_of(c, conv);
    int64_t& compared = counts->compared[std::string(to_string(conv))];
    {  // Quantize
      Operands ops(stream);
      DeviceTensor* q = nullptr;
      dynamic::QuantizeArgs t;
      t.x = ops.input(ElementKind::F32, c.shape, c.f("x"));
      t.scale = ops.input(ElementKind::F32, pshape, c.f("scale"));
      t.zero_point = ops.input(ElementKind::S32, pshape, int32_bytes(c.i("zp")));
      t.y = ops.output(qk, c.shape, &q);
      if (run_op(stream, QuantizeOp::Quantize, d, t)) {
        const ElementKind bytes_kind = qk == ElementKind::S8 ? ElementKind::S8 : ElementKind::U8;
        EXPECT_TRUE(same_bits(bytes_kind, download(*q), conv == C::Exact ? q_exact : q_torch, &compared)) << "q";
      }
    }
    {  // Dequantize PyTorch's q: the same in every convention
      Operands ops(stream);
      DeviceTensor* y = nullptr;
      dynamic::QuantizeArgs t;
      t.x = ops.input(qk, c.shape, q_torch);
      t.scale = ops.input(ElementKind::F32, pshape, c.f("scale"));
      t.zero_point = ops.input(ElementKind::S32, pshape, int32_bytes(c.i("zp")));
      t.y = ops.output(ElementKind::F32, c.shape, &y);
      if (run_op(stream, QuantizeOp::Dequantize, d, t)) {
        EXPECT_TRUE(same_bits(ElementKind::F32, download(*y), c.f("y"), &compared)) << "dequantize";
      }
    }
  }
}

/// For a fake-quantize case: counts the elements where PyTorch's y and dx differ from the exact model's, then
/// calls check(conv, descriptor, prefix, compared) for PyTorch and Exact, with the convention's descriptor,
/// the prefix of its expected tensors ("exact_" for Exact) and its count of compared elements.
template <class Check>
void for_each_convention(const GoldenCase& c, Counts* counts, Check check) {
  counts->differ[c.section()] += count_differing(c.element, c.f("y"), c.f("exact_y")) +
                                 count_differing(c.element, c.f("dx"), c.f("exact_dx"));
  for (C conv : {C::PyTorch, C::Exact}) {
    SCOPED_TRACE(to_string(conv));
    check(conv, descriptor_of(c, conv), std::string(conv == C::Exact ? "exact_" : ""),
          counts->compared[std::string(to_string(conv))]);
  }
}

void run_fake_case(const Stream& stream, const GoldenCase& c, Counts* counts) {
  const Shape pshape{c.params()};
  const ElementKind e = c.element, sk = c.scale_kind();
  for_each_convention(c, counts, [&](C, const QuantizeDescriptor& d, const std::string& pre, int64_t& compared) {
    auto inputs = [&](Operands& ops, dynamic::QuantizeArgs& t) {
      t.x = ops.input(e, c.shape, c.f("x"));
      t.scale = ops.input(sk, pshape, c.f("scale"));
      t.zero_point = ops.input(ElementKind::S32, pshape, int32_bytes(c.i("zp")));
    };
    {
      Operands ops(stream);
      DeviceTensor* y = nullptr;
      dynamic::QuantizeArgs t;
      inputs(ops, t);
      t.y = ops.output(e, c.shape, &y);
      if (run_op(stream, QuantizeOp::FakeQuantize, d, t))
        EXPECT_TRUE(same_bits(e, download(*y), c.f(pre + "y"), &compared)) << "fake-quantize";
    }
    for (QuantizeOp op : {QuantizeOp::FakeQuantizeBackward, QuantizeOp::QuantizeBackward}) {
      Operands ops(stream);
      DeviceTensor* dx = nullptr;
      dynamic::QuantizeArgs t;
      inputs(ops, t);
      t.dy = ops.input(e, c.shape, c.f("dy"));
      t.dx = ops.output(e, c.shape, &dx);
      const std::string tag = pre + (op == QuantizeOp::QuantizeBackward ? "qb_dx" : "dx");
      if (run_op(stream, op, d, t)) EXPECT_TRUE(same_bits(e, download(*dx), c.f(tag), &compared)) << tag;
    }
  });
}

void run_learnable_case(const Stream& stream, const GoldenCase& c, Counts* counts) {
  const Shape pshape{c.params()};
  const ElementKind e = c.element, sk = c.scale_kind();
  const int64_t n = c.shape.numel() / c.params();
  for_each_convention(c, counts, [&](C conv, const QuantizeDescriptor& d, const std::string& pre, int64_t& compared) {
    {
      Operands ops(stream);
      DeviceTensor* y = nullptr;
      dynamic::QuantizeArgs t;
      t.x = ops.input(e, c.shape, c.f("x"));
      t.scale = ops.input(sk, pshape, c.f("scale"));
      t.zero_point = ops.input(sk, pshape, c.f("zp"));
      t.y = ops.output(e, c.shape, &y);
      if (run_op(stream, QuantizeOp::FakeQuantizeLearnable, d, t))
        EXPECT_TRUE(same_bits(e, download(*y), c.f(pre + "y"), &compared)) << "learnable forward";
    }
    if (!c.has("dx")) return;  // PyTorch 1.13's learnable backward takes f32 only
    Operands ops(stream);
    DeviceTensor *dx = nullptr, *ds = nullptr, *dzp = nullptr;
    dynamic::QuantizeArgs t;
    t.x = ops.input(e, c.shape, c.f("x"));
    t.scale = ops.input(sk, pshape, c.f("scale"));
    t.zero_point = ops.input(sk, pshape, c.f("zp"));
    t.dy = ops.input(e, c.shape, c.f("dy"));
    t.dx = ops.output(e, c.shape, &dx);
    t.dscale = ops.output(sk, pshape, &ds);
    t.dzero_point = ops.output(sk, pshape, &dzp);
    if (!run_op(stream, QuantizeOp::FakeQuantizeLearnableBackward, d, t)) return;
    EXPECT_TRUE(same_bits(e, download(*dx), c.f(pre + "dx"), &compared)) << "learnable dx";
    check_sums(conv, download(*ds), c.f(pre + "ds"), c.f(pre + "ds_abs"), n, "dscale", counts);
    check_sums(conv, download(*dzp), c.f(pre + "dzp"), c.f(pre + "dzp_abs"), n, "dzero_point", counts);
  });
}

/// Every float line of a case has the element count its role implies (a truncated file fails here).
void check_sizes(const GoldenCase& c) {
  const auto data = static_cast<size_t>(storage_bytes(c.element, c.shape.numel()));
  const auto params = static_cast<size_t>(storage_bytes(c.scale_kind(), c.params()));
  for (const auto& [tag, bytes] : c.floats) {
    const bool param = tag == "scale" || tag == "zp" || tag.find("ds") != std::string::npos ||
                       tag.find("dzp") != std::string::npos;
    const bool f32_param = tag.find("ds") != std::string::npos || tag.find("dzp") != std::string::npos;
    EXPECT_EQ(bytes.size(), f32_param ? static_cast<size_t>(4 * c.params()) : (param ? params : data)) << tag;
  }
}

class QuantizeGolden : public ::testing::TestWithParam<DeviceKind> {};

TEST_P(QuantizeGolden, MatchesPyTorchAndTheExactModel) {
  BARACUDA_TEST_STREAM(stream, GetParam());
  const std::vector<GoldenCase> cases = golden_cases();
  ASSERT_GE(cases.size(), 150u) << "tests/data/quantize_golden.json is missing or short";
  {
    auto probe =
        dynamic::QuantizePlan::select(stream, descriptor_of(cases.front(), C::PyTorch).with_op(QuantizeOp::Quantize));
    BARACUDA_SKIP_IF_NO_CUDA_KERNELS(probe, GetParam());
  }
  Counts counts;
  std::map<std::string, int> seen;
  int one_element_learnable = 0;
  for (const GoldenCase& c : cases) {
    SCOPED_TRACE(c.line);
    check_sizes(c);
    if (c.kind == "quantize") run_quantize_case(stream, c, &counts);
    else if (c.kind == "fake") run_fake_case(stream, c, &counts);
    else if (c.kind == "learnable") run_learnable_case(stream, c, &counts);
    else ADD_FAILURE() << "unknown case kind " << c.kind;
    ++seen[c.section() + "/" + c.qdtype + "/" +
           (c.per_channel ? "per_channel" + std::to_string(c.axis) : std::string("per_tensor"))];
    if (c.kind == "learnable" && c.has("dx") && c.shape.numel() == c.params()) ++one_element_learnable;
  }
  // Coverage: every kind and data type, both granularities, every per-channel axis, s8/u8/u4.
  for (const char* k :
       {"quantize/f32/s8/per_tensor", "quantize/f32/u8/per_tensor", "quantize/f32/u4/per_tensor",
        "quantize/f32/s8/per_channel0", "quantize/f32/s8/per_channel1", "quantize/f32/s8/per_channel2",
        "quantize/f32/u8/per_channel0", "quantize/f32/u8/per_channel1", "quantize/f32/u8/per_channel2",
        "fake/f16/-/per_tensor", "fake/f16/-/per_channel0", "fake/f16/-/per_channel1", "fake/f16/-/per_channel2",
        "fake/f32/-/per_tensor", "fake/f32/-/per_channel0", "fake/f32/-/per_channel1", "fake/f32/-/per_channel2",
        "fake/f64/-/per_tensor", "fake/f64/-/per_channel0", "fake/f64/-/per_channel1", "fake/f64/-/per_channel2",
        "learnable/f32/-/per_tensor", "learnable/f32/-/per_channel0", "learnable/f32/-/per_channel1",
        "learnable/f32/-/per_channel2", "learnable/f16/-/per_tensor", "learnable/f16/-/per_channel0",
        "learnable/f64/-/per_tensor", "learnable/f64/-/per_channel0"})
    EXPECT_TRUE(seen.count(k)) << "no golden case " << k;
  EXPECT_GE(one_element_learnable, 40) << "learnable cases with one element per parameter (bit-exact sums)";
  EXPECT_GE(counts.sums_exact, 4 * 40);
  EXPECT_GE(counts.sums_tolerance, 4 * 10);
  // Every section separates the conventions (near ties at non-power-of-two scales), and nothing was skipped.
  for (const char* s : {"quantize/f32", "fake/f16", "fake/f32", "fake/f64", "learnable/f16", "learnable/f32",
                        "learnable/f64"})
    EXPECT_GT(counts.differ[s], 0) << s << ": no element where PyTorch's and Exact's expectations differ";
  EXPECT_GT(counts.compared["pytorch"], 18000);
  EXPECT_GT(counts.compared["exact"], 18000);
  EXPECT_GT(counts.compared["vllm"], 5000);
  std::ostringstream note;
  for (const auto& [conv, n] : counts.compared) note << conv << " " << n << " elements; ";
  for (const auto& [sec, n] : counts.differ) note << sec << " " << n << " differ; ";
  RecordProperty("counts", note.str());
  std::cout << "[ note     ] compared bit for bit: " << note.str() << counts.sums_exact << " sums bit for bit, "
            << counts.sums_tolerance << " within the summation tolerance\n";
}

INSTANTIATE_TEST_SUITE_P(Devices, QuantizeGolden, ::testing::ValuesIn(kTestDevices),
                         [](const auto& info) { return std::string(to_string(info.param)); });

}  // namespace
}  // namespace baracuda::test
