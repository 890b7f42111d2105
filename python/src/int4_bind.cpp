// Bindings of the W4A16 path: Int4MarlinRepackPlan (GPTQ/AWQ checkpoint tensors → Marlin tensors),
// Int4MarlinGemmPlan, and the host helper that turns a checkpoint's g_idx into act-order's perm.
#include <nanobind/ndarray.h>

#include <span>

#include "baracuda/ops/int4_gemm.hpp"
#include "baracuda/ops/int4_marlin_repack.hpp"
#include "baracuda/ops/int4_weights.hpp"
#include "common.hpp"

namespace baracuda::python {

BARACUDA_PY_NAMED_BY_TO_STRING(Int4Scheme, kNumInt4Schemes, "int4 scheme");
BARACUDA_PY_NAMED_BY_TO_STRING(Int4CheckpointFormat, kNumInt4CheckpointFormats, "int4 checkpoint format");

void bind_int4(nb::module_& m) {
  nb::class_<Int4RepackDescriptor> r(m, "Int4RepackDescriptor",
                                     "A GPTQ (symmetric, optional act-order) or AWQ (asymmetric) checkpoint's "
                                     "K × N int4 weight, with scales per `group` rows (-1: one group), to repack "
                                     "for the Marlin GEMM of activation kind `scale_element`.");
  r.def(
      "__init__",
      [](Int4RepackDescriptor* self, int64_t k, int64_t n, int64_t group, std::string_view format, bool act_order,
         std::string_view scale_element) {
        Int4RepackDescriptor d;
        d.k = k, d.n = n, d.group = group;
        d.format = parse_name<Int4CheckpointFormat>(format);
        d.scheme = d.format == Int4CheckpointFormat::Awq ? Int4Scheme::Asymmetric : Int4Scheme::Symmetric;
        d.act_order = act_order;
        d.scale_element = parse_name<ElementKind>(scale_element);
        new (self) Int4RepackDescriptor(d);
      },
      nb::arg("k"), nb::arg("n"), nb::arg("group") = 128, nb::arg("format") = "gptq", nb::arg("act_order") = false,
      nb::arg("scale_element") = "f16");
  r.def_rw("k", &Int4RepackDescriptor::k)
      .def_rw("n", &Int4RepackDescriptor::n)
      .def_rw("group", &Int4RepackDescriptor::group);
  enum_property(r, "format", &Int4RepackDescriptor::format, "The checkpoint's format.");
  bind_plan<dynamic::Int4MarlinRepackPlan>(
      m, "Int4MarlinRepackPlan",
      {input("qweight", &dynamic::Int4MarlinRepackArgs::qweight),
       input("qzeros", &dynamic::Int4MarlinRepackArgs::qzeros),
       input("scales", &dynamic::Int4MarlinRepackArgs::scales),
       input("perm", &dynamic::Int4MarlinRepackArgs::perm),
       output("out_qweight", &dynamic::Int4MarlinRepackArgs::out_qweight),
       output("out_scales", &dynamic::Int4MarlinRepackArgs::out_scales),
       output("out_zeros", &dynamic::Int4MarlinRepackArgs::out_zeros)},
      "Repacks checkpoint int4 tensors into the Marlin tensors of Int4MarlinGemmPlan.");

  nb::class_<Int4GemmDescriptor> g(m, "Int4GemmDescriptor",
                                   "C[M, N] = A[M, K] · W where W (K × N) is int4 in Marlin's layout with scales "
                                   "per `group` rows; A, scales, bias and C f16 or bf16.");
  g.def(
      "__init__",
      [](Int4GemmDescriptor* self, int64_t mm, int64_t n, int64_t k, int64_t group, std::string_view scheme,
         bool act_order, std::string_view element, bool has_bias) {
        Int4GemmDescriptor d;
        d.m = mm, d.n = n, d.k = k, d.group = group;
        d.scheme = parse_name<Int4Scheme>(scheme);
        d.act_order = act_order;
        d.element = parse_name<ElementKind>(element);
        d.has_bias = has_bias;
        new (self) Int4GemmDescriptor(d);
      },
      nb::arg("m"), nb::arg("n"), nb::arg("k"), nb::arg("group") = 128, nb::arg("scheme") = "symmetric",
      nb::arg("act_order") = false, nb::arg("element") = "f16", nb::arg("has_bias") = false);
  g.def_prop_ro("act_order_effective", &Int4GemmDescriptor::act_order_effective);
  bind_plan<dynamic::Int4MarlinGemmPlan>(
      m, "Int4MarlinGemmPlan",
      {input("a", &dynamic::Int4MarlinGemmArgs::a), input("b_q", &dynamic::Int4MarlinGemmArgs::b_q),
       input("scales", &dynamic::Int4MarlinGemmArgs::scales), input("zeros", &dynamic::Int4MarlinGemmArgs::zeros),
       input("perm", &dynamic::Int4MarlinGemmArgs::perm), input("bias", &dynamic::Int4MarlinGemmArgs::bias),
       output("c", &dynamic::Int4MarlinGemmArgs::c)},
      "The W4A16 GEMM over Marlin tensors (act-order gathers A's columns by perm in the workspace).");

  m.def(
      "marlin_act_order_perm",
      [](nb::ndarray<const int32_t, nb::ndim<1>, nb::c_contig, nb::device::cpu> g_idx, int64_t k, int64_t n,
         int64_t group) {
        auto perm = unwrap(marlin_act_order_perm(std::span<const int32_t>(g_idx.data(), g_idx.shape(0)),
                                                 Int4Shape{k, n, group}));
        nb::list out;
        for (int32_t v : perm) out.append(v);
        return out;
      },
      nb::arg("g_idx"), nb::arg("k"), nb::arg("n"), nb::arg("group"),
      "GPTQ act-order's Marlin row order from a checkpoint's g_idx (int32 [K], on the host): the stable "
      "argsort, which the repack and the GEMM take as `perm`.");
}

}  // namespace baracuda::python
