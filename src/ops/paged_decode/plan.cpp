// PagedDecodePlan: select (the descriptor rules of include/baracuda/ops/paged_attention.hpp, the device's function,
// the number of splits), can_implement (the operands against the descriptor: kinds, shapes, strides, the optional
// operands, aliasing), workspace_size and run (the split partials in the workspace, one call of the backend with the
// launch record of src/ops/paged_decode/tables.hpp). context_lens and block tables are never read here: they are
// data in device memory.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "baracuda/ops/paged_attention.hpp"
#include "core/plan_core.hpp"
#include "core/validate.hpp"
#include "ops/paged_decode/paged_checks.hpp"
#include "ops/paged_decode/tables.hpp"

namespace baracuda {
namespace {

constexpr std::string_view P = "PagedDecodePlan";
using detail::paged::kMaxGrid;
using detail::paged::kMaxKeys;
constexpr int64_t kMaxQLen = 16;                // query tokens per sequence
constexpr int64_t kMaxSplits = 256;             // a forced num_splits
constexpr int64_t kRowsPerBlock = 8;            // kernels.cuh's kRows
constexpr int64_t kSms = 132;                   // an H100's SMs (paged_attention.hpp)
constexpr int64_t kMinKeysPerSplit = 64;        // the chosen splits' smallest chunk: one key tile of the kernel
constexpr int64_t kMaxChosenSplits = 64;
constexpr size_t kWorkspaceAlign = 256;

std::string s(std::string_view v) { return std::string(v); }
std::string n2s(int64_t v) { return std::to_string(v); }
Error invalid(const std::string& why) { return Error::invalid(s(P) + ": " + why); }
Error unsupported(const std::string& why) { return Error::unsupported(s(P) + ": " + why); }

/// Whether the plan runs the tensor-core kernel (paged_attention.hpp's **Kernels**): as asked, or for Auto over an
/// f16/bf16 cache at d = 128 with at least 16 sequences, where the H200 measurements of docs/perf/2026-11-28-h200 had
/// it take 8–39 % less time (all but one shape); with fewer sequences, or an FP8/int8 cache, the CUDA-core kernel was
/// as fast or faster (up to 2×).
bool tensor_cores(const PagedDecodeDescriptor& d) {
  if (d.kernel != PagedDecodeKernel::Auto) return d.kernel == PagedDecodeKernel::TensorCores;
  return d.head_dim == 128 && d.cache_kind == d.element && d.batch >= 16;
}

/// Query rows per block: the CUDA-core kernel's 8, the tensor-core kernel's 16.
int64_t rows_per_block(const PagedDecodeDescriptor& d) { return tensor_cores(d) ? detail::kPagedTcRows : kRowsPerBlock; }

int64_t row_groups(const PagedDecodeDescriptor& d) {
  return ((d.heads / d.kv_heads) * d.q_len + rows_per_block(d) - 1) / rows_per_block(d);
}

Status check_descriptor(const PagedDecodeDescriptor& d) {
  BARACUDA_TRY(detail::paged::check_descriptor(P, d));
  if (d.q_len < 1) return invalid("q_len must be >= 1; got " + n2s(d.q_len));
  if (d.q_len > kMaxQLen) return unsupported("at most 16 query tokens per sequence; got " + n2s(d.q_len));
  if (d.kv_heads * row_groups(d) > kMaxGrid)
    return unsupported("kv_heads * ceil(heads / kv_heads * q_len / " + n2s(rows_per_block(d)) +
                       ") must be at most 65535");
  if (d.kernel != PagedDecodeKernel::Auto && d.kernel != PagedDecodeKernel::CudaCores && !tensor_cores(d))
    return invalid("kernel must be Auto, CudaCores or TensorCores; got " + n2s(static_cast<int64_t>(d.kernel)));
  if (d.num_splits < 0 || d.num_splits > kMaxSplits)
    return invalid("num_splits must be in [0, 256] (0: the plan chooses); got " + n2s(d.num_splits));
  BARACUDA_TRY(detail::check_shape(P, "q's shape", d.q_shape()));
  return detail::check_shape(P, "the caches' shape", d.cache_shape());
}

/// paged_attention.hpp's rule: as many splits as one wave of resident blocks holds, each split at least 64 keys of
/// the longest context.
int64_t choose_splits(const PagedDecodeDescriptor& d) {
  if (d.num_splits > 0) return d.num_splits;
  const int64_t blocks = std::max<int64_t>(d.batch * d.kv_heads * row_groups(d), 1);
  const int64_t resident =
      kSms * (tensor_cores(d) ? detail::paged_tc_blocks_per_sm(d.head_dim)
                              : detail::paged_split_blocks_per_sm(d.head_dim, element_bits(d.cache_kind) / 8, true));
  const int64_t by_len = (d.max_blocks_per_seq * d.block_size + kMinKeysPerSplit - 1) / kMinKeysPerSplit;
  return std::clamp<int64_t>(resident / blocks, 1, std::max<int64_t>(1, std::min(by_len, kMaxChosenSplits)));
}

/// The workspace's two parts: o_part's bytes (rounded up to the alignment) and lse_part's.
std::pair<size_t, size_t> workspace_parts(const PagedDecodeDescriptor& d, int64_t splits) {
  if (splits <= 1) return {0, 0};
  const auto rows = static_cast<size_t>(splits * d.tokens() * d.heads);
  const size_t o_bytes =
      (rows * static_cast<size_t>(d.head_dim) * 4 + kWorkspaceAlign - 1) / kWorkspaceAlign * kWorkspaceAlign;
  return {o_bytes, rows * 4};
}

Status check_operand(std::string_view name, const ConstDynTensor& t, ElementKind kind, const Shape& shape,
                     detail::Access access, bool unit_last) {
  return detail::attention_plan::check_operand(P, name, t, kind, shape, access, unit_last);
}
Status check_distinct(std::string_view name, const ConstDynTensor& t) {
  return detail::attention_plan::check_no_self_overlap(P, name, t);
}

/// A stride the kernels use: the view's, or 0 where the dimension has one element.
int64_t used(const ConstDynTensor& t, int i) { return t.shape.dims[i] > 1 ? t.stride[i] : 0; }

const detail::PagedDecodeTables* tables_for(DeviceKind dev) {
  return detail::table_for_device(dev, reference::paged_decode_tables(), device_sim::paged_decode_tables(),
                                  BARACUDA_CUDA_TABLE(paged_decode_tables));
}
/// The tensor-core kernel's tables; the host device has its one reference.
const detail::PagedDecodeTables* tc_tables_for(DeviceKind dev) {
  return detail::table_for_device(dev, reference::paged_decode_tables(), device_sim::paged_decode_tc_tables(),
                                  BARACUDA_CUDA_TABLE(paged_decode_tc_tables));
}

}  // namespace

namespace dynamic {

Result<PagedDecodePlan> PagedDecodePlan::select(const Stream& stream, const PagedDecodeDescriptor& desc,
                                                PlanPreference pref) {
  BARACUDA_TRY(check_descriptor(desc));
  auto dev = detail::select_device(P, stream, pref, tensor_cores(desc) ? tc_tables_for : tables_for);
  if (!dev) return dev.error();
  const detail::PagedDecodeFn fn =
      dev->table->fwd[detail::kind_index(desc.element)][detail::kind_index(desc.cache_kind)]
                     [detail::paged_head_dim_slot(desc.head_dim)];
  if (fn == nullptr)
    return unsupported(s(to_string(desc.element)) + " over a " + s(to_string(desc.cache_kind)) +
                       " cache with head dimension " + n2s(desc.head_dim) + " has no " +
                       (tensor_cores(desc) ? "tensor-core " : "") + "kernel on the " + s(to_string(stream.device())) +
                       " device");
  const bool host = stream.device() == DeviceKind::Host;
  return PagedDecodePlan(desc,
                         dev->bind(OpCategory::Attention, "paged_decode", desc.element, desc.cache_kind,
                                   host ? MathPrecision::F64 : MathPrecision::F32, dev->table->variant),
                         fn, host ? 1 : choose_splits(desc));
}

size_t PagedDecodePlan::workspace_size() const {
  const auto [o_bytes, lse_bytes] = workspace_parts(desc_, splits_);
  return o_bytes + lse_bytes;
}

Status PagedDecodePlan::can_implement(const Args& t) const {
  const PagedDecodeDescriptor& d = desc_;
  using detail::Access;
  BARACUDA_TRY(check_operand("q", t.q, d.element, d.q_shape(), Access::Read, true));
  BARACUDA_TRY(detail::paged::check_cache_operands(P, d, t));
  BARACUDA_TRY(check_operand("o", t.o, d.element, d.q_shape(), Access::Write, true));
  BARACUDA_TRY(check_distinct("o", t.o));
  if (d.return_lse) {
    BARACUDA_TRY(check_operand("lse", t.lse, ElementKind::F32, Shape{d.tokens(), d.heads}, Access::Write, false));
    BARACUDA_TRY(check_distinct("lse", t.lse));
  } else {
    BARACUDA_TRY(detail::check_absent(P, "lse", t.lse, "the descriptor writes no lse (with_lse())"));
  }
  const std::pair<std::string_view, ConstDynTensor> ins[] = {{"q", t.q},
                                                             {"key_cache", t.key_cache},
                                                             {"value_cache", t.value_cache},
                                                             {"block_tables", t.block_tables},
                                                             {"context_lens", t.context_lens},
                                                             {"k_scale", t.k_scale},
                                                             {"v_scale", t.v_scale}};
  for (const auto& [out_name, out] : {std::pair<std::string_view, const DynTensor*>{"o", &t.o}, {"lse", &t.lse}})
    for (const auto& [in_name, in] : ins) BARACUDA_TRY(detail::check_no_overlap(P, out_name, *out, in_name, in));
  return detail::check_no_overlap(P, "lse", t.lse, "o", t.o);
}

Status PagedDecodePlan::run(const Stream& stream, Workspace workspace, const Args& t) const {
  const PagedDecodeDescriptor& d = desc_;
  const auto [o_bytes, lse_bytes] = workspace_parts(d, splits_);
  const detail::RunStart start = detail::begin_run(
      P, binding_, stream, [&] { return can_implement(t); },
      detail::WorkspaceNeed{workspace,
                            o_bytes + lse_bytes,
                            kWorkspaceAlign,
                            "the split partials: workspace_size()",
                            {{"q", t.q},
                             {"key_cache", t.key_cache},
                             {"value_cache", t.value_cache},
                             {"block_tables", t.block_tables},
                             {"context_lens", t.context_lens},
                             {"k_scale", t.k_scale},
                             {"v_scale", t.v_scale},
                             {"o", t.o},
                             {"lse", t.lse}}},
      d.batch == 0);
  if (!start) return start.status();
  detail::PagedDecodeLaunch l;
  l.element = d.element, l.cache_kind = d.cache_kind;
  l.batch = static_cast<int>(d.batch), l.q_len = static_cast<int>(d.q_len);
  l.heads = static_cast<int>(d.heads), l.kv_heads = static_cast<int>(d.kv_heads);
  l.head_dim = static_cast<int>(d.head_dim);
  l.num_blocks = d.num_blocks, l.block_size = static_cast<int>(d.block_size);
  l.max_blocks = static_cast<int>(d.max_blocks_per_seq);
  l.window_left = static_cast<int>(std::min(d.window_left, kMaxKeys));
  l.splits = static_cast<int>(splits_);
  l.scale = d.softmax_scale == 0 ? static_cast<float>(1.0 / std::sqrt(static_cast<double>(d.head_dim)))
                                 : static_cast<float>(d.softmax_scale);
  l.q = t.q.data, l.q_tok = used(t.q, 0), l.q_head = used(t.q, 1);
  l.k = t.key_cache.data, l.k_block = used(t.key_cache, 0), l.k_offset = used(t.key_cache, 1);
  l.k_head = used(t.key_cache, 2);
  l.v = t.value_cache.data, l.v_block = used(t.value_cache, 0), l.v_offset = used(t.value_cache, 1);
  l.v_head = used(t.value_cache, 2);
  l.block_tables = static_cast<const int32_t*>(t.block_tables.data);
  l.bt_seq = used(t.block_tables, 0), l.bt_page = used(t.block_tables, 1);
  l.context_lens = static_cast<const int32_t*>(t.context_lens.data), l.cl_stride = used(t.context_lens, 0);
  if (d.quantized()) {
    l.k_scale = static_cast<const float*>(t.k_scale.data), l.v_scale = static_cast<const float*>(t.v_scale.data);
    if (d.scale_layout == KvScaleLayout::PerHead)
      l.k_scale_stride = used(t.k_scale, 0), l.v_scale_stride = used(t.v_scale, 0);
  }
  l.o = t.o.data, l.o_tok = used(t.o, 0), l.o_head = used(t.o, 1);
  if (d.return_lse) l.lse = static_cast<float*>(t.lse.data), l.lse_tok = used(t.lse, 0), l.lse_head = used(t.lse, 1);
  if (splits_ > 1) {
    l.o_part = static_cast<float*>(workspace.data);
    l.lse_part = reinterpret_cast<float*>(static_cast<unsigned char*>(workspace.data) + o_bytes);
  }
  return fn_(*start, l);
}

}  // namespace dynamic
}  // namespace baracuda
