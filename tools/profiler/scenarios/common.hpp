// Helpers the scenario files share: a generic Instance over a `dynamic::` plan, and the default shapes.
#pragma once

#include <array>
#include <initializer_list>
#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "../scenario.hpp"

namespace baracuda::profiler {

/// The shapes most elementwise ops run by default: small and odd on host/sim (tails, unaligned rows; the
/// conformance suite runs the first, 67×259, through a dozen layouts per op, so it stays small), LLM
/// activation sizes on cuda (a decode step [16, 4096], a prefill [4096, 4096]). Larger problems (an MLP
/// intermediate, --shape 8192x14336) are left to the command line: every case is also computed by the host
/// reference, which takes seconds per 10^7 elements.
std::vector<Shape> elementwise_shapes(DeviceKind device);

/// A GEMM-shaped scenario's problem: `[M, N, K]` given as is; `[M, N]` with K = N rounded up to a multiple of
/// `k_multiple` (a square weight); `[N]` one token (M = 1); `[]` 1×1×(that K of 1).
struct GemmExtents {
  int64_t m = 0, n = 0, k = 0;
};
GemmExtents gemm_extents(const Shape& s, int64_t k_multiple = 1);

/// The LLM linear layers of a 7B model on cuda — M ∈ {1, 16, 128, 2048, 8192} tokens × (N, K) ∈ {(4096, 4096),
/// (11008, 4096), (4096, 11008)} — and `small` (tiny ragged problems) on host and sim.
std::vector<Shape> llm_linear_shapes(DeviceKind device, std::vector<Shape> small);

/// The kinds the broadcasting elementwise scenarios run by default: f32 and bf16, plus s32 for ops with
/// integer kinds (`Problem::variant` = `variant`).
std::vector<Problem> float_kinds(uint32_t variant);
std::vector<Problem> float_and_int_kinds(uint32_t variant);

/// Default problems whose output kind is their input kind, one per kind.
std::vector<Problem> same_kinds(std::initializer_list<ElementKind> kinds, uint32_t variant = 0);
/// Default problems of every (input kind, output kind) pair of two type lists (a catalog's).
template <class Inputs, class Outputs>
std::vector<Problem> every_kind_pair(uint32_t variant) {
  std::vector<Problem> r;
  for_each_type(Inputs{}, [&]<class In>() {
    for_each_type(Outputs{}, [&]<class Out>() { r.push_back({kind_of<In>, kind_of<Out>, {}, false, variant}); });
  });
  return r;
}
/// Default problems of (input kind, output kind) pairs.
std::vector<Problem> kind_pairs(std::initializer_list<std::pair<ElementKind, ElementKind>> pairs, uint32_t variant = 0);

/// What the scenarios of one family share: the family, its functions (which tell its ops apart by
/// `Problem::variant`), its default kinds and shapes, its output kind, its comparison and its baseline.
/// `op` makes the scenario of one op; a family whose ops differ in one field sets it on the result.
struct ScenarioFamily {
  std::string_view family;
  Result<KernelSku> (*select)(const Stream& stream, const Problem& problem);
  Result<std::unique_ptr<Instance>> (*prepare)(const Stream& stream, const Problem& problem);
  Traffic (*traffic)(const Problem& problem);
  std::vector<Problem> (*default_kinds)(uint32_t variant);
  std::vector<Shape> (*default_shapes)(DeviceKind device);
  OutputKind output = OutputKind::SameAsInput;
  Comparison comparison = Comparison::Exact;
  std::string_view baseline_name = {};
  Result<double> (*baseline)(const Stream& stream, const Problem& problem, int warmup, int repeat) = nullptr;
  int64_t (*summed_terms)(const Problem& problem, size_t output) = nullptr;

  Scenario op(std::string_view name, std::string_view summary, uint32_t variant = 0) const;
};

/// A seed that depends only on the problem (not the device), so every device sees the same inputs.
uint64_t problem_seed(const Problem& p);

/// One operand of a plan: its kind and shape, and for inputs the range their values are drawn from.
struct OperandSpec {
  ElementKind kind = ElementKind::F32;
  Shape shape;
  ValueRange range;          ///< inputs only
  std::vector<int> storage;  ///< the dimensions' order in memory (make_operand); empty: row-major
};

/// An Instance for a `dynamic::` plan whose argument struct `Plan::Args` lists its NIn inputs then its NOut
/// outputs (every family's convention), or for a `PositionalPlan` that binds them itself. Inputs get
/// pseudo-random values (seeded by the problem and the operand's position), outputs a sentinel pattern.
template <class Plan, size_t NIn, size_t NOut>
class PlanInstance final : public Instance {
 public:
  static Result<std::unique_ptr<Instance>> make(const Stream& stream, Plan plan, const Problem& p,
                                                const std::array<OperandSpec, NIn>& ins,
                                                const std::array<OperandSpec, NOut>& outs) {
    std::unique_ptr<PlanInstance> inst(new PlanInstance(std::move(plan)));
    for (size_t i = 0; i < NIn + NOut; ++i) {
      const OperandSpec& spec = i < NIn ? ins[i] : outs[i - NIn];
      auto op = make_operand(stream, spec.kind, spec.shape, p.strided, spec.storage);
      if (!op) return op.error();
      BARACUDA_TRY(i < NIn ? fill_random(*op, spec.range, problem_seed(p) + 7919 * i) : fill_sentinel(*op));
      inst->operands_[i] = std::move(op).value();
    }
    auto ws = Buffer::allocate(stream, inst->plan_.workspace_size());
    if (!ws) return ws.error();
    inst->workspace_ = std::move(ws).value();
    return std::unique_ptr<Instance>(std::move(inst));
  }

  KernelSku sku() const override { return plan_.sku(); }
  Status check() const override { return check_views(views()); }
  Status run(const Stream& stream) override { return run_views(stream, workspace(), views()); }
  Result<std::vector<HostTensor>> outputs() const override {
    std::vector<HostTensor> r;
    for (size_t i = NIn; i < NIn + NOut; ++i) {
      auto h = operands_[i].download();
      if (!h) return h.error();
      r.push_back(std::move(h).value());
    }
    return r;
  }

  size_t input_count() const override { return NIn; }
  std::vector<DynTensor> views() const override {
    std::vector<DynTensor> v;
    for (const Operand& op : operands_) v.push_back(op.view);
    return v;
  }
  Status check_views(const std::vector<DynTensor>& v) const override {
    return call(v, [&](const auto&... t) { return plan_.can_implement(t...); });
  }
  Status run_views(const Stream& stream, Workspace ws, const std::vector<DynTensor>& v) const override {
    return call(v, [&](const auto&... t) { return plan_.run(stream, ws, t...); });
  }
  Workspace workspace() const override { return workspace_.as_workspace(); }
  Result<HostTensor> download_operand(size_t i) const override { return operands_[i].download(); }

 private:
  explicit PlanInstance(Plan plan) : plan_(std::move(plan)) {}
  /// `f(Plan::Args{v...})`, or `f(v...)` for a PositionalPlan (which binds them itself).
  template <class F>
  static Status call(const std::vector<DynTensor>& v, F&& f) {
    return [&]<size_t... I>(std::index_sequence<I...>) {
      if constexpr (requires { typename Plan::Args; })
        return f(typename Plan::Args{v[I]...});
      else
        return f(v[I]...);
    }(std::make_index_sequence<NIn + NOut>{});
  }

  Plan plan_;
  std::array<Operand, NIn + NOut> operands_;
  Buffer workspace_;
};

/// Adapts a `dynamic::` plan whose arguments are not simply its operands in PlanInstance order (inputs, then
/// outputs) — an op selected at run time, optional operands — to PlanInstance: `Bind::bind(plan,
/// operands...)` builds the plan's `Args` from them.
template <class Plan, class Bind>
struct PositionalPlan {
  Plan plan;
  template <class... T>
  Status can_implement(const T&... t) const {
    return plan.can_implement(Bind::bind(plan, t...));
  }
  template <class... T>
  Status run(const Stream& stream, Workspace ws, const T&... t) const {
    return plan.run(stream, ws, Bind::bind(plan, t...));
  }
  size_t workspace_size() const { return plan.workspace_size(); }
  KernelSku sku() const { return plan.sku(); }
};

/// Selects a plan with `select(stream, problem)` (a function returning `Result<Plan>`) and returns its SKU.
template <class Plan>
Result<KernelSku> sku_of(Result<Plan> plan) {
  if (!plan) return plan.error();
  return plan->sku();
}

/// A plan's operands: its inputs, then its outputs (its `Args` order).
template <size_t NIn, size_t NOut>
struct OperandSpecs {
  std::array<OperandSpec, NIn> in;
  std::array<OperandSpec, NOut> out;
};

/// A scenario's `select` for the plan `SelectPlan(stream, problem)` returns.
template <auto SelectPlan>
Result<KernelSku> select_with(const Stream& s, const Problem& p) {
  return sku_of(SelectPlan(s, p));
}

/// A scenario's `prepare`: the plan `SelectPlan(stream, problem)` returns, over the operands `Specs(problem)`
/// describes (an `OperandSpecs`).
template <auto SelectPlan, auto Specs>
Result<std::unique_ptr<Instance>> prepare_with(const Stream& s, const Problem& p) {
  auto plan = SelectPlan(s, p);
  if (!plan) return plan.error();
  const auto specs = Specs(p);
  using Plan = std::remove_cvref_t<decltype(*plan)>;
  constexpr size_t kIn = std::tuple_size_v<decltype(specs.in)>, kOut = std::tuple_size_v<decltype(specs.out)>;
  return PlanInstance<Plan, kIn, kOut>::make(s, std::move(plan).value(), p, specs.in, specs.out);
}

}  // namespace baracuda::profiler
