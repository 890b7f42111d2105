// The extents of the attention scenarios' --shape, shared by attention_prefill (attention.cpp, which describes the
// forms) and attention_backward (attention_backward.cpp): [B, S_q, S_k, H, H_kv, d] and its shorter forms, and the
// default shapes of both.
#pragma once

#include <cstdint>
#include <vector>

#include "../scenario.hpp"

namespace baracuda::profiler::attention_shape {

struct Dims {
  int64_t b = 1, s_q = 0, s_k = 0, h = 32, h_kv = 8, d = 128;
};

inline Dims dims(const Problem& p) {
  const Shape& s = p.shape;
  Dims r;
  switch (s.rank) {
    case 0: return r;
    case 1: r.s_q = r.s_k = s[0]; return r;
    case 2: r.b = s[0], r.s_q = r.s_k = s[1]; return r;
    default: r.b = s[0], r.s_q = s[1], r.s_k = s[2];
  }
  if (s.rank == 4) r.d = s[3];
  if (s.rank == 5) r.h = r.h_kv = s[3], r.d = s[4];
  if (s.rank >= 6) r.h = s[3], r.h_kv = s[4], r.d = s[5];
  return r;
}

/// On cuda 8 × 2048 and 1 × 16384, 32 query heads on 8 kv heads, d = 128; on host/sim 17 queries on 33 keys and
/// 33 on 17, 4 query heads on 2 kv heads, d = 64.
inline std::vector<Shape> default_shapes(DeviceKind device) {
  if (device == DeviceKind::Cuda) return {Shape{8, 2048, 2048, 32, 8, 128}, Shape{1, 16384, 16384, 32, 8, 128}};
  return {Shape{2, 17, 33, 4, 2, 64}, Shape{2, 33, 17, 4, 2, 64}};
}

}  // namespace baracuda::profiler::attention_shape
