// ReduceToPlan: a ReducePlan Sum with keepdim over the dimensions `to` broadcasts along, views that give
// x and y the reduction's rank, and its rules and messages under its own name.
#include <string>

#include "baracuda/ops/reduce.hpp"
#include "core/plan_core.hpp"
#include "core/validate.hpp"

namespace baracuda::dynamic {
namespace {

constexpr std::string_view kPlan = "ReduceToPlan";

Error invalid(const std::string& why) { return Error::invalid(std::string(kPlan) + ": " + why); }

/// `t` with `rank` dimensions: its own right-aligned, extent-1 stride-0 ones in front.
template <class View>
View with_rank(View t, int rank) {
  View r = t;
  const int lead = rank - t.shape.rank;
  r.shape.rank = rank;
  for (int d = rank - 1; d >= 0; --d) {
    r.shape.dims[d] = d >= lead ? t.shape.dims[d - lead] : 1;
    r.stride[d] = d >= lead ? t.stride[d - lead] : 0;
  }
  return r;
}

/// The reduction's shape: `from`, or [1] + `from` when nothing is reduced (a ReducePlan reduces something).
Shape sum_shape(const Shape& from, uint32_t mask) {
  if (mask != 0) return from;
  Shape s;
  s.rank = from.rank + 1;
  s.dims[0] = 1;
  for (int d = 0; d < from.rank; ++d) s.dims[d + 1] = from.dims[d];
  return s;
}

}  // namespace

Result<ReduceToPlan> ReduceToPlan::select(const Stream& stream, const ReduceToDescriptor& desc, PlanPreference pref) {
  BARACUDA_TRY(detail::check_shape(kPlan, "from", desc.from));
  BARACUDA_TRY(detail::check_shape(kPlan, "to", desc.to));
  if (!is_floating(desc.element))
    return Error::unsupported(std::string(kPlan) + ": takes f16, bf16, f32 and f64, not " +
                              std::string(to_string(desc.element)));
  const Shape& f = desc.from;
  const Shape& t = desc.to;
  if (t.rank > f.rank)
    return invalid("to has more dimensions (" + std::to_string(t.rank) + ") than from (" + std::to_string(f.rank) +
                   ")");
  uint32_t mask = 0;
  const int lead = f.rank - t.rank;
  for (int d = 0; d < f.rank; ++d) {
    const int64_t te = d >= lead ? t.dims[d - lead] : 1;
    if (te != f.dims[d] && te != 1)
      return invalid("to's dimension " + std::to_string(d - lead) + " (" + std::to_string(te) +
                     ") is neither from's extent (" + std::to_string(f.dims[d]) + ") nor 1");
    if (te == 1 && f.dims[d] != 1) mask |= 1u << d;
  }
  if (mask == 0 && f.rank == kMaxRank)
    return invalid("from and to are the same rank-8 shape: nothing to reduce (copy instead)");
  const Shape shape = sum_shape(f, mask);
  ReduceDescriptor sum = ReduceDescriptor().with_op(ReduceOp::Sum).with_element(desc.element).with_shape(shape);
  sum.dims = mask != 0 ? mask : 1u;  // the prepended dimension
  sum.keepdim = mask != 0;
  auto plan = ReducePlan::select(stream, sum, pref);
  if (!plan) return plan.error();
  ReduceToPlan p;
  p.desc_ = desc;
  p.sum_ = std::move(plan).value();
  return p;
}

Status ReduceToPlan::can_implement(const Args& args) const {
  using detail::Access;
  BARACUDA_TRY(detail::check_tensor(kPlan, "x", args.x, desc_.element, desc_.from, Access::Read));
  BARACUDA_TRY(detail::check_tensor(kPlan, "y", args.y, desc_.element, desc_.to, Access::Write));
  return detail::check_no_overlap(kPlan, "y", args.y, "x", args.x);
}

Status ReduceToPlan::run(const Stream& stream, Workspace workspace, const Args& args) const {
  BARACUDA_TRY(can_implement(args));
  const int rank = sum_.descriptor().shape.rank;
  return sum_.run(stream, workspace, {with_rank(args.x, rank), with_rank(args.y, sum_.output_shape().rank)});
}

}  // namespace baracuda::dynamic
