// The int4_marlin_repack family: Int4MarlinRepackPlan, a GPTQ (symmetric, group 128) or AWQ (zero points,
// group 128) checkpoint's int4 weight, scales (and zero points) → Marlin's, with the scales in the chosen
// kind (f16 or bf16). One scenario per format.
//
// Shapes: `--shape KxN` (in_features × out_features) as given after rounding N up to a multiple of 64 and K
// up to a multiple of 128; a rank-1 shape [N] means K = N. Defaults: on cuda the LLM projections
// 4096×4096, 4096×11008, 11008×4096 and 8192×8192; on host/sim two small ones.
//
// Values: the packed words are random bits (every nibble is a valid weight or zero point), the scales random
// f16; the outputs are compared bit for bit with the host's. Traffic: every input and output once (the
// weight K·N/2 bytes each way); no flops.
#include <algorithm>
#include <utility>

#include <baracuda/ops/int4_marlin_repack.hpp>

#include "common.hpp"
#include "scenarios.hpp"

namespace baracuda::profiler {
namespace {

constexpr int64_t kGroup = 128;
constexpr uint32_t kGptq = 0, kAwq = 1;
const ValueRange kBits{-2147483648.0, 2147483647.0, true};

struct Kn {
  int64_t k = 0, n = 0;
};

Kn kn(const Problem& p) {
  const Shape& s = p.shape;
  const int64_t n = s.rank == 0 ? 64 : s[s.rank - 1], k = s.rank >= 2 ? s[s.rank - 2] : n;
  return {std::max<int64_t>(128, (k + 127) / 128 * 128), std::max<int64_t>(64, (n + 63) / 64 * 64)};
}

Int4RepackDescriptor descriptor(const Problem& p) {
  const Kn d = kn(p);
  auto desc = Int4RepackDescriptor{}.with_shape(d.k, d.n).with_group(kGroup).with_scale_element(p.dtype);
  return p.variant == kAwq ? desc.awq() : desc.gptq();
}

/// Binds the operands to dynamic::Int4MarlinRepackArgs: GPTQ (qweight, scales, out_qweight, out_scales) or
/// AWQ (qweight, qzeros, scales, out_qweight, out_scales, out_zeros).
struct BindRepack {
  using Plan = dynamic::Int4MarlinRepackPlan;
  static Plan::Args bind(const Plan&, const DynTensor& qw, const DynTensor& s, const DynTensor& oq,
                         const DynTensor& os) {
    return {qw, {}, s, {}, oq, os, {}};
  }
  static Plan::Args bind(const Plan&, const DynTensor& qw, const DynTensor& qz, const DynTensor& s,
                         const DynTensor& oq, const DynTensor& os, const DynTensor& oz) {
    return {qw, qz, s, {}, oq, os, oz};
  }
};
using PositionalRepack = PositionalPlan<dynamic::Int4MarlinRepackPlan, BindRepack>;

Result<KernelSku> select_sku(const Stream& s, const Problem& p) {
  return sku_of(dynamic::Int4MarlinRepackPlan::select(s, descriptor(p)));
}

Result<std::unique_ptr<Instance>> prepare(const Stream& s, const Problem& p) {
  const Kn d = kn(p);
  const int64_t groups = d.k / kGroup;
  auto plan = dynamic::Int4MarlinRepackPlan::select(s, descriptor(p));
  if (!plan) return plan.error();
  const OperandSpec scales{ElementKind::F16, Shape{groups, d.n}, ValueRange{-4, 4, false}};
  const OperandSpec out_qweight{ElementKind::S32, Shape{d.k / 16, 2 * d.n}, {}};
  const OperandSpec out_scales{p.dtype, Shape{groups, d.n}, {}};
  if (p.variant == kAwq)
    return PlanInstance<PositionalRepack, 3, 3>::make(
        s, PositionalRepack{std::move(plan).value()}, p,
        {OperandSpec{ElementKind::S32, Shape{d.k, d.n / 8}, kBits},
         OperandSpec{ElementKind::S32, Shape{groups, d.n / 8}, kBits}, scales},
        {out_qweight, out_scales, OperandSpec{ElementKind::S32, Shape{groups, d.n / 8}, {}}});
  return PlanInstance<PositionalRepack, 2, 2>::make(s, PositionalRepack{std::move(plan).value()}, p,
                                                    {OperandSpec{ElementKind::S32, Shape{d.k / 8, d.n}, kBits}, scales},
                                                    {out_qweight, out_scales});
}

Traffic traffic(const Problem& p) {
  const Kn d = kn(p);
  const double groups = static_cast<double>(d.k / kGroup), n = static_cast<double>(d.n);
  const double weight = static_cast<double>(d.k) * n / 2;
  const double scales = groups * n * (2.0 + static_cast<double>(element_bits(p.dtype) / 8));
  const double zeros = p.variant == kAwq ? 2 * groups * n / 2 : 0;
  return Traffic{2 * weight + scales + zeros, 0};
}

std::vector<Shape> default_shapes(DeviceKind device) {
  if (device == DeviceKind::Cuda)
    return {Shape{4096, 4096}, Shape{4096, 11008}, Shape{11008, 4096}, Shape{8192, 8192}};
  return {Shape{256, 128}, Shape{128, 192}};
}

std::vector<Problem> kinds(uint32_t variant) {
  return {{ElementKind::F16, ElementKind::F16, {}, false, variant},
          {ElementKind::Bf16, ElementKind::Bf16, {}, false, variant}};
}

constexpr ScenarioFamily kInt4MarlinRepackFamily{"int4_marlin_repack", select_sku, prepare, traffic, kinds,
                                                 default_shapes};

Scenario make(uint32_t variant, std::string_view name, std::string_view summary) {
  return kInt4MarlinRepackFamily.op(name, summary, variant);
}

}  // namespace

void add_int4_marlin_repack_scenarios(std::vector<Scenario>& out) {
  out.push_back(make(kGptq, "int4_marlin_repack_gptq",
                     "GPTQ qweight [K/8, N] + f16 scales (group 128, symmetric) -> Marlin weight and scales"));
  out.push_back(make(kAwq, "int4_marlin_repack_awq",
                     "AWQ qweight [K, N/8] + zero points + f16 scales (group 128) -> Marlin weight, scales, zeros"));
}

}  // namespace baracuda::profiler
