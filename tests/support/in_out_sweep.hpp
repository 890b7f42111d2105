// Test support: the layout sweeps of the plans with one input and one output (affine, cast, fp8): a case of
// such a sweep, the check that nothing outside an output view was written, and the whole check of a catalog
// sweep case whose expected values follow from its input values one by one (affine, cast).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "baracuda/baracuda.hpp"
#include "support/compare.hpp"
#include "support/devices.hpp"
#include "support/numeric.hpp"
#include "support/run_in_out.hpp"
#include "support/tensor.hpp"
#include "support/tolerance.hpp"

namespace baracuda::test {

/// One case of a layout sweep: the input and output kinds, the device and the layout; for a catalog sweep
/// also the op name the plan's SKU reports and the tolerance (resolved for `out`).
struct InOutCase {
  ElementKind in;
  ElementKind out;
  DeviceKind device;
  LayoutCase layout;
  std::string op = {};
  Tolerance tol = tolerances::exact;
};

/// "in_out_layout_device", prefixed by "op_" when the case names one.
inline std::string in_out_case_name(const ::testing::TestParamInfo<InOutCase>& info) {
  const InOutCase& c = info.param;
  return (c.op.empty() ? "" : c.op + "_") + std::string(to_string(c.in)) + "_" + std::string(to_string(c.out)) +
         "_" + c.layout.name + "_" + std::string(to_string(c.device));
}

/// `storage` (kind k, sentinel-filled before the run) differs from kSentinel only inside the view of `shape`
/// through `layout`, whose row-major elements are `logical`.
inline void expect_only_view_written(ElementKind k, const std::vector<uint8_t>& storage,
                                     const std::vector<uint8_t>& logical, const Shape& shape, const Strided& layout) {
  std::vector<uint8_t> untouched(storage.size(), kSentinel);
  scatter(k, logical, &untouched, shape, layout);
  EXPECT_EQ(storage, untouched) << "elements outside the output view changed";
}

/// Checks catalog sweep case `c` of Plan, selected for `desc` on the case's device (a cuda case skips without
/// cuda kernels): the SKU names the device's backend and the case's op; run over the layout on the input
/// storage `make_input(elements)` gives, for each logical input value x, `value_of(x)` within the case's
/// tolerance and writes nothing outside the output view; on sim and cuda the output storage is also the host
/// plan's bit for bit, and a second run gives the same bits.
template <class Plan, class Descriptor, class MakeInput, class ValueOf>
void check_in_out_case(const InOutCase& c, const Descriptor& desc, MakeInput make_input, ValueOf value_of) {
  BARACUDA_TEST_STREAM(stream, c.device);
  auto plan = Plan::select(stream, desc);
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(plan, c.device);
  ASSERT_TRUE(plan) << plan.error().to_string();
  EXPECT_EQ(plan->sku().backend, backend_of(c.device));
  EXPECT_EQ(plan->sku().op, c.op);

  const LayoutCase& l = c.layout;
  const int64_t in_elems = storage_elements(l.shape, l.in);
  const std::vector<uint8_t> in_storage = make_input(in_elems);
  const std::vector<uint8_t> logical_in = gather(c.in, in_storage, l.shape, l.in);
  std::vector<double> expected(static_cast<size_t>(l.shape.numel()));
  for (size_t i = 0; i < expected.size(); ++i)
    expected[i] = value_of(decode_value(c.in, &logical_in[i * element_bytes(c.in)]));

  auto run = [&](const Stream& s, const Plan& p) { return run_in_out(s, p, c.in, c.out, l, in_storage, in_elems); };
  const Strided& out_layout = l.in_place ? l.in : l.out;
  const std::vector<uint8_t> got = run(stream, *plan);
  if (::testing::Test::HasFailure()) return;
  const std::vector<uint8_t> logical_out = gather(c.out, got, l.shape, out_layout);
  EXPECT_TRUE(close_elements(c.out, logical_out, expected, c.tol));
  if (!l.in_place) expect_only_view_written(c.out, got, logical_out, l.shape, l.out);
  if (c.device == DeviceKind::Host) return;
  auto host_plan = Plan::select(Stream::host(), desc);
  ASSERT_TRUE(host_plan);
  EXPECT_TRUE(same_elements(c.out, got, run(Stream::host(), *host_plan),
                            static_cast<int64_t>(got.size()) / element_bytes(c.out)))
      << "differs from the host reference";
  EXPECT_EQ(run(stream, *plan), got) << "two runs gave different bits";
}

}  // namespace baracuda::test
