// Bindings of the FP8 family: Fp8QuantizePlan (saturating cast with amax and scale_inv), Fp8DequantizePlan
// and Fp8ScalingUpdatePlan (TransformerEngine's delayed scaling).
#include "baracuda/ops/fp8.hpp"
#include "common.hpp"
#include "quant_names.hpp"

namespace baracuda::python {

template <>
struct EnumNames<AmaxComputeAlgo> {
  static constexpr std::size_t count = 2;
  static constexpr const char* what = "amax compute algorithm";
  static std::string_view name(AmaxComputeAlgo a) { return a == AmaxComputeAlgo::Max ? "max" : "most_recent"; }
};

void bind_fp8(nb::module_& m) {
  nb::class_<Fp8QuantizeDescriptor> q(m, "Fp8QuantizeDescriptor",
                                      "y = saturate_to_fp8(x · scale), amax = max |x| (accumulated when "
                                      "accumulate_amax), optionally scale_inv = 1 / scale.");
  q.def(
      "__init__",
      [](Fp8QuantizeDescriptor* self, std::string_view input, std::string_view output,
         const std::vector<int64_t>& shape, bool accumulate_amax, std::string_view convention) {
        Fp8QuantizeDescriptor d;
        d.input = parse_name<ElementKind>(input);
        d.output = parse_name<ElementKind>(output);
        d.shape = to_shape(shape);
        d.accumulate_amax = accumulate_amax;
        d.convention = parse_name<QuantConvention>(convention);
        new (self) Fp8QuantizeDescriptor(d);
      },
      nb::arg("input"), nb::arg("output"), nb::arg("shape"), nb::arg("accumulate_amax") = false,
      nb::arg("convention") = "pytorch");
  bind_plan<dynamic::Fp8QuantizePlan>(
      m, "Fp8QuantizePlan",
      {input("x", &dynamic::Fp8QuantizeArgs::x), input("scale", &dynamic::Fp8QuantizeArgs::scale),
       output("y", &dynamic::Fp8QuantizeArgs::y), output("amax", &dynamic::Fp8QuantizeArgs::amax),
       output("scale_inv", &dynamic::Fp8QuantizeArgs::scale_inv)},
      "FP8 quantization with the amax of the input; scale, amax and scale_inv are f32 [1].");

  nb::class_<Fp8DequantizeDescriptor> d(m, "Fp8DequantizeDescriptor", "y = x · scale_inv, x fp8.");
  d.def(
      "__init__",
      [](Fp8DequantizeDescriptor* self, std::string_view input, std::string_view output,
         const std::vector<int64_t>& shape) {
        Fp8DequantizeDescriptor desc;
        desc.input = parse_name<ElementKind>(input);
        desc.output = parse_name<ElementKind>(output);
        desc.shape = to_shape(shape);
        new (self) Fp8DequantizeDescriptor(desc);
      },
      nb::arg("input"), nb::arg("output"), nb::arg("shape"));
  bind_plan<dynamic::Fp8DequantizePlan>(
      m, "Fp8DequantizePlan",
      {input("x", &dynamic::Fp8DequantizeArgs::x), input("scale_inv", &dynamic::Fp8DequantizeArgs::scale_inv),
       output("y", &dynamic::Fp8DequantizeArgs::y)},
      "FP8 dequantization.");

  nb::class_<Fp8ScalingUpdateDescriptor> u(
      m, "Fp8ScalingUpdateDescriptor",
      "One step of delayed scaling: amax from the history (max or most_recent), scale = fp8_max · 2^-margin / "
      "amax, scale_inv, and the history rolled.");
  u.def(
      "__init__",
      [](Fp8ScalingUpdateDescriptor* self, std::string_view fp8_kind, int64_t history_length,
         std::string_view amax_compute_algo, int margin) {
        Fp8ScalingUpdateDescriptor desc;
        desc.fp8_kind = parse_name<ElementKind>(fp8_kind);
        desc.history_length = history_length;
        desc.amax_compute_algo = parse_name<AmaxComputeAlgo>(amax_compute_algo);
        desc.margin = margin;
        new (self) Fp8ScalingUpdateDescriptor(desc);
      },
      nb::arg("fp8_kind"), nb::arg("history_length"), nb::arg("amax_compute_algo") = "max", nb::arg("margin") = 0);
  bind_plan<dynamic::Fp8ScalingUpdatePlan>(
      m, "Fp8ScalingUpdatePlan",
      {output("amax_history", &dynamic::Fp8ScalingUpdateArgs::amax_history),
       output("scale", &dynamic::Fp8ScalingUpdateArgs::scale),
       output("scale_inv", &dynamic::Fp8ScalingUpdateArgs::scale_inv)},
      "Updates amax_history [H], scale [1] and scale_inv [1] in place (all f32).");
}

}  // namespace baracuda::python
