// Helpers shared by the gated-activation tests (gated_activation_*test.cpp): the catalog, the plan runners.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "baracuda/baracuda.hpp"
#include "baracuda/ops/gated_activation.hpp"
#include "support/compare.hpp"
#include "support/devices.hpp"
#include "support/kind_lists.hpp"
#include "support/numeric.hpp"
#include "support/random.hpp"
#include "support/tensor.hpp"
#include "support/tolerance.hpp"
#include "gated_activation_test_catalog.hpp"

namespace baracuda::test {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr std::array<GateLayout, 3> kLayouts = {GateLayout::SecondHalf, GateLayout::FirstHalf,
                                                GateLayout::Interleaved};

inline uint64_t seed_of(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (char c : s) h = (h ^ static_cast<uint8_t>(c)) * 1099511628211ull;
  return h;
}

// ---------------------------------------------------------------------------------------------------
// The catalog, as the tests see it
// ---------------------------------------------------------------------------------------------------

struct KindInfo {
  GatedActivationKind kind;
  std::string name;
  std::vector<ElementKind> elements;
  Tolerance fwd;
  Tolerance bwd;
  std::string act_doc;
  std::string grad_doc;
};

inline const std::vector<KindInfo>& catalog() {
  static const std::vector<KindInfo> v = [] {
    std::vector<KindInfo> r;
#define BARACUDA_GATED_OP(Kind, name, Gate, types, act_doc, grad_doc)                                         \
  r.push_back({GatedActivationKind::Kind, #name, kinds_of_list(types{}),                                       \
               gated_test_info(GatedActivationKind::Kind).fwd, gated_test_info(GatedActivationKind::Kind).bwd, \
               act_doc, grad_doc});
#include "ops/gated_activation/gated_activation.def"
#undef BARACUDA_GATED_OP
    return r;
  }();
  return v;
}

inline const KindInfo& info_of(GatedActivationKind k) {
  for (const KindInfo& i : catalog())
    if (i.kind == k) return i;
  throw std::logic_error("kind not in the catalog");
}

// ---------------------------------------------------------------------------------------------------
// Running the plans
// ---------------------------------------------------------------------------------------------------

/// The host reference on dense row-major bytes: y, or dx.
inline std::vector<uint8_t> host_forward(const GatedActivationDescriptor& d, const std::vector<uint8_t>& x) {
  auto p = dynamic::GatedActivationPlan::select(Stream::host(), d);
  EXPECT_TRUE(p) << p.error().to_string();
  const Shape out = d.output_shape();
  std::vector<uint8_t> y(static_cast<size_t>(storage_bytes(d.element, out.numel())));
  if (!p) return y;
  const Status s = p->run(Stream::host(), {}, {ConstDynTensor::dense(x.data(), d.element, d.input_shape),
                                               DynTensor::dense(y.data(), d.element, out)});
  EXPECT_TRUE(s) << s.to_string();
  return y;
}

inline std::vector<uint8_t> host_backward(const GatedActivationDescriptor& d, const std::vector<uint8_t>& dy,
                                          const std::vector<uint8_t>& x) {
  auto p = dynamic::GatedActivationBackwardPlan::select(Stream::host(), d);
  EXPECT_TRUE(p) << p.error().to_string();
  std::vector<uint8_t> dx(x.size());
  if (!p) return dx;
  const Status s =
      p->run(Stream::host(), {}, {ConstDynTensor::dense(dy.data(), d.element, d.output_shape()),
                                  ConstDynTensor::dense(x.data(), d.element, d.input_shape),
                                  DynTensor::dense(dx.data(), d.element, d.input_shape)});
  EXPECT_TRUE(s) << s.to_string();
  return dx;
}

/// Runs a plan on `stream` over dense tensors made from row-major bytes; returns y (forward) or dx.
inline std::vector<uint8_t> device_forward(const Stream& stream, const dynamic::GatedActivationPlan& p,
                                           const std::vector<uint8_t>& x) {
  const GatedActivationDescriptor& d = p.descriptor();
  const Shape out = d.output_shape();
  auto xt = make_device_tensor(stream, d.element, d.input_shape, dense_layout(d.input_shape), x);
  auto yt = make_device_tensor(stream, d.element, out, dense_layout(out), {});
  EXPECT_TRUE(xt && yt);
  if (!xt || !yt) return {};
  const Status s = p.run(stream, {}, {xt->view, yt->view});
  EXPECT_TRUE(s) << s.to_string();
  return download(*yt);
}

inline std::vector<uint8_t> device_backward(const Stream& stream, const dynamic::GatedActivationBackwardPlan& p,
                                            const std::vector<uint8_t>& dy, const std::vector<uint8_t>& x) {
  const GatedActivationDescriptor& d = p.descriptor();
  const Shape out = d.output_shape();
  auto dyt = make_device_tensor(stream, d.element, out, dense_layout(out), dy);
  auto xt = make_device_tensor(stream, d.element, d.input_shape, dense_layout(d.input_shape), x);
  auto dxt = make_device_tensor(stream, d.element, d.input_shape, dense_layout(d.input_shape), {});
  EXPECT_TRUE(dyt && xt && dxt);
  if (!dyt || !xt || !dxt) return {};
  const Status s = p.run(stream, {}, {dyt->view, xt->view, dxt->view});
  EXPECT_TRUE(s) << s.to_string();
  return download(*dxt);
}

inline std::vector<double> values_of(ElementKind k, const std::vector<uint8_t>& bytes) {
  const int w = element_bytes(k);
  std::vector<double> v(bytes.size() / static_cast<size_t>(w));
  for (size_t i = 0; i < v.size(); ++i) v[i] = decode_value(k, &bytes[i * w]);
  return v;
}

/// Host results must equal the reference bit for bit (NaN equals NaN); other devices within `tol`.
inline ::testing::AssertionResult matches(DeviceKind d, ElementKind k, const std::vector<uint8_t>& got,
                                          const std::vector<uint8_t>& want, const Tolerance& tol) {
  if (d == DeviceKind::Host) return same_elements(k, got, want, static_cast<int64_t>(want.size()) / element_bytes(k));
  return close_elements(k, got, values_of(k, want), tol);
}

inline GatedActivationDescriptor f32_desc(Shape s = Shape{4, 6}) {
  return GatedActivationDescriptor().with_kind(GatedActivationKind::SwiGlu).with_element(ElementKind::F32).with_input_shape(s);
}

}  // namespace baracuda::test
