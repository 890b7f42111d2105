/// \file
/// \brief CUDA atomic functions on std::atomic_ref, for exactly the overloads CUDA declares (device scope;
/// relaxed ordering like the hardware's atomics, with __threadfence* as seq_cst fences). A failing atomicCAS
/// yields to the other threads of the block, so that an intra-block spin lock can make progress. Every
/// atomic tells racecheck of itself (note_atomic: on global memory it orders blocks, memcheck.hpp) and is
/// not recorded as a load or store.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <atomic>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "state.hpp"

namespace baracuda::simt {
namespace detail {

inline constexpr std::memory_order kAtomicOrder = std::memory_order_relaxed;

/// An atomic access to *p for one expression (`aref(p)->fetch_add(...)`): racecheck is told of the atomic
/// and paused until the expression ends, because the optimizer may turn an atomic into an atomic load or
/// store, which the instrumentation would record as a plain one.
template <class T>
class AtomicAccess {
 public:
  explicit AtomicAccess(T* p) : ref_((note_atomic(p), *p)) {}
  std::atomic_ref<T>* operator->() { return &ref_; }

 private:
  std::atomic_ref<T> ref_;  // constructed (note_atomic) before the pause
  MemcheckPause pause_;
};

template <class T>
inline AtomicAccess<T> aref(T* p) {
  return AtomicAccess<T>(p);
}

// Bit copies that also work for __half2 / __nv_bfloat162 (not trivially copyable: they declare assignment).
template <class To, class From>
inline To bits_as(const From& from) {
  static_assert(sizeof(To) == sizeof(From));
  To to;
  std::memcpy(static_cast<void*>(&to), static_cast<const void*>(&from), sizeof(To));
  return to;
}

// Read-modify-write with an arbitrary function, on the raw bits of a (possibly 16-bit) value.
template <class Bits, class T, class F>
inline T rmw(T* address, F f) {
  static_assert(sizeof(Bits) == sizeof(T));
  note_atomic(address);
  const MemcheckPause pause;  // the loop's load is the atomic's
  std::atomic_ref<Bits> a(*reinterpret_cast<Bits*>(address));
  Bits old_bits = a.load(kAtomicOrder);
  for (;;) {
    const T old = bits_as<T>(old_bits);
    const Bits new_bits = bits_as<Bits>(static_cast<T>(f(old)));
    if (a.compare_exchange_weak(old_bits, new_bits, kAtomicOrder, kAtomicOrder)) return old;
  }
}

template <class T>
inline T cas(T* address, T compare, T val) {
  T expected = compare;
  // (the pause of aref ends with the condition: the yield is the kernel's)
  if (!aref(address)->compare_exchange_strong(expected, val, kAtomicOrder, kAtomicOrder)) yield();
  return expected;
}

// A subnormal float as the sign-preserving zero of flush-to-zero arithmetic.
inline float flush_subnormal(float x) { return std::fpclassify(x) == FP_SUBNORMAL ? std::copysign(0.0f, x) : x; }

}  // namespace detail

namespace device_api {

// ---- add / sub ----
inline int atomicAdd(int* a, int v) { return detail::aref(a)->fetch_add(v, detail::kAtomicOrder); }
inline unsigned int atomicAdd(unsigned int* a, unsigned int v) {
  return detail::aref(a)->fetch_add(v, detail::kAtomicOrder);
}
inline unsigned long long atomicAdd(unsigned long long* a, unsigned long long v) {
  return detail::aref(a)->fetch_add(v, detail::kAtomicOrder);
}
/// Guide, "Floating-Point Standard": atomic single-precision adds on global memory run in flush-to-zero mode
/// (FADD.F32.FTZ.RN: subnormal operands and results become zeros of their sign); on shared memory they keep
/// subnormals.
inline float atomicAdd(float* a, float v) {
  if (detail::in_shared(a, sizeof(float))) return detail::aref(a)->fetch_add(v, detail::kAtomicOrder);
  return detail::rmw<unsigned>(a, [v](float o) {
    return detail::flush_subnormal(detail::flush_subnormal(o) + detail::flush_subnormal(v));
  });
}
inline double atomicAdd(double* a, double v) { return detail::aref(a)->fetch_add(v, detail::kAtomicOrder); }
inline __half atomicAdd(__half* a, __half v) {
  return detail::rmw<unsigned short>(a, [v](__half o) { return __hadd(o, v); });
}
inline __nv_bfloat16 atomicAdd(__nv_bfloat16* a, __nv_bfloat16 v) {
  return detail::rmw<unsigned short>(a, [v](__nv_bfloat16 o) { return __hadd(o, v); });
}
inline __half2 atomicAdd(__half2* a, __half2 v) {
  return detail::rmw<unsigned int>(a, [v](__half2 o) { return __hadd2(o, v); });
}
inline __nv_bfloat162 atomicAdd(__nv_bfloat162* a, __nv_bfloat162 v) {
  return detail::rmw<unsigned int>(a, [v](__nv_bfloat162 o) { return __hadd2(o, v); });
}
/// sm_90 vector float atomics: atomic per element.
inline float2 atomicAdd(float2* a, float2 v) {
  return float2{atomicAdd(&a->x, v.x), atomicAdd(&a->y, v.y)};
}
inline float4 atomicAdd(float4* a, float4 v) {
  return float4{atomicAdd(&a->x, v.x), atomicAdd(&a->y, v.y), atomicAdd(&a->z, v.z), atomicAdd(&a->w, v.w)};
}
inline int atomicSub(int* a, int v) { return detail::aref(a)->fetch_sub(v, detail::kAtomicOrder); }
inline unsigned int atomicSub(unsigned int* a, unsigned int v) {
  return detail::aref(a)->fetch_sub(v, detail::kAtomicOrder);
}

// ---- exchange / compare-and-swap ----
inline int atomicExch(int* a, int v) { return detail::aref(a)->exchange(v, detail::kAtomicOrder); }
inline unsigned int atomicExch(unsigned int* a, unsigned int v) {
  return detail::aref(a)->exchange(v, detail::kAtomicOrder);
}
inline unsigned long long atomicExch(unsigned long long* a, unsigned long long v) {
  return detail::aref(a)->exchange(v, detail::kAtomicOrder);
}
inline float atomicExch(float* a, float v) { return detail::aref(a)->exchange(v, detail::kAtomicOrder); }
inline int atomicCAS(int* a, int compare, int v) { return detail::cas(a, compare, v); }
inline unsigned int atomicCAS(unsigned int* a, unsigned int compare, unsigned int v) {
  return detail::cas(a, compare, v);
}
inline unsigned long long atomicCAS(unsigned long long* a, unsigned long long compare, unsigned long long v) {
  return detail::cas(a, compare, v);
}
inline unsigned short atomicCAS(unsigned short* a, unsigned short compare, unsigned short v) {
  return detail::cas(a, compare, v);
}

// ---- min / max ----
#define BARACUDA_SIM_MINMAX_ATOMIC(T)                                                      \
  inline T atomicMin(T* a, T v) { return detail::rmw<T>(a, [v](T o) { return v < o ? v : o; }); } \
  inline T atomicMax(T* a, T v) { return detail::rmw<T>(a, [v](T o) { return v > o ? v : o; }); }
BARACUDA_SIM_MINMAX_ATOMIC(int)
BARACUDA_SIM_MINMAX_ATOMIC(unsigned int)
BARACUDA_SIM_MINMAX_ATOMIC(long long)
BARACUDA_SIM_MINMAX_ATOMIC(unsigned long long)
#undef BARACUDA_SIM_MINMAX_ATOMIC

// ---- wrapping increment / decrement ----
/// old >= v ? 0 : old + 1
inline unsigned int atomicInc(unsigned int* a, unsigned int v) {
  return detail::rmw<unsigned int>(a, [v](unsigned int o) { return o >= v ? 0u : o + 1u; });
}
/// (old == 0 || old > v) ? v : old - 1
inline unsigned int atomicDec(unsigned int* a, unsigned int v) {
  return detail::rmw<unsigned int>(a, [v](unsigned int o) { return (o == 0u || o > v) ? v : o - 1u; });
}

// ---- bitwise ----
#define BARACUDA_SIM_BITWISE_ATOMIC(T)                                                                  \
  inline T atomicAnd(T* a, T v) { return detail::aref(a)->fetch_and(v, detail::kAtomicOrder); }         \
  inline T atomicOr(T* a, T v) { return detail::aref(a)->fetch_or(v, detail::kAtomicOrder); }           \
  inline T atomicXor(T* a, T v) { return detail::aref(a)->fetch_xor(v, detail::kAtomicOrder); }
BARACUDA_SIM_BITWISE_ATOMIC(int)
BARACUDA_SIM_BITWISE_ATOMIC(unsigned int)
BARACUDA_SIM_BITWISE_ATOMIC(long long)
BARACUDA_SIM_BITWISE_ATOMIC(unsigned long long)
#undef BARACUDA_SIM_BITWISE_ATOMIC

}  // namespace device_api
}  // namespace baracuda::simt
