// FlashAttentionPlan on every device (host, sim, cuda when a GPU is usable) against the f64 evaluation of
// attention_test_support.hpp: the host reference within one rounding, the kernels within attention.hpp's bound.
// Lengths 1, 17, 129 and 300 (not tile multiples), q longer and shorter than kv, causal and not, sliding windows
// (rows that see no key: o = 0 and lse = +inf), packed batches of mixed lengths with valid and invalid cu_seqlens,
// GQA ratios 1, 2, 4 and 8, head dims 64, 96, 128 and 256, f16 and bf16, strided, head-major and unaligned layouts,
// scales that sharpen the softmax across tiles, empty problems; every byte of o and lse that no query row covers keeps
// its sentinel; sim and cuda run every case twice with the same bits. Sim and cuda run every case with both query
// tiles (FlashAttentionTile: 64 and 128 rows a block), and the two tiles give the same bits.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "attention_test_support.hpp"
#include "support/devices.hpp"

namespace baracuda::test::attention {
namespace {

constexpr ElementKind F16 = ElementKind::F16, Bf16 = ElementKind::Bf16;

/// A device and the query tile the descriptor asks for (the host device has its reference whatever the tile).
struct DeviceAndTile {
  DeviceKind device;
  FlashAttentionTile tile;
};

void PrintTo(const DeviceAndTile& p, std::ostream* os) { *os << to_string(p.device) << ", " << to_string(p.tile); }

/// Runs `p` on the device with the tile: checks o and lse against the f64 evaluation and, off the host, the bits of
/// a second run (with the 128-row tile: of the 64-row tile).
void check_problem(DeviceAndTile dt, Problem p, uint64_t seed = 1) {
  const DeviceKind device = dt.device;
  std::string why;
  const auto st = stream_for(device, &why);
  if (!st) GTEST_SKIP() << why;
  p.d.with_tile(dt.tile);
  const std::string what = name_of(p) + " " + std::string(to_string(dt.tile));
  const Data x(p, seed);
  Data got = x;
  const Status s = run_on(*st, x, got);
  ASSERT_TRUE(s.is_ok()) << what << ": " << s.to_string();
  const std::vector<int64_t> cq = p.bounds(true);
  int64_t rows = 0;
  for (int64_t b = 0; b < p.d.batch; ++b) rows += std::min(cq[b + 1] - cq[b], p.d.seqlen_q) * p.d.heads;
  const int64_t checked = check_outputs(x, got, device == DeviceKind::Host ? Bound::Rounding : Bound::Kernel, what);
  EXPECT_EQ(checked, rows) << what;
  if (device != DeviceKind::Host && !::testing::Test::HasFailure()) {
    // A second run: of the same kernel, or (128-row tile) of the 64-row one, which must give the same bits.
    const bool wide = dt.tile == FlashAttentionTile::Rows128;
    Data x2 = x;
    if (wide) x2.p.d.with_tile(FlashAttentionTile::Rows64);
    Data again = x;
    ASSERT_TRUE(run_on(*st, x2, again).is_ok());
    EXPECT_TRUE(again.o == got.o && again.lse == got.lse)
        << what << (wide ? ": the 64-row tile gave other bits" : ": a second run gave other bits");
  }
}

class Attention : public ::testing::TestWithParam<DeviceAndTile> {
 protected:
  /// The 128-row tile has no kernel at d = 256 (attention.hpp): such cases run on the 64-row tile.
  DeviceAndTile param_for(int64_t head_dim) const {
    DeviceAndTile dt = GetParam();
    if (head_dim > 128 && dt.tile == FlashAttentionTile::Rows128) dt.tile = FlashAttentionTile::Rows64;
    return dt;
  }
};

TEST_P(Attention, LengthsAndCausal) {
  // Not tile multiples (1, 17, 129), q longer and shorter than kv both ways; GQA 2.
  const std::pair<int64_t, int64_t> lens[] = {{1, 1}, {17, 17}, {129, 129}, {17, 129}, {129, 17}, {1, 300}};
  uint64_t seed = 1;
  for (const auto& [sq, sk] : lens)
    for (bool causal : {false, true}) {
      Problem p = Problem::padded(2, sq, sk, 2, 1, 64, F16);
      p.d.with_causal(causal).with_lse();
      check_problem(GetParam(), p, ++seed);
      if (::testing::Test::HasFailure() || ::testing::Test::IsSkipped()) return;
    }
}

TEST_P(Attention, HeadDimsAndKinds) {
  uint64_t seed = 20;
  for (int64_t dim : {64, 96, 128, 256})
    for (ElementKind e : {F16, Bf16}) {
      // MQA: four query heads on one kv head (two query tiles; d = 256, the slowest on sim: one tile, 2 heads)
      Problem p = dim > 128 ? Problem::padded(1, 40, 100, 2, 1, dim, e) : Problem::padded(1, 70, 100, 4, 1, dim, e);
      p.d.with_causal().with_lse();
      check_problem(param_for(dim), p, ++seed);
      if (::testing::Test::HasFailure() || ::testing::Test::IsSkipped()) return;
      Problem m = Problem::padded(1, 33, 65, 2, 2, dim, e);  // MHA, no lse
      check_problem(param_for(dim), m, ++seed);
      if (::testing::Test::HasFailure()) return;
    }
}

TEST_P(Attention, SlidingWindows) {
  struct W {
    int64_t s_q, s_k, left, right;
    bool causal;
  };
  const W ws[] = {
      {100, 100, 8, 0, true},     // causal with a left window: a band of 9 keys
      {100, 100, 3, 5, false},    // both sides bounded
      {100, 100, 0, 0, false},    // the diagonal only
      {100, 100, -1, 2, false},   // unbounded left
      {90, 130, 20, -1, false},   // unbounded right, kv longer: the band shifted right by 40
      {130, 40, 0, 0, false},     // q longer: rows 0..89 see no key (o = 0, lse = +inf)
      {100, 30, -1, -1, true},    // causal with s_q > s_k: the first 70 rows see no key
      {129, 129, 70, 1, false},   // a band wider than one KV tile, crossing tiles
      {200, 200, 20, -1, false},  // a left bound that moves by more than a tile across a 128-row query tile
  };
  uint64_t seed = 40;
  for (const W& w : ws) {
    Problem p = Problem::padded(1, w.s_q, w.s_k, 2, 1, 64, F16);
    p.d.with_causal(w.causal).with_window(w.left, w.right).with_lse();
    check_problem(GetParam(), p, ++seed);
    if (::testing::Test::HasFailure() || ::testing::Test::IsSkipped()) return;
  }
}

TEST_P(Attention, PackedBatches) {
  // Mixed lengths 0 … 300, q and kv lengths differing per batch; GQA 4 and 8, with lse [H, T_q].
  Problem a = Problem::packed({1, 300, 17, 0, 64}, {5, 300, 129, 3, 64}, 4, 1, 64, F16);
  a.d.with_causal().with_lse();
  check_problem(GetParam(), a, 61);
  if (::testing::Test::HasFailure() || ::testing::Test::IsSkipped()) return;
  Problem b = Problem::packed({17, 65, 1}, {40, 20, 1}, 8, 1, 128, Bf16);
  b.d.with_lse();
  check_problem(GetParam(), b, 62);
  if (::testing::Test::HasFailure()) return;
  Problem c = Problem::packed({30, 0, 45}, {30, 0, 70}, 8, 2, 64, F16);  // an empty batch, a window
  c.d.with_window(10, 4).with_lse();
  check_problem(GetParam(), c, 63);
}

TEST_P(Attention, InvalidCuSeqlens) {
  // Values that are not valid offsets: decreasing, negative, past the total. The effective offsets (running
  // maximum, clamped) give disjoint sequences; rows no sequence covers keep the sentinel.
  Problem p = Problem::packed({20, 20, 20, 20}, {10, 10, 10, 10}, 2, 1, 64, F16);
  p.cu_q = {5, 40, 20, 90, 200};  // effective {5, 40, 40, 80, 80}: T_q = 80
  p.cu_k = {-5, 30, 10, 60, 7};   // effective {0, 30, 30, 40, 40}: T_k = 40
  p.d.with_varlen(80, 40, 40, 40).with_lse();
  check_problem(GetParam(), p, 71);
  if (::testing::Test::HasFailure() || ::testing::Test::IsSkipped()) return;
  // A sequence longer than max_seqlen_q: its rows past max_seqlen_q are not written.
  Problem q = Problem::packed({70, 10}, {50, 10}, 1, 1, 64, F16);
  q.d.with_varlen(80, 60, 30, 50).with_causal().with_lse();
  check_problem(GetParam(), q, 72);
}

TEST_P(Attention, Layouts) {
  uint64_t seed = 80;
  for (LayoutKind2 in : {LayoutKind2::HeadMajor, LayoutKind2::Padded, LayoutKind2::Unaligned})
    for (ElementKind e : {F16, Bf16}) {
      Problem p = Problem::padded(2, 40, 70, 2, 1, e == F16 ? 128 : 64, e);
      p.in_layout = in;
      p.out_layout = in == LayoutKind2::HeadMajor ? LayoutKind2::Padded : in;
      p.d.with_causal(e == Bf16).with_lse();
      check_problem(GetParam(), p, ++seed);
      if (::testing::Test::HasFailure() || ::testing::Test::IsSkipped()) return;
    }
}

TEST_P(Attention, ScalesSharpenTheSoftmax) {
  // q, k in [-4, 4] and τ = 0.5: scores spread over hundreds, so the running maximum moves between KV tiles and the
  // rescaling of O and l is exercised; and an explicit small scale.
  Problem p = Problem::padded(1, 65, 200, 2, 2, 64, F16);
  p.value_scale = 4.0;
  p.d.with_scale(0.5).with_lse();
  check_problem(GetParam(), p, 91);
  if (::testing::Test::HasFailure() || ::testing::Test::IsSkipped()) return;
  Problem q = Problem::padded(1, 20, 150, 1, 1, 128, Bf16);
  q.value_scale = 3.0;
  q.d.with_scale(0.03).with_causal().with_lse();
  check_problem(GetParam(), q, 92);
}

TEST_P(Attention, EmptyProblemsAndNoKeys) {
  check_problem(GetParam(), Problem::padded(0, 17, 17, 2, 1, 64, F16));  // B = 0
  if (::testing::Test::HasFailure() || ::testing::Test::IsSkipped()) return;
  check_problem(GetParam(), Problem::padded(2, 0, 17, 2, 1, 64, F16));  // S_q = 0
  Problem nk = Problem::padded(2, 17, 0, 2, 1, 128, Bf16);              // S_k = 0: o = 0, lse = +inf
  nk.d.with_lse();
  check_problem(GetParam(), nk);
  Problem e = Problem::packed({}, {}, 2, 1, 64, F16);  // B = 0 packed: cu_seqlens [1]
  check_problem(GetParam(), e);
}

TEST(AttentionTyped, MatchesTheErasedPlan) {
  // FlashAttentionPlan<T>'s arguments map onto the erased plan's: the same bits for a packed problem with lse
  // ([H, T_q]) and a padded one with lse ([B, H, S_q]), on the host.
  for (bool varlen : {false, true}) {
    Problem p = varlen ? Problem::packed({3, 9}, {5, 2}, 2, 1, 64, F16) : Problem::padded(2, 6, 4, 2, 1, 64, F16);
    p.d.with_causal().with_lse();
    const Data x(p, 7);
    Data erased = x;
    ASSERT_TRUE(run_on(Stream::host(), x, erased).is_ok());
    Data typed = x;
    const FlashAttentionDescriptor& d = p.d;
    auto plan = FlashAttentionPlan<__half>::select(Stream::host(), d);
    ASSERT_TRUE(plan) << plan.status().to_string();
    FlashAttentionArgs<__half> a;
    a.q = TensorRef<__half, 3>::dense(reinterpret_cast<const __half*>(x.q.data()), {d.tokens_q(), 2, 64});
    a.k = TensorRef<__half, 3>::dense(reinterpret_cast<const __half*>(x.k.data()), {d.tokens_k(), 1, 64});
    a.v = TensorRef<__half, 3>::dense(reinterpret_cast<const __half*>(x.v.data()), {d.tokens_k(), 1, 64});
    a.o = TensorMut<__half, 3>::dense(reinterpret_cast<__half*>(typed.o.data()), {d.tokens_q(), 2, 64});
    if (varlen) {
      a.cu_seqlens_q = TensorRef<int32_t, 1>::dense(p.cu_q.data(), {3});
      a.cu_seqlens_k = TensorRef<int32_t, 1>::dense(p.cu_k.data(), {3});
      a.lse_varlen = TensorMut<float, 2>::dense(reinterpret_cast<float*>(typed.lse.data()), {2, d.total_q});
    } else {
      a.lse_padded = TensorMut<float, 3>::dense(reinterpret_cast<float*>(typed.lse.data()), {2, 2, 6});
    }
    ASSERT_TRUE(plan->run(Stream::host(), {}, a).is_ok());
    EXPECT_TRUE(typed.o == erased.o && typed.lse == erased.lse) << (varlen ? "packed" : "padded");
    EXPECT_EQ(check_outputs(x, typed, Bound::Rounding, "typed"), 24);  // 12 tokens, 2 heads
  }
}

// Both tiles by name (Auto's choice between them is attention_reject_test's AutoTile).
constexpr DeviceAndTile kDeviceTiles[] = {{DeviceKind::Host, FlashAttentionTile::Auto},
                                          {DeviceKind::Sim, FlashAttentionTile::Rows64},
                                          {DeviceKind::Sim, FlashAttentionTile::Rows128},
                                          {DeviceKind::Cuda, FlashAttentionTile::Rows64},
                                          {DeviceKind::Cuda, FlashAttentionTile::Rows128}};
INSTANTIATE_TEST_SUITE_P(Devices, Attention, ::testing::ValuesIn(kDeviceTiles), [](const auto& info) {
  return std::string(to_string(info.param.device)) + (info.param.tile == FlashAttentionTile::Rows128 ? "_m128" : "");
});

}  // namespace
}  // namespace baracuda::test::attention
