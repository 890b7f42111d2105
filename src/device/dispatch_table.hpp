/// \file
/// \brief Compile-time dispatch tables: a family's catalog names a type list, and these builders turn it
/// into a `constexpr std::array` of function pointers indexed by `ElementKind` (or by a pair of kinds).
/// A slot no catalog entry fills stays `nullptr`, which `select` reports as `Unsupported`.
///
/// Usage (in a family's kernels.cuh, host.cpp), for a family whose function is one template over T:
/// ```
/// constexpr detail::FillTable t = detail::kind_table<detail::FillFn>(
///     FillTypes{}, []<class T>(std::type_identity<T>) { return &fill_launch<T>; });
/// ```
/// and `add_kind_fns` / `add_kind_pair_fns` (the same lambdas, over one or two type lists) to fill tables of
/// several ops.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>

#include "baracuda/core/element.hpp"
#include "baracuda/core/status.hpp"
#include "baracuda/core/stream.hpp"

namespace baracuda::detail {

constexpr size_t kind_index(ElementKind k) { return static_cast<size_t>(k); }

template <class Fn>
using KindTable = std::array<Fn, kNumElementKinds>;
template <class Fn>
using KindPairTable = std::array<std::array<Fn, kNumElementKinds>, kNumElementKinds>;

/// Sets `table[kind_of<T>] = make(std::type_identity<T>{})` for every T of `list`: `make` is a generic lambda
/// `[]<class T>(std::type_identity<T>) { return &fn<T>; }` naming the family's function template (which no
/// template parameter can name). A `make` that returns `Fn{}` for some T leaves that slot empty.
template <class Fn, class List, class Make>
constexpr void add_kind_fns(KindTable<Fn>& table, List list, Make make) {
  for_each_type(list, [&]<class T>() { table[kind_index(kind_of<T>)] = make(std::type_identity<T>{}); });
}

/// A catalog enumerator as a type, for a `make` lambda that serves every op of a family:
/// `[]<BinaryOp Op, class T>(EnumTag<Op>, std::type_identity<T>) { return &fn<Op, T>; }`.
template <auto V>
struct EnumTag {};

/// `make` with its first argument bound to `EnumTag<V>`: the one-argument lambda add_kind_fns takes.
template <auto V, class Make>
constexpr auto bind_tag(Make make) {
  return [make]<class T>(std::type_identity<T> type) { return make(EnumTag<V>{}, type); };
}

/// A table with add_kind_fns's entries only.
template <class Fn, class List, class Make>
constexpr KindTable<Fn> kind_table(List list, Make make) {
  KindTable<Fn> t{};
  add_kind_fns(t, list, make);
  return t;
}

/// Sets `[kind_of<TIn>][kind_of<TOut>]` to `make(std::type_identity<TIn>{}, std::type_identity<TOut>{})` for
/// every pair of `in_list` × `out_list`.
template <class Fn, class InList, class OutList, class Make>
constexpr void add_kind_pair_fns(KindPairTable<Fn>& table, InList in_list, OutList out_list, Make make) {
  for_each_type(in_list, [&]<class TIn>() {
    for_each_type(out_list, [&]<class TOut>() {
      table[kind_index(kind_of<TIn>)][kind_index(kind_of<TOut>)] =
          make(std::type_identity<TIn>{}, std::type_identity<TOut>{});
    });
  });
}

/// The device-kind choice every plan shares: the host reference's table, the sim kernels' table, or the
/// cuda kernels' table (`cuda` is nullptr when the library was built without them: BARACUDA_CUDA_TABLE).
template <class Table>
constexpr const Table* table_for_device(DeviceKind d, const Table& host, const Table& sim,
                                        std::type_identity_t<const Table*> cuda) {
  switch (d) {
    case DeviceKind::Host:
      return &host;
    case DeviceKind::Sim:
      return &sim;
    case DeviceKind::Cuda:
      return cuda;
  }
  return nullptr;
}

/// What `select` answers on the cuda device when table_for_device found no table: `Unsupported`, naming
/// `plan`, because the library was built without the cuda kernels.
inline Error no_cuda_kernels(std::string_view plan) {
  return Error::unsupported(std::string(plan) +
                            ": this library was built without CUDA kernels (BARACUDA_CUDA_KERNELS=OFF); "
                            "use the host or sim device");
}

}  // namespace baracuda::detail

/// `&device_cuda::NAME()`, a family's cuda-kernel table, or nullptr when the library was built without the
/// cuda kernels (the functions are then not declared): the `cuda` argument of table_for_device.
#if BARACUDA_HAVE_CUDA_KERNELS
#define BARACUDA_CUDA_TABLE(NAME) (&::baracuda::device_cuda::NAME())
#else
#define BARACUDA_CUDA_TABLE(NAME) nullptr
#endif

/// `__VA_ARGS__` when the library has the cuda kernels, nothing otherwise (a macro cannot contain `#if`).
#if BARACUDA_HAVE_CUDA_KERNELS
#define BARACUDA_IF_CUDA_KERNELS(...) __VA_ARGS__
#else
#define BARACUDA_IF_CUDA_KERNELS(...)
#endif

/// Declares `const TYPE& NAME()`, a family's table accessor, for the two devices of its kernel unit:
/// `device_sim::NAME()` and, when the library has the cuda kernels, `device_cuda::NAME()`; the unit, compiled
/// once per device, defines both. TYPE is named from namespace baracuda (`detail::FillTable`). At global
/// scope, after TYPE.
#define BARACUDA_DECLARE_KERNEL_TABLE(TYPE, NAME)                                           \
  namespace baracuda {                                                                      \
  inline namespace device_sim {                                                             \
  const ::baracuda::TYPE& NAME();                                                           \
  }                                                                                         \
  BARACUDA_IF_CUDA_KERNELS(inline namespace device_cuda { const ::baracuda::TYPE& NAME(); }) \
  }

/// Defines `const TYPE& NAME()`, a family's table accessor (TYPE named from namespace baracuda): the table is
/// `__VA_ARGS__`, a constant expression evaluated at compile time, kept for the program's lifetime.
#define BARACUDA_DEFINE_TABLE(TYPE, NAME, ...)            \
  const ::baracuda::TYPE& NAME() {                         \
    static constexpr ::baracuda::TYPE table = __VA_ARGS__; \
    return table;                                          \
  }

/// BARACUDA_DEFINE_TABLE for a kind table of one function template: `&TEMPLATE<T>` at `kind_of<T>` for every T
/// of the type list TYPES (TYPE and TYPES named from namespace baracuda: `detail::FillTable`, `detail::FillTypes`).
#define BARACUDA_DEFINE_KIND_TABLE(TYPE, NAME, TYPES, TEMPLATE)                  \
  BARACUDA_DEFINE_TABLE(TYPE, NAME,                                              \
                        ::baracuda::detail::kind_table<::baracuda::TYPE::value_type>( \
                            ::baracuda::TYPES{}, []<class T>(std::type_identity<T>) { return &TEMPLATE<T>; }))

/// The accessor on all three devices: `reference::NAME()` (the family's host.cpp) and the kernel unit's two
/// (BARACUDA_DECLARE_KERNEL_TABLE): the three tables that table_for_device chooses from.
#define BARACUDA_DECLARE_DEVICE_TABLE(TYPE, NAME) \
  namespace baracuda::reference {                 \
  const ::baracuda::TYPE& NAME();                 \
  }                                               \
  BARACUDA_DECLARE_KERNEL_TABLE(TYPE, NAME)
