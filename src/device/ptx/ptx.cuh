/// \file
/// \brief The PTX wrapper layer (DESIGN §6): every inline PTX that kernels use, each a __device__ function
/// with its real inline-PTX form under nvcc and an exact emulation under sim (sim/emu/ptx_emulation.hpp).
/// Functions live in namespace baracuda::<device ABI>::ptx. See docs/ptx.md.
#pragma once

#include "device/ptx/bitops.cuh"
#include "device/ptx/cp_async.cuh"
#include "device/ptx/cvt.cuh"
#include "device/ptx/ldmatrix.cuh"
#include "device/ptx/math.cuh"
#include "device/ptx/mbarrier.cuh"
#include "device/ptx/mma.cuh"
#include "device/ptx/tma.cuh"
#include "device/ptx/wgmma.cuh"
