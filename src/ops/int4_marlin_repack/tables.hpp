// Internal: the int4_marlin_repack family's launch record and dispatch tables (one per device: host
// reference, sim, cuda). Checkpoint (GPTQ / AWQ) int4 tensors → the Marlin tensors of Int4MarlinGemmPlan.
#pragma once

#include <array>

#include "baracuda/core/dyn_tensor.hpp"
#include "baracuda/core/element.hpp"
#include "baracuda/core/status.hpp"
#include "core/exec_context.hpp"
#include "device/dispatch_table.hpp"

namespace baracuda::detail {

/// One validated repack (include/baracuda/ops/int4_marlin_repack.hpp for the layouts). Every tensor is dense.
/// - `awq`: the checkpoint is AWQ's (`qweight` [K, N/8], `qzeros` [G, N/8] read into `out_zeros`); else
///   GPTQ's (`qweight` [K/8, N], symmetric: no zero points).
/// - `perm`: s32 [K] (GPTQ act-order) or empty; Marlin row i is checkpoint row perm[i].
/// - `grouped`: Marlin's 64-entry scale permutation (G > 1), else the 32-entry one.
/// - `out_scales` has the table slot's kind (f16 or bf16); `scales` is f16.
struct Int4RepackLaunch {
  int64_t k = 0, n = 0, groups = 0;
  bool awq = false;
  bool grouped = false;
  ConstDynTensor qweight, qzeros, scales, perm;  ///< read
  DynTensor out_qweight, out_scales, out_zeros;  ///< written
};
using Int4RepackFn = Status (*)(const ExecContext&, const Int4RepackLaunch&);

/// By the kind of out_scales (Int4RepackScaleTypes; other slots empty).
struct Int4RepackTables {
  std::array<Int4RepackFn, kNumElementKinds> repack{};
};

/// The kinds of the repacked scales: the W4A16 GEMM's activation kinds.
using Int4RepackScaleTypes = type_list<__half, __nv_bfloat16>;

/// A device's table: `repack(std::type_identity<T>{})` for each T of Int4RepackScaleTypes (a generic lambda
/// naming the device's function template, as add_kind_fns takes).
template <class Make>
constexpr Int4RepackTables make_int4_repack_tables(Make repack) {
  Int4RepackTables t{};
  add_kind_fns(t.repack, Int4RepackScaleTypes{}, repack);
  return t;
}

}  // namespace baracuda::detail

// reference: host.cpp; sim and cuda: the kernel unit device.cu
BARACUDA_DECLARE_DEVICE_TABLE(detail::Int4RepackTables, int4_marlin_repack_tables)
