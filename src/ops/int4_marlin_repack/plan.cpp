// Int4MarlinRepackPlan: select (the descriptor rules of include/baracuda/ops/int4_marlin_repack.hpp, the
// device's function), can_implement (every tensor: kind, shape, density, presence as the descriptor says, no
// overlap of an output with any other tensor), run (the one repack launch).
#include <cstdint>
#include <string>
#include <utility>

#include "baracuda/ops/int4_marlin_repack.hpp"
#include "core/data_checks.hpp"
#include "core/plan_core.hpp"
#include "core/validate.hpp"
#include "ops/int4_marlin_repack/tables.hpp"
#include "ops/int4_weights/common.hpp"

namespace baracuda {
namespace {

constexpr std::string_view P = "Int4MarlinRepackPlan";

std::string s(std::string_view v) { return std::string(v); }
std::string n2s(int64_t v) { return std::to_string(v); }

/// The catalog's scheme rule per checkpoint format: whether its checkpoints always carry zero points.
constexpr bool kAsymmetricOnly[] = {
#define BARACUDA_INT4_CHECKPOINT(name, Enum, scheme_rule, doc) std::string_view(#scheme_rule) == "AsymmetricOnly",
#include "baracuda/ops/int4_formats.def"
#undef BARACUDA_INT4_CHECKPOINT
};

/// The SKU variant (a static string): backend × format × act-order.
std::string_view variant_of(DeviceKind d, Int4CheckpointFormat f, bool act_order) {
  static constexpr std::string_view kNames[2][3] = {{"reference_gptq", "reference_gptq_act_order", "reference_awq"},
                                                    {"gather_gptq", "gather_gptq_act_order", "gather_awq"}};
  const int fmt = f == Int4CheckpointFormat::Awq ? 2 : act_order ? 1 : 0;
  return kNames[d == DeviceKind::Host ? 0 : 1][fmt];
}

/// A dense tensor of `kind` and `shape` (the kernel indexes every tensor as row-major contiguous).
Status check_dense(std::string_view name, const ConstDynTensor& t, ElementKind kind, const Shape& shape,
                   detail::Access access) {
  return detail::check_dense(P, name, t, kind, shape, access, "as checkpoints store it");
}

}  // namespace

namespace dynamic {

Result<Int4MarlinRepackPlan> Int4MarlinRepackPlan::select(const Stream& stream, const Int4RepackDescriptor& desc,
                                                          PlanPreference pref) {
  if (desc.k < 0 || desc.n < 0)
    return Error::invalid(s(P) + ": K and N must be >= 0; got K = " + n2s(desc.k) + ", N = " + n2s(desc.n));
  if (!is_int4_group(desc.group))
    return Error::invalid(s(P) + ": group must be one of " + int4::groups_text() + " (-1: per channel); got " +
                          n2s(desc.group));
  if (desc.k % 16 != 0 || (desc.group > 0 && desc.k % desc.group != 0))
    return Error::invalid(s(P) + ": K must be a multiple of 16 (Marlin's k-tiles) and of the group; got K = " +
                          n2s(desc.k) + ", group = " + n2s(desc.group));
  if (desc.n % 64 != 0)
    return Error::invalid(s(P) + ": N must be a multiple of 64 (Marlin's 64-column weight tiles); got N = " +
                          n2s(desc.n));
  if (static_cast<size_t>(desc.format) >= kNumInt4CheckpointFormats)
    return Error::invalid(s(P) + ": unknown Int4CheckpointFormat");
  if (!is_int4_scheme(desc.scheme))
    return Error::invalid(s(P) + ": unknown Int4Scheme");
  if (desc.format == Int4CheckpointFormat::Gptq && desc.scheme == Int4Scheme::Asymmetric)
    return Error::unsupported(s(P) + ": GPTQ with zero points is not repacked on the device: a stored z - 1 of 15 "
                              "means z = 16, which Marlin's 4-bit zero points cannot hold, and only the data can "
                              "rule it out; use gptq_to_marlin on the host, which checks every zero point");
  if (kAsymmetricOnly[static_cast<size_t>(desc.format)] && desc.scheme != Int4Scheme::Asymmetric)
    return Error::invalid(s(P) + ": " + s(to_string(desc.format)) +
                          " checkpoints carry zero points: the scheme must be Asymmetric");
  if (desc.format == Int4CheckpointFormat::Awq && desc.act_order)
    return Error::invalid(s(P) + ": AWQ checkpoints have no act-order");
  if (desc.scale_element != ElementKind::F16 && desc.scale_element != ElementKind::Bf16)
    return Error::unsupported(s(P) + ": the scale kind must be f16 or bf16 (the GEMM's activation kind); got " +
                              s(to_string(desc.scale_element)));
  auto dev = detail::select_device(P, stream, pref, BARACUDA_DEVICE_TABLES(int4_marlin_repack_tables));
  if (!dev) return dev.error();
  const detail::Int4RepackFn fn = dev->table->repack[detail::kind_index(desc.scale_element)];
  if (fn == nullptr)
    return Error::unsupported(s(P) + ": the " + s(to_string(stream.device())) + " device has no repack to " +
                              s(to_string(desc.scale_element)) + " scales");

  Int4MarlinRepackPlan p(desc, dev->bind(OpCategory::Quantization, "int4_marlin_repack", desc.scale_element,
                                         ElementKind::U4, MathPrecision::Exact,
                                         variant_of(stream.device(), desc.format, desc.act_order_effective())));
  p.repack_ = fn;
  return p;
}

Status Int4MarlinRepackPlan::can_implement(const Args& t) const {
  const Int4RepackDescriptor& d = desc_;
  const int64_t K = d.k, N = d.n, G = d.weight_shape().num_groups();
  const bool awq = d.format == Int4CheckpointFormat::Awq;
  const auto R = detail::Access::Read;
  const auto W = detail::Access::Write;
  BARACUDA_TRY(check_dense("qweight", t.qweight, ElementKind::S32, awq ? Shape{K, N / 8} : Shape{K / 8, N}, R));
  if (awq || t.qzeros.data != nullptr || t.qzeros.shape.rank != 0)
    BARACUDA_TRY(check_dense("qzeros", t.qzeros, ElementKind::S32, Shape{G, N / 8}, R));
  BARACUDA_TRY(check_dense("scales", t.scales, ElementKind::F16, Shape{G, N}, R));
  if (d.act_order_effective()) {
    BARACUDA_TRY(check_dense("perm", t.perm, ElementKind::S32, Shape{K}, R));
  } else {
    BARACUDA_TRY(detail::check_absent(P, "perm", t.perm,
                                      d.act_order ? "act-order with a single group is planned without it (no perm)"
                                                  : "the descriptor has no act-order"));
  }
  BARACUDA_TRY(check_dense("out_qweight", t.out_qweight, ElementKind::S32, Shape{K / 16, 2 * N}, W));
  BARACUDA_TRY(check_dense("out_scales", t.out_scales, d.scale_element, Shape{G, N}, W));
  if (awq) {
    BARACUDA_TRY(check_dense("out_zeros", t.out_zeros, ElementKind::S32, Shape{G, N / 8}, W));
  } else {
    BARACUDA_TRY(detail::check_absent(P, "out_zeros", t.out_zeros, "GPTQ is repacked symmetric (z = 8)"));
  }
  const std::pair<std::string_view, ConstDynTensor> all[] = {
      {"qweight", t.qweight},         {"qzeros", t.qzeros},         {"scales", t.scales},
      {"perm", t.perm},               {"out_qweight", t.out_qweight}, {"out_scales", t.out_scales},
      {"out_zeros", t.out_zeros}};
  constexpr size_t kFirstOutput = 4;
  for (size_t o = kFirstOutput; o < std::size(all); ++o)
    for (size_t i = 0; i < std::size(all); ++i)
      if (i != o && (i < kFirstOutput || i > o))
        BARACUDA_TRY(detail::check_no_overlap(P, all[o].first, all[o].second, all[i].first, all[i].second));
  return {};
}

Status Int4MarlinRepackPlan::run(const Stream& stream, Workspace, const Args& t) const {
  const auto ctx =
      detail::begin_run(P, binding_, stream, [&] { return can_implement(t); }, desc_.k == 0 || desc_.n == 0);
  if (!ctx) return ctx.status();
  const bool awq = desc_.format == Int4CheckpointFormat::Awq;
  detail::Int4RepackLaunch l;
  l.k = desc_.k, l.n = desc_.n, l.groups = desc_.weight_shape().num_groups();
  l.awq = awq;
  l.grouped = desc_.weight_shape().marlin_grouped();
  l.qweight = t.qweight, l.scales = t.scales, l.out_qweight = t.out_qweight, l.out_scales = t.out_scales;
  if (awq) l.qzeros = t.qzeros, l.out_zeros = t.out_zeros;
  if (desc_.act_order_effective()) {
    if (detail::data_readable(stream)) BARACUDA_TRY(detail::check_permutation(P, "perm", t.perm, desc_.k));
    l.perm = t.perm;
  }
  return repack_(*ctx, l);
}

}  // namespace dynamic

std::string_view to_string(Int4CheckpointFormat f) {
  constexpr std::string_view kNames[] = {
#define BARACUDA_INT4_CHECKPOINT(name, Enum, scheme_rule, doc) #name,
#include "baracuda/ops/int4_formats.def"
#undef BARACUDA_INT4_CHECKPOINT
  };
  return static_cast<size_t>(f) < std::size(kNames) ? kNames[static_cast<size_t>(f)] : "?";
}

}  // namespace baracuda
