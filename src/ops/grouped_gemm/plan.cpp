// GroupedGemmPlan: select (the descriptor rules of include/baracuda/ops/grouped_gemm.hpp, the device's
// function), can_implement (the operands against the descriptor: kinds, shapes, strides, the optional bias,
// aliasing), run (one call of the backend with the launch record of src/ops/grouped_gemm/tables.hpp). The
// offsets' values are never read here: they are data in device memory.
#include <cstdint>
#include <string>

#include "baracuda/ops/grouped_gemm.hpp"
#include "core/plan_core.hpp"
#include "core/validate.hpp"
#include "ops/grouped_gemm/tables.hpp"

namespace baracuda {
namespace {

constexpr std::string_view P = "GroupedGemmPlan";
constexpr int64_t kMaxExtent = (int64_t{1} << 31) - 256;  // 32-bit row, column and k indices past the edge tiles
constexpr int64_t kMaxN = int64_t{65535} * 64;            // the grid's N tiles, on the narrowest tile

std::string s(std::string_view v) { return std::string(v); }
std::string n2s(int64_t v) { return std::to_string(v); }

/// a·b ≤ kMaxElements, without overflow.
bool fits(int64_t a, int64_t b) { return a == 0 || b <= kMaxElements / a; }

Status check_descriptor(const GroupedGemmDescriptor& g) {
  BARACUDA_TRY(detail::check_kinds(P, {g.input, g.output, g.offsets}));
  const bool in16 = g.input == ElementKind::F16 || g.input == ElementKind::Bf16;
  const bool ok = in16 ? (g.output == g.input || g.output == ElementKind::F32)
                       : (g.input == ElementKind::F32 && g.output == ElementKind::F32);
  if (!ok) return detail::unsupported_pair(P, g.input, g.output, "f16 -> f16 | f32, bf16 -> bf16 | f32, f32 -> f32");
  if (g.offsets != ElementKind::S32 && g.offsets != ElementKind::S64)
    return Error::unsupported(s(P) + ": the offsets must be s32 or s64; got " + s(to_string(g.offsets)));
  if (g.groups < 1) return Error::invalid(s(P) + ": the group count E must be >= 1; got " + n2s(g.groups));
  if (g.groups > kGroupedGemmMaxGroups)
    return Error::unsupported(s(P) + ": at most " + n2s(kGroupedGemmMaxGroups) + " groups; got " + n2s(g.groups));
  if (g.total_m < 0 || g.n < 0 || g.k < 0)
    return Error::invalid(s(P) + ": total_M, N and K must be >= 0; got total_M = " + n2s(g.total_m) +
                          ", N = " + n2s(g.n) + ", K = " + n2s(g.k));
  if (g.total_m > kMaxExtent || g.n > kMaxExtent || g.k > kMaxExtent)
    return Error::invalid(s(P) + ": total_M, N and K must each be below 2^31 - 256");
  if (g.n > kMaxN) return Error::invalid(s(P) + ": N must be at most 65535 * 64; got " + n2s(g.n));
  if (!fits(g.total_m, g.k) || !fits(g.total_m, g.n) || !fits(g.groups, g.n) || !fits(g.groups * g.n, g.k))
    return Error::invalid(s(P) + ": x, w and y must each have at most 2^56 elements");
  return {};
}

const detail::GroupedGemmTables* tables_for(DeviceKind d) {
  return detail::table_for_device(d, reference::grouped_gemm_tables(), device_sim::grouped_gemm_tables(),
                                  BARACUDA_CUDA_TABLE(grouped_gemm_tables));
}

std::string strides_text(const ConstDynTensor& t) {
  std::string r = "(";
  for (int d = 0; d < t.rank(); ++d) r += (d ? ", " : "") + n2s(t.stride[d]);
  return r + ")";
}

/// check_tensor, then (when non-empty) unit stride along the last dimension and non-negative strides elsewhere,
/// strides of extent-1 dimensions excepted.
Status check_operand(std::string_view name, const ConstDynTensor& t, ElementKind kind, const Shape& shape,
                     detail::Access access, std::string_view last) {
  BARACUDA_TRY(detail::check_tensor(P, name, t, kind, shape, access));
  if (shape.numel() == 0) return {};  // an empty view addresses nothing: any strides
  const int r = shape.rank;
  if (shape.dims[r - 1] > 1 && t.stride[r - 1] != 1)
    return Error::invalid(s(P) + ": " + s(name) + " must have unit stride along " + s(last) + "; its strides are " +
                          strides_text(t));
  for (int d = 0; d < r - 1; ++d)
    if (shape.dims[d] > 1 && t.stride[d] < 0)
      return Error::invalid(s(P) + ": " + s(name) + "'s strides " + strides_text(t) + " must be non-negative");
  return {};
}

/// A stride the kernels use: the view's, or 0 where the dimension has one element (never stepped over).
int64_t used_stride(const ConstDynTensor& t, int d) { return t.shape.dims[d] > 1 ? t.stride[d] : 0; }

detail::GroupedGemmLaunch launch_for(const GroupedGemmDescriptor& g, const dynamic::GroupedGemmArgs& t) {
  detail::GroupedGemmLaunch l;
  l.groups = g.groups, l.total_m = g.total_m, l.n = g.n, l.k = g.k;
  l.xw = g.input, l.y_kind = g.output, l.offsets64 = g.offsets == ElementKind::S64;
  l.x = t.x.data, l.x_row = used_stride(t.x, 0);
  l.w = t.w.data, l.w_group = used_stride(t.w, 0), l.w_row = used_stride(t.w, 1);
  l.offsets = t.offsets.data;
  if (g.has_bias) l.bias = t.bias.data, l.bias_group = used_stride(t.bias, 0);
  l.y = t.y.data, l.y_row = used_stride(t.y, 0);
  return l;
}

}  // namespace

namespace dynamic {

Result<GroupedGemmPlan> GroupedGemmPlan::select(const Stream& stream, const GroupedGemmDescriptor& desc,
                                                PlanPreference pref) {
  BARACUDA_TRY(check_descriptor(desc));
  auto dev = detail::select_device(P, stream, pref, tables_for);
  if (!dev) return dev.error();
  const auto in = detail::kind_index(desc.input), out = detail::kind_index(desc.output);
  const detail::GroupedGemmFn fn = dev->table->gemm[in][out];
  if (fn == nullptr)
    return Error::unsupported(s(P) + ": " + s(to_string(desc.input)) + " -> " + s(to_string(desc.output)) +
                              " has no kernel on the " + s(to_string(stream.device())) + " device");
  const MathPrecision precision = stream.device() == DeviceKind::Host ? MathPrecision::F64 : MathPrecision::F32;
  return GroupedGemmPlan(
      desc,
      dev->bind(OpCategory::Gemm, "grouped_gemm", desc.input, desc.output, precision, dev->table->variant[in][out],
                LayoutKind::Rcr, desc.has_bias ? EpilogueKind::Bias : EpilogueKind::Identity),
      fn);
}

Status GroupedGemmPlan::can_implement(const Args& t) const {
  const GroupedGemmDescriptor& g = desc_;
  using detail::Access;
  BARACUDA_TRY(check_operand("x", t.x, g.input, Shape{g.total_m, g.k}, Access::Read, "K"));
  BARACUDA_TRY(check_operand("w", t.w, g.input, Shape{g.groups, g.n, g.k}, Access::Read, "K"));
  BARACUDA_TRY(detail::check_tensor(P, "offsets", t.offsets, g.offsets, Shape{g.groups + 1}, Access::Read));
  if (t.offsets.stride[0] != 1)
    return Error::invalid(s(P) + ": offsets must be contiguous (stride 1); its stride is " + n2s(t.offsets.stride[0]));
  if (g.has_bias)
    BARACUDA_TRY(check_operand("bias", t.bias, g.output, Shape{g.groups, g.n}, Access::Read, "N"));
  else
    BARACUDA_TRY(detail::check_absent(P, "bias", t.bias, "the descriptor has no bias (with_bias())"));
  BARACUDA_TRY(check_operand("y", t.y, g.output, Shape{g.total_m, g.n}, Access::Write, "N"));
  if (g.total_m > 1 && g.n > 0 && t.y.stride[0] < g.n)
    return Error::invalid(s(P) + ": y's row stride " + n2s(t.y.stride[0]) + " is below N = " + n2s(g.n) +
                          " (its rows would overlap)");
  BARACUDA_TRY(detail::check_no_overlap(P, "y", t.y, "x", t.x));
  BARACUDA_TRY(detail::check_no_overlap(P, "y", t.y, "w", t.w));
  BARACUDA_TRY(detail::check_no_overlap(P, "y", t.y, "offsets", t.offsets));
  BARACUDA_TRY(detail::check_no_overlap(P, "y", t.y, "bias", t.bias));
  return {};
}

Status GroupedGemmPlan::run(const Stream& stream, Workspace, const Args& t) const {
  const GroupedGemmDescriptor& g = desc_;
  return detail::run_entry(
      P, binding_, stream, [&] { return can_implement(t); }, g.total_m == 0 || g.n == 0, fn_,
      [&] { return launch_for(g, t); });
}

}  // namespace dynamic
}  // namespace baracuda
