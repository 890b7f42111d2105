// What the paged attention scenarios (paged_decode.cpp, paged_prefill.cpp) bind when a case is prepared: the block
// tables, the context lengths, the query offsets (the prefill's cu_seqlens_q) and a quantized cache's per-tensor
// scales (k 0.5, v 0.25), uploaded once: valid metadata, not operands the profiler fills with random values (its page
// ids would mostly be masked).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "../scenario.hpp"

namespace baracuda::profiler {

struct PagedMetadata {
  std::shared_ptr<Buffer> tables, lens, offsets, scales;  ///< the device copies the views point into
  ConstDynTensor table;                                   ///< s32 [B, width]
  ConstDynTensor context_lens;                            ///< s32 [B]
  ConstDynTensor cu_seqlens;                              ///< s32 [B + 1]; empty when no offsets were given
  ConstDynTensor k_scale, v_scale;                        ///< f32 [1] each; empty for an unquantized cache
};

/// Uploads `table` (B·width page ids, row-major; at least one element, so that an empty batch still binds a buffer),
/// B context lengths of `context` each, `offsets` if not empty (B + 1 values), and the scales when `quantized`.
inline Result<PagedMetadata> upload_paged_metadata(const Stream& s, int64_t batch, int64_t width,
                                                   const std::vector<int32_t>& table, int32_t context,
                                                   const std::vector<int32_t>& offsets, bool quantized) {
  const auto upload = [&s]<class T>(const std::vector<T>& values) -> Result<std::shared_ptr<Buffer>> {
    auto buf = Buffer::from_host(s, std::span<const T>(values));
    if (!buf) return buf.error();
    return std::make_shared<Buffer>(std::move(buf).value());
  };
  PagedMetadata m;
  auto tb = upload(table);
  if (!tb) return tb.error();
  auto lb = upload(std::vector<int32_t>(static_cast<size_t>(std::max<int64_t>(batch, 1)), context));
  if (!lb) return lb.error();
  auto sb = upload(std::vector<float>{0.5f, 0.25f});
  if (!sb) return sb.error();
  m.tables = std::move(tb).value(), m.lens = std::move(lb).value(), m.scales = std::move(sb).value();
  m.table = ConstDynTensor::dense(m.tables->data(), ElementKind::S32, Shape{batch, width});
  m.context_lens = ConstDynTensor::dense(m.lens->data(), ElementKind::S32, Shape{batch});
  if (!offsets.empty()) {
    auto ob = upload(offsets);
    if (!ob) return ob.error();
    m.offsets = std::move(ob).value();
    m.cu_seqlens = ConstDynTensor::dense(m.offsets->data(), ElementKind::S32, Shape{batch + 1});
  }
  if (quantized) {
    const auto* sc = static_cast<const float*>(m.scales->data());
    m.k_scale = ConstDynTensor::dense(sc, ElementKind::F32, Shape{1});
    m.v_scale = ConstDynTensor::dense(sc + 1, ElementKind::F32, Shape{1});
  }
  return m;
}

}  // namespace baracuda::profiler
