/// \file
/// \brief Launchers of the numerics probes (numerics_kernels.cu): CUDA math functions whose results the CUDA Math
/// API and the IEEE 754 recommended operations pin down exactly (test_numerics_fidelity.cpp).
#pragma once

#include "sim/launch_error.hpp"

namespace simtest {

using baracuda::launch::LaunchError;

/// Results per argument of the pi-scaled trigonometric functions: sin, cos, and both outputs of sincos.
inline constexpr int kPiTrigOps = 4;

/// out[i*kPiTrigOps + k] for k = 0 sinpif(x[i]), 1 cospif(x[i]), 2 and 3 sincospif(x[i])'s sine and cosine.
LaunchError pi_trig_float(const float* x, float* out, int n);

/// The same for double: sinpi, cospi, sincospi.
LaunchError pi_trig_double(const double* x, double* out, int n);

/// out[i] = __fdividef(x[i], y[i]).
LaunchError fast_divide(const float* x, const float* y, float* out, int n);

/// Results per (x, amount) of the shift helpers (src/device/shift.cuh).
inline constexpr int kShiftOps = 8;

/// out[i*kShiftOps + k] for k = 0 shift::left and 1 shift::right of x[i] as unsigned (32 bits), 2 and 3 of x[i]
/// as int, 4 and 5 as unsigned long long, 6 and 7 as long long, each by amount[i]; the results' bits, zero-extended.
LaunchError shifts(const unsigned long long* x, const unsigned* amount, unsigned long long* out, int n);

}  // namespace simtest
