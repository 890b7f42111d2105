// wgmma self-test (src/device/ptx/wgmma.cuh): random 8-bit matrices are laid out here in shared-memory
// images following the PTX ISA's K-major canonical layouts (written out below as row/16-byte-chunk
// placements, not as the emulation's address-bit formula), the kernel issues wgmma.m64nNk32 through
// descriptors built on the device, and every accumulator register of both warpgroups is compared bit for
// bit with sums computed here from the ISA's accumulator fragment layout. Runs on the sim device and, in
// builds with sm_90a kernels, on a compute capability 9.0 GPU.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "baracuda/core/stream.hpp"
#include "device_param.hpp"
#include "wgmma_selftest.hpp"

#ifndef WGMMATEST_HAVE_CUDA
#define WGMMATEST_HAVE_CUDA 0
#endif

namespace {

using ptxtest::Dev;
using ptxtest::LaunchError;
using ptxtest::WgmmaCase;

class Wgmma : public ptxtest::DeviceTest {
 protected:
  Wgmma()
      : DeviceTest({WGMMATEST_HAVE_CUDA, "built without sm_90a kernels (BARACUDA_CUDA_ARCHS lacks 90)", 90, 90,
                    "wgmma (sm_90a code) needs a compute capability 9.0 GPU"}) {}

 public:
  LaunchError run(const WgmmaCase& c, const std::vector<unsigned char>& image, const std::vector<int>& in,
                  std::vector<int>& out) {
#if WGMMATEST_HAVE_CUDA
    if (GetParam() == Dev::Cuda)
      return ptxtest::device_cuda::wgmma(c, image.data(), static_cast<int>(image.size()), in.data(), out.data());
#endif
    return ptxtest::device_sim::wgmma(c, image.data(), static_cast<int>(image.size()), in.data(), out.data());
  }
  std::mt19937 rng{2024};
};

// ---- K-major canonical layouts (PTX ISA "Shared Memory Matrix Layout", 8-bit elements) -----------------
// Swizzled, W-byte rows (W = 128, 64, 32): an atom is 8 rows of W bytes; within row r of an atom the 16-byte
// chunk c of the row's K bytes is stored at chunk position c XOR phase(r), where the phase changes every
// 1, 2 or 4 rows (128B: r % 8; 64B: (r % 8) / 2; 32B: (r % 8) / 4). Atoms of consecutive 8-row groups
// are SBO = 8·W bytes apart; K beyond W bytes continues in another column block of rows·W bytes.
// No swizzle: 8×16-byte core matrices (row r % 8 at 16 bytes), the two 16-byte K halves LBO apart, 8-row
// groups SBO apart.
enum Mode { kNone = 0, k128 = 1, k64 = 2, k32 = 3 };
int width(int mode) { return mode == k128 ? 128 : mode == k64 ? 64 : mode == k32 ? 32 : 16; }

struct Operand {
  int mode;
  int rows;
  unsigned base;      // byte offset of the operand in the image (a multiple of 1024)
  unsigned lbo, sbo;  // no swizzle: chosen freely; swizzled: sbo = 8·W
  std::size_t place(int r, int kb) const {
    if (mode == kNone) return base + (r / 8) * sbo + (r % 8) * 16 + (kb / 16) * lbo + kb % 16;
    const int w = width(mode), cb = kb / w, kk = kb % w;
    const int phase = mode == k128 ? r % 8 : mode == k64 ? (r % 8) / 2 : (r % 8) / 4;
    return base + static_cast<std::size_t>(cb) * rows * w + (r / 8) * sbo + (r % 8) * w + ((kk / 16) ^ phase) * 16 +
           kk % 16;
  }
};

// Accumulator fragment of wgmma .m64nNk32 .s32 (PTX ISA figure "WGMMA .m64nNk32 register fragment layout for
// accumulator matrix D"): warp w of the warpgroup holds rows 16w..16w+15; lane l (g = l/4, q = l%4) holds
// register i at row 16w + g + 8 for i % 4 >= 2 (else + 0), column 8·(i/4) + 2q + i % 2.
int d_row(int tid_in_wg, int i) { return 16 * (tid_in_wg / 32) + (tid_in_wg % 32) / 4 + ((i % 4) >= 2 ? 8 : 0); }
int d_col(int tid_in_wg, int i) { return 8 * (i / 4) + 2 * (tid_in_wg % 4) + i % 2; }

struct Spec {
  const char* name;
  int n, mode;
  bool as, bs;
  int steps;
  bool scale_d0;
  int kofs0;      // logical K byte of step 0
  int kofs1;      // of step 1 (> kofs0)
  bool none_alt;  // no swizzle: A with K halves adjacent (LBO 128), B with row groups adjacent (SBO 128)
};

void check_case(Wgmma& t, const Spec& s) {
  SCOPED_TRACE(s.name);
  const int w = width(s.mode);
  const int ktot = s.mode == k128 ? 128 : 64;  // logical K bytes in the image
  const int am = 128, bn = s.n;                // A: rows of both warpgroups
  auto make = [&](int rows, unsigned base, bool alt) {
    Operand o{s.mode, rows, base, 16, 0};
    if (s.mode == kNone) {
      const unsigned groups = static_cast<unsigned>(rows / 8), chunks = static_cast<unsigned>(ktot / 16);
      if (alt) o.lbo = 128, o.sbo = 128 * chunks;  // a row group's K chunks side by side
      else o.sbo = 128, o.lbo = 128 * groups;      // a K chunk's row groups side by side
    } else {
      o.sbo = 8u * static_cast<unsigned>(w);
    }
    return o;
  };
  const Operand A = make(am, 0, s.none_alt);
  const unsigned a_bytes = static_cast<unsigned>(am * ktot), b_base = (a_bytes + 1023u) / 1024u * 1024u;
  const Operand B = make(bn, b_base, !s.none_alt);
  const std::size_t image_bytes = b_base + static_cast<std::size_t>(bn) * ktot;
  ASSERT_LE(image_bytes, static_cast<std::size_t>(ptxtest::kWgmmaImageBytes));

  std::vector<unsigned char> image(image_bytes);
  for (auto& x : image) x = static_cast<unsigned char>(t.rng());
  std::vector<std::vector<int>> a(am, std::vector<int>(ktot)), b(bn, std::vector<int>(ktot));
  std::vector<char> used(image_bytes, 0);
  auto fill = [&](const Operand& o, std::vector<std::vector<int>>& m, bool sgn) {
    for (int r = 0; r < o.rows; ++r)
      for (int k = 0; k < ktot; ++k) {
        const auto v = static_cast<unsigned char>(t.rng());
        const std::size_t at = o.place(r, k);
        ASSERT_LT(at, image_bytes);
        ASSERT_FALSE(used[at]) << "layout places two elements at byte " << at;
        used[at] = 1;
        image[at] = v;
        m[r][k] = sgn ? static_cast<int>(static_cast<signed char>(v)) : static_cast<int>(v);
      }
  };
  fill(A, a, s.as);
  fill(B, b, s.bs);

  // Descriptor start offsets of step 0 and the advance to step 1, per the layouts above.
  auto start = [&](const Operand& o, int kofs, int row0) -> unsigned {
    const unsigned rowpart = static_cast<unsigned>(row0 / 8) * o.sbo;
    if (s.mode == kNone) return o.base + rowpart + static_cast<unsigned>(kofs / 16) * o.lbo;
    return o.base + rowpart + static_cast<unsigned>(kofs / w) * static_cast<unsigned>(o.rows * w) +
           static_cast<unsigned>(kofs % w);
  };
  WgmmaCase c;
  c.n = s.n, c.a_signed = s.as, c.b_signed = s.bs, c.swizzle = s.mode;
  c.a_off[0] = start(A, s.kofs0, 0), c.a_off[1] = start(A, s.kofs0, 64), c.b_off = start(B, s.kofs0, 0);
  c.a_lbo = A.lbo, c.a_sbo = A.sbo, c.b_lbo = B.lbo, c.b_sbo = B.sbo;
  c.steps = s.steps, c.scale_d0 = s.scale_d0;
  if (s.steps > 1) {
    c.a_step = start(A, s.kofs1, 0) - start(A, s.kofs0, 0);
    c.b_step = start(B, s.kofs1, 0) - start(B, s.kofs0, 0);
  }

  const int regs = s.n / 2, nt = ptxtest::kWgmmaThreads;
  std::vector<int> in(static_cast<std::size_t>(nt) * regs), out(in.size(), 0x5a5a5a5a);
  for (std::size_t i = 0; i < in.size(); ++i)  // near INT_MAX in part, so the s32 wrap-around shows
    in[i] = static_cast<int>(i % 3 == 0 ? 0x7fffff00u + (t.rng() & 0xffu) : static_cast<unsigned>(t.rng()));
  const LaunchError e = t.run(c, image, in, out);
  ASSERT_FALSE(e.failed) << e.message;

  for (int tid = 0; tid < nt; ++tid)
    for (int i = 0; i < regs; ++i) {
      const int wg = tid / 128, row = 64 * wg + d_row(tid % 128, i), col = d_col(tid % 128, i);
      long long sum = s.scale_d0 ? in[static_cast<std::size_t>(tid) * regs + i] : 0;
      for (int st = 0; st < s.steps; ++st) {
        const int k0 = st == 0 ? s.kofs0 : s.kofs1;
        for (int k = 0; k < 32; ++k) sum += static_cast<long long>(a[row][k0 + k]) * b[col][k0 + k];
      }
      const auto expect = static_cast<std::int32_t>(static_cast<std::uint32_t>(sum & 0xffffffffLL));
      ASSERT_EQ(expect, out[static_cast<std::size_t>(tid) * regs + i])
          << "thread " << tid << " register " << i << " (row " << row << ", column " << col << ")";
    }
}

TEST_P(Wgmma, Swizzle128AllSignednessTwoSteps) {
  // The kernel's layout: 128-byte rows, the k-step advancing the start address by 32 bytes within the row.
  for (int combo = 0; combo < 4; ++combo) {
    const bool as = combo & 1, bs = combo & 2;
    check_case(*this, {"128B n128 k 32,96", 128, k128, as, bs, 2, true, 32, 96, false});
  }
  check_case(*this, {"128B n256 k 0,32", 256, k128, true, true, 2, true, 0, 32, false});
  check_case(*this, {"128B n64 k 64 scale-d 0", 64, k128, true, true, 1, false, 64, 0, false});
}

TEST_P(Wgmma, Swizzle64And32) {
  check_case(*this, {"64B n128 k 0,32", 128, k64, true, true, 2, true, 0, 32, false});
  check_case(*this, {"64B n64 k 32 scale-d 0", 64, k64, false, true, 1, false, 32, 0, false});
  check_case(*this, {"32B n64 k 0,32", 64, k32, true, true, 2, true, 0, 32, false});
  check_case(*this, {"32B n256 k 32 scale-d 0", 256, k32, true, false, 1, false, 32, 0, false});
}

TEST_P(Wgmma, NoSwizzleInterleaved) {
  check_case(*this, {"none n128 k 0,32 (A: LBO 128)", 128, kNone, true, true, 2, true, 0, 32, true});
  check_case(*this, {"none n128 k 0,32 scale-d 0 (A: SBO 128)", 128, kNone, true, true, 2, false, 0, 32, false});
  check_case(*this, {"none n64 k 0 scale-d 0", 64, kNone, false, false, 1, false, 0, 0, false});
}

INSTANTIATE_TEST_SUITE_P(Devices, Wgmma, ::testing::Values(Dev::Sim, Dev::Cuda), ptxtest::dev_name);

}  // namespace
