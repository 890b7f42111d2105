// Bindings of the grouped GEMM family (GroupedGemmPlan).
#include <string_view>

#include "baracuda/ops/grouped_gemm.hpp"
#include "common.hpp"

namespace baracuda::python {

void bind_grouped_gemm(nb::module_& m) {
  nb::class_<GroupedGemmDescriptor> g(m, "GroupedGemmDescriptor",
                                      "y[rows of e] = x[rows of e]·W[e]ᵀ (+ bias[e]) for E groups whose row offsets "
                                      "are in device memory (grouped_gemm.hpp's rules).");
  g.def(
      "__init__",
      [](GroupedGemmDescriptor* self, int64_t groups, int64_t total_m, int64_t n, int64_t k, std::string_view input,
         std::string_view output, std::string_view offsets, bool has_bias) {
        GroupedGemmDescriptor d;
        d.with_shape(groups, total_m, n, k)
            .with_kinds(parse_name<ElementKind>(input), parse_name<ElementKind>(output))
            .with_offsets_kind(parse_name<ElementKind>(offsets))
            .with_bias(has_bias);
        new (self) GroupedGemmDescriptor(d);
      },
      nb::arg("groups"), nb::arg("total_m"), nb::arg("n"), nb::arg("k"), nb::arg("input") = "f16",
      nb::arg("output") = "f16", nb::arg("offsets") = "s64", nb::arg("has_bias") = false);
  g.def_rw("groups", &GroupedGemmDescriptor::groups).def_rw("total_m", &GroupedGemmDescriptor::total_m);
  g.def_rw("n", &GroupedGemmDescriptor::n).def_rw("k", &GroupedGemmDescriptor::k);
  g.def_rw("has_bias", &GroupedGemmDescriptor::has_bias);
  enum_property(g, "input", &GroupedGemmDescriptor::input, "x's and w's kind.");
  enum_property(g, "output", &GroupedGemmDescriptor::output, "y's and bias's kind.");
  enum_property(g, "offsets", &GroupedGemmDescriptor::offsets, "The offsets' kind (s32 or s64).");
  using A = dynamic::GroupedGemmArgs;
  bind_plan<dynamic::GroupedGemmPlan>(m, "GroupedGemmPlan",
                                      {input("x", &A::x), input("w", &A::w), input("offsets", &A::offsets),
                                       input("bias", &A::bias), output("y", &A::y)},
                                      "Grouped GEMM (mixture-of-experts): one x·W[e]ᵀ per group of rows.");
}

}  // namespace baracuda::python
