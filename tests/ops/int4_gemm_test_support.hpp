// Helpers shared by the int4_gemm tests (int4_gemm_*test.cpp): weights, host problems, the double recomputation.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "baracuda/baracuda.hpp"
#include "ops/int4_gemm/tables.hpp"
#include "support/devices.hpp"
#include "support/expect_error.hpp"
#include "support/host_array.hpp"
#include "support/tensor.hpp"
#include "support/w4a16_golden.hpp"
#include "support/w4a16_inputs.hpp"

namespace baracuda::test {

// ------------------------------------------------------------------------------------------ helpers

/// The erased view of a pointer: a writable DynTensor, or a read-only ConstDynTensor for a const pointer.
template <class P>
using ViewOf = std::conditional_t<std::is_const_v<P>, ConstDynTensor, DynTensor>;

/// A `[rows, cols]` view with row stride `ld`.
template <class P>
ViewOf<P> mat(P* p, ElementKind k, int64_t rows, int64_t cols, int64_t ld) {
  ViewOf<P> t = ViewOf<P>::dense(p, k, Shape{rows, cols});
  t.stride[0] = ld;
  return t;
}
/// A dense `[n]` view.
template <class P>
ViewOf<P> vec(P* p, ElementKind k, int64_t n) {
  return ViewOf<P>::dense(p, k, Shape{n});
}

template <class T>
inline constexpr ElementKind kind_t = kind_of<T>;

// ---------------------------------------------------------------------------------- weights and problems

// Asymmetric weights get no positive-only column: vLLM's zero point |mn / s| clamps most of it, a documented
// quantizer convention of int4_weights.hpp that the quantization-error bound below does not model.

enum class Source { Logical, Checkpoint };

struct Weights {
  Int4Shape shape;
  Int4Scheme scheme;
  bool act_order;
  std::vector<float> w32;  ///< the f32 weight [K, N]
  Int4Weights logical;
  MarlinInt4Weights marlin;                          ///< marlin_from_int4
  std::optional<MarlinInt4Weights> from_checkpoint;  ///< gptq_to_marlin (sym) / awq_to_marlin (asym, no act-order)
};

inline Weights make_weights(int64_t K, int64_t N, int64_t group, Int4Scheme scheme, bool act_order, uint64_t seed) {
  Weights W{Int4Shape{K, N, group},
            scheme,
            act_order,
            random_int4_source_weight(K, N, seed, scheme == Int4Scheme::Symmetric),
            {},
            {},
            {}};
  std::vector<int32_t> g_idx;
  if (act_order && W.shape.num_groups() > 1) g_idx = random_act_order_g_idx(W.shape, seed + 1);
  auto q = quantize_int4(W.w32, W.shape, scheme, g_idx);
  EXPECT_TRUE(q.is_ok()) << q.error().to_string();
  W.logical = std::move(q).value();
  auto m = marlin_from_int4(W.logical, act_order);
  EXPECT_TRUE(m.is_ok()) << m.error().to_string();
  W.marlin = std::move(m).value();
  if (scheme == Int4Scheme::Symmetric) {
    auto ck = gptq_pack(W.logical);
    EXPECT_TRUE(ck.is_ok()) << ck.error().to_string();
    auto c = gptq_to_marlin({ck->qweight, ck->qzeros, ck->scales, ck->g_idx}, W.shape, scheme, act_order);
    EXPECT_TRUE(c.is_ok()) << c.error().to_string();
    W.from_checkpoint = std::move(c).value();
  } else if (!act_order || W.shape.num_groups() == 1) {
    auto ck = awq_pack(W.logical);
    EXPECT_TRUE(ck.is_ok()) << ck.error().to_string();
    auto c = awq_to_marlin({ck->qweight, ck->qzeros, ck->scales}, W.shape);
    EXPECT_TRUE(c.is_ok()) << c.error().to_string();
    W.from_checkpoint = std::move(c).value();
  }
  return W;
}

/// The group of logical row k.
inline int64_t group_of(const Int4Weights& w, int64_t k) {
  return w.g_idx.empty() ? k / w.shape.group_rows() : w.g_idx[static_cast<size_t>(k)];
}

/// Scale (f16) converted to T once — what a T plan is given.
template <class T>
double scale_t(__half s) {
  return from_t<T>(to_t<T>(__half2float(s)));
}

/// The logical dequantized weight in T: round_T((q − z)·s_T), [K, N], as doubles. Independent of the Marlin
/// layout. For f16 it is also checked against dequantize_int4 (then rounded).
template <class T>
std::vector<double> logical_weight_t(const Int4Weights& w) {
  const int64_t K = w.shape.k, N = w.shape.n;
  std::vector<double> out(static_cast<size_t>(K * N));
  for (int64_t k = 0; k < K; ++k) {
    const int64_t g = group_of(w, k);
    for (int64_t n = 0; n < N; ++n) {
      const int q = w.q[k * N + n];
      const int z = w.scheme == Int4Scheme::Asymmetric ? w.zeros[g * N + n] : 8;
      const double exact = (q - z) * scale_t<T>(w.scales[g * N + n]);  // exact in double and in float
      out[k * N + n] = from_t<T>(to_t<T>(static_cast<float>(exact)));
    }
  }
  if constexpr (std::is_same_v<T, __half>) {
    auto d = dequantize_int4(w);
    EXPECT_TRUE(d.is_ok());
    for (size_t i = 0; i < out.size(); ++i)
      EXPECT_EQ(out[i], __half2float(__float2half_rn((*d)[i]))) << "dequantize_int4 disagrees at " << i;
  }
  return out;
}

/// The plan's inputs in host memory (the scales converted to T, the activation and bias random values of T).
template <class T>
struct HostProblem {
  Int4GemmDescriptor desc;
  Arr<T> a;
  Arr<int32_t> b_q;
  Arr<T> scales;
  Arr<int32_t> zeros;
  Arr<int32_t> perm;
  Arr<T> bias;
  int64_t lda, ldc;

  HostProblem(const Weights& W, const MarlinInt4Weights& mw, int64_t m, bool has_bias, uint64_t seed, int64_t pad = 0)
      : desc(Int4GemmDescriptor{}
                 .with_shape(m, W.shape.n, W.shape.k)
                 .with_group(W.shape.group)
                 .with_scheme(W.scheme)
                 .with_act_order(W.act_order)
                 .with_element(kind_t<T>)
                 .with_bias(has_bias)),
        a(static_cast<size_t>(m * (W.shape.k + pad))),
        b_q(Arr<int32_t>::from(mw.qweight)),
        scales(mw.scales.size()),
        zeros(Arr<int32_t>::from(mw.zeros)),
        perm(Arr<int32_t>::from(mw.perm)),
        bias(static_cast<size_t>(W.shape.n)),
        lda(W.shape.k + pad),
        ldc(W.shape.n + pad) {
    for (size_t i = 0; i < mw.scales.size(); ++i) scales[i] = to_t<T>(__half2float(mw.scales[i]));
    std::mt19937_64 g(seed);
    std::uniform_real_distribution<float> ua(-1.0f, 1.0f), ub(-0.5f, 0.5f);
    for (size_t i = 0; i < a.n; ++i) a[i] = to_t<T>(ua(g));
    for (size_t i = 0; i < bias.n; ++i) bias[i] = to_t<T>(ub(g));
  }

  dynamic::Int4MarlinGemmArgs tensors(T* c) const {
    const int64_t M = desc.m, N = desc.n, K = desc.k, G = desc.weight_shape().num_groups();
    dynamic::Int4MarlinGemmArgs t;
    t.a = mat(a.data(), kind_t<T>, M, K, lda);
    t.b_q = ConstDynTensor::dense(b_q.data(), ElementKind::S32, Shape{K / 16, 2 * N});
    t.scales = ConstDynTensor::dense(scales.data(), kind_t<T>, Shape{G, N});
    if (desc.scheme == Int4Scheme::Asymmetric)
      t.zeros = ConstDynTensor::dense(zeros.data(), ElementKind::S32, Shape{G, N / 8});
    if (desc.act_order_effective()) t.perm = vec(perm.data(), ElementKind::S32, K);
    if (desc.has_bias) t.bias = vec(bias.data(), kind_t<T>, N);
    t.c = mat(c, kind_t<T>, M, N, ldc);
    return t;
  }
};

/// Runs the host plan; returns C [M, ldc] (padding left at a marker value, checked untouched).
template <class T>
std::vector<T> run_host(const HostProblem<T>& p) {
  const Stream host = Stream::host();
  auto plan = dynamic::Int4MarlinGemmPlan::select(host, p.desc);
  EXPECT_TRUE(plan.is_ok()) << plan.error().to_string();
  if (!plan) return {};
  EXPECT_EQ(plan->workspace_size(),
            p.desc.act_order_effective() ? static_cast<size_t>(p.desc.m * p.desc.k) * sizeof(T) : 0u);
  Arr<uint8_t> ws(plan->workspace_size());
  Arr<T> c(static_cast<size_t>(p.desc.m * p.ldc), to_t<T>(-768.0f));
  const Status st = plan->run(host, Workspace(ws.data(), plan->workspace_size()), p.tensors(c.data()));
  EXPECT_TRUE(st.is_ok()) << st.error().to_string();
  return std::vector<T>(c.data(), c.data() + c.n);
}

/// The independent recomputation: y[m, n] = Σ_k a[m, k]·w_T[k, n] (+ bias) in double over the logical weight
/// and the un-permuted activation; also Σ_k |a·w_T| + |bias| (for the devices' tolerance).
template <class T>
void recompute(const HostProblem<T>& p, const std::vector<double>& wt, std::vector<double>* y,
               std::vector<double>* abs_sum) {
  const int64_t M = p.desc.m, N = p.desc.n, K = p.desc.k;
  y->assign(static_cast<size_t>(M * N), 0.0);
  abs_sum->assign(static_cast<size_t>(M * N), 0.0);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double acc = 0, aacc = 0;
      for (int64_t k = 0; k < K; ++k) {
        const double v = from_t<T>(p.a[m * p.lda + k]) * wt[k * N + n];
        acc += v, aacc += std::fabs(v);
      }
      if (p.desc.has_bias) {
        acc += from_t<T>(p.bias[n]);
        aacc += std::fabs(from_t<T>(p.bias[n]));
      }
      (*y)[m * N + n] = acc, (*abs_sum)[m * N + n] = aacc;
    }
}

}  // namespace baracuda::test
