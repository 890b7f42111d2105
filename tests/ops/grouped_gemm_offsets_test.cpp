// GroupedGemmPlan with offsets that are not valid (grouped_gemm.hpp, "Offsets"): on every device the groups are
// the effective offsets (a running maximum of the offsets clamped to [0, total_M]), rows no group covers keep
// their sentinel (both kernels), and nothing outside the operands is touched (the ASan build would report it on host
// and sim).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "grouped_gemm_test_support.hpp"
#include "support/devices.hpp"

namespace baracuda::test::grouped_gemm {
namespace {

class GroupedGemmOffsets : public ::testing::TestWithParam<DeviceKind> {};

Problem with_offsets(std::vector<int64_t> offsets, int64_t total_m, ElementKind offsets_kind,
                     ElementKind in = ElementKind::F16) {
  Problem p;
  p.offsets = std::move(offsets);
  p.g = GroupedGemmDescriptor{}
            .with_shape(static_cast<int64_t>(p.offsets.size()) - 1, total_m, 20, 24)
            .with_kinds(in, in)
            .with_offsets_kind(offsets_kind)
            .with_bias();
  return p;
}

TEST_P(GroupedGemmOffsets, InvalidOffsetsAreClampedAndMonotone) {
  std::string why;
  const auto st = stream_for(GetParam(), &why);
  if (!st) GTEST_SKIP() << why;
  const std::vector<std::vector<int64_t>> cases = {
      {0, 30, 10, 50, 60},           // decreasing: group 1 is empty, group 2 starts at 30
      {-5, 10, 25, 60},              // negative start: clamped to 0
      {0, 10, 200, 300},             // past total_M: clamped, the last groups empty
      {7, 10, 20, 25},               // offsets[0] > 0 and offsets[E] < total_M: rows 0-6 and 25-59 not written
      {0, 70, 0, 0},                 // the first group everything, the rest empty
      {0, -1, 3, int64_t{1} << 40},  // large values (s64 only)
      {60, 0, 0, 0},                 // everything before offsets[0]: nothing written
  };
  int i = 0;
  for (const auto& off : cases)
    for (ElementKind ok : {ElementKind::S64, ElementKind::S32}) {
      if (ok == ElementKind::S32 && off.back() > (int64_t{1} << 30)) continue;
      // Every other case on the f32 CUDA-core kernel, the rest on the tensor-core one.
      const Problem p = with_offsets(off, 60, ok, i % 2 == 0 ? ElementKind::F16 : ElementKind::F32);
      const Data d(p, static_cast<uint64_t>(++i));
      const std::string what = "case " + std::to_string(i) + (ok == ElementKind::S32 ? " s32" : " s64");
      auto y = run_on(*st, d);
      ASSERT_TRUE(y.is_ok()) << what << ": " << y.status().to_string();
      const auto eff = p.effective();
      EXPECT_EQ(check_y(d, *y, what), (eff.back() - eff.front()) * p.g.n) << what;
      if (::testing::Test::HasFailure()) return;
    }
}

TEST_P(GroupedGemmOffsets, ManyGroupsUnsorted) {
  // 70 groups (three chunks of the tile search) with offsets that go up and down.
  std::vector<int64_t> off = {0};
  for (int e = 1; e <= 70; ++e) off.push_back((e * 37) % 101);
  const Problem p = with_offsets(off, 100, ElementKind::S32);
  std::string why;
  const auto st = stream_for(GetParam(), &why);
  if (!st) GTEST_SKIP() << why;
  const Data d(p, 99);
  auto y = run_on(*st, d);
  ASSERT_TRUE(y.is_ok()) << y.status().to_string();
  const auto eff = p.effective();
  EXPECT_EQ(check_y(d, *y, "70 unsorted"), (eff.back() - eff.front()) * p.g.n);
}

INSTANTIATE_TEST_SUITE_P(Devices, GroupedGemmOffsets, ::testing::ValuesIn(kTestDevices),
                         [](const auto& info) { return std::string(to_string(info.param)); });

}  // namespace
}  // namespace baracuda::test::grouped_gemm
