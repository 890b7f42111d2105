// The rope family's kernel and its table, compiled for both devices
// (cmake/BaracudaKernels.cmake: by nvcc for cuda, by the host compiler against
// the SIMT emulator for sim). A block owns one token and a group of its heads
// (q's, then k's): its threads first put the token's cos and sin of every pair
// in shared memory (read from the cache, or computed from the f32 angle), then
// each rotates units of one head — V pairs (NeoX: a vector from each half) or V
// elements (GPT-J: V/2 adjacent pairs) — with 16-byte loads and stores where
// every row is contiguous and aligned (V = 16 / sizeof(T)), one pair per unit
// otherwise; out of place the pass-through dims are copied in units of V
// elements.
#include "sim/compat.cuh" // first: the device namespace, launch macros and device API

#include <cstdint>
#include <string>

#include "device/convert.cuh"
#include "device/precise_math.cuh"
#include "device/vector_access.cuh"
#include "ops/rope/dispatch.hpp"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace rope {

/// One of q and k: its input and output rows (element strides) and heads;
/// `copy` when the pass-through dims must be written (out of place).
struct Rows {
  const void *in = nullptr;
  void *out = nullptr;
  int64_t in_token = 0, in_head = 0, in_dim = 0, out_token = 0, out_head = 0,
          out_dim = 0;
  int heads = 0;
  bool copy = false;
};

struct Params {
  Rows q, k;
  const void *positions;
  int64_t position_stride;
  bool positions64;
  const void *cache; // null: computed
  int64_t cache_row, cache_col;
  bool cache_f32;
  int64_t max_position;
  int rot_dim, half, rot_units, pass_units, heads_per_block;
  bool inverse;
  ::baracuda::detail::RopeFrequencies freq;
};

/// y_a = x_a·c − x_b·s, y_b = x_b·c + x_a·s in f32, each with one product
/// rounded and one fused (rope.hpp).
__device__ __forceinline__ void rotate(float xa, float xb, float c, float s,
                                       float *ya, float *yb) {
  *ya = __fmaf_rn(xa, c, -__fmul_rn(xb, s));
  *yb = __fmaf_rn(xb, c, __fmul_rn(xa, s));
}

/// Unit r of a head's rotated dims (V = 1: one pair, any innermost stride).
template <class T, RopeStyle S, int V>
__device__ __forceinline__ void
rotate_unit(const T *in, int64_t in_dim, T *out, int64_t out_dim, int r,
            const float *cs, const float *sn, int half) {
  using convert::from_opmath;
  using convert::to_opmath;
  if constexpr (V == 1) {
    const int ia = S == RopeStyle::NeoX ? r : 2 * r,
              ib = S == RopeStyle::NeoX ? r + half : 2 * r + 1;
    float ya, yb;
    rotate(to_opmath(in[ia * in_dim]), to_opmath(in[ib * in_dim]), cs[r], sn[r],
           &ya, &yb);
    out[ia * out_dim] = from_opmath<T>(ya);
    out[ib * out_dim] = from_opmath<T>(yb);
  } else if constexpr (S == RopeStyle::NeoX) {
    const int j0 = r * V;
    const AlignedVector<T, V> a = load_vector<V>(in + j0),
                              b = load_vector<V>(in + j0 + half);
    AlignedVector<T, V> ya, yb;
    BARACUDA_UNROLL
    for (int e = 0; e < V; ++e) {
      float u, w;
      rotate(to_opmath(a.val[e]), to_opmath(b.val[e]), cs[j0 + e], sn[j0 + e],
             &u, &w);
      ya.val[e] = from_opmath<T>(u);
      yb.val[e] = from_opmath<T>(w);
    }
    store_vector<V>(out + j0, ya);
    store_vector<V>(out + j0 + half, yb);
  } else {
    const int e0 = r * V;
    const AlignedVector<T, V> x = load_vector<V>(in + e0);
    AlignedVector<T, V> y;
    BARACUDA_UNROLL
    for (int e = 0; e < V; e += 2) {
      float u, w;
      const int j = e0 / 2 + e / 2;
      rotate(to_opmath(x.val[e]), to_opmath(x.val[e + 1]), cs[j], sn[j], &u,
             &w);
      y.val[e] = from_opmath<T>(u);
      y.val[e + 1] = from_opmath<T>(w);
    }
    store_vector<V>(out + e0, y);
  }
}

template <class T, RopeStyle S, int V> __global__ void rope_kernel(Params p) {
  BARACUDA_DYNAMIC_SHARED(float, cs); // cos of every pair, then sin
  float *const sn = cs + p.half;
  const int64_t t = blockIdx.x;
  const int64_t pos =
      p.positions64
          ? static_cast<const int64_t *>(p.positions)[t * p.position_stride]
          : static_cast<const int32_t *>(p.positions)[t * p.position_stride];
  for (int j = threadIdx.x; j < p.half; j += blockDim.x) {
    float c, s;
    if (p.cache != nullptr) {
      // Positions outside the cache are clamped to it (rope.hpp).
      const int64_t row = pos < 0                 ? 0
                          : pos >= p.max_position ? p.max_position - 1
                                                  : pos;
      const int64_t oc = row * p.cache_row + j * p.cache_col,
                    os = oc + p.half * p.cache_col;
      if (p.cache_f32) {
        c = static_cast<const float *>(p.cache)[oc];
        s = static_cast<const float *>(p.cache)[os];
      } else {
        c = convert::to_opmath(static_cast<const T *>(p.cache)[oc]);
        s = convert::to_opmath(static_cast<const T *>(p.cache)[os]);
      }
    } else {
      const float angle =
          __fmul_rn(static_cast<float>(pos), p.freq.inv_freq[j]);
      c = __fmul_rn(pmath::cos(angle), p.freq.attention_factor);
      s = __fmul_rn(pmath::sin(angle), p.freq.attention_factor);
    }
    cs[j] = c;
    sn[j] = p.inverse ? -s : s;
  }
  __syncthreads();
  const int per_head = p.rot_units + p.pass_units;
  const int first = static_cast<int>(blockIdx.y) * p.heads_per_block;
  const int total = p.q.heads + p.k.heads;
  const int heads =
      total - first < p.heads_per_block ? total - first : p.heads_per_block;
  for (int u = threadIdx.x; u < heads * per_head; u += blockDim.x) {
    const int hh = first + u / per_head, r = u % per_head;
    // Field by field (a reference to p.q or p.k would copy the parameters to
    // local memory).
    const bool is_q = hh < p.q.heads;
    const int64_t h = is_q ? hh : hh - p.q.heads;
    const int64_t in_dim = is_q ? p.q.in_dim : p.k.in_dim,
                  out_dim = is_q ? p.q.out_dim : p.k.out_dim;
    const T *in = static_cast<const T *>(is_q ? p.q.in : p.k.in) +
                  t * (is_q ? p.q.in_token : p.k.in_token) +
                  h * (is_q ? p.q.in_head : p.k.in_head);
    T *out = static_cast<T *>(is_q ? p.q.out : p.k.out) +
             t * (is_q ? p.q.out_token : p.k.out_token) +
             h * (is_q ? p.q.out_head : p.k.out_head);
    if (r < p.rot_units) {
      rotate_unit<T, S, V>(in, in_dim, out, out_dim, r, cs, sn, p.half);
    } else if (is_q ? p.q.copy : p.k.copy) {
      const int64_t e0 = p.rot_dim + static_cast<int64_t>(r - p.rot_units) * V;
      if constexpr (V == 1)
        out[e0 * out_dim] = in[e0 * in_dim];
      else
        store_vector<V>(out + e0, load_vector<V>(in + e0));
    }
  }
}

/// Every row of the view (its base, token and head strides) 16-byte aligned and
/// its innermost stride 1.
inline bool rows_aligned(const void *data, int64_t token, int64_t head,
                         int64_t dim, int vec) {
  return dim == 1 && reinterpret_cast<std::uintptr_t>(data) % 16 == 0 &&
         token % vec == 0 && head % vec == 0;
}

Rows rows_of(const ConstDynTensor &in, const DynTensor &out) {
  Rows r;
  r.in = in.data, r.out = out.data;
  r.in_token = in.stride[0], r.in_head = in.stride[1], r.in_dim = in.stride[2];
  r.out_token = out.stride[0], r.out_head = out.stride[1],
  r.out_dim = out.stride[2];
  r.heads = static_cast<int>(in.shape.dims[1]);
  r.copy = !(in.data == out.data &&
             in.stride == out.stride); // in place: the pass-through dims stay
  return r;
}

template <class T, RopeStyle S, int V>
Status launch(const ::baracuda::detail::ExecContext &ctx, const Params &p,
              unsigned tokens, int total_heads) {
  const int groups = (total_heads + p.heads_per_block - 1) / p.heads_per_block;
  const int units = p.heads_per_block * (p.rot_units + p.pass_units);
  const int threads = units >= 256 ? 256 : (units + 31) / 32 * 32;
  BARACUDA_LAUNCH(dim3(tokens, static_cast<unsigned>(groups)),
                  dim3(static_cast<unsigned>(threads)),
                  2 * p.half * sizeof(float), ctx.stream, rope_kernel<T, S, V>)
  (p);
  const auto e = launch::take_last_error();
  if (!e.failed)
    return {};
  return Error::device(
      std::string("RopePlan: kernel launch failed: ") + e.message, e.code);
}

template <class T>
Status rope_launch(const ::baracuda::detail::ExecContext &ctx,
                   const ::baracuda::detail::RopeLaunch &a) {
  constexpr int kVec = static_cast<int>(16 / sizeof(T));
  Params p{};
  p.q = rows_of(a.q, a.q_out);
  if (a.kv_heads > 0)
    p.k = rows_of(a.k, a.k_out);
  p.positions = a.positions.data, p.position_stride = a.positions.stride[0];
  p.positions64 = a.positions.kind == ElementKind::S64;
  p.cache = a.cached ? a.cache.data : nullptr;
  p.cache_row = a.cache.stride[0], p.cache_col = a.cache.stride[1];
  p.cache_f32 = a.cache.kind == ElementKind::F32;
  p.max_position = a.max_position;
  p.rot_dim = static_cast<int>(a.rot_dim),
  p.half = static_cast<int>(a.rot_dim / 2), p.inverse = a.inverse;
  p.freq = *a.freq;
  const bool copy = p.q.copy || (a.kv_heads > 0 && p.k.copy);
  const int pass = static_cast<int>(a.head_dim - a.rot_dim);
  bool vec = (a.style == RopeStyle::NeoX ? p.half : p.rot_dim) % kVec == 0 &&
             (!copy || pass % kVec == 0);
  for (const Rows *r : {&p.q, &p.k})
    if (r->heads > 0)
      vec = vec &&
            rows_aligned(r->in, r->in_token, r->in_head, r->in_dim, kVec) &&
            rows_aligned(r->out, r->out_token, r->out_head, r->out_dim, kVec);
  const int v = vec ? kVec : 1;
  p.rot_units =
      a.style == RopeStyle::NeoX ? p.half / v : (vec ? p.rot_dim / v : p.half);
  p.pass_units = copy ? pass / v : 0;
  // Heads per block: all of them, unless the tokens alone give fewer than four
  // blocks per SM.
  const int total = static_cast<int>(a.heads + a.kv_heads);
  const int64_t want = 4 * static_cast<int64_t>(ctx.multiprocessor_count);
  const int64_t groups =
      a.tokens >= want ? 1 : (want + a.tokens - 1) / a.tokens;
  p.heads_per_block =
      static_cast<int>((total + (groups < total ? groups : total) - 1) /
                       (groups < total ? groups : total));
  const auto tokens = static_cast<unsigned>(a.tokens);
  if (a.style == RopeStyle::NeoX)
    return vec ? launch<T, RopeStyle::NeoX, kVec>(ctx, p, tokens, total)
               : launch<T, RopeStyle::NeoX, 1>(ctx, p, tokens, total);
  return vec ? launch<T, RopeStyle::GptJ, kVec>(ctx, p, tokens, total)
             : launch<T, RopeStyle::GptJ, 1>(ctx, p, tokens, total);
}

} // namespace rope

BARACUDA_DEFINE_KIND_TABLE(detail::RopeTable, rope_table, detail::RopeTypes,
                           rope::rope_launch)

BARACUDA_DEVICE_NAMESPACE_END
