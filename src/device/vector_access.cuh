/// \file
/// \brief 16-byte vector loads and stores: `AlignedVector<T, V>` is V elements of T in a 16-byte-aligned
/// aggregate, so a load or store of it compiles to 128-bit global accesses (`ld.global.v4`).
#pragma once

#include "sim/compat.cuh"

#include <cstddef>
#include <cstring>
#include <type_traits>

BARACUDA_DEVICE_NAMESPACE_BEGIN

/// V elements of T; sizeof(T)·V must be a multiple of 16 bytes.
template <class T, int V>
struct alignas(16) AlignedVector {
  static_assert(sizeof(T) * V % 16 == 0, "AlignedVector must span whole 16-byte words");
  T val[V];
};

#if BARACUDA_SIM
// Sim: the vector moves as 16-byte integer loads and stores, which the emulator's load/store instrumentation
// sees (initcheck, racecheck: src/sim/emu/memcheck.hpp); an aggregate copy compiles to a memcpy it does not.

/// Loads V elements from a 16-byte-aligned address.
template <int V, class T>
__device__ __forceinline__ AlignedVector<T, V> load_vector(const T* p) {
  AlignedVector<T, V> v;
  const auto* words = reinterpret_cast<const unsigned __int128*>(p);
  for (std::size_t w = 0; w < sizeof(v) / 16; ++w) {
    const unsigned __int128 x = words[w];
    std::memcpy(reinterpret_cast<unsigned char*>(&v) + 16 * w, &x, 16);
  }
  return v;
}

/// Stores V elements to a 16-byte-aligned address.
template <int V, class T>
__device__ __forceinline__ void store_vector(T* p, const AlignedVector<T, V>& v) {
  auto* words = reinterpret_cast<unsigned __int128*>(p);
  for (std::size_t w = 0; w < sizeof(v) / 16; ++w) {
    unsigned __int128 x;
    std::memcpy(&x, reinterpret_cast<const unsigned char*>(&v) + 16 * w, 16);
    words[w] = x;
  }
}
#else
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
#endif

BARACUDA_DEVICE_NAMESPACE_END
