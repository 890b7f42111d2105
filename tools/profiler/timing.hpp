// Timing of repeated launches: CUDA events on the cuda device, std::chrono::steady_clock elsewhere.
#pragma once

#include <functional>

#include <baracuda/baracuda.hpp>

namespace baracuda::profiler {

struct Timing {
  double median_s = 0;  ///< median over the timed repeats
  double min_s = 0;
  int repeats = 0;
};

/// Runs `launch` `warmup` times untimed, then `repeat` times, each timed on its own; stops at the first
/// failed launch. On cuda the L2 cache is flushed (a buffer twice its size is written) before each timed
/// run, outside the timed region: figures are for operands coming from device memory.
Result<Timing> measure(const Stream& stream, const std::function<Status()>& launch, int warmup, int repeat);

}  // namespace baracuda::profiler
