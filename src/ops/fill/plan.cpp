// FillPlan: select (validate, resolve the backend, look the kind up in the device's table, convert the
// value once), can_implement (the shared tensor checks), run (re-validate, one indirect call).
#include <cmath>
#include <cstring>
#include <string>

#include "baracuda/ops/fill.hpp"
#include "core/plan_core.hpp"
#include "core/validate.hpp"
#include "device/convert.cuh"
#include "ops/fill/dispatch.hpp"

namespace baracuda {
namespace {

constexpr std::string_view kPlan = "FillPlan";

#define BARACUDA_FILL_OP(name, types, tolerance, doc) constexpr std::string_view kOpName = #name;
#include "ops/fill/fill.def"
#undef BARACUDA_FILL_OP

Error unrepresentable(const Scalar& v, ElementKind k, const char* why) {
  return Error::invalid(std::string(kPlan) + ": the value " + v.to_string() + " cannot be held by " +
                        std::string(to_string(k)) + " (" + why + ")");
}

/// The fill value as T's storage bits, converted with CastPlan's rules; values T cannot hold are rejected.
template <class T>
Result<uint64_t> value_bits(const Scalar& v) {
  constexpr ElementKind kind = kind_of<T>;
  uint64_t bits = 0;
  if constexpr (is_packed(kind)) {
    constexpr int64_t lo = kind == ElementKind::S4 ? -8 : 0;
    constexpr int64_t hi = kind == ElementKind::S4 ? 7 : 15;
    int64_t i = v.to_int();
    if (v.is_float()) {
      const double d = v.to_double();
      if (!std::isfinite(d)) return unrepresentable(v, kind, "not finite");
      const double t = std::trunc(d);
      if (t < static_cast<double>(lo) || t > static_cast<double>(hi)) return unrepresentable(v, kind, "out of range");
      i = static_cast<int64_t>(t);
    } else if (i < lo || i > hi) {
      return unrepresentable(v, kind, "out of range");
    }
    const uint64_t nibble = static_cast<uint64_t>(i) & 0x0F;
    return nibble | (nibble << 4);
  } else {
    T r{};
    if constexpr (std::is_same_v<T, bool>) {
      r = v.is_float() ? convert::cast<bool>(v.to_double(), false) : v.to_int() != 0;
    } else if constexpr (convert::is_int_v<T>) {
      constexpr int b = static_cast<int>(sizeof(T) * 8);
      constexpr bool sgn = std::is_signed_v<T>;
      if (v.is_float()) {
        const double d = v.to_double();
        if (!std::isfinite(d)) return unrepresentable(v, kind, "not finite");
        // trunc(d) must lie in [min, max], i.e. in [lo, hi) with lo, hi exact powers of two.
        const double lo = sgn ? -std::ldexp(1.0, b - 1) : 0.0;
        const double hi = std::ldexp(1.0, sgn ? b - 1 : b);
        const double t = std::trunc(d);
        if (t < lo || t >= hi) return unrepresentable(v, kind, "out of range");
        r = convert::cast<T>(d, false);
      } else {
        const int64_t x = v.to_int();
        const bool fits = sgn ? (b == 64 || (x >= -(int64_t{1} << (b - 1)) && x < (int64_t{1} << (b - 1))))
                              : (x >= 0 && (b == 64 || x < (int64_t{1} << b)));
        if (!fits) return unrepresentable(v, kind, "out of range");
        r = convert::cast<T>(x, false);
      }
    } else {
      // Floating kinds: a finite value may not round to ±inf (or to NaN, E4M3's overflow), and E4M3 has no
      // infinity. NaN is representable by every floating kind.
      const bool finite_in = v.is_float() ? std::isfinite(v.to_double()) : true;
      r = v.is_float() ? convert::cast<T>(v.to_double(), false) : convert::cast<T>(v.to_int(), false);
      const double back = static_cast<double>(convert::to_opmath(r));
      if (finite_in && !std::isfinite(back)) return unrepresentable(v, kind, "overflow");
      if (v.is_float() && std::isinf(v.to_double()) && kind == ElementKind::Fp8E4M3)
        return unrepresentable(v, kind, "fp8 E4M3 has no infinity");
    }
    std::memcpy(&bits, &r, sizeof(T));
  }
  return bits;
}

using ValueFn = Result<uint64_t> (*)(const Scalar&);
constexpr detail::KindTable<ValueFn> kValueTable =
    detail::kind_table<ValueFn>(detail::FillTypes{}, []<class T>(std::type_identity<T>) { return &value_bits<T>; });

}  // namespace

namespace dynamic {

Result<FillPlan> FillPlan::select(const Stream& stream, const FillDescriptor& desc, PlanPreference pref) {
  auto dev = detail::select_elementwise(kPlan, stream, pref, desc.shape, {desc.element},
                                        BARACUDA_DEVICE_TABLES(fill_table));
  if (!dev) return dev.error();
  const auto fn = detail::kind_entry(kPlan, kOpName, *dev->table, desc.element);
  if (!fn) return fn.error();
  auto bits = kValueTable[detail::kind_index(desc.element)](desc.value);  // the value table has the same kinds
  if (!bits) return bits.error();

  FillPlan p(desc, dev->bind(OpCategory::Fill, kOpName, desc.element, std::nullopt, MathPrecision::Exact,
                             "elementwise"),
             *fn);
  p.bits_ = *bits;
  return p;
}

Status FillPlan::can_implement(const Args& args) const {
  return detail::check_tensor(kPlan, "out", args.out, desc_.element, desc_.shape, detail::Access::Write);
}

Status FillPlan::run(const Stream& stream, Workspace, const Args& args) const {
  const auto ctx =
      detail::begin_run(kPlan, binding_, stream, [&] { return can_implement(args); }, args.out.numel() == 0);
  if (!ctx) return ctx.status();
  return fn_(*ctx, detail::FillLaunch{args.out, bits_});
}

}  // namespace dynamic
}  // namespace baracuda
