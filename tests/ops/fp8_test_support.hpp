// What the fp8 tests (fp8_test.cpp, fp8_plan_test.cpp, fp8_convention_test.cpp; one executable) share:
// bit helpers, [1] f32 device tensors, the amax the plan documents, computed here, and one quantize run
// with sentinel-filled outputs.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "baracuda/baracuda.hpp"
#include "support/numeric.hpp"
#include "support/expect_error.hpp"
#include "support/kind_lists.hpp"
#include "support/tensor.hpp"

namespace baracuda::test {

using K = ElementKind;
inline constexpr K kInputs[] = {K::F16, K::Bf16, K::F32, K::F64};
inline constexpr K kFp8[] = {K::Fp8E4M3, K::Fp8E5M2};

/// The (x, y) kind pairs the catalog (baracuda/ops/fp8_ops.def) gives the plan named `op`: what its sweep runs.
inline std::vector<std::pair<K, K>> catalog_pairs(std::string_view op) {
  std::vector<std::pair<K, K>> r;
#define BARACUDA_FP8_PLAN(name, Plan, table, inputs, outputs, doc) \
  if (op == #name)                                                 \
    for (K in : kinds_of_list(inputs{}))                           \
      for (K out : kinds_of_list(outputs{})) r.push_back({in, out});
#include "baracuda/ops/fp8_ops.def"
#undef BARACUDA_FP8_PLAN
  return r;
}
inline constexpr uint32_t kQuietNaN = 0x7FC00000u;

inline uint32_t bits_of(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}
inline float float_of(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
inline std::vector<uint8_t> f32_bytes(const std::vector<float>& v) {
  std::vector<uint8_t> b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}
inline std::vector<float> f32_values(const std::vector<uint8_t>& b) {
  std::vector<float> v(b.size() / 4);
  std::memcpy(v.data(), b.data(), v.size() * 4);
  return v;
}
inline bool fp8_is_nan(K k, uint8_t b) {
  return k == K::Fp8E4M3 ? (b & 0x7F) == 0x7F : (b & 0x7C) == 0x7C && (b & 0x03) != 0;
}
/// A device tensor of one f32.
inline Result<DeviceTensor> f32_scalar(const Stream& s, float v) {
  return make_device_tensor(s, K::F32, Shape{1}, dense_layout(Shape{1}), f32_bytes({v}));
}
inline float download_f32(const DeviceTensor& t) { return f32_values(download(t))[0]; }
inline std::string name_of(K k) { return std::string(to_string(k)); }

/// max |x| over the logical elements, rounded to f32 as the plan documents. A NaN element makes it the
/// quiet NaN, or with `skip_nan` (the TransformerEngine convention) is left out.
inline uint32_t expected_amax(K k, const std::vector<uint8_t>& logical, bool skip_nan = false) {
  double m = 0;
  const int eb = element_bytes(k);
  for (size_t i = 0; i < logical.size() / eb; ++i) {
    const double v = decode_value(k, &logical[i * eb]);
    if (std::isnan(v)) {
      if (skip_nan) continue;
      return kQuietNaN;
    }
    m = std::max(m, std::fabs(v));
  }
  return bits_of(static_cast<float>(m));
}

struct QuantizeOutputs {
  std::vector<uint8_t> y;  // y's whole storage
  uint32_t amax = 0;
  std::optional<uint32_t> scale_inv;  // when run with a scale_inv operand
};

/// Runs `plan` on `in_storage` (layout l.in) with a sentinel-filled y (layout l.out); with
/// `scale_inv_start`, also passes a scale_inv operand holding that value first.
inline QuantizeOutputs run_quantize(const Stream& s, const dynamic::Fp8QuantizePlan& plan, K in, K out,
                                    const LayoutCase& l, const std::vector<uint8_t>& in_storage, float scale,
                                    float amax_start = -7.0f, std::optional<float> scale_inv_start = std::nullopt) {
  auto x = make_device_tensor(s, in, l.shape, l.in, in_storage, storage_elements(l.shape, l.in));
  auto y = make_device_tensor(s, out, l.shape, l.out,
                              std::vector<uint8_t>(static_cast<size_t>(storage_elements(l.shape, l.out)), kSentinel));
  auto sc = f32_scalar(s, scale);
  auto am = f32_scalar(s, amax_start);
  auto si = f32_scalar(s, scale_inv_start.value_or(0.0f));
  EXPECT_TRUE(x && y && sc && am && si);
  if (!(x && y && sc && am && si)) return {};
  const Status st = scale_inv_start ? plan.run(s, {}, {x->view, sc->view, y->view, am->view, si->view})
                                    : plan.run(s, {}, {x->view, sc->view, y->view, am->view});
  EXPECT_TRUE(st) << st.to_string();
  QuantizeOutputs r{download(*y), bits_of(download_f32(*am)), std::nullopt};
  if (scale_inv_start) r.scale_inv = bits_of(download_f32(*si));
  return r;
}

/// An element kind by its to_string name.
inline K kind_named(const std::string& n) {
  for (K k : {K::F16, K::Bf16, K::F32, K::F64, K::Fp8E4M3, K::Fp8E5M2})
    if (n == to_string(k)) return k;
  ADD_FAILURE() << "unknown kind " << n;
  return K::F32;
}

}  // namespace baracuda::test
