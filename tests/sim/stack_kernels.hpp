/// \file
/// \brief Launcher of the stack-overflow probe (stack_kernels.cu, test_stack_overflow.cpp).
#pragma once

#include "sim/launch_error.hpp"

namespace simtest {

using baracuda::launch::LaunchError;

/// The local-array sizes (KiB) that stack_overflow accepts.
inline constexpr int kOverflowKiB[] = {48, 160, 240, 352};

/// One block of 64 threads. Each fills a 40 KiB local array with a pattern (deep in its own stack) and records
/// its address in where[t]; after a barrier the thread whose array lies closest above another thread's calls a
/// function with a local array of `array_kib` KiB (one of kOverflowKiB) that writes only the array's first KiB,
/// its lowest addresses; after another barrier every thread counts the words of its pattern that changed into
/// damaged[t].
LaunchError stack_overflow(int array_kib, unsigned long long* where, int* damaged);

}  // namespace simtest
