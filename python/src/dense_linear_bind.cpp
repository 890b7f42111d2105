// Bindings of the dense linear layer (LinearPlan, LinearBackwardPlan: nn.Linear composed from GemmPlans).
#include <string_view>

#include "baracuda/ops/linear.hpp"
#include "common.hpp"

namespace baracuda::python {

BARACUDA_PY_NAMED_BY_TO_STRING(LinearActivation, kNumLinearActivations, "linear activation");
BARACUDA_PY_NAMED_BY_TO_STRING(MatrixLayout, 2, "matrix layout");

void bind_dense_linear(nb::module_& m) {
  nb::class_<LinearDescriptor> g(m, "LinearDescriptor",
                                 "nn.Linear's y = act(x·Wᵀ + b) and its backward dx = dy·W, dW = dyᵀ·x, db = Σ dy "
                                 "(linear.hpp's rules): rows M (x's leading dims' product), in_features K, "
                                 "out_features N.");
  g.def(
      "__init__",
      [](LinearDescriptor* self, int64_t rows, int64_t in_features, int64_t out_features, std::string_view input,
         std::string_view output, std::string_view layout_x, int64_t ld_x, std::string_view layout_w, int64_t ld_w,
         bool has_bias, std::string_view activation, bool has_preactivation, int64_t ld_y, int64_t ld_preactivation,
         std::string_view layout_dy, int64_t ld_dy, int64_t ld_dx, int64_t ld_dw, bool grad_input, bool grad_weight,
         bool grad_bias, bool allow_tf32) {
        LinearDescriptor d;
        d.with_shape(rows, in_features, out_features)
            .with_kinds(parse_name<ElementKind>(input), parse_name<ElementKind>(output))
            .with_x(parse_name<MatrixLayout>(layout_x), ld_x)
            .with_w(parse_name<MatrixLayout>(layout_w), ld_w)
            .with_bias(has_bias)
            .with_activation(parse_name<LinearActivation>(activation))
            .with_preactivation(has_preactivation)
            .with_ld_y(ld_y)
            .with_ld_preactivation(ld_preactivation)
            .with_dy(parse_name<MatrixLayout>(layout_dy), ld_dy)
            .with_ld_dx(ld_dx)
            .with_ld_dw(ld_dw)
            .with_gradients(grad_input, grad_weight, grad_bias)
            .with_tf32(allow_tf32);
        new (self) LinearDescriptor(d);
      },
      nb::arg("rows"), nb::arg("in_features"), nb::arg("out_features"), nb::arg("input") = "f16",
      nb::arg("output") = "f16", nb::arg("layout_x") = "row_major", nb::arg("ld_x") = 0,
      nb::arg("layout_w") = "row_major", nb::arg("ld_w") = 0, nb::arg("has_bias") = false,
      nb::arg("activation") = "none", nb::arg("has_preactivation") = false, nb::arg("ld_y") = 0,
      nb::arg("ld_preactivation") = 0, nb::arg("layout_dy") = "row_major", nb::arg("ld_dy") = 0, nb::arg("ld_dx") = 0,
      nb::arg("ld_dw") = 0, nb::arg("grad_input") = true, nb::arg("grad_weight") = true, nb::arg("grad_bias") = false,
      nb::arg("allow_tf32") = false);
  g.def_rw("rows", &LinearDescriptor::rows)
      .def_rw("in_features", &LinearDescriptor::in_features)
      .def_rw("out_features", &LinearDescriptor::out_features);
  g.def_rw("has_bias", &LinearDescriptor::has_bias).def_rw("has_preactivation", &LinearDescriptor::has_preactivation);
  g.def_rw("grad_input", &LinearDescriptor::grad_input)
      .def_rw("grad_weight", &LinearDescriptor::grad_weight)
      .def_rw("grad_bias", &LinearDescriptor::grad_bias);
  g.def_rw("allow_tf32", &LinearDescriptor::allow_tf32);
  enum_property(g, "input", &LinearDescriptor::input, "x's, W's and dy's kind.");
  enum_property(g, "output", &LinearDescriptor::output, "b's, y's and the gradients' kind.");
  enum_property(g, "activation", &LinearDescriptor::activation, "The forward's activation.");
  using A = dynamic::LinearArgs;
  bind_plan<dynamic::LinearPlan>(m, "LinearPlan",
                                 {input("x", &A::x), input("w", &A::w), input("bias", &A::bias), output("y", &A::y),
                                  output("preactivation", &A::preactivation)},
                                 "nn.Linear's forward, one GemmPlan; the views' strides must be the descriptor's.");
  using B = dynamic::LinearBackwardArgs;
  bind_plan<dynamic::LinearBackwardPlan>(
      m, "LinearBackwardPlan",
      {input("dy", &B::dy), input("x", &B::x), input("w", &B::w), input("preactivation", &B::preactivation),
       output("dx", &B::dx), output("dw", &B::dw), output("db", &B::db)},
      "nn.Linear's backward (dx, dW, db as the descriptor asks), up to two "
      "GemmPlans.");
}

}  // namespace baracuda::python
