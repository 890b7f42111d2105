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
#include "ops/paged_decode/tables.hpp"

namespace baracuda {
namespace {

constexpr std::string_view P = "PagedDecodePlan";
constexpr int64_t kMaxGrid = 65535;             // the grid's y and z
constexpr int64_t kMaxKeys = int64_t{1} << 30;  // max_blocks_per_seq·block_size: 32-bit key positions with room
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

int64_t row_groups(const PagedDecodeDescriptor& d) {
  return ((d.heads / d.kv_heads) * d.q_len + kRowsPerBlock - 1) / kRowsPerBlock;
}

Status check_descriptor(const PagedDecodeDescriptor& d) {
  BARACUDA_TRY(detail::check_kinds(P, {d.element, d.cache_kind}));
  if (static_cast<uint8_t>(d.scale_layout) > static_cast<uint8_t>(KvScaleLayout::PerHead))
    return invalid("invalid KvScaleLayout");
  if (d.element != ElementKind::F16 && d.element != ElementKind::Bf16)
    return unsupported("q and o must be f16 or bf16; got " + s(to_string(d.element)));
  if (d.cache_kind != d.element && d.cache_kind != ElementKind::Fp8E4M3 && d.cache_kind != ElementKind::S8)
    return unsupported("the caches must hold q's kind " + s(to_string(d.element)) + ", fp8e4m3 or s8; got " +
                       s(to_string(d.cache_kind)));
  if (d.head_dim < 1) return invalid("the head dimension must be >= 1; got " + n2s(d.head_dim));
  if (detail::paged_head_dim_slot(d.head_dim) < 0)
    return unsupported("head dimension " + n2s(d.head_dim) + " has no kernel (64, 96, 128 and 256 do)");
  if (d.heads < 1 || d.kv_heads < 1)
    return invalid("heads and kv_heads must be >= 1; got " + n2s(d.heads) + " and " + n2s(d.kv_heads));
  if (d.heads > kMaxGrid) return unsupported("at most 65535 heads; got " + n2s(d.heads));
  if (d.heads % d.kv_heads != 0)
    return invalid("the kv heads (" + n2s(d.kv_heads) + ") must divide the query heads (" + n2s(d.heads) + ")");
  if (d.batch < 0) return invalid("the batch must be >= 0; got " + n2s(d.batch));
  if (d.batch > kMaxGrid) return unsupported("at most 65535 sequences; got " + n2s(d.batch));
  if (d.q_len < 1) return invalid("q_len must be >= 1; got " + n2s(d.q_len));
  if (d.q_len > kMaxQLen) return unsupported("at most 16 query tokens per sequence; got " + n2s(d.q_len));
  if (d.kv_heads * row_groups(d) > kMaxGrid)
    return unsupported("kv_heads * ceil(heads / kv_heads * q_len / 8) must be at most 65535");
  if (d.block_size < 1) return invalid("block_size must be >= 1; got " + n2s(d.block_size));
  if (d.block_size != 8 && d.block_size != 16 && d.block_size != 32)
    return unsupported("block_size " + n2s(d.block_size) + " has no kernel (8, 16 and 32 do)");
  if (d.num_blocks < 1 || d.num_blocks > INT32_MAX)
    return invalid("num_blocks must be in [1, 2^31) (s32 page ids); got " + n2s(d.num_blocks));
  if (d.max_blocks_per_seq < 1 || d.max_blocks_per_seq > kMaxKeys / d.block_size)
    return invalid("max_blocks_per_seq must be >= 1 with max_blocks_per_seq * block_size below 2^30; got " +
                   n2s(d.max_blocks_per_seq));
  if (d.window_left < -1) return invalid("window_left must be >= -1 (-1: unbounded); got " + n2s(d.window_left));
  const float tau = static_cast<float>(d.softmax_scale);
  if (!(d.softmax_scale >= 0) || !std::isfinite(tau) || (d.softmax_scale > 0 && !(tau > 0)))
    return invalid("the softmax scale must be finite and > 0 in f32 (or 0 for 1/sqrt(d)); got " +
                   std::to_string(d.softmax_scale));
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
      kSms * detail::paged_split_blocks_per_sm(d.head_dim, element_bits(d.cache_kind) / 8, /*vec=*/true);
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

std::string strides_text(const ConstDynTensor& t) {
  std::string r = "(";
  for (int i = 0; i < t.rank(); ++i) r += (i ? ", " : "") + n2s(t.stride[i]);
  return r + ")";
}

/// check_tensor, then unit stride along the last dimension when `unit_last`, and non-negative strides when
/// `non_negative` (extent-1 dimensions excepted).
Status check_operand(std::string_view name, const ConstDynTensor& t, ElementKind kind, const Shape& shape,
                     detail::Access access, bool unit_last, bool non_negative) {
  BARACUDA_TRY(detail::check_tensor(P, name, t, kind, shape, access));
  if (shape.numel() == 0) return {};
  const int r = shape.rank;
  if (unit_last && shape.dims[r - 1] > 1 && t.stride[r - 1] != 1)
    return invalid(s(name) + " must have unit stride along d; its strides are " + strides_text(t));
  if (non_negative)
    for (int i = 0; i < r; ++i)
      if (shape.dims[i] > 1 && t.stride[i] < 0)
        return invalid(s(name) + "'s strides " + strides_text(t) + " must be non-negative");
  return {};
}

/// An output's elements are distinct: sorted by stride, each stride at least the span of the dimensions inside it.
Status check_distinct(std::string_view name, const ConstDynTensor& t) {
  if (t.numel() == 0) return {};
  std::vector<std::pair<int64_t, int64_t>> dims;
  for (int i = 0; i < t.rank(); ++i)
    if (t.shape.dims[i] > 1) dims.emplace_back(t.stride[i], t.shape.dims[i]);
  std::sort(dims.begin(), dims.end());
  int64_t span = 1;
  for (const auto& [stride, extent] : dims) {
    if (stride < span) return invalid(s(name) + "'s elements overlap (strides " + strides_text(t) + ")");
    span = stride * (extent - 1) + span;
  }
  return {};
}

/// A stride the kernels use: the view's, or 0 where the dimension has one element.
int64_t used(const ConstDynTensor& t, int i) { return t.shape.dims[i] > 1 ? t.stride[i] : 0; }

const detail::PagedDecodeTables* tables_for(DeviceKind dev) {
  return detail::table_for_device(dev, reference::paged_decode_tables(), device_sim::paged_decode_tables(),
                                  BARACUDA_CUDA_TABLE(paged_decode_tables));
}

}  // namespace

namespace dynamic {

Result<PagedDecodePlan> PagedDecodePlan::select(const Stream& stream, const PagedDecodeDescriptor& desc,
                                                PlanPreference pref) {
  BARACUDA_TRY(check_descriptor(desc));
  auto dev = detail::select_device(P, stream, pref, tables_for);
  if (!dev) return dev.error();
  const detail::PagedDecodeFn fn =
      dev->table->fwd[detail::kind_index(desc.element)][detail::kind_index(desc.cache_kind)]
                     [detail::paged_head_dim_slot(desc.head_dim)];
  if (fn == nullptr)
    return unsupported(s(to_string(desc.element)) + " over a " + s(to_string(desc.cache_kind)) +
                       " cache with head dimension " + n2s(desc.head_dim) + " has no kernel on the " +
                       s(to_string(stream.device())) + " device");
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
  BARACUDA_TRY(check_operand("q", t.q, d.element, d.q_shape(), Access::Read, true, true));
  BARACUDA_TRY(check_operand("key_cache", t.key_cache, d.cache_kind, d.cache_shape(), Access::Read, true, false));
  BARACUDA_TRY(check_operand("value_cache", t.value_cache, d.cache_kind, d.cache_shape(), Access::Read, true, false));
  BARACUDA_TRY(detail::check_tensor(P, "block_tables", t.block_tables, ElementKind::S32,
                                    Shape{d.batch, d.max_blocks_per_seq}, Access::Read));
  BARACUDA_TRY(detail::check_tensor(P, "context_lens", t.context_lens, ElementKind::S32, Shape{d.batch}, Access::Read));
  for (const auto& [name, sc] :
       {std::pair<const char*, ConstDynTensor>{"k_scale", t.k_scale}, {"v_scale", t.v_scale}}) {
    if (d.quantized())
      BARACUDA_TRY(detail::check_tensor(P, name, sc, ElementKind::F32, d.scale_shape(), Access::Read));
    else
      BARACUDA_TRY(detail::check_absent(P, name, sc, "the caches hold q's kind (no dequantization)"));
  }
  BARACUDA_TRY(check_operand("o", t.o, d.element, d.q_shape(), Access::Write, true, true));
  BARACUDA_TRY(check_distinct("o", t.o));
  if (d.return_lse) {
    BARACUDA_TRY(check_operand("lse", t.lse, ElementKind::F32, Shape{d.tokens(), d.heads}, Access::Write, false, true));
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
