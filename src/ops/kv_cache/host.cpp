// The kv_cache family's host reference: kv_cache.hpp's contract in plain C++, independent of the kernels.
// Per token, its slot (skipped when negative or past the caches), then per element a bit copy, or the f32
// quotient x / scale (a double division of the two f32-exact operands rounded once to f32: the correctly
// rounded f32 division) rounded once to E4M3 (saturating) or to s8 (half to even, clamped; NaN gives 0).
#include <cmath>
#include <cstdint>
#include <cstring>

#include "core/reference_formats.hpp"
#include "ops/kv_cache/dispatch.hpp"

namespace baracuda::reference {
namespace {

int64_t slot_of(const detail::KvCacheAppendLaunch& a, int64_t t) {
  const int64_t i = t * a.slot_mapping.stride[0];
  return a.slot_mapping.kind == ElementKind::S32 ? static_cast<const int32_t*>(a.slot_mapping.data)[i]
                                                 : static_cast<const int64_t*>(a.slot_mapping.data)[i];
}

/// x / s rounded once to f32 (both exact in double, whose 53 bits make the double rounding harmless).
float quotient(long double x, float s) { return static_cast<float>(static_cast<double>(x) / static_cast<double>(s)); }

template <class T, class C>
void store_element(const T& x, float s, C* out) {
  if constexpr (std::is_same_v<C, T>) {
    std::memcpy(static_cast<void*>(out), &x, sizeof(T));  // the bits, unchanged
  } else if constexpr (std::is_same_v<C, int8_t>) {
    const float y = quotient(value_of(x), s);
    const long double r = std::isnan(y) ? 0.0L : std::nearbyint(static_cast<long double>(y));
    *out = static_cast<int8_t>(r < -128 ? -128 : r > 127 ? 127 : r);
  } else {
    const uint64_t b = encode(quotient(value_of(x), s), kFormatE4M3, /*saturate=*/true);
    const auto byte = static_cast<uint8_t>(b);
    std::memcpy(static_cast<void*>(out), &byte, 1);
  }
}

template <class T, class C>
void append_one(const detail::KvCacheAppendLaunch& a, const ConstDynTensor& in, const ConstDynTensor& scale,
                const DynTensor& cache, int64_t t, int64_t block, int64_t offset) {
  const T* src = static_cast<const T*>(in.data);
  C* dst = static_cast<C*>(cache.data);
  for (int64_t h = 0; h < a.heads; ++h) {
    float s = 1;
    if constexpr (!std::is_same_v<C, T>)
      s = static_cast<const float*>(scale.data)[a.per_head ? h * scale.stride[0] : 0];
    const int64_t ib = t * in.stride[0] + h * in.stride[1];
    const int64_t ob = block * cache.stride[0] + offset * cache.stride[1] + h * cache.stride[2];
    for (int64_t e = 0; e < a.head_dim; ++e)
      store_element<T, C>(src[ib + e * in.stride[2]], s, &dst[ob + e * cache.stride[3]]);
  }
}

template <class T, class C>
Status host_append(const detail::ExecContext&, const detail::KvCacheAppendLaunch& a) {
  const int64_t slots = a.num_blocks * a.block_size;
  for (int64_t t = 0; t < a.tokens; ++t) {
    const int64_t slot = slot_of(a, t);
    if (slot < 0 || slot >= slots) continue;  // padding, or past the caches: skipped
    const int64_t block = slot / a.block_size, offset = slot % a.block_size;
    append_one<T, C>(a, a.key, a.k_scale, a.key_cache, t, block, offset);
    append_one<T, C>(a, a.value, a.v_scale, a.value_cache, t, block, offset);
  }
  return {};
}

}  // namespace

BARACUDA_DEFINE_TABLE(detail::KvCacheAppendTable, kv_cache_append_table,
                      detail::make_kv_cache_table([]<class T, class C>(std::type_identity<T>, std::type_identity<C>) {
                        return &host_append<T, C>;
                      }))

}  // namespace baracuda::reference
