// Helpers of the binary tests (binary_*test.cpp): the catalog with its test metadata
// (binary_test_catalog.hpp), the layouts of the sweeps, type-erased runners for the three plans, input
// generators, and byte helpers.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "baracuda/baracuda.hpp"
#include "baracuda/ops/binary.hpp"
#include "support/compare.hpp"
#include "support/devices.hpp"
#include "support/kind_lists.hpp"
#include "support/numeric.hpp"
#include "support/random.hpp"
#include "support/tensor.hpp"
#include "support/tolerance.hpp"
#include "binary_test_catalog.hpp"

namespace baracuda::test {

// ---------------------------------------------------------------------------------------------------
// The catalog
// ---------------------------------------------------------------------------------------------------

struct OpEntry {
  std::string name;
  bool is_compare = false;
  BinaryOp op = BinaryOp::Add;     // when !is_compare
  CompareOp cmp = CompareOp::Eq;   // when is_compare
  bool has_backward = false;
  bool bitwise = false;  ///< devices agree with the host reference bit for bit (test catalog `Bitwise`)
  Tolerance tol;         ///< forward tolerance (test catalog name, unresolved)
  Tolerance grad_tol;    ///< backward tolerance
  std::vector<ElementKind> kinds;
};


inline const std::vector<OpEntry>& binary_catalog() {
  static const std::vector<OpEntry> v = [] {
    std::vector<OpEntry> r;
#define BARACUDA_BINARY_OP(Enum, name, types, has_bwd, doc)                                            \
  {                                                                                                    \
    const BinaryTestInfo& m = binary_test_info(BinaryOp::Enum);                                        \
    const bool bitwise = m.agreement == BinaryAgreement::Bitwise;                                      \
    r.push_back(OpEntry{#name, false, BinaryOp::Enum, CompareOp::Eq, has_bwd, bitwise, m.tol, m.grad_tol, \
                        kinds_of_list(types{})});                                                      \
  }
#include "baracuda/ops/binary_ops.def"
#undef BARACUDA_BINARY_OP
    return r;
  }();
  return v;
}

inline const std::vector<OpEntry>& compare_catalog() {
  static const std::vector<OpEntry> v = [] {
    std::vector<OpEntry> r;
#define BARACUDA_COMPARE_OP(Enum, name, types, doc)                                                      \
  r.push_back(OpEntry{#name, true, BinaryOp::Add, CompareOp::Enum, false, true, tolerances::exact, tolerances::exact, \
                      kinds_of_list(types{})});
#include "baracuda/ops/binary_ops.def"
#undef BARACUDA_COMPARE_OP
    return r;
  }();
  return v;
}

inline const OpEntry& entry_named(std::string_view name) {
  for (const OpEntry& e : binary_catalog())
    if (e.name == name) return e;
  for (const OpEntry& e : compare_catalog())
    if (e.name == name) return e;
  throw std::logic_error("no catalog op " + std::string(name));
}

// ---------------------------------------------------------------------------------------------------
// Runners: select a plan and return a callable over erased views (inputs, then outputs)
// ---------------------------------------------------------------------------------------------------

using ForwardRun =
    std::function<Status(const Stream&, const ConstDynTensor&, const ConstDynTensor&, const DynTensor&)>;
using BackwardRun = std::function<Status(const Stream&, const ConstDynTensor&, const ConstDynTensor&,
                                         const ConstDynTensor&, const DynTensor&, const DynTensor&)>;

struct Selected {
  ForwardRun run;
  KernelSku sku;
};

/// BinaryPlan or ComparePlan for a catalog entry.
inline Result<Selected> select_forward(const Stream& s, const OpEntry& e, ElementKind k, const Shape& a,
                                       const Shape& b) {
  if (e.is_compare) {
    auto p = dynamic::ComparePlan::select(s, CompareDescriptor().with_op(e.cmp).with_element(k).with_shapes(a, b));
    if (!p) return p.error();
    return Selected{[plan = *p](const Stream& st, const ConstDynTensor& x, const ConstDynTensor& y,
                                const DynTensor& o) { return plan.run(st, {}, {x, y, o}); },
                    p->sku()};
  }
  auto p = dynamic::BinaryPlan::select(s, BinaryDescriptor().with_op(e.op).with_element(k).with_shapes(a, b));
  if (!p) return p.error();
  return Selected{[plan = *p](const Stream& st, const ConstDynTensor& x, const ConstDynTensor& y,
                              const DynTensor& o) { return plan.run(st, {}, {x, y, o}); },
                  p->sku()};
}

struct SelectedBackward {
  BackwardRun run;
  KernelSku sku;
};

inline Result<SelectedBackward> select_backward(const Stream& s, const OpEntry& e, ElementKind k, const Shape& a,
                                                const Shape& b) {
  auto p = dynamic::BinaryBackwardPlan::select(s, BinaryDescriptor().with_op(e.op).with_element(k).with_shapes(a, b));
  if (!p) return p.error();
  return SelectedBackward{[plan = *p](const Stream& st, const ConstDynTensor& dy, const ConstDynTensor& x,
                                      const ConstDynTensor& y, const DynTensor& da, const DynTensor& db) {
                            return plan.run(st, {}, {dy, x, y, da, db});
                          },
                          p->sku()};
}

// ---------------------------------------------------------------------------------------------------
// Layouts
// ---------------------------------------------------------------------------------------------------

enum class Alias { None, OutIsA, OutIsB };

/// One layout of the forward/compare sweep: the shapes of a and b (the output shape is their broadcast)
/// and the strides of each operand.
struct BinaryLayout {
  std::string name;
  Shape a_shape, b_shape, out_shape;
  Strided a, b, out;
  Alias alias = Alias::None;
};

/// One layout of the backward sweep.
struct GradLayout {
  std::string name;
  Shape a_shape, b_shape, out_shape;
  Strided dy, a, b, da, db;
  bool want_da = true;
  bool want_db = true;
  bool in_place = false;  ///< da is dy's storage and db is b's (b has the output shape)
};

inline std::string shape_name(const Shape& s) {
  if (s.rank == 0) return "scalar";
  std::string r = std::to_string(s.dims[0]);
  for (int i = 1; i < s.rank; ++i) {
    r += 'x';
    r += std::to_string(s.dims[i]);
  }
  return r;
}

inline Shape must_broadcast(const Shape& a, const Shape& b) {
  auto s = broadcast_shapes(a, b);
  if (!s) throw std::logic_error(s.error().message);
  return *s;
}

/// The forward layouts; `small` (the sim device) shrinks the large ones.
inline std::vector<BinaryLayout> forward_layouts(bool small, bool with_in_place) {
  const int64_t n = small ? 67 : 257, m = small ? 131 : 259;
  std::vector<BinaryLayout> v;
  auto dense = [&](std::string name, Shape a, Shape b) {
    const Shape o = must_broadcast(a, b);
    v.push_back({std::move(name), a, b, o, dense_layout(a), dense_layout(b), dense_layout(o), Alias::None});
  };
  dense("empty", Shape{0}, Shape{0});
  dense("empty_bcast", Shape{3, 0}, Shape{1});
  dense("one", Shape{1}, Shape{1});
  dense(shape_name(Shape{n, m}), Shape{n, m}, Shape{n, m});
  dense("bcast_" + shape_name(Shape{n, 1}) + "_" + shape_name(Shape{1, m}), Shape{n, 1}, Shape{1, m});
  dense("bcast_3x1x5_4x1", Shape{3, 1, 5}, Shape{4, 1});
  dense("bcast_37x41_1", Shape{37, 41}, Shape{1});
  dense("bcast_1_37x41", Shape{1}, Shape{37, 41});
  dense("bcast_5x7_rank0", Shape{5, 7}, Shape{});
  dense("bcast_rank8", Shape{2, 1, 3, 1, 2, 3, 5, 7}, Shape{1, 1, 3, 1, 1, 3, 1, 7});
  {  // Non-contiguous everywhere: a walks columns with a gap, b takes every other element, out has padded rows.
    BinaryLayout l{"strided", Shape{37, 41}, Shape{37, 41}, Shape{37, 41}, {}, {}, {}, Alias::None};
    l.a.stride = {2, 74};
    l.b.stride = {82, 2};
    l.out.stride = {48, 1};
    v.push_back(l);
  }
  {  // a walks its rows backwards (negative stride).
    const Shape s{3, 300};
    BinaryLayout l{"reversed", s, s, s, {}, dense_layout(s), dense_layout(s), Alias::None};
    l.a.stride = {300, -1};
    l.a.offset = 299;
    v.push_back(l);
  }
  {  // a has the output's shape but broadcasts itself (stride 0).
    const Shape s{33, 65};
    BinaryLayout l{"stride0_a", s, s, s, {}, dense_layout(s), dense_layout(s), Alias::None};
    l.a.stride = {0, 1};
    v.push_back(l);
  }
  {  // Dense but one element off 16-byte alignment: the strided path (unaligned).
    const Shape s{1001};
    BinaryLayout l{"unaligned", s, s, s, dense_layout(s), dense_layout(s), dense_layout(s), Alias::None};
    l.a.offset = 1;
    l.b.offset = 1;
    l.out.offset = 1;
    v.push_back(l);
  }
  if (with_in_place) {
    const Shape s{67, 33};
    v.push_back({"inplace_a", s, s, s, dense_layout(s), dense_layout(s), dense_layout(s), Alias::OutIsA});
    v.push_back({"inplace_b", s, s, s, dense_layout(s), dense_layout(s), dense_layout(s), Alias::OutIsB});
  }
  return v;
}

inline std::vector<GradLayout> backward_layouts(bool small) {
  const int64_t n = small ? 67 : 257, m = small ? 131 : 259;
  std::vector<GradLayout> v;
  auto dense = [&](std::string name, Shape a, Shape b) {
    const Shape o = must_broadcast(a, b);
    const Strided d = dense_layout(o);
    v.push_back({std::move(name), a, b, o, d, dense_layout(a), dense_layout(b), d, d});
  };
  dense("empty", Shape{0}, Shape{0});
  dense("one", Shape{1}, Shape{1});
  dense(shape_name(Shape{n, m}), Shape{n, m}, Shape{n, m});
  dense("bcast_" + shape_name(Shape{n, 1}) + "_" + shape_name(Shape{1, m}), Shape{n, 1}, Shape{1, m});
  dense("bcast_3x1x5_4x1", Shape{3, 1, 5}, Shape{4, 1});
  dense("bcast_37x41_1", Shape{37, 41}, Shape{1});
  {
    const Shape s{37, 41};
    GradLayout l{"strided", s, s, s, {}, {}, dense_layout(s), {}, {}};
    l.dy.stride = {2, 74};
    l.a.stride = {82, 2};
    l.da.stride = {48, 1};
    l.db.stride = {1, 37};  // column-major
    v.push_back(l);
  }
  dense("only_da", Shape{29, 31}, Shape{29, 31});
  v.back().want_db = false;
  dense("only_db_bcast", Shape{29, 1}, Shape{31});
  v.back().want_da = false;
  dense("inplace", Shape{67, 33}, Shape{67, 33});
  v.back().in_place = true;
  return v;
}

// ---------------------------------------------------------------------------------------------------
// Inputs
// ---------------------------------------------------------------------------------------------------

struct Range {
  double lo, hi;
};
/// The input ranges the sweeps draw a and b from: pow keeps its base positive (a negative base with a
/// non-integer exponent is NaN, and the exponent's gradient takes log a); everything else [-4, 4].
inline std::pair<Range, Range> input_ranges(const OpEntry& e) {
  if (!e.is_compare && e.op == BinaryOp::Pow) return {{0.0625, 4}, {-3, 3}};
  return {{-4, 4}, {-4, 4}};
}

/// `n` elements of kind k for operand `which` (0: a, 1: b) of op e: floats uniform in the op's range,
/// integers uniformly random bits (every wrap-around and sign case), comparisons a small pool with ties,
/// ±0 and (floats) NaN.
inline std::vector<uint8_t> make_input(const OpEntry& e, ElementKind k, int64_t n, int which, uint64_t seed) {
  std::vector<double> values;
  if (e.is_compare) {
    std::vector<uint8_t> v = exact_small_values(k, n, seed, &values);
    if (is_floating(k)) {
      Rng rng(seed ^ 0x5eed);
      for (int64_t i = 0; i < n; ++i)
        if (rng.below(16) == 0) encode_exact(k, std::numeric_limits<double>::quiet_NaN(), &v[i * element_bytes(k)]);
    }
    return v;
  }
  if (is_integral(k)) return random_bits(k, n, seed);
  const auto [ra, rb] = input_ranges(e);
  const Range r = which == 0 ? ra : rb;
  return random_floats(k, n, r.lo, r.hi, seed, &values);
}

// ---------------------------------------------------------------------------------------------------
// Bytes, sentinels and comparison with the host reference
// ---------------------------------------------------------------------------------------------------

inline int64_t elements_in(ElementKind k, const std::vector<uint8_t>& storage) {
  return static_cast<int64_t>(storage.size()) / element_bytes(k);
}

inline uint64_t seed_of(const std::string& s) { return std::hash<std::string>{}(s) & 0xffffffffu; }

/// A dense tensor on `stream` holding the row-major element bytes `logical` (one element at least).
inline Result<DeviceTensor> dense_tensor(const Stream& stream, ElementKind k, const Shape& shape,
                                         const std::vector<uint8_t>& logical) {
  std::vector<uint8_t> init = logical;
  if (init.empty()) init.resize(static_cast<size_t>(element_bytes(k)), 0);
  return make_device_tensor(stream, k, shape, dense_layout(shape), init, elements_in(k, init));
}

inline std::vector<double> values_of(ElementKind k, const std::vector<uint8_t>& bytes) {
  std::vector<double> v(static_cast<size_t>(elements_in(k, bytes)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = decode_value(k, &bytes[i * element_bytes(k)]);
  return v;
}

/// Device results compared with the host reference's: bits (NaN = NaN) for the host itself, for `bitwise`
/// ops and for integer and Bool outputs; the resolved tolerance otherwise.
inline ::testing::AssertionResult matches_reference(ElementKind k, bool bitwise, const Tolerance& tol,
                                                    const std::vector<uint8_t>& got, const std::vector<uint8_t>& want) {
  if (bitwise || !is_floating(k)) return same_elements(k, got, want, elements_in(k, want));
  return close_elements(k, got, values_of(k, want), tol);
}

/// A host reference run's operands: dense host tensors of row-major inputs (all of one kind), and outputs (all
/// of one kind and shape) over sentinel storage.
struct DenseHostOperands {
  std::vector<DeviceTensor> in, out;
  ElementKind out_kind;
  Shape out_shape;

  /// The row-major bytes of output `i` after the run.
  std::vector<uint8_t> logical_out(size_t i) const {
    std::vector<uint8_t> bytes = download(out[i]);
    bytes.resize(static_cast<size_t>(out_shape.numel() * element_bytes(out_kind)));
    return bytes;
  }
};

/// The operands for inputs `ins` (shape and row-major bytes, of kind k) and `outputs` outputs; nullopt (a test
/// failure) when one cannot be made.
inline std::optional<DenseHostOperands> dense_host_operands(
    ElementKind k, std::initializer_list<std::pair<Shape, const std::vector<uint8_t>*>> ins, ElementKind out_kind,
    const Shape& out_shape, int outputs) {
  DenseHostOperands ops{{}, {}, out_kind, out_shape};
  for (const auto& [shape, bytes] : ins) {
    auto t = dense_tensor(Stream::host(), k, shape, *bytes);
    EXPECT_TRUE(t) << t.error().to_string();
    if (!t) return std::nullopt;
    ops.in.push_back(std::move(*t));
  }
  for (int i = 0; i < outputs; ++i) {
    auto t = dense_tensor(Stream::host(), out_kind, out_shape, sentinel_storage(out_kind, out_shape.numel()));
    EXPECT_TRUE(t) << t.error().to_string();
    if (!t) return std::nullopt;
    ops.out.push_back(std::move(*t));
  }
  return ops;
}

/// The host reference's logical output for logical (row-major) inputs.
inline std::vector<uint8_t> host_forward(const OpEntry& e, ElementKind k, ElementKind out_k, const Shape& a_shape,
                                         const Shape& b_shape, const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  auto sel = select_forward(Stream::host(), e, k, a_shape, b_shape);
  EXPECT_TRUE(sel) << sel.error().to_string();
  if (!sel) return {};
  auto ops = dense_host_operands(k, {{a_shape, &a}, {b_shape, &b}}, out_k, must_broadcast(a_shape, b_shape), 1);
  if (!ops) return {};
  const Status s = sel->run(Stream::host(), ops->in[0].view, ops->in[1].view, ops->out[0].view);
  EXPECT_TRUE(s) << s.to_string();
  return ops->logical_out(0);
}

inline BinaryDescriptor f32_desc(BinaryOp op = BinaryOp::Add) {
  return BinaryDescriptor().with_op(op).with_element(ElementKind::F32).with_shapes(Shape{4, 3}, Shape{3});
}

}  // namespace baracuda::test
