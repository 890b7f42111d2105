// Helpers shared by the grouped_gemm tests: a problem (group sizes, or raw offsets), its operands in host memory
// (inputs random in [-1, 1], padding and outputs a sentinel), a run on any device, and an f64 evaluation of the
// contract written here from grouped_gemm.hpp's rules, independently of the library.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "baracuda/baracuda.hpp"
#include "baracuda/ops/grouped_gemm.hpp"
#include "gemm_test_support.hpp"  // get, put, unit, tiny, bytes_of

namespace baracuda::test::grouped_gemm {

using gemm::bytes_of;
using gemm::get;
using gemm::put;
using gemm::tiny;
using gemm::unit;

/// One problem: the descriptor, the raw offsets (any values), and the row strides of x and y (0: dense) and
/// the group stride of w (0: dense).
struct Problem {
  GroupedGemmDescriptor g;
  std::vector<int64_t> offsets;  ///< E + 1 values
  int64_t x_ld = 0, y_ld = 0;

  /// Valid offsets from the group sizes.
  static Problem of_sizes(const std::vector<int64_t>& sizes, int64_t n, int64_t k, ElementKind in, ElementKind out,
                          bool bias, ElementKind offsets_kind = ElementKind::S64) {
    Problem p;
    p.offsets.push_back(0);
    for (int64_t s : sizes) p.offsets.push_back(p.offsets.back() + s);
    p.g = GroupedGemmDescriptor{}
              .with_shape(static_cast<int64_t>(sizes.size()), p.offsets.back(), n, k)
              .with_kinds(in, out)
              .with_offsets_kind(offsets_kind)
              .with_bias(bias);
    return p;
  }
  int64_t xld() const { return x_ld ? x_ld : g.k; }
  int64_t yld() const { return y_ld ? y_ld : g.n; }

  /// The effective offsets of grouped_gemm.hpp: a running maximum of the offsets clamped to [0, total_M].
  std::vector<int64_t> effective() const {
    std::vector<int64_t> e;
    int64_t run = 0;
    for (int64_t v : offsets) {
      const int64_t c = std::min(std::max<int64_t>(v, 0), g.total_m);
      run = std::max(run, c);
      e.push_back(run);
    }
    return e;
  }
};

/// The operands of a problem in host memory.
struct Data {
  Problem p;
  std::vector<uint8_t> x, w, off, bias, y;

  Data(const Problem& prob, uint64_t seed) : p(prob) {
    const GroupedGemmDescriptor& g = p.g;
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    auto fill = [&](ElementKind k, int64_t n) {
      std::vector<uint8_t> s(static_cast<size_t>(std::max<int64_t>(n, 1)) * bytes_of(k));
      for (int64_t i = 0; i < n; ++i) put(k, s, i, u(rng));
      return s;
    };
    x = fill(g.input, g.total_m * p.xld());
    w = fill(g.input, g.groups * g.n * g.k);
    bias = fill(g.output, g.has_bias ? g.groups * g.n : 0);
    y.assign(static_cast<size_t>(std::max<int64_t>(g.total_m * p.yld(), 1)) * bytes_of(g.output), 0xA5);
    const size_t ob = g.offsets == ElementKind::S32 ? 4 : 8;
    off.assign(p.offsets.size() * ob, 0);
    for (size_t i = 0; i < p.offsets.size(); ++i) {
      if (ob == 4) {
        const int32_t v = static_cast<int32_t>(p.offsets[i]);
        std::memcpy(off.data() + i * 4, &v, 4);
      } else {
        std::memcpy(off.data() + i * 8, &p.offsets[i], 8);
      }
    }
  }

  /// y[r, n] in f64 and its bound: |got − v| ≤ 2·(K + 2)·2^-24·(Σ|x·w| + |bias|) + u_out·|v| + tiny.
  std::pair<double, double> expect(int64_t e, int64_t r, int64_t n) const {
    const GroupedGemmDescriptor& g = p.g;
    double acc = 0, mag = 0;
    for (int64_t k = 0; k < g.k; ++k) {
      const double a = get(g.input, x, r * p.xld() + k), b = get(g.input, w, (e * g.n + n) * g.k + k);
      acc += a * b, mag += std::fabs(a * b);
    }
    if (g.has_bias) {
      const double bv = get(g.output, bias, e * g.n + n);
      acc += bv, mag += std::fabs(bv);
    }
    const double tol = 2.0 * static_cast<double>(g.k + 2) * std::ldexp(1.0, -24) * mag +
                       unit(g.output) * std::fabs(acc) + tiny(g.output);
    return {acc, tol};
  }
};

/// Uploads every operand to `st`'s device, selects and runs, and downloads y.
inline Result<std::vector<uint8_t>> run_on(const Stream& st, const Data& d) {
  auto up = [&](const std::vector<uint8_t>& s) -> Result<Buffer> {
    auto b = Buffer::allocate(st, s.size());
    if (!b) return b.error();
    BARACUDA_TRY(b->copy_from_host(s.data(), s.size()));
    return b;
  };
  auto bx = up(d.x), bw = up(d.w), bo = up(d.off), bb = up(d.bias), by = up(d.y);
  for (auto* r : {&bx, &bw, &bo, &bb, &by})
    if (!*r) return r->error();
  const GroupedGemmDescriptor& g = d.p.g;
  dynamic::GroupedGemmArgs a;
  a.x = ConstDynTensor::dense(bx->data(), g.input, Shape{g.total_m, g.k});
  a.x.stride[0] = d.p.xld();
  a.w = ConstDynTensor::dense(bw->data(), g.input, Shape{g.groups, g.n, g.k});
  a.offsets = ConstDynTensor::dense(bo->data(), g.offsets, Shape{g.groups + 1});
  if (g.has_bias) a.bias = ConstDynTensor::dense(bb->data(), g.output, Shape{g.groups, g.n});
  a.y = DynTensor::dense(by->data(), g.output, Shape{g.total_m, g.n});
  a.y.stride[0] = d.p.yld();
  auto plan = dynamic::GroupedGemmPlan::select(st, g);
  if (!plan) return plan.error();
  BARACUDA_TRY(plan->run(st, {}, a));
  BARACUDA_TRY(st.synchronize());
  std::vector<uint8_t> y(d.y.size());
  BARACUDA_TRY(by->copy_to_host(y.data(), y.size()));
  return y;
}

/// Checks y against the f64 evaluation over the effective groups, and that every other byte of y's storage
/// (rows no group covers, the gaps of a strided y) kept the sentinel. Returns the elements checked.
inline int64_t check_y(const Data& d, const std::vector<uint8_t>& y, const std::string& what) {
  const GroupedGemmDescriptor& g = d.p.g;
  const std::vector<int64_t> eff = d.p.effective();
  const size_t eb = bytes_of(g.output);
  std::vector<bool> covered(y.size() / eb, false);
  int64_t checked = 0;
  for (int64_t e = 0; e < g.groups; ++e)
    for (int64_t r = eff[e]; r < eff[e + 1]; ++r)
      for (int64_t n = 0; n < g.n; ++n) {
        const auto [v, tol] = d.expect(e, r, n);
        const int64_t i = r * d.p.yld() + n;
        covered[static_cast<size_t>(i)] = true;
        const double got = get(g.output, y, i);
        EXPECT_LE(std::fabs(got - v), tol)
            << what << ": y[" << r << ", " << n << "] (group " << e << ") = " << got << ", expected " << v;
        ++checked;
        if (::testing::Test::HasFailure()) return checked;
      }
  for (size_t i = 0; i < covered.size(); ++i) {
    if (covered[i]) continue;
    for (size_t b = 0; b < eb; ++b)
      if (y[i * eb + b] != 0xA5) {
        ADD_FAILURE() << what << ": y's element " << i << " was written, but no group covers it";
        return checked;
      }
  }
  return checked;
}

}  // namespace baracuda::test::grouped_gemm
