// Int4MarlinGemmPlan against the golden Marlin tensors of tests/data/w4a16_golden.json (independent numpy):
// an identity activation gives w_deq bit for bit (f16; bf16 within the scale and weight roundings), and a
// random activation matches the double product with w_deq.
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
#include <vector>

#include "int4_gemm_test_support.hpp"

namespace baracuda::test {
namespace {

// ------------------------------------------------------------------------------------------ golden

template <class T>
void golden_case(const W4a16Case& gc) {
  SCOPED_TRACE(gc.name + " " + name_t<T>());
  const int64_t K = gc.shape.k, N = gc.shape.n, G = gc.shape.num_groups();
  for (const char* need : {"marlin_qweight", "marlin_scales", "w_deq_f32"}) ASSERT_TRUE(gc.t.count(need)) << need;
  const W4a16Tensor& qw = gc.t.at("marlin_qweight");
  const W4a16Tensor& sc = gc.t.at("marlin_scales");
  const W4a16Tensor& wd = gc.t.at("w_deq_f32");
  ASSERT_EQ(qw.d0 * qw.d1, K / 16 * 2 * N);
  ASSERT_EQ(sc.d0 * sc.d1, G * N);
  Arr<int32_t> b_q(qw.bits.size()), zeros(std::max<size_t>(1, G * N / 8)), perm(static_cast<size_t>(K));
  for (size_t i = 0; i < b_q.n; ++i) b_q[i] = static_cast<int32_t>(qw.bits[i]);
  Arr<T> scales(sc.bits.size());
  for (size_t i = 0; i < scales.n; ++i) {
    __half_raw r;
    r.x = static_cast<uint16_t>(sc.bits[i]);
    scales[i] = to_t<T>(__half2float(__half(r)));
  }
  std::vector<float> w_deq(wd.bits.size());
  std::memcpy(w_deq.data(), wd.bits.data(), w_deq.size() * 4);
  const bool act = gc.act_order && G > 1;
  if (!gc.sym) {
    ASSERT_TRUE(gc.t.count("marlin_zp"));
    for (size_t i = 0; i < gc.t.at("marlin_zp").bits.size(); ++i)
      zeros[i] = static_cast<int32_t>(gc.t.at("marlin_zp").bits[i]);
  }
  if (act) {
    ASSERT_TRUE(gc.t.count("marlin_perm"));
    for (int64_t i = 0; i < K; ++i) perm[i] = static_cast<int32_t>(gc.t.at("marlin_perm").bits[i]);
  }
  const auto desc = Int4GemmDescriptor{}
                        .with_group(gc.shape.group)
                        .with_scheme(gc.sym ? Int4Scheme::Symmetric : Int4Scheme::Asymmetric)
                        .with_act_order(gc.act_order)
                        .with_element(kind_t<T>);
  auto run = [&](int64_t M, const Arr<T>& a, Arr<T>& c) {
    auto d = desc;
    d.with_shape(M, N, K);
    auto plan = dynamic::Int4MarlinGemmPlan::select(Stream::host(), d);
    ASSERT_TRUE(plan.is_ok()) << plan.error().to_string();
    dynamic::Int4MarlinGemmArgs t;
    t.a = mat(a.data(), kind_t<T>, M, K, K);
    t.b_q = ConstDynTensor::dense(b_q.data(), ElementKind::S32, Shape{K / 16, 2 * N});
    t.scales = ConstDynTensor::dense(scales.data(), kind_t<T>, Shape{G, N});
    if (!gc.sym) t.zeros = ConstDynTensor::dense(zeros.data(), ElementKind::S32, Shape{G, N / 8});
    if (act) t.perm = vec(perm.data(), ElementKind::S32, K);
    t.c = mat(c.data(), kind_t<T>, M, N, N);
    Arr<uint8_t> ws(plan->workspace_size());
    const Status st = plan->run(Stream::host(), Workspace(ws.data(), plan->workspace_size()), t);
    ASSERT_TRUE(st.is_ok()) << st.error().to_string();
  };
  // Identity activation: C = the dequantized weight in the original row order, rounded to T.
  Arr<T> eye(static_cast<size_t>(K * K), to_t<T>(0.0f)), c(static_cast<size_t>(K * N));
  for (int64_t k = 0; k < K; ++k) eye[k * K + k] = to_t<T>(1.0f);
  run(K, eye, c);
  const double u = unit_roundoff_t<T>();
  int64_t mismatches = 0;
  for (int64_t i = 0; i < K * N; ++i) {
    const float got = from_t<T>(c[i]);
    if constexpr (std::is_same_v<T, __half>) {
      const __half want = __float2half_rn(w_deq[i]);
      if (std::memcmp(&c[i], &want, 2) != 0 && ++mismatches <= 5)
        ADD_FAILURE() << "k=" << i / N << " n=" << i % N << " got " << got << " want f16(" << w_deq[i] << ")";
    } else {
      // bf16: the scale rounded to bf16 and the weight rounded to bf16: |C − w_deq| ≤ (2u + u²)·|w_deq|.
      if (std::fabs(got - w_deq[i]) > (2 * u + u * u) * std::fabs(w_deq[i]) && ++mismatches <= 5)
        ADD_FAILURE() << "k=" << i / N << " n=" << i % N << " got " << got << " want ~" << w_deq[i];
    }
  }
  EXPECT_EQ(mismatches, 0);
  // A random activation: the double product with round_T(w_deq) (f16: exactly the plan's weights).
  if constexpr (std::is_same_v<T, __half>) {
    const int64_t M = 5;
    Arr<T> a(static_cast<size_t>(M * K)), cm(static_cast<size_t>(M * N));
    std::mt19937_64 g(42);
    std::uniform_real_distribution<float> ua(-2.0f, 2.0f);
    for (size_t i = 0; i < a.n; ++i) a[i] = to_t<T>(ua(g));
    run(M, a, cm);
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        double want = 0;
        for (int64_t k = 0; k < K; ++k)
          want += double(from_t<T>(a[m * K + k])) * __half2float(__float2half_rn(w_deq[k * N + n]));
        ASSERT_LE(std::fabs(from_t<T>(cm[m * N + n]) - want), u * std::fabs(want) + abs_floor_t<T>())
            << "m=" << m << " n=" << n;
      }
  }
}

TEST(Int4MarlinGemm, GoldenMarlinTensors) {
  std::string error;
  const std::vector<W4a16Case> cases = load_w4a16_golden(&error);
  ASSERT_TRUE(error.empty()) << error;
  ASSERT_GE(cases.size(), 5u);
  int act_cases = 0, asym_cases = 0;
  for (const W4a16Case& gc : cases) {
    act_cases += gc.act_order, asym_cases += !gc.sym;
    golden_case<__half>(gc);
    golden_case<__nv_bfloat16>(gc);
  }
  EXPECT_GE(act_cases, 1);
  EXPECT_GE(asym_cases, 1);
}

}  // namespace
}  // namespace baracuda::test
