/// \file
/// \brief Everything a kernel sees in sim mode, in one include (used by compat.cuh). The device API is defined
/// in namespace baracuda::simt::device_api and made visible at global scope, where CUDA declares it.
#pragma once

#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include "atomics.hpp"
#include "device.hpp"
#include "half_intrinsics.hpp"
#include "math.hpp"
#include "runtime.hpp"
#include "warp.hpp"
#include "warp_intrinsics.hpp"

using namespace ::baracuda::simt::device_api;  // NOLINT(google-global-names-in-headers): CUDA's names are global
