// Test support: one run of an erased plan with one input and one output (affine, cast, unary forward) over a
// layout case, as the sweeps do it.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "baracuda/baracuda.hpp"
#include "support/tensor.hpp"

namespace baracuda::test {

/// Runs `plan` on `stream` over `l`: the input (`in` kind) from `in_storage` (at least `in_elems` elements),
/// the output (`out` kind) over sentinel storage of its own layout — or, for an in-place case, over the
/// input's memory. Returns the whole storage the output lives in; failures are test failures (and an empty
/// result).
template <class Plan>
std::vector<uint8_t> run_in_out(const Stream& stream, const Plan& plan, ElementKind in, ElementKind out,
                                const LayoutCase& l, const std::vector<uint8_t>& in_storage, int64_t in_elems = 0) {
  auto x = make_device_tensor(stream, in, l.shape, l.in, in_storage, in_elems);
  EXPECT_TRUE(x) << x.error().to_string();
  if (!x) return {};
  if (l.in_place) {
    DynTensor y = x->view;
    y.kind = out;
    const Status s = plan.run(stream, {}, {x->view, y});
    EXPECT_TRUE(s) << s.to_string();
    return download(*x);
  }
  auto y = make_device_tensor(stream, out, l.shape, l.out, sentinel_storage(out, storage_elements(l.shape, l.out)));
  EXPECT_TRUE(y) << y.error().to_string();
  if (!y) return {};
  const Status s = plan.run(stream, {}, {x->view, y->view});
  EXPECT_TRUE(s) << s.to_string();
  return download(*y);
}

}  // namespace baracuda::test
