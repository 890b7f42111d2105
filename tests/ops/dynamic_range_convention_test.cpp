// DynamicRangeQuantizePlan's conventions (quant_convention.hpp; the formulas in dynamic_range_quantize.hpp):
// - every convention × x kind × q kind × mode × path (the fused warp and block row kernels, the two passes)
//   on host, sim and cuda, against the independent reference of dynamic_range_reference.hpp AND bit for bit
//   against the host device, over rows of exact and near rounding ties (where the conventions differ: counted
//   and required), zeros, NaN, ±inf, constants, all-negative and far-from-zero rows;
// - hand-computed values where PyTorch, Exact and Vllm differ (ties, vLLM's unclamped zero point, its zero
//   scale), on both paths;
// - packed 4-bit output with odd group sizes at every granularity: rejected with QuantizePlan's message, or
//   compared with the reference and the host device;
// - the Vllm workspace (the two passes' multipliers) and every rejection the conventions add.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "baracuda/baracuda.hpp"
#include "ops/dynamic_range_reference.hpp"
#include "ops/dynamic_range_test_support.hpp"
#include "support/devices.hpp"
#include "support/numeric.hpp"
#include "support/random.hpp"
#include "support/tensor.hpp"

namespace baracuda::test::dynamic_range {
namespace {

constexpr QuantConvention kConventions[] = {QuantConvention::PyTorch, QuantConvention::Exact, QuantConvention::Vllm};

Stream host() { return Stream::host(); }

std::pair<int32_t, int32_t> full_range(ElementKind k) {
  switch (k) {
    case ElementKind::S8: return {-128, 127};
    case ElementKind::U8: return {0, 255};
    case ElementKind::S4: return {-8, 7};
    default: return {0, 15};
  }
}

std::string describe(const Desc& d) {
  return std::string(to_string(d.convention)) + " " + std::string(to_string(d.element)) + "→" +
         std::string(to_string(d.quantized)) + " " + d.granularity.to_string() +
         (d.mode == DynamicRangeMode::Symmetric ? " symmetric" : " asymmetric");
}

/// Row-major values as the storage bytes of a dense tensor of kind k (each value must be exact in k).
std::vector<uint8_t> encode_all(ElementKind k, const std::vector<double>& v) {
  std::vector<uint8_t> b(v.size() * static_cast<size_t>(element_bytes(k)));
  for (size_t i = 0; i < v.size(); ++i) {
    const bool ok = encode_exact(k, v[i], b.data() + i * static_cast<size_t>(element_bytes(k)));
    EXPECT_TRUE(ok) << v[i] << " is not a " << to_string(k);
  }
  return b;
}

/// Value v moved `steps` ulps of kind k (f32 or f64).
double nudge(ElementKind k, double v, int steps) {
  for (int i = 0; i < std::abs(steps); ++i) {
    const double to = steps > 0 ? INFINITY : -INFINITY;
    v = k == ElementKind::F32 ? std::nextafter(static_cast<float>(v), static_cast<float>(to)) : std::nextafter(v, to);
  }
  return v;
}

/// Test data over `shape` with rows of its last dimension (`len` elements) of these kinds, by row number % 8:
/// 0 all zero (+0 and −0), 1 and 7 rounding ties of the row's own scale (f32/f64: (k + 0.5)·s moved −1, 0 or
/// +1 ulp, with s the scale the row's range [lo, hi] gives the mode; f16/bf16: random), 2 all negative,
/// 3 far from zero (100..101), 4 random with a NaN, 5 constant, 6 random with +inf. Other kinds: random.
std::vector<double> make_values(ElementKind xk, const Shape& shape, DynamicRangeMode mode, int32_t qmin, int32_t qmax,
                                uint64_t seed) {
  const int64_t n = shape.numel(), len = shape[shape.rank - 1];
  std::vector<double> v;
  random_floats(xk, n, -3.0, 2.0, seed, &v);
  Rng rng(seed ^ 0x5bd1e995u);
  const bool wide = xk == ElementKind::F32 || xk == ElementKind::F64;
  for (int64_t r = 0; r * len < n; ++r) {
    double* row = v.data() + r * len;
    std::vector<double> tmp;
    switch (r % 8) {
      case 0:
        for (int64_t i = 0; i < len; ++i) row[i] = (i % 3 == 1) ? -0.0 : 0.0;
        break;
      case 1:
      case 7: {
        if (!wide || len < 3) break;
        // lo < 0 < hi (no widening) and −lo > hi (max|x| = −lo)
        const double lo = -2.75 - static_cast<double>(rng.below(8)) / 8, hi = 1.5 + static_cast<double>(rng.below(8)) / 8;
        row[0] = lo, row[len - 1] = hi;
        double s;
        if (xk == ElementKind::F32)
          s = mode == DynamicRangeMode::Symmetric ? static_cast<float>(-lo) / static_cast<float>(qmax)
                                                  : static_cast<float>(hi - lo) / static_cast<float>(qmax - qmin);
        else
          s = mode == DynamicRangeMode::Symmetric ? -lo / qmax : (hi - lo) / (qmax - qmin);
        const auto k0 = static_cast<int64_t>(std::ceil(lo / s)), k1 = static_cast<int64_t>(std::floor(hi / s)) - 1;
        for (int64_t i = 1; i + 1 < len; ++i) {
          const int64_t k = k0 + static_cast<int64_t>(rng.below(static_cast<uint64_t>(k1 - k0 + 1)));
          double t = (static_cast<double>(k) + 0.5) * s;
          if (xk == ElementKind::F32) t = static_cast<float>(t);
          row[i] = std::clamp(nudge(xk, t, static_cast<int>(rng.below(3)) - 1), lo, hi);
        }
        break;
      }
      case 2:
      case 3:
        random_floats(xk, len, r % 8 == 2 ? -4.0 : 100.0, r % 8 == 2 ? -0.25 : 101.0, seed + static_cast<uint64_t>(r),
                      &tmp);
        std::copy(tmp.begin(), tmp.end(), row);
        break;
      case 4: row[len / 2] = std::numeric_limits<double>::quiet_NaN(); break;
      case 5:
        for (int64_t i = 0; i < len; ++i) row[i] = 1.25;
        break;
      case 6: row[len - 1] = INFINITY; break;
    }
  }
  return v;
}

class DynamicRangeConventions : public ::testing::TestWithParam<DeviceKind> {};

TEST_P(DynamicRangeConventions, EveryConventionAndPathMatchesTheReference) {
  BARACUDA_TEST_STREAM(stream, GetParam());
  const std::vector<PathCase> cases{
      {"9x40 per token", Shape{9, 40}, QuantGranularity::per_token(), true, 40},
      {"8x16 per group(-1, 4)", Shape{8, 16}, QuantGranularity::per_group(-1, 4), true, 4},
      {"8x24 per channel 0", Shape{8, 24}, QuantGranularity::per_channel(0), true, 24},
      {"8x24 per channel -1", Shape{8, 24}, QuantGranularity::per_channel(-1), false, 8},
      {"8x24 per group(0, 2)", Shape{8, 24}, QuantGranularity::per_group(0, 2), false, 2},
      {"8x24 per tensor", Shape{8, 24}, QuantGranularity::per_tensor(), false, 192},
      {"8x1100 per token", Shape{8, 1100}, QuantGranularity::per_token(), true, 1100},
      {"2x12500 per token", Shape{2, 12500}, QuantGranularity::per_token(), true, 12500},
  };
  const ElementKind xs[] = {ElementKind::F32, ElementKind::F64, ElementKind::F16, ElementKind::Bf16};
  const ElementKind qs[] = {ElementKind::S8, ElementKind::U8, ElementKind::S4, ElementKind::U4};
  int64_t differing[2] = {0, 0};  // f32 elements where PyTorch's q differs from Exact's, per mode
  uint64_t seed = 900;
  for (const PathCase& c : cases)
    for (ElementKind xk : xs)
      for (ElementKind qk : qs)
        for (DynamicRangeMode m : {DynamicRangeMode::Symmetric, DynamicRangeMode::Asymmetric}) {
          if (c.shape.numel() > 20000 && qk != ElementKind::S8) continue;  // the long rows: s8 is enough
          const auto [qmin, qmax] = full_range(qk);
          const std::vector<double> x = make_values(xk, c.shape, m, qmin, qmax, seed++);
          const std::vector<uint8_t> xb = encode_all(xk, x);
          Expected by[3];
          for (QuantConvention conv : kConventions) {
            const Desc d = Desc{}.with_element(xk).with_quantized(qk).with_shape(c.shape).with_granularity(c.g)
                               .with_mode(m).with_convention(conv);
            SCOPED_TRACE(c.name + " " + describe(d));
            if (conv == QuantConvention::Vllm && xk == ElementKind::F64) {
              auto p = dynamic::DynamicRangeQuantizePlan::select(stream, d);
              ASSERT_FALSE(p.is_ok());
              EXPECT_EQ(p.error().code, ErrorCode::Unsupported);
              continue;
            }
            const Expected want = reference(d, x, qmin, qmax);
            by[static_cast<int>(conv)] = want;
            auto got = run_plan(stream, d, xb, dense_layout(c.shape));
            ASSERT_TRUE(got.is_ok()) << got.error().to_string();
            EXPECT_EQ(got->variant, stream.device() == DeviceKind::Host ? "segment_reduce+quantize"
                                                                        : expected_variant(c, xk));
            EXPECT_TRUE(same_outputs(*got, want.q, want.scale, want.zp)) << "vs the reference";
            if (stream.device() != DeviceKind::Host) {
              auto on_host = run_plan(host(), d, xb, dense_layout(c.shape));
              ASSERT_TRUE(on_host.is_ok()) << on_host.error().to_string();
              EXPECT_TRUE(same_outputs(*got, *on_host)) << "vs the host device";
            }
          }
          if (xk == ElementKind::F32)
            for (size_t i = 0; i < x.size(); ++i) differing[static_cast<int>(m)] += by[0].q[i] != by[1].q[i];
        }
  // The data separates the conventions: PyTorch's reciprocal and Exact's division round differently.
  EXPECT_GT(differing[0], 20);
  EXPECT_GT(differing[1], 20);
}

// Hand-computed values. s8 symmetric over one row whose max|x| is 127·s with s = 7·2⁻⁷ = 0.0546875 (exact):
// x = (k + 0.5)·s is an exact tie of x / s, which Exact rounds half to even; x · f32(1/s) (PyTorch) and
// x · f32(127 / max|x|) (Vllm, the same f32 value here) land just above |k + 0.5|.
TEST_P(DynamicRangeConventions, HandComputedTiesPerConvention) {
  BARACUDA_TEST_STREAM(stream, GetParam());
  const std::vector<double> row{6.9453125, -6.91796875, -6.80859375, 2.76171875, 0.13671875, -0.13671875, 0.19140625, 0};
  const std::vector<int32_t> pytorch{127, -127, -125, 51, 2, -2, 4, 0};  // −126.5(1+ε) → −127, 50.5(1+ε) → 51
  const std::vector<int32_t> exact{127, -126, -124, 50, 2, -2, 4, 0};    // −126.5 → −126, 50.5 → 50
  // per_token on [2, 8] (fused on sim) and per_channel(1) on the transpose [8, 2] (the two passes).
  std::vector<double> rows(row);
  rows.insert(rows.end(), row.begin(), row.end());
  std::vector<double> cols(16);
  for (int i = 0; i < 8; ++i) cols[2 * i] = cols[2 * i + 1] = row[static_cast<size_t>(i)];
  for (QuantConvention conv : kConventions)
    for (bool transposed : {false, true}) {
      const Desc d = Desc{}.with_shape(transposed ? Shape{8, 2} : Shape{2, 8})
                         .with_granularity(transposed ? QuantGranularity::per_channel(1) : QuantGranularity::per_token())
                         .with_convention(conv);
      SCOPED_TRACE(describe(d));
      auto got = run_plan(stream, d, encode_all(ElementKind::F32, transposed ? cols : rows), dense_layout(d.shape));
      ASSERT_TRUE(got.is_ok()) << got.error().to_string();
      const std::vector<int32_t>& want = conv == QuantConvention::Exact ? exact : pytorch;
      for (int t = 0; t < 2; ++t) {
        EXPECT_EQ(got->scale[static_cast<size_t>(t)], 0.0546875);
        EXPECT_EQ(got->zp[static_cast<size_t>(t)], 0);
        for (int i = 0; i < 8; ++i)
          EXPECT_EQ(got->q[static_cast<size_t>(transposed ? 2 * i + t : 8 * t + i)], want[static_cast<size_t>(i)]) << i;
      }
    }
}

// vLLM's asymmetric (azp) kernel by hand, s8, per token (rows of 4), on both paths, against PyTorch's:
//  [−1, 0, 3, 1]: s = f32(4/255), zp = nearbyint(−128 − (−1)/s) = −64 (= PyTorch's), q −128 −64 127 0
//  [2, 6, 4, 3]:  not widened: s = f32(4/255), 2/s = 127.49999 and −128 − 127.49999 rounds to −255.5 in f32,
//                 zp = −256 (PyTorch: widened to [0, 6], zp = −128); q = sat(nearbyint(x · f32(1/s)) − 256):
//                 2 → 127 − 256 → −128, 6 → 382 − 256 = 126, 4 → 255 − 256 = −1, 3 → 191 − 256 = −65
//  [5, 5, 5, 5]:  s = 0, zp = nearbyint(−128 − 5/0) = −inf → INT32_MIN; x · (1/0) = inf → INT32_MAX; their
//                 wrapped sum is −1 (PyTorch: s = 5/255, zp = −128, q = 127)
//  [−5, ...]:     s = 0, zp = INT32_MAX; −inf → INT32_MIN; sum −1
//  [0, 0, −0, 0]: s = +0, zp = NaN → 0, q = 0 (0 · inf = NaN → 0) (PyTorch: s = 1)
//  [NaN, 1, 2, 3]: NaN skipped: s = f32(2/255), zp = −256; NaN → 0 − 256 → −128 (PyTorch: s = NaN, q = 0)
// Symmetric on the same rows: s = max|x| / 127 (0 for the zero row, where PyTorch gives 1), zp = 0.
TEST_P(DynamicRangeConventions, HandComputedVllm) {
  BARACUDA_TEST_STREAM(stream, GetParam());
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> x{-1, 0, 3, 1, 2, 6, 4, 3, 5, 5, 5, 5, -5, -5, -5, -5, 0, 0, -0.0, 0, nan, 1, 2, 3};
  const float s4 = 4.0f / 255.0f, s2 = 2.0f / 255.0f;
  const std::vector<double> asym_scale{s4, s4, 0, 0, 0, s2};
  const std::vector<int32_t> asym_zp{-64, -256, INT32_MIN, INT32_MAX, 0, -256};
  const std::vector<int32_t> asym_q{-128, -64, 127, 0, -128, 126, -1, -65, -1, -1, -1, -1,
                                    -1,   -1,  -1,  -1, 0,    0,   0,  0,   -128, -128, -1, 126};
  const std::vector<double> sym_scale{3.0f / 127.0f, 6.0f / 127.0f, 5.0f / 127.0f, 5.0f / 127.0f, 0, 3.0f / 127.0f};
  const std::vector<int32_t> sym_q{-42, 0, 127, 42, 42, 127, 85, 64, 127, 127, 127, 127,
                                   -127, -127, -127, -127, 0, 0, 0, 0, 0, 42, 85, 127};
  std::vector<double> xt(24);  // the transpose [4, 6], per_channel(1): the two passes on sim
  for (int r = 0; r < 6; ++r)
    for (int c = 0; c < 4; ++c) xt[static_cast<size_t>(c * 6 + r)] = x[static_cast<size_t>(r * 4 + c)];
  for (DynamicRangeMode m : {DynamicRangeMode::Symmetric, DynamicRangeMode::Asymmetric})
    for (bool transposed : {false, true}) {
      const Desc d = Desc{}.with_shape(transposed ? Shape{4, 6} : Shape{6, 4})
                         .with_granularity(transposed ? QuantGranularity::per_channel(1) : QuantGranularity::per_token())
                         .with_mode(m).with_convention(QuantConvention::Vllm);
      SCOPED_TRACE(describe(d) + (transposed ? " transposed" : ""));
      auto got = run_plan(stream, d, encode_all(ElementKind::F32, transposed ? xt : x), dense_layout(d.shape));
      ASSERT_TRUE(got.is_ok()) << got.error().to_string();
      const bool sym = m == DynamicRangeMode::Symmetric;
      std::vector<int32_t> q(24);
      for (int r = 0; r < 6; ++r)
        for (int c = 0; c < 4; ++c)
          q[static_cast<size_t>(r * 4 + c)] = got->q[static_cast<size_t>(transposed ? c * 6 + r : r * 4 + c)];
      got->q = q;
      EXPECT_TRUE(same_outputs(*got, sym ? sym_q : asym_q, sym ? sym_scale : asym_scale,
                               sym ? std::vector<int32_t>(6, 0) : asym_zp));
      if (stream.device() != DeviceKind::Host) {
        EXPECT_EQ(got->variant, transposed ? "segment_reduce+quantize" : "fused_rows_warp");
      }
    }
}

INSTANTIATE_TEST_SUITE_P(Devices, DynamicRangeConventions,
                         ::testing::Values(DeviceKind::Host, DeviceKind::Sim, DeviceKind::Cuda),
                         [](const auto& info) { return std::string(to_string(info.param)); });

// Packed s4/u4 pairs elements along the last dimension of the iteration space: the group size for a per-group
// granularity along the last axis, the last dimension otherwise. Odd ones are rejected at select with
// QuantizePlan's message (both families reject the same problems); the others run and match the reference.
class DynamicRangePackedPairs : public ::testing::TestWithParam<DeviceKind> {};

TEST_P(DynamicRangePackedPairs, OddGroupSizesAtEveryGranularity) {
  BARACUDA_TEST_STREAM(stream, GetParam());
  const std::vector<QuantGranularity> gs{
      QuantGranularity::per_tensor(),      QuantGranularity::per_channel(0),     QuantGranularity::per_channel(-1),
      QuantGranularity::per_token(),       QuantGranularity::per_group(-1, 3),   QuantGranularity::per_group(-1, 9),
      QuantGranularity::per_group(-1, 1),  QuantGranularity::per_group(-1, 6),   QuantGranularity::per_group(0, 3),
      QuantGranularity::per_group(0, 1),   QuantGranularity::per_group(1, 3)};
  int accepted = 0, rejected = 0;
  uint64_t seed = 3000;
  for (const Shape& shape : {Shape{6, 18}, Shape{6, 9}, Shape{2, 6, 18}})
    for (ElementKind qk : {ElementKind::S4, ElementKind::U4})
      for (const QuantGranularity& g : gs)
        for (DynamicRangeMode m : {DynamicRangeMode::Symmetric, DynamicRangeMode::Asymmetric}) {
          const Desc d = Desc{}.with_quantized(qk).with_shape(shape).with_granularity(g).with_mode(m);
          SCOPED_TRACE(std::to_string(shape.rank) + "-d (last " + std::to_string(shape[shape.rank - 1]) + ") " +
                       describe(d));
          const int rank = shape.rank, axis = g.axis < 0 ? g.axis + rank : g.axis;
          if (g.kind == QuantGranularity::Kind::PerGroup && shape[axis] % g.group_size != 0) continue;
          const bool group_last = g.kind == QuantGranularity::Kind::PerGroup && axis == rank - 1;
          const int64_t pairs = group_last ? g.group_size : shape[rank - 1];
          auto plan = dynamic::DynamicRangeQuantizePlan::select(stream, d);
          if (pairs % 2 != 0) {
            ++rejected;
            ASSERT_FALSE(plan.is_ok());
            const std::string want = "DynamicRangeQuantizePlan: packed " + std::string(to_string(qk)) +
                                     " pairs elements along the last dimension, so " +
                                     (group_last ? "the group size along it" : "its extent") + " must be even; got " +
                                     std::to_string(pairs);
            EXPECT_EQ(plan.error().code, ErrorCode::InvalidProblem);
            EXPECT_EQ(plan.error().message, want);
            // QuantizePlan rejects the same problem with the same words.
            const QuantizeDescriptor qd = QuantizeDescriptor{}.with_op(QuantizeOp::Quantize).with_quantized(qk)
                                              .with_shape(shape).with_granularity(g);
            auto qp = dynamic::QuantizePlan::select(stream, qd);
            ASSERT_FALSE(qp.is_ok());
            EXPECT_EQ("DynamicRange" + qp.error().message, want);
            continue;
          }
          ++accepted;
          ASSERT_TRUE(plan.is_ok()) << plan.error().to_string();
          const auto [qmin, qmax] = full_range(qk);
          const std::vector<double> x = make_values(ElementKind::F32, shape, m, qmin, qmax, seed++);
          const std::vector<uint8_t> xb = encode_all(ElementKind::F32, x);
          const Expected want = reference(d, x, qmin, qmax);
          auto got = run_plan(stream, d, xb, dense_layout(shape));
          ASSERT_TRUE(got.is_ok()) << got.error().to_string();
          EXPECT_TRUE(same_outputs(*got, want.q, want.scale, want.zp)) << "vs the reference";
          auto on_host = run_plan(host(), d, xb, dense_layout(shape));
          ASSERT_TRUE(on_host.is_ok()) << on_host.error().to_string();
          EXPECT_TRUE(same_outputs(*got, *on_host)) << "vs the host device";
        }
  EXPECT_GT(accepted, 40);
  EXPECT_GT(rejected, 40);
}

INSTANTIATE_TEST_SUITE_P(Devices, DynamicRangePackedPairs,
                         ::testing::Values(DeviceKind::Host, DeviceKind::Sim, DeviceKind::Cuda),
                         [](const auto& info) { return std::string(to_string(info.param)); });

// The Vllm symmetric two passes keep vLLM's multipliers (f32, one per segment) in the workspace, after the
// zero point's room; the fused path keeps them in registers. Too small a workspace is rejected.
TEST(DynamicRangeVllmWorkspace, MultipliersArePartOfTheWorkspace) {
  auto up = [](size_t n) { return (n + 255) / 256 * 256; };
  const Desc two_pass = Desc{}.with_shape(Shape{300, 8}).with_granularity(QuantGranularity::per_channel(1));
  for (const Stream& st : {host(), Stream::sim()}) {
    auto torch = dynamic::DynamicRangeQuantizePlan::select(st, two_pass);
    auto vllm = dynamic::DynamicRangeQuantizePlan::select(st, Desc{two_pass}.with_convention(QuantConvention::Vllm));
    auto vllm_asym = dynamic::DynamicRangeQuantizePlan::select(
        st, Desc{two_pass}.with_convention(QuantConvention::Vllm).with_mode(DynamicRangeMode::Asymmetric));
    auto torch_asym = dynamic::DynamicRangeQuantizePlan::select(st, Desc{two_pass}.with_mode(DynamicRangeMode::Asymmetric));
    ASSERT_TRUE(torch.is_ok() && vllm.is_ok() && vllm_asym.is_ok() && torch_asym.is_ok());
    EXPECT_EQ(vllm->workspace_size(), torch->workspace_size() + up(8 * sizeof(float)));
    EXPECT_EQ(vllm_asym->workspace_size(), torch_asym->workspace_size());
  }
  // Fused (per token on sim): no multipliers.
  const Desc fused = Desc{}.with_shape(Shape{8, 64});
  auto a = dynamic::DynamicRangeQuantizePlan::select(Stream::sim(), fused);
  auto b = dynamic::DynamicRangeQuantizePlan::select(Stream::sim(), Desc{fused}.with_convention(QuantConvention::Vllm));
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  EXPECT_EQ(b->sku().variant, "fused_rows_warp");
  EXPECT_EQ(a->workspace_size(), b->workspace_size());
  // One byte short of the multipliers: WorkspaceTooSmall.
  auto p = dynamic::DynamicRangeQuantizePlan::select(host(), Desc{two_pass}.with_convention(QuantConvention::Vllm));
  ASSERT_TRUE(p.is_ok());
  std::vector<float> x(2400, 1.0f), scale(8);
  std::vector<int8_t> q(2400);
  alignas(256) static uint8_t ws[4096];
  ASSERT_LE(p->workspace_size(), sizeof(ws));
  const dynamic::DynamicRangeQuantizeArgs t{ConstDynTensor::dense(x.data(), ElementKind::F32, Shape{300, 8}),
                                            DynTensor::dense(q.data(), ElementKind::S8, Shape{300, 8}),
                                            DynTensor::dense(scale.data(), ElementKind::F32, Shape{8}), DynTensor{}};
  EXPECT_EQ(p->run(host(), Workspace(ws, p->workspace_size() - 1), t).code(), ErrorCode::WorkspaceTooSmall);
  ASSERT_TRUE(p->run(host(), Workspace(ws, p->workspace_size()), t).is_ok());
  for (int8_t v : q) EXPECT_EQ(v, 127);  // x = 1 everywhere: m = 127
  for (float s : scale) EXPECT_EQ(s, 1.0f / 127.0f);
}

TEST(DynamicRangeConventionRejects, ConventionRules) {
  const Desc ok = Desc{}.with_shape(Shape{4, 8});
  auto expect = [](const Desc& d, ErrorCode code, const std::string& words) {
    for (const Stream& st : {host(), Stream::sim()}) {
      auto p = dynamic::DynamicRangeQuantizePlan::select(st, d);
      ASSERT_FALSE(p.is_ok());
      EXPECT_EQ(p.error().code, code) << p.error().to_string();
      EXPECT_NE(p.error().message.find(words), std::string::npos) << p.error().message;
      EXPECT_EQ(p.error().message.rfind("DynamicRangeQuantizePlan: ", 0), 0u) << p.error().message;
    }
  };
  expect(Desc{ok}.with_convention(QuantConvention::TransformerEngine), ErrorCode::Unsupported,
         "transformer_engine convention applies to FP8 quantization only");
  expect(Desc{ok}.with_convention(QuantConvention::TransformerEngine).with_mode(DynamicRangeMode::Asymmetric),
         ErrorCode::Unsupported, "transformer_engine");
  expect(Desc{ok}.with_convention(QuantConvention::Vllm).with_element(ElementKind::F64), ErrorCode::Unsupported,
         "vllm convention takes f16, bf16 or f32 x");
  expect(Desc{ok}.with_convention(static_cast<QuantConvention>(9)), ErrorCode::InvalidProblem, "invalid QuantConvention");
  // Accepted: every other convention × element kind.
  for (QuantConvention c : kConventions)
    for (ElementKind e : {ElementKind::F16, ElementKind::Bf16, ElementKind::F32, ElementKind::F64})
      EXPECT_EQ(dynamic::DynamicRangeQuantizePlan::select(host(), Desc{ok}.with_convention(c).with_element(e)).is_ok(),
                !(c == QuantConvention::Vllm && e == ElementKind::F64))
          << to_string(c) << " " << to_string(e);
  // The convention is part of the descriptor: default PyTorch, compared and hashed.
  EXPECT_EQ(Desc{}.convention, QuantConvention::PyTorch);
  EXPECT_NE(Desc{ok}, Desc{ok}.with_convention(QuantConvention::Exact));
  EXPECT_NE(Desc{ok}.hash(), Desc{ok}.with_convention(QuantConvention::Exact).hash());
  EXPECT_NE(Desc{ok}.with_convention(QuantConvention::Vllm).hash(), Desc{ok}.with_convention(QuantConvention::Exact).hash());
}

}  // namespace
}  // namespace baracuda::test::dynamic_range
