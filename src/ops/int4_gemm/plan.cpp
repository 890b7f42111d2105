// Int4MarlinGemmPlan: select (the descriptor rules of include/baracuda/ops/int4_gemm.hpp, the device's
// functions), can_implement (every tensor: kind, shape, strides, the 16-byte rules, presence as the
// descriptor says, no overlap of c with an input), run (act-order: the column gather into the workspace;
// then the GEMM).
#include <cstdint>
#include <string>
#include <utility>

#include "baracuda/ops/int4_gemm.hpp"
#include "core/data_checks.hpp"
#include "core/plan_core.hpp"
#include "core/validate.hpp"
#include "ops/int4_gemm/tables.hpp"
#include "ops/int4_weights/common.hpp"

namespace baracuda {
namespace {

constexpr std::string_view P = "Int4MarlinGemmPlan";
constexpr uintptr_t kPtrAlign = 16;  // the kernel's 16-byte loads and stores
constexpr int64_t kRowAlign = 8;     // a and c row strides: multiples of 8 f16/bf16 elements (16 bytes)
constexpr int64_t kNAlign = 64;      // Marlin's 64-column weight tiles
constexpr int64_t kKAlign = 128;     // the kernel's K block

std::string s(std::string_view v) { return std::string(v); }
std::string n2s(int64_t v) { return std::to_string(v); }

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % kPtrAlign == 0; }

/// The SKU variant (a static string): backend × scheme × act-order.
std::string_view variant_of(DeviceKind d, Int4Scheme scheme, bool act_order) {
  static constexpr std::string_view kNames[2][2][2] = {
      {{"reference_sym", "reference_sym_act_order"}, {"reference_asym", "reference_asym_act_order"}},
      {{"marlin_m16n8k16_sym", "marlin_m16n8k16_sym_act_order"},
       {"marlin_m16n8k16_asym", "marlin_m16n8k16_asym_act_order"}}};
  return kNames[d == DeviceKind::Host ? 0 : 1][scheme == Int4Scheme::Asymmetric ? 1 : 0][act_order ? 1 : 0];
}


/// An `[rows, cols]` activation-kind matrix read or written in 16-byte chunks (a, c): kind and shape, unit
/// innermost stride, row stride ≥ cols and a multiple of 8 elements, 16-byte aligned base.
Status check_row_operand(std::string_view name, const ConstDynTensor& t, ElementKind kind, int64_t rows, int64_t cols,
                         detail::Access access) {
  BARACUDA_TRY(detail::check_tensor(P, name, t, kind, Shape{rows, cols}, access));
  if (t.numel() == 0) return {};
  if (t.stride[1] != 1)
    return Error::misaligned(s(P) + ": " + s(name) + " must have unit stride along its last dimension; its stride is " +
                             n2s(t.stride[1]));
  if (rows > 1 && (t.stride[0] < cols || t.stride[0] % kRowAlign != 0))
    return Error::misaligned(s(P) + ": " + s(name) +
                             "'s row stride must be a multiple of 8 elements (16 bytes) and >= " + n2s(cols) +
                             "; got " + n2s(t.stride[0]));
  if (!aligned16(t.data)) return Error::misaligned(s(P) + ": " + s(name) + " must be 16-byte aligned");
  return {};
}

/// A dense, 16-byte aligned weight tensor (b_q, scales, zeros, perm).
Status check_dense(std::string_view name, const ConstDynTensor& t, ElementKind kind, const Shape& shape) {
  BARACUDA_TRY(detail::check_dense(P, name, t, kind, shape, detail::Access::Read, "as the packers produce it"));
  if (t.numel() > 0 && !aligned16(t.data))
    return Error::misaligned(s(P) + ": " + s(name) + " must be 16-byte aligned");
  return {};
}

}  // namespace

namespace dynamic {

Result<Int4MarlinGemmPlan> Int4MarlinGemmPlan::select(const Stream& stream, const Int4GemmDescriptor& desc,
                                                      PlanPreference pref) {
  if (desc.element != ElementKind::F16 && desc.element != ElementKind::Bf16)
    return Error::unsupported(s(P) + ": the activation kind must be f16 or bf16; got " + s(to_string(desc.element)));
  if (desc.m < 0 || desc.n < 0 || desc.k < 0)
    return Error::invalid(s(P) + ": M, N and K must be >= 0; got M = " + n2s(desc.m) + ", N = " + n2s(desc.n) +
                          ", K = " + n2s(desc.k));
  if (desc.m > detail::kInt4GemmMaxM || desc.n > detail::kInt4GemmMaxNK || desc.k > detail::kInt4GemmMaxNK)
    return Error::invalid(s(P) + ": M must be at most " + n2s(detail::kInt4GemmMaxM) +
                          " (65535 blocks of 64 rows) and N, K at most " + n2s(detail::kInt4GemmMaxNK) +
                          "; got M = " + n2s(desc.m) + ", N = " + n2s(desc.n) +
                          ", K = " + n2s(desc.k) + " (split the batch)");
  if (!is_int4_group(desc.group))
    return Error::invalid(s(P) + ": group must be one of " + int4::groups_text() + " (-1: per channel); got " +
                          n2s(desc.group));
  if (!is_int4_scheme(desc.scheme))
    return Error::invalid(s(P) + ": unknown Int4Scheme");
  if (desc.n % kNAlign != 0)
    return Error::invalid(s(P) + ": N must be a multiple of 64 (Marlin's 64-column weight tiles); got N = " +
                          n2s(desc.n) + " (pad the weight's output columns)");
  if (desc.k == 0 || desc.k % kKAlign != 0)
    return Error::invalid(s(P) + ": K must be a positive multiple of 128 (the kernel's K block); got K = " +
                          n2s(desc.k) + " (pad the weight with zero rows and the activation with zero columns)");

  const bool act = desc.act_order_effective();
  const size_t permuted_bytes = act ? static_cast<size_t>(desc.m) * static_cast<size_t>(desc.k) *
                                          static_cast<size_t>(element_bits(desc.element) / 8)
                                    : 0;
  // The devices cut K into parts when the output alone gives too few blocks (tables.hpp); the parts' f32
  // sums live in the workspace after the permuted activation.
  const int splits = stream.device() == DeviceKind::Host ? 1 : detail::int4_gemm_splits(desc.m, desc.n, desc.k);
  const size_t partial_offset = (permuted_bytes + 255) / 256 * 256;
  const size_t partial_bytes =
      splits > 1 ? static_cast<size_t>(splits) * static_cast<size_t>(desc.m) * static_cast<size_t>(desc.n) * 4 : 0;
  const size_t ws = partial_bytes > 0 ? partial_offset + partial_bytes : permuted_bytes;
  if (ws > pref.max_workspace_bytes)
    return Error::unsupported(s(P) + ": needs " + n2s(static_cast<int64_t>(ws)) +
                              " bytes of workspace (act-order's permuted activation, the split-K partial sums), "
                              "above the preference's max_workspace_bytes");
  auto dev = detail::select_device(P, stream, pref, BARACUDA_DEVICE_TABLES(int4_gemm_tables));
  if (!dev) return dev.error();
  const size_t e = detail::kind_index(desc.element);
  const detail::Int4GemmFn gemm = dev->table->gemm[e];
  const detail::PermuteColumnsFn permute = dev->table->permute_columns[e];
  if (gemm == nullptr || (act && permute == nullptr))
    return Error::unsupported(s(P) + ": the " + s(to_string(stream.device())) + " device has no int4 GEMM for " +
                              s(to_string(desc.element)) + " activations");

  Int4MarlinGemmPlan p(desc, dev->bind(OpCategory::Gemm, "int4_marlin_gemm", desc.element, ElementKind::U4,
                                       MathPrecision::Int4, variant_of(stream.device(), desc.scheme, act),
                                       LayoutKind::Rrr, desc.has_bias ? EpilogueKind::Bias : EpilogueKind::Identity));
  p.workspace_bytes_ = ws;
  p.splits_ = splits;
  p.partial_offset_ = partial_offset;
  p.gemm_ = gemm;
  p.permute_ = act ? permute : nullptr;
  return p;
}

Status Int4MarlinGemmPlan::can_implement(const Args& t) const {
  const Int4GemmDescriptor& d = desc_;
  const ElementKind T = d.element;
  const Int4Shape ws = d.weight_shape();
  const int64_t G = ws.num_groups();
  BARACUDA_TRY(check_row_operand("a", t.a, T, d.m, d.k, detail::Access::Read));
  BARACUDA_TRY(check_dense("b_q", t.b_q, ElementKind::S32, Shape{d.k / 16, 2 * d.n}));
  BARACUDA_TRY(check_dense("scales", t.scales, T, Shape{G, d.n}));
  if (d.scheme == Int4Scheme::Asymmetric) {
    BARACUDA_TRY(check_dense("zeros", t.zeros, ElementKind::S32, Shape{G, d.n / 8}));
  } else {
    BARACUDA_TRY(detail::check_absent(P, "zeros", t.zeros, "the scheme is Symmetric (z = 8)"));
  }
  if (d.act_order_effective()) {
    BARACUDA_TRY(check_dense("perm", t.perm, ElementKind::S32, Shape{d.k}));
  } else {
    BARACUDA_TRY(detail::check_absent(P, "perm", t.perm,
                                      d.act_order ? "act-order with a single group is planned without it (no perm)"
                                                  : "the descriptor has no act-order"));
  }
  if (d.has_bias) {
    BARACUDA_TRY(detail::check_tensor(P, "bias", t.bias, T, Shape{d.n}, detail::Access::Read));
  } else {
    BARACUDA_TRY(detail::check_absent(P, "bias", t.bias, "the descriptor has no bias (use with_bias())"));
  }
  BARACUDA_TRY(check_row_operand("c", t.c, T, d.m, d.n, detail::Access::Write));
  BARACUDA_TRY(detail::check_no_overlap(P, "c", t.c, "a", t.a));
  BARACUDA_TRY(detail::check_no_overlap(P, "c", t.c, "b_q", t.b_q));
  BARACUDA_TRY(detail::check_no_overlap(P, "c", t.c, "scales", t.scales));
  BARACUDA_TRY(detail::check_no_overlap(P, "c", t.c, "zeros", t.zeros));
  BARACUDA_TRY(detail::check_no_overlap(P, "c", t.c, "perm", t.perm));
  BARACUDA_TRY(detail::check_no_overlap(P, "c", t.c, "bias", t.bias));
  return {};
}

PrecisionGuarantee Int4MarlinGemmPlan::precision_guarantee() const {
  const MathPrecision math = desc_.element == ElementKind::Bf16 ? MathPrecision::Bf16 : MathPrecision::F16;
  return {math, binding_.device == DeviceKind::Host ? MathPrecision::F64 : MathPrecision::F32, true, true};
}

Status Int4MarlinGemmPlan::run(const Stream& stream, Workspace ws, const Args& t) const {
  const auto ctx = detail::begin_run(
      P, binding_, stream, [&] { return can_implement(t); },
      {ws, workspace_bytes_, kPtrAlign,
       "act-order's permuted activation, M*K elements; the split-K partial sums, splits*M*N f32",
       {{"a", t.a}, {"b_q", t.b_q}, {"scales", t.scales}, {"zeros", t.zeros}, {"perm", t.perm}, {"bias", t.bias},
        {"c", t.c}}},
      desc_.m == 0 || desc_.n == 0);
  if (!ctx) return ctx.status();

  const Int4Shape shape = desc_.weight_shape();
  detail::Int4GemmLaunch l;
  l.m = desc_.m, l.n = desc_.n, l.k = desc_.k;
  l.group_rows = shape.group_rows();
  l.grouped = shape.marlin_grouped();
  l.a = t.a, l.b = t.b_q, l.scales = t.scales, l.zeros = t.zeros, l.bias = t.bias, l.c = t.c;
  if (desc_.scheme == Int4Scheme::Symmetric) l.zeros = ConstDynTensor{};
  if (!desc_.has_bias) l.bias = ConstDynTensor{};
  if (permute_ != nullptr) {
    if (detail::data_readable(stream)) BARACUDA_TRY(detail::check_permutation(P, "perm", t.perm, desc_.k));
    const DynTensor permuted = DynTensor::dense(ws.data, desc_.element, Shape{desc_.m, desc_.k});
    BARACUDA_TRY(permute_(*ctx, detail::PermuteColumnsLaunch{desc_.m, desc_.k, t.a, t.perm, permuted}));
    l.a = permuted;
  }
  l.splits = splits_;
  if (splits_ > 1)
    l.partial = DynTensor::dense(static_cast<unsigned char*>(ws.data) + partial_offset_, ElementKind::F32,
                                 Shape{splits_, desc_.m, desc_.n});
  return gemm_(*ctx, l);
}

}  // namespace dynamic
}  // namespace baracuda
