// The gemm family's tensor-core kernel (src/ops/gemm/tc_kernels.cuh), run directly on the sim device
// (gemm_tc_kernels.cu) against an f64 reference written here: D = act(α·op(A)·op(B) + β·C + bias), the
// pre-activation aux and bias_grad[m] = Σ_k op(A)[m, k], for f16 and bf16 operands with their own kind or f32
// as the output kind; the four transpose combinations, ragged M/N/K (both tiles: M ≤ 32 runs the small one),
// batches with a broadcast operand, leading dimensions past the packed ones, unaligned operands and a
// non-unit inner stride (the element-load path), every epilogue. Every case runs twice and must give the
// same bits (the kernel's sums have a fixed order); outputs' padding is checked untouched, and the
// operands' padding holds NaN, so a read outside an operand shows.
//
// Tolerance, per output element, against the exact f64 value r = act(v), v = α·Σ_k a·b + β·c + bias:
//   e_v = |α|·(K + 2)·2^-24·Σ_k |a·b| + 2^-22·(|α·Σ_k a·b| + |β·c| + |bias|)
//   |got − r| ≤ 1.25·e_v + u·(|r| + 1.25·e_v) + 2^-24
// The products of 16-bit inputs are exact in f32, and each of the K f32 additions (and the epilogue's α,
// β·c and bias steps) rounds with a relative error of at most 2^-24; the activations' slopes are at most
// 1.13 (GELU), hence 1.25; u is the unit roundoff of the output (2^-11 f16, 2^-8 bf16, 2^-20 for f32, which
// also covers the f32 activation functions' few ulps); 2^-24 is f16's subnormal step. bias_grad:
// |got − r| ≤ (K + 1)·2^-24·Σ_k |a| + u·|r| + 2^-24.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "baracuda/core/element.hpp"
#include "baracuda/ops/int_gemm.hpp"  // LinearActivation
#include "gemm_tc_kernels.hpp"
#include "support/linear_activation.hpp"
#include "support/numeric.hpp"
#include "support/random.hpp"
#include "support/sim_context.hpp"

namespace baracuda::test {
namespace {

using Act = LinearActivation;

/// 16-byte aligned host bytes (the sim device reads host memory).
class Bytes {
 public:
  explicit Bytes(size_t n = 0) : chunks_((n + 15) / 16) {}
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

/// A [batches, rows, cols] operand of kind `kind` in a buffer: element (b, i, j) at
/// offset + b·batch + i·row + j·col; every other element of the buffer holds `pad_bits`.
struct Mat {
  ElementKind kind = ElementKind::F16;
  int64_t batches = 1, rows = 0, cols = 0;
  int64_t batch = 0, row = 0, col = 0, offset = 0;
  int64_t elements = 0;  ///< of the buffer
  Bytes buf;
  int64_t index(int64_t b, int64_t i, int64_t j) const { return offset + b * batch + i * row + j * col; }
  uint8_t* at(int64_t b, int64_t i, int64_t j) { return buf.data() + index(b, i, j) * element_bytes(kind); }
  double value(int64_t b, int64_t i, int64_t j) { return decode_value(kind, at(b, i, j)); }
  void* data() { return buf.data() + offset * element_bytes(kind); }
};

/// How an operand lies in memory.
struct Layout {
  bool row_major = true;   ///< unit stride along columns (else along rows)
  int64_t ld_pad = 0;      ///< leading dimension = packed + ld_pad
  int64_t offset = 0;      ///< elements before element (0, 0, 0) (1: not 16-byte aligned)
  int64_t inner = 1;       ///< the stride of the contiguous dimension (2: no unit stride)
  bool broadcast = false;  ///< one batch for all (batch stride 0)
  bool align8 = false;     ///< the packed leading dimension rounded up to a multiple of 8 elements first
};

Mat make_mat(ElementKind kind, int64_t batches, int64_t rows, int64_t cols, const Layout& lay, uint64_t bits_pad) {
  Mat m;
  m.kind = kind, m.rows = rows, m.cols = cols;
  m.batches = lay.broadcast ? 1 : batches;
  int64_t ld = (lay.row_major ? cols : rows) * lay.inner;
  if (lay.align8) ld = (ld + 7) / 8 * 8;
  ld += lay.ld_pad;
  m.row = lay.row_major ? ld : lay.inner;
  m.col = lay.row_major ? lay.inner : ld;
  const int64_t plane = ld * (lay.row_major ? rows : cols);
  m.batch = lay.broadcast ? 0 : plane + 3 * lay.ld_pad;
  m.offset = lay.offset;
  m.elements = m.offset + m.batch * (m.batches - 1) + plane + 8;
  m.buf = Bytes(static_cast<size_t>(m.elements * element_bytes(kind)));
  for (int64_t e = 0; e < m.elements; ++e) store_bits(kind, m.buf.data() + e * element_bytes(kind), bits_pad);
  return m;
}

uint64_t nan_bits(ElementKind k) {
  return k == ElementKind::F16 ? 0x7e00 : k == ElementKind::Bf16 ? 0x7fc0 : 0x7fc00000;
}

/// Random values exact in `kind`: a signed significand of `bits` bits times 2^e, e in [elo, ehi], times a
/// per-row factor 2^(i % 3 − 1) (rows of different magnitudes).
void fill_random(Mat& m, Rng& rng, int elo, int ehi) {
  const int bits = m.kind == ElementKind::Bf16 ? 8 : m.kind == ElementKind::F16 ? 11 : 16;
  for (int64_t b = 0; b < m.batches; ++b)
    for (int64_t i = 0; i < m.rows; ++i)
      for (int64_t j = 0; j < m.cols; ++j) {
        const double sig =
            static_cast<double>(static_cast<int64_t>(rng.below((1u << bits) - 1)) - ((1 << (bits - 1)) - 1));
        const int e = elo + static_cast<int>(rng.below(static_cast<uint64_t>(ehi - elo + 1)));
        const double v = std::ldexp(sig, e - (bits - 1) + static_cast<int>(i % 3) - 1);
        ASSERT_TRUE(encode_exact(m.kind, v, m.at(b, i, j))) << v;
      }
}

struct Case {
  int64_t m = 1, n = 1, k = 16, batch = 1;
  Layout a, b;
  int64_t out_pad = 0;  ///< D, aux and C: leading dimension N + out_pad
  bool c = false, bias = false, aux = false, bias_grad = false;
  bool in_place = false;  ///< D is C (the same buffer, ld and batch stride)
  int64_t max_yz = 0;     ///< > 0: at most this many N tiles and batches per launch (tensor_core_chunked)
  double alpha = 1.0, beta = 0.0;
  Act act = Act::None;
};

std::string describe(const Case& c, ElementKind ab, ElementKind cd) {
  std::string s = std::string(to_string(ab)) + "->" + std::string(to_string(cd)) + " " + std::to_string(c.batch) + "x" +
                  std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k) + " A" +
                  (c.a.row_major ? "r" : "c") + " B" + (c.b.row_major ? "r" : "c");
  if (c.a.ld_pad || c.b.ld_pad || c.out_pad) s += " padded";
  if (c.a.align8 || c.b.align8) s += " ld8";
  if (c.a.offset || c.b.offset) s += " unaligned";
  if (c.a.inner != 1 || c.b.inner != 1) s += " inner-strided";
  if (c.a.broadcast) s += " A-broadcast";
  if (c.b.broadcast) s += " B-broadcast";
  if (c.c) s += " C(alpha " + std::to_string(c.alpha) + ", beta " + std::to_string(c.beta) + ")";
  if (c.bias) s += " bias";
  if (c.aux) s += " aux";
  if (c.bias_grad) s += " bias_grad";
  if (c.in_place) s += " D=C";
  if (c.max_yz) s += " max_yz " + std::to_string(c.max_yz);
  s += " act " + std::to_string(static_cast<int>(c.act));
  return s;
}

double unit_roundoff(ElementKind k) {
  return k == ElementKind::F16 ? 0x1p-11 : k == ElementKind::Bf16 ? 0x1p-8 : 0x1p-20;
}

/// One case with operand kind `ab` and output kind `cd`: the kernel on sim twice (the same bits), against the
/// f64 reference within the tolerance above; the outputs' padding untouched.
void run_case(const Case& c, ElementKind ab, ElementKind cd, uint64_t seed) {
  SCOPED_TRACE(describe(c, ab, cd));
  Rng rng(seed * 7919 + static_cast<uint64_t>(c.m * 131 + c.n * 17 + c.k));
  Mat a = make_mat(ab, c.batch, c.m, c.k, c.a, nan_bits(ab));
  Mat b = make_mat(ab, c.batch, c.k, c.n, c.b, nan_bits(ab));
  const Layout out{true, c.out_pad, 0, 1, false};
  Mat cm = make_mat(cd, c.batch, c.m, c.n, Layout{true, c.out_pad + 1, 0, 1, false}, nan_bits(cd));
  Mat bias = make_mat(cd, 1, 1, c.n, Layout{}, nan_bits(cd));
  constexpr uint64_t kSentinel = 0x5a5a5a5a;
  Mat d = make_mat(cd, c.batch, c.m, c.n, out, kSentinel);
  Mat aux = make_mat(cd, c.batch, c.m, c.n, out, kSentinel);
  Mat bg = make_mat(cd, 1, 1, c.m, Layout{true, 0, 0, 2, false}, kSentinel);  // stride 2
  fill_random(a, rng, -3, 1);
  fill_random(b, rng, -2, 0);
  if (c.c) fill_random(cm, rng, -2, 2);
  if (c.bias) fill_random(bias, rng, -3, 1);
  if (c.in_place) d = cm;                                // D starts as C
  const Bytes d0 = d.buf, aux0 = aux.buf, bg0 = bg.buf;  // what the runs may not touch outside the outputs

  detail::GemmLaunch l;
  l.m = c.m, l.n = c.n, l.k = c.k, l.batch = c.batch;
  l.ab = ab, l.cd = cd;
  l.a = {a.data(), a.batch, a.row, a.col};
  l.b = {b.data(), b.batch, b.row, b.col};
  if (c.c)
    l.c = c.in_place ? detail::GemmOperand{d.data(), d.batch, d.row, d.col}
                     : detail::GemmOperand{cm.data(), cm.batch, cm.row, cm.col};
  l.d = {d.data(), d.batch, d.row, d.col};
  if (c.aux) l.aux = {aux.data(), aux.batch, aux.row, aux.col};
  if (c.bias) l.bias = {bias.data(), 0, 0, bias.col};
  if (c.bias_grad) l.bias_grad = {bg.data(), 0, 0, bg.col};
  l.alpha = c.alpha, l.beta = c.c ? c.beta : 0.0;
  l.activation = c.act;

  const detail::ExecContext sim = sim_context();
  Status s = gemm_tensor_core_sim(sim, l, c.max_yz);
  ASSERT_TRUE(s.is_ok()) << s.error().to_string();
  const Bytes d1 = d.buf, aux1 = aux.buf, bg1 = bg.buf;
  if (c.in_place) d.buf = d0;  // C again
  s = gemm_tensor_core_sim(sim, l, c.max_yz);
  ASSERT_TRUE(s.is_ok()) << s.error().to_string();
  EXPECT_TRUE(d.buf == d1) << "D differs between two runs";
  EXPECT_TRUE(aux.buf == aux1) << "aux differs between two runs";
  EXPECT_TRUE(bg.buf == bg1) << "bias_grad differs between two runs";

  const double u = unit_roundoff(cd);
  int bad = 0;
  auto check = [&](double got, double want, double err, const char* what, int64_t bi, int64_t i, int64_t j) {
    const double tol = 1.25 * err + u * (std::fabs(want) + 1.25 * err) + 0x1p-24;
    if (std::fabs(got - want) <= tol) return;  // NaN fails
    if (++bad <= 8)
      ADD_FAILURE() << what << "[" << bi << ", " << i << ", " << j << "] = " << got << ", want " << want
                    << " (tolerance " << tol << ")";
  };
  // The operands' values, decoded once: av[b][i][k], bt[b][j][k].
  std::vector<double> av(a.batches * c.m * c.k), bt(b.batches * c.n * c.k);
  for (int64_t bi = 0; bi < a.batches; ++bi)
    for (int64_t i = 0; i < c.m; ++i)
      for (int64_t kk = 0; kk < c.k; ++kk) av[(bi * c.m + i) * c.k + kk] = a.value(bi, i, kk);
  for (int64_t bi = 0; bi < b.batches; ++bi)
    for (int64_t j = 0; j < c.n; ++j)
      for (int64_t kk = 0; kk < c.k; ++kk) bt[(bi * c.n + j) * c.k + kk] = b.value(bi, kk, j);
  for (int64_t bi = 0; bi < c.batch; ++bi) {
    const int64_t ba = c.a.broadcast ? 0 : bi, bb = c.b.broadcast ? 0 : bi;
    for (int64_t i = 0; i < c.m; ++i)
      for (int64_t j = 0; j < c.n; ++j) {
        const double* ar = av.data() + (ba * c.m + i) * c.k;
        const double* br = bt.data() + (bb * c.n + j) * c.k;
        double sum = 0, mag = 0;
        for (int64_t kk = 0; kk < c.k; ++kk) {
          const double p = ar[kk] * br[kk];
          sum += p, mag += std::fabs(p);
        }
        const double cv = c.c ? c.beta * cm.value(bi, i, j) : 0.0;
        const double bv = c.bias ? bias.value(0, 0, j) : 0.0;
        const double v = c.alpha * sum + cv + bv;
        const double err = std::fabs(c.alpha) * static_cast<double>(c.k + 2) * 0x1p-24 * mag +
                           0x1p-22 * (std::fabs(c.alpha * sum) + std::fabs(cv) + std::fabs(bv));
        check(d.value(bi, i, j), ::baracuda::test::reference_activation(c.act, v), err, "D", bi, i, j);
        if (c.aux) check(aux.value(bi, i, j), v, err, "aux", bi, i, j);
      }
  }
  if (c.bias_grad)
    for (int64_t i = 0; i < c.m; ++i) {
      double sum = 0, mag = 0;
      for (int64_t kk = 0; kk < c.k; ++kk) sum += av[i * c.k + kk], mag += std::fabs(av[i * c.k + kk]);
      check(bg.value(0, 0, i), sum, static_cast<double>(c.k + 1) * 0x1p-24 * mag / 1.25, "bias_grad", 0, 0, i);
    }
  EXPECT_EQ(bad, 0) << bad << " elements out of tolerance";

  // Nothing written outside the outputs' elements (padding, the unused aux and bias_grad).
  auto untouched = [&](Mat& o, const Bytes& before, bool written, const char* what) {
    std::vector<bool> inside(static_cast<size_t>(o.elements), false);
    if (written)
      for (int64_t bi = 0; bi < o.batches; ++bi)
        for (int64_t i = 0; i < o.rows; ++i)
          for (int64_t j = 0; j < o.cols; ++j) inside[o.index(bi, i, j)] = true;
    int64_t wrote = 0;
    for (size_t e = 0; e < inside.size(); ++e)
      if (!inside[e] && std::memcmp(o.buf.data() + e * element_bytes(cd), before.data() + e * element_bytes(cd),
                                    element_bytes(cd)) != 0)
        ++wrote;
    EXPECT_EQ(wrote, 0) << what << ": elements written outside the output";
  };
  untouched(d, d0, true, "D");
  untouched(aux, aux0, c.aux, "aux");
  untouched(bg, bg0, c.bias_grad, "bias_grad");
}

constexpr ElementKind kF16 = ElementKind::F16, kBf16 = ElementKind::Bf16, kF32 = ElementKind::F32;
const std::pair<ElementKind, ElementKind> kKinds[] = {{kF16, kF16}, {kF16, kF32}, {kBf16, kBf16}, {kBf16, kF32}};

struct Shape3 {
  int64_t m, n, k;
};
const Shape3 kShapes[] = {{1, 1, 16}, {17, 33, 48}, {129, 65, 96}, {256, 256, 64}};

// Every shape × layout × kind pair, with C (α, β), bias and aux, an activation varying with the case; packed
// operands (ragged extents then take the element path) and leading dimensions rounded up to 8 elements (the
// 16-byte copies, partial chunks at the ragged edges).
TEST(GemmTensorCore, LayoutsShapesKindsOnSim) {
  uint64_t seed = 1;
  for (const auto& [ab, cd] : kKinds)
    for (const Shape3& sh : kShapes)
      for (int layout = 0; layout < 8; ++layout) {
        Case c;
        c.m = sh.m, c.n = sh.n, c.k = sh.k;
        c.a.row_major = (layout & 1) == 0;
        c.b.row_major = (layout & 2) == 0;
        c.a.align8 = c.b.align8 = layout >= 4;  // 16-byte rows: cp.async with partial chunks at ragged edges
        if (layout >= 4 && sh.m % 8 == 0 && sh.n % 8 == 0 && sh.k % 8 == 0) continue;  // packed is that already
        c.c = c.bias = c.aux = true;
        c.alpha = 0.75, c.beta = -1.5;
        c.act = static_cast<Act>(seed % kNumLinearActivations);
        run_case(c, ab, cd, seed++);
      }
}

// Each activation alone and with bias, aux and C, on both tiles.
TEST(GemmTensorCore, EveryEpilogueOnSim) {
  uint64_t seed = 100;
  for (const auto& [ab, cd] : {kKinds[0], kKinds[3]})
    for (const Shape3& sh : {Shape3{17, 33, 48}, Shape3{129, 65, 96}})
      for (size_t act = 0; act < kNumLinearActivations; ++act)
        for (int epi = 0; epi < 3; ++epi) {
          Case c;
          c.m = sh.m, c.n = sh.n, c.k = sh.k;
          c.a.row_major = epi != 1;
          c.b.row_major = epi == 2;
          c.act = static_cast<Act>(act);
          c.bias = epi >= 1;
          c.aux = epi == 1;
          c.c = epi == 2;
          c.alpha = epi == 0 ? 1.0 : -0.5, c.beta = 0.25;
          run_case(c, ab, cd, seed++);
        }
}

// Batches of 3 with a broadcast A or B and leading dimensions past the packed ones; D = C in place once per
// kind pair and broadcast operand.
TEST(GemmTensorCore, BatchedBroadcastPaddedOnSim) {
  uint64_t seed = 200;
  for (const auto& [ab, cd] : kKinds)
    for (int which = 0; which < 2; ++which)
      for (int layout = 0; layout < 4; ++layout) {
        Case c;
        c.batch = 3;
        c.m = which == 0 ? 40 : 9, c.n = 72, c.k = 56;
        c.a = {(layout & 1) == 0, 8, 0, 1, which == 0};
        c.b = {(layout & 2) == 0, 16, 0, 1, which == 1};
        c.out_pad = 8;
        c.c = c.bias = c.aux = true;
        c.alpha = 1.25, c.beta = 0.5;
        c.act = Act::Silu;
        c.in_place = layout == 1;  // D = C, in place
        run_case(c, ab, cd, seed++);
      }
}

// Operands the 16-byte copies cannot take: data one element past an aligned address, a leading dimension
// that is not a multiple of 8, no unit stride; in every layout, mixed with aligned ones.
TEST(GemmTensorCore, ElementPathOnSim) {
  uint64_t seed = 300;
  const Layout kOdd[] = {{true, 0, 1, 1, false}, {true, 3, 0, 1, false}, {true, 0, 0, 2, false}};
  for (const auto& [ab, cd] : {kKinds[1], kKinds[2]})
    for (int layout = 0; layout < 4; ++layout)
      for (int v = 0; v < 3; ++v)
        for (const Shape3& sh : {Shape3{17, 33, 48}, Shape3{129, 65, 96}}) {
          Case c;
          c.m = sh.m, c.n = sh.n, c.k = sh.k;
          c.batch = v == 2 ? 2 : 1;
          c.a = kOdd[v], c.b = kOdd[(v + layout) % 3];
          c.a.row_major = (layout & 1) == 0;
          c.b.row_major = (layout & 2) == 0;
          if (layout == 3) c.b = {false, 0, 0, 1, false};  // one aligned operand beside an unaligned one
          c.bias = c.aux = true;
          c.act = Act::GeluTanh;
          run_case(c, ab, cd, seed++);
        }
}

// bias_grad = Σ_k op(A)[m, k]: both layouts of A, aligned and not, both tiles, a K that is not a multiple of
// any slice; with D's epilogue beside it.
TEST(GemmTensorCore, BiasGradOnSim) {
  uint64_t seed = 400;
  for (const auto& [ab, cd] : kKinds)
    for (bool a_row : {true, false})
      for (int64_t off : {0, 1})
        for (const Shape3& sh : {Shape3{1, 1, 16}, Shape3{30, 20, 200}, Shape3{129, 65, 96}}) {
          Case c;
          c.m = sh.m, c.n = sh.n, c.k = sh.k;
          c.a = {a_row, 0, off, 1, false, off == 0};
          c.bias_grad = true;
          c.bias = true;
          c.act = Act::Relu;
          run_case(c, ab, cd, seed++);
        }
}

// Degenerate extents: K = 0 (D = β·C + bias); N = 0 with bias_grad (no D, but bias_grad is written, as gemm.hpp
// says), on both tiles; M = 0 (nothing written); K not a multiple of 8 with the 16-byte copies' partial chunks;
// and a K long enough to wrap around the stages several times.
TEST(GemmTensorCore, EdgesOnSim) {
  uint64_t seed = 500;
  const Case base = [] {
    Case c;
    c.c = c.bias = c.aux = true;
    c.alpha = 2.0, c.beta = 0.75;
    return c;
  }();
  for (const auto& [ab, cd] : kKinds) {
    Case c = base;
    c.m = 17, c.n = 33, c.k = 0;
    run_case(c, ab, cd, seed++);
    c.m = 5, c.n = 0, c.k = 20, c.bias_grad = true, c.c = c.bias = c.aux = false;
    run_case(c, ab, cd, seed++);
    c.m = 150, c.a.row_major = false;
    run_case(c, ab, cd, seed++);
    c.m = 0, c.n = 7, c.aux = true;
    run_case(c, ab, cd, seed++);
    for (int layout = 0; layout < 8; ++layout) {
      c = base;
      c.m = 70, c.n = 41, c.k = 3 + 8 * (layout & 3);
      c.a.row_major = (layout & 1) == 0, c.b.row_major = (layout & 2) == 0;
      c.a.align8 = c.b.align8 = layout >= 4;
      run_case(c, ab, cd, seed++);
    }
    c = base;
    c.m = 33, c.n = 130, c.k = 520;
    c.act = Act::GeluErf;
    run_case(c, ab, cd, seed++);
    c.m = 8, c.n = 130, c.k = 520, c.a.row_major = false;
    run_case(c, ab, cd, seed++);
  }
}

// More N tiles or batches than one launch's grid takes (65535 in y and z on CUDA): the kernel through
// tensor_core_chunked with a limit of 2, so that N tiles and batches take several launches, on both tiles
// (bias_grad: from the first launch's first N tile only).
TEST(GemmTensorCore, GridChunksOnSim) {
  uint64_t seed = 600;
  for (const auto& [ab, cd] : {kKinds[0], kKinds[3]})
    for (const Shape3& sh : {Shape3{20, 330, 40}, Shape3{130, 390, 24}}) {
      Case c;
      c.m = sh.m, c.n = sh.n, c.k = sh.k, c.batch = 5;
      c.b.broadcast = true;
      c.c = c.bias = c.aux = true;
      c.alpha = 0.5, c.beta = -1.0;
      c.max_yz = 2;
      run_case(c, ab, cd, seed++);
      c.batch = 1, c.bias_grad = true;
      run_case(c, ab, cd, seed++);
    }
}

}  // namespace
}  // namespace baracuda::test
