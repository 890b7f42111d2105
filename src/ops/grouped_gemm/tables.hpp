// Internal: the grouped_gemm family's launch record (the one contract between plan.cpp, which validates the
// operands and fills it, and every backend) and its dispatch tables (one per device: the host reference, sim,
// cuda), indexed by [input kind][output kind]; the offsets' kind is a field of the record.
#pragma once

#include <cstdint>
#include <string_view>
#include <type_traits>

#include "baracuda/core/element.hpp"
#include "baracuda/ops/grouped_gemm.hpp"
#include "core/exec_context.hpp"
#include "device/dispatch_table.hpp"

namespace baracuda::detail {

/// `y[r, :] = x[r, :]·W[e]ᵀ (+ bias[e, :])` for r in group e's effective rows (grouped_gemm.hpp). Element strides:
/// x (r, k) at `x + r·x_row + k`, W (e, n, k) at `w + e·w_group + n·w_row + k`, bias (e, n) at
/// `bias + e·bias_group + n`, y (r, n) at `y + r·y_row + n`. Validated by the plan (kinds, shapes, strides,
/// y overlaps nothing); the offsets' values are data and are not.
struct GroupedGemmLaunch {
  int64_t groups = 1, total_m = 0, n = 0, k = 0;
  ElementKind xw = ElementKind::F16;      ///< x and w
  ElementKind y_kind = ElementKind::F16;  ///< y and bias
  bool offsets64 = true;                  ///< s64 offsets (else s32)
  const void* x = nullptr;
  int64_t x_row = 0;
  const void* w = nullptr;
  int64_t w_group = 0, w_row = 0;
  const void* offsets = nullptr;
  const void* bias = nullptr;  ///< nullptr: no bias
  int64_t bias_group = 0;
  void* y = nullptr;
  int64_t y_row = 0;
};

struct GroupedGemmTables {
  KindPairTable<GroupedGemmFn> gemm{};
  KindPairTable<std::string_view> variant{};
};

/// Adds `make(std::type_identity<TX>{}, std::type_identity<TY>{})` for each kind pair the family serves:
/// f16 → f16 | f32, bf16 → bf16 | f32 (the tensor-core kernel on sim and cuda), f32 → f32 (the CUDA-core one).
template <class Make>
constexpr void for_each_grouped_gemm_kinds(Make make) {
  make(std::type_identity<__half>{}, std::type_identity<__half>{});
  make(std::type_identity<__half>{}, std::type_identity<float>{});
  make(std::type_identity<__nv_bfloat16>{}, std::type_identity<__nv_bfloat16>{});
  make(std::type_identity<__nv_bfloat16>{}, std::type_identity<float>{});
  make(std::type_identity<float>{}, std::type_identity<float>{});
}

/// The effective offset of group boundary e from the running maximum so far (grouped_gemm.hpp): `raw` clamped to
/// [0, total_m], then at least `running`.
constexpr int64_t grouped_gemm_effective(int64_t raw, int64_t running, int64_t total_m) {
  const int64_t c = raw < 0 ? 0 : (raw > total_m ? total_m : raw);
  return c > running ? c : running;
}

}  // namespace baracuda::detail

// reference: host.cpp; sim and cuda: the kernel unit device.cu
BARACUDA_DECLARE_DEVICE_TABLE(detail::GroupedGemmTables, grouped_gemm_tables)
