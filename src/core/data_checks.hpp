// Internal: checks of a tensor's values that a device could only make after a synchronisation (a GPU kernel
// cannot report them before the launch returns), made where the CPU reads the data directly: on the host and
// sim devices. On cuda the values are the caller's contract (each plan's header says which).
#pragma once

#include <cstdint>
#include <string_view>

#include "baracuda/core/dyn_tensor.hpp"
#include "baracuda/core/status.hpp"
#include "baracuda/core/stream.hpp"

namespace baracuda::detail {

/// Whether `stream`'s device keeps tensors in memory the CPU reads (host, sim): the data checks run there.
inline bool data_readable(const Stream& stream) { return stream.device() != DeviceKind::Cuda; }

/// `InvalidProblem` unless `perm` (s32 [k], any stride) holds each of 0 .. k-1 exactly once: "<plan>: <name> is
/// not a permutation of [0, K): <name>[i] = v" naming the first value out of range or seen before.
Status check_permutation(std::string_view plan, std::string_view name, const ConstDynTensor& perm, int64_t k);

/// `InvalidProblem` unless every value of the s32 tensor `t` (any shape and strides) is in [lo, hi]:
/// "<plan>: <name> holds v at element i, outside [lo, hi] (<why>)".
Status check_s32_range(std::string_view plan, std::string_view name, const ConstDynTensor& t, int64_t lo,
                       int64_t hi, std::string_view why);

}  // namespace baracuda::detail
