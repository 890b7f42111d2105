// The fp8_gemm family's bespoke kernel (src/ops/fp8_gemm/kernels.cuh) on the sim device, called directly through
// its table (no plan), so that fp8_gemm_kernel_test checks it against its own f64 reference.
#pragma once

#include <string_view>

#include "baracuda/core/element.hpp"
#include "baracuda/core/status.hpp"
#include "core/exec_context.hpp"
#include "ops/fp8_gemm/launch.hpp"

namespace baracuda::test {

/// The sim table's function for l.a_kind and l.d_kind, run on `l`; `Unsupported` for an empty slot.
Status fp8_gemm_kernel_sim(const detail::ExecContext& ctx, const detail::Fp8GemmLaunch& l);
/// The sim table's variant name for A of kind `a` and D of kind `d` ("" for an empty slot).
std::string_view fp8_gemm_variant_sim(ElementKind a, ElementKind d);

}  // namespace baracuda::test
