// BinaryPlan / ComparePlan / BinaryBackwardPlan sweeps, generated from the catalog (binary_ops.def):
// - BinarySweep / BackwardSweep: every (op, kind, device) × layout (empty, one, 257×259 — 67×131 on sim —,
//   broadcasts [N,1]×[1,M], [3,1,5]×[4,1], scalar-like [1] and rank 0, rank 8, strided, reversed, a
//   stride-0 input, unaligned, in place; backward also only-da / only-db), against the host reference run
//   on dense copies of the same inputs: bit for bit for the host device, for `Bitwise` ops, integers and
//   comparisons; within the op's tolerance otherwise (both from tests/ops/binary_test_catalog.hpp). sim/cuda run twice (determinism), and elements
//   outside the output views must stay untouched.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "binary_test_support.hpp"
#include "support/in_out_sweep.hpp"

namespace baracuda::test {
namespace {

/// One case of a sweep: an op of the catalog, a kind, a device and a layout (BinaryLayout forward, GradLayout
/// backward).
template <class Layout>
struct SweepCase {
  OpEntry op;
  ElementKind kind;
  DeviceKind device;
  Layout layout;
};
using ForwardCase = SweepCase<BinaryLayout>;
using BackwardCase = SweepCase<GradLayout>;

template <class Layout>
void PrintTo(const SweepCase<Layout>& c, std::ostream* os) {
  *os << c.op.name << (std::is_same_v<Layout, GradLayout> ? "_backward " : " ") << to_string(c.kind) << " "
      << c.layout.name << " on " << to_string(c.device);
}

/// "op_kind_layout_device".
template <class Layout>
std::string case_name(const ::testing::TestParamInfo<SweepCase<Layout>>& info) {
  const SweepCase<Layout>& c = info.param;
  return c.op.name + "_" + std::string(to_string(c.kind)) + "_" + c.layout.name + "_" +
         std::string(to_string(c.device));
}

/// A sweep case's stream and runner (select_forward, or select_backward for a GradLayout), checked to name the
/// device's backend and the op (with "_backward") in its SKU; a case without a usable device, or a cuda case
/// built without CUDA kernels, skips.
template <class Layout>
class SweepTest : public ::testing::TestWithParam<SweepCase<Layout>> {
 protected:
  static constexpr bool kBackward = std::is_same_v<Layout, GradLayout>;
  void SetUp() override {
    std::string why_not;
    stream_ = stream_for(c_.device, &why_not);
    if (!stream_) GTEST_SKIP() << why_not;
    auto sel = select(*stream_);
    BARACUDA_SKIP_IF_NO_CUDA_KERNELS(sel, c_.device);
    ASSERT_TRUE(sel) << sel.error().to_string();
    EXPECT_EQ(sel->sku.backend, backend_of(c_.device));
    EXPECT_EQ(sel->sku.op, c_.op.name + (kBackward ? "_backward" : ""));
    sel_.emplace(std::move(sel).value());
  }
  auto select(const Stream& s) const {
    if constexpr (kBackward) return select_backward(s, c_.op, c_.kind, l_.a_shape, l_.b_shape);
    else return select_forward(s, c_.op, c_.kind, l_.a_shape, l_.b_shape);
  }

  const SweepCase<Layout>& c_ = this->GetParam();
  const Layout& l_ = c_.layout;
  std::optional<Stream> stream_;
  std::optional<std::conditional_t<kBackward, SelectedBackward, Selected>> sel_;
};

// ---------------------------------------------------------------------------------------------------
// Forward and compare sweep
// ---------------------------------------------------------------------------------------------------

std::vector<ForwardCase> forward_cases() {
  std::vector<ForwardCase> v;
  for (const auto* catalog : {&binary_catalog(), &compare_catalog()})
    for (const OpEntry& e : *catalog)
      for (ElementKind k : e.kinds)
        for (DeviceKind d : kTestDevices)
          for (const BinaryLayout& l : forward_layouts(d == DeviceKind::Sim, !e.is_compare)) v.push_back({e, k, d, l});
  return v;
}

/// Runs a forward/compare plan on `stream` over the layout's views of `a_st`/`b_st`; returns the storage
/// of the output (a's or b's for the in-place layouts).
std::vector<uint8_t> run_forward_layout(const Stream& stream, const ForwardRun& run, ElementKind k, ElementKind out_k,
                                        const BinaryLayout& l, const std::vector<uint8_t>& a_st,
                                        const std::vector<uint8_t>& b_st) {
  auto a = make_device_tensor(stream, k, l.a_shape, l.a, a_st, elements_in(k, a_st));
  auto b = make_device_tensor(stream, k, l.b_shape, l.b, b_st, elements_in(k, b_st));
  EXPECT_TRUE(a && b);
  if (!a || !b) return {};
  if (l.alias != Alias::None) {
    DeviceTensor& io = l.alias == Alias::OutIsA ? *a : *b;
    const Status s = run(stream, a->view, b->view, io.view);
    EXPECT_TRUE(s) << s.to_string();
    return download(io);
  }
  auto out = make_device_tensor(stream, out_k, l.out_shape, l.out,
                                sentinel_storage(out_k, storage_elements(l.out_shape, l.out)));
  EXPECT_TRUE(out) << out.error().to_string();
  if (!out) return {};
  const Status s = run(stream, a->view, b->view, out->view);
  EXPECT_TRUE(s) << s.to_string();
  return download(*out);
}

class BinarySweep : public SweepTest<BinaryLayout> {};

TEST_P(BinarySweep, MatchesHostReference) {
  const ElementKind out_k = c_.op.is_compare ? ElementKind::Bool : c_.kind;

  const uint64_t seed = seed_of(c_.op.name + std::string(to_string(c_.kind)) + l_.name);
  const std::vector<uint8_t> a_st =
      make_input(c_.op, c_.kind, std::max<int64_t>(storage_elements(l_.a_shape, l_.a), 1), 0, seed);
  const std::vector<uint8_t> b_st =
      make_input(c_.op, c_.kind, std::max<int64_t>(storage_elements(l_.b_shape, l_.b), 1), 1, seed + 1);
  const std::vector<uint8_t> want = host_forward(c_.op, c_.kind, out_k, l_.a_shape, l_.b_shape,
                                                 gather(c_.kind, a_st, l_.a_shape, l_.a),
                                                 gather(c_.kind, b_st, l_.b_shape, l_.b));
  const std::vector<uint8_t> got_st = run_forward_layout(*stream_, sel_->run, c_.kind, out_k, l_, a_st, b_st);
  if (HasFailure()) return;
  const Strided& out_layout = l_.alias == Alias::OutIsA ? l_.a : l_.alias == Alias::OutIsB ? l_.b : l_.out;
  const std::vector<uint8_t> got = gather(out_k, got_st, l_.out_shape, out_layout);
  EXPECT_TRUE(matches_reference(out_k, c_.device == DeviceKind::Host || c_.op.bitwise, resolve(c_.op.tol, c_.kind),
                                got, want));
  if (l_.alias == Alias::None) expect_only_view_written(out_k, got_st, got, l_.out_shape, l_.out);
  if (c_.device != DeviceKind::Host) {
    EXPECT_EQ(run_forward_layout(*stream_, sel_->run, c_.kind, out_k, l_, a_st, b_st), got_st)
        << "two runs gave different bits";
  }
}

INSTANTIATE_TEST_SUITE_P(Catalog, BinarySweep, ::testing::ValuesIn(forward_cases()), case_name<BinaryLayout>);

// ---------------------------------------------------------------------------------------------------
// Backward sweep
// ---------------------------------------------------------------------------------------------------

std::vector<BackwardCase> backward_cases() {
  std::vector<BackwardCase> v;
  for (const OpEntry& e : binary_catalog()) {
    if (!e.has_backward) continue;
    for (ElementKind k : e.kinds) {
      if (!is_floating(k)) continue;
      for (DeviceKind d : kTestDevices)
        for (const GradLayout& l : backward_layouts(d == DeviceKind::Sim)) v.push_back({e, k, d, l});
    }
  }
  return v;
}

struct GradInputs {
  std::vector<uint8_t> dy, a, b;  // storage
};

GradInputs grad_inputs(const OpEntry& e, ElementKind k, const GradLayout& l, uint64_t seed) {
  std::vector<double> unused;
  GradInputs in;
  in.dy = random_floats(k, std::max<int64_t>(storage_elements(l.out_shape, l.dy), 1), -2, 2, seed, &unused);
  in.a = make_input(e, k, std::max<int64_t>(storage_elements(l.a_shape, l.a), 1), 0, seed + 1);
  in.b = make_input(e, k, std::max<int64_t>(storage_elements(l.b_shape, l.b), 1), 1, seed + 2);
  return in;
}

struct GradStorage {
  std::vector<uint8_t> da, db;  // storage of each output (empty when not wanted)
};

GradStorage run_backward_layout(const Stream& stream, const BackwardRun& run, ElementKind k, const GradLayout& l,
                                const GradInputs& in) {
  auto dy = make_device_tensor(stream, k, l.out_shape, l.dy, in.dy, elements_in(k, in.dy));
  auto a = make_device_tensor(stream, k, l.a_shape, l.a, in.a, elements_in(k, in.a));
  auto b = make_device_tensor(stream, k, l.b_shape, l.b, in.b, elements_in(k, in.b));
  EXPECT_TRUE(dy && a && b);
  if (!dy || !a || !b) return {};
  GradStorage r;
  if (l.in_place) {  // da overwrites dy, db overwrites b
    const Status s = run(stream, dy->view, a->view, b->view, dy->view, b->view);
    EXPECT_TRUE(s) << s.to_string();
    r.da = download(*dy);
    r.db = download(*b);
    return r;
  }
  auto da = make_device_tensor(stream, k, l.out_shape, l.da, sentinel_storage(k, storage_elements(l.out_shape, l.da)));
  auto db = make_device_tensor(stream, k, l.out_shape, l.db, sentinel_storage(k, storage_elements(l.out_shape, l.db)));
  EXPECT_TRUE(da && db);
  if (!da || !db) return {};
  const Status s =
      run(stream, dy->view, a->view, b->view, l.want_da ? da->view : DynTensor{}, l.want_db ? db->view : DynTensor{});
  EXPECT_TRUE(s) << s.to_string();
  r.da = download(*da);
  r.db = download(*db);
  return r;
}

/// The host reference's logical (da, db) for logical inputs.
std::pair<std::vector<uint8_t>, std::vector<uint8_t>> host_backward(const OpEntry& e, ElementKind k,
                                                                    const Shape& a_shape, const Shape& b_shape,
                                                                    const std::vector<uint8_t>& dy,
                                                                    const std::vector<uint8_t>& a,
                                                                    const std::vector<uint8_t>& b) {
  auto sel = select_backward(Stream::host(), e, k, a_shape, b_shape);
  EXPECT_TRUE(sel) << sel.error().to_string();
  if (!sel) return {};
  const Shape o = must_broadcast(a_shape, b_shape);
  auto ops = dense_host_operands(k, {{o, &dy}, {a_shape, &a}, {b_shape, &b}}, k, o, 2);
  if (!ops) return {};
  const Status s = sel->run(Stream::host(), ops->in[0].view, ops->in[1].view, ops->in[2].view, ops->out[0].view,
                            ops->out[1].view);
  EXPECT_TRUE(s) << s.to_string();
  return {ops->logical_out(0), ops->logical_out(1)};
}

class BackwardSweep : public SweepTest<GradLayout> {};

TEST_P(BackwardSweep, MatchesHostReference) {
  const GradInputs in =
      grad_inputs(c_.op, c_.kind, l_, seed_of(c_.op.name + std::string(to_string(c_.kind)) + l_.name));
  const auto [want_da, want_db] =
      host_backward(c_.op, c_.kind, l_.a_shape, l_.b_shape, gather(c_.kind, in.dy, l_.out_shape, l_.dy),
                    gather(c_.kind, in.a, l_.a_shape, l_.a), gather(c_.kind, in.b, l_.b_shape, l_.b));
  const GradStorage got = run_backward_layout(*stream_, sel_->run, c_.kind, l_, in);
  if (HasFailure()) return;
  const bool bits = c_.device == DeviceKind::Host;
  const Tolerance tol = resolve(c_.op.grad_tol, c_.kind);
  const Strided& da_layout = l_.in_place ? l_.dy : l_.da;
  const Strided& db_layout = l_.in_place ? l_.b : l_.db;
  if (l_.want_da) {
    SCOPED_TRACE("da");
    EXPECT_TRUE(matches_reference(c_.kind, bits, tol, gather(c_.kind, got.da, l_.out_shape, da_layout), want_da));
  }
  if (l_.want_db) {
    SCOPED_TRACE("db");
    EXPECT_TRUE(matches_reference(c_.kind, bits, tol, gather(c_.kind, got.db, l_.out_shape, db_layout), want_db));
  }
  if (!l_.in_place) {  // unwanted outputs are not written at all; wanted ones only inside their views
    for (const auto& [st, layout, wanted] :
         {std::tuple{&got.da, &l_.da, l_.want_da}, {&got.db, &l_.db, l_.want_db}}) {
      std::vector<uint8_t> untouched = sentinel_storage(c_.kind, storage_elements(l_.out_shape, *layout));
      if (wanted) scatter(c_.kind, gather(c_.kind, *st, l_.out_shape, *layout), &untouched, l_.out_shape, *layout);
      EXPECT_EQ(*st, untouched) << "elements outside the wanted outputs changed";
    }
  }
  if (c_.device != DeviceKind::Host) {
    const GradStorage again = run_backward_layout(*stream_, sel_->run, c_.kind, l_, in);
    EXPECT_TRUE(again.da == got.da && again.db == got.db) << "two runs gave different bits";
  }
}

INSTANTIATE_TEST_SUITE_P(Catalog, BackwardSweep, ::testing::ValuesIn(backward_cases()), case_name<GradLayout>);

}  // namespace
}  // namespace baracuda::test
