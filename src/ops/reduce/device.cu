// The reduce family's table, compiled for both devices (cmake/BaracudaKernels.cmake: by nvcc for cuda, by the
// host compiler against the SIMT emulator for sim). Its entries, reduce_launch<T>, are instantiated in the
// kernel units device_float.cu and device_int.cu, so the two compile in parallel.
#include "sim/compat.cuh"  // first: the device namespace, launch macros and device API

#include "ops/reduce/dispatch.hpp"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace reduce {
template <class T>
Status reduce_launch(const ::baracuda::detail::ExecContext& ctx, const detail::ReduceLaunch& a);
}  // namespace reduce

BARACUDA_DEFINE_KIND_TABLE(detail::ReduceTable, reduce_table, detail::ReduceTypes, reduce::reduce_launch)

BARACUDA_DEVICE_NAMESPACE_END
