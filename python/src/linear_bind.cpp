// Bindings of the int8 GEMM family (IntGemmPlan, QuantizedLinearPlan, SmoothQuantLinearPlan) and of the
// dynamic-range quantization that feeds it (DynamicRangeQuantizePlan).
#include <array>

#include "baracuda/ops/dynamic_range_quantize.hpp"
#include "baracuda/ops/int_gemm.hpp"
#include "common.hpp"
#include "quant_names.hpp"

namespace baracuda::python {

BARACUDA_PY_NAMED_BY_TO_STRING(LinearActivation, kNumLinearActivations, "linear activation");
template <>
struct EnumNames<WeightScaleGranularity> {
  static constexpr std::size_t count = 2;
  static constexpr const char* what = "weight scale granularity";
  static std::string_view name(WeightScaleGranularity g) {
    return g == WeightScaleGranularity::PerChannel ? "per_channel" : "per_tensor";
  }
};

namespace {

void bind_int_gemm(nb::module_& m) {
  nb::class_<IntGemmDescriptor> g(m, "IntGemmDescriptor", "C[M, N] (s32) = A[M, K] · B[N, K]ᵀ, A and B s8 or u8.");
  g.def(
      "__init__",
      [](IntGemmDescriptor* self, int64_t mm, int64_t n, int64_t k, std::string_view a, std::string_view b,
         int64_t lda, int64_t ldb, int64_t ldc) {
        IntGemmDescriptor d;
        d.with_shape(mm, n, k)
            .with_kinds(parse_name<ElementKind>(a), parse_name<ElementKind>(b))
            .with_leading_dims(lda, ldb, ldc);
        new (self) IntGemmDescriptor(d);
      },
      nb::arg("m"), nb::arg("n"), nb::arg("k"), nb::arg("a") = "s8", nb::arg("b") = "s8", nb::arg("lda") = 0,
      nb::arg("ldb") = 0, nb::arg("ldc") = 0);
  g.def_rw("m", &IntGemmDescriptor::m).def_rw("n", &IntGemmDescriptor::n).def_rw("k", &IntGemmDescriptor::k);
  g.def_rw("lda", &IntGemmDescriptor::lda, "A's row stride in elements (0: packed, K).")
      .def_rw("ldb", &IntGemmDescriptor::ldb, "B's row stride in elements (0: packed, K).")
      .def_rw("ldc", &IntGemmDescriptor::ldc, "C's row stride in elements (0: packed, N).");
  enum_property(g, "a", &IntGemmDescriptor::a, "A's kind.");
  enum_property(g, "b", &IntGemmDescriptor::b, "B's kind.");
  bind_plan<dynamic::IntGemmPlan>(
      m, "IntGemmPlan",
      {input("a", &dynamic::IntGemmArgs::a), input("b", &dynamic::IntGemmArgs::b),
       output("c", &dynamic::IntGemmArgs::c)},
      "The int8 GEMM with s32 accumulation; A and B K-contiguous with 16-byte aligned rows.");

  nb::class_<QuantizedLinearDescriptor> q(
      m, "QuantizedLinearDescriptor",
      "W8A8 linear with x quantized per token inside the plan: "
      "y = act(s_a · s_w · (x_q · wᵀ − zp_a · Σw) + bias).");
  q.def(
      "__init__",
      [](QuantizedLinearDescriptor* self, int64_t mm, int64_t n, int64_t k, std::string_view element,
         std::string_view output, std::string_view x_quantized, std::string_view mode,
         std::string_view weight_scale_granularity, bool has_bias, std::string_view activation,
         std::string_view convention) {
        QuantizedLinearDescriptor d;
        d.with_shape(mm, n, k)
            .with_element(parse_name<ElementKind>(element))
            .with_output(parse_name<ElementKind>(output))
            .with_x_quantized(parse_name<ElementKind>(x_quantized))
            .with_mode(parse_name<DynamicRangeMode>(mode))
            .with_weight_scale_granularity(parse_name<WeightScaleGranularity>(weight_scale_granularity))
            .with_bias(has_bias)
            .with_activation(parse_name<LinearActivation>(activation))
            .with_convention(parse_name<QuantConvention>(convention));
        new (self) QuantizedLinearDescriptor(d);
      },
      nb::arg("m"), nb::arg("n"), nb::arg("k"), nb::arg("element") = "f16", nb::arg("output") = "f16",
      nb::arg("x_quantized") = "s8", nb::arg("mode") = "symmetric", nb::arg("weight_scale_granularity") = "per_channel",
      nb::arg("has_bias") = false, nb::arg("activation") = "none", nb::arg("convention") = "pytorch");
  q.def_rw("m", &QuantizedLinearDescriptor::m).def_rw("n", &QuantizedLinearDescriptor::n)
      .def_rw("k", &QuantizedLinearDescriptor::k).def_rw("has_bias", &QuantizedLinearDescriptor::has_bias);
  enum_property(q, "element", &QuantizedLinearDescriptor::element, "x's kind.");
  enum_property(q, "output", &QuantizedLinearDescriptor::output, "y's (and bias's) kind.");
  enum_property(q, "activation", &QuantizedLinearDescriptor::activation, "The epilogue's function.");
  bind_plan<dynamic::QuantizedLinearPlan>(
      m, "QuantizedLinearPlan",
      {input("x", &dynamic::QuantizedLinearArgs::x), input("weight", &dynamic::QuantizedLinearArgs::weight),
       input("weight_scale", &dynamic::QuantizedLinearArgs::weight_scale),
       input("bias", &dynamic::QuantizedLinearArgs::bias), output("y", &dynamic::QuantizedLinearArgs::y)},
      "W8A8 linear, per-token dynamic x quantization in its workspace.");

  nb::class_<SmoothQuantLinearDescriptor> s(
      m, "SmoothQuantLinearDescriptor",
      "SmoothQuant W8A8 linear: y = act(x_scale · s_w · (x_q · wᵀ) + bias), x_q quantized by the caller.");
  s.def(
      "__init__",
      [](SmoothQuantLinearDescriptor* self, int64_t mm, int64_t n, int64_t k, float x_scale, std::string_view output,
         std::string_view weight_scale_granularity, bool has_bias, std::string_view activation) {
        SmoothQuantLinearDescriptor d;
        d.with_shape(mm, n, k)
            .with_x_scale(x_scale)
            .with_output(parse_name<ElementKind>(output))
            .with_weight_scale_granularity(parse_name<WeightScaleGranularity>(weight_scale_granularity))
            .with_bias(has_bias);
        d.activation = parse_name<LinearActivation>(activation);
        new (self) SmoothQuantLinearDescriptor(d);
      },
      nb::arg("m"), nb::arg("n"), nb::arg("k"), nb::arg("x_scale"), nb::arg("output") = "f16",
      nb::arg("weight_scale_granularity") = "per_channel", nb::arg("has_bias") = false, nb::arg("activation") = "none");
  s.def_rw("x_scale", &SmoothQuantLinearDescriptor::x_scale).def_rw("has_bias", &SmoothQuantLinearDescriptor::has_bias);
  enum_property(s, "output", &SmoothQuantLinearDescriptor::output, "y's (and bias's) kind.");
  bind_plan<dynamic::SmoothQuantLinearPlan>(
      m, "SmoothQuantLinearPlan",
      {input("x_q", &dynamic::SmoothQuantLinearArgs::x_q), input("weight", &dynamic::SmoothQuantLinearArgs::weight),
       input("weight_scale", &dynamic::SmoothQuantLinearArgs::weight_scale),
       input("bias", &dynamic::SmoothQuantLinearArgs::bias), output("y", &dynamic::SmoothQuantLinearArgs::y)},
      "SmoothQuant W8A8 linear over a statically quantized x.");
  m.def("linear_activations", &all_names<LinearActivation>, "The linear plans' epilogue functions.");
}

void bind_dynamic_range(nb::module_& m) {
  nb::class_<DynamicRangeQuantizeDescriptor> d(
      m, "DynamicRangeQuantizeDescriptor",
      "Quantization whose (scale, zero point) come from the data's range per segment (per_token by default).");
  d.def(
      "__init__",
      [](DynamicRangeQuantizeDescriptor* self, std::string_view element, std::string_view quantized,
         const std::vector<int64_t>& shape, std::string_view granularity, int axis, int64_t group_size,
         std::string_view mode, std::optional<int32_t> quant_min, std::optional<int32_t> quant_max,
         std::string_view convention) {
        DynamicRangeQuantizeDescriptor desc;
        desc.element = parse_name<ElementKind>(element);
        desc.quantized = parse_name<ElementKind>(quantized);
        desc.shape = to_shape(shape);
        desc.granularity = granularity_of(granularity, axis, group_size);
        desc.mode = parse_name<DynamicRangeMode>(mode);
        desc.quant_min = quant_min;
        desc.quant_max = quant_max;
        desc.convention = parse_name<QuantConvention>(convention);
        new (self) DynamicRangeQuantizeDescriptor(desc);
      },
      nb::arg("element"), nb::arg("quantized"), nb::arg("shape"), nb::arg("granularity") = "per_token",
      nb::arg("axis") = 0, nb::arg("group_size") = 0, nb::arg("mode") = "symmetric", nb::arg("quant_min") = nb::none(),
      nb::arg("quant_max") = nb::none(), nb::arg("convention") = "pytorch");
  enum_property(d, "mode", &DynamicRangeQuantizeDescriptor::mode, "How a range becomes (scale, zero point).");
  shape_property(d, "shape", &DynamicRangeQuantizeDescriptor::shape, "x's shape.");
  bind_plan<dynamic::DynamicRangeQuantizePlan>(
      m, "DynamicRangeQuantizePlan",
      {input("x", &dynamic::DynamicRangeQuantizeArgs::x), output("y", &dynamic::DynamicRangeQuantizeArgs::y),
       output("scale", &dynamic::DynamicRangeQuantizeArgs::scale),
       output("zero_point", &dynamic::DynamicRangeQuantizeArgs::zero_point)},
      "y quantized with the scale and zero point of each segment's range, which it also writes.")
      .def_prop_ro("param_shape",
                   [](const dynamic::DynamicRangeQuantizePlan& p) { return from_shape(p.param_shape()); })
      .def_prop_ro("scale_kind", [](const dynamic::DynamicRangeQuantizePlan& p) {
        return std::string(to_string(p.scale_kind()));
      });
  m.def("dynamic_range_modes", &all_names<DynamicRangeMode>, "The dynamic-range modes' names.");
}

}  // namespace

void bind_linear(nb::module_& m) {
  bind_int_gemm(m);
  bind_dynamic_range(m);
}

}  // namespace baracuda::python
