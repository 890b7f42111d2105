// Bindings of the softmax family: SoftmaxDescriptor (op, kind, shape, dim, temperature, mask shape or None),
// SoftmaxPlan and SoftmaxBackwardPlan.
#include "baracuda/ops/softmax.hpp"
#include "common.hpp"

namespace baracuda::python {

BARACUDA_PY_NAMED_BY_TO_STRING(SoftmaxOp, 2, "softmax op");

void bind_softmax(nb::module_& m) {
  nb::class_<SoftmaxDescriptor> d(m, "SoftmaxDescriptor",
                                  "softmax or log_softmax of x / temperature + mask along `dim`.");
  d.def(
      "__init__",
      [](SoftmaxDescriptor* self, std::string_view op, std::string_view element, const std::vector<int64_t>& shape,
         int dim, double temperature, std::optional<std::vector<int64_t>> mask_shape) {
        SoftmaxDescriptor desc;
        desc.op = parse_name<SoftmaxOp>(op);
        desc.element = parse_name<ElementKind>(element);
        desc.shape = to_shape(shape);
        desc.dim = dim;
        desc.temperature = temperature;
        if (mask_shape) desc.with_mask(to_shape(*mask_shape));
        new (self) SoftmaxDescriptor(desc);
      },
      nb::arg("op"), nb::arg("element"), nb::arg("shape"), nb::arg("dim") = -1, nb::arg("temperature") = 1.0,
      nb::arg("mask_shape") = nb::none());
  enum_property(d, "op", &SoftmaxDescriptor::op, "softmax or log_softmax.");
  enum_property(d, "element", &SoftmaxDescriptor::element, "The tensors' kind.");
  shape_property(d, "shape", &SoftmaxDescriptor::shape, "x's shape.");
  d.def_rw("dim", &SoftmaxDescriptor::dim).def_rw("temperature", &SoftmaxDescriptor::temperature);
  bind_plan<dynamic::SoftmaxPlan>(m, "SoftmaxPlan",
                                  {input("x", &dynamic::SoftmaxArgs::x), input("mask", &dynamic::SoftmaxArgs::mask),
                                   output("y", &dynamic::SoftmaxArgs::y)},
                                  "y = softmax(x / T + mask) (or its log) along dim; the mask only when described.");
  bind_plan<dynamic::SoftmaxBackwardPlan>(
      m, "SoftmaxBackwardPlan",
      {input("dy", &dynamic::SoftmaxBackwardArgs::dy), input("y", &dynamic::SoftmaxBackwardArgs::y),
       output("dx", &dynamic::SoftmaxBackwardArgs::dx)},
      "dx of softmax (y ⊙ (dy − Σ dy⊙y) / T) or log_softmax ((dy − exp(y) Σ dy) / T) along dim.");
}

}  // namespace baracuda::python
