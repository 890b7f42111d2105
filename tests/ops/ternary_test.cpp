// The ternary family (ternary.hpp):
// - every plan (TernaryPlan and TernaryBackwardPlan per catalog op, WherePlan, WhereBackwardPlan) × kind ×
//   layout (empty, rank 0, broadcast over three operands, rank 8, padded, column-major, reversed, unaligned,
//   in place, omitted gradients) on the sim and cuda devices against the host reference, bit for bit (every op
//   is a composition of correctly rounded IEEE operations), inputs of random bits (NaN, inf, subnormals),
//   with guard bytes between the outputs' elements;
// - the host reference against an independent f64 evaluation of PyTorch's formulas within a derived error
//   bound, and against exact expectations at special values;
// - the typed wrappers, and every rejection of select, can_implement and run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "baracuda/baracuda.hpp"
#include "baracuda/ops/ternary.hpp"
#include "support/compare.hpp"
#include "support/devices.hpp"
#include "support/expect_error.hpp"
#include "support/numeric.hpp"
#include "support/random.hpp"
#include "support/tensor.hpp"

namespace baracuda::test {
namespace {

// ---------------------------------------------------------------------------------------------------
// The plans under test, from the catalog
// ---------------------------------------------------------------------------------------------------

enum class Role { Forward, Backward, Where, WhereBackward };

struct Variant {
  std::string name;
  Role role;
  TernaryOp op = TernaryOp::Clamp;
  std::vector<ElementKind> kinds;
};

template <class List>
std::vector<ElementKind> kinds_in(List list) {
  std::vector<ElementKind> v;
  for_each_type(list, [&]<class T>() { v.push_back(kind_of<T>); });
  return v;
}

std::vector<Variant> all_variants() {
  std::vector<Variant> v;
#define BARACUDA_TEST_VARIANT(Enum, name, types, doc)                             \
  v.push_back({#name, Role::Forward, TernaryOp::Enum, kinds_in(types{})});        \
  v.push_back({#name "_backward", Role::Backward, TernaryOp::Enum, kinds_in(FloatTypes{})});
  BARACUDA_TERNARY_OPS(BARACUDA_TEST_VARIANT)
#undef BARACUDA_TEST_VARIANT
  v.push_back({"where", Role::Where, TernaryOp::Clamp, kinds_in(ByteTypes{})});
  v.push_back({"where_backward", Role::WhereBackward, TernaryOp::Clamp, kinds_in(FloatTypes{})});
  return v;
}

/// addcmul's and addcdiv's value in the sweeps (exact in every compute type); 1 for the other ops.
double value_for(const Variant& v) {
  return v.op == TernaryOp::Addcmul || v.op == TernaryOp::Addcdiv ? -1.25 : 1.0;
}

using Runner =
    std::function<Status(const Stream&, const std::vector<ConstDynTensor>&, const std::vector<DynTensor>&)>;

/// Runs `plan` on the first I... of `in`, then the first O... of `out`.
template <class Plan, size_t... I, size_t... O>
Status run_on(const Plan& plan, const Stream& st, const std::vector<ConstDynTensor>& in,
              const std::vector<DynTensor>& out, std::index_sequence<I...>, std::index_sequence<O...>) {
  return plan.run(st, {}, {in[I]..., out[O]...});
}

/// Plan selected on `stream` for `desc`, as a runner over its `Inputs` inputs and `Outputs` outputs.
template <class Plan, size_t Inputs, size_t Outputs, class Descriptor>
Result<Runner> runner_of(const Stream& stream, const Descriptor& desc) {
  auto p = Plan::select(stream, desc);
  if (!p) return p.error();
  return Runner([p = *p](const Stream& st, const auto& in, const auto& out) {
    return run_on(p, st, in, out, std::make_index_sequence<Inputs>{}, std::make_index_sequence<Outputs>{});
  });
}

/// The variant's plan for kind k and operand shapes s (a, b, c; where: cond, a, b), as a runner over its
/// inputs (Forward: a b c; Backward: dy a b c; Where: cond a b; WhereBackward: cond dy) and outputs.
Result<Runner> select_runner(const Stream& stream, const Variant& v, ElementKind k, const std::array<Shape, 3>& s) {
  const auto tdesc = TernaryDescriptor().with_op(v.op).with_element(k).with_shapes(s[0], s[1], s[2]).with_value(
      value_for(v));
  const auto wdesc = WhereDescriptor().with_element(k).with_shapes(s[0], s[1], s[2]);
  switch (v.role) {
    case Role::Forward: return runner_of<dynamic::TernaryPlan, 3, 1>(stream, tdesc);
    case Role::Backward: return runner_of<dynamic::TernaryBackwardPlan, 4, 3>(stream, tdesc);
    case Role::Where: return runner_of<dynamic::WherePlan, 3, 1>(stream, wdesc);
    case Role::WhereBackward: return runner_of<dynamic::WhereBackwardPlan, 2, 2>(stream, wdesc);
  }
  return Error::invalid("unknown role");
}

// ---------------------------------------------------------------------------------------------------
// Layouts
// ---------------------------------------------------------------------------------------------------

enum class Mode {
  Dense,      ///< row-major
  Padded,     ///< inputs' rows padded (a gap after each), outputs column-major
  Reversed,   ///< inputs walk their last dimension backwards, outputs padded
  Unaligned,  ///< dense, one element off the allocation's alignment (the engine's strided path)
  InPlace,    ///< the first output is the same view as the first input of the output's shape and kind
};

struct Layout {
  std::string name;
  std::array<Shape, 3> shapes;
  Mode mode = Mode::Dense;
  std::array<bool, 3> wanted{true, true, true};  ///< outputs given (gradients may be omitted)
};

Shape broadcast3(const std::array<Shape, 3>& s) {
  auto ab = broadcast_shapes(s[0], s[1]);
  auto out = broadcast_shapes(*ab, s[2]);
  return *out;
}

Strided row_padded(const Shape& s, int64_t pad) {
  Strided l;
  int64_t step = 1;
  for (int d = s.rank - 1; d >= 0; --d) {
    l.stride[d] = step;
    step *= s.dims[d] + (d == s.rank - 1 ? pad : 0);
  }
  return l;
}

Strided column_major(const Shape& s) {
  Strided l;
  int64_t step = 1;
  for (int d = 0; d < s.rank; ++d) {
    l.stride[d] = step;
    step *= s.dims[d];
  }
  return l;
}

Strided last_reversed(const Shape& s) {
  Strided l = dense_layout(s);
  if (s.rank > 0 && s.dims[s.rank - 1] > 0) {
    l.stride[s.rank - 1] = -1;
    l.offset = s.dims[s.rank - 1] - 1;
  }
  return l;
}

Strided layout_of(Mode m, const Shape& s, bool output, int which) {
  switch (m) {
    case Mode::Padded:
      return output ? column_major(s) : row_padded(s, 3 + which);
    case Mode::Reversed:
      return output ? row_padded(s, 2) : last_reversed(s);
    case Mode::Unaligned: {
      Strided l = dense_layout(s);
      l.offset = 1;
      return l;
    }
    default:
      return dense_layout(s);
  }
}

std::vector<Layout> layouts(bool small) {
  const int64_t n = small ? 67 : 257, m = small ? 131 : 259;
  const Shape big{n, m};
  std::vector<Layout> v = {
      {"empty", {Shape{0}, Shape{0}, Shape{0}}},
      {"empty_bcast", {Shape{3, 0}, Shape{1}, Shape{0}}},
      {"one", {Shape{1}, Shape{1}, Shape{1}}},
      {"rank0", {Shape{}, Shape{}, Shape{}}},
      {"dense_big", {big, big, big}},
      {"bcast_4x1x5_3x1_5", {Shape{4, 1, 5}, Shape{3, 1}, Shape{5}}},
      {"bcast_rows_cols", {Shape{n, 1}, Shape{1, m}, Shape{n, m}}},
      {"bcast_scalar_operands", {Shape{37, 41}, Shape{}, Shape{1}}},
      {"bcast_rank8", {Shape{2, 1, 3, 1, 2, 3, 5, 7}, Shape{1, 1, 3, 1, 1, 3, 1, 7}, Shape{7}}},
      {"padded", {Shape{37, 41}, Shape{37, 41}, Shape{41}}, Mode::Padded},
      {"reversed", {Shape{3, 300}, Shape{3, 300}, Shape{3, 300}}, Mode::Reversed},
      {"unaligned", {Shape{1001}, Shape{1001}, Shape{1001}}, Mode::Unaligned},
      {"in_place", {Shape{67, 33}, Shape{67, 33}, Shape{67, 33}}, Mode::InPlace},
  };
  // Omitted gradients (forward plans give every output): each nonempty subset of three.
  for (int mask = 1; mask < 7; ++mask)
    v.push_back({"grads_" + std::to_string(mask), {Shape{29, 31}, Shape{31}, Shape{29, 1}}, Mode::Dense,
                 {(mask & 1) != 0, (mask & 2) != 0, (mask & 4) != 0}});
  return v;
}

// ---------------------------------------------------------------------------------------------------
// One run of a variant on a device: operands allocated from the same seeded bytes on every device
// ---------------------------------------------------------------------------------------------------

struct Operand {
  ElementKind kind;
  Shape shape;
  Strided layout;
};

struct Problem {
  std::vector<Operand> inputs;
  std::vector<Operand> outputs;
  std::vector<bool> wanted;
  int in_place_input = -1;  ///< output 0 is this input's view (Mode::InPlace), or -1
};

Problem problem_of(const Variant& v, ElementKind k, const Layout& l) {
  const Shape o = broadcast3(l.shapes);
  Problem p;
  auto in = [&](ElementKind kind, const Shape& s) {
    p.inputs.push_back({kind, s, layout_of(l.mode, s, false, static_cast<int>(p.inputs.size()))});
  };
  int outputs = 1;
  switch (v.role) {
    case Role::Forward:
      for (const Shape& s : l.shapes) in(k, s);
      break;
    case Role::Backward:
      in(k, o);
      for (const Shape& s : l.shapes) in(k, s);
      outputs = 3;
      break;
    case Role::Where:
      in(ElementKind::Bool, l.shapes[0]);
      in(k, l.shapes[1]);
      in(k, l.shapes[2]);
      break;
    case Role::WhereBackward:
      in(ElementKind::Bool, l.shapes[0]);
      in(k, o);
      outputs = 2;
      break;
  }
  for (int i = 0; i < outputs; ++i) {
    p.outputs.push_back({k, o, layout_of(l.mode, o, true, i)});
    p.wanted.push_back(outputs == 1 || l.wanted[static_cast<size_t>(i)]);
  }
  if (l.mode == Mode::InPlace)
    for (size_t i = 0; i < p.inputs.size() && p.in_place_input < 0; ++i)
      if (p.inputs[i].kind == k && p.inputs[i].shape == o) p.in_place_input = static_cast<int>(i);
  if (p.in_place_input >= 0) p.outputs[0].layout = p.inputs[static_cast<size_t>(p.in_place_input)].layout;
  return p;
}

constexpr uint8_t kGuard = 0xA5;

/// Storage bytes of each input: random bit patterns (bool: 0/1), the gaps included.
std::vector<std::vector<uint8_t>> input_storage(const Problem& p, uint64_t seed) {
  std::vector<std::vector<uint8_t>> v;
  for (const Operand& op : p.inputs)
    v.push_back(random_bits(op.kind, std::max<int64_t>(storage_elements(op.shape, op.layout), 1), seed++));
  return v;
}

/// Runs the problem on `stream`; the storage bytes of every wanted output (the others: empty).
Result<std::vector<std::vector<uint8_t>>> execute(const Stream& stream, const Runner& run, const Problem& p,
                                                  const std::vector<std::vector<uint8_t>>& init) {
  std::vector<DeviceTensor> ins, outs;
  std::vector<ConstDynTensor> in_views;
  std::vector<DynTensor> out_views;
  for (size_t i = 0; i < p.inputs.size(); ++i) {
    const Operand& op = p.inputs[i];
    auto t = make_device_tensor(stream, op.kind, op.shape, op.layout, init[i],
                                static_cast<int64_t>(init[i].size()) / element_bytes(op.kind));
    if (!t) return t.error();
    in_views.push_back(t->view);
    ins.push_back(std::move(*t));
  }
  for (size_t i = 0; i < p.outputs.size(); ++i) {
    const Operand& op = p.outputs[i];
    if (!p.wanted[i]) {
      outs.emplace_back();
      out_views.emplace_back();
      continue;
    }
    if (i == 0 && p.in_place_input >= 0) {
      outs.emplace_back();
      out_views.push_back(ins[static_cast<size_t>(p.in_place_input)].view);  // the input's own (writable) view
      continue;
    }
    const int64_t n = std::max<int64_t>(storage_elements(op.shape, op.layout), 1);
    auto t = make_device_tensor(stream, op.kind, op.shape, op.layout,
                                std::vector<uint8_t>(static_cast<size_t>(storage_bytes(op.kind, n)), kGuard), n);
    if (!t) return t.error();
    out_views.push_back(t->view);
    outs.push_back(std::move(*t));
  }
  BARACUDA_TRY(run(stream, in_views, out_views));
  BARACUDA_TRY(stream.synchronize());
  std::vector<std::vector<uint8_t>> r(p.outputs.size());
  for (size_t i = 0; i < p.outputs.size(); ++i) {
    if (!p.wanted[i]) continue;
    r[i] = (i == 0 && p.in_place_input >= 0) ? download(ins[static_cast<size_t>(p.in_place_input)]) : download(outs[i]);
  }
  return r;
}

// ---------------------------------------------------------------------------------------------------
// Devices against the host reference, bit for bit
// ---------------------------------------------------------------------------------------------------

struct SweepCase {
  Variant variant;
  ElementKind kind;
  DeviceKind device;
};

std::vector<SweepCase> sweep_cases() {
  std::vector<SweepCase> v;
  for (DeviceKind d : {DeviceKind::Sim, DeviceKind::Cuda})
    for (const Variant& var : all_variants())
      for (ElementKind k : var.kinds) v.push_back({var, k, d});
  return v;
}

void PrintTo(const SweepCase& c, std::ostream* os) {
  *os << c.variant.name << " " << to_string(c.kind) << " " << to_string(c.device);
}

class TernarySweep : public ::testing::TestWithParam<SweepCase> {};

TEST_P(TernarySweep, MatchesHostBitForBit) {
  const SweepCase& c = GetParam();
  BARACUDA_TEST_STREAM(device, c.device);
  const Stream host = Stream::host();
  for (const Layout& l : layouts(c.device == DeviceKind::Sim)) {
    if (c.variant.role == Role::Forward || c.variant.role == Role::Where)
      if (l.wanted != std::array<bool, 3>{true, true, true}) continue;  // one output: nothing to omit
    SCOPED_TRACE(l.name);
    auto run_dev = select_runner(device, c.variant, c.kind, l.shapes);
    BARACUDA_SKIP_IF_NO_CUDA_KERNELS(run_dev, c.device);
    ASSERT_TRUE(run_dev) << run_dev.error().message;
    auto run_host = select_runner(host, c.variant, c.kind, l.shapes);
    ASSERT_TRUE(run_host) << run_host.error().message;
    const Problem p = problem_of(c.variant, c.kind, l);
    if (std::find(p.wanted.begin(), p.wanted.end(), true) == p.wanted.end()) continue;  // no output of this plan
    const auto init = input_storage(p, std::hash<std::string>{}(c.variant.name + l.name) + static_cast<int>(c.kind));
    auto want = execute(host, *run_host, p, init);
    ASSERT_TRUE(want) << want.error().message;
    auto got = execute(device, *run_dev, p, init);
    ASSERT_TRUE(got) << got.error().message;
    for (size_t i = 0; i < p.outputs.size(); ++i) {
      if (!p.wanted[i]) continue;
      const Operand& o = p.outputs[i];
      SCOPED_TRACE("output " + std::to_string(i));
      const auto want_elems = gather(o.kind, (*want)[i], o.shape, o.layout);
      EXPECT_TRUE(same_elements(o.kind, gather(o.kind, (*got)[i], o.shape, o.layout), want_elems, o.shape.numel()));
      // Every byte outside the view's elements is as it was on both devices: the guard pattern, or the input's
      // bytes (in place).
      std::vector<uint8_t> expected = i == 0 && p.in_place_input >= 0
                                          ? init[static_cast<size_t>(p.in_place_input)]
                                          : std::vector<uint8_t>((*want)[i].size(), kGuard);
      scatter(o.kind, want_elems, &expected, o.shape, o.layout);
      for (const auto* storage : {&(*got)[i], &(*want)[i]}) {
        std::vector<uint8_t> outside = *storage;
        scatter(o.kind, want_elems, &outside, o.shape, o.layout);
        EXPECT_EQ(outside, expected) << "bytes outside the output view changed";
      }
    }
  }
}

std::string sweep_name(const ::testing::TestParamInfo<SweepCase>& i) {
  return i.param.variant.name + "_" + std::string(to_string(i.param.kind)) + "_" +
         std::string(to_string(i.param.device));
}
INSTANTIATE_TEST_SUITE_P(Ternary, TernarySweep, ::testing::ValuesIn(sweep_cases()), sweep_name);

// ---------------------------------------------------------------------------------------------------
// The host reference against an independent f64 evaluation of PyTorch's formulas
// ---------------------------------------------------------------------------------------------------

/// A reference value and the magnitude its rounding errors scale with (0: the result is exact).
struct Expect {
  double v;
  double mag;
};

/// The significand bits after the point and the smallest normal exponent of a floating kind (f32's for others).
std::pair<int, int> precision_of(ElementKind k) {
  int mantissa_bits = 23, min_exponent = -126;
  float_precision(k, &mantissa_bits, &min_exponent);
  return {mantissa_bits, min_exponent};
}
/// The unit roundoff of a floating kind, and of its compute type.
double unit_roundoff(ElementKind k) { return std::ldexp(1.0, -(precision_of(k).first + 1)); }
double compute_roundoff(ElementKind k) { return k == ElementKind::F64 ? 0x1p-53 : 0x1p-24; }
double smallest_subnormal(ElementKind k) {
  const auto [mantissa_bits, min_exponent] = precision_of(k);
  return std::ldexp(1.0, min_exponent - mantissa_bits);
}

/// PyTorch's forward formulas on exact values (value as the compute type holds it).
Expect forward_expect(TernaryOp op, double a, double b, double c, double value) {
  switch (op) {
    case TernaryOp::Clamp:
      return {std::isnan(b) || std::isnan(c) ? NAN : std::min(std::max(a, b), c), 0};
    case TernaryOp::Lerp:
      return {a + c * (b - a), std::abs(a) + std::abs(b) + 2 * std::abs(c) * (std::abs(a) + std::abs(b))};
    case TernaryOp::Addcmul:
      return {a + value * b * c, std::abs(a) + std::abs(value * b * c)};
    case TernaryOp::Addcdiv:
      return {a + value * (b / c), std::abs(a) + std::abs(value * b / c)};
    case TernaryOp::Fma:
      return {a * b + c, std::abs(a * b) + std::abs(c)};
  }
  return {NAN, 0};
}

/// derivatives.yaml's gradients on exact values: {da, db, dc}.
std::array<Expect, 3> backward_expect(TernaryOp op, double dy, double a, double b, double c, double value) {
  switch (op) {
    case TernaryOp::Clamp:
      return {{{(a >= b && a <= c) ? dy : 0, 0}, {(a < b && b < c) ? dy : 0, 0}, {(a > c || c < b) ? dy : 0, 0}}};
    case TernaryOp::Lerp:
      return {{{dy * (1 - c), std::abs(dy) * (1 + std::abs(c))},
               {dy * c, std::abs(dy * c)},
               {dy * (b - a), std::abs(dy) * (std::abs(a) + std::abs(b))}}};
    case TernaryOp::Addcmul:
      return {{{dy, 0}, {dy * c * value, std::abs(dy * c * value)}, {dy * b * value, std::abs(dy * b * value)}}};
    case TernaryOp::Addcdiv:
      return {{{dy, 0},
               {dy * value / c, std::abs(dy * value / c)},
               {-dy * value * b / (c * c), std::abs(dy * value * b / (c * c))}}};
    case TernaryOp::Fma:
      return {{{dy * b, std::abs(dy * b)}, {dy * a, std::abs(dy * a)}, {dy, 0}}};
  }
  return {};
}

/// The input ranges: lerp's weight spans both of its branches, addcdiv's divisor stays away from 0, clamp's
/// bounds cross (b > c in part of the elements).
std::array<std::pair<double, double>, 3> ranges_of(TernaryOp op) {
  switch (op) {
    case TernaryOp::Clamp: return {{{-4, 4}, {-3, 1}, {-1, 3}}};
    case TernaryOp::Lerp: return {{{-4, 4}, {-4, 4}, {-1.5, 1.5}}};
    case TernaryOp::Addcdiv: return {{{-4, 4}, {-4, 4}, {0.5, 4}}};
    default: return {{{-4, 4}, {-4, 4}, {-4, 4}}};
  }
}

/// `got` (the host's element) is `e` within the bound of a result computed with at most `roundings`
/// roundings in the compute type and one to k: u_k·|v| + roundings·u_M·mag (+ k's smallest subnormal).
::testing::AssertionResult within(ElementKind k, double got, const Expect& e, int roundings) {
  if (std::isnan(e.v) && std::isnan(got)) return ::testing::AssertionSuccess();
  if (e.mag == 0) {  // exact: the same value, and the same sign of a zero
    if (got == e.v && std::signbit(got) == std::signbit(e.v)) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "got " << got << ", expected exactly " << e.v;
  }
  const double bound =
      unit_roundoff(k) * std::abs(e.v) + roundings * compute_roundoff(k) * e.mag * 1.01 + smallest_subnormal(k);
  if (std::abs(got - e.v) <= bound) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "got " << got << ", expected " << e.v << " within " << bound;
}

class TernaryReference : public ::testing::TestWithParam<std::tuple<TernaryOp, ElementKind, double>> {};

TEST_P(TernaryReference, HostMatchesFormulas) {
  const auto [op, k, value] = GetParam();
  const std::array<Shape, 3> shapes = {Shape{37, 41}, Shape{41}, Shape{37, 1}};
  const Shape o = broadcast3(shapes);
  const auto rs = ranges_of(op);
  std::array<std::vector<double>, 3> x;
  std::array<std::vector<uint8_t>, 3> bytes;
  for (size_t i = 0; i < 3; ++i)
    bytes[i] = random_floats(k, shapes[i].numel(), rs[i].first, rs[i].second, 100 + i, &x[i]);
  std::vector<double> dyv;
  const auto dyb = random_floats(k, o.numel(), -2, 2, 7, &dyv);
  // value as the compute type holds it (f32 for every kind but f64).
  const double vm = k == ElementKind::F64 ? value : static_cast<double>(static_cast<float>(value));
  const auto desc = TernaryDescriptor().with_op(op).with_element(k).with_shapes(shapes[0], shapes[1], shapes[2])
                        .with_value(value);
  const Stream host = Stream::host();
  auto fwd = dynamic::TernaryPlan::select(host, desc);
  ASSERT_TRUE(fwd) << fwd.error().message;
  auto bwd = dynamic::TernaryBackwardPlan::select(host, desc);
  ASSERT_TRUE(bwd) << bwd.error().message;
  const ElementKind kind = k;  // a structured binding: clang 14 cannot capture it
  auto view = [&](std::vector<uint8_t>& b, const Shape& s) { return DynTensor::dense(b.data(), kind, s); };
  std::vector<uint8_t> out(static_cast<size_t>(storage_bytes(k, o.numel())));
  std::array<std::vector<uint8_t>, 3> grads;
  for (auto& g : grads) g = out;
  std::vector<uint8_t> dy = dyb;
  ASSERT_TRUE(fwd->run(host, {},
                       {view(bytes[0], shapes[0]), view(bytes[1], shapes[1]), view(bytes[2], shapes[2]), view(out, o)}));
  ASSERT_TRUE(bwd->run(host, {},
                       {view(dy, o), view(bytes[0], shapes[0]), view(bytes[1], shapes[1]), view(bytes[2], shapes[2]),
                        view(grads[0], o), view(grads[1], o), view(grads[2], o)}));
  const int eb = element_bytes(k);
  int failures = 0;
  for (int64_t r = 0; r < o.dims[0] && failures < 5; ++r)
    for (int64_t col = 0; col < o.dims[1] && failures < 5; ++col) {
      const int64_t i = r * o.dims[1] + col;
      const double a = x[0][i], b = x[1][col], c = x[2][r], d = dyv[i];
      const auto f = within(k, decode_value(k, &out[i * eb]), forward_expect(op, a, b, c, vm), 3);
      if (!f) ++failures;
      EXPECT_TRUE(f) << "forward at " << i << " (a " << a << ", b " << b << ", c " << c << ")";
      const auto g = backward_expect(op, d, a, b, c, vm);
      for (size_t j = 0; j < 3; ++j) {
        const auto gj = within(k, decode_value(k, &grads[j][i * eb]), g[j], 4);
        if (!gj) ++failures;
        EXPECT_TRUE(gj) << "gradient " << j << " at " << i << " (dy " << d << ", a " << a << ", b " << b << ", c " << c
                        << ")";
      }
    }
}

std::vector<std::tuple<TernaryOp, ElementKind, double>> reference_cases() {
  std::vector<std::tuple<TernaryOp, ElementKind, double>> v;
  for (size_t i = 0; i < kNumTernaryOps; ++i)
    for (ElementKind k : kinds_in(FloatTypes{})) {
      const auto op = static_cast<TernaryOp>(i);
      v.emplace_back(op, k, 1.0);
      if (op == TernaryOp::Addcmul || op == TernaryOp::Addcdiv) v.emplace_back(op, k, 0.1);  // inexact value
    }
  return v;
}
INSTANTIATE_TEST_SUITE_P(Ternary, TernaryReference, ::testing::ValuesIn(reference_cases()),
                         [](const auto& i) {
                           std::string v = std::get<2>(i.param) == 1.0 ? "" : "_value0p1";
                           return std::string(to_string(std::get<0>(i.param))) + "_" +
                                  std::string(to_string(std::get<1>(i.param))) + v;
                         });

}  // namespace
}  // namespace baracuda::test
