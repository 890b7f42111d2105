// UnaryPlan and UnaryBackwardPlan sweeps, generated from the catalog (include/baracuda/ops/unary_ops.def) and
// its test metadata (tests/ops/unary_test_catalog.hpp):
// - UnaryForwardSweep / UnaryBackwardSweep: every (op, dtype, device, layout): shapes 0, 1, 257×259 (a
//   smaller odd shape on sim), strided in and out, broadcast, reversed, rank 8, in place (and, backward,
//   dx in place of the saved operand); inputs random in the op's domain; against the host reference run
//   on the same values densely (bit-exact on host, the op's test tolerance elsewhere); elements outside
//   the output view untouched; sim/cuda run twice and compared bit for bit (determinism).
#include <gtest/gtest.h>

#include "support/in_out_sweep.hpp"
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

/// Checks a sweep case's output storage from `run()` (a run on the case's device): its logical output against
/// the host reference's `want` within `tol`, nothing outside the output view written, and on sim and cuda the
/// same bits from a second run.
template <class Run>
void expect_sweep_output(const SweepCase& c, unary_tolerances::UnaryTolerance tol, const std::vector<uint8_t>& want,
                         Run run) {
  const LayoutCase& l = c.layout;
  const Strided& out_layout = l.in_place ? l.in : l.out;
  const std::vector<uint8_t> got = run();
  if (::testing::Test::HasFailure()) return;
  const std::vector<uint8_t> logical = gather(c.kind, got, l.shape, out_layout);
  expect_matches_reference(c, tol, logical, want);
  if (!l.in_place) expect_only_view_written(c.kind, got, logical, l.shape, out_layout);
  if (c.device != DeviceKind::Host) EXPECT_EQ(run(), got) << "two runs gave different bits";
}

/// A sweep case's stream and its Plan, selected on the case's device for the test descriptor and checked to
/// name the device's backend and the op (with `sku_suffix`) in its SKU; a case without a usable device, or a cuda
/// case built without CUDA kernels, skips.
template <class Plan>
class UnarySweep : public ::testing::TestWithParam<SweepCase> {
 protected:
  explicit UnarySweep(std::string sku_suffix) : sku_suffix_(std::move(sku_suffix)) {}
  void SetUp() override {
    std::string why_not;
    stream_ = stream_for(c_.device, &why_not);
    if (!stream_) GTEST_SKIP() << why_not;
    auto plan = Plan::select(*stream_, desc_);
    BARACUDA_SKIP_IF_NO_CUDA_KERNELS(plan, c_.device);
    ASSERT_TRUE(plan) << plan.error().to_string();
    EXPECT_EQ(plan->sku().backend, backend_of(c_.device));
    EXPECT_EQ(plan->sku().op, op_.name + sku_suffix_);
    plan_.emplace(std::move(plan).value());
  }

  const SweepCase& c_ = GetParam();
  const CatalogOp& op_ = op_of(c_.op);
  const LayoutCase& l_ = c_.layout;
  const UnaryDescriptor desc_ = test_desc(c_.op, c_.kind, l_.shape);
  std::string sku_suffix_;
  std::optional<Stream> stream_;
  std::optional<Plan> plan_;
};

class UnaryForwardSweep : public UnarySweep<dynamic::UnaryPlan> {
 protected:
  UnaryForwardSweep() : UnarySweep("") {}
};

TEST_P(UnaryForwardSweep, MatchesHostReference) {
  std::vector<double> unused;
  const std::vector<uint8_t> in_storage =
      random_floats(c_.kind, storage_elements(l_.shape, l_.in), op_.domain.lo, op_.domain.hi, seed_of(c_, 1),
                    &unused);
  const std::vector<uint8_t> want = host_forward(desc_, gather(c_.kind, in_storage, l_.shape, l_.in));
  expect_sweep_output(c_, op_.fwd_tol, want,
                      [&] { return run_in_out(*stream_, *plan_, c_.kind, c_.kind, l_, in_storage); });
}

INSTANTIATE_TEST_SUITE_P(Catalog, UnaryForwardSweep, ::testing::ValuesIn(sweep_cases(false)), sweep_name);

class UnaryBackwardSweep : public UnarySweep<dynamic::UnaryBackwardPlan> {
 protected:
  UnaryBackwardSweep() : UnarySweep("_backward") {}
};

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
  EXPECT_EQ(plan_->saved_operand(), op_.saved);

  const int64_t elems = storage_elements(l_.shape, l_.in);
  std::vector<double> unused;
  BackwardOperands o;
  const std::vector<uint8_t> x = random_floats(c_.kind, elems, op_.domain.lo, op_.domain.hi, seed_of(c_, 2), &unused);
  o.saved = op_.saved == UnarySaved::Output ? host_forward(desc_, x) : x;
  o.dy = random_floats(c_.kind, elems, -2.0, 2.0, seed_of(c_, 3), &unused);
  const std::vector<uint8_t> want =
      host_backward(desc_, gather(c_.kind, o.dy, l_.shape, l_.in), gather(c_.kind, o.saved, l_.shape, l_.in));
  expect_sweep_output(c_, op_.bwd_tol, want, [&] { return run_backward(*stream_, c_, o, *plan_); });
}

INSTANTIATE_TEST_SUITE_P(Catalog, UnaryBackwardSweep, ::testing::ValuesIn(sweep_cases(true)), sweep_name);

}  // namespace
}  // namespace baracuda::test
