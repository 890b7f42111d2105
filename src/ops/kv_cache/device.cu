// The kv_cache family's kernel and its table, compiled for both devices (cmake/BaracudaKernels.cmake: by nvcc
// for cuda, by the host compiler against the SIMT emulator for sim). A block owns one new token: it reads the
// token's slot (the whole block skips a padded or out-of-range one), then its threads move units of one head
// row of K, then of V — V elements, one 16-byte store into the cache (16/sizeof copied elements, 16 quantized
// ones from 16 loaded), where head_dim and every row are aligned; one element otherwise. Memory-bound.
#include "sim/compat.cuh"  // first: the device namespace, launch macros and device API

#include <cstdint>
#include <initializer_list>
#include <string>
#include <type_traits>

#include "device/convert.cuh"
#include "device/vector_access.cuh"
#include "ops/kv_cache/dispatch.hpp"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace kv_cache {

/// One of K and V: its input rows, its cache and its scale (element strides).
struct Side {
  const void* in = nullptr;
  void* cache = nullptr;
  const float* scale = nullptr;
  int64_t in_token = 0, in_head = 0, c_block = 0, c_offset = 0, c_head = 0, scale_stride = 0;
};

struct Params {
  Side k, v;
  const void* slots;
  int64_t slot_stride, block_size, num_slots;
  bool slots64;
  int heads, units_per_head;
};

/// One element into the cache: the bits (copy), or x / s in f32 (one division, no reciprocal) rounded to the
/// quantized kind (kv_cache.hpp).
template <class T, class C>
__device__ __forceinline__ C store_value(T x, float s) {
  if constexpr (std::is_same_v<C, T>) {
    return x;
  } else {
    const float y = __fdiv_rn(convert::to_opmath(x), s);
    if constexpr (std::is_same_v<C, int8_t>)
      return convert::float_to_int<int8_t>(rintf(y));  // half to even, saturated; NaN → 0
    else
      return convert::from_float<C>(y, /*saturate_fp8=*/true);
  }
}

template <class T, class C, int V>
__global__ void append_kernel(Params p) {
  const int64_t t = blockIdx.x;
  const int64_t slot = p.slots64 ? static_cast<const int64_t*>(p.slots)[t * p.slot_stride]
                                 : static_cast<const int32_t*>(p.slots)[t * p.slot_stride];
  if (slot < 0 || slot >= p.num_slots) return;  // padding, or past the caches: skipped (kv_cache.hpp)
  const int64_t block = slot / p.block_size, offset = slot % p.block_size;
  const int per_side = p.heads * p.units_per_head;
  for (int u = threadIdx.x; u < 2 * per_side; u += blockDim.x) {
    // Field by field (a reference to p.k or p.v would copy the parameters to local memory).
    const bool is_v = u >= per_side;
    const int uu = is_v ? u - per_side : u;
    const int64_t h = uu / p.units_per_head, e0 = static_cast<int64_t>(uu % p.units_per_head) * V;
    const T* src = static_cast<const T*>(is_v ? p.v.in : p.k.in) + t * (is_v ? p.v.in_token : p.k.in_token) +
                   h * (is_v ? p.v.in_head : p.k.in_head) + e0;
    C* dst = static_cast<C*>(is_v ? p.v.cache : p.k.cache) + block * (is_v ? p.v.c_block : p.k.c_block) +
             offset * (is_v ? p.v.c_offset : p.k.c_offset) + h * (is_v ? p.v.c_head : p.k.c_head) + e0;
    float s = 1.0f;
    if constexpr (!std::is_same_v<C, T>)
      s = (is_v ? p.v.scale : p.k.scale)[h * (is_v ? p.v.scale_stride : p.k.scale_stride)];
    if constexpr (V == 1) {
      *dst = store_value<T, C>(*src, s);
    } else if constexpr (std::is_same_v<C, T>) {
      store_vector<V>(dst, load_vector<V>(src));
    } else {
      const AlignedVector<T, V> x = load_vector<V>(src);
      AlignedVector<C, V> y;
      BARACUDA_UNROLL
      for (int i = 0; i < V; ++i) y.val[i] = store_value<T, C>(x.val[i], s);
      store_vector<V>(dst, y);
    }
  }
}

/// The base 16-byte aligned and each stride a whole number of 16-byte units (`vec` elements).
inline bool aligned(const void* data, std::initializer_list<int64_t> strides, int64_t vec) {
  if (reinterpret_cast<std::uintptr_t>(data) % 16 != 0) return false;
  for (int64_t s : strides)
    if (s % vec != 0) return false;
  return true;
}

Side side_of(const ConstDynTensor& in, const DynTensor& cache, const ConstDynTensor& scale, bool per_head) {
  Side s;
  s.in = in.data, s.cache = cache.data, s.scale = static_cast<const float*>(scale.data);
  s.in_token = in.stride[0], s.in_head = in.stride[1];
  s.c_block = cache.stride[0], s.c_offset = cache.stride[1], s.c_head = cache.stride[2];
  s.scale_stride = per_head ? scale.stride[0] : 0;
  return s;
}

template <class T, class C, int V>
Status launch(const ::baracuda::detail::ExecContext& ctx, Params p, int64_t tokens, int64_t head_dim) {
  p.units_per_head = static_cast<int>(head_dim / V);
  const int64_t units = 2 * static_cast<int64_t>(p.heads) * p.units_per_head;
  const int threads = units >= 256 ? 256 : static_cast<int>((units + 31) / 32 * 32);
  BARACUDA_LAUNCH(dim3(static_cast<unsigned>(tokens)), dim3(static_cast<unsigned>(threads)), 0, ctx.stream,
                  append_kernel<T, C, V>)
  (p);
  const auto e = launch::take_last_error();
  if (!e.failed) return {};
  return Error::device(std::string("KvCacheAppendPlan: kernel launch failed: ") + e.message, e.code);
}

template <class T, class C>
Status append_launch(const ::baracuda::detail::ExecContext& ctx, const ::baracuda::detail::KvCacheAppendLaunch& a) {
  // A unit is one 16-byte store into the cache; its loads are 16·sizeof(T)/sizeof(C) bytes.
  constexpr int kVec = static_cast<int>(16 / sizeof(C));
  Params p{};
  p.k = side_of(a.key, a.key_cache, a.k_scale, a.per_head);
  p.v = side_of(a.value, a.value_cache, a.v_scale, a.per_head);
  p.slots = a.slot_mapping.data, p.slot_stride = a.slot_mapping.stride[0];
  p.slots64 = a.slot_mapping.kind == ElementKind::S64;
  p.block_size = a.block_size, p.num_slots = a.num_blocks * a.block_size;
  p.heads = static_cast<int>(a.heads);
  bool vec = a.head_dim % kVec == 0;
  for (const Side* s : {&p.k, &p.v})
    vec = vec && aligned(s->in, {s->in_token, s->in_head}, static_cast<int64_t>(16 / sizeof(T))) &&
          aligned(s->cache, {s->c_block, s->c_offset, s->c_head}, kVec);
  return vec ? launch<T, C, kVec>(ctx, p, a.tokens, a.head_dim) : launch<T, C, 1>(ctx, p, a.tokens, a.head_dim);
}

}  // namespace kv_cache

BARACUDA_DEFINE_TABLE(detail::KvCacheAppendTable, kv_cache_append_table,
                      detail::make_kv_cache_table([]<class T, class C>(std::type_identity<T>, std::type_identity<C>) {
                        return &kv_cache::append_launch<T, C>;
                      }))

BARACUDA_DEVICE_NAMESPACE_END
