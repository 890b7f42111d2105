// UnaryPlan and UnaryBackwardPlan sweeps, generated from the catalog (include/baracuda/ops/unary_ops.def) and
// its test metadata (tests/ops/unary_test_catalog.hpp):
// - UnaryForwardSweep / UnaryBackwardSweep: every (op, dtype, device, layout): shapes 0, 1, 257×259 (a
//   smaller odd shape on sim), strided in and out, broadcast, reversed, rank 8, in place (and, backward,
//   dx in place of the saved operand); inputs random in the op's domain; against the host reference run
//   on the same values densely (bit-exact on host, the op's test tolerance elsewhere); elements outside
//   the output view untouched; sim/cuda run twice and compared bit for bit (determinism).
#include <gtest/gtest.h>

#include "support/run_in_out.hpp"
#include "unary_test_support.hpp"

namespace baracuda::test {
namespace {

// ---------------------------------------------------------------------------------------------------
// The sweeps
// ---------------------------------------------------------------------------------------------------

/// The support library's layouts; on sim the 257×259 case becomes 61×67 (the emulator is slow).
std::vector<LayoutCase> layouts_for(DeviceKind device, bool backward_with_saved) {
  std::vector<LayoutCase> v;
  for (LayoutCase l : unary_layouts()) {
    if (device == DeviceKind::Sim && l.name == "257x259") {
      l.name = "61x67";
      l.shape = Shape{61, 67};
      l.in = l.out = dense_layout(l.shape);
    }
    v.push_back(l);
  }
  if (backward_with_saved) {  // dx written over the saved operand
    LayoutCase c{"inplace_saved", Shape{67, 33}, dense_layout(Shape{67, 33}), dense_layout(Shape{67, 33}), true};
    v.push_back(c);
  }
  return v;
}

struct SweepCase {
  UnaryKind op;
  ElementKind kind;
  DeviceKind device;
  LayoutCase layout;
};

std::vector<SweepCase> sweep_cases(bool backward) {
  std::vector<SweepCase> v;
  for (const CatalogOp& op : catalog())
    for (ElementKind k : op.kinds)
      for (DeviceKind d : kTestDevices)
        for (const LayoutCase& l : layouts_for(d, backward && op.saved != UnarySaved::None))
          v.push_back({op.kind, k, d, l});
  return v;
}

std::string sweep_name(const ::testing::TestParamInfo<SweepCase>& info) {
  const SweepCase& c = info.param;
  return std::string(to_string(c.op)) + "_" + std::string(to_string(c.kind)) + "_" + c.layout.name + "_" +
         std::string(to_string(c.device));
}

uint64_t seed_of(const SweepCase& c, uint64_t salt) {
  return 1000003ull * static_cast<uint64_t>(c.op) + 7919ull * static_cast<uint64_t>(c.kind) +
         31ull * static_cast<uint64_t>(c.layout.shape.numel()) + salt;
}

/// Compares a device's logical output with the host reference's (bit-exact when the device is host).
void expect_matches_reference(const SweepCase& c, unary_tolerances::UnaryTolerance tol,
                              const std::vector<uint8_t>& got, const std::vector<uint8_t>& want) {
  if (c.device == DeviceKind::Host) {
    EXPECT_TRUE(same_elements(c.kind, got, want, static_cast<int64_t>(want.size()) / element_bytes(c.kind)))
        << "the host device differs from the host reference on dense memory";
    return;
  }
  EXPECT_TRUE(close_elements(c.kind, got, values_of(c.kind, want), tol(c.kind)));
}

void expect_untouched(const SweepCase& c, const std::vector<uint8_t>& storage, const std::vector<uint8_t>& logical,
                      const Strided& layout) {
  std::vector<uint8_t> untouched = sentinel_storage(c.kind, storage_elements(c.layout.shape, layout));
  scatter(c.kind, logical, &untouched, c.layout.shape, layout);
  EXPECT_EQ(storage, untouched) << "elements outside the output view changed";
}

class UnaryForwardSweep : public ::testing::TestWithParam<SweepCase> {};

std::vector<uint8_t> run_forward(const Stream& stream, const SweepCase& c, const std::vector<uint8_t>& in_storage,
                                 const dynamic::UnaryPlan& plan) {
  return run_in_out(stream, plan, c.kind, c.kind, c.layout, in_storage);
}

TEST_P(UnaryForwardSweep, MatchesHostReference) {
  const SweepCase& c = GetParam();
  const CatalogOp& op = op_of(c.op);
  BARACUDA_TEST_STREAM(stream, c.device);
  const LayoutCase& l = c.layout;
  const UnaryDescriptor desc = test_desc(c.op, c.kind, l.shape);
  auto plan = dynamic::UnaryPlan::select(stream, desc);
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(plan, c.device);
  ASSERT_TRUE(plan) << plan.error().to_string();
  EXPECT_EQ(plan->sku().backend, backend_of(c.device));
  EXPECT_EQ(plan->sku().op, op.name);

  std::vector<double> unused;
  const std::vector<uint8_t> in_storage =
      random_floats(c.kind, storage_elements(l.shape, l.in), op.domain.lo, op.domain.hi, seed_of(c, 1), &unused);
  const std::vector<uint8_t> want = host_forward(desc, gather(c.kind, in_storage, l.shape, l.in));
  const Strided& out_layout = l.in_place ? l.in : l.out;
  const std::vector<uint8_t> got = run_forward(stream, c, in_storage, *plan);
  if (HasFailure()) return;
  const std::vector<uint8_t> logical = gather(c.kind, got, l.shape, out_layout);
  expect_matches_reference(c, op.fwd_tol, logical, want);
  if (!l.in_place) expect_untouched(c, got, logical, out_layout);
  if (c.device != DeviceKind::Host) {
    EXPECT_EQ(run_forward(stream, c, in_storage, *plan), got) << "two runs gave different bits";
  }
}

INSTANTIATE_TEST_SUITE_P(Catalog, UnaryForwardSweep, ::testing::ValuesIn(sweep_cases(false)), sweep_name);

class UnaryBackwardSweep : public ::testing::TestWithParam<SweepCase> {};

struct BackwardOperands {
  std::vector<uint8_t> dy, saved;  // storage of the `in` layout
};

std::vector<uint8_t> run_backward(const Stream& stream, const SweepCase& c, const BackwardOperands& o,
                                  const dynamic::UnaryBackwardPlan& plan) {
  const LayoutCase& l = c.layout;
  const bool uses_saved = plan.saved_operand() != UnarySaved::None;
  auto dy = make_device_tensor(stream, c.kind, l.shape, l.in, o.dy);
  auto saved = make_device_tensor(stream, c.kind, l.shape, l.in, o.saved);
  EXPECT_TRUE(dy && saved);
  if (!dy || !saved) return {};
  const ConstDynTensor saved_view = uses_saved ? saved->view : ConstDynTensor{};  // not read: pass nothing
  if (l.in_place) {
    const bool over_saved = l.name == "inplace_saved";
    const DeviceTensor& target = over_saved ? *saved : *dy;
    const Status s = plan.run(stream, {}, {dy->view, saved_view, target.view});
    EXPECT_TRUE(s) << s.to_string();
    return download(target);
  }
  auto dx = make_device_tensor(stream, c.kind, l.shape, l.out, sentinel_storage(c.kind, storage_elements(l.shape, l.out)));
  EXPECT_TRUE(dx) << dx.error().to_string();
  if (!dx) return {};
  const Status s = plan.run(stream, {}, {dy->view, saved_view, dx->view});
  EXPECT_TRUE(s) << s.to_string();
  return download(*dx);
}

TEST_P(UnaryBackwardSweep, MatchesHostReference) {
  const SweepCase& c = GetParam();
  const CatalogOp& op = op_of(c.op);
  BARACUDA_TEST_STREAM(stream, c.device);
  const LayoutCase& l = c.layout;
  const UnaryDescriptor desc = test_desc(c.op, c.kind, l.shape);
  auto plan = dynamic::UnaryBackwardPlan::select(stream, desc);
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(plan, c.device);
  ASSERT_TRUE(plan) << plan.error().to_string();
  EXPECT_EQ(plan->sku().backend, backend_of(c.device));
  EXPECT_EQ(plan->sku().op, op.name + "_backward");
  EXPECT_EQ(plan->saved_operand(), op.saved);

  const int64_t elems = storage_elements(l.shape, l.in);
  std::vector<double> unused;
  BackwardOperands o;
  const std::vector<uint8_t> x = random_floats(c.kind, elems, op.domain.lo, op.domain.hi, seed_of(c, 2), &unused);
  o.saved = op.saved == UnarySaved::Output ? host_forward(desc, x) : x;
  o.dy = random_floats(c.kind, elems, -2.0, 2.0, seed_of(c, 3), &unused);
  const std::vector<uint8_t> want =
      host_backward(desc, gather(c.kind, o.dy, l.shape, l.in), gather(c.kind, o.saved, l.shape, l.in));
  const Strided& out_layout = l.in_place ? l.in : l.out;
  const std::vector<uint8_t> got = run_backward(stream, c, o, *plan);
  if (HasFailure()) return;
  const std::vector<uint8_t> logical = gather(c.kind, got, l.shape, out_layout);
  expect_matches_reference(c, op.bwd_tol, logical, want);
  if (!l.in_place) expect_untouched(c, got, logical, out_layout);
  if (c.device != DeviceKind::Host) {
    EXPECT_EQ(run_backward(stream, c, o, *plan), got) << "two runs gave different bits";
  }
}

INSTANTIATE_TEST_SUITE_P(Catalog, UnaryBackwardSweep, ::testing::ValuesIn(sweep_cases(true)), sweep_name);

}  // namespace
}  // namespace baracuda::test
