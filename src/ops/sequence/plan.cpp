// SequencePlan: select (validate the op's parameters, compute the count and the values' formula once, check
// that the end values fit y's kind, look the kind up in the device's table), can_implement (the shared tensor
// checks against [count]), run (re-validate, one indirect call).
#include <cmath>
#include <limits>
#include <string>

#include "baracuda/ops/sequence.hpp"
#include "core/plan_core.hpp"
#include "core/validate.hpp"
#include "ops/sequence/dispatch.hpp"

namespace baracuda {
namespace {

constexpr std::string_view kPlan = "SequencePlan";
constexpr double kExactIntegers = 9007199254740992.0;  // 2^53: every integer up to it is a double

std::string s(std::string_view v) { return std::string(v); }
Error invalid(const std::string& why) { return Error::invalid(s(kPlan) + ": " + why); }

/// The smallest magnitude a float kind rounds to infinity (its largest finite value plus half an ulp; a tie
/// rounds to the even infinity); +inf for f64.
double overflow_threshold(ElementKind k) {
  switch (k) {
    case ElementKind::F16: return 65520.0;
    case ElementKind::Bf16: return std::ldexp(1.0, 128) - std::ldexp(1.0, 119);
    case ElementKind::F32: return std::ldexp(1.0, 128) - std::ldexp(1.0, 103);
    default: return std::numeric_limits<double>::infinity();
  }
}

/// [min, max] of an integer kind, as doubles (exact for s8, u8, s32; s64's are ±2^63, beyond the 2^53 the
/// integer formulas allow anyway).
std::pair<double, double> integer_range(ElementKind k) {
  switch (k) {
    case ElementKind::S8: return {-128.0, 127.0};
    case ElementKind::U8: return {0.0, 255.0};
    case ElementKind::S32: return {-2147483648.0, 2147483647.0};
    default: return {-std::ldexp(1.0, 63), std::ldexp(1.0, 63)};
  }
}

/// `InvalidProblem` unless `v` (a value the plan writes, before the conversion) fits y's kind.
Status check_fits(ElementKind k, double v, std::string_view which) {
  if (is_floating(k)) {
    if (std::fabs(v) >= overflow_threshold(k))
      return invalid(s(which) + " " + std::to_string(v) + " overflows " + s(to_string(k)));
    return {};
  }
  const auto [lo, hi] = integer_range(k);
  const double t = std::trunc(v);
  if (t < lo || t > hi)
    return invalid(s(which) + " " + std::to_string(v) + " is out of the range of " + s(to_string(k)));
  return {};
}

bool integral_within_2_53(double v) { return std::trunc(v) == v && std::fabs(v) <= kExactIntegers; }

/// Arange: the count and the formula; `start`, `end`, `step` finite.
Result<detail::SequenceFormula> arange_formula(const SequenceDescriptor& d, int64_t* count) {
  if (d.step == 0) return invalid("arange's step must be nonzero");
  if ((d.step > 0 && d.end < d.start) || (d.step < 0 && d.end > d.start))
    return invalid("upper bound and larger bound inconsistent with step sign (start " + std::to_string(d.start) +
                   ", end " + std::to_string(d.end) + ", step " + std::to_string(d.step) + ")");
  detail::SequenceFormula l;
  if (is_integral(d.element)) {
    if (!integral_within_2_53(d.start) || !integral_within_2_53(d.end) || !integral_within_2_53(d.step))
      return invalid("an integer arange takes integral start, end and step within +-2^53");
    const auto start = static_cast<int64_t>(d.start), end = static_cast<int64_t>(d.end),
               step = static_cast<int64_t>(d.step);
    const int64_t sign = step > 0 ? 1 : -1;
    *count = end == start ? 0 : (end - start + step - sign) / step;  // ceil of the exact quotient
    l.exact_int = true, l.int_start = start, l.int_step = step;
  } else {
    const double n = std::ceil((d.end - d.start) / d.step);
    if (!(n <= kExactIntegers) || n > static_cast<double>(kMaxElements))
      return invalid("arange(" + std::to_string(d.start) + ", " + std::to_string(d.end) + ", " +
                     std::to_string(d.step) + ") has more values than a tensor may hold");
    *count = static_cast<int64_t>(n);
    l.start = d.start, l.step = d.step, l.half = *count;  // one branch: fma(step, i, start)
  }
  return l;
}

/// Linspace: the formula; `start`, `end` finite.
Result<detail::SequenceFormula> linspace_formula(const SequenceDescriptor& d) {
  if (d.steps < 0) return invalid("linspace's steps must be >= 0, got " + std::to_string(d.steps));
  if (d.steps > kMaxElements) return invalid("linspace's steps is more values than a tensor may hold");
  detail::SequenceFormula l;
  l.start = d.start, l.end = d.end, l.last = d.steps - 1;
  l.step = d.steps > 1 ? (d.end - d.start) / static_cast<double>(d.steps - 1) : 0.0;
  // PyTorch's halfway point; one value is start itself.
  l.half = d.steps == 1 ? 1 : d.steps / 2;
  if (!std::isfinite(l.step)) return invalid("linspace's spacing (end - start) / (steps - 1) overflows");
  return l;
}

/// The count and the values' formula of a descriptor whose op and numbers `select` has checked (once, at select).
Result<detail::SequenceFormula> formula_for(const SequenceDescriptor& d, int64_t* count) {
  *count = d.steps;
  return d.op == SequenceOp::Arange ? arange_formula(d, count) : linspace_formula(d);
}

}  // namespace

std::string_view to_string(SequenceOp op) {
  return op == SequenceOp::Arange ? "arange" : op == SequenceOp::Linspace ? "linspace" : "?";
}

namespace dynamic {

Result<SequencePlan> SequencePlan::select(const Stream& stream, const SequenceDescriptor& desc, PlanPreference pref) {
  if (desc.op != SequenceOp::Arange && desc.op != SequenceOp::Linspace) return invalid("invalid SequenceOp");
  BARACUDA_TRY(detail::check_kinds(kPlan, {desc.element}));
  const bool arange = desc.op == SequenceOp::Arange;
  if (!std::isfinite(desc.start) || !std::isfinite(desc.end) || (arange && !std::isfinite(desc.step)))
    return invalid("start, end and step must be finite");
  auto dev = detail::select_device(kPlan, stream, pref, BARACUDA_DEVICE_TABLES(sequence_table));
  if (!dev) return dev.error();
  const auto fn = detail::kind_entry(kPlan, to_string(desc.op), *dev->table, desc.element);
  if (!fn) return fn.error();

  int64_t count = 0;
  auto formula = formula_for(desc, &count);
  if (!formula) return formula.error();
  if (count > 0) {  // the values are monotonic: the end values bound them all
    const detail::SequenceFormula& l = *formula;
    const auto value = [&](int64_t i) {
      if (l.exact_int) return static_cast<double>(l.int_start + l.int_step * i);
      return i < l.half ? std::fma(l.step, static_cast<double>(i), l.start)
                        : std::fma(-l.step, static_cast<double>(l.last - i), l.end);
    };
    BARACUDA_TRY(check_fits(desc.element, value(0), "the first value"));
    BARACUDA_TRY(check_fits(desc.element, value(count - 1), "the last value"));
  }

  const MathPrecision precision = formula->exact_int ? MathPrecision::Exact : MathPrecision::F64;
  SequencePlan p(desc, dev->bind(OpCategory::Fill, to_string(desc.op), desc.element, std::nullopt, precision,
                                 "grid_stride"),
                 *fn);
  p.count_ = count;
  p.formula_ = *formula;
  return p;
}

Status SequencePlan::can_implement(const Args& args) const {
  return detail::check_tensor(kPlan, "y", args.y, desc_.element, Shape{count_}, detail::Access::Write);
}

Status SequencePlan::run(const Stream& stream, Workspace, const Args& args) const {
  const auto ctx = detail::begin_run(kPlan, binding_, stream, [&] { return can_implement(args); }, count_ == 0);
  if (!ctx) return ctx.status();
  return fn_(*ctx, detail::SequenceLaunch{formula_, args.y});
}

}  // namespace dynamic
}  // namespace baracuda
