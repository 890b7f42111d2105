// Bindings of the W4A16 path: Int4MarlinRepackPlan (GPTQ/AWQ checkpoint tensors → Marlin tensors),
// Int4MarlinGemmPlan, and the host helper that turns a checkpoint's g_idx into act-order's perm.
#include <nanobind/ndarray.h>

#include <cstring>
#include <span>
#include <vector>

#include "baracuda/ops/int4_gemm.hpp"
#include "baracuda/ops/int4_marlin_repack.hpp"
#include "baracuda/ops/int4_weights.hpp"
#include "common.hpp"

// float16 arrays of __half (nanobind's documented way to name a custom element type).
template <>
struct nanobind::detail::dtype_traits<__half> {
  static constexpr dlpack::dtype value{static_cast<uint8_t>(dlpack::dtype_code::Float), 16, 1};
  static constexpr auto name = const_name("float16");
};

namespace baracuda::python {

BARACUDA_PY_NAMED_BY_TO_STRING(Int4Scheme, kNumInt4Schemes, "int4 scheme");
BARACUDA_PY_NAMED_BY_TO_STRING(Int4CheckpointFormat, kNumInt4CheckpointFormats, "int4 checkpoint format");

namespace {

// A numpy array owning a copy of `v`, of `shape`.
template <class T>
nb::ndarray<nb::numpy, T> numpy_of(const std::vector<T>& v, std::initializer_list<std::size_t> shape) {
  auto* data = new T[v.empty() ? 1 : v.size()];
  if (!v.empty()) std::memcpy(static_cast<void*>(data), v.data(), v.size() * sizeof(T));
  nb::capsule owner(data, [](void* p) noexcept { delete[] static_cast<T*>(p); });
  return nb::ndarray<nb::numpy, T>(data, shape.size(), shape.begin(), owner);
}

std::size_t z(int64_t v) { return static_cast<std::size_t>(v); }

template <class T>
using HostArray = nb::ndarray<const T, nb::c_contig, nb::device::cpu>;

std::span<const int32_t> optional_span(const std::optional<HostArray<int32_t>>& a) {
  return a ? std::span<const int32_t>(a->data(), a->size()) : std::span<const int32_t>();
}

void bind_int4_host(nb::module_& m) {
  nb::class_<Int4Weights>(m, "Int4Weights",
                          "A K × N int4 weight in logical form: q [K, N] (0..15), float16 scales [G, N], zeros "
                          "[G, N] (asymmetric) and g_idx [K] (act-order).")
      .def_prop_ro("k", [](const Int4Weights& w) { return w.shape.k; })
      .def_prop_ro("n", [](const Int4Weights& w) { return w.shape.n; })
      .def_prop_ro("group", [](const Int4Weights& w) { return w.shape.group; })
      .def_prop_ro("scheme", [](const Int4Weights& w) { return std::string(to_string(w.scheme)); })
      // The arrays are copies, owned by themselves (not views of the object: the default policy's).
      .def_prop_ro("q", [](const Int4Weights& w) { return numpy_of(w.q, {z(w.shape.k), z(w.shape.n)}); },
                   nb::rv_policy::move)
      .def_prop_ro("scales",
                   [](const Int4Weights& w) { return numpy_of(w.scales, {z(w.shape.num_groups()), z(w.shape.n)}); },
                   nb::rv_policy::move)
      .def_prop_ro("zeros",
                   [](const Int4Weights& w) { return numpy_of(w.zeros, {z(w.zeros.empty() ? 0 : w.shape.num_groups()),
                                                                          z(w.zeros.empty() ? 0 : w.shape.n)}); },
                   nb::rv_policy::move)
      .def_prop_ro(
          "g_idx", [](const Int4Weights& w) { return numpy_of(w.g_idx, {w.g_idx.size()}); }, nb::rv_policy::move);

  m.def(
      "quantize_int4",
      [](HostArray<float> w, int64_t group, std::string_view scheme, std::optional<HostArray<int32_t>> g_idx) {
        if (w.ndim() != 2) throw nb::value_error("quantize_int4: w must be a [K, N] float32 array");
        const Int4Shape shape{static_cast<int64_t>(w.shape(0)), static_cast<int64_t>(w.shape(1)), group};
        return unwrap(quantize_int4(std::span<const float>(w.data(), w.size()), shape, parse_name<Int4Scheme>(scheme),
                                    optional_span(g_idx)));
      },
      nb::arg("w"), nb::arg("group") = 128, nb::arg("scheme") = "symmetric", nb::arg("g_idx") = nb::none(),
      "Round-to-nearest int4 quantization of a float32 [K, N] weight with float16 scales per `group` rows "
      "(vLLM's quantize_weights formulas; g_idx assigns rows to groups for act-order).");
  m.def(
      "dequantize_int4",
      [](const Int4Weights& w) { return numpy_of(unwrap(dequantize_int4(w)), {z(w.shape.k), z(w.shape.n)}); },
      "The float32 [K, N] weight the int4 weight stands for (exact).");
  m.def(
      "gptq_pack",
      [](const Int4Weights& w) {
        const GptqCheckpoint c = unwrap(gptq_pack(w));
        const Int4Shape& s = c.shape;
        return nb::make_tuple(numpy_of(c.qweight, {z(s.k / 8), z(s.n)}),
                              numpy_of(c.qzeros, {z(s.num_groups()), z(s.n / 8)}),
                              numpy_of(c.scales, {z(s.num_groups()), z(s.n)}), numpy_of(c.g_idx, {z(s.k)}));
      },
      "The GPTQ checkpoint tensors of an int4 weight: (qweight int32 [K/8, N], qzeros int32 [G, N/8] storing "
      "z - 1, scales float16 [G, N], g_idx int32 [K]).");
  m.def(
      "gptq_unpack",
      [](HostArray<int32_t> qweight, HostArray<int32_t> qzeros, HostArray<__half> scales,
         std::optional<HostArray<int32_t>> g_idx, int64_t group, std::string_view scheme) {
        if (qweight.ndim() != 2) throw nb::value_error("gptq_unpack: qweight must be [K/8, N]");
        const Int4Shape shape{8 * static_cast<int64_t>(qweight.shape(0)), static_cast<int64_t>(qweight.shape(1)),
                              group};
        const GptqCheckpointView view{{qweight.data(), qweight.size()}, {qzeros.data(), qzeros.size()},
                                      {scales.data(), scales.size()}, optional_span(g_idx)};
        return unwrap(gptq_unpack(view, shape, parse_name<Int4Scheme>(scheme)));
      },
      nb::arg("qweight"), nb::arg("qzeros"), nb::arg("scales"), nb::arg("g_idx") = nb::none(), nb::arg("group") = 128,
      nb::arg("scheme") = "symmetric", "The int4 weight a GPTQ checkpoint's tensors hold.");
  m.def(
      "awq_pack",
      [](const Int4Weights& w) {
        const AwqCheckpoint c = unwrap(awq_pack(w));
        const Int4Shape& s = c.shape;
        return nb::make_tuple(numpy_of(c.qweight, {z(s.k), z(s.n / 8)}),
                              numpy_of(c.qzeros, {z(s.num_groups()), z(s.n / 8)}),
                              numpy_of(c.scales, {z(s.num_groups()), z(s.n)}));
      },
      "The AWQ (GEMM format) checkpoint tensors of an int4 weight: (qweight int32 [K, N/8], qzeros int32 "
      "[G, N/8], scales float16 [G, N]).");
  m.def(
      "awq_unpack",
      [](HostArray<int32_t> qweight, HostArray<int32_t> qzeros, HostArray<__half> scales, int64_t group) {
        if (qweight.ndim() != 2) throw nb::value_error("awq_unpack: qweight must be [K, N/8]");
        const Int4Shape shape{static_cast<int64_t>(qweight.shape(0)), 8 * static_cast<int64_t>(qweight.shape(1)),
                              group};
        const AwqCheckpointView view{{qweight.data(), qweight.size()}, {qzeros.data(), qzeros.size()},
                                     {scales.data(), scales.size()}};
        return unwrap(awq_unpack(view, shape));
      },
      nb::arg("qweight"), nb::arg("qzeros"), nb::arg("scales"), nb::arg("group") = 128,
      "The int4 weight an AWQ checkpoint's tensors hold.");
  m.def(
      "marlin_from_int4",
      [](const Int4Weights& w, bool act_order) {
        const MarlinInt4Weights mw = unwrap(marlin_from_int4(w, act_order));
        const Int4Shape& s = mw.shape;
        nb::object zeros = nb::none(), perm = nb::none();
        if (!mw.zeros.empty()) zeros = nb::cast(numpy_of(mw.zeros, {z(s.num_groups()), z(s.n / 8)}));
        if (!mw.perm.empty()) perm = nb::cast(numpy_of(mw.perm, {z(s.k)}));
        return nb::make_tuple(numpy_of(mw.qweight, {z(s.k / 16), z(2 * s.n)}),
                              numpy_of(mw.scales, {z(s.num_groups()), z(s.n)}), zeros, perm);
      },
      nb::arg("weights"), nb::arg("act_order") = false,
      "The Marlin tensors of an int4 weight, on the host: (b_q, scales, zeros or None, perm or None), what "
      "int4_gemm takes.");
}

}  // namespace

void bind_int4(nb::module_& m) {
  bind_int4_host(m);
  nb::class_<Int4RepackDescriptor> r(m, "Int4RepackDescriptor",
                                     "A GPTQ (symmetric, optional act-order) or AWQ (asymmetric) checkpoint's "
                                     "K × N int4 weight, with scales per `group` rows (-1: one group), to repack "
                                     "for the Marlin GEMM of activation kind `scale_element`.");
  r.def(
      "__init__",
      [](Int4RepackDescriptor* self, int64_t k, int64_t n, int64_t group, std::string_view format, bool act_order,
         std::string_view scale_element) {
        Int4RepackDescriptor d;
        d.k = k, d.n = n, d.group = group;
        d.format = parse_name<Int4CheckpointFormat>(format);
        d.scheme = d.format == Int4CheckpointFormat::Awq ? Int4Scheme::Asymmetric : Int4Scheme::Symmetric;
        d.act_order = act_order;
        d.scale_element = parse_name<ElementKind>(scale_element);
        new (self) Int4RepackDescriptor(d);
      },
      nb::arg("k"), nb::arg("n"), nb::arg("group") = 128, nb::arg("format") = "gptq", nb::arg("act_order") = false,
      nb::arg("scale_element") = "f16");
  r.def_rw("k", &Int4RepackDescriptor::k)
      .def_rw("n", &Int4RepackDescriptor::n)
      .def_rw("group", &Int4RepackDescriptor::group);
  enum_property(r, "format", &Int4RepackDescriptor::format, "The checkpoint's format.");
  bind_plan<dynamic::Int4MarlinRepackPlan>(
      m, "Int4MarlinRepackPlan",
      {input("qweight", &dynamic::Int4MarlinRepackArgs::qweight),
       input("qzeros", &dynamic::Int4MarlinRepackArgs::qzeros),
       input("scales", &dynamic::Int4MarlinRepackArgs::scales),
       input("perm", &dynamic::Int4MarlinRepackArgs::perm),
       output("out_qweight", &dynamic::Int4MarlinRepackArgs::out_qweight),
       output("out_scales", &dynamic::Int4MarlinRepackArgs::out_scales),
       output("out_zeros", &dynamic::Int4MarlinRepackArgs::out_zeros)},
      "Repacks checkpoint int4 tensors into the Marlin tensors of Int4MarlinGemmPlan.");

  nb::class_<Int4GemmDescriptor> g(m, "Int4GemmDescriptor",
                                   "C[M, N] = A[M, K] · W where W (K × N) is int4 in Marlin's layout with scales "
                                   "per `group` rows; A, scales, bias and C f16 or bf16.");
  g.def(
      "__init__",
      [](Int4GemmDescriptor* self, int64_t mm, int64_t n, int64_t k, int64_t group, std::string_view scheme,
         bool act_order, std::string_view element, bool has_bias) {
        Int4GemmDescriptor d;
        d.m = mm, d.n = n, d.k = k, d.group = group;
        d.scheme = parse_name<Int4Scheme>(scheme);
        d.act_order = act_order;
        d.element = parse_name<ElementKind>(element);
        d.has_bias = has_bias;
        new (self) Int4GemmDescriptor(d);
      },
      nb::arg("m"), nb::arg("n"), nb::arg("k"), nb::arg("group") = 128, nb::arg("scheme") = "symmetric",
      nb::arg("act_order") = false, nb::arg("element") = "f16", nb::arg("has_bias") = false);
  g.def_prop_ro("act_order_effective", &Int4GemmDescriptor::act_order_effective);
  bind_plan<dynamic::Int4MarlinGemmPlan>(
      m, "Int4MarlinGemmPlan",
      {input("a", &dynamic::Int4MarlinGemmArgs::a), input("b_q", &dynamic::Int4MarlinGemmArgs::b_q),
       input("scales", &dynamic::Int4MarlinGemmArgs::scales), input("zeros", &dynamic::Int4MarlinGemmArgs::zeros),
       input("perm", &dynamic::Int4MarlinGemmArgs::perm), input("bias", &dynamic::Int4MarlinGemmArgs::bias),
       output("c", &dynamic::Int4MarlinGemmArgs::c)},
      "The W4A16 GEMM over Marlin tensors (act-order gathers A's columns by perm in the workspace).");

  m.def(
      "marlin_act_order_perm",
      [](nb::ndarray<const int32_t, nb::ndim<1>, nb::c_contig, nb::device::cpu> g_idx, int64_t k, int64_t n,
         int64_t group) {
        auto perm = unwrap(marlin_act_order_perm(std::span<const int32_t>(g_idx.data(), g_idx.shape(0)),
                                                 Int4Shape{k, n, group}));
        nb::list out;
        for (int32_t v : perm) out.append(v);
        return out;
      },
      nb::arg("g_idx"), nb::arg("k"), nb::arg("n"), nb::arg("group"),
      "GPTQ act-order's Marlin row order from a checkpoint's g_idx (int32 [K], on the host): the stable "
      "argsort, which the repack and the GEMM take as `perm`.");
}

}  // namespace baracuda::python
