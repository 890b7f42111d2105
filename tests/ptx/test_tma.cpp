// TMA self-test (src/device/ptx/tma.cuh, mbarrier.cuh): a random tensor with ragged edges is copied box by
// box into shared memory and written back out; the expected shared-memory image is built here from the
// documented placements — box rows packed one after another, elements outside the tensor zero, and with a
// W-byte swizzle (box rows of exactly W bytes) each row's 16-byte chunk j stored at chunk j XOR phase(row),
// the phase changing every 1, 2 or 4 rows for W = 128, 64, 32 (the wgmma K-major layouts of test_wgmma.cpp)
// — and compared byte for byte. Two copies go through one mbarrier in consecutive phases. Runs on the sim
// device (under every schedule: the copies land at issue or as late as allowed) and, in builds with cuda
// kernels, on a compute capability 9.0 GPU.
#include <gtest/gtest.h>

#include <climits>
#include <cstdint>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "baracuda/core/stream.hpp"
#include "device_param.hpp"
#include "tma_selftest.hpp"

#ifndef TMATEST_HAVE_CUDA
#define TMATEST_HAVE_CUDA 0
#endif

namespace {

using ptxtest::Dev;
using ptxtest::LaunchError;
using ptxtest::TmaCase;

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

class Tma : public ptxtest::DeviceTest {
 protected:
  Tma()
      : DeviceTest({TMATEST_HAVE_CUDA, "built without cuda kernels", 90, INT_MAX,
                    "TMA needs compute capability 9.0 or newer"}) {}

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
  const TmaCase cases[] = {
      // 128-byte box rows of s8 (the int8 GEMM's operands): inside, across the ragged M/K corner, and a second
      // phase on the same barrier.
      {.cols = 200, .rows = 70, .row_bytes = 208, .elem_bytes = 1, .box_cols = 128, .box_rows = 64, .swizzle = 128,
       .copies = 2, .c0 = {0, 128}, .c1 = {0, 64}},
      // 64- and 32-byte swizzles, 2-byte elements, a box starting before the tensor (negative coordinates).
      {.cols = 100, .rows = 40, .row_bytes = 224, .elem_bytes = 2, .box_cols = 32, .box_rows = 24, .swizzle = 64,
       .copies = 2, .c0 = {80, -8}, .c1 = {30, -3}},
      {.cols = 100, .rows = 40, .row_bytes = 224, .elem_bytes = 2, .box_cols = 16, .box_rows = 16, .swizzle = 32,
       .copies = 2, .c0 = {0, 90}, .c1 = {0, 33}},
  };
  for (const TmaCase& c : cases) check(c);
}

TEST_P(Tma, UnswizzledBoxes) {
  const TmaCase cases[] = {
      {.cols = 37, .rows = 19, .row_bytes = 160, .elem_bytes = 4, .box_cols = 12, .box_rows = 8, .swizzle = 0,
       .copies = 2, .c0 = {4, 30}, .c1 = {3, 15}},
      {.cols = 64, .rows = 300, .row_bytes = 64, .elem_bytes = 1, .box_cols = 48, .box_rows = 256, .swizzle = 0,
       .copies = 1, .c0 = {32}, .c1 = {100}},
  };
  for (const TmaCase& c : cases) check(c);
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

INSTANTIATE_TEST_SUITE_P(Devices, Tma, ::testing::Values(Dev::Sim, Dev::Cuda), ptxtest::dev_name);

}  // namespace
