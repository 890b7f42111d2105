// Bindings of the reduce family: ReduceDescriptor (dims as a list of dimensions, negative counting from the
// last; None or empty for all of them, as PyTorch's dim=None and dim=[]), ReducePlan with the output's shape and kind,
// and reduce_ops(), the names.
#include "baracuda/ops/reduce.hpp"
#include "common.hpp"

namespace baracuda::python {

BARACUDA_PY_NAMED_BY_TO_STRING(ReduceOp, kNumReduceOps, "reduce op");

void bind_reduce(nb::module_& m) {
  nb::class_<ReduceDescriptor> d(
      m, "ReduceDescriptor",
      "x of `shape` reduced over `dims` (None or []: every dimension) with `op` (reduce_ops()).");
  d.def(
      "__init__",
      [](ReduceDescriptor* self, std::string_view op, std::string_view element, const std::vector<int64_t>& shape,
         std::optional<std::vector<int64_t>> dims, bool keepdim, double correction, double p) {
        ReduceDescriptor desc;
        desc.op = parse_name<ReduceOp>(op);
        desc.element = parse_name<ElementKind>(element);
        desc.shape = to_shape(shape);
        for (int64_t dim : dims.value_or(std::vector<int64_t>{})) {
          const int64_t r = desc.shape.rank;
          if (dim < -r || dim >= r)
            throw nb::value_error(
                ("dimension " + std::to_string(dim) + " is out of range for rank " + std::to_string(r)).c_str());
          const int64_t bit = dim < 0 ? dim + r : dim;
          if ((desc.dims >> bit) & 1u)
            throw nb::value_error(("dimension " + std::to_string(dim) + " appears twice").c_str());
          desc.dims |= 1u << bit;
        }
        desc.keepdim = keepdim;
        desc.correction = correction;
        desc.p = p;
        new (self) ReduceDescriptor(desc);
      },
      nb::arg("op"), nb::arg("element"), nb::arg("shape"), nb::arg("dims") = nb::none(), nb::arg("keepdim") = false,
      nb::arg("correction") = 1.0, nb::arg("p") = 2.0);
  enum_property(d, "op", &ReduceDescriptor::op, "The reduction.");
  enum_property(d, "element", &ReduceDescriptor::element, "x's kind.");
  shape_property(d, "shape", &ReduceDescriptor::shape, "x's shape.");
  d.def_rw("dims", &ReduceDescriptor::dims, "The reduced dimensions as a mask (bit d: dimension d; 0: all).")
      .def_rw("keepdim", &ReduceDescriptor::keepdim)
      .def_rw("correction", &ReduceDescriptor::correction)
      .def_rw("p", &ReduceDescriptor::p);
  bind_plan<dynamic::ReducePlan>(m, "ReducePlan",
                                 {input("x", &dynamic::ReduceArgs::x), output("y", &dynamic::ReduceArgs::y)},
                                 "y = op(x) over the descriptor's dimensions, with PyTorch's result kinds.")
      .def_prop_ro(
          "output_shape", [](const dynamic::ReducePlan& p) { return from_shape(p.output_shape()); }, "y's shape.")
      .def_prop_ro(
          "output_kind", [](const dynamic::ReducePlan& p) { return std::string(to_string(p.output_kind())); },
          "y's kind (PyTorch's: s64 for integer sums and indices, bool for any/all).");
  m.def(
      "reduce_ops",
      [] {
        std::vector<std::string> names;
        for (int i = 0; i < kNumReduceOps; ++i) names.emplace_back(to_string(static_cast<ReduceOp>(i)));
        return names;
      },
      "The names of the reduce ops.");
}

}  // namespace baracuda::python
