// The binary family's host reference, written independently of the device functors (functors.cuh):
// floating ops compute in long double (f64 inputs: in double, whose IEEE operations are already correctly
// rounded; x87 long double would round twice) with std:: math and round once to the element type with the
// cast family's reference formats — but the functions (pow, atan2, hypot) are evaluated in long double for
// every kind (`fn`), as docs/testing.md's precision policy says; integer ops compute the exact value in __int128 and wrap it to the
// element type. Backward formulas are the mathematical derivatives with PyTorch's conventions at the
// special points (see binary.hpp).
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "device/host_loop.hpp"
#include "ops/binary/dispatch.hpp"
#include "core/reference_formats.hpp"

namespace baracuda::reference {
namespace {

using int128 = __int128;

// ---------------------------------------------------------------------------------------------------
// Element values
// ---------------------------------------------------------------------------------------------------

/// The working type: double for f64, long double otherwise.
template <class T>
using Work = std::conditional_t<std::is_same_v<T, double>, double, long double>;

template <class T>
Work<T> value_of(const T& x) {
  uint64_t b = 0;
  std::memcpy(&b, &x, sizeof(T));
  return static_cast<Work<T>>(decode(b, format_of<T>()));
}

/// v rounded to T and back: the forward result as autograd saves it.
template <class T>
Work<T> rounded(Work<T> v) {
  return value_of(store<T>(v));
}

/// The opmath type the devices round intermediate quotients to (PyTorch's div rounding modes compute
/// a / b in it before rounding the quotient to an integer).
template <class T>
Work<T> to_opmath(Work<T> v) {
  if constexpr (std::is_same_v<T, double>)
    return v;
  else
    return static_cast<long double>(static_cast<float>(v));
}

/// The exact integer `r` wrapped into T (two's complement, modulo 2^bits).
template <class T>
T wrap(int128 r) {
  return static_cast<T>(static_cast<uint64_t>(static_cast<unsigned __int128>(r)));
}

// ---------------------------------------------------------------------------------------------------
// The reference ops: fwd (floating), fwd_int (exact integers; absent where the op has no integer form),
// grad (dA, dB at the working precision; T gives the saved result's rounding)
// ---------------------------------------------------------------------------------------------------

template <class W>
struct Pair {
  W da, db;
};

/// A libm function evaluated in long double and rounded once to the working type W (for f64 data, more
/// accurate than double's libm, which is not correctly rounded).
template <class W, class F, class... A>
W fn(F f, A... a) {
  return static_cast<W>(f(static_cast<long double>(a)...));
}

namespace ref {

struct Add {
  template <class W> static W fwd(W a, W b) { return a + b; }
  static int128 fwd_int(int128 a, int128 b) { return a + b; }
  template <class T, class W> static Pair<W> grad(W dy, W, W) { return {dy, dy}; }
};

struct Sub {
  template <class W> static W fwd(W a, W b) { return a - b; }
  static int128 fwd_int(int128 a, int128 b) { return a - b; }
  template <class T, class W> static Pair<W> grad(W dy, W, W) { return {dy, -dy}; }
};

struct Mul {
  template <class W> static W fwd(W a, W b) { return a * b; }
  static int128 fwd_int(int128 a, int128 b) { return a * b; }
  template <class T, class W> static Pair<W> grad(W dy, W a, W b) { return {dy * b, dy * a}; }
};

struct Div {
  template <class W> static W fwd(W a, W b) { return a / b; }
  // d(a/b)/db = -a / b².
  template <class T, class W> static Pair<W> grad(W dy, W a, W b) { return {dy / b, -dy * a / (b * b)}; }
};

struct Pow {
  template <class W> static W fwd(W a, W b) {
    return fn<W>([](long double x, long double y) { return std::pow(x, y); }, a, b);
  }
  // d/da = b·a^(b-1) (0 where b = 0); d/db = a^b·ln a (0 where a = 0 and b >= 0).
  template <class T, class W> static Pair<W> grad(W dy, W a, W b) {
    const W da = (b == 0) ? W(0) : dy * (b * std::pow(a, b - 1));
    const W y = rounded<T>(std::pow(a, b));
    const W db = dy * ((a == 0 && b >= 0) ? W(0) : y * std::log(a));
    return {da, db};
  }
};

/// max/min of two values of which neither is NaN; between zeros, +0 is the larger.
template <class W>
bool greater(W a, W b) {
  if (a == 0 && b == 0) return !std::signbit(a) && std::signbit(b);
  return a > b;
}

/// maximum (kMax) and minimum: NaN when either input is NaN. The subgradient PyTorch uses: all of dy to the
/// chosen input, half to each on a tie, all of dy to both when either is NaN (no ordering).
template <bool kMax>
struct Extremum {
  template <class W> static W fwd(W a, W b) {
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<W>::quiet_NaN();
    return (kMax ? greater(b, a) : greater(a, b)) ? b : a;
  }
  static int128 fwd_int(int128 a, int128 b) { return (kMax ? a < b : b < a) ? b : a; }
  template <class T, class W> static Pair<W> grad(W dy, W a, W b) {
    if (std::isnan(a) || std::isnan(b)) return {dy, dy};
    if (a == b) return {dy / 2, dy / 2};
    return (kMax ? a > b : a < b) ? Pair<W>{dy, 0} : Pair<W>{0, dy};
  }
};
using Maximum = Extremum<true>;
using Minimum = Extremum<false>;

struct Atan2 {
  template <class W> static W fwd(W a, W b) {
    return fn<W>([](long double x, long double y) { return std::atan2(x, y); }, a, b);
  }
  // d atan2(a, b) = (b·da − a·db) / (a² + b²).
  template <class T, class W> static Pair<W> grad(W dy, W a, W b) {
    const W r2 = a * a + b * b;
    return {dy * b / r2, -dy * a / r2};
  }
};

struct Fmod {
  template <class W> static W fwd(W a, W b) { return std::fmod(a, b); }
  static int128 fwd_int(int128 a, int128 b) { return b == 0 ? 0 : a % b; }  // % truncates, as fmod
  // d/db = −trunc(a / b), the quotient as PyTorch's div(rounding_mode="trunc") has it (rounded to opmath).
  template <class T, class W> static Pair<W> grad(W dy, W a, W b) {
    return {dy, -dy * std::trunc(to_opmath<T>(a / b))};
  }
};

struct Remainder {
  template <class W> static W fwd(W a, W b) {
    // a − floor(a/b)·b: the exact fmod moved into the divisor's sign (PyTorch keeps fmod's zero).
    const W r = std::fmod(a, b);
    if (r == 0 || std::isnan(r) || std::signbit(r) == std::signbit(b)) return r;
    return r + b;
  }
  static int128 fwd_int(int128 a, int128 b) {
    if (b == 0) return 0;
    const int128 r = a % b;
    return (r != 0 && (r < 0) != (b < 0)) ? r + b : r;
  }
  // d/db = −floor(a / b), the floor of the exact quotient (not of a rounded one: 1 / 0.1 rounds to 10 in
  // f64, its floor is 9), with Python's conventions at the special points, as PyTorch's
  // div(rounding_mode="floor"): IEEE a / b when b = 0; -1 for a finite a ≠ 0 over an infinite b of the
  // other sign; a zero quotient keeps the sign of a / b.
  template <class T, class W> static Pair<W> grad(W dy, W a, W b) { return {dy, -dy * floor_quotient(a, b)}; }

  template <class W> static W floor_quotient(W a, W b) {
    if (b == 0 || std::isnan(a) || std::isnan(b) || std::isinf(a)) return b == 0 ? a / b : std::numeric_limits<W>::quiet_NaN();
    long double q;
    if (std::isinf(b)) {
      q = (a != 0 && std::signbit(a) != std::signbit(b)) ? -1.0L : 0.0L;
    } else {
      // The truncated quotient is an integer: (a − fmod(a, b)) / b, evaluated in long double and rounded
      // to the nearest integer (exact for quotients below 2^62); one less when the exact quotient is
      // negative and not an integer.
      const long double r = std::fmod(static_cast<long double>(a), static_cast<long double>(b));
      q = std::nearbyint((static_cast<long double>(a) - r) / static_cast<long double>(b));
      if (r != 0 && std::signbit(r) != std::signbit(b)) q -= 1;
    }
    if (q == 0) return std::copysign(W(0), a / b);
    return static_cast<W>(q);
  }
};

struct Copysign {
  template <class W> static W fwd(W a, W b) { return std::copysign(a, b); }
  // d/da = sign agreement (y / a), 0 at a = 0; d/db = 0.
  template <class T, class W> static Pair<W> grad(W dy, W a, W b) {
    const W y = rounded<T>(std::copysign(a, b));
    return {dy * (a == 0 ? W(0) : y / a), W(0)};
  }
};

struct Hypot {
  template <class W> static W fwd(W a, W b) {
    return fn<W>([](long double x, long double y) { return std::hypot(x, y); }, a, b);
  }
  template <class T, class W> static Pair<W> grad(W dy, W a, W b) {
    const W y = rounded<T>(std::hypot(a, b));
    return {dy * a / y, dy * b / y};
  }
};

struct Eq {
  template <class W> static bool cmp(W a, W b) { return a == b; }
};
struct Ne {
  template <class W> static bool cmp(W a, W b) { return !(a == b); }
};
struct Lt {
  template <class W> static bool cmp(W a, W b) { return a < b; }
};
struct Le {
  template <class W> static bool cmp(W a, W b) { return a < b || a == b; }
};
struct Gt {
  template <class W> static bool cmp(W a, W b) { return b < a; }
};
struct Ge {
  template <class W> static bool cmp(W a, W b) { return b < a || a == b; }
};

}  // namespace ref

template <BinaryOp>
struct RefOf;
template <CompareOp>
struct RefCmpOf;
#define BARACUDA_BINARY_OP(Enum, name, types, backward, doc)                            \
  template <>                                                                           \
  struct RefOf<BinaryOp::Enum> {                                                        \
    using type = ref::Enum;                                                             \
  };
#define BARACUDA_COMPARE_OP(Enum, name, types, doc) \
  template <>                                       \
  struct RefCmpOf<CompareOp::Enum> {                \
    using type = ref::Enum;                         \
  };
#include "baracuda/ops/binary_ops.def"
#undef BARACUDA_BINARY_OP
#undef BARACUDA_COMPARE_OP

template <class T>
constexpr bool kIsInt = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// ---------------------------------------------------------------------------------------------------
// The loops
// ---------------------------------------------------------------------------------------------------

/// out = f(a[i], b[i]) over the broadcast views of `l` (TOut: T or bool). Every input is read before out is
/// written, so the in-place case (out == a or b, same strides) is safe.
template <class T, class TOut, class F>
Status host_map2(const detail::BinaryLaunch& l, F f) {
  const auto* a = static_cast<const T*>(l.a.data);
  const auto* b = static_cast<const T*>(l.b.data);
  auto* out = static_cast<TOut*>(l.out.data);
  detail::for_each_strided<3>(l.out.shape, {l.out.stride.data(), l.a.stride.data(), l.b.stride.data()},
                              [&](const std::array<int64_t, 3>& off) { out[off[0]] = f(a[off[1]], b[off[2]]); });
  return {};
}

template <BinaryOp Op, class T>
Status host_forward(const detail::ExecContext&, const detail::BinaryLaunch& l) {
  using R = typename RefOf<Op>::type;
  return host_map2<T, T>(l, [](T a, T b) {
    if constexpr (kIsInt<T>)
      return wrap<T>(R::fwd_int(a, b));
    else
      return store<T>(R::fwd(value_of(a), value_of(b)));
  });
}

template <CompareOp Op, class T>
Status host_compare(const detail::ExecContext&, const detail::BinaryLaunch& l) {
  using R = typename RefCmpOf<Op>::type;
  return host_map2<T, bool>(l, [](T a, T b) {
    if constexpr (kIsInt<T>)
      return R::cmp(static_cast<int128>(a), static_cast<int128>(b));
    else
      return R::cmp(value_of(a), value_of(b));
  });
}

template <BinaryOp Op, class T>
Status host_backward(const detail::ExecContext&, const detail::BinaryBackwardLaunch& l) {
  using R = typename RefOf<Op>::type;
  const auto* dy = static_cast<const T*>(l.dy.data);
  const auto* a = static_cast<const T*>(l.a.data);
  const auto* b = static_cast<const T*>(l.b.data);
  auto* da = static_cast<T*>(l.da.data);
  auto* db = static_cast<T*>(l.db.data);
  detail::for_each_strided<5>(
      l.dy.shape, {l.da.stride.data(), l.db.stride.data(), l.dy.stride.data(), l.a.stride.data(), l.b.stride.data()},
      [&](const std::array<int64_t, 5>& off) {
        const Pair<Work<T>> g = R::template grad<T>(value_of(dy[off[2]]), value_of(a[off[3]]), value_of(b[off[4]]));
        // One wanted gradient: both views are the same tensor (see GradOutputs); write it once.
        if (l.outputs != detail::GradOutputs::OnlyB) da[off[0]] = store<T>(g.da);
        if (l.outputs != detail::GradOutputs::OnlyA) db[off[1]] = store<T>(g.db);
      });
  return {};
}

}  // namespace

const detail::BinaryTables& binary_tables() {
  using detail::EnumTag;
  static constexpr detail::BinaryTables tables = detail::make_binary_tables<void>(
      []<BinaryOp Op, class T>(EnumTag<Op>, std::type_identity<T>) { return &host_forward<Op, T>; },
      []<CompareOp Op, class T>(EnumTag<Op>, std::type_identity<T>) { return &host_compare<Op, T>; },
      []<BinaryOp Op, class T>(EnumTag<Op>, std::type_identity<T>) { return &host_backward<Op, T>; });
  return tables;
}

}  // namespace baracuda::reference
