// CastPlan: every pair of byte-sized kinds; the default suite covers the conversions LLM inference uses.
#include "common.hpp"
#include "scenarios.hpp"

namespace baracuda::profiler {
namespace {

Result<dynamic::CastPlan> select_plan(const Stream& s, const Problem& p) {
  return dynamic::CastPlan::select(s, CastDescriptor().with_input(p.dtype).with_output(p.out_dtype).with_shape(p.shape));
}

constexpr Scenario kCast{
    .name = "cast",
    .family = "cast",
    .summary = "out = in converted to another kind (Tensor.to(dtype))",
    .output = OutputKind::Chosen,
    .comparison = Comparison::Exact,
    .default_kinds =
        [](uint32_t) {
          using K = ElementKind;
          const std::pair<K, K> pairs[] = {{K::F32, K::Bf16},     {K::Bf16, K::F32},     {K::F32, K::F16},
                                           {K::F16, K::F32},      {K::Bf16, K::Fp8E4M3}, {K::Fp8E4M3, K::Bf16},
                                           {K::F32, K::S8},       {K::S32, K::F32},      {K::F32, K::F32}};
          std::vector<Problem> r;
          for (auto [in, out] : pairs) r.push_back({in, out, {}, false, 0});
          return r;
        },
    .default_shapes = elementwise_shapes,
    .select = [](const Stream& s, const Problem& p) { return sku_of(select_plan(s, p)); },
    .prepare = [](const Stream& s, const Problem& p) -> Result<std::unique_ptr<Instance>> {
      auto plan = select_plan(s, p);
      if (!plan) return plan.error();
      return PlanInstance<dynamic::CastPlan, 1, 1>::make(
          s, std::move(plan).value(), p, {OperandSpec{p.dtype, p.shape, input_range(p.dtype, p.out_dtype)}},
          {OperandSpec{p.out_dtype, p.shape, {}}});
    },
    .traffic =
        [](const Problem& p) {
          const int64_t n = p.shape.numel();
          return Traffic{static_cast<double>(storage_bytes(p.dtype, n) + storage_bytes(p.out_dtype, n)), 0};
        },
};

}  // namespace

void add_cast_scenarios(std::vector<Scenario>& out) { out.push_back(kCast); }

}  // namespace baracuda::profiler
