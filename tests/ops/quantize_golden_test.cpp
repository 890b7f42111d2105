// QuantizePlan against PyTorch's CPU quantization kernels (tests/data/quantize_golden.txt, made by
// tests/data/gen_quantize_golden.py with PyTorch 1.13; the script's header documents every fact used here).
// Each case runs through dynamic::QuantizePlan (select, can_implement, run) on the host, sim and cuda devices:
// - quantize cases: Quantize (x → q; s8 and u8 exactly, u4 as packed bytes exactly, even element in the low
//   nibble as PyTorch's quint4x2) and Dequantize (PyTorch's q → y, f32 bits exactly: one rounding);
// - fake cases: FakeQuantize (y bits exactly) and FakeQuantizeBackward (dx = dy · mask, bits exactly);
// - learnable cases: FakeQuantizeLearnable (y bits exactly) and FakeQuantizeLearnableBackward (dx bits exactly;
//   dscale / dzero_point, which are sums, within the bound derived at `sum_tolerance`).
// Per tensor and per channel (axis 0, 1, 2 of 2-D and 3-D tensors), power-of-two and other scales.
//
// PyTorch multiplies by 1.0f / s where baracuda divides by s. Elements where the two round differently are
// listed by the script (`skip`, computed in numpy float32) and skipped here, and only those: the test counts
// them and checks they stay rare. PyTorch's per-tensor learnable backward rounds the zero point as
// trunc(zp + 0.5) where its forward (and baracuda) round half to even; for those cases (negative or x.5 zero
// points) the gradients are compared with PyTorch's backward computed with the forward's zero point (the
// script's `*_fwdzp` lines: the per-channel op on one channel), and the difference is reported, not hidden.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <deque>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "baracuda/baracuda.hpp"
#include "baracuda/ops/quantize.hpp"
#include "support/devices.hpp"
#include "support/numeric.hpp"
#include "support/tensor.hpp"

namespace baracuda::test {
namespace {

constexpr uint8_t kSentinel = 0xA5;

// ---------------------------------------------------------------------------------------------------
// The golden file
// ---------------------------------------------------------------------------------------------------

struct GoldenCase {
  std::string line;  // the case header, for messages
  std::string kind;  // quantize | fake | learnable
  std::string qdtype;
  bool per_channel = false;
  int axis = 0;
  int32_t qmin = 0, qmax = 0;
  double grad_factor = 1.0;
  Shape shape;
  // f32 values as raw little-endian bytes (4 per element)
  std::map<std::string, std::vector<uint8_t>> f32;
  // integer lines (zp for quantize/fake, q, zp_fwd, zp_bwd, skip, skip_y) and the packed bytes
  std::map<std::string, std::vector<int64_t>> ints;
  std::vector<uint8_t> packed;

  bool has(const std::string& tag) const { return f32.count(tag) != 0; }
  const std::vector<uint8_t>& f(const std::string& tag) const {
    static const std::vector<uint8_t> empty;
    auto it = f32.find(tag);
    return it == f32.end() ? empty : it->second;
  }
  const std::vector<int64_t>& i(const std::string& tag) const {
    static const std::vector<int64_t> empty;
    auto it = ints.find(tag);
    return it == ints.end() ? empty : it->second;
  }
  int64_t params() const { return per_channel ? shape.dims[axis] : 1; }
};

std::vector<GoldenCase> golden_cases() {
  std::ifstream file(std::string(BARACUDA_TEST_DATA_DIR) + "/quantize_golden.txt");
  std::vector<GoldenCase> cases;
  if (!file) return cases;
  static const std::set<std::string> kIntTags = {"q", "zp_fwd", "zp_bwd", "skip", "skip_y"};
  std::string line;
  while (std::getline(file, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream in(line);
    std::string tag;
    in >> tag;
    if (tag == "case") {
      GoldenCase c;
      c.line = line;
      std::string gran;
      int rank = 0;
      in >> c.kind >> c.qdtype >> gran >> c.axis >> c.qmin >> c.qmax >> c.grad_factor >> rank;
      c.per_channel = gran == "per_channel";
      c.shape.rank = rank;
      for (int d = 0; d < rank; ++d) in >> c.shape.dims[d];
      cases.push_back(c);
      continue;
    }
    if (cases.empty()) continue;
    GoldenCase& c = cases.back();
    std::string tok;
    const bool int_line = kIntTags.count(tag) != 0 || (tag == "zp" && c.kind != "learnable");
    if (tag == "packed") {
      while (in >> tok) c.packed.push_back(static_cast<uint8_t>(std::stoul(tok, nullptr, 16)));
    } else if (int_line) {
      std::vector<int64_t>& v = c.ints[tag];
      while (in >> tok) v.push_back(std::stoll(tok));
    } else {
      std::vector<uint8_t>& v = c.f32[tag];
      while (in >> tok) {
        const uint32_t bits = static_cast<uint32_t>(std::stoul(tok, nullptr, 16));
        const size_t at = v.size();
        v.resize(at + 4);
        std::memcpy(&v[at], &bits, 4);
      }
    }
  }
  return cases;
}

float f32_at(const std::vector<uint8_t>& bytes, size_t i) {
  float v;
  std::memcpy(&v, &bytes[i * 4], 4);
  return v;
}

ElementKind quantized_kind(const std::string& qdtype) {
  if (qdtype == "s8") return ElementKind::S8;
  if (qdtype == "u8") return ElementKind::U8;
  return ElementKind::U4;
}

/// The descriptor of a case (fake / learnable: the 8-bit kind that holds [qmin, qmax]).
QuantizeDescriptor descriptor_of(const GoldenCase& c) {
  const ElementKind qk = c.kind == "quantize" ? quantized_kind(c.qdtype)
                                              : (c.qmin < 0 ? ElementKind::S8 : ElementKind::U8);
  return QuantizeDescriptor()
      .with_element(ElementKind::F32)
      .with_quantized(qk)
      .with_shape(c.shape)
      .with_granularity(c.per_channel ? QuantGranularity::per_channel(c.axis) : QuantGranularity::per_tensor())
      .with_range(c.qmin, c.qmax)
      .with_grad_factor(c.grad_factor);
}

std::vector<uint8_t> int32_bytes(const std::vector<int64_t>& v) {
  std::vector<uint8_t> out(v.size() * 4);
  for (size_t i = 0; i < v.size(); ++i) {
    const auto z = static_cast<int32_t>(v[i]);
    std::memcpy(&out[i * 4], &z, 4);
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
  DynTensor input(ElementKind k, const Shape& s, const std::vector<uint8_t>& bytes) {
    EXPECT_EQ(bytes.size(), static_cast<size_t>(storage_bytes(k, s.numel()))) << "golden operand size";
    return make(k, s, bytes);
  }
  DynTensor output(ElementKind k, const Shape& s, DeviceTensor** out) {
    DynTensor v = make(k, s, std::vector<uint8_t>(static_cast<size_t>(storage_bytes(k, s.numel())), kSentinel));
    *out = &tensors_.back();
    return v;
  }

 private:
  DynTensor make(ElementKind k, const Shape& s, const std::vector<uint8_t>& bytes) {
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
bool run_plan(const Stream& stream, const dynamic::QuantizePlan& plan, const QuantizeTensors& t) {
  const Status ok = plan.can_implement(t);
  EXPECT_TRUE(ok) << ok.to_string();
  if (!ok) return false;
  Buffer ws;
  if (plan.workspace_size() > 0) {
    auto b = Buffer::allocate(stream, plan.workspace_size());
    EXPECT_TRUE(b) << b.error().to_string();
    if (!b) return false;
    ws = std::move(*b);
  }
  const Status s = plan.run(stream, Workspace(ws.data(), ws.size()), t);
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
  int64_t compared = 0;
  int64_t skipped = 0;
};

/// f32 bit patterns equal, element by element, except at the `skip` indices.
::testing::AssertionResult same_f32(const std::vector<uint8_t>& got, const std::vector<uint8_t>& want,
                                    const std::vector<int64_t>& skip, Counts* counts) {
  if (got.size() != want.size()) return ::testing::AssertionFailure() << "sizes differ";
  const std::set<int64_t> skipped(skip.begin(), skip.end());
  std::ostringstream os;
  int64_t bad = 0;
  const int64_t n = static_cast<int64_t>(want.size() / 4);
  for (int64_t i = 0; i < n; ++i) {
    if (skipped.count(i)) {
      ++counts->skipped;
      continue;
    }
    ++counts->compared;
    if (std::memcmp(&got[i * 4], &want[i * 4], 4) == 0) continue;
    if (bad++ < 8)
      os << "\n  [" << i << "] got " << describe(ElementKind::F32, &got[i * 4]) << ", expected "
         << describe(ElementKind::F32, &want[i * 4]);
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " of " << n << " elements differ:" << os.str();
}

/// Quantized output (s8/u8 bytes, or u4 packed bytes) against PyTorch's q values (and packed bytes).
::testing::AssertionResult same_q(ElementKind k, const std::vector<uint8_t>& got, const GoldenCase& c,
                                  Counts* counts) {
  const std::vector<int64_t>& want = c.i("q");
  const std::set<int64_t> skipped(c.i("skip").begin(), c.i("skip").end());
  std::ostringstream os;
  int64_t bad = 0;
  const auto n = static_cast<int64_t>(want.size());
  if (k == ElementKind::U4) {
    if (got.size() != c.packed.size() || static_cast<int64_t>(c.packed.size() * 2) != n)
      return ::testing::AssertionFailure() << "packed sizes differ: " << got.size() << " vs " << c.packed.size();
    for (size_t b = 0; b < c.packed.size(); ++b) {
      const auto e0 = static_cast<int64_t>(2 * b), e1 = e0 + 1;
      if (skipped.count(e0) || skipped.count(e1)) {
        counts->skipped += 2;
        continue;
      }
      counts->compared += 2;
      // The golden byte is PyTorch's quint4x2 byte; check it against the unpacked q too (low nibble = even).
      EXPECT_EQ(c.packed[b], static_cast<uint8_t>(want[e0] | (want[e1] << 4))) << "golden data inconsistent";
      if (got[b] == c.packed[b]) continue;
      if (bad++ < 8)
        os << "\n  byte " << b << " (elements " << e0 << ", " << e1 << ") got 0x" << std::hex << int(got[b])
           << ", expected 0x" << int(c.packed[b]) << std::dec;
    }
  } else {
    if (static_cast<int64_t>(got.size()) != n) return ::testing::AssertionFailure() << "sizes differ";
    for (int64_t i = 0; i < n; ++i) {
      if (skipped.count(i)) {
        ++counts->skipped;
        continue;
      }
      ++counts->compared;
      const int64_t g = k == ElementKind::S8 ? static_cast<int64_t>(static_cast<int8_t>(got[i])) : got[i];
      if (g == want[i]) continue;
      if (bad++ < 8) os << "\n  [" << i << "] got " << g << ", expected " << want[i];
    }
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " of " << n << " elements differ:" << os.str();
}

/// The tolerance for a learnable parameter gradient, a sum of n per-element terms t_i with Σ|t_i| = abs_sum (the
/// file's ds_abs / dzp_abs). PyTorch's term dy·(xfq − x)·(1/s)·gf carries at most 4 float32 roundings (1/s
/// included), baracuda's dy·(y − x)/s·gf at most 3 (outside the range: two products each); y − x is exact on
/// both sides (the same y, within a factor 2 of x or 0: Sterbenz). Any float32 summation order adds at most
/// (n − 1)·u·Σ|t_i|, u = 2^-24 (float64 accumulation less). Together: (2(n − 1) + 7)·u·Σ|t_i|; we allow
/// (2n + 16)·u·Σ|t_i|.
double sum_tolerance(int64_t n, double abs_sum) {
  return (2.0 * static_cast<double>(n) + 16.0) * std::ldexp(1.0, -24) * abs_sum + 1e-30;
}

::testing::AssertionResult close_sums(const std::vector<uint8_t>& got, const std::vector<uint8_t>& want,
                                      const std::vector<uint8_t>& abs_sum, int64_t n) {
  if (got.size() != want.size() || abs_sum.size() != want.size())
    return ::testing::AssertionFailure() << "sizes differ";
  std::ostringstream os;
  int bad = 0;
  for (size_t i = 0; i < want.size() / 4; ++i) {
    const double g = f32_at(got, i), w = f32_at(want, i), tol = sum_tolerance(n, f32_at(abs_sum, i));
    if (std::fabs(g - w) <= tol) continue;
    ++bad;
    os << "\n  [" << i << "] got " << g << ", expected " << w << " (|diff| " << std::fabs(g - w) << " > tolerance "
       << tol << ", sum|terms| " << f32_at(abs_sum, i) << ")";
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " of " << want.size() / 4 << " sums differ:" << os.str();
}

// ---------------------------------------------------------------------------------------------------
// The cases
// ---------------------------------------------------------------------------------------------------

Result<dynamic::QuantizePlan> plan_for(const Stream& stream, QuantizeOp op, const GoldenCase& c) {
  return dynamic::QuantizePlan::select(stream, op, descriptor_of(c));
}

void run_quantize_case(const Stream& stream, const GoldenCase& c, Counts* counts) {
  const QuantizeDescriptor d = descriptor_of(c);
  const Shape pshape{c.params()};
  {  // Quantize
    auto p = plan_for(stream, QuantizeOp::Quantize, c);
    ASSERT_TRUE(p) << p.error().to_string();
    EXPECT_EQ(p->quant_min(), c.qmin);
    EXPECT_EQ(p->quant_max(), c.qmax);
    Operands ops(stream);
    DeviceTensor* q = nullptr;
    QuantizeTensors t;
    t.x = ops.input(ElementKind::F32, c.shape, c.f("x"));
    t.scale = ops.input(ElementKind::F32, pshape, c.f("scale"));
    t.zero_point = ops.input(ElementKind::S32, pshape, int32_bytes(c.i("zp")));
    t.q = ops.output(d.quantized, c.shape, &q);
    if (run_plan(stream, *p, t)) {
      EXPECT_TRUE(same_q(d.quantized, download(*q), c, counts)) << "quantize";
    }
  }
  {  // Dequantize PyTorch's q
    auto p = plan_for(stream, QuantizeOp::Dequantize, c);
    ASSERT_TRUE(p) << p.error().to_string();
    std::vector<uint8_t> qbytes;
    if (d.quantized == ElementKind::U4) {
      qbytes = c.packed;
    } else {
      for (int64_t v : c.i("q")) qbytes.push_back(static_cast<uint8_t>(v));
    }
    Operands ops(stream);
    DeviceTensor* y = nullptr;
    QuantizeTensors t;
    t.q = ops.input(d.quantized, c.shape, qbytes);
    t.scale = ops.input(ElementKind::F32, pshape, c.f("scale"));
    t.zero_point = ops.input(ElementKind::S32, pshape, int32_bytes(c.i("zp")));
    t.y = ops.output(ElementKind::F32, c.shape, &y);
    if (run_plan(stream, *p, t)) {
      EXPECT_TRUE(same_f32(download(*y), c.f("y"), c.i("skip_y"), counts)) << "dequantize";
    }
  }
}

void run_fake_case(const Stream& stream, const GoldenCase& c, Counts* counts) {
  const Shape pshape{c.params()};
  {
    auto p = plan_for(stream, QuantizeOp::FakeQuantize, c);
    ASSERT_TRUE(p) << p.error().to_string();
    Operands ops(stream);
    DeviceTensor* y = nullptr;
    QuantizeTensors t;
    t.x = ops.input(ElementKind::F32, c.shape, c.f("x"));
    t.scale = ops.input(ElementKind::F32, pshape, c.f("scale"));
    t.zero_point = ops.input(ElementKind::S32, pshape, int32_bytes(c.i("zp")));
    t.y = ops.output(ElementKind::F32, c.shape, &y);
    if (run_plan(stream, *p, t)) {
      EXPECT_TRUE(same_f32(download(*y), c.f("y"), c.i("skip"), counts)) << "forward";
    }
  }
  {
    auto p = plan_for(stream, QuantizeOp::FakeQuantizeBackward, c);
    ASSERT_TRUE(p) << p.error().to_string();
    Operands ops(stream);
    DeviceTensor* dx = nullptr;
    QuantizeTensors t;
    t.x = ops.input(ElementKind::F32, c.shape, c.f("x"));
    t.scale = ops.input(ElementKind::F32, pshape, c.f("scale"));
    t.zero_point = ops.input(ElementKind::S32, pshape, int32_bytes(c.i("zp")));
    t.dy = ops.input(ElementKind::F32, c.shape, c.f("dy"));
    t.dx = ops.output(ElementKind::F32, c.shape, &dx);
    if (run_plan(stream, *p, t)) {
      EXPECT_TRUE(same_f32(download(*dx), c.f("dx"), c.i("skip"), counts)) << "backward";
    }
  }
}

/// PyTorch's per-tensor backward rounds the zero point differently from its forward in this case.
bool zero_point_quirk(const GoldenCase& c) { return c.i("zp_fwd") != c.i("zp_bwd"); }

void run_learnable_case(const Stream& stream, const GoldenCase& c, Counts* counts, int* quirk_cases) {
  const Shape pshape{c.params()};
  {
    auto p = plan_for(stream, QuantizeOp::FakeQuantizeLearnable, c);
    ASSERT_TRUE(p) << p.error().to_string();
    Operands ops(stream);
    DeviceTensor* y = nullptr;
    QuantizeTensors t;
    t.x = ops.input(ElementKind::F32, c.shape, c.f("x"));
    t.scale = ops.input(ElementKind::F32, pshape, c.f("scale"));
    t.zero_point = ops.input(ElementKind::F32, pshape, c.f("zp"));
    t.y = ops.output(ElementKind::F32, c.shape, &y);
    if (run_plan(stream, *p, t)) {
      EXPECT_TRUE(same_f32(download(*y), c.f("y"), {}, counts)) << "forward";
    }
  }
  auto p = plan_for(stream, QuantizeOp::FakeQuantizeLearnableBackward, c);
  ASSERT_TRUE(p) << p.error().to_string();
  Operands ops(stream);
  DeviceTensor *dx = nullptr, *ds = nullptr, *dzp = nullptr;
  QuantizeTensors t;
  t.x = ops.input(ElementKind::F32, c.shape, c.f("x"));
  t.scale = ops.input(ElementKind::F32, pshape, c.f("scale"));
  t.zero_point = ops.input(ElementKind::F32, pshape, c.f("zp"));
  t.dy = ops.input(ElementKind::F32, c.shape, c.f("dy"));
  t.dx = ops.output(ElementKind::F32, c.shape, &dx);
  t.dscale = ops.output(ElementKind::F32, pshape, &ds);
  t.dzero_point = ops.output(ElementKind::F32, pshape, &dzp);
  if (!run_plan(stream, *p, t)) return;
  const int64_t n = c.shape.numel() / c.params();
  const std::vector<uint8_t> got_dx = download(*dx), got_ds = download(*ds), got_dzp = download(*dzp);
  if (!zero_point_quirk(c)) {
    EXPECT_TRUE(same_f32(got_dx, c.f("dx"), {}, counts)) << "dx";
    EXPECT_TRUE(close_sums(got_ds, c.f("ds"), c.f("ds_abs"), n)) << "dscale";
    EXPECT_TRUE(close_sums(got_dzp, c.f("dzp"), c.f("dzp_abs"), n)) << "dzero_point";
    return;
  }
  // PyTorch's per-tensor backward used zp_bwd = trunc(zp + 0.5) where its forward used zp_fwd (round half to
  // even); baracuda documents the forward's rounding for both, so compare with PyTorch's backward at zp_fwd.
  ++*quirk_cases;
  ASSERT_TRUE(c.has("dx_fwdzp") && c.has("ds_fwdzp") && c.has("dzp_fwdzp") && c.has("ds_abs_fwdzp") &&
              c.has("dzp_abs_fwdzp")) << "golden data incomplete";
  EXPECT_TRUE(same_f32(got_dx, c.f("dx_fwdzp"), {}, counts)) << "dx (PyTorch's backward at the forward's zp "
                                                             << c.i("zp_fwd")[0] << ")";
  EXPECT_TRUE(close_sums(got_ds, c.f("ds_fwdzp"), c.f("ds_abs_fwdzp"), n)) << "dscale at the forward's zp";
  EXPECT_TRUE(close_sums(got_dzp, c.f("dzp_fwdzp"), c.f("dzp_abs_fwdzp"), n)) << "dzero_point at the forward's zp";
  // What PyTorch's own per-tensor backward gives, for the record (the test does not require it).
  std::ostringstream note;
  note << "PyTorch's per-tensor learnable backward rounds zp " << f32_at(c.f("zp"), 0) << " to " << c.i("zp_bwd")[0]
       << " (forward: " << c.i("zp_fwd")[0] << "): its dscale " << f32_at(c.f("ds"), 0) << ", dzero_point "
       << f32_at(c.f("dzp"), 0) << "; baracuda " << f32_at(got_ds, 0) << ", " << f32_at(got_dzp, 0);
  ::testing::Test::RecordProperty("zp_rounding_" + std::to_string(*quirk_cases), note.str());
  std::cout << "[ note     ] " << note.str() << "\n";
}

class QuantizeGolden : public ::testing::TestWithParam<DeviceKind> {};

TEST_P(QuantizeGolden, MatchesPyTorch) {
  BARACUDA_TEST_STREAM(stream, GetParam());
  const std::vector<GoldenCase> cases = golden_cases();
  ASSERT_GE(cases.size(), 50u) << "tests/data/quantize_golden.txt is missing or short";
  {
    auto probe = dynamic::QuantizePlan::select(stream, QuantizeOp::Quantize, descriptor_of(cases.front()));
    BARACUDA_SKIP_IF_NO_CUDA_KERNELS(probe, GetParam());
  }
  Counts counts;
  int quirk_cases = 0;
  std::map<std::string, int> seen;
  for (const GoldenCase& c : cases) {
    SCOPED_TRACE(c.line);
    ASSERT_EQ(c.f("x").size(), static_cast<size_t>(c.shape.numel() * 4));
    ASSERT_EQ(c.f("scale").size(), static_cast<size_t>(c.params() * 4));
    if (c.kind == "quantize") run_quantize_case(stream, c, &counts);
    else if (c.kind == "fake") run_fake_case(stream, c, &counts);
    else if (c.kind == "learnable") run_learnable_case(stream, c, &counts, &quirk_cases);
    else ADD_FAILURE() << "unknown case kind " << c.kind;
    ++seen[c.kind + "/" + c.qdtype + "/" + (c.per_channel ? "per_channel" + std::to_string(c.axis) : "per_tensor")];
  }
  // Coverage: every kind, both granularities, every per-channel axis, s8/u8/u4; the quirk cases are present.
  for (const char* k : {"quantize/s8/per_tensor", "quantize/u8/per_tensor", "quantize/u4/per_tensor",
                        "quantize/s8/per_channel0", "quantize/s8/per_channel1", "quantize/s8/per_channel2",
                        "quantize/u8/per_channel0", "quantize/u8/per_channel1", "quantize/u8/per_channel2",
                        "fake/-/per_tensor", "fake/-/per_channel0", "fake/-/per_channel1", "fake/-/per_channel2",
                        "learnable/-/per_tensor", "learnable/-/per_channel0", "learnable/-/per_channel1",
                        "learnable/-/per_channel2"})
    EXPECT_TRUE(seen.count(k)) << "no golden case " << k;
  EXPECT_GE(quirk_cases, 1);
  // The reciprocal-vs-division skips stay rare (a systematic difference would not hide behind them).
  EXPECT_GT(counts.compared, 3000);
  EXPECT_LE(counts.skipped * 100, counts.compared) << counts.skipped << " skipped of " << counts.compared;
  RecordProperty("compared", std::to_string(counts.compared));
  RecordProperty("skipped", std::to_string(counts.skipped));
  std::cout << "[ note     ] " << counts.compared << " elements compared, " << counts.skipped
            << " skipped (x*(1/s) and x/s round differently)\n";
}

INSTANTIATE_TEST_SUITE_P(Devices, QuantizeGolden, ::testing::ValuesIn(kTestDevices),
                         [](const auto& info) { return std::string(to_string(info.param)); });

}  // namespace
}  // namespace baracuda::test
