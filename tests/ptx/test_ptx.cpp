// PTX wrapper self-tests: every wrapper of src/device/ptx/ runs in a kernel on random, non-uniform inputs,
// and the results are compared bit for bit with values computed here from the PTX ISA definitions (the
// fragment layouts of research/simt-emulation.md §2, written out independently of the emulation). Each test
// runs on the sim device and, when the build has CUDA kernels and a GPU is usable, on the cuda device. The FP8
// mma compares bit for bit where every partial sum is exact, and within a stated bound elsewhere (docs/ptx.md);
// ex2.approx, an approximation, within a stated bound and exactly at its special values.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "baracuda/core/stream.hpp"
#include "core/reference_formats.hpp"
#include "device_param.hpp"
#include "ptx_selftest.hpp"

#ifndef PTXTEST_HAVE_CUDA
#define PTXTEST_HAVE_CUDA 0
#endif

namespace {

using ptxtest::Dev;
using ptxtest::kWarps;
using ptxtest::LaunchError;

// Calls launcher `fn` of the test's device, or skips (cuda without kernels or without a usable GPU).
#if PTXTEST_HAVE_CUDA
#define PTX_CALL(fn, ...) \
  (GetParam() == Dev::Sim ? ptxtest::device_sim::fn(__VA_ARGS__) : ptxtest::device_cuda::fn(__VA_ARGS__))
#else
#define PTX_CALL(fn, ...) ptxtest::device_sim::fn(__VA_ARGS__)
#endif

class Ptx : public ptxtest::DeviceTest {
 protected:
  Ptx() : DeviceTest({PTXTEST_HAVE_CUDA, "built without CUDA kernels (BARACUDA_CUDA_KERNELS=OFF)"}) {}
  std::mt19937 rng{12345};
  unsigned u32() { return static_cast<unsigned>(rng()); }
};

// ---- fragment layouts (PTX ISA, "Matrix Fragments for mma.m16n8k32" and "...m16n8k16") ----------------
// g = groupID = lane / 4, t = threadID_in_group = lane % 4.
int grp(int lane) { return lane / 4; }
int tig(int lane) { return lane % 4; }
// m16n8k32, 8-bit: a0..a15 (register i/4, byte i%4), b0..b7, c0..c3.
int k32_a_row(int lane, int i) { return ((i >= 4 && i < 8) || i >= 12) ? grp(lane) + 8 : grp(lane); }
int k32_a_col(int lane, int i) { return tig(lane) * 4 + (i % 4) + (i >= 8 ? 16 : 0); }
int k32_b_row(int lane, int i) { return tig(lane) * 4 + (i % 4) + (i >= 4 ? 16 : 0); }
// m16n8k16, 16-bit: a0..a7 (register i/2, half i%2), b0..b3.
int k16_a_row(int lane, int i) { return (i == 2 || i == 3 || i == 6 || i == 7) ? grp(lane) + 8 : grp(lane); }
int k16_a_col(int lane, int i) { return tig(lane) * 2 + (i % 2) + (i >= 4 ? 8 : 0); }
int k16_b_row(int lane, int i) { return tig(lane) * 2 + (i % 2) + (i >= 2 ? 8 : 0); }
// Accumulators (both shapes): c0..c3.
int acc_row(int lane, int i) { return i < 2 ? grp(lane) : grp(lane) + 8; }
int acc_col(int lane, int i) { return tig(lane) * 2 + (i % 2); }

std::string where(int w, int lane, int i) {
  return "warp " + std::to_string(w) + " lane " + std::to_string(lane) + " element " + std::to_string(i);
}

// ---- mma.m16n8k32 s8/u8 -----------------------------------------------------------------------------

TEST_P(Ptx, MmaM16n8k32AllSignedness) {
  const int n = kWarps * 32;
  for (int combo = 0; combo < 4; ++combo) {
    const bool as = combo & 1, bs = combo & 2;
    std::vector<unsigned> a(n * 4), b(n * 2);
    std::vector<int> c(n * 4), d(n * 4, 0x5a5a5a5a);
    for (auto& x : a) x = u32();
    for (auto& x : b) x = u32();
    for (int i = 0; i < n * 4; ++i) {
      // Full-range accumulators (near INT_MAX/INT_MIN in part) so the wrap-around of s32 shows.
      c[i] = static_cast<int>(i % 3 == 0 ? 0x7fff0000u + (u32() & 0xffffu) : u32());
    }
    const LaunchError e = PTX_CALL(mma_i8, as, bs, a.data(), b.data(), c.data(), d.data(), kWarps);
    ASSERT_FALSE(e.failed) << e.message;
    auto elem = [](unsigned reg, int i, bool sgn) {
      const unsigned byte = (reg >> (8 * (i % 4))) & 0xff;
      return sgn ? static_cast<long long>(byte) - (byte >= 128 ? 256 : 0) : static_cast<long long>(byte);
    };
    for (int w = 0; w < kWarps; ++w) {
      long long A[16][32], B[32][8], C[16][8];
      for (int lane = 0; lane < 32; ++lane) {
        const int li = w * 32 + lane;
        for (int i = 0; i < 16; ++i) A[k32_a_row(lane, i)][k32_a_col(lane, i)] = elem(a[li * 4 + i / 4], i, as);
        for (int i = 0; i < 8; ++i) B[k32_b_row(lane, i)][grp(lane)] = elem(b[li * 2 + i / 4], i, bs);
        for (int i = 0; i < 4; ++i) C[acc_row(lane, i)][acc_col(lane, i)] = c[li * 4 + i];
      }
      for (int lane = 0; lane < 32; ++lane)
        for (int i = 0; i < 4; ++i) {
          const int m = acc_row(lane, i), nn = acc_col(lane, i);
          long long s = C[m][nn];
          for (int k = 0; k < 32; ++k) s += A[m][k] * B[k][nn];
          const auto expect = static_cast<std::int32_t>(static_cast<std::uint32_t>(s & 0xffffffffLL));
          ASSERT_EQ(expect, d[(w * 32 + lane) * 4 + i]) << (as ? "s8" : "u8") << "." << (bs ? "s8" : "u8") << " "
                                                         << where(w, lane, i);
        }
    }
  }
}

// ---- mma.m16n8k16 f16/bf16 --------------------------------------------------------------------------

unsigned short to_f16_bits(double v) {  // exact for the test's values (small integers times powers of 2)
  int e = 0;
  const double m = std::frexp(std::fabs(v), &e);  // v = m * 2^e, m in [0.5, 1)
  if (v == 0) return 0;
  const unsigned mant = static_cast<unsigned>(std::ldexp(m, 11)) - 1024;  // 11 significant bits
  const unsigned bits = (static_cast<unsigned>(e - 1 + 15) << 10) | mant;
  return static_cast<unsigned short>(bits | (v < 0 ? 0x8000u : 0u));
}
unsigned short to_bf16_bits(double v) {
  const float f = static_cast<float>(v);
  unsigned u;
  std::memcpy(&u, &f, 4);
  return static_cast<unsigned short>(u >> 16);  // exact: the test's values have <= 8 significant bits
}

TEST_P(Ptx, MmaM16n8k16F16AndBf16) {
  const int n = kWarps * 32;
  for (int bf = 0; bf < 2; ++bf) {
    // Values k * 2^e, |k| <= 15, e in [-2, 2]: products are multiples of 2^-4 below 3600 and every partial sum
    // (with c a multiple of 2^-4 below 2^16) is exact in f32, whatever the hardware's summation order.
    std::uniform_int_distribution<int> kd(-15, 15), ed(-2, 2);
    std::vector<double> av(n * 8), bv(n * 4);
    std::vector<unsigned> a(n * 4, 0), b(n * 2, 0);
    std::vector<float> c(n * 4), d(n * 4, -1.f);
    for (int i = 0; i < n * 8; ++i) av[i] = std::ldexp(kd(rng), ed(rng));
    for (int i = 0; i < n * 4; ++i) bv[i] = std::ldexp(kd(rng), ed(rng));
    for (auto& x : c) x = std::ldexp(static_cast<float>(static_cast<int>(u32() % (1u << 21)) - (1 << 20)), -4);
    auto bits = [&](double v) -> unsigned { return bf ? to_bf16_bits(v) : to_f16_bits(v); };
    for (int i = 0; i < n * 8; ++i) a[i / 2] |= bits(av[i]) << (16 * (i % 2));
    for (int i = 0; i < n * 4; ++i) b[i / 2] |= bits(bv[i]) << (16 * (i % 2));
    const LaunchError e = PTX_CALL(mma_f16, bf != 0, a.data(), b.data(), c.data(), d.data(), kWarps);
    ASSERT_FALSE(e.failed) << e.message;
    for (int w = 0; w < kWarps; ++w) {
      double A[16][16], B[16][8], C[16][8];
      for (int lane = 0; lane < 32; ++lane) {
        const int li = w * 32 + lane;
        for (int i = 0; i < 8; ++i) A[k16_a_row(lane, i)][k16_a_col(lane, i)] = av[li * 8 + i];
        for (int i = 0; i < 4; ++i) B[k16_b_row(lane, i)][grp(lane)] = bv[li * 4 + i];
        for (int i = 0; i < 4; ++i) C[acc_row(lane, i)][acc_col(lane, i)] = c[li * 4 + i];
      }
      for (int lane = 0; lane < 32; ++lane)
        for (int i = 0; i < 4; ++i) {
          const int m = acc_row(lane, i), nn = acc_col(lane, i);
          double s = C[m][nn];
          for (int k = 0; k < 16; ++k) s += A[m][k] * B[k][nn];
          const float expect = static_cast<float>(s);
          const float got = d[(w * 32 + lane) * 4 + i];
          ASSERT_EQ(0, std::memcmp(&expect, &got, 4))
              << (bf ? "bf16 " : "f16 ") << where(w, lane, i) << ": expected " << expect << " got " << got;
        }
    }
  }
}

// ---- mma.m16n8k32 e4m3/e5m2 -------------------------------------------------------------------------

// The FP8 mma needs compute capability 8.9+ and code compiled for it: on an sm_89 GPU, a build for "80;90" runs
// its sm_80 code, where the wrapper traps, so the cuda case also asks a kernel which code the device runs.
class PtxFp8 : public ptxtest::DeviceTest {
 protected:
  PtxFp8()
      : DeviceTest({PTXTEST_HAVE_CUDA, "built without CUDA kernels (BARACUDA_CUDA_KERNELS=OFF)", 89, INT_MAX,
                    "mma.sync with e4m3/e5m2 needs compute capability 8.9+"}) {}
  void SetUp() override {
    DeviceTest::SetUp();
    if (IsSkipped() || GetParam() != Dev::Cuda) return;
    int arch = 0;
    const LaunchError e = PTX_CALL(kernel_arch, &arch);
    ASSERT_FALSE(e.failed) << e.message;
    if (arch < 890)
      GTEST_SKIP() << "the device runs the kernels' code for sm_" << arch / 10
                   << " (BARACUDA_CUDA_ARCHS), where the FP8 mma traps; it needs code for sm_89+";
  }
  std::mt19937 rng{2718};
  enum class Case { kSingleProduct, kExactSums, kAllFinite, kSpecials };
  void run(bool a5, bool b5, Case cs);
};

// FP8 codes by the reference formats (core/reference_formats.hpp, written from the OCP definitions; the
// emulation decodes through device/convert.cuh): e4m3 has NaN (S.1111.111) and no infinity, e5m2 IEEE specials.
double fp8_value(unsigned code, bool e5m2) {
  return static_cast<double>(
      baracuda::reference::decode(code, e5m2 ? baracuda::reference::kFormatE5M2 : baracuda::reference::kFormatE4M3));
}
bool fp8_special(unsigned code, bool e5m2) { return !std::isfinite(fp8_value(code, e5m2)); }
/// The codes of finite values of magnitude <= limit (both signs, zeros and subnormals included), or the specials.
std::vector<unsigned> fp8_codes(bool e5m2, double limit, bool specials = false) {
  std::vector<unsigned> v;
  for (unsigned c = 0; c < 256; ++c)
    if (specials ? fp8_special(c, e5m2) : (!fp8_special(c, e5m2) && std::fabs(fp8_value(c, e5m2)) <= limit))
      v.push_back(c);
  return v;
}
/// The exponent of the lowest set bit of a finite non-zero double.
int low_bit_exponent(double x) {
  int e = 0;
  const double m = std::frexp(std::fabs(x), &e);
  return e - 53 + std::countr_zero(static_cast<std::uint64_t>(std::ldexp(m, 53)));
}

struct Fp8Counts {
  int exact = 0, bounded = 0, nan = 0, inf = 0;
};

// One output against its 33 terms (c, then the 32 exact products): NaN when a term is NaN or both infinities
// occur, else the infinity present, else the finite sum S (f64). Where every partial sum, in any order, is exact
// (all terms multiples of the finest term's quantum q and Σ|terms| <= 2^bits · q), bit for bit; otherwise
// |got - S| <= bound · Σ|terms|. Sim: f32 (bits 24) and recursive summation, 32 roundings (bound 33 · 2^-24,
// which also covers the f64 reference's rounding). Hardware: the ~14-bit accumulation reported for Hopper's
// FP8 tensor cores (docs/ptx.md): bits 12, and 2^-6 (33 terms each losing < 2^-12 of the largest).
::testing::AssertionResult check_dot(const double (&terms)[33], float got, bool cuda, Fp8Counts& n) {
  bool nan = false, pinf = false, ninf = false;
  double s = 0, t = 0;
  int qe = INT_MAX;
  for (double x : terms) {
    nan |= std::isnan(x), pinf |= x == INFINITY, ninf |= x == -INFINITY;
    if (!std::isfinite(x)) continue;
    s += x, t += std::fabs(x);
    if (x != 0) qe = std::min(qe, low_bit_exponent(x));
  }
  if (nan || (pinf && ninf)) {
    ++n.nan;
    if (std::isnan(got)) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "expected NaN, got " << got;
  }
  if (pinf || ninf) {
    ++n.inf;
    if (got == (pinf ? INFINITY : -INFINITY)) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "expected " << (pinf ? "+inf" : "-inf") << ", got " << got;
  }
  if (t == 0 || t <= std::ldexp(1.0, qe + (cuda ? 12 : 24))) {
    ++n.exact;
    const float expect = static_cast<float>(s);
    if (std::memcmp(&expect, &got, 4) == 0) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "expected exactly " << expect << ", got " << got;
  }
  ++n.bounded;
  const double bound = (cuda ? std::ldexp(1.0, -6) : 33 * std::ldexp(1.0, -24)) * t;
  if (std::fabs(got - s) <= bound) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "expected " << s << " within " << bound << ", got " << got;
}

void PtxFp8::run(bool a5, bool b5, Case cs) {
  constexpr int kW = 32;  // warps: 512 A rows and 4096 outputs per case
  const bool cuda = GetParam() == Dev::Cuda;
  auto pick = [&](const std::vector<unsigned>& pool) { return pool[rng() % pool.size()]; };
  const std::vector<unsigned> fin_a = fp8_codes(a5, INFINITY), fin_b = fp8_codes(b5, INFINITY);
  const std::vector<unsigned> spec_a = fp8_codes(a5, 0, true), spec_b = fp8_codes(b5, 0, true);
  std::vector<unsigned> nonzero_a;
  for (unsigned c : fin_a)
    if (fp8_value(c, a5) != 0) nonzero_a.push_back(c);
  // Exact sums: |values| <= 1 (e4m3, quantum 2^-9) or 2^-7 (e5m2, quantum 2^-16), subnormals to ten binades up,
  // so 32 products stay below 2^23 quanta of a product (2^-qe) and c below 2^22 of them.
  const std::vector<unsigned> win_a = fp8_codes(a5, a5 ? 0x1p-7 : 1.0), win_b = fp8_codes(b5, b5 ? 0x1p-7 : 1.0);
  const int qe = -(a5 ? 16 : 9) - (b5 ? 16 : 9);
  auto wide_c = [&]() {  // any sign, 24 significant bits, magnitudes 2^-24 .. 2^25
    const float m = 1.0f + static_cast<float>(rng() % (1u << 23)) * 0x1p-23f;
    return (rng() & 1 ? -1.0f : 1.0f) * std::ldexp(m, static_cast<int>(rng() % 49) - 24);
  };
  std::vector<unsigned> am(kW * 16 * 32), bm(kW * 32 * 8);
  std::vector<float> cm(kW * 16 * 8);
  for (int w = 0; w < kW; ++w) {
    for (int m = 0; m < 16; ++m) {
      const int one = static_cast<int>(rng() % 32);
      for (int k = 0; k < 32; ++k) {
        unsigned& x = am[(w * 16 + m) * 32 + k];
        switch (cs) {
          case Case::kSingleProduct: x = k == one ? pick(nonzero_a) : (rng() & 1 ? 0x80u : 0u); break;
          case Case::kExactSums: x = pick(win_a); break;
          case Case::kAllFinite: x = pick(fin_a); break;
          case Case::kSpecials: x = rng() % 128 == 0 ? pick(spec_a) : pick(fin_a); break;
        }
      }
    }
    for (int k = 0; k < 32 * 8; ++k) {
      unsigned& x = bm[w * 32 * 8 + k];
      if (cs == Case::kExactSums) x = pick(win_b);
      else x = cs == Case::kSpecials && rng() % 128 == 0 ? pick(spec_b) : pick(fin_b);
    }
    for (int k = 0; k < 16 * 8; ++k) {
      float& x = cm[w * 16 * 8 + k];
      if (cs == Case::kSingleProduct) x = 0.0f;
      else if (cs == Case::kExactSums)
        x = rng() % 4 == 0 ? 0.0f : std::ldexp(static_cast<float>(static_cast<int>(rng() % (1u << 23)) - (1 << 22)),
                                               qe);
      else if (cs == Case::kSpecials && rng() % 16 == 0)
        x = rng() % 3 == 0 ? NAN : (rng() & 1 ? INFINITY : -INFINITY);
      else x = wide_c();
    }
  }
  // Into the fragments, by this file's transcription of the m16n8k32 8-bit layout.
  std::vector<unsigned> a(kW * 32 * 4, 0), b(kW * 32 * 2, 0);
  std::vector<float> c(kW * 32 * 4), d(kW * 32 * 4, -1.f);
  for (int w = 0; w < kW; ++w)
    for (int lane = 0; lane < 32; ++lane) {
      const int li = w * 32 + lane;
      for (int i = 0; i < 16; ++i)
        a[li * 4 + i / 4] |= am[(w * 16 + k32_a_row(lane, i)) * 32 + k32_a_col(lane, i)] << (8 * (i % 4));
      for (int i = 0; i < 8; ++i)
        b[li * 2 + i / 4] |= bm[(w * 32 + k32_b_row(lane, i)) * 8 + grp(lane)] << (8 * (i % 4));
      for (int i = 0; i < 4; ++i) c[li * 4 + i] = cm[(w * 16 + acc_row(lane, i)) * 8 + acc_col(lane, i)];
    }
  const LaunchError e = PTX_CALL(mma_fp8, a5, b5, a.data(), b.data(), c.data(), d.data(), kW);
  ASSERT_FALSE(e.failed) << e.message;
  Fp8Counts n;
  for (int w = 0; w < kW; ++w)
    for (int lane = 0; lane < 32; ++lane)
      for (int i = 0; i < 4; ++i) {
        const int m = acc_row(lane, i), nn = acc_col(lane, i);
        double terms[33];
        terms[0] = cm[(w * 16 + m) * 8 + nn];
        for (int k = 0; k < 32; ++k)
          terms[1 + k] = fp8_value(am[(w * 16 + m) * 32 + k], a5) * fp8_value(bm[(w * 32 + k) * 8 + nn], b5);
        ASSERT_TRUE(check_dot(terms, d[(w * 32 + lane) * 4 + i], cuda, n)) << where(w, lane, i);
      }
  const int outputs = kW * 16 * 8;
  // Each case checks what it is for: one product per output is exact on every device; the windowed sums are
  // exact under f32 accumulation; the full range reaches the bound; the specials give NaN and infinities.
  if (cs == Case::kSingleProduct) EXPECT_EQ(outputs, n.exact);
  if (cs == Case::kExactSums && !cuda) EXPECT_EQ(outputs, n.exact);
  if (cs == Case::kAllFinite) EXPECT_GT(n.bounded, outputs / 2);
  if (cs == Case::kSpecials) EXPECT_TRUE(n.nan > 0 && n.inf > 0 && n.nan + n.inf < outputs) << n.nan << " " << n.inf;
}

TEST_P(PtxFp8, MmaM16n8k32AllFp8Pairs) {
  for (int pair = 0; pair < 4; ++pair) {
    const bool a5 = pair & 1, b5 = pair & 2;
    const char* names[] = {"single product", "exact sums", "all finite codes", "NaN and infinities"};
    for (int k = 0; k < 4; ++k) {
      SCOPED_TRACE(std::string(a5 ? "e5m2" : "e4m3") + " x " + (b5 ? "e5m2" : "e4m3") + ", " + names[k]);
      ASSERT_NO_FATAL_FAILURE(run(a5, b5, static_cast<Case>(k)));
    }
  }
}

// ---- ldmatrix ---------------------------------------------------------------------------------------

TEST_P(Ptx, LdmatrixX1X2X4Trans) {
  for (int nm : {1, 2, 4})
    for (bool trans : {false, true}) {
      std::vector<unsigned> tile(kWarps * 64 * 4), out(kWarps * 32 * 4, 0);
      std::vector<int> row(kWarps * 32);
      for (auto& x : tile) x = u32();
      for (int w = 0; w < kWarps; ++w) {  // 32 distinct rows out of 64, in random order
        std::vector<int> rows(64);
        for (int r = 0; r < 64; ++r) rows[r] = r;
        std::shuffle(rows.begin(), rows.end(), rng);
        for (int l = 0; l < 32; ++l) row[w * 32 + l] = rows[l];
      }
      const LaunchError e = PTX_CALL(ldmatrix, nm, trans, tile.data(), row.data(), out.data(), kWarps);
      ASSERT_FALSE(e.failed) << e.message;
      // Element (r, col) of matrix j: 16-bit column col of the row that lane 8j + r points at.
      auto element = [&](int w, int j, int r, int col) -> unsigned {
        const int tr = row[w * 32 + 8 * j + r];
        const unsigned word = tile[(w * 64 + tr) * 4 + col / 2];
        return (word >> (16 * (col % 2))) & 0xffffu;
      };
      for (int w = 0; w < kWarps; ++w)
        for (int l = 0; l < 32; ++l)
          for (int j = 0; j < nm; ++j) {
            // Register j of lane l: row l/4, columns 2(l%4), 2(l%4)+1; with .trans, column l/4 of those rows.
            const unsigned lo = trans ? element(w, j, 2 * (l % 4), l / 4) : element(w, j, l / 4, 2 * (l % 4));
            const unsigned hi = trans ? element(w, j, 2 * (l % 4) + 1, l / 4) : element(w, j, l / 4, 2 * (l % 4) + 1);
            ASSERT_EQ(lo | (hi << 16), out[(w * 32 + l) * 4 + j])
                << "x" << nm << (trans ? ".trans" : "") << " warp " << w << " lane " << l << " register " << j;
          }
    }
}

// ---- cp.async ---------------------------------------------------------------------------------------

TEST_P(Ptx, CpAsyncSizesAndZeroFill) {
  constexpr int kT = ptxtest::kCpThreads;
  struct Case {
    int mode, bytes;
  };
  const Case cases[] = {{ptxtest::kCa, 4},      {ptxtest::kCa, 8},      {ptxtest::kCa, 16}, {ptxtest::kCaZfill, 4},
                        {ptxtest::kCaZfill, 8}, {ptxtest::kCaZfill, 16}, {ptxtest::kCg, 16}, {ptxtest::kCgZfill, 16}};
  for (const Case& cs : cases) {
    const bool zfill = cs.mode == ptxtest::kCaZfill || cs.mode == ptxtest::kCgZfill;
    std::vector<unsigned char> src(2 * kT * cs.bytes), out(src.size(), 0x11);
    std::vector<int> size(2 * kT);
    for (auto& x : src) x = static_cast<unsigned char>(u32() | 1u);  // never zero, so a zero fill shows
    for (int i = 0; i < 2 * kT; ++i) size[i] = i % 4 == 0 ? cs.bytes : (i % 4 == 1 ? 0 : static_cast<int>(u32() % (cs.bytes + 1)));
    const LaunchError e = PTX_CALL(cp_async, cs.mode, cs.bytes, src.data(), size.data(), out.data());
    ASSERT_FALSE(e.failed) << e.message;
    for (int op = 0; op < 2 * kT; ++op) {
      const int copied = zfill ? size[op] : cs.bytes;
      for (int k = 0; k < cs.bytes; ++k) {
        const unsigned char expect = k < copied ? src[op * cs.bytes + k] : 0;
        ASSERT_EQ(expect, out[op * cs.bytes + k]) << "mode " << cs.mode << " cp-size " << cs.bytes << " op " << op
                                                  << " src-size " << size[op] << " byte " << k;
      }
    }
  }
}

// ---- cvt.rn.{f16,bf16}x2.f32 ------------------------------------------------------------------------

// Round to nearest, ties to even, by search over every value of the format (independent of bit tricks).
class Format {
 public:
  // Non-negative finite values with bits 0..max_finite, and infinity (bits inf_bits) as the value inf_value:
  // it ranks as "even", so ties at the overflow threshold go to infinity, as IEEE 754 specifies.
  Format(int man_bits, int bias, unsigned max_finite, unsigned inf_bits, double inf_value) : inf_bits_(inf_bits) {
    for (unsigned b = 0; b <= max_finite; ++b) {
      const unsigned e = b >> man_bits, m = b & ((1u << man_bits) - 1);
      const double v = e == 0 ? std::ldexp(m, 1 - bias - man_bits) : std::ldexp((1u << man_bits) + m, int(e) - bias - man_bits);
      vals_.push_back(v);
    }
    vals_.push_back(inf_value);
  }
  unsigned short round(float x) const {
    if (std::isnan(x)) return 0x7fff;  // canonical NaN
    const unsigned sign = std::signbit(x) ? 0x8000u : 0u;
    const double a = std::fabs(static_cast<double>(x));
    if (std::isinf(x)) return static_cast<unsigned short>(sign | inf_bits_);
    const auto it = std::lower_bound(vals_.begin(), vals_.end(), a);
    std::size_t i = static_cast<std::size_t>(it - vals_.begin());
    if (i == vals_.size()) i = vals_.size() - 1;  // beyond the inf "value": infinity
    else if (vals_[i] != a && i > 0) {
      const double lo = vals_[i - 1], hi = vals_[i];
      if (a - lo < hi - a || (a - lo == hi - a && (i - 1) % 2 == 0)) i = i - 1;
    }
    const unsigned bits = i == vals_.size() - 1 ? inf_bits_ : static_cast<unsigned>(i);
    return static_cast<unsigned short>(sign | bits);
  }

 private:
  std::vector<double> vals_;
  unsigned inf_bits_;
};

TEST_P(Ptx, CvtRnF16x2AndBf16x2) {
  static const Format f16(10, 15, 0x7bff, 0x7c00, 65536.0);
  static const Format bf16(7, 127, 0x7f7f, 0x7f80, std::ldexp(1.0, 128));
  std::vector<float> lo, hi;
  auto add = [&](float x) { (lo.size() == hi.size() ? lo : hi).push_back(x); };
  const float specials[] = {0.f, -0.f, 1.f, -1.f, 65504.f, 65519.f, 65520.f, 65536.f, -65520.f, 1e-8f, -1e-8f,
                            std::ldexp(1.f, -24), std::ldexp(1.f, -25), std::ldexp(3.f, -26), std::ldexp(1.f, -14),
                            INFINITY, -INFINITY, NAN, -NAN, 3.3895314e38f, 3.4028235e38f, std::ldexp(1.f, -133),
                            std::ldexp(1.f, -134), std::ldexp(1.f, -126), 1.00390625f, 1.01171875f, 1.0009765625f,
                            1.0029296875f};
  for (float x : specials) add(x);
  // Ties of each format (a representable value plus half an ulp) and random bit patterns of every class.
  for (int i = 0; i < 2000; ++i) {
    const unsigned r = u32();
    unsigned u;
    switch (i % 4) {
      case 0: u = r; break;                                                 // any float, NaN/inf included
      case 1: u = (r & 0x8fffffffu) | 0x30000000u; break;                   // around the f16 range
      case 2: u = (r & 0xffffe000u) | 0x1000u; break;                       // f16 ties (normal range)
      default: u = (r & 0xffff0000u) | 0x8000u; break;                      // bf16 ties
    }
    float x;
    std::memcpy(&x, &u, 4);
    add(x);
  }
  if (hi.size() < lo.size()) hi.push_back(2.f);
  const int n = static_cast<int>(lo.size());
  std::vector<unsigned> out(n * 4, 0);
  const LaunchError e = PTX_CALL(cvt, lo.data(), hi.data(), out.data(), n);
  ASSERT_FALSE(e.failed) << e.message;
  for (int i = 0; i < n; ++i) {
    const unsigned ef = f16.round(lo[i]) | (static_cast<unsigned>(f16.round(hi[i])) << 16);
    const unsigned eb = bf16.round(lo[i]) | (static_cast<unsigned>(bf16.round(hi[i])) << 16);
    ASSERT_EQ(ef, out[i * 4 + 0]) << "f16x2 of (" << lo[i] << ", " << hi[i] << ") index " << i;
    ASSERT_EQ(ef, out[i * 4 + 1]) << "__half2 of (" << lo[i] << ", " << hi[i] << ")";
    ASSERT_EQ(eb, out[i * 4 + 2]) << "bf16x2 of (" << lo[i] << ", " << hi[i] << ") index " << i;
    ASSERT_EQ(eb, out[i * 4 + 3]) << "__nv_bfloat162 of (" << lo[i] << ", " << hi[i] << ")";
  }
}

// ---- ex2.approx.ftz.f32 ---------------------------------------------------------------------------------

// 2^x from the ISA's definition in f64 (exact for every f32 input whose result is a normal f32: an f64 carries 2^x
// to far more bits than f32 keeps), with the .ftz flushing: a subnormal input reads as 0, a result below 2^-126 is 0.
// The instruction is an approximation: sim gives the correctly rounded value (within 1 ulp of it here, allowing for
// the libm), the hardware is held to 2 ulp (2^-22 relative), exact at the special values.
TEST_P(Ptx, Ex2ApproxFtz) {
  const float specials[] = {0.f, -0.f, std::ldexp(1.f, -149), -std::ldexp(1.f, -130), std::ldexp(1.f, -126), 1.f,
                            -1.f, 0.5f, -0.5f, 10.f, -10.f, 127.f, 127.99f, 128.f, 200.f, -125.f, -126.f, -126.5f,
                            -127.f, -149.f, -150.f, -1000.f, INFINITY, -INFINITY, NAN};
  std::vector<float> x(std::begin(specials), std::end(specials));
  std::uniform_real_distribution<float> wide(-140.f, 130.f), narrow(-2.f, 2.f);
  for (int i = 0; i < 3000; ++i) x.push_back(i % 2 ? wide(rng) : narrow(rng));
  const int n = static_cast<int>(x.size());
  std::vector<float> out(n, -1.f);
  const LaunchError e = PTX_CALL(ex2, x.data(), out.data(), n);
  ASSERT_FALSE(e.failed) << e.message;
  const double tol = GetParam() == Dev::Sim ? std::ldexp(1.0, -23) : std::ldexp(1.0, -22);
  for (int i = 0; i < n; ++i) {
    const float xi = x[i], r = out[i];
    if (std::isnan(xi)) {
      EXPECT_TRUE(std::isnan(r)) << "ex2(NaN) = " << r;
      continue;
    }
    const double in = std::fpclassify(xi) == FP_SUBNORMAL ? 0.0 : static_cast<double>(xi);
    const double want = std::exp2(in);
    if (in == 0.0 || std::isinf(in)) {  // exact: 2^0 = 1, 2^-inf = +0, 2^inf = inf
      EXPECT_EQ(static_cast<float>(want), r) << "ex2(" << xi << ")";
      EXPECT_FALSE(std::signbit(r)) << "ex2(" << xi << ")";
      continue;
    }
    ASSERT_FALSE(std::fpclassify(r) == FP_SUBNORMAL) << "ex2(" << xi << ") = " << r << " is not flushed";
    if (want < std::ldexp(1.0, -126) * (1.0 - tol)) {
      EXPECT_EQ(0.f, r) << "ex2(" << xi << ") below 2^-126";
      EXPECT_FALSE(std::signbit(r)) << "ex2(" << xi << ")";
    } else if (want >= std::ldexp(1.0, 128) * (1.0 + tol)) {
      EXPECT_EQ(INFINITY, r) << "ex2(" << xi << ") past the f32 range";
    } else if (want < std::ldexp(1.0, -126) * (1.0 + tol) || want >= std::ldexp(1.0, 128) * (1.0 - tol)) {
      continue;  // at the edges of the normal range either side is within the tolerance
    } else {
      EXPECT_LE(std::fabs(r - want), tol * want) << "ex2(" << xi << ") = " << r << ", 2^x = " << want;
    }
  }
}

// ---- prmt, lop3 -------------------------------------------------------------------------------------

TEST_P(Ptx, PrmtAndLop3) {
  const int n = 1024;
  std::vector<unsigned> a(n), b(n), c(n), out(n * ptxtest::kBitopsOut, 0);
  for (int i = 0; i < n; ++i) a[i] = u32(), b[i] = u32(), c[i] = u32();
  c[0] = 0x3210, c[1] = 0x7654, c[2] = 0x8888, c[3] = 0xf4e0, c[4] = 0x5140;  // identity, b, sign fills, mixes
  const LaunchError e = PTX_CALL(bitops, a.data(), b.data(), c.data(), out.data(), n);
  ASSERT_FALSE(e.failed) << e.message;
  // The lop3 functions, as expressions of a, b, c (in kLop3Luts order).
  auto lop = [](int k, unsigned x, unsigned y, unsigned z) -> unsigned {
    switch (k) {
      case 0: return 0u;
      case 1: return ~0u;
      case 2: return x;
      case 3: return y;
      case 4: return z;
      case 5: return (x & y) | z;
      case 6: return x ^ y ^ z;
      case 7: return (x & y) | (x & z) | (y & z);
      case 8: return (x & y) ^ z;
      case 9: return x ^ (y | z);
      case 10: return x & y & z;
      case 11: return x | y | z;
      default: return (x & y) | (~x & z);
    }
  };
  for (int i = 0; i < n; ++i) {
    unsigned char bytes[8];
    for (int k = 0; k < 4; ++k) bytes[k] = static_cast<unsigned char>(a[i] >> (8 * k));
    for (int k = 0; k < 4; ++k) bytes[4 + k] = static_cast<unsigned char>(b[i] >> (8 * k));
    unsigned expect = 0;
    for (int k = 0; k < 4; ++k) {
      const unsigned sel = (c[i] >> (4 * k)) & 15u;
      const unsigned char v = bytes[sel % 8];
      const unsigned byte = sel >= 8 ? (v >= 128 ? 0xffu : 0u) : v;
      expect |= byte << (8 * k);
    }
    ASSERT_EQ(expect, out[i * ptxtest::kBitopsOut]) << "prmt " << std::hex << a[i] << " " << b[i] << " " << c[i];
    for (int k = 0; k + 1 < ptxtest::kBitopsOut; ++k)
      ASSERT_EQ(lop(k, a[i], b[i], c[i]), out[i * ptxtest::kBitopsOut + 1 + k])
          << "lop3 lut 0x" << std::hex << int(ptxtest::kLop3Luts[k]);
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, Ptx, ::testing::Values(Dev::Sim, Dev::Cuda), ptxtest::dev_name);
INSTANTIATE_TEST_SUITE_P(Devices, PtxFp8, ::testing::Values(Dev::Sim, Dev::Cuda), ptxtest::dev_name);

}  // namespace
