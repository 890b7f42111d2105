// Internal: the skeleton every family's select and run share, so that a plan.cpp keeps only what is its
// own (descriptor rules, the table key, workspace sizing, its messages). Only plan.cpp files include this;
// the kernel objects, which include exec_context.hpp and dispatch.hpp, do not depend on it.
//
//   select:  <the family's descriptor checks>
//            auto dev = detail::select_device(kPlan, stream, pref, tables_for);   // backend, then the table
//            if (!dev) return dev.error();
//            fn = <the family's slot of *dev->table>; if (fn == nullptr) return <its Unsupported message>;
//            p.binding_ = dev->bind(category, op, element, aux_element, precision, variant);
//   run:     auto ctx = detail::begin_run(kPlan, binding_, stream, [&] { return can_implement(…); }, empty);
//            if (!ctx) return ctx.status();                                  // a failure, or OK when empty
//            return fn_(*ctx, <the launch record>);
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "baracuda/core/plan.hpp"
#include "baracuda/core/sku.hpp"
#include "baracuda/core/status.hpp"
#include "baracuda/core/stream.hpp"
#include "core/exec_context.hpp"
#include "core/validate.hpp"
#include "device/dispatch_table.hpp"

namespace baracuda::detail {

/// What select found for the stream's device: the backend serving it and the family's table there.
template <class Table>
struct DeviceSelection {
  BackendKind backend = BackendKind::Host;
  DeviceKind device = DeviceKind::Host;
  int device_index = 0;
  int sm = 0;
  const Table* table = nullptr;

  /// The binding a selected plan keeps: its SKU, from the family's fields (KernelSku's, in its order) and the
  /// stream's sm and the backend, and the device the plan may run on.
  PlanBinding bind(OpCategory category, std::string_view op, ElementKind element,
                   std::optional<ElementKind> aux_element, MathPrecision precision, std::string_view variant,
                   std::optional<LayoutKind> layout = std::nullopt,
                   std::optional<EpilogueKind> epilogue = std::nullopt) const {
    return PlanBinding{KernelSku{category, op, element, aux_element, layout, epilogue, sm, backend, precision, variant},
                       device, device_index, true};
  }
};

/// The precision elementwise arithmetic on `k` runs in (convert::opmath_t): f64 for f64, f32 for the rest.
constexpr MathPrecision opmath_precision(ElementKind k) {
  return k == ElementKind::F64 ? MathPrecision::F64 : MathPrecision::F32;
}
/// The precision of an elementwise op that computes integers exactly and floats in opmath.
constexpr MathPrecision elementwise_precision(ElementKind k) {
  return is_floating(k) ? opmath_precision(k) : MathPrecision::Exact;
}

/// `InvalidProblem` unless each of a descriptor's element kinds is a valid ElementKind (they come from the
/// caller, and index the dispatch tables).
Status check_kinds(std::string_view plan, std::initializer_list<ElementKind> kinds);

/// `Unsupported` "<plan>: <in> -> <out> is not supported (<supported>)".
Error unsupported_pair(std::string_view plan, ElementKind in, ElementKind out, std::string_view supported);

/// The kinds a table row serves, e.g. "f16, bf16, f32, f64" ("none" when empty).
template <class Fn>
std::string kinds_of(const KindTable<Fn>& row) {
  std::string r;
  for (size_t k = 0; k < kNumElementKinds; ++k)
    if (row[k] != nullptr) r += (r.empty() ? "" : ", ") + std::string(to_string(static_cast<ElementKind>(k)));
  return r.empty() ? "none" : r;
}

/// `Unsupported` "<plan>: <op> does not support element kind <k> (it supports <the row's kinds>)".
template <class Fn>
Error unsupported_kind(std::string_view plan, std::string_view op, ElementKind element, const KindTable<Fn>& row) {
  return Error::unsupported(std::string(plan) + ": " + std::string(op) + " does not support element kind " +
                            std::string(to_string(element)) + " (it supports " + kinds_of(row) + ")");
}

/// The `kind` entry of a dispatch table (kind checked by check_kinds), or unsupported_kind naming `op`.
template <class Fn>
Result<Fn> kind_entry(std::string_view plan, std::string_view op, const KindTable<Fn>& table, ElementKind kind) {
  if (const Fn fn = table[kind_index(kind)]) return fn;
  return unsupported_kind(plan, op, kind, table);
}

/// The [in][out] entry of a kind-pair dispatch table (kinds checked by check_kinds), or unsupported_pair.
template <class Fn>
Result<Fn> pair_entry(std::string_view plan, const KindPairTable<Fn>& table, ElementKind in, ElementKind out,
                      std::string_view supported) {
  if (const Fn fn = table[kind_index(in)][kind_index(out)]) return fn;
  return unsupported_pair(plan, in, out, supported);
}

/// The backend for `stream` under `pref` (resolve_bespoke_backend), then `tables_for(stream.device())`, the
/// family's per-device table accessor (nullptr on cuda in a build without its kernels: no_cuda_kernels).
/// The two failures keep this order in every family.
template <class TablesFor>
auto select_device(std::string_view plan, const Stream& stream, const PlanPreference& pref, TablesFor&& tables_for)
    -> Result<DeviceSelection<std::remove_cvref_t<decltype(*tables_for(stream.device()))>>> {
  using Table = std::remove_cvref_t<decltype(*tables_for(stream.device()))>;
  auto backend = resolve_bespoke_backend(plan, stream, pref);
  if (!backend) return backend.error();
  const Table* table = tables_for(stream.device());
  if (table == nullptr) return no_cuda_kernels(plan);
  return DeviceSelection<Table>{*backend, stream.device(), stream.device_index(), stream.sm(), table};
}

/// A plan with a library backend (cuBLASLt) beside its bespoke kernels: select tries the library first on cuda
/// unless the preference names another backend. `device_pref` is the preference select_device then gets (a
/// request for the library cleared, so that the table of the cuda device is found).
struct LibraryFirst {
  bool try_library = false;
  PlanPreference device_pref;
};
inline LibraryFirst library_first(const Stream& stream, const PlanPreference& pref, BackendKind library) {
  LibraryFirst r{stream.device() == DeviceKind::Cuda && (!pref.prefer_backend || *pref.prefer_backend == library),
                 pref};
  if (r.try_library) r.device_pref.prefer_backend.reset();
  return r;
}
/// After the library backend could not be built (`e`): nullopt where select falls back to the bespoke kernels
/// (the library answered Unsupported and the preference did not ask for it), else the error select returns.
inline std::optional<Error> library_failure(std::string_view plan, const PlanPreference& pref, const Error& e) {
  if (!pref.prefer_backend && e.code == ErrorCode::Unsupported) return std::nullopt;
  return Error{e.code, std::string(plan) + ": the cuBLASLt backend: " + e.message};
}

/// select's start for a plan over one shape: the descriptor's shape and element kinds are valid, then
/// select_device.
template <class TablesFor>
auto select_elementwise(std::string_view plan, const Stream& stream, const PlanPreference& pref, const Shape& shape,
                        std::initializer_list<ElementKind> kinds, TablesFor&& tables_for)
    -> decltype(select_device(plan, stream, pref, tables_for)) {
  BARACUDA_TRY(check_shape(plan, "the descriptor's shape", shape));
  BARACUDA_TRY(check_kinds(plan, kinds));
  return select_device(plan, stream, pref, tables_for);
}

/// What begin_run found: the checks passed and there is work (`*this` converts to true; launch with `**this`),
/// or the status run returns now: the first failure, or OK for an empty problem (nothing is launched).
class RunStart {
 public:
  RunStart(Status s) : status_(std::move(s)) {}                     // NOLINT: a failure, or OK when empty
  RunStart(Result<ExecContext> ctx) {                                // NOLINT
    if (ctx) ctx_ = *ctx;
    else status_ = ctx.error();
  }
  explicit operator bool() const { return ctx_.has_value(); }
  const ExecContext& operator*() const { return *ctx_; }
  const Status& status() const { return status_; }

 private:
  Status status_;
  std::optional<ExecContext> ctx_;
};

/// `InvalidProblem` "<plan>: run on a plan that select did not produce", or check_same_device.
Status check_bound(std::string_view plan, const PlanBinding& binding, const Stream& stream);

/// run's prologue, in the order every plan reports failures: the plan came from select and `stream` is on its
/// device (check_bound), then `check_args()` (the plan's can_implement, and check_workspace where it takes a
/// workspace); then, unless `empty`, the launch context.
template <class CheckArgs>
RunStart begin_run(std::string_view plan, const PlanBinding& binding, const Stream& stream, CheckArgs&& check_args,
                   bool empty = false) {
  BARACUDA_TRY(check_bound(plan, binding, stream));
  BARACUDA_TRY(check_args());
  if (empty) return Status{};
  return make_exec_context(stream);
}

/// The whole run of a plan with one kernel-table entry: begin_run, then `fn(ctx, launch)` unless the checks
/// failed or the problem is `empty`. `launch` is the launch record (one that only copies views and descriptor
/// values), or a callable that makes it after the checks (one that reads the checked arguments).
template <class CheckArgs, class Fn, class Launch>
Status run_entry(std::string_view plan, const PlanBinding& binding, const Stream& stream, CheckArgs&& check_args,
                 bool empty, Fn fn, const Launch& launch) {
  const RunStart start = begin_run(plan, binding, stream, check_args, empty);
  if (!start) return start.status();
  if constexpr (std::is_invocable_v<const Launch&>)
    return fn(*start, launch());
  else
    return fn(*start, launch);
}

/// The workspace a plan's run was given and what the plan needs of it: the arguments of check_workspace.
struct WorkspaceNeed {
  const Workspace& given;
  size_t bytes;
  size_t align;
  std::string_view contents;
  std::initializer_list<NamedTensor> tensors;
};

/// begin_run of a plan that takes a workspace: check_workspace after `check_args()`, before the empty test.
template <class CheckArgs>
RunStart begin_run(std::string_view plan, const PlanBinding& binding, const Stream& stream, CheckArgs&& check_args,
                   const WorkspaceNeed& ws, bool empty) {
  return begin_run(
      plan, binding, stream,
      [&]() -> Status {
        BARACUDA_TRY(check_args());
        return check_workspace(plan, ws.given, ws.bytes, ws.align, ws.contents, ws.tensors);
      },
      empty);
}

}  // namespace baracuda::detail

/// The per-device table accessor of a family whose tables are `reference::NAME()`, `device_sim::NAME()` and,
/// with the cuda kernels, `device_cuda::NAME()`: the `tables_for` of select_device.
#define BARACUDA_DEVICE_TABLES(NAME)                                                                     \
  [](::baracuda::DeviceKind d) {                                                                         \
    return ::baracuda::detail::table_for_device(d, ::baracuda::reference::NAME(),                        \
                                                ::baracuda::device_sim::NAME(), BARACUDA_CUDA_TABLE(NAME)); \
  }
