// Bindings of the FP8 GEMM (Fp8GemmPlan): D = act(alpha · dequant(A) · dequant(B)ᵀ + bias), A [M, K] and
// B [N, K] FP8 with per-tensor or DeepSeek Block128 scales, D f16/bf16/f32 or FP8 with d_scale and amax
// (include/baracuda/ops/fp8_gemm.hpp). Fp8GemmScaling is a name, as every enumeration: "tensor", "block128".
#include <string_view>

#include "baracuda/ops/fp8_gemm.hpp"
#include "common.hpp"

namespace baracuda::python {

BARACUDA_PY_NAMED_BY_TO_STRING(LinearActivation, kNumLinearActivations, "linear activation");
BARACUDA_PY_NAMED_BY_TO_STRING(Fp8GemmScaling, 2, "fp8 gemm scaling");

void bind_fp8_gemm(nb::module_& m) {
  nb::class_<Fp8GemmDescriptor> g(
      m, "Fp8GemmDescriptor",
      "D[M, N] = act(alpha · acc + bias), acc = Σ_k A[m, k]·B[n, k] scaled per tensor (a_scale · b_scale) or per "
      "128-wide K block (Block128: a_scale [M, ⌈K/128⌉], b_scale [⌈N/128⌉, ⌈K/128⌉]); A [M, K] and B [N, K] FP8 "
      "row-major (\"TN\"; K, lda, ldb multiples of 16); an FP8 D is round_sat(v · d_scale) with amax = max |v| "
      "(fp8_gemm.hpp's rules).");
  g.def(
      "__init__",
      [](Fp8GemmDescriptor* self, int64_t mm, int64_t n, int64_t k, std::string_view a_kind, std::string_view b_kind,
         std::string_view output, int64_t lda, int64_t ldb, int64_t ldd, std::string_view scaling, bool a_scale_m_major,
         double alpha, bool has_bias, std::string_view bias_kind, std::string_view activation, bool has_amax,
         bool fast_accum) {
        Fp8GemmDescriptor d;
        d.with_shape(mm, n, k)
            .with_kinds(parse_name<ElementKind>(a_kind), parse_name<ElementKind>(b_kind),
                        parse_name<ElementKind>(output))
            .with_lda(lda)
            .with_ldb(ldb)
            .with_ldd(ldd)
            .with_scaling(parse_name<Fp8GemmScaling>(scaling))
            .with_a_scale_m_major(a_scale_m_major)
            .with_alpha(alpha)
            .with_activation(parse_name<LinearActivation>(activation))
            .with_amax(has_amax)
            .with_fast_accum(fast_accum);
        d.has_bias = has_bias;
        d.bias_kind = parse_name<ElementKind>(bias_kind);
        new (self) Fp8GemmDescriptor(d);
      },
      nb::arg("m"), nb::arg("n"), nb::arg("k"), nb::arg("a_kind") = "fp8e4m3", nb::arg("b_kind") = "fp8e4m3",
      nb::arg("output") = "bf16", nb::arg("lda") = 0, nb::arg("ldb") = 0, nb::arg("ldd") = 0,
      nb::arg("scaling") = "tensor", nb::arg("a_scale_m_major") = false, nb::arg("alpha") = 1.0,
      nb::arg("has_bias") = false, nb::arg("bias_kind") = "bf16", nb::arg("activation") = "none",
      nb::arg("has_amax") = false, nb::arg("fast_accum") = false);
  g.def_rw("m", &Fp8GemmDescriptor::m).def_rw("n", &Fp8GemmDescriptor::n).def_rw("k", &Fp8GemmDescriptor::k);
  g.def_rw("lda", &Fp8GemmDescriptor::lda).def_rw("ldb", &Fp8GemmDescriptor::ldb);
  g.def_rw("ldd", &Fp8GemmDescriptor::ldd).def_rw("alpha", &Fp8GemmDescriptor::alpha);
  g.def_rw("has_bias", &Fp8GemmDescriptor::has_bias).def_rw("has_amax", &Fp8GemmDescriptor::has_amax);
  g.def_rw("fast_accum", &Fp8GemmDescriptor::fast_accum);
  g.def_rw("a_scale_m_major", &Fp8GemmDescriptor::a_scale_m_major);
  enum_property(g, "a_kind", &Fp8GemmDescriptor::a_kind, "A's kind (fp8e4m3 or fp8e5m2).");
  enum_property(g, "b_kind", &Fp8GemmDescriptor::b_kind, "B's kind (fp8e4m3 or fp8e5m2; not both fp8e5m2).");
  enum_property(g, "output", &Fp8GemmDescriptor::output, "D's kind: f16, bf16, f32, fp8e4m3 or fp8e5m2.");
  enum_property(g, "scaling", &Fp8GemmDescriptor::scaling, "'tensor' or 'block128'.");
  enum_property(g, "bias_kind", &Fp8GemmDescriptor::bias_kind, "The bias's kind (f16, bf16 or f32).");
  enum_property(g, "activation", &Fp8GemmDescriptor::activation, "The epilogue's function.");
  g.def("__eq__", [](const Fp8GemmDescriptor& a, const Fp8GemmDescriptor& b) { return a == b; });
  g.def("__hash__", [](const Fp8GemmDescriptor& a) { return a.hash(); });

  using A = dynamic::Fp8GemmArgs;
  bind_plan<dynamic::Fp8GemmPlan>(
      m, "Fp8GemmPlan",
      {input("a", &A::a), input("b", &A::b), input("a_scale", &A::a_scale), input("b_scale", &A::b_scale),
       input("bias", &A::bias), input("d_scale", &A::d_scale), output("d", &A::d), output("amax", &A::amax)},
      "FP8 GEMM: a [M, K], b [N, K] fp8 (row-major, row stride the descriptor's), a_scale and b_scale f32 ([1] or "
      "the Block128 shapes), bias [N], d_scale f32 [1] (fp8 D only), d [M, N], amax f32 [1] (with has_amax).");
  m.def("fp8_gemm_scalings", &all_names<Fp8GemmScaling>, "Fp8GemmPlan's scalings: 'tensor', 'block128'.");
}

}  // namespace baracuda::python
