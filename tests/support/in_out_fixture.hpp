// Test support: the can_implement fixture of an erased plan with one input and one output (affine, cast,
// unary): [4, 3] operands over host arrays, `expect`, which checks that can_implement and run reject
// alike and that a rejected run leaves the output's bytes alone, and the rejections every such plan makes.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>

#include "baracuda/baracuda.hpp"

namespace baracuda::test {

template <class Plan>
class InOutCanImplement : public ::testing::Test {
 protected:
  /// Selects the plan on the host for `desc`, whose input and output have kinds `in_kind` and `out_kind`.
  template <class Descriptor>
  void select(const Descriptor& desc, ElementKind in_kind, ElementKind out_kind) {
    auto p = Plan::select(Stream::host(), desc);
    ASSERT_TRUE(p) << p.error().to_string();
    plan_ = std::make_unique<Plan>(std::move(p).value());
    in_kind_ = in_kind;
    out_kind_ = out_kind;
  }
  ConstDynTensor in() const { return ConstDynTensor::dense(in_, in_kind_, Shape{4, 3}); }
  DynTensor out() { return DynTensor::dense(out_, out_kind_, Shape{4, 3}); }
  /// can_implement and run both fail with `code`, and run wrote nothing.
  void expect(const ConstDynTensor& a, const DynTensor& b, ErrorCode code) {
    const Status c = plan_->can_implement({a, b});
    ASSERT_FALSE(c);
    EXPECT_EQ(c.code(), code) << c.to_string();
    std::memset(out_, 0x5A, sizeof out_);
    const Status r = plan_->run(Stream::host(), {}, {a, b});
    ASSERT_FALSE(r);
    EXPECT_EQ(r.code(), code) << r.to_string();
    for (uint8_t v : out_) ASSERT_EQ(v, 0x5A) << "run wrote despite the rejection";
  }
  /// The described tensors are accepted, and so is the output's memory read in place.
  void expect_described_and_in_place_accepted() {
    EXPECT_TRUE(plan_->can_implement({in(), out()}));
    EXPECT_TRUE(plan_->can_implement({out(), out()}));
  }
  /// An input without data is rejected.
  void expect_null_input_rejected() {
    ConstDynTensor a = in();
    a.data = nullptr;
    expect(a, out(), ErrorCode::InvalidProblem);
  }
  /// An input `offset` bytes past an aligned address is rejected.
  void expect_misaligned_input_rejected(int offset) {
    ConstDynTensor a = in();
    a.data = in_ + offset;
    expect(a, out(), ErrorCode::MisalignedOperand);
  }
  /// An output whose dimension `dim` has stride 0 (elements written twice) is rejected.
  void expect_stride_zero_output_rejected(int dim) {
    DynTensor b = out();
    b.stride[dim] = 0;
    expect(in(), b, ErrorCode::InvalidProblem);
  }
  /// An input over the output's memory with other strides (the same memory read transposed) is rejected.
  void expect_in_place_with_other_strides_rejected() {
    ConstDynTensor a = out();
    a.stride = {1, 4};
    expect(a, out(), ErrorCode::InvalidProblem);
  }

  std::unique_ptr<Plan> plan_;
  ElementKind in_kind_ = ElementKind::F32, out_kind_ = ElementKind::F32;
  alignas(16) uint8_t in_[128] = {};
  alignas(16) uint8_t out_[128] = {};
};

}  // namespace baracuda::test
