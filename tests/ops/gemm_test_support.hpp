// Helpers shared by the gemm tests (gemm_*test.cpp): the operands of a descriptor laid out as it says (written
// here from gemm.hpp's rules, independently of plan.cpp), random inputs, a run on any device, and an explicit
// f64 evaluation of the contract with the error bound every comparison uses.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "baracuda/baracuda.hpp"
#include "baracuda/ops/gemm.hpp"
#include "support/linear_activation.hpp"

namespace baracuda::test::gemm {

/// A matrix operand's geometry: rows × cols, element (b, i, j) at b·batch + i·row + j·col.
struct Mat {
  int64_t rows = 0, cols = 0, row = 0, col = 0, batch = 0;
  int64_t at(int64_t b, int64_t i, int64_t j) const { return b * batch + i * row + j * col; }
};

inline Mat mat(int64_t rows, int64_t cols, MatrixLayout l, int64_t ld, int64_t bs) {
  const bool rm = l == MatrixLayout::RowMajor;
  if (ld == 0) ld = std::max<int64_t>(1, rm ? cols : rows);
  return {rows, cols, rm ? ld : 1, rm ? 1 : ld, bs == kPackedBatchStride ? (rm ? rows : cols) * ld : bs};
}
inline Mat mat_a(const GemmDescriptor& g) { return mat(g.m, g.k, g.layout_a, g.lda, g.batch_stride_a); }
inline Mat mat_b(const GemmDescriptor& g) { return mat(g.k, g.n, g.layout_b, g.ldb, g.batch_stride_b); }
inline Mat mat_c(const GemmDescriptor& g) { return mat(g.m, g.n, MatrixLayout::RowMajor, g.ldc, g.batch_stride_c); }
inline Mat mat_d(const GemmDescriptor& g) { return mat(g.m, g.n, MatrixLayout::RowMajor, g.ldd, g.batch_stride_d); }
inline Mat mat_aux(const GemmDescriptor& g) {
  return mat(g.m, g.n, MatrixLayout::RowMajor, g.ld_aux, g.batch_stride_aux);
}

/// Elements of storage the operand spans over `batch` matrices (0 when empty).
inline int64_t span(const Mat& m, int64_t batch) {
  if (m.rows == 0 || m.cols == 0 || batch == 0) return 0;
  return (batch - 1) * m.batch + (m.rows - 1) * m.row + (m.cols - 1) * m.col + 1;
}

inline size_t bytes_of(ElementKind k) { return static_cast<size_t>(element_bits(k) / 8); }

/// Element i of a float storage (f16, bf16, f32, f64) as double, through the CUDA types' conversions.
inline double get(ElementKind k, const std::vector<uint8_t>& s, int64_t i) {
  const uint8_t* p = s.data() + static_cast<size_t>(i) * bytes_of(k);
  switch (k) {
    case ElementKind::F16: {
      __half h;
      std::memcpy(&h, p, 2);
      return static_cast<float>(h);
    }
    case ElementKind::Bf16: {
      __nv_bfloat16 h;
      std::memcpy(&h, p, 2);
      return static_cast<float>(h);
    }
    case ElementKind::F32: {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
    case ElementKind::F64: {
      double d;
      std::memcpy(&d, p, 8);
      return d;
    }
    default:
      return NAN;
  }
}
inline void put(ElementKind k, std::vector<uint8_t>& s, int64_t i, double v) {
  uint8_t* p = s.data() + static_cast<size_t>(i) * bytes_of(k);
  switch (k) {
    case ElementKind::F16: {
      const __half h = __float2half(static_cast<float>(v));
      std::memcpy(p, &h, 2);
      break;
    }
    case ElementKind::Bf16: {
      const __nv_bfloat16 h = __float2bfloat16(static_cast<float>(v));
      std::memcpy(p, &h, 2);
      break;
    }
    case ElementKind::F32: {
      const float f = static_cast<float>(v);
      std::memcpy(p, &f, 4);
      break;
    }
    case ElementKind::F64:
      std::memcpy(p, &v, 8);
      break;
    default:
      break;
  }
}
/// The unit roundoff of a kind.
inline double unit(ElementKind k) {
  switch (k) {
    case ElementKind::F16:
      return std::ldexp(1.0, -11);
    case ElementKind::Bf16:
      return std::ldexp(1.0, -8);
    case ElementKind::F32:
      return std::ldexp(1.0, -24);
    default:
      return std::ldexp(1.0, -53);
  }
}
/// Half the smallest subnormal spacing of a kind (the absolute part of one rounding).
inline double tiny(ElementKind k) {
  switch (k) {
    case ElementKind::F16:
      return std::ldexp(1.0, -25);
    case ElementKind::Bf16:
    case ElementKind::F32:
      return std::ldexp(1.0, -150);
    default:
      return 0.0;
  }
}

/// Host storage of every operand of a descriptor: inputs random in [-1, 1] (rounded to their kind), outputs
/// the byte 0xA5; `d` may start as a copy of `c` (in place).
struct Data {
  GemmDescriptor g;
  Mat a, b, c, d, aux;
  std::vector<uint8_t> sa, sb, sc, sbias, sd, saux, sbg;

  Data(const GemmDescriptor& desc, uint64_t seed) : g(desc) {
    a = mat_a(g), b = mat_b(g), c = mat_c(g), d = mat_d(g), aux = mat_aux(g);
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    auto fill = [&](ElementKind k, int64_t n) {
      std::vector<uint8_t> s(static_cast<size_t>(std::max<int64_t>(n, 1)) * bytes_of(k));
      for (int64_t i = 0; i < n; ++i) put(k, s, i, u(rng));
      return s;
    };
    sa = fill(g.input, span(a, g.batch));
    sb = fill(g.input, span(b, g.batch));
    sc = fill(g.output, g.beta != 0.0 ? span(c, g.batch) : 0);
    sbias = fill(g.output, g.has_bias ? g.n : 0);
    auto out = [&](int64_t n) { return std::vector<uint8_t>(std::max<int64_t>(n, 1) * bytes_of(g.output), 0xA5); };
    sd = out(span(d, g.batch));
    saux = out(g.has_aux ? span(aux, g.batch) : 0);
    sbg = out(g.bias_grad ? g.m : 0);
  }

  /// The view of a matrix operand over `p` (rank 2 when batch == 1, else 3).
  template <class View, class Ptr>
  View view(Ptr p, ElementKind k, const Mat& m) const {
    View v;
    v.data = p;
    v.kind = k;
    if (g.batch == 1) {
      v.shape = Shape{m.rows, m.cols};
      v.stride[0] = m.row, v.stride[1] = m.col;
    } else {
      v.shape = Shape{g.batch, m.rows, m.cols};
      v.stride[0] = m.batch, v.stride[1] = m.row, v.stride[2] = m.col;
    }
    return v;
  }

  /// The f64 evaluation of element (bb, i, j) of d (and aux's pre-activation v), with the bound of gemm.hpp's
  /// accuracy: |computed − v| ≤ 2·(K + 3)·u·(|α|·Σ|a·b| + |β·c| + |bias|) for a computation whose opmath unit
  /// roundoff is u (the factor 2 covers this evaluation's own double error), the activation's slope
  /// (≤ 1.2) and 16·u·(|act(v)| + |v|) for its libm calls; then one rounding to the output kind
  /// (u_out·|d| + tiny).
  struct Expect {
    double v = 0, d = 0, v_tol = 0, d_tol = 0;
  };
  /// `epilogue_ulps`: the ulps of the output kind each partial result of the epilogue (α·A·B, then + β·c, then
  /// + bias) may be off by, beyond the final rounding: 0 for the bespoke kernels, which round once; cuBLASLt
  /// rounds in between (gemm.hpp), so an output may be off by an ulp of a partial larger than itself.
  Expect expect(int64_t bb, int64_t i, int64_t j, double u, double epilogue_ulps = 0) const {
    double acc = 0, mag = 0;
    for (int64_t k = 0; k < g.k; ++k) {
      const double x = get(g.input, sa, a.at(bb, i, k)), y = get(g.input, sb, b.at(bb, k, j));
      acc += x * y;
      mag += std::fabs(x * y);
    }
    Expect e;
    e.v = g.alpha * acc;
    mag *= std::fabs(g.alpha);
    double partials = std::fabs(e.v);  // Σ |each partial result of the epilogue|
    if (g.beta != 0.0) {
      const double cv = g.beta * get(g.output, sc, c.at(bb, i, j));
      e.v += cv, mag += std::fabs(cv), partials += std::fabs(e.v);
    }
    if (g.has_bias) {
      const double bv = get(g.output, sbias, j);
      e.v += bv, mag += std::fabs(bv), partials += std::fabs(e.v);
    }
    e.d = ::baracuda::test::reference_activation(g.activation, e.v);
    const double err =
        2.0 * static_cast<double>(g.k + 3) * u * mag + epilogue_ulps * 2.0 * unit(g.output) * partials;
    const double uo = unit(g.output);
    e.v_tol = err + uo * std::fabs(e.v) + tiny(g.output);
    e.d_tol = (g.activation == LinearActivation::None ? 1.0 : 1.2) * err +
              (g.activation == LinearActivation::None ? 0.0 : 16.0 * u * (std::fabs(e.d) + std::fabs(e.v))) +
              uo * std::fabs(e.d) + tiny(g.output);
    return e;
  }
  /// bias_grad[i]: Σ_k a[i, k] and its bound 2·(K + 1)·u·Σ|a| + one rounding.
  std::pair<double, double> expect_bias_grad(int64_t i, double u) const {
    double s = 0, mag = 0;
    for (int64_t k = 0; k < g.k; ++k) {
      const double x = get(g.input, sa, a.at(0, i, k));
      s += x, mag += std::fabs(x);
    }
    return {s, 2.0 * static_cast<double>(g.k + 1) * u * mag + unit(g.output) * std::fabs(s) + tiny(g.output)};
  }
};

/// The epilogue ulps (Data::expect) allowed the cuBLASLt backend: one ulp of the output kind per partial result
/// (measured on an H100 with f16 outputs: up to 16 ulps of a small output after β·C cancelled a larger α·A·B,
/// docs/perf/2026-11-27-h100, run 9).
inline constexpr double kCublasLtEpilogueUlps = 1.0;

/// What a run wrote: the output storages, downloaded.
struct Outputs {
  std::vector<uint8_t> d, aux, bg;
};

/// Allocates and uploads every operand on `st`'s device, selects (with `pref`) and runs; `in_place` makes d
/// the very view of c (descriptor ldd/batch_stride_d equal to c's).
inline Result<Outputs> run_on(const Stream& st, const Data& x, PlanPreference pref = {}, bool in_place = false) {
  auto up = [&](const std::vector<uint8_t>& s) -> Result<Buffer> {
    auto b = Buffer::allocate(st, s.size());
    if (!b) return b.error();
    BARACUDA_TRY(b->copy_from_host(s.data(), s.size()));
    return b;
  };
  auto ba = up(x.sa), bb = up(x.sb), bc = up(in_place ? x.sc : x.sc), bbias = up(x.sbias), bd = up(x.sd),
       baux = up(x.saux), bbg = up(x.sbg);
  for (auto* r : {&ba, &bb, &bc, &bbias, &bd, &baux, &bbg})
    if (!*r) return r->error();
  const GemmDescriptor& g = x.g;
  dynamic::GemmArgs args;
  args.a = x.view<ConstDynTensor>(static_cast<const void*>(ba->data()), g.input, x.a);
  args.b = x.view<ConstDynTensor>(static_cast<const void*>(bb->data()), g.input, x.b);
  if (g.beta != 0.0) args.c = x.view<ConstDynTensor>(static_cast<const void*>(bc->data()), g.output, x.c);
  if (g.has_bias) args.bias = ConstDynTensor::dense(bbias->data(), g.output, Shape{g.n});
  args.d = x.view<DynTensor>(in_place ? bc->data() : bd->data(), g.output, x.d);
  if (g.has_aux) args.aux = x.view<DynTensor>(baux->data(), g.output, x.aux);
  if (g.bias_grad) args.bias_grad = DynTensor::dense(bbg->data(), g.output, Shape{g.m});
  auto plan = dynamic::GemmPlan::select(st, g, pref);
  if (!plan) return plan.error();
  auto ws = Buffer::allocate(st, plan->workspace_size());
  if (!ws) return ws.error();
  BARACUDA_TRY(plan->run(st, ws->as_workspace(), args));
  BARACUDA_TRY(st.synchronize());
  Outputs o;
  auto down = [](const Buffer& b, std::vector<uint8_t>& s) { return b.copy_to_host(s.data(), s.size()); };
  o.d = x.sd, o.aux = x.saux, o.bg = x.sbg;
  if (in_place) o.d.assign(x.sc.size(), 0);
  BARACUDA_TRY(down(in_place ? *bc : *bd, o.d));
  BARACUDA_TRY(down(*baux, o.aux));
  BARACUDA_TRY(down(*bbg, o.bg));
  return o;
}

/// Checks every output of `o` against the f64 evaluation with opmath unit roundoff `u`, and that no byte of
/// d's and aux's storage outside their views changed (`in_place`: d is in c's storage, not checked so).
/// Returns the number of elements checked.
inline int64_t check_outputs(const Data& x, const Outputs& o, double u, const std::string& what,
                             bool in_place = false, double epilogue_ulps = 0) {
  const GemmDescriptor& g = x.g;
  int64_t checked = 0;
  std::vector<bool> d_touched(o.d.size() / bytes_of(g.output)), aux_touched(o.aux.size() / bytes_of(g.output));
  for (int64_t bb = 0; bb < g.batch; ++bb)
    for (int64_t i = 0; i < g.m; ++i)
      for (int64_t j = 0; j < g.n; ++j) {
        const auto e = x.expect(bb, i, j, u, epilogue_ulps);
        const int64_t di = x.d.at(bb, i, j);
        d_touched[static_cast<size_t>(di)] = true;
        const double got = get(g.output, o.d, di);
        EXPECT_LE(std::fabs(got - e.d), e.d_tol)
            << what << ": d[" << bb << ", " << i << ", " << j << "] = " << got << ", expected " << e.d;
        if (g.has_aux) {
          const int64_t ai = x.aux.at(bb, i, j);
          aux_touched[static_cast<size_t>(ai)] = true;
          const double ga = get(g.output, o.aux, ai);
          EXPECT_LE(std::fabs(ga - e.v), e.v_tol)
              << what << ": aux[" << bb << ", " << i << ", " << j << "] = " << ga << ", expected " << e.v;
        }
        ++checked;
        if (::testing::Test::HasFailure()) return checked;
      }
  if (g.bias_grad)
    for (int64_t i = 0; i < g.m; ++i) {
      const auto [s, tol] = x.expect_bias_grad(i, u);
      EXPECT_LE(std::fabs(get(g.output, o.bg, i) - s), tol) << what << ": bias_grad[" << i << "]";
    }
  const size_t w = bytes_of(g.output);
  auto untouched = [&](const std::vector<uint8_t>& s, const std::vector<bool>& t, const char* name) {
    for (size_t e = 0; e < t.size(); ++e)
      if (!t[e])
        for (size_t q = 0; q < w; ++q)
          if (s[e * w + q] != 0xA5) {
            ADD_FAILURE() << what << ": " << name << "'s storage outside the view was written at element " << e;
            return;
          }
  };
  if (!in_place) untouched(o.d, d_touched, "d");
  if (g.has_aux) untouched(o.aux, aux_touched, "aux");
  return checked;
}

/// The opmath unit roundoff of the bespoke kernel for an input kind, and of the host reference.
inline double kernel_unit(ElementKind input) {
  return input == ElementKind::F64 ? std::ldexp(1.0, -53) : std::ldexp(1.0, -24);
}
inline double host_unit() { return std::ldexp(1.0, -53); }

}  // namespace baracuda::test::gemm
