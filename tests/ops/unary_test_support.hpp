// Helpers shared by the unary tests (unary_*test.cpp): the catalog with its test metadata
// (unary_test_catalog.hpp), the parameters, the host reference.
#pragma once

#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "baracuda/baracuda.hpp"
#include "baracuda/ops/unary.hpp"
#include "ops/unary/param_spec.hpp"
#include "support/compare.hpp"
#include "support/devices.hpp"
#include "support/kind_lists.hpp"
#include "support/numeric.hpp"
#include "support/random.hpp"
#include "support/tensor.hpp"
#include "support/tolerance.hpp"
#include "unary_test_catalog.hpp"
#include "unary_tolerances.hpp"

namespace baracuda::test {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kInf = std::numeric_limits<double>::infinity();

inline std::vector<double> values_of(ElementKind k, const std::vector<uint8_t>& bytes) {
  const int w = element_bytes(k);
  std::vector<double> v(bytes.size() / static_cast<size_t>(w));
  for (size_t i = 0; i < v.size(); ++i) v[i] = decode_value(k, &bytes[i * static_cast<size_t>(w)]);
  return v;
}

// ---------------------------------------------------------------------------------------------------
// The catalog, as the tests see it
// ---------------------------------------------------------------------------------------------------

struct CatalogOp {
  UnaryKind kind;
  std::string name;
  UnarySaved saved;
  UnaryDomain domain;
  unary_tolerances::UnaryTolerance fwd_tol;
  unary_tolerances::UnaryTolerance bwd_tol;
  std::vector<ElementKind> kinds;
};

inline const std::vector<CatalogOp>& catalog() {
  static const std::vector<CatalogOp> ops = [] {
    std::vector<CatalogOp> v;
#define BARACUDA_UNARY_OP(name, Enum, params, saved, types, doc)                                      \
  {                                                                                                   \
    const UnaryTestInfo& m = unary_test_info(UnaryKind::Enum);                                        \
    v.push_back({UnaryKind::Enum, #name, UnarySaved::saved, m.domain, m.fwd_tol, m.bwd_tol,           \
                 kinds_of_list(types{})});                                                            \
  }
#include "baracuda/ops/unary_ops.def"
#undef BARACUDA_UNARY_OP
    return v;
  }();
  return ops;
}

inline const CatalogOp& op_of(UnaryKind k) { return catalog()[static_cast<size_t>(k)]; }

inline const detail::ParamSpec& spec_of(UnaryKind k) { return detail::kUnaryParamSpecs[static_cast<size_t>(k)]; }

/// The value the sweeps give each parameter (not the defaults, so that the parameters reach the kernels;
/// every op's rules hold for them).
inline double test_value(UnaryParam p) {
  switch (p) {
    case UnaryParam::NegativeSlope: return 0.2;
    case UnaryParam::Alpha: return 1.5;
    case UnaryParam::Beta: return 2.0;
    case UnaryParam::Threshold: return 3.0;
    case UnaryParam::Value: return -2.0;
    case UnaryParam::Lambd: return 0.75;
    case UnaryParam::MinVal: return -2.0;
    case UnaryParam::MaxVal: return 0.5;
    case UnaryParam::Eps: return 0.1;
  }
  return 0;
}

inline UnaryDescriptor test_desc(UnaryKind op, ElementKind k, const Shape& shape) {
  UnaryDescriptor d = UnaryDescriptor().with_kind(op).with_element(k).with_shape(shape);
  for (size_t i = 0; i < kNumUnaryParams; ++i)
    if (spec_of(op).rules[i].applies) d.with_parameter(static_cast<UnaryParam>(i), test_value(static_cast<UnaryParam>(i)));
  return d;
}

// ---------------------------------------------------------------------------------------------------
// The host reference on dense host memory (the expectation of every sweep case)
// ---------------------------------------------------------------------------------------------------

/// The host device's output of Plan for `d` over dense 1-D copies of the inputs (all of the descriptor's kind).
template <class Plan, class... Inputs>
std::vector<uint8_t> host_reference(UnaryDescriptor d, const std::vector<uint8_t>& first, const Inputs&... rest) {
  const int64_t n = static_cast<int64_t>(first.size()) / element_bytes(d.element);
  d.shape = Shape{n};
  std::vector<uint8_t> out(first.size());
  auto plan = Plan::select(Stream::host(), d);
  EXPECT_TRUE(plan) << plan.error().to_string();
  if (!plan || n == 0) return out;
  auto in = [&](const std::vector<uint8_t>& v) { return ConstDynTensor::dense(v.data(), d.element, d.shape); };
  const Status s =
      plan->run(Stream::host(), {}, {in(first), in(rest)..., DynTensor::dense(out.data(), d.element, d.shape)});
  EXPECT_TRUE(s) << s.to_string();
  return out;
}

inline std::vector<uint8_t> host_forward(const UnaryDescriptor& d, const std::vector<uint8_t>& x) {
  return host_reference<dynamic::UnaryPlan>(d, x);
}

inline std::vector<uint8_t> host_backward(const UnaryDescriptor& d, const std::vector<uint8_t>& dy,
                                          const std::vector<uint8_t>& saved) {
  return host_reference<dynamic::UnaryBackwardPlan>(d, dy, saved);
}

inline UnaryDescriptor f32_desc(UnaryKind op = UnaryKind::Exp, Shape s = Shape{4, 3}) {
  return UnaryDescriptor().with_kind(op).with_element(ElementKind::F32).with_shape(s);
}

}  // namespace baracuda::test
