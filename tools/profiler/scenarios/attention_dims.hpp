// The extents of the attention scenarios' --shape, shared by attention_prefill (attention.cpp, which describes the
// forms) and attention_backward (attention_backward.cpp): [B, S_q, S_k, H, H_kv, d] and its shorter forms.
#pragma once

#include <cstdint>

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

}  // namespace baracuda::profiler::attention_shape
