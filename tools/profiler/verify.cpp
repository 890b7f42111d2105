#include "verify.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "elements.hpp"

namespace baracuda::profiler {

void Verification::merge(const Verification& o) {
  max_abs_error = std::max(max_abs_error, o.max_abs_error);
  max_rel_error = std::max(max_rel_error, o.max_rel_error);
  mismatches += o.mismatches;
  checked += o.checked;
  if (problem.empty()) problem = o.problem;
}

Verification compare(const HostTensor& out, const HostTensor& ref, Comparison how, int64_t summed_terms) {
  Verification v;
  if (out.kind != ref.kind || !(out.shape == ref.shape)) {
    v.problem = "output and reference differ in kind or shape";
    return v;
  }
  const ElementKind kind = out.kind;
  const bool integer = !is_floating(kind) && !is_fp8(kind) && kind != ElementKind::Bool;
  Tolerance tol = how == Comparison::QuantizedStep && integer ? Tolerance{0, 1, false} : default_tolerance(kind);
  if (!integer) tol.atol *= std::sqrt(static_cast<double>(std::max<int64_t>(summed_terms, 1)));
  const int64_t n = out.numel();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t oi = out.offset(i), ri = ref.offset(i);
    const bool out_nan = is_nan_at(kind, out.bytes.data(), oi);
    const bool ref_nan = is_nan_at(kind, ref.bytes.data(), ri);
    ++v.checked;
    if (out_nan || ref_nan) {
      if (out_nan != ref_nan) {
        v.max_abs_error = std::numeric_limits<double>::infinity();
        ++v.mismatches;
      }
      continue;
    }
    const double a = load_element(kind, out.bytes.data(), oi);
    const double b = load_element(kind, ref.bytes.data(), ri);
    const double err = a == b ? 0.0 : std::fabs(a - b);  // a == b also covers equal infinities
    v.max_abs_error = std::max(v.max_abs_error, err);
    if (b != 0 && std::isfinite(b)) v.max_rel_error = std::max(v.max_rel_error, err / std::fabs(b));
    const bool bad = how == Comparison::Exact
                         ? element_bits_at(kind, out.bytes.data(), oi) != element_bits_at(kind, ref.bytes.data(), ri)
                         : !(err <= tol.atol + tol.rtol * std::fabs(b));
    if (bad) ++v.mismatches;
  }
  return v;
}

}  // namespace baracuda::profiler
