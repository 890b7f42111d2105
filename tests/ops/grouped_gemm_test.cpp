// GroupedGemmPlan on every device (host, sim, cuda when a GPU is usable) against the f64 evaluation of
// grouped_gemm_test_support.hpp: E ∈ {1, 3, 8, 40} with group sizes mixing 0, 1, 17 and 130 rows, ragged N and
// K, with and without bias, both output kinds and f32 → f32 (the CUDA-core kernel), s32 and s64 offsets, both tiles
// (groups averaging more or fewer than 32 rows), unaligned rows (the element path), strided x and y, K = 0 and total_M
// = 0; every byte of y that no group covers keeps its sentinel; sim and cuda run every case twice with the same bits.
// Offsets that are not valid: grouped_gemm_offsets_test.cpp.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "grouped_gemm_test_support.hpp"
#include "support/devices.hpp"

namespace baracuda::test::grouped_gemm {
namespace {

constexpr ElementKind F16 = ElementKind::F16, Bf16 = ElementKind::Bf16, F32 = ElementKind::F32;

struct Shape4 {
  std::vector<int64_t> sizes;
  int64_t n = 0, k = 0;
};

/// Runs `p` on `device`: checks y against the f64 evaluation (and, off the host, a second run's bits).
void check_problem(DeviceKind device, const Problem& p, const std::string& what, uint64_t seed = 1) {
  std::string why;
  const auto st = stream_for(device, &why);
  if (!st) GTEST_SKIP() << why;
  const Data d(p, seed);
  auto y = run_on(*st, d);
  ASSERT_TRUE(y.is_ok()) << what << ": " << y.status().to_string();
  const int64_t checked = check_y(d, *y, what);
  const int64_t rows = p.effective().back() - p.effective().front();
  EXPECT_EQ(checked, rows * p.g.n) << what;
  if (device != DeviceKind::Host) {
    auto again = run_on(*st, d);
    ASSERT_TRUE(again.is_ok()) << again.status().to_string();
    EXPECT_TRUE(*again == *y) << what << ": a second run gave other bits";
  }
}

class GroupedGemm : public ::testing::TestWithParam<DeviceKind> {};

TEST_P(GroupedGemm, GroupSizesKindsAndBias) {
  const std::vector<Shape4> shapes = {
      {{130}, 33, 40},                         // E = 1, one group of 130 rows: the 128-row tile and a partial one
      {{17, 0, 130}, 72, 24},                  // an empty group between two; the 128×128 tile
      {{0, 1, 17, 0, 130, 1, 0, 17}, 65, 56},  // E = 8, groups averaging < 32 rows: the 32×64 tile
  };
  const std::pair<ElementKind, ElementKind> kinds[] = {{F16, F16}, {F16, F32}, {Bf16, Bf16}, {Bf16, F32}, {F32, F32}};
  int i = 0;
  for (const Shape4& s : shapes)
    for (const auto& [in, out] : kinds) {
      const bool bias = (i % 2) == 0;
      const ElementKind ok = (i % 3) == 0 ? ElementKind::S32 : ElementKind::S64;
      const Problem p = Problem::of_sizes(s.sizes, s.n, s.k, in, out, bias, ok);
      check_problem(GetParam(), p,
                    "E " + std::to_string(s.sizes.size()) + " N " + std::to_string(s.n) + " K " + std::to_string(s.k) +
                        " " + std::string(to_string(in)) + "->" + std::string(to_string(out)) + (bias ? " bias" : ""),
                    static_cast<uint64_t>(++i));
      if (::testing::Test::HasFatalFailure() || ::testing::Test::IsSkipped()) return;
    }
}

TEST_P(GroupedGemm, ManyGroups) {
  // E = 40 > 32: the tile search scans the offsets in two chunks of 32; mostly empty and tiny groups.
  std::vector<int64_t> sizes;
  for (int e = 0; e < 40; ++e) sizes.push_back(e % 5 == 0 ? 0 : (e * 7) % 11);
  sizes[33] = 40;  // a group in the second chunk spanning two row tiles of the small tile
  check_problem(GetParam(), Problem::of_sizes(sizes, 24, 16, Bf16, Bf16, true), "E 40");
  check_problem(GetParam(), Problem::of_sizes(sizes, 24, 16, F32, F32, false), "E 40 f32");
}

TEST_P(GroupedGemm, UnalignedAndStrided) {
  // K = 13: rows of 26 bytes, read element by element.
  check_problem(GetParam(), Problem::of_sizes({5, 0, 40}, 19, 13, F16, F32, true), "K 13");
  check_problem(GetParam(), Problem::of_sizes({5, 0, 70}, 19, 13, F32, F32, true), "f32 K 13");
  // K = 32 but x's rows 35 elements apart (not 16-byte aligned) and y's rows 21 apart (N = 17): gaps untouched.
  Problem p = Problem::of_sizes({3, 33}, 17, 32, Bf16, Bf16, false);
  p.x_ld = 35, p.y_ld = 21;
  check_problem(GetParam(), p, "strided x and y");
  // Aligned padding: x's rows 40 apart (cp.async path with a row stride other than K).
  p.x_ld = 40;
  check_problem(GetParam(), p, "x ld 40");
}

TEST_P(GroupedGemm, EdgeShapes) {
  check_problem(GetParam(), Problem::of_sizes({3, 0, 2}, 9, 0, F16, F16, true), "K 0 (the bias)");
  check_problem(GetParam(), Problem::of_sizes({3, 2}, 9, 0, F16, F32, false), "K 0 (zeros)");
  check_problem(GetParam(), Problem::of_sizes({0, 0, 0}, 9, 16, F16, F16, true), "total_M 0");
  check_problem(GetParam(), Problem::of_sizes({4, 1}, 0, 16, F16, F16, true), "N 0");
  check_problem(GetParam(), Problem::of_sizes({1}, 1, 8, Bf16, F32, true), "1 x 1 x 8");
}

TEST_P(GroupedGemm, TypedPlan) {
  std::string why;
  const auto st = stream_for(GetParam(), &why);
  if (!st) GTEST_SKIP() << why;
  const Problem p = Problem::of_sizes({2, 0, 5}, 10, 8, F16, F32, true, ElementKind::S32);
  const Data d(p, 7);
  auto bx = Buffer::allocate(*st, d.x.size()), bw = Buffer::allocate(*st, d.w.size()),
       bo = Buffer::allocate(*st, d.off.size()), bb = Buffer::allocate(*st, d.bias.size()),
       by = Buffer::allocate(*st, d.y.size());
  ASSERT_TRUE(bx && bw && bo && bb && by);
  ASSERT_TRUE(bx->copy_from_host(d.x.data(), d.x.size()).is_ok());
  ASSERT_TRUE(bw->copy_from_host(d.w.data(), d.w.size()).is_ok());
  ASSERT_TRUE(bo->copy_from_host(d.off.data(), d.off.size()).is_ok());
  ASSERT_TRUE(bb->copy_from_host(d.bias.data(), d.bias.size()).is_ok());
  ASSERT_TRUE(by->copy_from_host(d.y.data(), d.y.size()).is_ok());
  auto plan = GroupedGemmPlan<__half, float, int32_t>::select(*st, p.g);
  ASSERT_TRUE(plan.is_ok()) << plan.status().to_string();
  EXPECT_EQ(plan->workspace_size(), 0u);
  EXPECT_EQ(plan->sku().op, "grouped_gemm");
  EXPECT_EQ(plan->sku().backend, backend_of(GetParam()));
  EXPECT_TRUE(plan->precision_guarantee().deterministic);
  GroupedGemmArgs<__half, float, int32_t> a;
  a.x = TensorRef<__half, 2>::dense(static_cast<const __half*>(bx->data()), {7, 8});
  a.w = TensorRef<__half, 3>::dense(static_cast<const __half*>(bw->data()), {3, 10, 8});
  a.offsets = TensorRef<int32_t, 1>::dense(static_cast<const int32_t*>(bo->data()), {4});
  a.bias = TensorRef<float, 2>::dense(static_cast<const float*>(bb->data()), {3, 10});
  a.y = TensorMut<float, 2>::dense(static_cast<float*>(by->data()), {7, 10});
  ASSERT_TRUE(plan->run(*st, {}, a).is_ok());
  ASSERT_TRUE(st->synchronize().is_ok());
  std::vector<uint8_t> y(d.y.size());
  ASSERT_TRUE(by->copy_to_host(y.data(), y.size()).is_ok());
  EXPECT_EQ(check_y(d, y, "typed"), 7 * 10);
  // The typed select checks its types against the descriptor.
  EXPECT_FALSE((GroupedGemmPlan<__half, float, int64_t>::select(*st, p.g).is_ok()));
  EXPECT_FALSE((GroupedGemmPlan<__nv_bfloat16, float, int32_t>::select(*st, p.g).is_ok()));
}

TEST(GroupedGemmDescriptor, HashAndEquality) {
  const auto a = GroupedGemmDescriptor{}.with_shape(8, 4096, 14336, 4096).with_kinds(Bf16, Bf16);
  auto b = a;
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.hash(), b.hash());
  b.with_bias();
  EXPECT_NE(a, b);
  EXPECT_NE(a.hash(), b.hash());
  b = a;
  b.with_offsets_kind(ElementKind::S32);
  EXPECT_NE(a, b);
  EXPECT_NE(a.hash(), b.hash());
}

INSTANTIATE_TEST_SUITE_P(Devices, GroupedGemm, ::testing::ValuesIn(kTestDevices),
                         [](const auto& info) { return std::string(to_string(info.param)); });

}  // namespace
}  // namespace baracuda::test::grouped_gemm
