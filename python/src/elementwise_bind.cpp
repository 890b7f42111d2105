// Bindings of the elementwise families whose catalogs the functional API reads: unary (forward and
// backward), gated activations (forward and backward) and cast.
#include <nanobind/stl/map.h>

#include <map>

#include "baracuda/ops/cast.hpp"
#include "baracuda/ops/gated_activation.hpp"
#include "baracuda/ops/unary.hpp"
#include "common.hpp"

namespace baracuda::python {

BARACUDA_PY_NAMED_BY_TO_STRING(UnaryKind, kNumUnaryKinds, "unary op");
BARACUDA_PY_NAMED_BY_TO_STRING(UnaryParam, kNumUnaryParams, "unary parameter");
BARACUDA_PY_NAMED_BY_TO_STRING(GatedActivationKind, kNumGatedActivationKinds, "gated activation");
BARACUDA_PY_NAMED_BY_TO_STRING(GateLayout, 3, "gate layout");

namespace {

void bind_unary(nb::module_& m) {
  nb::class_<UnaryDescriptor> d(m, "UnaryDescriptor",
                                "The problem of UnaryPlan and UnaryBackwardPlan: op, element kind, shape and the "
                                "op's parameters (PyTorch's names; see unary_ops()).");
  d.def(
      "__init__",
      [](UnaryDescriptor* self, std::string_view kind, std::string_view element, const std::vector<int64_t>& shape,
         const std::map<std::string, double>& params) {
        UnaryDescriptor desc;
        desc.kind = parse_name<UnaryKind>(kind);
        desc.element = parse_name<ElementKind>(element);
        desc.shape = to_shape(shape);
        for (const auto& [name, value] : params) desc.with_parameter(parse_name<UnaryParam>(name), value);
        new (self) UnaryDescriptor(desc);
      },
      nb::arg("kind"), nb::arg("element"), nb::arg("shape"), nb::arg("params") = std::map<std::string, double>());
  enum_property(d, "kind", &UnaryDescriptor::kind, "The op.");
  enum_property(d, "element", &UnaryDescriptor::element, "The element kind of every tensor.");
  shape_property(d, "shape", &UnaryDescriptor::shape, "The shape of every tensor.");
  d.def_prop_ro(
      "params",
      [](const UnaryDescriptor& desc) {
        std::map<std::string, double> out;
        for (std::size_t i = 0; i < kNumUnaryParams; ++i)
          if (desc.params[i]) out[std::string(to_string(static_cast<UnaryParam>(i)))] = *desc.params[i];
        return out;
      },
      "The parameters set (the others take the op's defaults).");

  bind_plan<dynamic::UnaryPlan>(m, "UnaryPlan",
                                {input("input", &dynamic::UnaryArgs::in), output("out", &dynamic::UnaryArgs::out)},
                                "out = f(input), elementwise; `input` may broadcast (stride 0); `out` may be `input`.");
  bind_plan<dynamic::UnaryBackwardPlan>(
      m, "UnaryBackwardPlan",
      {input("dy", &dynamic::UnaryBackwardArgs::dy), input("saved", &dynamic::UnaryBackwardArgs::saved),
       output("dx", &dynamic::UnaryBackwardArgs::dx)},
      "dx = dy · f'(x); `saved` is x or y = f(x) as saved_operand says (omitted when it is 'none').")
      .def_prop_ro("saved_operand",
                   [](const dynamic::UnaryBackwardPlan& p) { return std::string(to_string(p.saved_operand())); });

  m.def(
      "unary_ops",
      [] {
        std::vector<nb::dict> ops;
        for (const UnaryOpInfo& op : kUnaryOps) {
          nb::dict e;
          e["name"] = std::string(op.name);
          e["params"] = std::string(op.params);
          e["saved"] = std::string(to_string(op.saved));
          e["doc"] = std::string(op.doc);
          ops.push_back(e);
        }
        return ops;
      },
      "The unary family's catalog: one dict per op (name, params as unary_ops.def spells them, saved, doc).");
}

void bind_gated(nb::module_& m) {
  nb::class_<GatedActivationDescriptor> d(
      m, "GatedActivationDescriptor",
      "The problem of GatedActivationPlan and its backward: kind, input shape, the dim split into gate and "
      "linear halves, element kind, layout of the halves, and swiglu_clamped's alpha and limit.");
  d.def(
      "__init__",
      [](GatedActivationDescriptor* self, std::string_view kind, const std::vector<int64_t>& input_shape,
         std::string_view element, int split_dim, std::string_view layout, double alpha, double limit) {
        GatedActivationDescriptor desc;
        desc.kind = parse_name<GatedActivationKind>(kind);
        desc.input_shape = to_shape(input_shape);
        desc.element = parse_name<ElementKind>(element);
        desc.split_dim = split_dim;
        desc.layout = parse_name<GateLayout>(layout);
        desc.alpha = alpha;
        desc.limit = limit;
        new (self) GatedActivationDescriptor(desc);
      },
      nb::arg("kind"), nb::arg("input_shape"), nb::arg("element"), nb::arg("split_dim") = -1,
      nb::arg("layout") = "second_half", nb::arg("alpha") = 1.702, nb::arg("limit") = 7.0);
  enum_property(d, "kind", &GatedActivationDescriptor::kind, "The activation.");
  shape_property(d, "input_shape", &GatedActivationDescriptor::input_shape, "x's (and dx's) shape.");
  enum_property(d, "element", &GatedActivationDescriptor::element, "The element kind of every tensor.");
  enum_property(d, "layout", &GatedActivationDescriptor::layout, "Where the gate and the linear halves are.");
  d.def_rw("split_dim", &GatedActivationDescriptor::split_dim)
      .def_rw("alpha", &GatedActivationDescriptor::alpha)
      .def_rw("limit", &GatedActivationDescriptor::limit)
      .def_prop_ro(
          "output_shape", [](const GatedActivationDescriptor& desc) { return from_shape(desc.output_shape()); },
          "y's (and dy's) shape: input_shape with split_dim halved.");

  bind_plan<dynamic::GatedActivationPlan>(
      m, "GatedActivationPlan",
      {input("x", &dynamic::GatedActivationArgs::x), output("y", &dynamic::GatedActivationArgs::y)},
      "y = act(gate) · linear, the halves of x along split_dim.");
  bind_plan<dynamic::GatedActivationBackwardPlan>(
      m, "GatedActivationBackwardPlan",
      {input("dy", &dynamic::GatedActivationBackwardArgs::dy), input("x", &dynamic::GatedActivationBackwardArgs::x),
       output("dx", &dynamic::GatedActivationBackwardArgs::dx)},
      "dx (both halves) from dy and the forward's x.");
  m.def("gated_activation_kinds", &all_names<GatedActivationKind>, "The gated activations' names.");
}

void bind_cast(nb::module_& m) {
  nb::class_<CastDescriptor> d(m, "CastDescriptor",
                               "The problem of CastPlan: input and output element kinds, the shape, and whether "
                               "fp8 outputs saturate (else out-of-range values become NaN, or inf for e5m2).");
  d.def(
      "__init__",
      [](CastDescriptor* self, std::string_view in, std::string_view out, const std::vector<int64_t>& shape,
         bool saturate_fp8) {
        CastDescriptor desc;
        desc.input = parse_name<ElementKind>(in);
        desc.output = parse_name<ElementKind>(out);
        desc.shape = to_shape(shape);
        desc.saturate_fp8 = saturate_fp8;
        new (self) CastDescriptor(desc);
      },
      nb::arg("input"), nb::arg("output"), nb::arg("shape"), nb::arg("saturate_fp8") = false);
  enum_property(d, "input", &CastDescriptor::input, "The input's element kind.");
  enum_property(d, "output", &CastDescriptor::output, "The output's element kind.");
  shape_property(d, "shape", &CastDescriptor::shape, "The shape of both tensors.");
  d.def_rw("saturate_fp8", &CastDescriptor::saturate_fp8);
  bind_plan<dynamic::CastPlan>(m, "CastPlan",
                               {input("input", &dynamic::CastArgs::in), output("out", &dynamic::CastArgs::out)},
                               "out = input converted to the output kind (round to nearest even).");
}

}  // namespace

void bind_elementwise(nb::module_& m) {
  bind_unary(m);
  bind_gated(m);
  bind_cast(m);
}

}  // namespace baracuda::python
