// The fp8_gemm family's bespoke kernel (src/ops/fp8_gemm/kernels.cuh), run directly on the sim device through
// its table (fp8_gemm_kernels.cu) against an f64 reference written here: D = act(α·acc + bias) with
// acc = Σ_kb w_kb·Σ_{k in kb} A[m, k]·B[n, k] (w = a_scale·b_scale per tensor, or a_scale[m, kb]·b_scale[n/128, kb]
// per 128-wide K block), an f16/bf16/f32 D or an FP8 D = sat(v·d_scale) with amax = max |v|. Every A/B kind pair,
// every output kind, both scalings, ragged shapes on both tiles (M ≤ 32 runs the decode tile), padded leading
// dimensions, both layouts of the Block128 scales, every bias kind and activation, empty problems, a NaN.
// Every case runs twice and must give the same bits (the amax starts at a value the kernel must reset); the
// outputs' padding is checked untouched, and the operands' padding holds NaN codes, so a read outside shows.
//
// Tolerance, per element, against the exact value r = act(v), v = α·acc + bias, mag = Σ_kb |w_kb|·Σ |a·b|:
//   e_v = |α|·(K/128 + 131)·2^-24·mag + 2^-22·(|α·acc| + |bias|)
// Each 128-wide K block's products are exact in f32 and summed by at most 128 f32 roundings; each promotion
// rounds w (Block128) and the fma; the epilogue rounds (α·sa)·sb (Tensor), the product and the bias sum.
// f16/bf16/f32 D: |got − r| ≤ 1.25·e_v + u·(|r| + 1.25·e_v) + 2^-24, u the output's unit roundoff (2^-20 for
// f32, covering the f32 activation functions), 1.25 the activations' largest slope (1.13, GELU) rounded up.
// FP8 D: |got − clamp(r·ds)| ≤ ulp(clamp(r·ds)) + ds·(1.25·e_v + 2^-20·|r|) (within one FP8 step of the exact
// value; clamp: ± the largest finite). amax: within max(1.25·e_v + 2^-20·|r|) of max |r|, and exactly one of the
// kernel's own values: round_sat(amax·ds) is the magnitude of some element of D and at least every other's.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "baracuda/core/element.hpp"
#include "baracuda/ops/fp8_gemm.hpp"
#include "device/convert.cuh"  // the FP8 roundings, host-callable
#include "fp8_gemm_kernels.hpp"
#include "support/linear_activation.hpp"
#include "support/numeric.hpp"
#include "support/random.hpp"
#include "support/sim_context.hpp"

namespace baracuda::test {
namespace {

using Act = LinearActivation;
using Scaling = Fp8GemmScaling;
constexpr ElementKind kE4 = ElementKind::Fp8E4M3, kE5 = ElementKind::Fp8E5M2;
constexpr ElementKind kF16 = ElementKind::F16, kBf16 = ElementKind::Bf16, kF32 = ElementKind::F32;

/// 16-byte aligned host bytes (the sim device reads host memory).
class Bytes {
 public:
  explicit Bytes(size_t n = 0) : chunks_((n + 15) / 16 + 1) {}
  uint8_t* data() { return reinterpret_cast<uint8_t*>(chunks_.data()); }
  const uint8_t* data() const { return reinterpret_cast<const uint8_t*>(chunks_.data()); }
  size_t size() const { return chunks_.size() * 16; }
  bool operator==(const Bytes& o) const { return std::memcmp(chunks_.data(), o.chunks_.data(), size()) == 0; }

 private:
  struct alignas(16) Chunk {
    uint8_t b[16];
  };
  std::vector<Chunk> chunks_;
};

__nv_fp8_interpretation_t fp8_format(ElementKind k) { return k == kE4 ? __NV_E4M3 : __NV_E5M2; }
double fp8_max(ElementKind k) { return k == kE4 ? 448.0 : 57344.0; }
constexpr uint8_t kFp8Nan = 0x7f;  // a NaN in both FP8 kinds

/// The spacing of the FP8 grid of kind k at magnitude x.
double fp8_ulp(ElementKind k, double x) {
  const int mant = k == kE4 ? 3 : 2, emin = k == kE4 ? -6 : -14;
  x = std::fabs(x);
  const int e = x < std::ldexp(1.0, emin) ? emin : std::ilogb(x);
  return std::ldexp(1.0, e - mant);
}

struct Case {
  int64_t m = 1, n = 1, k = 16;
  ElementKind a = kE4, b = kE4, d = kBf16;
  Scaling scaling = Scaling::Tensor;
  int64_t lda_pad = 0, ldb_pad = 0, ldd_pad = 0;  ///< lda = K + lda_pad (a multiple of 16), ...
  bool scales_transposed = false;                 ///< Block128: a_scale with strides (1, M), b_scale (1, ⌈N/128⌉)
  double alpha = 1.0;
  bool bias = false;
  ElementKind bias_kind = kBf16;
  Act act = Act::None;
  bool amax = false;     ///< FP8 D only
  int64_t nan_row = -1;  ///< ≥ 0: one NaN code in this row of A
};

std::string describe(const Case& c) {
  std::string s = std::string(to_string(c.a)) + "x" + std::string(to_string(c.b)) + "->" + std::string(to_string(c.d)) +
                  " " + std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k) + " " +
                  std::string(to_string(c.scaling));
  if (c.lda_pad || c.ldb_pad || c.ldd_pad) s += " padded";
  if (c.scales_transposed) s += " scales-transposed";
  if (c.alpha != 1.0) s += " alpha " + std::to_string(c.alpha);
  if (c.bias) s += " bias " + std::string(to_string(c.bias_kind));
  if (c.amax) s += " amax";
  if (c.nan_row >= 0) s += " NaN in row " + std::to_string(c.nan_row);
  return s + " act " + std::to_string(static_cast<int>(c.act));
}

double unit_roundoff(ElementKind k) { return k == kF16 ? 0x1p-11 : k == kBf16 ? 0x1p-8 : 0x1p-20; }

/// A standard normal deviate (Box-Muller).
double normal(Rng& rng) {
  const double u1 = rng.uniform(0x1p-40, 1.0), u2 = rng.uniform(0.0, 1.0);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

/// rows × k FP8 codes of kind `kind` with row stride ld, padding NaN: normal values times 2^(row % period − shift)
/// (rows of different magnitudes), rounded to the kind (saturating: never NaN).
Bytes make_operand(ElementKind kind, int64_t rows, int64_t k, int64_t ld, int period, int shift, Rng& rng) {
  Bytes buf(static_cast<size_t>(rows * ld));
  std::memset(buf.data(), kFp8Nan, buf.size());
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t kk = 0; kk < k; ++kk)
      buf.data()[i * ld + kk] = convert::fp8_from_double(std::ldexp(normal(rng), static_cast<int>(i % period) - shift),
                                                         true, fp8_format(kind));
  return buf;
}

/// One case: the kernel on sim twice (the same bits), against the f64 reference within the tolerance above.
void run_case(const Case& c, uint64_t seed) {
  SCOPED_TRACE(describe(c));
  Rng rng(seed * 7919 + static_cast<uint64_t>(c.m * 131 + c.n * 17 + c.k));
  const int64_t lda = c.k + c.lda_pad, ldb = c.k + c.ldb_pad, ldd = c.n + c.ldd_pad;
  const int64_t kb_n = (c.k + 127) / 128, nb_n = (c.n + 127) / 128;
  Bytes a = make_operand(c.a, c.m, c.k, lda, 5, 2, rng);
  Bytes b = make_operand(c.b, c.n, c.k, ldb, 3, 1, rng);
  if (c.nan_row >= 0) a.data()[c.nan_row * lda + c.k / 2] = kFp8Nan;

  // Scales (f32): one each (Tensor) or A [M, KB] and B [NB, KB] in either layout (Block128), non-uniform.
  const bool block = c.scaling == Scaling::Block128;
  std::vector<float> sa(block ? std::max<int64_t>(c.m * kb_n, 1) : 1),
      sb(block ? std::max<int64_t>(nb_n * kb_n, 1) : 1);
  for (size_t i = 0; i < sa.size(); ++i)
    sa[i] = static_cast<float>(std::ldexp(rng.uniform(0.5, 2.0), static_cast<int>(i % 4) - 3));
  for (size_t i = 0; i < sb.size(); ++i)
    sb[i] = static_cast<float>(std::ldexp(rng.uniform(0.5, 2.0), static_cast<int>(i % 3) - 1));
  const int64_t sa_row = !block                ? 0
                         : c.scales_transposed ? 1
                                               : kb_n,
                sa_col = !block                ? 0
                         : c.scales_transposed ? c.m
                                               : 1;
  const int64_t sb_row = !block                ? 0
                         : c.scales_transposed ? 1
                                               : kb_n,
                sb_col = !block                ? 0
                         : c.scales_transposed ? nb_n
                                               : 1;

  std::vector<double> bias_v;
  std::vector<uint8_t> bias = c.bias
                                  ? random_floats(c.bias_kind, std::max<int64_t>(c.n, 1), -2.0, 2.0, seed + 5, &bias_v)
                                  : std::vector<uint8_t>{};

  // The reference.
  const int64_t mn = c.m * c.n;
  std::vector<double> ref(mn), err(mn);
  std::vector<char> ref_nan(mn, 0);
  double max_r = 0, max_tol = 0;
  for (int64_t i = 0; i < c.m; ++i)
    for (int64_t j = 0; j < c.n; ++j) {
      double acc = 0, mag = 0;
      bool nan = false;
      for (int64_t kb = 0; kb < kb_n; ++kb) {
        double part = 0, pmag = 0;
        for (int64_t kk = kb * 128; kk < std::min(c.k, kb * 128 + 128); ++kk) {
          const uint8_t* ap = a.data() + i * lda + kk;
          if (*ap == kFp8Nan) nan = true;
          const double p = decode_value(c.a, ap) * decode_value(c.b, b.data() + j * ldb + kk);
          part += p, pmag += std::fabs(p);
        }
        const double w =
            block ? static_cast<double>(sa[i * sa_row + kb * sa_col]) * sb[(j / 128) * sb_row + kb * sb_col] : 1.0;
        acc += w * part, mag += std::fabs(w) * pmag;
      }
      if (!block) acc *= static_cast<double>(sa[0]) * sb[0], mag *= static_cast<double>(sa[0]) * sb[0];
      const double bv = c.bias ? bias_v[j] : 0.0;
      const double v = c.alpha * acc + bv;
      const double r = ::baracuda::test::reference_activation(c.act, v);
      const double ev = std::fabs(c.alpha) * static_cast<double>(kb_n + 131) * 0x1p-24 * mag +
                        0x1p-22 * (std::fabs(c.alpha * acc) + std::fabs(bv));
      ref[i * c.n + j] = r, err[i * c.n + j] = ev, ref_nan[i * c.n + j] = nan;
      if (!nan) max_r = std::max(max_r, std::fabs(r)), max_tol = std::max(max_tol, 1.25 * ev + 0x1p-20 * std::fabs(r));
    }

  // FP8 D: the quantization scale puts the largest values past the kind's range (they saturate).
  const bool fp8_out = is_fp8(c.d);
  const float ds = fp8_out ? static_cast<float>(max_r > 0 ? 1.25 * fp8_max(c.d) / max_r : 1.0) : 0.0f;
  const int eb = element_bytes(c.d);
  Bytes d(static_cast<size_t>(std::max<int64_t>(c.m * ldd, 1) * eb));
  std::memset(d.data(), 0x5a, d.size());
  const Bytes d0 = d;
  float amax = 0.0f;

  detail::Fp8GemmLaunch l;
  l.m = c.m, l.n = c.n, l.k = c.k;
  l.a_kind = c.a, l.b_kind = c.b, l.d_kind = c.d, l.bias_kind = c.bias_kind, l.scaling = c.scaling;
  l.a = a.data(), l.b = b.data(), l.lda = lda, l.ldb = ldb;
  l.a_scale = sa.data(), l.b_scale = sb.data();
  l.a_scale_row = sa_row, l.a_scale_col = sa_col, l.b_scale_row = sb_row, l.b_scale_col = sb_col;
  l.bias = c.bias ? bias.data() : nullptr;
  l.d_scale = fp8_out ? &ds : nullptr;
  l.d = d.data(), l.ldd = ldd;
  l.amax = c.amax ? &amax : nullptr;
  l.alpha = c.alpha;
  l.activation = c.act;

  const detail::ExecContext sim = sim_context();
  amax = 1.0e30f;  // the kernel must reset it
  Status s = fp8_gemm_kernel_sim(sim, l);
  ASSERT_TRUE(s.is_ok()) << s.error().to_string();
  const Bytes d1 = d;
  const float amax1 = amax;
  amax = std::nanf("");
  s = fp8_gemm_kernel_sim(sim, l);
  ASSERT_TRUE(s.is_ok()) << s.error().to_string();
  EXPECT_TRUE(d == d1) << "D differs between two runs";
  if (c.amax)
    EXPECT_EQ(std::bit_cast<uint32_t>(amax), std::bit_cast<uint32_t>(amax1)) << "amax differs between two runs";
  else
    EXPECT_TRUE(std::isnan(amax) && amax1 == 1.0e30f) << "the amax written without one";

  const double u = unit_roundoff(c.d);
  int bad = 0;
  auto fail = [&](int64_t i, int64_t j, double got, double want, double tol) {
    if (++bad <= 8)
      ADD_FAILURE() << "D[" << i << ", " << j << "] = " << got << ", want " << want << " (tolerance " << tol << ")";
  };
  for (int64_t i = 0; i < c.m; ++i)
    for (int64_t j = 0; j < c.n; ++j) {
      const uint8_t* p = d.data() + (i * ldd + j) * eb;
      const double got = decode_value(c.d, p), r = ref[i * c.n + j], ev = err[i * c.n + j];
      if (ref_nan[i * c.n + j]) {
        if (!std::isnan(got)) fail(i, j, got, NAN, 0);
        continue;
      }
      if (fp8_out) {
        const double want = std::clamp(r * ds, -fp8_max(c.d), fp8_max(c.d));
        const double tol = fp8_ulp(c.d, want) + ds * (1.25 * ev + 0x1p-20 * std::fabs(r));
        if (!(std::fabs(got - want) <= tol)) fail(i, j, got, want, tol);
      } else {
        const double tol = 1.25 * ev + u * (std::fabs(r) + 1.25 * ev) + 0x1p-24;
        if (!(std::fabs(got - r) <= tol)) fail(i, j, got, r, tol);
      }
    }
  EXPECT_EQ(bad, 0) << bad << " elements out of tolerance";

  // Nothing written outside D's elements.
  int64_t wrote = 0;
  for (int64_t i = 0; i < c.m; ++i)
    for (int64_t j = c.n; j < ldd; ++j)
      wrote += std::memcmp(d.data() + (i * ldd + j) * eb, d0.data() + (i * ldd + j) * eb, eb) != 0;
  EXPECT_EQ(wrote, 0) << "elements written in D's padding";
  if (c.m == 0 || c.n == 0) EXPECT_TRUE(d == d0) << "an empty D written";

  if (!c.amax) return;
  if (c.nan_row >= 0 && c.n > 0) {
    EXPECT_TRUE(std::isnan(amax)) << "amax " << amax << " with a NaN in D";
    return;
  }
  EXPECT_GE(amax, 0.0f);
  EXPECT_LE(std::fabs(amax - max_r), max_tol) << "amax " << amax << ", max |r| " << max_r;
  if (c.m == 0 || c.n == 0) {
    EXPECT_EQ(std::bit_cast<uint32_t>(amax), 0u) << "the amax of an empty D";
    return;
  }
  // amax is one of the kernel's values: its FP8 image (the kernel's f32 product and rounding) is the magnitude
  // of some element of D, and no element's magnitude exceeds it.
  const uint8_t top = convert::fp8_from_float(amax * ds, true, fp8_format(c.d));
  bool found = false;
  int64_t above = 0;
  for (int64_t i = 0; i < c.m; ++i)
    for (int64_t j = 0; j < c.n; ++j) {
      const uint8_t code = d.data()[i * ldd + j] & 0x7f;
      found = found || code == top;
      above += code > top;  // sign-magnitude codes order like their magnitudes
    }
  EXPECT_TRUE(found) << "no element of D is round(amax·d_scale) = 0x" << std::hex << int{top};
  EXPECT_EQ(above, 0) << "elements of D above round(amax·d_scale)";
}

struct Shape3 {
  int64_t m, n, k;
};
const Shape3 kShapes[] = {{1, 1, 16}, {17, 33, 48}, {129, 65, 256}, {130, 200, 384}};
const std::pair<ElementKind, ElementKind> kPairs[] = {{kE4, kE4}, {kE4, kE5}, {kE5, kE4}};
const ElementKind kOutputs[] = {kF16, kBf16, kF32, kE4, kE5};

// The table: every header kind combination has the kernel; other kinds have none.
TEST(Fp8GemmKernel, TableSlots) {
  for (ElementKind a : {kE4, kE5})
    for (ElementKind d : kOutputs) EXPECT_EQ(fp8_gemm_variant_sim(a, d), "mma_m16n8k32_fp8");
  EXPECT_EQ(fp8_gemm_variant_sim(kF16, kF16), "");
  EXPECT_EQ(fp8_gemm_variant_sim(kE4, ElementKind::F64), "");
}

// Every A/B kind pair × output kind × scaling, the shapes taking turns (each kind pair and output with one shape
// and both scalings; every shape several times: both tiles, ragged M and N, K of less than one to three 128-wide
// blocks); a bias and an activation varying with the case; the amax with FP8 D.
TEST(Fp8GemmKernel, KindsShapesScalingsOnSim) {
  uint64_t seed = 1;
  for (const auto& [ak, bk] : kPairs)
    for (ElementKind dk : kOutputs)
      for (Scaling sc : {Scaling::Tensor, Scaling::Block128}) {
        const Shape3& sh = kShapes[(seed - 1) / 2 % std::size(kShapes)];
        Case c;
        c.m = sh.m, c.n = sh.n, c.k = sh.k;
        c.a = ak, c.b = bk, c.d = dk, c.scaling = sc;
        c.bias = seed % 2 == 0;
        c.bias_kind = kOutputs[seed % 3];
        c.act = static_cast<Act>(seed % kNumLinearActivations);
        c.alpha = seed % 3 == 0 ? -0.75 : 1.0;
        c.amax = is_fp8(dk);
        run_case(c, seed++);
      }
}

// Each activation with each bias kind (and none), the two tiles taking turns, for a 16-bit and an FP8 output.
TEST(Fp8GemmKernel, EveryEpilogueOnSim) {
  uint64_t seed = 1000;
  for (ElementKind dk : {kBf16, kE4})
    for (size_t act = 0; act < kNumLinearActivations; ++act)
      for (int bias = 0; bias < 4; ++bias) {
        const Shape3 sh = (act + bias) % 2 == 0 ? Shape3{17, 33, 48} : Shape3{40, 65, 256};
        Case c;
        c.m = sh.m, c.n = sh.n, c.k = sh.k, c.d = dk;
        c.scaling = bias % 2 == 0 ? Scaling::Block128 : Scaling::Tensor;
        c.act = static_cast<Act>(act);
        c.bias = bias > 0;
        c.bias_kind = bias == 1 ? kF16 : bias == 2 ? kBf16 : kF32;
        c.alpha = 1.5;
        c.amax = is_fp8(dk);
        run_case(c, seed++);
      }
}

// Leading dimensions past the packed ones, the Block128 scales in both layouts (DeepGEMM's M-major a_scale),
// K not a multiple of 128 (a partial last block), N past one 128-wide block of B's scales.
TEST(Fp8GemmKernel, StridesAndScaleLayoutsOnSim) {
  uint64_t seed = 2000;
  for (const Shape3& sh : {Shape3{20, 300, 400}, Shape3{33, 129, 272}})
    for (int v = 0; v < 4; ++v) {
      Case c;
      c.m = sh.m, c.n = sh.n, c.k = sh.k;
      c.a = v == 3 ? kE5 : kE4, c.b = v == 1 ? kE5 : kE4;
      c.d = v % 2 == 0 ? kE5 : kF32;
      c.scaling = Scaling::Block128;
      c.scales_transposed = v >= 2;
      c.lda_pad = 16 * (v + 1), c.ldb_pad = 32 * (v % 2), c.ldd_pad = 3 + v;
      c.bias = true, c.bias_kind = kF32;
      c.act = Act::GeluTanh;
      c.alpha = 0.5;
      c.amax = is_fp8(c.d);
      run_case(c, seed++);
    }
}

// The edges: K = 0 (D = act(bias)); M = 0 and N = 0 with the amax (only its reset); the tiles' boundary
// (M = 32 decode, 33 the large tile); a K long enough to wrap around every tile's stages.
TEST(Fp8GemmKernel, EdgesOnSim) {
  uint64_t seed = 3000;
  for (ElementKind dk : {kE4, kF16})
    for (Scaling sc : {Scaling::Tensor, Scaling::Block128}) {
      Case c;
      c.d = dk, c.scaling = sc, c.amax = is_fp8(dk);
      c.bias = true, c.bias_kind = kBf16, c.act = Act::Silu;
      for (const Shape3& sh : {Shape3{17, 33, 0}, Shape3{0, 33, 64}, Shape3{40, 0, 64}, Shape3{32, 72, 144},
                               Shape3{33, 72, 144}, Shape3{40, 136, 784}, Shape3{9, 48, 1040}}) {
        c.m = sh.m, c.n = sh.n, c.k = sh.k;
        run_case(c, seed++);
      }
    }
}

// A NaN code in one row of A: that row of D is NaN (FP8: the NaN code, not saturated), the other rows are not
// touched by it, and the amax is NaN; with ReLU (which keeps NaN).
TEST(Fp8GemmKernel, NanPropagatesOnSim) {
  uint64_t seed = 4000;
  for (ElementKind dk : {kE4, kE5, kBf16})
    for (Scaling sc : {Scaling::Tensor, Scaling::Block128})
      for (const Shape3& sh : {Shape3{17, 33, 48}, Shape3{129, 65, 256}}) {
        Case c;
        c.m = sh.m, c.n = sh.n, c.k = sh.k, c.d = dk, c.scaling = sc;
        c.nan_row = sh.m / 2;
        c.act = Act::Relu;
        c.amax = is_fp8(dk);
        run_case(c, seed++);
      }
}

}  // namespace
}  // namespace baracuda::test
