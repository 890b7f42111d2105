// The rope family's host reference: rope.hpp's contract in plain C++,
// independent of the kernels. Per token, the pairs' cosine and sine in long
// double (std::cos and std::sin of the same f32 angle the devices use, or the
// cache's values exactly), then per head the rotation in long double, rounded
// once to the element kind (core/reference_formats.hpp).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/reference_formats.hpp"
#include "ops/rope/dispatch.hpp"

namespace baracuda::reference {
namespace {

using LD = long double;

int64_t position(const detail::RopeLaunch &a, int64_t t) {
  const int64_t i = t * a.positions.stride[0];
  return a.positions.kind == ElementKind::S32
             ? static_cast<const int32_t *>(a.positions.data)[i]
             : static_cast<const int64_t *>(a.positions.data)[i];
}

/// The cache's element at `offset` (f32 or T), exactly.
template <class T> LD cache_value(const detail::RopeLaunch &a, int64_t offset) {
  if (a.cache.kind == ElementKind::F32)
    return static_cast<const float *>(a.cache.data)[offset];
  return value_of(static_cast<const T *>(a.cache.data)[offset]);
}

/// Rotates the heads of one tensor at token t with the pairs' (c, s).
template <class T>
void rotate_heads(const detail::RopeLaunch &a, const ConstDynTensor &in,
                  const DynTensor &out, int64_t heads, int64_t t,
                  const std::vector<LD> &c, const std::vector<LD> &s) {
  const int64_t dim = a.head_dim, half = a.rot_dim / 2;
  const bool neox = a.style == RopeStyle::NeoX;
  std::vector<LD> x(static_cast<size_t>(dim)), y(static_cast<size_t>(dim));
  const T *src = static_cast<const T *>(in.data);
  T *dst = static_cast<T *>(out.data);
  for (int64_t h = 0; h < heads; ++h) {
    const int64_t ib = t * in.stride[0] + h * in.stride[1],
                  ob = t * out.stride[0] + h * out.stride[1];
    for (int64_t e = 0; e < dim; ++e)
      x[e] = value_of(src[ib + e * in.stride[2]]);
    y = x; // the pass-through dims
    for (int64_t j = 0; j < half; ++j) {
      const int64_t ia = neox ? j : 2 * j, ibb = neox ? j + half : 2 * j + 1;
      y[ia] = x[ia] * c[j] - x[ibb] * s[j];
      y[ibb] = x[ibb] * c[j] + x[ia] * s[j];
    }
    for (int64_t e = 0; e < dim; ++e)
      dst[ob + e * out.stride[2]] = store<T>(y[e]);
  }
}

template <class T>
Status host_rope(const detail::ExecContext &, const detail::RopeLaunch &a) {
  const int64_t half = a.rot_dim / 2;
  std::vector<LD> c(static_cast<size_t>(half)), s(static_cast<size_t>(half));
  for (int64_t t = 0; t < a.tokens; ++t) {
    const int64_t p = position(a, t);
    for (int64_t j = 0; j < half; ++j) {
      if (a.cached) {
        const int64_t row = std::clamp<int64_t>(p, 0, a.max_position - 1);
        c[j] =
            cache_value<T>(a, row * a.cache.stride[0] + j * a.cache.stride[1]);
        s[j] = cache_value<T>(a, row * a.cache.stride[0] +
                                     (half + j) * a.cache.stride[1]);
      } else {
        const float angle = static_cast<float>(p) *
                            a.freq->inv_freq[j]; // the contract's f32 angle
        const LD m = a.freq->attention_factor;
        c[j] = std::cos(static_cast<LD>(angle)) * m;
        s[j] = std::sin(static_cast<LD>(angle)) * m;
      }
      if (a.inverse)
        s[j] = -s[j];
    }
    rotate_heads<T>(a, a.q, a.q_out, a.heads, t, c, s);
    if (a.kv_heads > 0)
      rotate_heads<T>(a, a.k, a.k_out, a.kv_heads, t, c, s);
  }
  return {};
}

} // namespace

BARACUDA_DEFINE_KIND_TABLE(detail::RopeTable, rope_table, detail::RopeTypes,
                           host_rope)

} // namespace baracuda::reference
