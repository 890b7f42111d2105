/// \file
/// \brief 16-byte vector loads and stores: `AlignedVector<T, V>` is V elements of T in a 16-byte-aligned
/// aggregate, so a load or store of it compiles to 128-bit global accesses (`ld.global.v4`).
#pragma once

#include "sim/compat.cuh"

#include <type_traits>

BARACUDA_DEVICE_NAMESPACE_BEGIN

/// V elements of T; sizeof(T)·V must be a multiple of 16 bytes.
template <class T, int V>
struct alignas(16) AlignedVector {
  static_assert(sizeof(T) * V % 16 == 0, "AlignedVector must span whole 16-byte words");
  T val[V];
};

/// Loads V elements from a 16-byte-aligned address.
template <int V, class T>
__device__ __forceinline__ AlignedVector<T, V> load_vector(const T* p) {
  return *reinterpret_cast<const AlignedVector<T, V>*>(p);
}

/// Stores V elements to a 16-byte-aligned address.
template <int V, class T>
__device__ __forceinline__ void store_vector(T* p, const AlignedVector<T, V>& v) {
  *reinterpret_cast<AlignedVector<T, V>*>(p) = v;
}

BARACUDA_DEVICE_NAMESPACE_END
