// Bindings of the norm family: NormDescriptor (rms_norm or layer_norm over the last dimension, the fused residual
// add and quantized output), NormPlan with the statistics' shape and kind and q's kind, and NormBackwardPlan.
#include "baracuda/ops/norm.hpp"
#include "common.hpp"
#include "quant_names.hpp"

namespace baracuda::python {

BARACUDA_PY_NAMED_BY_TO_STRING(NormOp, 2, "norm op");
BARACUDA_PY_NAMED_BY_TO_STRING(NormQuant, 4, "norm quantized output");

void bind_norm(nb::module_& m) {
  nb::class_<NormDescriptor> d(m, "NormDescriptor",
                               "rms_norm or layer_norm of x (or of h = x + residual, with `residual`) over its last "
                               "dimension, with an optional fused quantized output `quant` (none, static, dynamic, "
                               "fp8; `dynamic_mode` for dynamic, the quantize plan's `convention`).");
  d.def(
      "__init__",
      [](NormDescriptor* self, std::string_view op, std::string_view element, const std::vector<int64_t>& shape,
         double eps, bool weight, bool bias, bool residual, std::string_view quant, std::string_view dynamic_mode,
         std::string_view convention) {
        NormDescriptor desc;
        desc.op = parse_name<NormOp>(op);
        desc.element = parse_name<ElementKind>(element);
        desc.shape = to_shape(shape);
        desc.eps = eps;
        desc.has_weight = weight;
        desc.has_bias = bias;
        desc.has_residual = residual;
        desc.quant = parse_name<NormQuant>(quant);
        desc.dynamic_mode = parse_name<DynamicRangeMode>(dynamic_mode);
        desc.convention = parse_name<QuantConvention>(convention);
        new (self) NormDescriptor(desc);
      },
      nb::arg("op"), nb::arg("element"), nb::arg("shape"), nb::arg("eps") = 1e-6, nb::arg("weight") = true,
      nb::arg("bias") = false, nb::arg("residual") = false, nb::arg("quant") = "none",
      nb::arg("dynamic_mode") = "symmetric", nb::arg("convention") = "pytorch");
  enum_property(d, "op", &NormDescriptor::op, "rms_norm or layer_norm.");
  enum_property(d, "element", &NormDescriptor::element, "The tensors' kind.");
  shape_property(d, "shape", &NormDescriptor::shape, "x's shape.");
  enum_property(d, "quant", &NormDescriptor::quant, "The fused quantized output: none, static, dynamic or fp8.");
  enum_property(d, "dynamic_mode", &NormDescriptor::dynamic_mode, "dynamic: how a row's range becomes its scale.");
  enum_property(d, "convention", &NormDescriptor::convention, "The quantize plan's arithmetic.");
  d.def_rw("eps", &NormDescriptor::eps)
      .def_rw("weight", &NormDescriptor::has_weight)
      .def_rw("bias", &NormDescriptor::has_bias)
      .def_rw("residual", &NormDescriptor::has_residual);
  using A = dynamic::NormArgs;
  bind_plan<dynamic::NormPlan>(
      m, "NormPlan",
      {input("x", &A::x), input("weight", &A::weight), input("bias", &A::bias), output("y", &A::y),
       output("mean", &A::mean), output("rstd", &A::rstd), input("residual", &A::residual), output("h", &A::h),
       output("q", &A::q), input("scale", &A::scale), input("zero_point", &A::zero_point),
       output("q_scale", &A::q_scale), output("q_zero_point", &A::q_zero_point), output("amax", &A::amax)},
      "y = norm(x) · weight + bias over the last dimension; mean and rstd optional outputs. With a residual, "
      "h = x + residual is written and normalized; with a quantized output, q (and q_scale, q_zero_point for "
      "dynamic, amax for fp8) is written from scale (and zero_point) for static and fp8, y then optional.")
      .def_prop_ro("stats_shape", [](const dynamic::NormPlan& p) { return from_shape(p.stats_shape()); })
      .def_prop_ro("stats_kind", [](const dynamic::NormPlan& p) { return std::string(to_string(p.stats_kind())); })
      .def_prop_ro(
          "quant_kind",
          [](const dynamic::NormPlan& p) -> std::optional<std::string> {
            const auto k = p.quant_kind();
            return k ? std::optional<std::string>(std::string(to_string(*k))) : std::nullopt;
          },
          "q's kind: s8 (static, dynamic), fp8e4m3 (fp8), or None without a quantized output.");
  bind_plan<dynamic::NormBackwardPlan>(
      m, "NormBackwardPlan",
      {input("dy", &dynamic::NormBackwardArgs::dy), input("x", &dynamic::NormBackwardArgs::x),
       input("weight", &dynamic::NormBackwardArgs::weight), input("mean", &dynamic::NormBackwardArgs::mean),
       input("rstd", &dynamic::NormBackwardArgs::rstd), output("dx", &dynamic::NormBackwardArgs::dx),
       output("dweight", &dynamic::NormBackwardArgs::dweight), output("dbias", &dynamic::NormBackwardArgs::dbias)},
      "dx, dweight and dbias (each optional) from dy, x, weight and the forward's statistics.");
}

}  // namespace baracuda::python
