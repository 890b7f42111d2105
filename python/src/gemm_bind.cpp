// Bindings of the dense GEMM family (GemmPlan).
#include <string_view>

#include "baracuda/ops/gemm.hpp"
#include "common.hpp"

namespace baracuda::python {

BARACUDA_PY_NAMED_BY_TO_STRING(LinearActivation, kNumLinearActivations, "linear activation");
BARACUDA_PY_NAMED_BY_TO_STRING(MatrixLayout, 2, "matrix layout");

void bind_gemm(nb::module_& m) {
  nb::class_<GemmDescriptor> g(m, "GemmDescriptor",
                               "D = act(alpha·op(A)·op(B) + beta·C + bias) per batch, with the optional "
                               "pre-activation aux and bias_grad = Σ_k op(A)[m, k] (gemm.hpp's rules).");
  g.def(
      "__init__",
      [](GemmDescriptor* self, int64_t mm, int64_t n, int64_t k, int64_t batch, std::string_view input,
         std::string_view output, std::string_view layout_a, std::string_view layout_b, int64_t lda, int64_t ldb,
         int64_t ldc, int64_t ldd, int64_t ld_aux, int64_t batch_stride_a, int64_t batch_stride_b,
         int64_t batch_stride_c, int64_t batch_stride_d, int64_t batch_stride_aux, double alpha, double beta,
         bool has_bias, std::string_view activation, bool has_aux, bool bias_grad, bool allow_tf32) {
        GemmDescriptor d;
        d.with_shape(mm, n, k)
            .with_batch(batch)
            .with_kinds(parse_name<ElementKind>(input), parse_name<ElementKind>(output))
            .with_layouts(parse_name<MatrixLayout>(layout_a), parse_name<MatrixLayout>(layout_b))
            .with_lda(lda)
            .with_ldb(ldb)
            .with_ldc(ldc)
            .with_ldd(ldd)
            .with_ld_aux(ld_aux)
            .with_batch_stride_a(batch_stride_a)
            .with_batch_stride_b(batch_stride_b)
            .with_batch_stride_c(batch_stride_c)
            .with_batch_stride_d(batch_stride_d)
            .with_batch_stride_aux(batch_stride_aux)
            .with_alpha_beta(alpha, beta)
            .with_bias(has_bias)
            .with_activation(parse_name<LinearActivation>(activation))
            .with_aux(has_aux)
            .with_bias_grad(bias_grad)
            .with_tf32(allow_tf32);
        new (self) GemmDescriptor(d);
      },
      nb::arg("m"), nb::arg("n"), nb::arg("k"), nb::arg("batch") = 1, nb::arg("input") = "f16",
      nb::arg("output") = "f16", nb::arg("layout_a") = "row_major", nb::arg("layout_b") = "row_major",
      nb::arg("lda") = 0, nb::arg("ldb") = 0, nb::arg("ldc") = 0, nb::arg("ldd") = 0, nb::arg("ld_aux") = 0,
      nb::arg("batch_stride_a") = kPackedBatchStride, nb::arg("batch_stride_b") = kPackedBatchStride,
      nb::arg("batch_stride_c") = kPackedBatchStride, nb::arg("batch_stride_d") = kPackedBatchStride,
      nb::arg("batch_stride_aux") = kPackedBatchStride, nb::arg("alpha") = 1.0, nb::arg("beta") = 0.0,
      nb::arg("has_bias") = false, nb::arg("activation") = "none", nb::arg("has_aux") = false,
      nb::arg("bias_grad") = false, nb::arg("allow_tf32") = false);
  g.def_rw("m", &GemmDescriptor::m).def_rw("n", &GemmDescriptor::n).def_rw("k", &GemmDescriptor::k);
  g.def_rw("batch", &GemmDescriptor::batch).def_rw("alpha", &GemmDescriptor::alpha);
  g.def_rw("beta", &GemmDescriptor::beta).def_rw("has_bias", &GemmDescriptor::has_bias);
  g.def_rw("has_aux", &GemmDescriptor::has_aux).def_rw("bias_grad", &GemmDescriptor::bias_grad);
  g.def_rw("allow_tf32", &GemmDescriptor::allow_tf32);
  enum_property(g, "input", &GemmDescriptor::input, "A's and B's kind.");
  enum_property(g, "output", &GemmDescriptor::output, "C's, D's, bias's, aux's and bias_grad's kind.");
  enum_property(g, "layout_a", &GemmDescriptor::layout_a, "op(A)'s layout.");
  enum_property(g, "layout_b", &GemmDescriptor::layout_b, "op(B)'s layout.");
  enum_property(g, "activation", &GemmDescriptor::activation, "The epilogue's function.");
  using A = dynamic::GemmArgs;
  bind_plan<dynamic::GemmPlan>(m, "GemmPlan",
                               {input("a", &A::a), input("b", &A::b), input("c", &A::c), input("bias", &A::bias),
                                output("d", &A::d), output("aux", &A::aux), output("bias_grad", &A::bias_grad)},
                               "Dense GEMM with cuBLASLt's epilogues; the views' strides must be the descriptor's.");
}

}  // namespace baracuda::python
