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
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "binary_test_support.hpp"

namespace baracuda::test {
namespace {

// ---------------------------------------------------------------------------------------------------
// Forward and compare sweep
// ---------------------------------------------------------------------------------------------------

struct ForwardCase {
  OpEntry op;
  ElementKind kind;
  DeviceKind device;
  BinaryLayout layout;
};

void PrintTo(const ForwardCase& c, std::ostream* os) {
  *os << c.op.name << " " << to_string(c.kind) << " " << c.layout.name << " on " << to_string(c.device);
}

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

class BinarySweep : public ::testing::TestWithParam<ForwardCase> {};

TEST_P(BinarySweep, MatchesHostReference) {
  const ForwardCase& c = GetParam();
  BARACUDA_TEST_STREAM(stream, c.device);
  const BinaryLayout& l = c.layout;
  auto sel = select_forward(stream, c.op, c.kind, l.a_shape, l.b_shape);
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(sel, c.device);
  ASSERT_TRUE(sel) << sel.error().to_string();
  EXPECT_EQ(sel->sku.backend, backend_of(c.device));
  EXPECT_EQ(sel->sku.op, c.op.name);
  const ElementKind out_k = c.op.is_compare ? ElementKind::Bool : c.kind;

  const uint64_t seed = seed_of(c.op.name + std::string(to_string(c.kind)) + l.name);
  const std::vector<uint8_t> a_st =
      make_input(c.op, c.kind, std::max<int64_t>(storage_elements(l.a_shape, l.a), 1), 0, seed);
  const std::vector<uint8_t> b_st =
      make_input(c.op, c.kind, std::max<int64_t>(storage_elements(l.b_shape, l.b), 1), 1, seed + 1);
  const std::vector<uint8_t> want = host_forward(c.op, c.kind, out_k, l.a_shape, l.b_shape,
                                                 gather(c.kind, a_st, l.a_shape, l.a),
                                                 gather(c.kind, b_st, l.b_shape, l.b));
  const std::vector<uint8_t> got_st = run_forward_layout(stream, sel->run, c.kind, out_k, l, a_st, b_st);
  if (HasFailure()) return;
  const Strided& out_layout = l.alias == Alias::OutIsA ? l.a : l.alias == Alias::OutIsB ? l.b : l.out;
  const std::vector<uint8_t> got = gather(out_k, got_st, l.out_shape, out_layout);
  EXPECT_TRUE(matches_reference(out_k, c.device == DeviceKind::Host || c.op.bitwise, resolve(c.op.tol, c.kind), got,
                                want));
  if (l.alias == Alias::None) {
    std::vector<uint8_t> untouched = sentinel_storage(out_k, storage_elements(l.out_shape, l.out));
    scatter(out_k, got, &untouched, l.out_shape, l.out);
    EXPECT_EQ(got_st, untouched) << "elements outside the output view changed";
  }
  if (c.device != DeviceKind::Host) {
    EXPECT_EQ(run_forward_layout(stream, sel->run, c.kind, out_k, l, a_st, b_st), got_st)
        << "two runs gave different bits";
  }
}

INSTANTIATE_TEST_SUITE_P(Catalog, BinarySweep, ::testing::ValuesIn(forward_cases()),
                         [](const ::testing::TestParamInfo<ForwardCase>& info) {
                           const ForwardCase& c = info.param;
                           return c.op.name + "_" + std::string(to_string(c.kind)) + "_" + c.layout.name + "_" +
                                  std::string(to_string(c.device));
                         });

// ---------------------------------------------------------------------------------------------------
// Backward sweep
// ---------------------------------------------------------------------------------------------------

struct BackwardCase {
  OpEntry op;
  ElementKind kind;
  DeviceKind device;
  GradLayout layout;
};

void PrintTo(const BackwardCase& c, std::ostream* os) {
  *os << c.op.name << "_backward " << to_string(c.kind) << " " << c.layout.name << " on " << to_string(c.device);
}

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
  const Stream host = Stream::host();
  auto sel = select_backward(host, e, k, a_shape, b_shape);
  EXPECT_TRUE(sel) << sel.error().to_string();
  if (!sel) return {};
  const Shape o = must_broadcast(a_shape, b_shape);
  auto tdy = dense_tensor(host, k, o, dy);
  auto ta = dense_tensor(host, k, a_shape, a);
  auto tb = dense_tensor(host, k, b_shape, b);
  auto tda = dense_tensor(host, k, o, sentinel_storage(k, o.numel()));
  auto tdb = dense_tensor(host, k, o, sentinel_storage(k, o.numel()));
  EXPECT_TRUE(tdy && ta && tb && tda && tdb);
  if (!tdy || !ta || !tb || !tda || !tdb) return {};
  const Status s = sel->run(host, tdy->view, ta->view, tb->view, tda->view, tdb->view);
  EXPECT_TRUE(s) << s.to_string();
  auto da = download(*tda), db = download(*tdb);
  da.resize(static_cast<size_t>(o.numel() * element_bytes(k)));
  db.resize(da.size());
  return {da, db};
}

class BackwardSweep : public ::testing::TestWithParam<BackwardCase> {};

TEST_P(BackwardSweep, MatchesHostReference) {
  const BackwardCase& c = GetParam();
  BARACUDA_TEST_STREAM(stream, c.device);
  const GradLayout& l = c.layout;
  auto sel = select_backward(stream, c.op, c.kind, l.a_shape, l.b_shape);
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(sel, c.device);
  ASSERT_TRUE(sel) << sel.error().to_string();
  EXPECT_EQ(sel->sku.backend, backend_of(c.device));
  EXPECT_EQ(sel->sku.op, c.op.name + "_backward");

  const GradInputs in = grad_inputs(c.op, c.kind, l, seed_of(c.op.name + std::string(to_string(c.kind)) + l.name));
  const auto [want_da, want_db] =
      host_backward(c.op, c.kind, l.a_shape, l.b_shape, gather(c.kind, in.dy, l.out_shape, l.dy),
                    gather(c.kind, in.a, l.a_shape, l.a), gather(c.kind, in.b, l.b_shape, l.b));
  const GradStorage got = run_backward_layout(stream, sel->run, c.kind, l, in);
  if (HasFailure()) return;
  const bool bits = c.device == DeviceKind::Host;
  const Tolerance tol = resolve(c.op.grad_tol, c.kind);
  const Strided& da_layout = l.in_place ? l.dy : l.da;
  const Strided& db_layout = l.in_place ? l.b : l.db;
  if (l.want_da) {
    SCOPED_TRACE("da");
    EXPECT_TRUE(matches_reference(c.kind, bits, tol, gather(c.kind, got.da, l.out_shape, da_layout), want_da));
  }
  if (l.want_db) {
    SCOPED_TRACE("db");
    EXPECT_TRUE(matches_reference(c.kind, bits, tol, gather(c.kind, got.db, l.out_shape, db_layout), want_db));
  }
  if (!l.in_place) {  // unwanted outputs are not written at all; wanted ones only inside their views
    for (const auto& [st, layout, wanted] : {std::tuple{&got.da, &l.da, l.want_da}, {&got.db, &l.db, l.want_db}}) {
      std::vector<uint8_t> untouched = sentinel_storage(c.kind, storage_elements(l.out_shape, *layout));
      if (wanted) scatter(c.kind, gather(c.kind, *st, l.out_shape, *layout), &untouched, l.out_shape, *layout);
      EXPECT_EQ(*st, untouched) << "elements outside the wanted outputs changed";
    }
  }
  if (c.device != DeviceKind::Host) {
    const GradStorage again = run_backward_layout(stream, sel->run, c.kind, l, in);
    EXPECT_TRUE(again.da == got.da && again.db == got.db) << "two runs gave different bits";
  }
}

INSTANTIATE_TEST_SUITE_P(Catalog, BackwardSweep, ::testing::ValuesIn(backward_cases()),
                         [](const ::testing::TestParamInfo<BackwardCase>& info) {
                           const BackwardCase& c = info.param;
                           return c.op.name + "_" + std::string(to_string(c.kind)) + "_" + c.layout.name + "_" +
                                  std::string(to_string(c.device));
                         });

}  // namespace
}  // namespace baracuda::test
