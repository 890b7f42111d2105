// PagedDecodePlan on every device against the test's own f64 evaluation (paged_decode_test_support.hpp): mixed
// context lengths (0, 1, 15, 16, 17, 300) through shuffled, non-contiguous pages; q_len 1 and > 1; GQA ratios 1, 4
// and 8; head dims 64, 96, 128, 256 and pages of 8, 16, 32; FP8 and s8 caches with per-tensor and per-head scales;
// forced 1 and 3 splits and the plan's choice; a sliding window; lse; strided and unaligned layouts and one combined
// K/V buffer; invalid page ids, negative and over-long context lengths (never dereferenced: the sim's memcheck sees
// every access); bit-identical reruns.
#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include "paged_decode_test_support.hpp"
#include "support/devices.hpp"

namespace baracuda::test::paged {
namespace {

constexpr ElementKind F16 = ElementKind::F16, Bf16 = ElementKind::Bf16, Fp8 = ElementKind::Fp8E4M3,
                      S8 = ElementKind::S8;

/// A device and the kernel the descriptor asks for (the host device has its reference whatever the kernel).
struct DeviceAndKernel {
  DeviceKind device;
  PagedDecodeKernel kernel;
};

void PrintTo(const DeviceAndKernel& p, std::ostream* os) {
  *os << to_string(p.device) << (p.kernel == PagedDecodeKernel::TensorCores ? ", tensor cores" : "");
}

class PagedDecode : public ::testing::TestWithParam<DeviceAndKernel> {
 protected:
  DeviceKind device() const { return GetParam().device; }
  bool tensor_cores() const { return GetParam().kernel == PagedDecodeKernel::TensorCores; }
  /// Runs `p` (with the parameter's kernel) on the parameter's device and checks it against the f64 evaluation;
  /// returns the splits used. The tensor-core kernel has none for d = 256: select must say Unsupported.
  int64_t run_and_check(Problem p, const std::string& what, uint64_t seed = 7) {
    std::string why;
    const auto st = stream_for(device(), &why);
    if (!st) {
      skipped_ = why;
      return 0;
    }
    p.d.with_kernel(GetParam().kernel);
    if (tensor_cores() && p.d.head_dim == 256) {
      const auto plan = dynamic::PagedDecodePlan::select(*st, p.d);
      EXPECT_FALSE(plan.is_ok()) << what;
      if (!plan.is_ok()) EXPECT_EQ(plan.error().code, ErrorCode::Unsupported) << what;
      return 0;
    }
    const Data x(p, seed);
    Outputs out;
    int64_t splits = 0;
    const Status s = run_on(*st, x, out, &splits);
    EXPECT_TRUE(s.is_ok()) << what << ": " << s.to_string();
    if (!s.is_ok()) return 0;
    const int64_t bad = device() == DeviceKind::Host ? check(x, out, what, host_bound)
                        : tensor_cores()               ? check(x, out, what, tc_kernel_bound(p.d.element))
                                                       : check(x, out, what, kernel_bound);
    EXPECT_EQ(bad, 0) << what;
    return splits;
  }
  void skip_if_needed() {
    if (!skipped_.empty()) GTEST_SKIP() << skipped_;
  }
  std::string skipped_;
};

TEST_P(PagedDecode, MixedLengthsGqa4Splits) {
  for (int64_t splits : {0, 1, 3}) {
    Problem p = Problem::make({1, 15, 16, 17, 300, 0}, 1, 8, 2, 64, F16, F16, 16, 3);
    p.d.with_lse().with_splits(splits);
    const int64_t used = run_and_check(p, "splits " + std::to_string(splits));
    if (device() != DeviceKind::Host && splits > 0 && used != 0) {
      EXPECT_EQ(used, splits);
    }
  }
  skip_if_needed();
}

TEST_P(PagedDecode, QLenGqa8Window) {
  Problem p = Problem::make({5, 40, 2, 0}, 3, 8, 1, 128, Bf16, Bf16, 16, 5);
  p.d.with_lse().with_splits(3);
  run_and_check(p, "q_len 3, no window");
  p.d.with_window(7).with_splits(1);
  run_and_check(p, "q_len 3, window 7");
  p.d.with_window(0).with_splits(0);
  run_and_check(p, "q_len 3, window 0");
  skip_if_needed();
}

TEST_P(PagedDecode, MhaHeadDimsAndPageSizes) {
  Problem a = Problem::make({70, 33}, 1, 2, 2, 256, F16, F16, 32, 9);
  a.d.with_lse().with_splits(2);
  run_and_check(a, "d 256, pages of 32");
  Problem b = Problem::make({19, 8, 1}, 2, 4, 4, 96, Bf16, Bf16, 8, 11);
  b.d.with_lse();
  run_and_check(b, "d 96, pages of 8, q_len 2");
  Problem c = Problem::make({45}, 5, 8, 2, 128, F16, F16, 16, 13);  // 20 rows per kv head: 3 row groups
  c.d.with_splits(3).with_scale(0.3);
  run_and_check(c, "q_len 5, GQA 4: several row groups");
  skip_if_needed();
}

// Pages of 8 and 32 keys over several 32-key tiles a split, splits starting inside a page: the tensor-core kernel
// steps each lane's block-table entry by 4 or 1 pages a tile (PagedCursor); MixedLengthsGqa4Splits has pages of 16.
TEST_P(PagedDecode, PageSizesOverSeveralTiles) {
  for (int64_t block_size : {8, 32}) {
    for (int64_t splits : {1, 3}) {
      Problem p = Problem::make({200, 37, 161}, 1, 4, 2, 64, F16, F16, block_size, 23);
      p.d.with_lse().with_splits(splits);
      run_and_check(p, "pages of " + std::to_string(block_size) + ", splits " + std::to_string(splits));
    }
  }
  skip_if_needed();
}

TEST_P(PagedDecode, QuantizedCaches) {
  const struct {
    ElementKind cache;
    KvScaleLayout scales;
    ElementKind element;
    int64_t splits;
  } cases[] = {{Fp8, KvScaleLayout::PerTensor, F16, 3},
               {Fp8, KvScaleLayout::PerHead, Bf16, 1},
               {S8, KvScaleLayout::PerTensor, Bf16, 3},
               {S8, KvScaleLayout::PerHead, F16, 1}};
  for (const auto& c : cases) {
    Problem p = Problem::make({17, 50, 1}, 2, 4, 2, 64, c.element, c.cache, 16, 17);
    p.d.with_scale_layout(c.scales).with_lse().with_splits(c.splits);
    run_and_check(p, std::string(to_string(c.cache)) + " " + std::string(to_string(c.scales)) + " " +
                         std::string(to_string(c.element)));
  }
  Problem p = Problem::make({40}, 1, 8, 8, 128, F16, Fp8, 16, 19);
  p.d.with_scale_layout(KvScaleLayout::PerHead).with_splits(2);
  run_and_check(p, "fp8 d128 MHA per head");
  skip_if_needed();
}

TEST_P(PagedDecode, Layouts) {
  for (Layout l : {Layout::Combined, Layout::Unaligned}) {
    Problem p = Problem::make({33, 7}, 2, 4, 1, 64, F16, F16, 16, 23);
    p.layout = l;
    p.d.with_lse().with_splits(2);
    run_and_check(p, l == Layout::Combined ? "combined cache, padded rows" : "unaligned strides");
    Problem q = Problem::make({21}, 1, 2, 1, 64, Bf16, S8, 8, 29);
    q.layout = l;
    q.d.with_scale_layout(KvScaleLayout::PerHead);
    run_and_check(q, l == Layout::Combined ? "s8 combined" : "s8 unaligned");
  }
  skip_if_needed();
}

// Page ids outside [0, num_blocks) are masked and never read; context lengths beyond the table are clamped,
// negative ones are 0. The sim's memcheck (BARACUDA_SIM_CHECK) would report any access outside the buffers.
TEST_P(PagedDecode, InvalidPagesAndLengths) {
  Problem p = Problem::make({40, 20, 30, 16}, 2, 4, 2, 64, F16, F16, 16, 31);
  p.table[0 * p.d.max_blocks_per_seq + 1] = -7;                                        // seq 0: middle page
  p.table[1 * p.d.max_blocks_per_seq + 0] = static_cast<int32_t>(p.d.num_blocks);      // seq 1: one past the end
  p.table[1 * p.d.max_blocks_per_seq + 1] = 1 << 30;                                   // and far past it
  p.ctx[2] = 1 << 30;                                                                  // clamped to 48
  p.table[2 * p.d.max_blocks_per_seq + 2] = 2 * static_cast<int32_t>(p.d.num_blocks);  // its last page invalid
  p.ctx[3] = -5;                                                                       // empty
  p.d.with_lse().with_splits(3);
  run_and_check(p, "invalid pages, over-long and negative lengths");
  p.d.with_splits(1);
  run_and_check(p, "the same, one split");
  skip_if_needed();
}

TEST_P(PagedDecode, BitIdenticalReruns) {
  std::string why;
  const auto st = stream_for(device(), &why);
  if (!st) GTEST_SKIP() << why;
  Problem p = Problem::make({100, 37}, 1, 4, 1, 64, Bf16, Fp8, 16, 37);
  p.d.with_lse().with_splits(4).with_kernel(GetParam().kernel);
  const Data x(p, 41);
  Outputs a, b;
  ASSERT_TRUE(run_on(*st, x, a).is_ok());
  ASSERT_TRUE(run_on(*st, x, b).is_ok());
  EXPECT_EQ(a.o, b.o);
  EXPECT_EQ(a.lse, b.lse);
}

TEST_P(PagedDecode, EmptyBatch) {
  std::string why;
  const auto st = stream_for(device(), &why);
  if (!st) GTEST_SKIP() << why;
  Problem p = Problem::make({}, 1, 4, 2, 64, F16, F16, 16);
  p.d.with_pages(4, 16, 1).with_lse().with_kernel(GetParam().kernel);
  const Data x(p, 1);
  Outputs out;
  EXPECT_TRUE(run_on(*st, x, out).is_ok());
}

std::string device_name(const ::testing::TestParamInfo<DeviceAndKernel>& i) {
  return std::string(to_string(i.param.device)) + (i.param.kernel == PagedDecodeKernel::TensorCores ? "_tc" : "");
}
// Both kernels by name (Auto's choice between them is paged_decode_reject_test's AutoKernel).
constexpr DeviceAndKernel kDeviceKernels[] = {{DeviceKind::Host, PagedDecodeKernel::Auto},
                                              {DeviceKind::Sim, PagedDecodeKernel::CudaCores},
                                              {DeviceKind::Sim, PagedDecodeKernel::TensorCores},
                                              {DeviceKind::Cuda, PagedDecodeKernel::CudaCores},
                                              {DeviceKind::Cuda, PagedDecodeKernel::TensorCores}};
INSTANTIATE_TEST_SUITE_P(Devices, PagedDecode, ::testing::ValuesIn(kDeviceKernels), device_name);

// The plan's choice of splits (paged_attention.hpp): one wave of 132 SMs × 3 resident blocks (2 for a 2-byte cache
// at d = 256), chunks of at least 64 keys, at most 64.
TEST(PagedDecodeSplits, ChosenRule) {
  auto chosen = [](int64_t b, int64_t h, int64_t h_kv, int64_t q_len, int64_t max_pages, int64_t d = 128,
                   ElementKind cache = ElementKind::F16, PagedDecodeKernel kernel = PagedDecodeKernel::CudaCores) {
    const auto desc = PagedDecodeDescriptor{}
                          .with_kinds(ElementKind::F16, cache)
                          .with_shape(b, q_len, h, h_kv, d)
                          .with_pages(1024, 16, max_pages)
                          .with_kernel(kernel);
    auto plan = dynamic::PagedDecodePlan::select(Stream::sim(), desc);
    EXPECT_TRUE(plan) << plan.status().to_string();
    return plan ? plan->chosen_splits() : -1;
  };
  EXPECT_EQ(chosen(1, 32, 8, 1, 256), 49);   // 8 blocks: ⌊396 / 8⌋ = 49, 4096 keys allow 64
  EXPECT_EQ(chosen(1, 32, 8, 1, 32), 8);     // 512 keys allow 8
  EXPECT_EQ(chosen(1, 4, 4, 1, 2048), 64);   // 4 blocks: 99 fit, capped at 64
  EXPECT_EQ(chosen(8, 32, 8, 1, 2048), 6);   // 64 blocks: ⌊396 / 64⌋ (7 would be 448 > 396: a second wave)
  EXPECT_EQ(chosen(64, 32, 8, 1, 2048), 1);  // 512 blocks: more than a wave already
  EXPECT_EQ(chosen(1, 32, 8, 1, 4), 1);      // 64 keys: one chunk
  EXPECT_EQ(chosen(1, 32, 8, 1, 8), 2);      // 128 keys: two
  EXPECT_EQ(chosen(1, 32, 8, 2, 256), 49);   // q_len 2: 8 rows per kv head still one block each
  EXPECT_EQ(chosen(1, 32, 8, 3, 256), 24);   // 12 rows: 2 row groups, 16 blocks, ⌊396 / 16⌋ = 24
  EXPECT_EQ(chosen(8, 32, 8, 1, 2048, 256), 4);                        // f16 at d = 256: 2 per SM, ⌊264 / 64⌋
  EXPECT_EQ(chosen(8, 32, 8, 1, 2048, 256, ElementKind::Fp8E4M3), 6);  // an FP8 cache at d = 256: 3 per SM
  EXPECT_EQ(chosen(8, 32, 8, 1, 2048, 64, ElementKind::S8), 6);
  // The tensor-core kernel: 16 rows per block, 6 resident per SM at d = 128 (792 a wave), 11 at d = 64 (1452).
  constexpr PagedDecodeKernel TC = PagedDecodeKernel::TensorCores;
  EXPECT_EQ(chosen(1, 32, 8, 1, 256, 128, ElementKind::F16, TC), 64);  // 8 blocks: 99 fit, 4096 keys allow 64
  EXPECT_EQ(chosen(8, 32, 8, 1, 2048, 128, ElementKind::Fp8E4M3, TC), 12);  // 64 blocks: ⌊792 / 64⌋
  EXPECT_EQ(chosen(8, 32, 8, 1, 2048, 64, ElementKind::F16, TC), 22);       // ⌊1452 / 64⌋
  EXPECT_EQ(chosen(8, 32, 8, 5, 2048, 128, ElementKind::F16, TC), 6);  // 20 rows: 2 row groups, 128 blocks
  EXPECT_EQ(chosen(64, 32, 8, 1, 2048, 128, ElementKind::F16, TC), 1);  // 512 blocks: over a wave
  // Auto counts the blocks of the kernel it runs: the tensor-core kernel's at 16 sequences, the CUDA-core one's below.
  constexpr PagedDecodeKernel Auto = PagedDecodeKernel::Auto;
  EXPECT_EQ(chosen(16, 32, 8, 1, 2048, 128, ElementKind::F16, Auto), 6);  // 128 blocks: ⌊792 / 128⌋
  EXPECT_EQ(chosen(15, 32, 8, 1, 2048, 128, ElementKind::F16, Auto), 3);  // 120 blocks: ⌊396 / 120⌋
  auto host = dynamic::PagedDecodePlan::select(Stream::host(), PagedDecodeDescriptor{}.with_splits(5));
  ASSERT_TRUE(host);
  EXPECT_EQ(host->chosen_splits(), 1);
  EXPECT_EQ(host->workspace_size(), 0u);
  auto sim = dynamic::PagedDecodePlan::select(
      Stream::sim(), PagedDecodeDescriptor{}.with_shape(2, 3, 4, 2, 64).with_pages(8, 16, 4).with_splits(5));
  ASSERT_TRUE(sim);
  // 5 splits × 6 tokens × 4 heads × 64 f32 (rounded up to 256 bytes), then 5 × 6 × 4 f32.
  EXPECT_EQ(sim->workspace_size(), (5u * 6 * 4 * 64 * 4 + 255) / 256 * 256 + 5u * 6 * 4 * 4);
  auto one = dynamic::PagedDecodePlan::select(Stream::sim(), PagedDecodeDescriptor{}.with_splits(1));
  ASSERT_TRUE(one);
  EXPECT_EQ(one->workspace_size(), 0u);
}

}  // namespace
}  // namespace baracuda::test::paged
