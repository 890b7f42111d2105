/// \file
/// \brief CUDA warp intrinsics on top of warp_collective(), with the exact PTX semantics of shfl.sync (including
/// width < 32), vote, match and redux. Same names and overloads as the CUDA headers.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "warp.hpp"

namespace baracuda::simt {
namespace detail {

enum class ShflMode { Idx, Up, Down, Bfly };

/// Source lane of shfl.sync.{idx,up,down,bfly} per the PTX ISA: b[4:0] is the lane/offset operand, c packs
/// the clamp value c[4:0] and the segment mask c[12:8]. Returns `lane` itself when the source is out of
/// range (pval false), as the hardware does.
constexpr unsigned shfl_source_lane(ShflMode mode, unsigned lane, unsigned b, unsigned c) {
  const unsigned bval = b & 31u, cval = c & 31u, segmask = (c >> 8) & 31u;
  const unsigned max_lane = (lane & segmask) | (cval & ~segmask);
  const unsigned min_lane = lane & segmask;
  int j = 0;
  bool p = false;
  switch (mode) {
    case ShflMode::Up:
      j = static_cast<int>(lane) - static_cast<int>(bval);
      p = j >= static_cast<int>(max_lane);
      break;
    case ShflMode::Down:
      j = static_cast<int>(lane + bval);
      p = j <= static_cast<int>(max_lane);
      break;
    case ShflMode::Bfly:
      j = static_cast<int>(lane ^ bval);
      p = j <= static_cast<int>(max_lane);
      break;
    case ShflMode::Idx:
      j = static_cast<int>(min_lane | (bval & ~segmask & 31u));
      p = j <= static_cast<int>(max_lane);
      break;
  }
  return p ? static_cast<unsigned>(j) : lane;
}

inline const char* shfl_name(ShflMode m) {
  switch (m) {
    case ShflMode::Idx: return "__shfl_sync";
    case ShflMode::Up: return "__shfl_up_sync";
    case ShflMode::Down: return "__shfl_down_sync";
    case ShflMode::Bfly: return "__shfl_xor_sync";
  }
  return "shfl";
}

template <std::size_t N>
struct ShflIn {
  unsigned char value[N];
  unsigned b;
  unsigned c;
};

// One op type per (mode, size): lanes shuffling an int and a float in the same instruction agree.
template <ShflMode M, std::size_t N>
struct ShflOp {
  void operator()(const WarpGroup& g) const {
    int bad = 0, first_lane = 0, first_src = 0;
    for (int l = 0; l < 32; ++l) {
      if (!g.has(l)) continue;
      const auto& in = g.input<ShflIn<N>>(l);
      unsigned j = shfl_source_lane(M, static_cast<unsigned>(l), in.b, in.c);
      if (!g.has(static_cast<int>(j))) {  // undefined on the GPU: the emulator returns the lane's own value
        if (bad++ == 0) first_lane = l, first_src = static_cast<int>(j);
        j = static_cast<unsigned>(l);
      }
      std::memcpy(g.out[l], g.input<ShflIn<N>>(static_cast<int>(j)).value, N);
    }
    if (bad != 0)
      g.violation(std::string(shfl_name(M)) + ": lane " + std::to_string(first_lane) + " reads lane " +
                  std::to_string(first_src) + ", which is not in the group (" + std::to_string(bad) +
                  " lanes read outside the group; each gets its own value)");
  }
};

template <ShflMode M, class T>
inline T shfl(unsigned mask, T var, unsigned b, int width, const CallSite& site) {
  constexpr unsigned kUp = M == ShflMode::Up ? 0u : 0x1fu;
  // Guide, "Warp Shuffle Functions": width must be a power of two in [1, warpSize].
  if (width < 1 || width > 32 || (width & (width - 1)) != 0)
    strict_violation("width", std::string(shfl_name(M)) + ": width " + std::to_string(width) +
                                  " is not a power of two in [1, 32] (the result is undefined)");
  ShflIn<sizeof(T)> in;
  std::memcpy(in.value, static_cast<const void*>(&var), sizeof(T));
  in.b = b;
  in.c = (static_cast<unsigned>(32 - width) << 8) | kUp;
  T out;
  warp_collective(mask, &in, &out, ShflOp<M, sizeof(T)>{}, shfl_name(M), site);
  return out;
}

struct VoteIn {
  int pred;
};
struct VoteOut {
  unsigned ballot;
  int uniform;
};
struct VoteOp {
  void operator()(const WarpGroup& g) const {
    unsigned ballot = 0;
    for (int l = 0; l < 32; ++l)
      if (g.has(l) && g.input<VoteIn>(l).pred != 0) ballot |= 1u << l;
    const int uniform = (ballot == 0 || ballot == g.mask) ? 1 : 0;
    for (int l = 0; l < 32; ++l)
      if (g.has(l)) g.output<VoteOut>(l) = VoteOut{ballot, uniform};
  }
};
inline VoteOut vote(unsigned mask, int pred, const char* name, const CallSite& site) {
  VoteIn in{pred};
  VoteOut out{};
  warp_collective(mask, &in, &out, VoteOp{}, name, site);
  return out;
}

struct NoData {};
// bar.warp.sync at different program points rendezvous on sm_70+ (PTX ISA, "bar.warp.sync": the same
// instruction is required only for sm_6x and below).
struct SyncwarpOp {
  static constexpr bool kAnyCallSite = true;
  static constexpr bool kOrdersMemory = true;
  void operator()(const WarpGroup&) const {}
};

template <std::size_t N>
struct MatchOut {
  unsigned mask;
  int all;
};
template <std::size_t N>
struct MatchOp {
  void operator()(const WarpGroup& g) const {
    unsigned all_equal = g.mask;
    for (int l = 0; l < 32; ++l) {
      if (!g.has(l)) continue;
      unsigned m = 0;
      for (int k = 0; k < 32; ++k)
        if (g.has(k) && std::memcmp(g.in[l], g.in[k], N) == 0) m |= 1u << k;
      g.output<MatchOut<N>>(l).mask = m;
      if (m != g.mask) all_equal = 0;
    }
    for (int l = 0; l < 32; ++l)
      if (g.has(l)) g.output<MatchOut<N>>(l).all = all_equal != 0;
  }
};
template <class T>
inline MatchOut<sizeof(T)> match(unsigned mask, T value, const char* name, const CallSite& site) {
  MatchOut<sizeof(T)> out{};
  warp_collective(mask, &value, &out, MatchOp<sizeof(T)>{}, name, site);
  return out;
}

enum class RedOp { Add, Min, Max, And, Or, Xor };
template <RedOp R, class T>
struct ReduceOp {
  void operator()(const WarpGroup& g) const {
    bool first = true;
    T acc{};
    for (int l = 0; l < 32; ++l) {
      if (!g.has(l)) continue;
      const T v = g.input<T>(l);
      if (first) {
        acc = v;
        first = false;
        continue;
      }
      switch (R) {
        case RedOp::Add: acc = static_cast<T>(static_cast<unsigned>(acc) + static_cast<unsigned>(v)); break;
        case RedOp::Min: acc = v < acc ? v : acc; break;
        case RedOp::Max: acc = v > acc ? v : acc; break;
        case RedOp::And: acc = acc & v; break;
        case RedOp::Or: acc = acc | v; break;
        case RedOp::Xor: acc = acc ^ v; break;
      }
    }
    for (int l = 0; l < 32; ++l)
      if (g.has(l)) g.output<T>(l) = acc;
  }
};
template <RedOp R, class T>
inline T reduce(unsigned mask, T value, const char* name, const CallSite& site) {
  T out{};
  warp_collective(mask, &value, &out, ReduceOp<R, T>{}, name, site);
  return out;
}

}  // namespace detail

namespace device_api {

// Every collective takes its call site as a defaulted last parameter (CallSite): lanes at two
// call sites are two collectives (see warp.hpp).
#define BARACUDA_SIM_SITE CallSite site = {}

// ---- shuffles: the overload set of sm_30_intrinsics.h plus cuda_fp16.h / cuda_bf16.h ----
#define BARACUDA_SIM_SHFL(T)                                                                                  \
  inline T __shfl_sync(unsigned mask, T var, int srcLane, int width = 32, BARACUDA_SIM_SITE) {                \
    return detail::shfl<detail::ShflMode::Idx>(mask, var, static_cast<unsigned>(srcLane), width, site);      \
  }                                                                                                           \
  inline T __shfl_up_sync(unsigned mask, T var, unsigned int delta, int width = 32, BARACUDA_SIM_SITE) {      \
    return detail::shfl<detail::ShflMode::Up>(mask, var, delta, width, site);                                 \
  }                                                                                                           \
  inline T __shfl_down_sync(unsigned mask, T var, unsigned int delta, int width = 32, BARACUDA_SIM_SITE) {    \
    return detail::shfl<detail::ShflMode::Down>(mask, var, delta, width, site);                               \
  }                                                                                                           \
  inline T __shfl_xor_sync(unsigned mask, T var, int laneMask, int width = 32, BARACUDA_SIM_SITE) {           \
    return detail::shfl<detail::ShflMode::Bfly>(mask, var, static_cast<unsigned>(laneMask), width, site);    \
  }
BARACUDA_SIM_SHFL(int)
BARACUDA_SIM_SHFL(unsigned int)
BARACUDA_SIM_SHFL(long)
BARACUDA_SIM_SHFL(unsigned long)
BARACUDA_SIM_SHFL(long long)
BARACUDA_SIM_SHFL(unsigned long long)
BARACUDA_SIM_SHFL(float)
BARACUDA_SIM_SHFL(double)
BARACUDA_SIM_SHFL(__half)
BARACUDA_SIM_SHFL(__half2)
BARACUDA_SIM_SHFL(__nv_bfloat16)
BARACUDA_SIM_SHFL(__nv_bfloat162)
#undef BARACUDA_SIM_SHFL

// ---- vote ----
inline unsigned __ballot_sync(unsigned mask, int pred, BARACUDA_SIM_SITE) {
  return detail::vote(mask, pred, "__ballot_sync", site).ballot;
}
inline int __any_sync(unsigned mask, int pred, BARACUDA_SIM_SITE) {
  return detail::vote(mask, pred, "__any_sync", site).ballot != 0;
}
inline int __all_sync(unsigned mask, int pred, BARACUDA_SIM_SITE) {
  // The group may be smaller than the mask (exited lanes); "all" is over the lanes that take part.
  const detail::VoteOut v = detail::vote(mask, pred, "__all_sync", site);
  return pred != 0 && v.uniform;
}
inline int __uni_sync(unsigned mask, int pred, BARACUDA_SIM_SITE) {
  return detail::vote(mask, pred, "__uni_sync", site).uniform;
}

inline void __syncwarp(unsigned mask = 0xffffffffu) {
  detail::NoData in, out;
  warp_collective(mask, &in, &out, detail::SyncwarpOp{}, "__syncwarp");
}

/// The lanes of the warp that are converged with the caller. Emulated as maximal convergence per call site:
/// returns the lanes that call __activemask at this call site once every other lane of the warp has exited
/// or blocked (see docs/sim.md).
inline unsigned __activemask(BARACUDA_SIM_SITE) { return detail::active_mask(site); }

/// n-th set bit of mask counting from base (forward for offset > 0, backward for offset < 0); 0xffffffff if
/// there is none. With offset 0: base if bit base of mask is set, else 0xffffffff (PTX ISA, "fns"). Not a
/// collective.
inline unsigned __fns(unsigned mask, unsigned base, int offset) {
  base &= 31u;
  if (offset == 0) return ((mask >> base) & 1u) != 0 ? base : 0xffffffffu;
  if (offset > 0) {
    for (unsigned i = base; i < 32; ++i)
      if ((mask >> i) & 1u)
        if (--offset == 0) return i;
  } else {
    for (int i = static_cast<int>(base); i >= 0; --i)
      if ((mask >> i) & 1u)
        if (++offset == 0) return static_cast<unsigned>(i);
  }
  return 0xffffffffu;
}

// ---- match (sm_70) ----
#define BARACUDA_SIM_MATCH(T)                                                                    \
  inline unsigned __match_any_sync(unsigned mask, T value, BARACUDA_SIM_SITE) {                  \
    return detail::match(mask, value, "__match_any_sync", site).mask;                            \
  }                                                                                              \
  inline unsigned __match_all_sync(unsigned mask, T value, int* pred, BARACUDA_SIM_SITE) {       \
    const auto r = detail::match(mask, value, "__match_all_sync", site);                         \
    *pred = r.all;                                                                               \
    return r.all ? r.mask : 0u;                                                                  \
  }
BARACUDA_SIM_MATCH(unsigned)
BARACUDA_SIM_MATCH(int)
BARACUDA_SIM_MATCH(unsigned long)
BARACUDA_SIM_MATCH(long)
BARACUDA_SIM_MATCH(unsigned long long)
BARACUDA_SIM_MATCH(long long)
BARACUDA_SIM_MATCH(float)
BARACUDA_SIM_MATCH(double)
#undef BARACUDA_SIM_MATCH

// ---- redux (sm_80): add, min and max for unsigned and int; and, or and xor for unsigned only ----
#define BARACUDA_SIM_REDUCE(name, op, T)                                                    \
  inline T __reduce_##name##_sync(unsigned mask, T value, BARACUDA_SIM_SITE) {              \
    return detail::reduce<detail::RedOp::op>(mask, value, "__reduce_" #name "_sync", site); \
  }
BARACUDA_SIM_REDUCE(add, Add, unsigned)
BARACUDA_SIM_REDUCE(add, Add, int)
BARACUDA_SIM_REDUCE(min, Min, unsigned)
BARACUDA_SIM_REDUCE(min, Min, int)
BARACUDA_SIM_REDUCE(max, Max, unsigned)
BARACUDA_SIM_REDUCE(max, Max, int)
BARACUDA_SIM_REDUCE(and, And, unsigned)
BARACUDA_SIM_REDUCE(or, Or, unsigned)
BARACUDA_SIM_REDUCE(xor, Xor, unsigned)
#undef BARACUDA_SIM_REDUCE
#undef BARACUDA_SIM_SITE

}  // namespace device_api
}  // namespace baracuda::simt
