// Bindings of the quantize family: QuantizeDescriptor (op, kinds, shape, granularity, range, convention) and
// QuantizePlan, whose ops and operands come from the family's catalog (quantize_ops.def).
#include "baracuda/ops/quantize.hpp"
#include "common.hpp"
#include "quant_names.hpp"

namespace baracuda::python {

BARACUDA_PY_NAMED_BY_TO_STRING(QuantizeOp, std::size(detail::kQuantizeOps), "quantize op");

namespace {

// The catalog's operand flags, by the QuantizeArgs member they name.
struct Operand {
  const char* name;
  unsigned flag;
};
constexpr Operand kOperands[] = {
    {"x", detail::quantize_operand::X},          {"scale", detail::quantize_operand::Scale},
    {"zero_point", detail::quantize_operand::ZeroPoint}, {"dy", detail::quantize_operand::Dy},
    {"y", detail::quantize_operand::Y},          {"dx", detail::quantize_operand::Dx},
    {"dscale", detail::quantize_operand::DScale}, {"dzero_point", detail::quantize_operand::DZeroPoint},
};

std::vector<std::string> operands(unsigned flags) {
  std::vector<std::string> names;
  for (const Operand& o : kOperands)
    if ((flags & o.flag) != 0) names.emplace_back(o.name);
  return names;
}

}  // namespace

void bind_quantize(nb::module_& m) {
  nb::class_<QuantizeDescriptor> d(
      m, "QuantizeDescriptor",
      "The problem of QuantizePlan: the op (quantize_ops()), the float kind, the quantized kind (s8, u8), the "
      "float tensor's shape, the granularity (per_tensor, per_channel along axis, per_token, per_group of "
      "group_size along axis), the range (default: the quantized kind's), the learnable backward's "
      "grad_factor and whose arithmetic (pytorch, exact, vllm).");
  d.def(
      "__init__",
      [](QuantizeDescriptor* self, std::string_view op, std::string_view element, std::string_view quantized,
         const std::vector<int64_t>& shape, std::string_view granularity, int axis, int64_t group_size,
         std::optional<int32_t> quant_min, std::optional<int32_t> quant_max, double grad_factor,
         std::string_view convention) {
        QuantizeDescriptor desc;
        desc.op = parse_name<QuantizeOp>(op);
        desc.element = parse_name<ElementKind>(element);
        desc.quantized = parse_name<ElementKind>(quantized);
        desc.shape = to_shape(shape);
        desc.granularity = granularity_of(granularity, axis, group_size);
        desc.quant_min = quant_min;
        desc.quant_max = quant_max;
        desc.grad_factor = grad_factor;
        desc.convention = parse_name<QuantConvention>(convention);
        new (self) QuantizeDescriptor(desc);
      },
      nb::arg("op"), nb::arg("element"), nb::arg("quantized"), nb::arg("shape"), nb::arg("granularity") = "per_tensor",
      nb::arg("axis") = 0, nb::arg("group_size") = 0, nb::arg("quant_min") = nb::none(),
      nb::arg("quant_max") = nb::none(), nb::arg("grad_factor") = 1.0, nb::arg("convention") = "pytorch");
  enum_property(d, "op", &QuantizeDescriptor::op, "The operation.");
  enum_property(d, "element", &QuantizeDescriptor::element, "The float data's kind.");
  enum_property(d, "quantized", &QuantizeDescriptor::quantized, "The quantized storage's kind.");
  enum_property(d, "convention", &QuantizeDescriptor::convention, "Whose arithmetic.");
  shape_property(d, "shape", &QuantizeDescriptor::shape, "The float tensor's shape.");
  d.def_prop_ro("granularity", [](const QuantizeDescriptor& desc) { return desc.granularity.to_string(); })
      .def_rw("quant_min", &QuantizeDescriptor::quant_min)
      .def_rw("quant_max", &QuantizeDescriptor::quant_max)
      .def_rw("grad_factor", &QuantizeDescriptor::grad_factor);

  std::vector<ArgField<dynamic::QuantizeArgs>> fields = {
      input("x", &dynamic::QuantizeArgs::x),         input("scale", &dynamic::QuantizeArgs::scale),
      input("zero_point", &dynamic::QuantizeArgs::zero_point), input("dy", &dynamic::QuantizeArgs::dy),
      output("y", &dynamic::QuantizeArgs::y),        output("dx", &dynamic::QuantizeArgs::dx),
      output("dscale", &dynamic::QuantizeArgs::dscale), output("dzero_point", &dynamic::QuantizeArgs::dzero_point)};
  bind_plan<dynamic::QuantizePlan>(m, "QuantizePlan", std::move(fields),
                                   "One quantization op; the tensors it reads and writes are its catalog entry's "
                                   "(quantize_ops()).")
      .def_prop_ro("param_shape", [](const dynamic::QuantizePlan& p) { return from_shape(p.param_shape()); },
                   "The shape of scale and zero_point (and dscale, dzero_point).")
      .def_prop_ro("scale_kind", [](const dynamic::QuantizePlan& p) { return std::string(to_string(p.scale_kind())); })
      .def_prop_ro("quant_min", &dynamic::QuantizePlan::quant_min)
      .def_prop_ro("quant_max", &dynamic::QuantizePlan::quant_max);

  m.def(
      "quantize_ops",
      [] {
        std::vector<nb::dict> ops;
        for (const auto& op : detail::kQuantizeOps) {
          nb::dict e;
          e["name"] = std::string(op.name);
          e["reads"] = operands(op.reads);
          e["writes"] = operands(op.writes);
          e["form"] = op.form == detail::QuantizeForm::Quantizes     ? "quantizes"
                      : op.form == detail::QuantizeForm::Dequantizes ? "dequantizes"
                      : op.form == detail::QuantizeForm::Float       ? "float"
                                                                     : "learnable";
          e["doc"] = std::string(op.doc);
          ops.push_back(e);
        }
        return ops;
      },
      "The quantize family's catalog: per op its name, the tensors it reads and writes, its form (which "
      "operand is quantized, or whether the zero point is learnable) and what it computes.");
}

}  // namespace baracuda::python
