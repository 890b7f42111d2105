// Bindings of the channel_norm family: GroupNormDescriptor / BatchNormDescriptor, their forward plans (with the
// statistics' shape and kind) and backward plans.
#include "baracuda/ops/channel_norm.hpp"
#include "common.hpp"

namespace baracuda::python {

namespace {

/// The statistics' shape and kind of a plan (GroupNorm: [N, G]; BatchNorm: [C]).
template <class Plan, class C>
void stats_properties(C& c) {
  c.def_prop_ro("stats_shape", [](const Plan& p) { return from_shape(p.stats_shape()); })
      .def_prop_ro("stats_kind", [](const Plan& p) { return std::string(to_string(p.stats_kind())); });
}

}  // namespace

void bind_channel_norm(nb::module_& m) {
  nb::class_<GroupNormDescriptor> g(m, "GroupNormDescriptor",
                                    "GroupNorm of x [N, C, *] over groups of C / groups channels (InstanceNorm: "
                                    "groups = C), with an optional per-channel weight and bias.");
  g.def(
      "__init__",
      [](GroupNormDescriptor* self, std::string_view element, const std::vector<int64_t>& shape, int64_t groups,
         double eps, bool weight, bool bias) {
        new (self) GroupNormDescriptor(GroupNormDescriptor{}
                                           .with_element(parse_name<ElementKind>(element))
                                           .with_shape(to_shape(shape))
                                           .with_groups(groups)
                                           .with_eps(eps)
                                           .with_weight(weight)
                                           .with_bias(bias));
      },
      nb::arg("element"), nb::arg("shape"), nb::arg("groups"), nb::arg("eps") = 1e-5, nb::arg("weight") = true,
      nb::arg("bias") = true);
  enum_property(g, "element", &GroupNormDescriptor::element, "The tensors' kind.");
  shape_property(g, "shape", &GroupNormDescriptor::shape, "x's shape [N, C, *].");
  g.def_rw("groups", &GroupNormDescriptor::groups)
      .def_rw("eps", &GroupNormDescriptor::eps)
      .def_rw("weight", &GroupNormDescriptor::has_weight)
      .def_rw("bias", &GroupNormDescriptor::has_bias);

  nb::class_<BatchNormDescriptor> b(m, "BatchNormDescriptor",
                                    "BatchNorm of x [N, C, *] per channel: training (batch statistics, the running "
                                    "statistics updated with momentum) or inference (the running statistics).");
  b.def(
      "__init__",
      [](BatchNormDescriptor* self, std::string_view element, const std::vector<int64_t>& shape, double eps,
         double momentum, bool training, bool running_stats, bool weight, bool bias) {
        new (self) BatchNormDescriptor(BatchNormDescriptor{}
                                           .with_element(parse_name<ElementKind>(element))
                                           .with_shape(to_shape(shape))
                                           .with_eps(eps)
                                           .with_momentum(momentum)
                                           .with_training(training)
                                           .with_running_stats(running_stats)
                                           .with_weight(weight)
                                           .with_bias(bias));
      },
      nb::arg("element"), nb::arg("shape"), nb::arg("eps") = 1e-5, nb::arg("momentum") = 0.1,
      nb::arg("training") = true, nb::arg("running_stats") = true, nb::arg("weight") = true, nb::arg("bias") = true);
  enum_property(b, "element", &BatchNormDescriptor::element, "The tensors' kind.");
  shape_property(b, "shape", &BatchNormDescriptor::shape, "x's shape [N, C, *].");
  b.def_rw("eps", &BatchNormDescriptor::eps)
      .def_rw("momentum", &BatchNormDescriptor::momentum)
      .def_rw("training", &BatchNormDescriptor::training)
      .def_rw("running_stats", &BatchNormDescriptor::has_running_stats)
      .def_rw("weight", &BatchNormDescriptor::has_weight)
      .def_rw("bias", &BatchNormDescriptor::has_bias);

  using GA = dynamic::GroupNormArgs;
  auto gp = bind_plan<dynamic::GroupNormPlan>(
      m, "GroupNormPlan",
      {input("x", &GA::x), input("weight", &GA::weight), input("bias", &GA::bias), output("y", &GA::y),
       output("mean", &GA::mean), output("rstd", &GA::rstd)},
      "y = GroupNorm(x) · weight + bias; mean and rstd [N, G] optional outputs.");
  stats_properties<dynamic::GroupNormPlan>(gp);
  using GB = dynamic::GroupNormBackwardArgs;
  auto gb = bind_plan<dynamic::GroupNormBackwardPlan>(
      m, "GroupNormBackwardPlan",
      {input("dy", &GB::dy), input("x", &GB::x), input("weight", &GB::weight), input("mean", &GB::mean),
       input("rstd", &GB::rstd), output("dx", &GB::dx), output("dweight", &GB::dweight), output("dbias", &GB::dbias)},
      "dx, dweight and dbias (each optional) from dy, x, weight and the forward's statistics.");
  stats_properties<dynamic::GroupNormBackwardPlan>(gb);
  using BA = dynamic::BatchNormArgs;
  auto bp = bind_plan<dynamic::BatchNormPlan>(
      m, "BatchNormPlan",
      {input("x", &BA::x), input("weight", &BA::weight), input("bias", &BA::bias), output("y", &BA::y),
       output("mean", &BA::mean), output("rstd", &BA::rstd), output("running_mean", &BA::running_mean),
       output("running_var", &BA::running_var)},
      "y = BatchNorm(x) · weight + bias; training also writes mean and rstd [C] (optional) and updates the "
      "running statistics in place; inference reads them.");
  stats_properties<dynamic::BatchNormPlan>(bp);
  using BB = dynamic::BatchNormBackwardArgs;
  auto bb = bind_plan<dynamic::BatchNormBackwardPlan>(
      m, "BatchNormBackwardPlan",
      {input("dy", &BB::dy), input("x", &BB::x), input("weight", &BB::weight), input("mean", &BB::mean),
       input("rstd", &BB::rstd), input("running_mean", &BB::running_mean), input("running_var", &BB::running_var),
       output("dx", &BB::dx), output("dweight", &BB::dweight), output("dbias", &BB::dbias)},
      "dx, dweight and dbias (each optional) from dy, x, weight and the forward's statistics (training) or the "
      "running statistics (inference).");
  stats_properties<dynamic::BatchNormBackwardPlan>(bb);
}

}  // namespace baracuda::python
