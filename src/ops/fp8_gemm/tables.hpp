// Internal: the fp8_gemm family's dispatch tables (one per device: the host reference, sim, cuda), indexed by [A's
// kind][D's kind]; B's kind, the scaling and the bias kind are run-time fields of the launch record (one kernel
// instance serves them, branching once per block or per element where they matter). The slots are the header's kinds;
// the rest stay empty. The cuBLASLt SKU is not a table entry: plan.cpp creates it at select.
#pragma once

#include <string_view>
#include <type_traits>

#include "baracuda/core/element.hpp"
#include "baracuda/ops/fp8_gemm.hpp"
#include "core/exec_context.hpp"
#include "device/dispatch_table.hpp"
#include "ops/fp8_gemm/launch.hpp"

namespace baracuda::detail {

struct Fp8GemmTables {
  KindPairTable<Fp8GemmFn> gemm{};
  KindPairTable<std::string_view> variant{};
};

/// Adds `make(std::type_identity<TA>{}, std::type_identity<TD>{})` for A e4m3 or e5m2 and each output kind.
template <class Make>
constexpr void for_each_fp8_gemm_kinds(Make make) {
  const auto outputs = [&]<class TA>(std::type_identity<TA> a) {
    make(a, std::type_identity<__half>{});
    make(a, std::type_identity<__nv_bfloat16>{});
    make(a, std::type_identity<float>{});
    make(a, std::type_identity<__nv_fp8_e4m3>{});
    make(a, std::type_identity<__nv_fp8_e5m2>{});
  };
  outputs(std::type_identity<__nv_fp8_e4m3>{});
  outputs(std::type_identity<__nv_fp8_e5m2>{});
}

}  // namespace baracuda::detail

// reference: host.cpp; sim and cuda: the kernel unit device.cu
BARACUDA_DECLARE_DEVICE_TABLE(detail::Fp8GemmTables, fp8_gemm_tables)
