// Test support for DynamicRangeQuantizePlan's convention and golden tests: running a plan on a device with
// dense outputs, its outputs as logical values (packed 4-bit q unpacked), and a comparison that reports the
// first mismatches.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "baracuda/baracuda.hpp"
#include "support/tensor.hpp"

namespace baracuda::test::dynamic_range {

using Desc = DynamicRangeQuantizeDescriptor;

/// Every mode of the catalog (baracuda/ops/dynamic_range_modes.def): what the sweeps run.
inline std::vector<DynamicRangeMode> catalog_modes() {
  std::vector<DynamicRangeMode> v;
  for (size_t m = 0; m < kNumDynamicRangeModes; ++m) v.push_back(static_cast<DynamicRangeMode>(m));
  return v;
}
/// " symmetric ", " asymmetric ": a mode in a trace.
inline std::string mode_text(DynamicRangeMode m) {
  return " " + std::string(detail::kDynamicRangeModes[static_cast<size_t>(m)].name) + " ";
}

/// What a run produced: q as integers (row-major, logical elements), the scale as doubles (exact: f32 or f64),
/// the zero point (empty when none was passed), and the plan's SKU variant and workspace size.
struct Outputs {
  std::vector<int32_t> q;
  std::vector<double> scale;
  std::vector<int32_t> zp;
  std::string variant = {};
  size_t workspace = 0;
};

/// The logical values of `n` quantized elements in `bytes` (packed: even index in the low nibble).
inline std::vector<int32_t> q_values(ElementKind k, const std::vector<uint8_t>& bytes, int64_t n) {
  std::vector<int32_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const auto at = static_cast<size_t>(i);
    switch (k) {
      case ElementKind::S8: v[at] = static_cast<int8_t>(bytes[at]); break;
      case ElementKind::U8: v[at] = bytes[at]; break;
      default: {  // s4 / u4
        const int32_t nib = (i % 2 == 0) ? (bytes[at / 2] & 0xF) : (bytes[at / 2] >> 4);
        v[at] = (k == ElementKind::S4 && nib >= 8) ? nib - 16 : nib;
      }
    }
  }
  return v;
}

/// What a run wrote, as the bytes of dense q, scale and zero point (the zero point empty when none was
/// passed), and the plan's SKU variant and workspace size.
struct RawOutputs {
  std::vector<uint8_t> q, scale, zp;
  std::string variant = {};
  size_t workspace = 0;
};

/// Runs the plan selected for `desc` on `stream` over x (its storage bytes and layout), with dense q, scale
/// and zero point (the zero point omitted when `pass_zp` is false), and the workspace the plan asks for.
inline Result<RawOutputs> run_plan_bytes(const Stream& stream, const Desc& desc, const std::vector<uint8_t>& x_storage,
                                         const Strided& x_layout, bool pass_zp = true) {
  auto plan = dynamic::DynamicRangeQuantizePlan::select(stream, desc);
  if (!plan) return plan.error();
  const Shape ps = plan->param_shape();
  auto x = make_device_tensor(stream, desc.element, desc.shape, x_layout, x_storage);
  auto q = make_device_tensor(stream, desc.quantized, desc.shape, dense_layout(desc.shape), {});
  auto s = make_device_tensor(stream, plan->scale_kind(), ps, dense_layout(ps), {});
  auto z = make_device_tensor(stream, ElementKind::S32, ps, dense_layout(ps), {});
  if (!x || !q || !s || !z) return Error::internal("allocation failed");
  auto ws = Buffer::allocate(stream, plan->workspace_size());
  if (!ws) return ws.error();
  const dynamic::DynamicRangeQuantizeArgs t{x->view, q->view, s->view, pass_zp ? z->view : DynTensor{}};
  BARACUDA_TRY(plan->run(stream, Workspace(ws->data(), plan->workspace_size()), t));
  BARACUDA_TRY(stream.synchronize());
  return RawOutputs{download(*q), download(*s), pass_zp ? download(*z) : std::vector<uint8_t>{},
                    std::string(plan->sku().variant), plan->workspace_size()};
}

/// run_plan_bytes, decoded: q as integers, the scale as doubles, the zero point as int32.
inline Result<Outputs> run_plan(const Stream& stream, const Desc& desc, const std::vector<uint8_t>& x_storage,
                                const Strided& x_layout, bool pass_zp = true) {
  auto raw = run_plan_bytes(stream, desc, x_storage, x_layout, pass_zp);
  if (!raw) return raw.error();
  const int64_t params = static_cast<int64_t>(raw->scale.size() / (desc.element == ElementKind::F64 ? 8 : 4));
  Outputs out;
  out.q = q_values(desc.quantized, raw->q, desc.shape.numel());
  for (int64_t i = 0; i < params; ++i) {
    if (desc.element == ElementKind::F64) {
      double v;
      std::memcpy(&v, raw->scale.data() + 8 * i, 8);
      out.scale.push_back(v);
    } else {
      float v;
      std::memcpy(&v, raw->scale.data() + 4 * i, 4);
      out.scale.push_back(v);
    }
    if (pass_zp) {
      int32_t z32;
      std::memcpy(&z32, raw->zp.data() + 4 * i, 4);
      out.zp.push_back(z32);
    }
  }
  out.variant = raw->variant;
  out.workspace = raw->workspace;
  return out;
}

/// Same values, scales compared as numbers with their sign (any NaN equals any NaN; +0 ≠ −0).
inline bool same_scale(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b && std::signbit(a) == std::signbit(b);
}

/// q, scale and zero point of `got` equal `want` (zero points compared when both have them); the first few
/// mismatches are reported.
inline ::testing::AssertionResult same_outputs(const Outputs& got, const std::vector<int32_t>& q,
                                               const std::vector<double>& scale, const std::vector<int32_t>& zp) {
  std::string bad;
  int shown = 0;
  auto note = [&](const std::string& what) {
    if (shown++ < 8) bad += "\n  " + what;
  };
  if (got.q.size() != q.size() || got.scale.size() != scale.size())
    return ::testing::AssertionFailure() << "sizes differ: q " << got.q.size() << " vs " << q.size() << ", scale "
                                         << got.scale.size() << " vs " << scale.size();
  for (size_t i = 0; i < q.size(); ++i)
    if (got.q[i] != q[i])
      note("q[" + std::to_string(i) + "] = " + std::to_string(got.q[i]) + ", want " + std::to_string(q[i]));
  for (size_t i = 0; i < scale.size(); ++i)
    if (!same_scale(got.scale[i], scale[i]))
      note("scale[" + std::to_string(i) + "] = " + std::to_string(got.scale[i]) + ", want " + std::to_string(scale[i]));
  if (!got.zp.empty() && !zp.empty())
    for (size_t i = 0; i < zp.size(); ++i)
      if (got.zp[i] != zp[i])
        note("zp[" + std::to_string(i) + "] = " + std::to_string(got.zp[i]) + ", want " + std::to_string(zp[i]));
  if (shown == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << shown << " mismatches:" << bad;
}

inline ::testing::AssertionResult same_outputs(const Outputs& got, const Outputs& want) {
  return same_outputs(got, want.q, want.scale, want.zp);
}

/// A problem of the path tests: its shape and granularity, and the segments the plan reduces.
struct PathCase {
  std::string name;
  Shape shape;
  QuantGranularity g;
  bool rows_are_segments;  // the segments are the rows of the (split) last dimension
  int64_t len;             // elements per segment row
  bool transposed = false;  // x read through transposed strides (a 2-D shape)
};

/// The path the plan must take on sim/cuda for x of kind `xk` (the rule of ops/dynamic_range/dispatch.hpp,
/// restated).
inline std::string expected_variant(const PathCase& c, ElementKind xk) {
  const int64_t bytes = c.len * (xk == ElementKind::F64 ? 8 : xk == ElementKind::F32 ? 4 : 2);
  if (!c.rows_are_segments) return "segment_reduce+quantize";
  if (c.len <= 1024 && bytes <= 4096) return "fused_rows_warp";
  if (bytes <= 48 * 1024 - 256) return "fused_rows_block";
  return "segment_reduce+quantize";
}

}  // namespace baracuda::test::dynamic_range
