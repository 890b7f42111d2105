// Internal: the gemm family's dispatch tables (one per device: the host reference, sim, cuda), indexed by
// [input kind][output kind]. The slots are cuBLASLt's kind combinations (gemm.hpp); the rest stay empty and
// select reports them as Unsupported. The cuBLASLt SKU is not a table entry: plan.cpp creates it at select.
#pragma once

#include <string_view>

#include "baracuda/core/element.hpp"
#include "baracuda/ops/gemm.hpp"
#include "core/exec_context.hpp"
#include "device/dispatch_table.hpp"
#include "ops/gemm/launch.hpp"

namespace baracuda::detail {

/// Each device's functions and the SKU variant each one is (a static string: KernelSku keeps a string_view).
struct GemmTables {
  KindPairTable<GemmFn> gemm{};
  KindPairTable<std::string_view> variant{};
};

/// Adds `make(std::type_identity<TAB>{}, std::type_identity<TCD>{})` for each of cuBLASLt's kind combinations:
/// f16 → f16 | f32, bf16 → bf16 | f32, f32 → f32, f64 → f64.
template <class Make>
constexpr void for_each_gemm_kinds(Make make) {
  make(std::type_identity<__half>{}, std::type_identity<__half>{});
  make(std::type_identity<__half>{}, std::type_identity<float>{});
  make(std::type_identity<__nv_bfloat16>{}, std::type_identity<__nv_bfloat16>{});
  make(std::type_identity<__nv_bfloat16>{}, std::type_identity<float>{});
  make(std::type_identity<float>{}, std::type_identity<float>{});
  make(std::type_identity<double>{}, std::type_identity<double>{});
}

}  // namespace baracuda::detail

// reference: host.cpp; sim and cuda: the kernel unit device.cu
BARACUDA_DECLARE_DEVICE_TABLE(detail::GemmTables, gemm_tables)
