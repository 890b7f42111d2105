/// \file
/// \brief Emulation of the inline PTX that the wrapper layer (src/device/ptx/) issues: mma.sync (integer,
/// f16/bf16 and FP8), ldmatrix,
/// cp.async and the scalar bit/conversion instructions. The warp-wide instructions are built on
/// warp_collective(): every lane deposits its fragment registers (or its row address), and the op
/// assembles the whole matrices from the fragment layouts of the PTX ISA, computes, and scatters the result
/// fragments. See docs/ptx.md for what is exact and what is not.
///
/// Fragment notation (PTX ISA, "Matrix Fragments for mma.m16n8k16 / mma.m16n8k32"): g = lane >> 2,
/// t = lane & 3. Element i of a fragment lives in register i / 2 (16-bit types) or i / 4 (8-bit types),
/// the lowest index in the lowest bits.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "device/convert.cuh"  // the library's FP8 decode (after sim/compat.cuh: its device_sim namespace)
#include "warp.hpp"

namespace baracuda::simt::ptx {

inline constexpr unsigned kFullWarp = 0xffffffffu;

/// Reports (strict mode) a .sync.aligned instruction that not all 32 lanes executed. The absent lanes'
/// inputs read as zero and their outputs are not written.
inline void require_full_warp(const WarpGroup& g, const char* name) {
  if (g.mask != kFullWarp)
    g.violation(std::string(name) + ": executed by lanes mask " + std::to_string(g.mask) +
                ", but the instruction needs all 32 lanes (absent lanes read as zero)");
}

// ---- mma.sync.aligned.m16n8k32.row.col.s32.{s8,u8}.{s8,u8}.s32 --------------------------------------

/// Where element i (0..3) of lane `lane`'s accumulator fragment (C and D of every m16n8 mma.sync) sits in
/// the 16×8 tile: rows lane/4 and lane/4 + 8, columns 2·(lane % 4) and 2·(lane % 4) + 1.
struct AccPosition {
  int m, n;
};
inline AccPosition acc_position(int lane, int i) {
  return {i < 2 ? (lane >> 2) : (lane >> 2) + 8, 2 * (lane & 3) + (i & 1)};
}

/// Where element i (0..15) of lane `lane`'s A fragment of an 8-bit m16n8k32 (integer or FP8) sits in the
/// 16×32 tile: row g for i in [0,4) and [8,12), else g + 8; column 4t + (i & 3), + 16 for i >= 8.
inline AccPosition k32_a_position(int lane, int i) {
  const int g = lane >> 2, t = lane & 3;
  return {(i < 4 || (i >= 8 && i < 12)) ? g : g + 8, 4 * t + (i & 3) + (i >= 8 ? 16 : 0)};
}
/// The k of element i (0..7) of lane `lane`'s B fragment (column lane / 4): 4t + (i & 3), + 16 for i >= 4.
inline int k32_b_k(int lane, int i) { return 4 * (lane & 3) + (i & 3) + (i >= 4 ? 16 : 0); }

struct MmaI8In {
  unsigned a[4];
  unsigned b[2];
  int c[4];
};
struct MmaI8Out {
  int d[4];
};

/// One element of an 8-bit fragment register: byte `i & 3` of `reg`, sign- or zero-extended.
template <bool Signed>
constexpr int i8_element(unsigned reg, int i) {
  const unsigned byte = (reg >> (8 * (i & 3))) & 0xffu;
  return Signed ? static_cast<int>(static_cast<std::int8_t>(static_cast<std::uint8_t>(byte))) : static_cast<int>(byte);
}

template <bool ASigned, bool BSigned>
struct MmaM16n8k32Op {
  void operator()(const WarpGroup& g) const {
    require_full_warp(g, "mma.sync.m16n8k32");
    int A[16][32] = {}, B[32][8] = {};
    unsigned C[16][8] = {};
    for (int l = 0; l < 32; ++l) {
      if (!g.has(l)) continue;
      const auto& in = g.input<MmaI8In>(l);
      for (int i = 0; i < 16; ++i) {
        const auto [row, col] = k32_a_position(l, i);
        A[row][col] = i8_element<ASigned>(in.a[i / 4], i);
      }
      for (int i = 0; i < 8; ++i) B[k32_b_k(l, i)][l >> 2] = i8_element<BSigned>(in.b[i / 4], i);
      for (int i = 0; i < 4; ++i) {
        const auto [m, n] = acc_position(l, i);
        C[m][n] = static_cast<unsigned>(in.c[i]);
      }
    }
    for (int l = 0; l < 32; ++l) {
      if (!g.has(l)) continue;
      auto& out = g.output<MmaI8Out>(l);
      for (int i = 0; i < 4; ++i) {
        const auto [m, n] = acc_position(l, i);
        unsigned acc = C[m][n];  // int32 arithmetic wraps around, as the hardware's .s32 accumulate does
        for (int k = 0; k < 32; ++k) acc += static_cast<unsigned>(A[m][k] * B[k][n]);
        out.d[i] = static_cast<int>(acc);
      }
    }
  }
};

/// One thread's part of an m16n8 mma.sync: its fragments into `In`, the warp's product by `op`, its D out.
template <class In, class Out, class Acc, class Op>
inline void run_mma(Acc (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2], const Acc (&c)[4], Op op,
                    const char* name) {
  In in;
  std::memcpy(in.a, a, sizeof in.a);
  std::memcpy(in.b, b, sizeof in.b);
  std::memcpy(in.c, c, sizeof in.c);
  Out out{};
  warp_collective(kFullWarp, &in, &out, op, name);
  std::memcpy(d, out.d, sizeof out.d);
}

template <bool ASigned, bool BSigned>
inline void mma_m16n8k32(int (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2], const int (&c)[4]) {
  run_mma<MmaI8In, MmaI8Out>(d, a, b, c, MmaM16n8k32Op<ASigned, BSigned>{}, "mma.sync.m16n8k32");
}

// ---- mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.{f16,bf16}.f32 -------------------------------

struct MmaF16In {
  unsigned a[4];
  unsigned b[2];
  float c[4];
};
struct MmaF16Out {
  float d[4];
};

/// One element of a 16-bit fragment register (half `i & 1`) as f32 (exact).
template <bool BF16>
inline float f16_element(unsigned reg, int i) {
  const auto bits = static_cast<unsigned short>((reg >> (16 * (i & 1))) & 0xffffu);
  if constexpr (BF16) {
    const unsigned f = static_cast<unsigned>(bits) << 16;
    float x;
    std::memcpy(&x, &f, sizeof x);
    return x;
  } else {
    __half_raw r;
    r.x = bits;
    return __half2float(__half(r));
  }
}

/// Accumulation: d = c, then d = fma(a[m][k], b[k][n], d) for k = 0..15 in order, in f32 with
/// round-to-nearest-even. Each product is exact in f32 (normal inputs), so every step rounds once. The
/// hardware's internal order and intermediate precision are not specified: results agree bit for bit only
/// when every partial sum is exact (see docs/ptx.md).
template <bool BF16>
struct MmaM16n8k16Op {
  void operator()(const WarpGroup& g) const {
    require_full_warp(g, "mma.sync.m16n8k16");
    float A[16][16] = {}, B[16][8] = {}, C[16][8] = {};
    for (int l = 0; l < 32; ++l) {
      if (!g.has(l)) continue;
      const auto& in = g.input<MmaF16In>(l);
      const int gi = l >> 2, t = l & 3;
      for (int i = 0; i < 8; ++i) {
        const int row = (i == 0 || i == 1 || i == 4 || i == 5) ? gi : gi + 8;
        const int col = 2 * t + (i & 1) + (i >= 4 ? 8 : 0);
        A[row][col] = f16_element<BF16>(in.a[i / 2], i);
      }
      for (int i = 0; i < 4; ++i) B[2 * t + (i & 1) + (i >= 2 ? 8 : 0)][gi] = f16_element<BF16>(in.b[i / 2], i);
      for (int i = 0; i < 4; ++i) {
        const auto [m, n] = acc_position(l, i);
        C[m][n] = in.c[i];
      }
    }
    for (int l = 0; l < 32; ++l) {
      if (!g.has(l)) continue;
      auto& out = g.output<MmaF16Out>(l);
      for (int i = 0; i < 4; ++i) {
        const auto [m, n] = acc_position(l, i);
        float acc = C[m][n];
        for (int k = 0; k < 16; ++k) acc = std::fmaf(A[m][k], B[k][n], acc);
        out.d[i] = acc;
      }
    }
  }
};

template <bool BF16>
inline void mma_m16n8k16(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2], const float (&c)[4]) {
  run_mma<MmaF16In, MmaF16Out>(d, a, b, c, MmaM16n8k16Op<BF16>{}, "mma.sync.m16n8k16");
}

// ---- mma.sync.aligned.m16n8k32.row.col.f32.{e4m3,e5m2}.{e4m3,e5m2}.f32 ------------------------------

/// One element of an FP8 fragment register (byte `i & 3`) as f32, exact, through the library's FP8 decode
/// (device/convert.cuh). e4m3 (OCP "fn"): S.1111.111 is NaN and there is no infinity; e5m2: IEEE specials.
template <bool E5M2>
inline float fp8_element(unsigned reg, int i) {
  const auto byte = static_cast<__nv_fp8_storage_t>((reg >> (8 * (i & 3))) & 0xffu);
  using T = std::conditional_t<E5M2, __nv_fp8_e5m2, __nv_fp8_e4m3>;
  return ::baracuda::convert::to_float(::baracuda::convert::fp8_of_storage<T>(byte));
}

/// The fragment layout is the 8-bit integer m16n8k32's; the accumulation is the f16/bf16 one's: d = c, then
/// d = fma(a[m][k], b[k][n], d) for k = 0..31 in order, in f32 with round-to-nearest-even. Every e4m3/e5m2
/// product is exact in f32 (at most 8 significant bits, magnitudes in [2^-32, 2^32], subnormal inputs
/// included), so every step rounds once, and NaN and infinities follow IEEE 754 (inf · 0 and inf - inf give
/// NaN). The hardware accumulates with fewer bits than f32 (docs/ptx.md): results agree bit for bit only
/// when every partial sum is exact in that narrower accumulator.
template <bool AE5M2, bool BE5M2>
struct MmaM16n8k32Fp8Op {
  void operator()(const WarpGroup& g) const {
    require_full_warp(g, "mma.sync.m16n8k32.fp8");
    float A[16][32] = {}, B[32][8] = {}, C[16][8] = {};
    for (int l = 0; l < 32; ++l) {
      if (!g.has(l)) continue;
      const auto& in = g.input<MmaF16In>(l);
      for (int i = 0; i < 16; ++i) {
        const auto [row, col] = k32_a_position(l, i);
        A[row][col] = fp8_element<AE5M2>(in.a[i / 4], i);
      }
      for (int i = 0; i < 8; ++i) B[k32_b_k(l, i)][l >> 2] = fp8_element<BE5M2>(in.b[i / 4], i);
      for (int i = 0; i < 4; ++i) {
        const auto [m, n] = acc_position(l, i);
        C[m][n] = in.c[i];
      }
    }
    for (int l = 0; l < 32; ++l) {
      if (!g.has(l)) continue;
      auto& out = g.output<MmaF16Out>(l);
      for (int i = 0; i < 4; ++i) {
        const auto [m, n] = acc_position(l, i);
        float acc = C[m][n];
        for (int k = 0; k < 32; ++k) acc = std::fmaf(A[m][k], B[k][n], acc);
        out.d[i] = acc;
      }
    }
  }
};

/// The fragments of the f32-accumulating mma (MmaF16In/MmaF16Out) carry FP8 registers just as well.
template <bool AE5M2, bool BE5M2>
inline void mma_m16n8k32_fp8(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2], const float (&c)[4]) {
  run_mma<MmaF16In, MmaF16Out>(d, a, b, c, MmaM16n8k32Fp8Op<AE5M2, BE5M2>{}, "mma.sync.m16n8k32.fp8");
}

// ---- ldmatrix.sync.aligned.m8n8.{x1,x2,x4}{,.trans}.shared.b16 --------------------------------------

struct LdmatrixIn {
  const void* row;
};
struct LdmatrixOut {
  unsigned r[4];
};

/// Matrix j (j < N) has its 8 rows (16 bytes each) at the addresses of lanes 8j..8j+7; the other lanes'
/// addresses are not read. Register j of lane l gets row l/4, columns 2(l%4) and 2(l%4)+1 (the first in the
/// low half); with .trans, column l/4 of rows 2(l%4) and 2(l%4)+1.
template <int N, bool Trans>
struct LdmatrixOp {
  void operator()(const WarpGroup& g) const {
    require_full_warp(g, "ldmatrix");
    unsigned short M[4][8][8] = {};
    for (int j = 0; j < N; ++j)
      for (int r = 0; r < 8; ++r) {
        const int l = 8 * j + r;
        if (!g.has(l)) continue;
        const void* p = g.input<LdmatrixIn>(l).row;
        if (reinterpret_cast<std::uintptr_t>(p) % 16 != 0)
          g.violation("ldmatrix: lane " + std::to_string(l) + " gives a row address that is not 16-byte aligned");
        if (!detail::in_shared(p, 16))
          g.violation("ldmatrix: lane " + std::to_string(l) + " gives a row address outside shared memory");
        std::memcpy(M[j][r], p, 16);
      }
    for (int l = 0; l < 32; ++l) {
      if (!g.has(l)) continue;
      auto& out = g.output<LdmatrixOut>(l);
      const int q = l / 4, c = 2 * (l % 4);
      for (int j = 0; j < N; ++j) {
        const unsigned lo = Trans ? M[j][c][q] : M[j][q][c];
        const unsigned hi = Trans ? M[j][c + 1][q] : M[j][q][c + 1];
        out.r[j] = lo | (hi << 16);
      }
    }
  }
};

template <int N, bool Trans>
inline void ldmatrix(unsigned (&r)[N], const void* row) {
  // racecheck sees each row as the 16-byte read of the lane that gives its address (lanes 0..8N−1), so a copy into a
  // tile that another warp still reads (a stage refilled before the barrier that frees it) is a WAR.
  if (lane_id() < 8 * N) detail::note_race_read(row, 16);
  LdmatrixIn in{row};
  LdmatrixOut out{};
  warp_collective(kFullWarp, &in, &out, LdmatrixOp<N, Trans>{}, "ldmatrix");
  for (int j = 0; j < N; ++j) r[j] = out.r[j];
}

// ---- cp.async ---------------------------------------------------------------------------------------

/// cp.async: the copy lands at the thread's cp.async.wait_group that retires it (detail::cp_async_issue), so a
/// stage read before its wait holds its old bytes, as it may on a GPU.
inline void cp_async(void* dst, const void* src, int cp_size, int src_size) {
  detail::cp_async_issue(dst, src, cp_size, src_size);
}

// ---- scalar instructions ----------------------------------------------------------------------------

/// cvt.rn.f16.f32: round to nearest even, overflow to infinity, NaN to the canonical NaN 0x7fff.
inline unsigned short cvt_rn_f16_f32(float x) {
  if (std::isnan(x)) return 0x7fffu;
  const __half h = __float2half_rn(x);
  return static_cast<__half_raw>(h).x;
}

/// cvt.rn.bf16.f32: round to nearest even, overflow to infinity, NaN to the canonical NaN 0x7fff.
inline unsigned short cvt_rn_bf16_f32(float x) {
  if (std::isnan(x)) return 0x7fffu;
  unsigned u;
  std::memcpy(&u, &x, sizeof u);
  u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest even on the 16 dropped bits (inf stays inf)
  return static_cast<unsigned short>(u >> 16);
}

/// ex2.approx.ftz.f32: 2^x in f32 with a subnormal input read as zero and a subnormal result flushed to +0; −inf
/// gives +0, +inf gives +inf, NaN gives NaN. The value is std::exp2's (correctly rounded on the libm we build with,
/// or within its own bound), not the hardware's approximation: the two can differ in the last bits (docs/ptx.md).
inline float ex2_approx_ftz(float x) {
  if (std::fpclassify(x) == FP_SUBNORMAL) x = 0.0f;
  const float y = std::exp2(x);
  return std::fpclassify(y) == FP_SUBNORMAL ? 0.0f : y;
}

/// prmt.b32 (default mode): byte i of the result is selected by nibble i of `c`: bits [2:0] pick one of the
/// 8 bytes of {b, a} (a's bytes 0-3, b's bytes 4-7); bit 3 set replicates that byte's sign bit instead.
inline unsigned prmt(unsigned a, unsigned b, unsigned c) {
  const unsigned long long bytes = (static_cast<unsigned long long>(b) << 32) | a;
  unsigned d = 0;
  for (int i = 0; i < 4; ++i) {
    const unsigned sel = (c >> (4 * i)) & 0xfu;
    unsigned byte = static_cast<unsigned>(bytes >> (8 * (sel & 7u))) & 0xffu;
    if (sel & 8u) byte = (byte & 0x80u) ? 0xffu : 0u;
    d |= byte << (8 * i);
  }
  return d;
}

/// lop3.b32: bit j of the result is bit (a_j << 2 | b_j << 1 | c_j) of `lut`.
inline unsigned lop3(unsigned a, unsigned b, unsigned c, unsigned lut) {
  unsigned d = 0;
  for (int j = 0; j < 32; ++j) {
    const unsigned idx = (((a >> j) & 1u) << 2) | (((b >> j) & 1u) << 1) | ((c >> j) & 1u);
    d |= ((lut >> idx) & 1u) << j;
  }
  return d;
}

}  // namespace baracuda::simt::ptx
