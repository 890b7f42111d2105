// The ternary family's host reference, written independently of the kernels (device.cu) from the formulas in
// ternary.hpp: values decode exactly with the cast family's reference formats, compute in the opmath type
// (float for f16/bf16/f32, double for f64: the devices' IEEE operations, each correctly rounded, so the
// devices must agree with it bit for bit) with std::fma where the formula is fused, and round once to T.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "core/reference_formats.hpp"
#include "device/host_loop.hpp"
#include "ops/ternary/dispatch.hpp"

namespace baracuda::reference {
namespace {

template <class T>
using Math = std::conditional_t<std::is_same_v<T, double>, double, float>;

template <class T>
constexpr bool kIsInt = std::is_integral_v<T> && !std::is_same_v<T, bool>;

template <class T>
Math<T> load(const T& x) {
  return static_cast<Math<T>>(value_of(x));
}
template <class T>
T round_to(Math<T> v) {
  return store<T>(static_cast<long double>(v));
}

template <class M>
struct Gradients {
  M da, db, dc;
};

namespace ref {

struct Clamp {
  template <class M>
  static M fwd(M x, M lo, M hi, M) {
    if (std::isnan(lo) || std::isnan(hi)) return std::numeric_limits<M>::quiet_NaN();
    return std::min(std::max(x, lo), hi);
  }
  template <class T>
  static T fwd_int(T x, T lo, T hi) { return std::min(std::max(x, lo), hi); }
  template <class M>
  static Gradients<M> grad(M dy, M x, M lo, M hi, M) {
    const bool inside = x >= lo && x <= hi;
    return {inside ? dy : M(0), (x < lo && lo < hi) ? dy : M(0), (x > hi || hi < lo) ? dy : M(0)};
  }
};

struct Lerp {
  template <class M>
  static M fwd(M start, M end, M weight, M) {
    const M diff = end - start;
    if (std::abs(weight) < M(0.5)) return std::fma(weight, diff, start);
    return std::fma(-diff, M(1) - weight, end);
  }
  template <class M>
  static Gradients<M> grad(M dy, M start, M end, M weight, M) {
    return {dy * (M(1) - weight), dy * weight, dy * (end - start)};
  }
};

struct Addcmul {
  template <class M>
  static M fwd(M self, M t1, M t2, M value) { return std::fma(value, t1 * t2, self); }
  template <class M>
  static Gradients<M> grad(M dy, M, M t1, M t2, M value) { return {dy, dy * (t2 * value), dy * (t1 * value)}; }
};

struct Addcdiv {
  template <class M>
  static M fwd(M self, M t1, M t2, M value) { return std::fma(value, t1 / t2, self); }
  template <class M>
  static Gradients<M> grad(M dy, M, M t1, M t2, M value) {
    return {dy, dy * (value / t2), -dy * value * t1 / (t2 * t2)};
  }
};

struct Fma {
  template <class M>
  static M fwd(M a, M b, M c, M) { return std::fma(a, b, c); }
  template <class M>
  static Gradients<M> grad(M dy, M a, M b, M, M) { return {dy * b, dy * a, dy}; }
};

}  // namespace ref

template <TernaryOp Op>
struct RefOf;
#define BARACUDA_TERNARY_REF(Enum, name, types, doc) \
  template <>                                        \
  struct RefOf<TernaryOp::Enum> {                    \
    using type = ref::Enum;                          \
  };
BARACUDA_TERNARY_OPS(BARACUDA_TERNARY_REF)
#undef BARACUDA_TERNARY_REF

// ---------------------------------------------------------------------------------------------------
// The loops. Every input of an element is read before its outputs are written, so the in-place cases
// (an output the same view as an input) are safe.
// ---------------------------------------------------------------------------------------------------

/// out = f(in0[i], in1[i], in2[i]) over the broadcast views of `l` (T0: the first input's element type).
template <class T0, class T, class F>
Status host_map3(const detail::TernaryLaunch& l, F f) {
  const auto* x = static_cast<const T0*>(l.in[0].data);
  const auto* y = static_cast<const T*>(l.in[1].data);
  const auto* z = static_cast<const T*>(l.in[2].data);
  auto* out = static_cast<T*>(l.out.data);
  detail::for_each_strided<4>(
      l.out.shape, {l.out.stride.data(), l.in[0].stride.data(), l.in[1].stride.data(), l.in[2].stride.data()},
      [&](const std::array<int64_t, 4>& o) { out[o[0]] = f(x[o[1]], y[o[2]], z[o[3]]); });
  return {};
}

template <TernaryOp Op, class T>
Status host_forward(const detail::ExecContext&, const detail::TernaryLaunch& l) {
  using R = typename RefOf<Op>::type;
  return host_map3<T, T>(l, [&](T a, T b, T c) {
    if constexpr (kIsInt<T>)
      return R::fwd_int(a, b, c);
    else
      return round_to<T>(R::fwd(load(a), load(b), load(c), static_cast<Math<T>>(l.value)));
  });
}

template <TernaryOp Op, class T>
Status host_backward(const detail::ExecContext&, const detail::TernaryBackwardLaunch& l) {
  using R = typename RefOf<Op>::type;
  const auto* dy = static_cast<const T*>(l.dy.data);
  const auto* a = static_cast<const T*>(l.in[0].data);
  const auto* b = static_cast<const T*>(l.in[1].data);
  const auto* c = static_cast<const T*>(l.in[2].data);
  T* g[3] = {static_cast<T*>(l.grad[0].data), static_cast<T*>(l.grad[1].data), static_cast<T*>(l.grad[2].data)};
  detail::for_each_strided<7>(l.dy.shape,
                              {l.grad[0].stride.data(), l.grad[1].stride.data(), l.grad[2].stride.data(),
                               l.dy.stride.data(), l.in[0].stride.data(), l.in[1].stride.data(),
                               l.in[2].stride.data()},
                              [&](const std::array<int64_t, 7>& o) {
                                const auto d = R::grad(load(dy[o[3]]), load(a[o[4]]), load(b[o[5]]), load(c[o[6]]),
                                                       static_cast<Math<T>>(l.value));
                                const Math<T> values[3] = {d.da, d.db, d.dc};
                                // A slot whose gradient was omitted aliases a wanted one: write each once.
                                for (int k = 0; k < 3; ++k)
                                  if (l.source[k] == k) g[k][o[k]] = round_to<T>(values[k]);
                              });
  return {};
}

template <class T>
Status host_where(const detail::ExecContext&, const detail::TernaryLaunch& l) {
  return host_map3<bool, T>(l, [](bool cond, T a, T b) { return cond ? a : b; });
}

template <class T>
Status host_where_backward(const detail::ExecContext&, const detail::TernaryBackwardLaunch& l) {
  const auto* cond = static_cast<const bool*>(l.in[0].data);
  const auto* dy = static_cast<const T*>(l.dy.data);
  T* g[2] = {static_cast<T*>(l.grad[0].data), static_cast<T*>(l.grad[1].data)};
  const T zero = round_to<T>(0);
  detail::for_each_strided<4>(
      l.dy.shape, {l.grad[0].stride.data(), l.grad[1].stride.data(), l.in[0].stride.data(), l.dy.stride.data()},
      [&](const std::array<int64_t, 4>& o) {
        const bool c = cond[o[2]];
        const T v = dy[o[3]];
        if (l.source[0] == 0) g[0][o[0]] = c ? v : zero;
        if (l.source[1] == 1) g[1][o[1]] = c ? zero : v;
      });
  return {};
}

}  // namespace

const detail::TernaryTables& ternary_tables() {
  using detail::EnumTag;
  static constexpr detail::TernaryTables tables = detail::make_ternary_tables(
      []<TernaryOp Op, class T>(EnumTag<Op>, std::type_identity<T>) { return &host_forward<Op, T>; },
      []<TernaryOp Op, class T>(EnumTag<Op>, std::type_identity<T>) { return &host_backward<Op, T>; },
      []<class T>(std::type_identity<T>) { return &host_where<T>; },
      []<class T>(std::type_identity<T>) { return &host_where_backward<T>; });
  return tables;
}

}  // namespace baracuda::reference
