// The softmax family's kernels (kernels.cuh, row_kernel.cuh) and tables, compiled for both devices
// (cmake/BaracudaKernels.cmake: by nvcc for cuda, by the host compiler against the SIMT emulator for sim).
#include "ops/softmax/row_kernel.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN

BARACUDA_DEFINE_KIND_TABLE(detail::SoftmaxTable, softmax_forward_table, detail::SoftmaxTypes, softmax::forward)
BARACUDA_DEFINE_KIND_TABLE(detail::SoftmaxTable, softmax_backward_table, detail::SoftmaxTypes, softmax::backward)
BARACUDA_DEFINE_KIND_TABLE(detail::SoftmaxTable, softmax_rows_table, detail::SoftmaxTypes, softmax::rows_forward)
BARACUDA_DEFINE_KIND_TABLE(detail::SoftmaxTable, softmax_backward_rows_table, detail::SoftmaxTypes,
                           softmax::rows_backward)

BARACUDA_DEVICE_NAMESPACE_END
