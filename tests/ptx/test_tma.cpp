// TMA self-test (src/device/ptx/tma.cuh, mbarrier.cuh): a random tensor with ragged edges is copied box by
// box into shared memory and written back out; the expected shared-memory image is built here from the
// documented placements — box rows packed one after another, elements outside the tensor zero, and with a
// W-byte swizzle (box rows of exactly W bytes) each row's 16-byte chunk j stored at chunk j XOR phase(row),
// the phase changing every 1, 2 or 4 rows for W = 128, 64, 32 (the wgmma K-major layouts of test_wgmma.cpp)
// — and compared byte for byte. Two copies go through one mbarrier in consecutive phases. Runs on the sim
// device (under every schedule: the copies land at issue or as late as allowed) and, in builds with cuda
// kernels, on a compute capability 9.0 GPU.
#include <gtest/gtest.h>

#include <cstdint>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "baracuda/core/stream.hpp"
#include "tma_selftest.hpp"

#ifndef TMATEST_HAVE_CUDA
#define TMATEST_HAVE_CUDA 0
#endif

namespace {

using ptxtest::LaunchError;
using ptxtest::TmaCase;

enum class Dev { Sim, Cuda };
void PrintTo(Dev d, std::ostream* os) { *os << (d == Dev::Sim ? "sim" : "cuda"); }

std::string name(const TmaCase& c) {
  return std::to_string(c.rows) + "x" + std::to_string(c.cols) + "x" + std::to_string(c.elem_bytes) + "B box " +
         std::to_string(c.box_rows) + "x" + std::to_string(c.box_cols) + " swizzle " + std::to_string(c.swizzle) + " at (" +
         std::to_string(c.c0[0]) + "," + std::to_string(c.c1[0]) + ")";
}

/// The shared-memory image of the box at (c0, c1): see the file comment.
std::vector<unsigned char> expected_box(const TmaCase& c, const std::vector<unsigned char>& src, int c0, int c1) {
  const unsigned row = c.box_cols * c.elem_bytes;
  std::vector<unsigned char> img(static_cast<std::size_t>(row) * c.box_rows);
  const unsigned rows_per_phase = c.swizzle == 128 ? 1 : c.swizzle == 64 ? 2 : 4;
  const unsigned phases = c.swizzle / 16;  // 8, 4, 2
  for (unsigned r = 0; r < c.box_rows; ++r)
    for (unsigned b = 0; b < row; ++b) {
      const long long gr = c1 + static_cast<long long>(r), gc = c0 + static_cast<long long>(b / c.elem_bytes);
      const bool in = gr >= 0 && gc >= 0 && gr < static_cast<long long>(c.rows) && gc < static_cast<long long>(c.cols);
      const unsigned char v = in ? src[static_cast<std::size_t>(gr) * c.row_bytes + static_cast<std::size_t>(gc) * c.elem_bytes + b % c.elem_bytes] : 0;
      unsigned chunk = b / 16;
      if (c.swizzle != 0) chunk ^= (r / rows_per_phase) % phases;
      img[static_cast<std::size_t>(r) * row + chunk * 16 + b % 16] = v;
    }
  return img;
}

class Tma : public ::testing::TestWithParam<Dev> {
 protected:
  void SetUp() override {
    if (GetParam() != Dev::Cuda) return;
    if (!TMATEST_HAVE_CUDA) GTEST_SKIP() << "built without cuda kernels";
    const auto& a = baracuda::cuda_availability();
    if (!a.usable) GTEST_SKIP() << "no usable CUDA device: " << a.reason;
    const auto info = baracuda::cuda_device_info(0);
    if (!info.is_ok() || info->sm < 90) GTEST_SKIP() << "TMA needs compute capability 9.0 or newer";
  }

 public:
  LaunchError run(const TmaCase& c, const std::vector<unsigned char>& src, std::vector<unsigned char>& out) {
#if TMATEST_HAVE_CUDA
    if (GetParam() == Dev::Cuda) return ptxtest::device_cuda::tma(c, src.data(), src.size(), out.data());
#endif
    return ptxtest::device_sim::tma(c, src.data(), src.size(), out.data());
  }

  void check(TmaCase c) {
    SCOPED_TRACE(name(c));
    std::vector<unsigned char> src(c.rows * c.row_bytes);
    for (auto& v : src) v = static_cast<unsigned char>(rng() & 0xFF);
    const std::size_t box = static_cast<std::size_t>(c.box_cols) * c.elem_bytes * c.box_rows;
    std::vector<unsigned char> out(box * c.copies, 0x5A);
    const LaunchError e = run(c, src, out);
    ASSERT_FALSE(e.failed) << e.message;
    for (int i = 0; i < c.copies; ++i) {
      SCOPED_TRACE("copy " + std::to_string(i));
      const auto want = expected_box(c, src, c.c0[i], c.c1[i]);
      std::size_t bad = 0, first = want.size();
      for (std::size_t j = 0; j < want.size(); ++j)
        if (out[i * box + j] != want[j]) bad++, first = first < j ? first : j;
      EXPECT_EQ(bad, 0u) << "first difference at byte " << first << " of " << want.size();
    }
  }
  std::mt19937 rng{7};
};

TEST_P(Tma, SwizzledBoxesAsTheWgmmaLayouts) {
  // 128-byte box rows of s8 (the int8 GEMM's operands): inside, across the ragged M/K corner, and a second
  // phase on the same barrier.
  TmaCase c;
  c.cols = 200, c.rows = 70, c.row_bytes = 208, c.elem_bytes = 1, c.box_cols = 128, c.box_rows = 64, c.swizzle = 128;
  c.copies = 2, c.c0[0] = 0, c.c1[0] = 0, c.c0[1] = 128, c.c1[1] = 64;
  check(c);
  // 64- and 32-byte swizzles, 2-byte elements, a box starting before the tensor (negative coordinates).
  c.cols = 100, c.rows = 40, c.row_bytes = 224, c.elem_bytes = 2, c.box_cols = 32, c.box_rows = 24, c.swizzle = 64;
  c.copies = 2, c.c0[0] = 80, c.c1[0] = 30, c.c0[1] = -8, c.c1[1] = -3;
  check(c);
  c.box_cols = 16, c.box_rows = 16, c.swizzle = 32, c.c0[0] = 0, c.c1[0] = 0, c.c0[1] = 90, c.c1[1] = 33;
  check(c);
}

TEST_P(Tma, UnswizzledBoxes) {
  TmaCase c;
  c.cols = 37, c.rows = 19, c.row_bytes = 160, c.elem_bytes = 4, c.box_cols = 12, c.box_rows = 8, c.swizzle = 0;
  c.copies = 2, c.c0[0] = 4, c.c1[0] = 3, c.c0[1] = 30, c.c1[1] = 15;
  check(c);
  c.cols = 64, c.rows = 300, c.row_bytes = 64, c.elem_bytes = 1, c.box_cols = 48, c.box_rows = 256, c.copies = 1;
  c.c0[0] = 32, c.c1[0] = 100;
  check(c);
}

TEST_P(Tma, RejectsBadTensorMaps) {
  std::vector<unsigned char> src(4096), out(4096);
  auto rejects = [&](TmaCase c, const char* why) {
    SCOPED_TRACE(why);
    const LaunchError e = run(c, src, out);
    EXPECT_TRUE(e.failed);
    EXPECT_NE(e.message.find("tensor map: needs"), std::string::npos) << e.message;
  };
  TmaCase ok;
  ok.cols = 64, ok.rows = 32, ok.row_bytes = 64, ok.box_cols = 64, ok.box_rows = 8, ok.swizzle = 64;
  TmaCase c = ok;
  c.row_bytes = 72;
  rejects(c, "row stride not a multiple of 16");
  c = ok, c.box_cols = 24;
  rejects(c, "box row not a multiple of 16 bytes");
  c = ok, c.box_cols = 128, c.cols = 128, c.row_bytes = 128;
  rejects(c, "box row wider than the swizzle");
  c = ok, c.box_rows = 257, c.rows = 300;
  rejects(c, "box side over 256");
  c = ok, c.elem_bytes = 3;
  rejects(c, "3-byte elements");
  c = ok, c.cols = 0;
  rejects(c, "no columns");
}

INSTANTIATE_TEST_SUITE_P(Devices, Tma, ::testing::Values(Dev::Sim, Dev::Cuda),
                         [](const auto& i) { return i.param == Dev::Sim ? "sim" : "cuda"; });

}  // namespace
