// Internal: the gemm family's dispatch tables (one per device: the host reference, sim, cuda), indexed by
// [input kind][output kind]. The slots are cuBLASLt's kind combinations (gemm.hpp); the rest stay empty and
// select reports them as Unsupported. The cuBLASLt SKU is not a table entry: plan.cpp creates it at select.
#pragma once

#include <cstdint>
#include <string_view>

#include "baracuda/core/element.hpp"
#include "baracuda/ops/gemm.hpp"
#include "core/exec_context.hpp"
#include "device/dispatch_table.hpp"
#include "ops/gemm/launch.hpp"

namespace baracuda::detail {

/// Each device's functions and the SKU variant each one is (a static string: KernelSku keeps a string_view):
/// `gemm` the kernel of choice (the host: the reference; sim and cuda: the tensor-core kernel for f16/bf16,
/// the CUDA-core kernel otherwise), `simt` the CUDA-core kernel (sim and cuda; empty on the host), which takes
/// the shapes `gemm_tc_takes` leaves out.
struct GemmTables {
  KindPairTable<GemmFn> gemm{};
  KindPairTable<std::string_view> variant{};
  KindPairTable<GemmFn> simt{};
};

/// Whether the tensor-core kernel takes a problem: M, N and K at most 2^31 − 256 (its 32-bit indices, past the
/// edge tiles too: tc_kernels.cuh's `tensor_core`).
constexpr bool gemm_tc_takes(int64_t m, int64_t n, int64_t k) {
  constexpr int64_t kMax = (int64_t{1} << 31) - 256;
  return m <= kMax && n <= kMax && k <= kMax;
}

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
