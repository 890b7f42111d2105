// The norm family's kernels (kernels.cuh, row_kernel.cuh, backward_row_kernel.cuh) and tables, compiled for
// both devices (cmake/BaracudaKernels.cmake: by nvcc for cuda, by the host compiler against the SIMT emulator
// for sim).
#include "ops/norm/backward_row_kernel.cuh"
#include "ops/norm/row_kernel.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN

BARACUDA_DEFINE_KIND_TABLE(detail::NormTable, norm_forward_table, detail::NormTypes, norm::forward)
BARACUDA_DEFINE_KIND_TABLE(detail::NormTable, norm_backward_table, detail::NormTypes, norm::backward)
BARACUDA_DEFINE_KIND_TABLE(detail::NormTable, norm_rows_table, detail::NormTypes, norm::rows_forward)
BARACUDA_DEFINE_KIND_TABLE(detail::NormTable, norm_backward_rows_table, detail::NormTypes, norm::rows_backward)

BARACUDA_DEVICE_NAMESPACE_END
