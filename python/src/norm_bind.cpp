// Bindings of the norm family: NormDescriptor (rms_norm or layer_norm over the last dimension), NormPlan with
// the statistics' shape and kind, and NormBackwardPlan.
#include "baracuda/ops/norm.hpp"
#include "common.hpp"

namespace baracuda::python {

BARACUDA_PY_NAMED_BY_TO_STRING(NormOp, 2, "norm op");

void bind_norm(nb::module_& m) {
  nb::class_<NormDescriptor> d(m, "NormDescriptor", "rms_norm or layer_norm of x over its last dimension.");
  d.def(
      "__init__",
      [](NormDescriptor* self, std::string_view op, std::string_view element, const std::vector<int64_t>& shape,
         double eps, bool weight, bool bias) {
        NormDescriptor desc;
        desc.op = parse_name<NormOp>(op);
        desc.element = parse_name<ElementKind>(element);
        desc.shape = to_shape(shape);
        desc.eps = eps;
        desc.has_weight = weight;
        desc.has_bias = bias;
        new (self) NormDescriptor(desc);
      },
      nb::arg("op"), nb::arg("element"), nb::arg("shape"), nb::arg("eps") = 1e-6, nb::arg("weight") = true,
      nb::arg("bias") = false);
  enum_property(d, "op", &NormDescriptor::op, "rms_norm or layer_norm.");
  enum_property(d, "element", &NormDescriptor::element, "The tensors' kind.");
  shape_property(d, "shape", &NormDescriptor::shape, "x's shape.");
  d.def_rw("eps", &NormDescriptor::eps)
      .def_rw("weight", &NormDescriptor::has_weight)
      .def_rw("bias", &NormDescriptor::has_bias);
  bind_plan<dynamic::NormPlan>(m, "NormPlan",
                               {input("x", &dynamic::NormArgs::x), input("weight", &dynamic::NormArgs::weight),
                                input("bias", &dynamic::NormArgs::bias), output("y", &dynamic::NormArgs::y),
                                output("mean", &dynamic::NormArgs::mean), output("rstd", &dynamic::NormArgs::rstd)},
                               "y = norm(x) · weight + bias over the last dimension; mean and rstd optional outputs.")
      .def_prop_ro("stats_shape", [](const dynamic::NormPlan& p) { return from_shape(p.stats_shape()); })
      .def_prop_ro("stats_kind", [](const dynamic::NormPlan& p) { return std::string(to_string(p.stats_kind())); });
  bind_plan<dynamic::NormBackwardPlan>(
      m, "NormBackwardPlan",
      {input("dy", &dynamic::NormBackwardArgs::dy), input("x", &dynamic::NormBackwardArgs::x),
       input("weight", &dynamic::NormBackwardArgs::weight), input("mean", &dynamic::NormBackwardArgs::mean),
       input("rstd", &dynamic::NormBackwardArgs::rstd), output("dx", &dynamic::NormBackwardArgs::dx),
       output("dweight", &dynamic::NormBackwardArgs::dweight), output("dbias", &dynamic::NormBackwardArgs::dbias)},
      "dx, dweight and dbias (each optional) from dy, x, weight and the forward's statistics.");
}

}  // namespace baracuda::python
