// The CUDA-core kernel (src/ops/gemm/simt_kernels.cuh) on f16 and bf16 inputs, which the plan gives to it only for
// shapes the tensor-core kernel does not take (M, N or K above 2^31 − 256): called here directly on the sim device
// through the table (device_sim::gemm_tables().simt), at every layout and with the whole epilogue, against the f64
// evaluation of gemm_test_support.hpp; and bit-stable run to run. The names end in _sim so that gemm_test_sim_rev
// (the filter *sim*) runs them under the emulator's checkers too.
#include <gtest/gtest.h>

#include <string>

#include "gemm_test_support.hpp"
#include "ops/gemm/tables.hpp"
#include "support/sim_context.hpp"

namespace baracuda::test::gemm {
namespace {

detail::GemmOperand operand(const std::vector<uint8_t>& s, const Mat& m) { return {s.data(), m.batch, m.row, m.col}; }

/// Runs the sim table's SIMT function for `x` (outputs written into a copy of x's storage).
Outputs run_simt(const Data& x) {
  const GemmDescriptor& g = x.g;
  Outputs o{x.sd, x.saux, x.sbg};
  detail::GemmLaunch l;
  l.m = g.m, l.n = g.n, l.k = g.k, l.batch = g.batch, l.ab = g.input, l.cd = g.output;
  l.a = operand(x.sa, x.a), l.b = operand(x.sb, x.b), l.d = operand(o.d, x.d);
  if (g.beta != 0.0) l.c = operand(x.sc, x.c);
  if (g.has_aux) l.aux = operand(o.aux, x.aux);
  if (g.has_bias) l.bias = {x.sbias.data(), 0, 0, 1};
  if (g.bias_grad) l.bias_grad = {o.bg.data(), 0, 0, 1};
  l.alpha = g.alpha, l.beta = g.beta, l.activation = g.activation;
  const detail::GemmFn fn = device_sim::gemm_tables().simt[detail::kind_index(g.input)][detail::kind_index(g.output)];
  EXPECT_NE(fn, nullptr);
  if (fn != nullptr) EXPECT_TRUE(fn(sim_context(), l).is_ok());
  return o;
}

TEST(GemmSimt, SixteenBitInputsEveryLayoutAndEpilogue_sim) {
  constexpr MatrixLayout kR = MatrixLayout::RowMajor, kC = MatrixLayout::ColMajor;
  const std::pair<ElementKind, ElementKind> kinds[] = {{ElementKind::F16, ElementKind::F16},
                                                       {ElementKind::F16, ElementKind::F32},
                                                       {ElementKind::Bf16, ElementKind::Bf16},
                                                       {ElementKind::Bf16, ElementKind::F32}};
  uint64_t seed = 1;
  for (const auto& [in, out] : kinds)
    for (MatrixLayout la : {kR, kC})
      for (MatrixLayout lb : {kR, kC}) {
        const auto g = GemmDescriptor{}
                           .with_shape(129, 65, 96)
                           .with_kinds(in, out)
                           .with_layouts(la, lb)
                           .with_alpha_beta(0.5, 1.0)
                           .with_bias()
                           .with_activation(LinearActivation::GeluTanh)
                           .with_aux()
                           .with_bias_grad();
        const Data x(g, seed++);
        const Outputs o = run_simt(x);
        check_outputs(x, o, kernel_unit(in), "simt " + std::string(to_string(in)) + "->" + std::string(to_string(out)));
        const Outputs again = run_simt(x);
        EXPECT_EQ(o.d, again.d);
        EXPECT_EQ(o.aux, again.aux);
        EXPECT_EQ(o.bg, again.bg);
        if (HasFailure()) return;
      }
}

// Batched, with op(B) broadcast and padded leading dimensions.
TEST(GemmSimt, BatchedBroadcast_sim) {
  const auto g = GemmDescriptor{}
                     .with_shape(33, 70, 40)
                     .with_batch(3)
                     .with_kinds(ElementKind::Bf16, ElementKind::Bf16)
                     .with_layouts(MatrixLayout::ColMajor, MatrixLayout::RowMajor)
                     .with_lda(40)
                     .with_ldb(75)
                     .with_batch_stride_b(0)
                     .with_ldd(72)
                     .with_alpha_beta(1.0, 0.0);
  const Data x(g, 99);
  check_outputs(x, run_simt(x), kernel_unit(g.input), "simt batched");
}

}  // namespace
}  // namespace baracuda::test::gemm
