// The reduce family's functions for the float kinds (kernels.cuh); the table is device.cu's.
#include "ops/reduce/kernels.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace reduce {
template Status reduce_launch<__half>(const ::baracuda::detail::ExecContext&, const detail::ReduceLaunch&);
template Status reduce_launch<__nv_bfloat16>(const ::baracuda::detail::ExecContext&, const detail::ReduceLaunch&);
template Status reduce_launch<float>(const ::baracuda::detail::ExecContext&, const detail::ReduceLaunch&);
template Status reduce_launch<double>(const ::baracuda::detail::ExecContext&, const detail::ReduceLaunch&);
}  // namespace reduce
BARACUDA_DEVICE_NAMESPACE_END
