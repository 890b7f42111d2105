// baracuda._core: the plan API of baracuda for Python (the package baracuda wraps it).
#include "common.hpp"

namespace baracuda::python {
void bind_core(nb::module_& m);
void bind_elementwise(nb::module_& m);
void bind_quantize(nb::module_& m);
void bind_linear(nb::module_& m);
void bind_gemm(nb::module_& m);
void bind_grouped_gemm(nb::module_& m);
void bind_dense_linear(nb::module_& m);
void bind_pointwise(nb::module_& m);
void bind_fp8(nb::module_& m);
void bind_fp8_gemm(nb::module_& m);
void bind_int4(nb::module_& m);
void bind_reduce(nb::module_& m);
void bind_softmax(nb::module_& m);
void bind_norm(nb::module_& m);
void bind_channel_norm(nb::module_& m);
void bind_rope(nb::module_& m);
void bind_kv_cache(nb::module_& m);
void bind_attention(nb::module_& m);
void bind_paged_decode(nb::module_& m);
void bind_paged_prefill(nb::module_& m);
}  // namespace baracuda::python

NB_MODULE(_core, m) {
  namespace py = baracuda::python;
  m.doc() = "baracuda's plans: select once, run many times, on host, sim or cuda.";
  py::bind_errors(m);
  py::bind_core(m);
  py::bind_elementwise(m);
  py::bind_quantize(m);
  py::bind_linear(m);
  py::bind_gemm(m);
  py::bind_grouped_gemm(m);
  py::bind_dense_linear(m);
  py::bind_pointwise(m);
  py::bind_fp8(m);
  py::bind_fp8_gemm(m);
  py::bind_int4(m);
  py::bind_reduce(m);
  py::bind_softmax(m);
  py::bind_norm(m);
  py::bind_channel_norm(m);
  py::bind_rope(m);
  py::bind_kv_cache(m);
  py::bind_attention(m);
  py::bind_paged_decode(m);
  py::bind_paged_prefill(m);
}
