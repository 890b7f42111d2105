// FillPlan: every element kind; the default suite covers one of each storage width.
#include "common.hpp"
#include "scenarios.hpp"

namespace baracuda::profiler {
namespace {

/// A value every kind can hold exactly.
Scalar fill_value(ElementKind k) {
  if (k == ElementKind::Bool) return Scalar(true);
  if (k == ElementKind::S4) return Scalar(-3);
  if (is_integral(k)) return Scalar(7);
  return Scalar(1.5);
}

Result<dynamic::FillPlan> select_plan(const Stream& s, const Problem& p) {
  return dynamic::FillPlan::select(s, FillDescriptor().with_element(p.dtype).with_shape(p.shape).with_value(fill_value(p.dtype)));
}

class FillInstance final : public Instance {
 public:
  FillInstance(dynamic::FillPlan plan, Operand out, Buffer ws)
      : plan_(std::move(plan)), out_(std::move(out)), ws_(std::move(ws)) {}
  KernelSku sku() const override { return plan_.sku(); }
  Status check() const override { return plan_.can_implement(out_.view); }
  Status run(const Stream& stream) override { return plan_.run(stream, ws_.as_workspace(), out_.view); }
  Result<HostTensor> output() const override { return out_.download(); }

 private:
  dynamic::FillPlan plan_;
  Operand out_;
  Buffer ws_;
};

constexpr Scenario kFill{
    .name = "fill",
    .family = "fill",
    .summary = "out = value (Tensor.fill_)",
    .output = OutputKind::SameAsInput,
    .comparison = Comparison::Exact,
    .default_kinds =
        [](uint32_t) {
          std::vector<Problem> r;
          for (ElementKind k : {ElementKind::F32, ElementKind::Bf16, ElementKind::Fp8E4M3, ElementKind::S8,
                                ElementKind::S64, ElementKind::U4})
            r.push_back({k, k, {}, false, 0});
          return r;
        },
    .default_shapes = elementwise_shapes,
    .select = [](const Stream& s, const Problem& p) -> Result<KernelSku> {
      auto plan = select_plan(s, p);
      if (!plan) return plan.error();
      return plan->sku();
    },
    .prepare = [](const Stream& s, const Problem& p) -> Result<std::unique_ptr<Instance>> {
      auto plan = select_plan(s, p);
      if (!plan) return plan.error();
      auto out = make_operand(s, p.dtype, p.shape, p.strided);
      if (!out) return out.error();
      auto ws = Buffer::allocate(s, plan->workspace_size());
      if (!ws) return ws.error();
      BARACUDA_TRY(fill_sentinel(*out));
      return std::unique_ptr<Instance>(
          new FillInstance(std::move(plan).value(), std::move(out).value(), std::move(ws).value()));
    },
    .traffic = [](const Problem& p) { return Traffic{static_cast<double>(storage_bytes(p.dtype, p.shape.numel())), 0}; },
};

}  // namespace

void add_fill_scenarios(std::vector<Scenario>& out) { out.push_back(kFill); }

}  // namespace baracuda::profiler
