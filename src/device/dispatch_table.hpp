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
/// and `add_kind_entries<Fn, Entry>` / `add_kind_pair_entries` to fill tables of several ops.
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

/// Adds `Entry<T>::fn` at `kind_of<T>` for every T of `List`.
template <class Fn, template <class> class Entry, class List>
constexpr void add_kind_entries(KindTable<Fn>& table, List list) {
  for_each_type(list, [&]<class T>() { table[kind_index(kind_of<T>)] = Entry<T>::fn; });
}

/// A table with `make(std::type_identity<T>{})` at `kind_of<T>` for every T of the list: `make` is a generic
/// lambda `[]<class T>(std::type_identity<T>) { return &fn<T>; }` naming the family's function template
/// (which no template parameter can name).
template <class Fn, class Make, class... Ts>
constexpr KindTable<Fn> kind_table(type_list<Ts...>, Make make) {
  KindTable<Fn> t{};
  ((t[kind_index(kind_of<Ts>)] = make(std::type_identity<Ts>{})), ...);
  return t;
}

/// Adds `Entry<TIn, TOut>::fn` at [kind_of<TIn>][kind_of<TOut>] for every pair of `InList` × `OutList`.
template <class Fn, template <class, class> class Entry, class InList, class OutList>
constexpr void add_kind_pair_entries(KindPairTable<Fn>& table, InList in_list, OutList out_list) {
  for_each_type(in_list, [&]<class TIn>() {
    for_each_type(out_list, [&]<class TOut>() {
      table[kind_index(kind_of<TIn>)][kind_index(kind_of<TOut>)] = Entry<TIn, TOut>::fn;
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

/// The accessor on all three devices: `reference::NAME()` (the family's host.cpp) and the kernel unit's two
/// (BARACUDA_DECLARE_KERNEL_TABLE): the three tables that table_for_device chooses from.
#define BARACUDA_DECLARE_DEVICE_TABLE(TYPE, NAME) \
  namespace baracuda::reference {                 \
  const ::baracuda::TYPE& NAME();                 \
  }                                               \
  BARACUDA_DECLARE_KERNEL_TABLE(TYPE, NAME)
