// FlashAttentionBackwardPlan on every device (host, sim, cuda when a GPU is usable) against the f64 evaluation of
// attention_backward_test_support.hpp (the host reference within one rounding, the kernels within
// attention_backward.hpp's bound), and the host reference against central finite differences of
// L = Σ dO·attention(q, k, v) in f64. Lengths 1, 17 and 129 (not tile multiples), q longer and shorter than kv, causal,
// sliding windows with rows that see no key (dq = 0) and keys no query sees (dk = dv = 0), packed batches of mixed
// lengths, GQA 1, 2, 4 and 8, head dims 64, 96 and 128, f16 and bf16, a strided layout; every element no row covers
// keeps its sentinel; sim and cuda give the same bits on a second run (one case: the sim's time is CI's).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "attention_backward_test_support.hpp"
#include "support/devices.hpp"

namespace baracuda::test::attention {
namespace {

constexpr ElementKind F16 = ElementKind::F16, Bf16 = ElementKind::Bf16;

/// Runs `p`'s backward on `device` and checks dq, dk, dv (and, off the host when `rerun`, a second run's bits).
void check_bwd(DeviceKind device, const Problem& p, uint64_t seed, bool rerun = false) {
  std::string why;
  const auto st = stream_for(device, &why);
  if (!st) GTEST_SKIP() << why;
  const std::string what = name_of(p);
  const BwdData x(p, seed);
  BwdData got = x;
  const Status s = run_backward(*st, x, got);
  ASSERT_TRUE(s.is_ok()) << what << ": " << s.to_string();
  const BwdExpect r = expect_backward(x);
  const int64_t n = check_backward(got, r, device == DeviceKind::Host ? Bound::Rounding : Bound::Kernel, what);
  EXPECT_GT(n, 0) << what;
  if (rerun && device != DeviceKind::Host && !::testing::Test::HasFailure()) {
    BwdData again = x;
    ASSERT_TRUE(run_backward(*st, x, again).is_ok());
    EXPECT_TRUE(again.dq == got.dq && again.dk == got.dk && again.dv == got.dv) << what << ": other bits on a rerun";
  }
}

class AttentionBackward : public ::testing::TestWithParam<DeviceKind> {};

TEST_P(AttentionBackward, LengthsAndCausal) {
  struct L {
    int64_t s_q, s_k;
    bool causal;
  };
  const L lens[] = {{1, 1, false},    {1, 1, true},     {17, 17, false}, {17, 17, true},
                    {129, 129, true}, {17, 129, false}, {129, 17, true}};
  uint64_t seed = 100;
  for (const L& l : lens) {
    Problem p = Problem::padded(1, l.s_q, l.s_k, 2, 1, 64, (l.s_q + l.s_k) % 2 ? Bf16 : F16);
    p.d.with_causal(l.causal);
    check_bwd(GetParam(), p, ++seed);
    if (::testing::Test::HasFailure() || ::testing::Test::IsSkipped()) return;
  }
}

TEST_P(AttentionBackward, HeadDimsKindsAndGroups) {
  uint64_t seed = 200;
  const int64_t groups[] = {1, 4, 8};
  int n = 0;
  for (int64_t dim : {64, 96, 128})
    for (ElementKind e : {F16, Bf16}) {
      const int64_t g = groups[n++ % 3];
      Problem p = Problem::padded(1, 24, 40, g, 1, dim, e);
      p.d.with_causal(e == Bf16);
      check_bwd(GetParam(), p, ++seed);
      if (::testing::Test::HasFailure() || ::testing::Test::IsSkipped()) return;
    }
}

TEST_P(AttentionBackward, SlidingWindowsAndEmptyRows) {
  struct W {
    int64_t s_q, s_k, left, right;
    bool causal;
  };
  const W ws[] = {
      {70, 70, 8, 0, true},     // a band of 9 keys
      {90, 40, 0, 0, false},    // q longer: rows 0..49 see no key (dq = 0)
      {50, 30, -1, -1, true},   // causal with s_q > s_k: the first 20 rows see no key
      {40, 100, 3, 5, false},   // kv longer, both sides bounded: keys 0..52 seen by no query (dk = dv = 0)
      {129, 129, 70, 1, false}  // a band crossing tiles
  };
  uint64_t seed = 300;
  for (const W& w : ws) {
    Problem p = Problem::padded(1, w.s_q, w.s_k, 2, 1, 64, F16);
    p.d.with_causal(w.causal).with_window(w.left, w.right);
    check_bwd(GetParam(), p, ++seed);
    if (::testing::Test::HasFailure() || ::testing::Test::IsSkipped()) return;
  }
}

TEST_P(AttentionBackward, PackedBatches) {
  Problem a = Problem::packed({1, 30, 17, 0, 20}, {5, 30, 70, 3, 20}, 4, 1, 64, F16);
  a.d.with_causal();
  check_bwd(GetParam(), a, 401);
  if (::testing::Test::HasFailure() || ::testing::Test::IsSkipped()) return;
  Problem b = Problem::packed({17, 33, 1}, {40, 20, 1}, 4, 1, 128, Bf16);
  check_bwd(GetParam(), b, 402);
  if (::testing::Test::HasFailure()) return;
  // Invalid offsets: the effective ones (running maximum, clamped) {5, 40, 40, 60} and {0, 30, 30, 30}; sequences
  // longer than max_seqlen_q and max_seqlen_k (batch 0: 35 queries, 30 keys): its rows past 20 are not written and
  // contribute nothing, its keys past 20 get no dk, dv rows but contribute to dq.
  Problem c = Problem::packed({20, 20, 20}, {10, 10, 10}, 2, 1, 64, F16);
  c.cu_q = {5, 40, 20, 60};
  c.cu_k = {-5, 30, 10, 30};
  c.d.with_varlen(60, 30, 20, 20).with_window(4, 12);
  check_bwd(GetParam(), c, 403);
}

TEST_P(AttentionBackward, Layouts) {
  Problem p = Problem::padded(2, 30, 45, 4, 2, 64, Bf16);
  p.in_layout = LayoutKind2::HeadMajor;
  p.out_layout = LayoutKind2::Padded;
  p.d.with_causal();
  check_bwd(GetParam(), p, 501);
  if (::testing::Test::HasFailure() || ::testing::Test::IsSkipped()) return;
  Problem u = Problem::padded(1, 20, 33, 2, 1, 64, F16);
  u.in_layout = u.out_layout = LayoutKind2::Unaligned;  // the element-by-element copies and stores
  check_bwd(GetParam(), u, 502);
}

TEST_P(AttentionBackward, SameBitsOnARerun) {
  Problem p = Problem::packed({40, 9}, {70, 20}, 4, 1, 64, F16);  // GQA 4: dk, dv sum over the group
  p.d.with_causal();
  check_bwd(GetParam(), p, 601, true);
}

TEST_P(AttentionBackward, EmptyProblems) {
  std::string why;
  const auto st = stream_for(GetParam(), &why);
  if (!st) GTEST_SKIP() << why;
  for (Problem p : {Problem::padded(0, 5, 5, 2, 1, 64, F16), Problem::padded(2, 0, 5, 2, 1, 64, F16),
                    Problem::padded(1, 6, 0, 2, 1, 64, F16)}) {
    const BwdData x(p, 1);
    BwdData got = x;
    ASSERT_TRUE(run_backward(*st, x, got).is_ok()) << name_of(p);
    // s_k = 0: every query sees no key: dq = 0; there are no dk, dv rows.
    check_backward(got, expect_backward(x), GetParam() == DeviceKind::Host ? Bound::Rounding : Bound::Kernel,
                   name_of(p));
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, AttentionBackward, ::testing::ValuesIn(kTestDevices),
                         [](const auto& info) { return std::string(to_string(info.param)); });

/// The host reference against central differences of L(q, k, v) = Σ dO·o(q, k, v) in f64 (the test's own forward),
/// at every q, k and v element of a tiny causal GQA problem. The reference uses the rounded o and lse, so the bound is
/// one output rounding plus the effect of those roundings on D and P.
TEST(AttentionBackwardFiniteDifferences, HostReference) {
  for (ElementKind e : {F16, Bf16}) {
    Problem p = Problem::padded(1, 3, 5, 2, 1, 64, e);
    p.d.with_causal();
    const BwdData x(p, 11);
    BwdData got = x;
    ASSERT_TRUE(run_backward(Stream::host(), x, got).is_ok());
    const BwdExpect r = expect_backward(x);
    const Data& in = x.x;
    in.prepare();
    // L as a function of the decoded inputs.
    auto loss = [&](const std::vector<double>& q, const std::vector<double>& k, const std::vector<double>& v) {
      Data y = in;
      y.qd_ = q, y.kd_ = k, y.vd_ = v;
      double l = 0;
      for (int64_t h = 0; h < p.d.heads; ++h)
        for (int64_t i = 0; i < p.d.seqlen_q; ++i) {
          const RowExpect o = y.expect(0, h, i);
          for (int64_t c = 0; c < p.d.head_dim; ++c)
            l += get(e, x.d_o, (i * p.d.heads + h) * p.d.head_dim + c) * o.o[static_cast<size_t>(c)];
        }
      return l;
    };
    const double step = 1e-5, u = unit(e);
    auto fd = [&](int which, size_t at) {
      std::vector<double> q = in.qd_, k = in.kd_, v = in.vd_;
      std::vector<double>& t = which == 0 ? q : which == 1 ? k : v;
      const double x0 = t[at];
      t[at] = x0 + step;
      const double lp = loss(q, k, v);
      t[at] = x0 - step;
      return (lp - loss(q, k, v)) / (2 * step);
    };
    int64_t checked = 0;
    for (int which = 0; which < 3; ++which) {
      const std::vector<uint8_t>& g = which == 0 ? got.dq : which == 1 ? got.dk : got.dv;
      const std::vector<double>& mag = which == 0 ? r.mq : which == 1 ? r.mk : r.mv;
      for (size_t at = 0; at < g.size() / 2; ++at) {
        const double want = fd(which, at), have = get(e, g, static_cast<int64_t>(at));
        // one rounding of the gradient; o's rounding in D and lse's in P, relative to the terms; the difference
        // quotient's own error (~step² and cancellation)
        const double tol = u * std::fabs(want) + 2 * u * mag[at] + tiny(e) + 1e-7;
        ASSERT_LE(std::fabs(have - want), tol) << to_string(e) << " "
                                               << "qkv"[which] << " element " << at;
        ++checked;
      }
    }
    EXPECT_EQ(checked, 3 * 2 * 64 + 2 * 5 * 64);
  }
}

}  // namespace
}  // namespace baracuda::test::attention
