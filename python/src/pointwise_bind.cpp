// Bindings of the pointwise families with several operands or none: binary (and compare, and the backward),
// ternary (clamp, lerp, addcmul, addcdiv, fma, where, and their backward), fill, sequence and affine. The
// broadcasting plans give their output shape (`output_shape`), which the functional layer allocates.
#include "baracuda/ops/affine.hpp"
#include "baracuda/ops/binary.hpp"
#include "baracuda/ops/fill.hpp"
#include "baracuda/ops/sequence.hpp"
#include "baracuda/ops/ternary.hpp"
#include "common.hpp"

namespace baracuda::python {

BARACUDA_PY_NAMED_BY_TO_STRING(BinaryOp, kNumBinaryOps, "binary op");
BARACUDA_PY_NAMED_BY_TO_STRING(CompareOp, kNumCompareOps, "compare op");
BARACUDA_PY_NAMED_BY_TO_STRING(TernaryOp, kNumTernaryOps, "ternary op");
BARACUDA_PY_NAMED_BY_TO_STRING(SequenceOp, 2, "sequence op");

namespace {

// A descriptor of two operand shapes and an op: BinaryDescriptor, CompareDescriptor.
template <class Desc, class Op>
void bind_two_operand_descriptor(nb::module_& m, const char* name, const char* doc) {
  nb::class_<Desc> d(m, name, doc);
  d.def(
      "__init__",
      [](Desc* self, std::string_view op, std::string_view element, const std::vector<int64_t>& a_shape,
         const std::vector<int64_t>& b_shape) {
        Desc desc;
        desc.op = parse_name<Op>(op);
        desc.element = parse_name<ElementKind>(element);
        desc.a_shape = to_shape(a_shape);
        desc.b_shape = to_shape(b_shape);
        new (self) Desc(desc);
      },
      nb::arg("op"), nb::arg("element"), nb::arg("a_shape"), nb::arg("b_shape"));
  enum_property(d, "op", &Desc::op, "The op.");
  enum_property(d, "element", &Desc::element, "The operands' kind.");
  shape_property(d, "a_shape", &Desc::a_shape, "a's shape.");
  shape_property(d, "b_shape", &Desc::b_shape, "b's shape (a and b broadcast as in NumPy).");
}

template <class Plan>
void output_shape_property(nb::class_<Plan>& c) {
  c.def_prop_ro("output_shape", [](const Plan& p) { return from_shape(p.output_shape()); },
                "The broadcast shape of the output (and of dy).");
}

void bind_binary(nb::module_& m) {
  bind_two_operand_descriptor<BinaryDescriptor, BinaryOp>(m, "BinaryDescriptor",
                                                           "out = a op b with broadcasting (binary_ops()).");
  bind_two_operand_descriptor<CompareDescriptor, CompareOp>(m, "CompareDescriptor",
                                                             "out (bool) = a cmp b with broadcasting.");
  auto binary = bind_plan<dynamic::BinaryPlan>(
      m, "BinaryPlan",
      {input("a", &dynamic::BinaryArgs::a), input("b", &dynamic::BinaryArgs::b),
       output("out", &dynamic::BinaryArgs::out)},
      "out = a op b, broadcasting a and b.");
  output_shape_property(binary);
  auto compare = bind_plan<dynamic::ComparePlan>(
      m, "ComparePlan",
      {input("a", &dynamic::CompareArgs::a), input("b", &dynamic::CompareArgs::b),
       output("out", &dynamic::CompareArgs::out)},
      "out (bool) = a cmp b, broadcasting a and b.");
  output_shape_property(compare);
  auto backward = bind_plan<dynamic::BinaryBackwardPlan>(
      m, "BinaryBackwardPlan",
      {input("dy", &dynamic::BinaryBackwardArgs::dy), input("a", &dynamic::BinaryBackwardArgs::a),
       input("b", &dynamic::BinaryBackwardArgs::b), output("da", &dynamic::BinaryBackwardArgs::da),
       output("db", &dynamic::BinaryBackwardArgs::db)},
      "da and db at the output shape (not reduced to a's and b's); either may be left out.");
  output_shape_property(backward);
  m.def("binary_ops", &all_names<BinaryOp>, "The binary ops' names.");
  m.def("compare_ops", &all_names<CompareOp>, "The comparisons' names.");
}

void bind_ternary(nb::module_& m) {
  nb::class_<TernaryDescriptor> t(m, "TernaryDescriptor",
                                  "out = op(a, b, c) with broadcasting (ternary_ops()); `value` is addcmul's and "
                                  "addcdiv's.");
  t.def(
      "__init__",
      [](TernaryDescriptor* self, std::string_view op, std::string_view element, const std::vector<int64_t>& a,
         const std::vector<int64_t>& b, const std::vector<int64_t>& c, double value) {
        TernaryDescriptor d;
        d.op = parse_name<TernaryOp>(op);
        d.element = parse_name<ElementKind>(element);
        d.a_shape = to_shape(a), d.b_shape = to_shape(b), d.c_shape = to_shape(c);
        d.value = value;
        new (self) TernaryDescriptor(d);
      },
      nb::arg("op"), nb::arg("element"), nb::arg("a_shape"), nb::arg("b_shape"), nb::arg("c_shape"),
      nb::arg("value") = 1.0);
  enum_property(t, "op", &TernaryDescriptor::op, "The op.");
  t.def_rw("value", &TernaryDescriptor::value);
  auto fwd = bind_plan<dynamic::TernaryPlan>(
      m, "TernaryPlan",
      {input("a", &dynamic::TernaryArgs::a), input("b", &dynamic::TernaryArgs::b), input("c", &dynamic::TernaryArgs::c),
       output("out", &dynamic::TernaryArgs::out)},
      "out = op(a, b, c), broadcasting.");
  output_shape_property(fwd);
  auto bwd = bind_plan<dynamic::TernaryBackwardPlan>(
      m, "TernaryBackwardPlan",
      {input("dy", &dynamic::TernaryBackwardArgs::dy), input("a", &dynamic::TernaryBackwardArgs::a),
       input("b", &dynamic::TernaryBackwardArgs::b), input("c", &dynamic::TernaryBackwardArgs::c),
       output("da", &dynamic::TernaryBackwardArgs::da), output("db", &dynamic::TernaryBackwardArgs::db),
       output("dc", &dynamic::TernaryBackwardArgs::dc)},
      "da, db, dc at the output shape (not reduced); each may be left out.");
  output_shape_property(bwd);

  nb::class_<WhereDescriptor> w(m, "WhereDescriptor", "out = cond ? a : b with broadcasting.");
  w.def(
      "__init__",
      [](WhereDescriptor* self, std::string_view element, const std::vector<int64_t>& cond,
         const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
        WhereDescriptor d;
        d.element = parse_name<ElementKind>(element);
        d.cond_shape = to_shape(cond), d.a_shape = to_shape(a), d.b_shape = to_shape(b);
        new (self) WhereDescriptor(d);
      },
      nb::arg("element"), nb::arg("cond_shape"), nb::arg("a_shape"), nb::arg("b_shape"));
  auto where = bind_plan<dynamic::WherePlan>(
      m, "WherePlan",
      {input("cond", &dynamic::WhereArgs::cond), input("a", &dynamic::WhereArgs::a), input("b", &dynamic::WhereArgs::b),
       output("out", &dynamic::WhereArgs::out)},
      "out = cond ? a : b (cond bool).");
  output_shape_property(where);
  auto where_bwd = bind_plan<dynamic::WhereBackwardPlan>(
      m, "WhereBackwardPlan",
      {input("cond", &dynamic::WhereBackwardArgs::cond), input("dy", &dynamic::WhereBackwardArgs::dy),
       output("da", &dynamic::WhereBackwardArgs::da), output("db", &dynamic::WhereBackwardArgs::db)},
      "da = cond ? dy : 0, db = cond ? 0 : dy at the output shape.");
  output_shape_property(where_bwd);
  m.def("ternary_ops", &all_names<TernaryOp>, "The ternary ops' names.");
}

void bind_fill_sequence_affine(nb::module_& m) {
  nb::class_<FillDescriptor> f(m, "FillDescriptor", "out = value everywhere (a float, an int or a bool).");
  f.def(
      "__init__",
      [](FillDescriptor* self, std::string_view element, const std::vector<int64_t>& shape, nb::handle value) {
        FillDescriptor d;
        d.element = parse_name<ElementKind>(element);
        d.shape = to_shape(shape);
        if (nb::isinstance<nb::bool_>(value))
          d.value = Scalar(nb::cast<bool>(value));
        else if (nb::isinstance<nb::int_>(value))
          d.value = Scalar(nb::cast<int64_t>(value));
        else
          d.value = Scalar(nb::cast<double>(value));
        new (self) FillDescriptor(d);
      },
      nb::arg("element"), nb::arg("shape"), nb::arg("value"));
  bind_plan<dynamic::FillPlan>(m, "FillPlan", {output("out", &dynamic::FillArgs::out)}, "Fills out with the value.");

  nb::class_<SequenceDescriptor> s(m, "SequenceDescriptor",
                                   "arange(start, end, step) or linspace(start, end, steps), of one kind.");
  s.def(
      "__init__",
      [](SequenceDescriptor* self, std::string_view op, std::string_view element, double start, double end,
         double step, int64_t steps) {
        SequenceDescriptor d;
        d.op = parse_name<SequenceOp>(op);
        d.element = parse_name<ElementKind>(element);
        d.start = start, d.end = end, d.step = step, d.steps = steps;
        new (self) SequenceDescriptor(d);
      },
      nb::arg("op"), nb::arg("element"), nb::arg("start"), nb::arg("end"), nb::arg("step") = 1.0,
      nb::arg("steps") = 0);
  bind_plan<dynamic::SequencePlan>(m, "SequencePlan", {output("y", &dynamic::SequenceArgs::y)},
                                   "Writes the sequence into y ([count]).")
      .def_prop_ro("count", &dynamic::SequencePlan::count, "The number of values.");

  nb::class_<AffineDescriptor> a(m, "AffineDescriptor", "out = alpha · in + beta, elementwise.");
  a.def(
      "__init__",
      [](AffineDescriptor* self, std::string_view element, const std::vector<int64_t>& shape, double alpha,
         double beta) {
        AffineDescriptor d;
        d.element = parse_name<ElementKind>(element);
        d.shape = to_shape(shape);
        d.alpha = alpha, d.beta = beta;
        new (self) AffineDescriptor(d);
      },
      nb::arg("element"), nb::arg("shape"), nb::arg("alpha") = 1.0, nb::arg("beta") = 0.0);
  bind_plan<dynamic::AffinePlan>(m, "AffinePlan",
                                 {input("input", &dynamic::AffineArgs::in), output("out", &dynamic::AffineArgs::out)},
                                 "out = alpha · input + beta.");
}

}  // namespace

void bind_pointwise(nb::module_& m) {
  bind_binary(m);
  bind_ternary(m);
  bind_fill_sequence_affine(m);
}

}  // namespace baracuda::python
