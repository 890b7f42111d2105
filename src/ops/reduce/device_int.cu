// The reduce family's functions for the integer kinds and bool (kernels.cuh); the table is device.cu's.
#include "ops/reduce/kernels.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace reduce {
template Status reduce_launch<int8_t>(const ::baracuda::detail::ExecContext&, const detail::ReduceLaunch&);
template Status reduce_launch<uint8_t>(const ::baracuda::detail::ExecContext&, const detail::ReduceLaunch&);
template Status reduce_launch<int32_t>(const ::baracuda::detail::ExecContext&, const detail::ReduceLaunch&);
template Status reduce_launch<int64_t>(const ::baracuda::detail::ExecContext&, const detail::ReduceLaunch&);
template Status reduce_launch<bool>(const ::baracuda::detail::ExecContext&, const detail::ReduceLaunch&);
}  // namespace reduce
BARACUDA_DEVICE_NAMESPACE_END
