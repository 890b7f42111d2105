/// \file
/// \brief `TensorRef<T, N>` / `TensorMut<T, N>`: non-owning strided views of device (or host) memory.
///
/// A view is a pointer, a shape of N int64 extents and N int64 strides counted in **elements** (not
/// bytes). Stride 0 broadcasts a dimension; negative strides are accepted only where a plan documents it.
/// Views never own or allocate memory. Kernels support rank ≤ `kMaxRank`.
///
/// Packed 4-bit kinds (`int4x2_t`, `uint4x2_t`): the pointer addresses the packed bytes, the shape counts
/// logical 4-bit elements, and the view must be contiguous (plans reject any other stride).
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <span>

#include "baracuda/core/element.hpp"

namespace baracuda {

/// The highest tensor rank kernels accept.
inline constexpr int kMaxRank = 8;

/// The most elements a shape may describe (2^56), and the farthest a view's strides may reach, in
/// elements: every element count, offset and byte size (up to 64 bits an element) then fits in int64, so
/// no size computed from a shape or its strides can overflow. Shapes and views beyond it are rejected
/// (`Shape::valid`, the plans' operand checks).
inline constexpr int64_t kMaxElements = int64_t{1} << 56;

/// A rank-erased shape: up to `kMaxRank` extents. A hashable value used in descriptors.
struct Shape {
  int rank = 0;
  std::array<int64_t, kMaxRank> dims{};

  Shape() = default;
  /// Over-long lists keep their rank (so `valid()` rejects them) and their first kMaxRank extents.
  Shape(std::initializer_list<int64_t> d) : rank(static_cast<int>(d.size())) {
    int i = 0;
    for (int64_t v : d) {
      if (i < kMaxRank) dims[i] = v;
      ++i;
    }
  }
  template <size_t N>
  static Shape of(const std::array<int64_t, N>& d) {
    static_assert(N <= kMaxRank, "rank above kMaxRank");
    Shape s;
    s.rank = static_cast<int>(N);
    for (size_t i = 0; i < N; ++i) s.dims[i] = d[i];
    return s;
  }
  int64_t operator[](int i) const { return dims[i]; }
  /// Product of the extents (1 for rank 0). Meaningful for a `valid()` shape; one whose count overflows
  /// int64 gives INT64_MAX rather than a wrapped (possibly 0) count.
  int64_t numel() const {
    int64_t n = 1;
    for (int i = 0; i < rank && i < kMaxRank; ++i)
      if (__builtin_mul_overflow(n, dims[i], &n)) return INT64_MAX;
    return n;
  }
  /// Rank within [0, kMaxRank], every extent ≥ 0, and the product of the non-zero extents at most
  /// `kMaxElements` (so every partial product, e.g. a row-major stride, fits too, even in an empty shape).
  bool valid() const {
    if (rank < 0 || rank > kMaxRank) return false;
    int64_t n = 1;
    for (int i = 0; i < rank; ++i) {
      if (dims[i] < 0) return false;
      if (dims[i] > 0) {
        if (dims[i] > kMaxElements / n) return false;
        n *= dims[i];
      }
    }
    return true;
  }
  friend bool operator==(const Shape& a, const Shape& b) {
    if (a.rank != b.rank) return false;
    for (int i = 0; i < a.rank && i < kMaxRank; ++i)
      if (a.dims[i] != b.dims[i]) return false;
    return true;
  }
  size_t hash() const;
};

/// "[4, 3, 2]".
std::string to_string(const Shape& s);

/// Row-major (C-order) strides of a shape, in elements.
template <size_t N>
constexpr std::array<int64_t, N> row_major_strides(const std::array<int64_t, N>& shape) {
  std::array<int64_t, N> st{};
  int64_t s = 1;
  for (size_t i = N; i-- > 0;) {
    st[i] = s;
    s *= shape[i];
  }
  return st;
}

namespace detail {
template <class T, size_t N>
struct TensorView {
  T* data = nullptr;
  std::array<int64_t, N> shape{};
  std::array<int64_t, N> stride{};

  static constexpr int rank = static_cast<int>(N);

  int64_t numel() const {
    int64_t n = 1;
    for (size_t i = 0; i < N; ++i) n *= shape[i];
    return n;
  }
  /// True when the view is dense row-major: every dimension of extent > 1 has the row-major stride.
  bool is_contiguous() const {
    int64_t expected = 1;
    for (size_t i = N; i-- > 0;) {
      if (shape[i] != 1 && stride[i] != expected) return false;
      expected *= shape[i];
    }
    return true;
  }
  /// True when some dimension of extent > 1 has stride 0 (a broadcast view).
  bool has_broadcast() const {
    for (size_t i = 0; i < N; ++i)
      if (shape[i] > 1 && stride[i] == 0) return true;
    return false;
  }
  Shape shape_value() const { return Shape::of(shape); }
};
}  // namespace detail

template <class T, size_t N>
struct TensorMut;

/// A read-only view: `const T*` + shape + strides (elements).
template <class T, size_t N>
struct TensorRef : detail::TensorView<const T, N> {
  using element_type = T;
  TensorRef() = default;
  TensorRef(const T* p, const std::array<int64_t, N>& shape, const std::array<int64_t, N>& stride)
      : detail::TensorView<const T, N>{p, shape, stride} {}
  /// A dense row-major view.
  static TensorRef dense(const T* p, const std::array<int64_t, N>& shape) {
    return TensorRef(p, shape, row_major_strides(shape));
  }
};

/// A writable view: `T*` + shape + strides (elements). Converts to `TensorRef`.
template <class T, size_t N>
struct TensorMut : detail::TensorView<T, N> {
  using element_type = T;
  TensorMut() = default;
  TensorMut(T* p, const std::array<int64_t, N>& shape, const std::array<int64_t, N>& stride)
      : detail::TensorView<T, N>{p, shape, stride} {}
  /// A dense row-major view.
  static TensorMut dense(T* p, const std::array<int64_t, N>& shape) {
    return TensorMut(p, shape, row_major_strides(shape));
  }
  operator TensorRef<T, N>() const {  // NOLINT: a writable view is readable
    return TensorRef<T, N>(this->data, this->shape, this->stride);
  }
};

/// Storage bytes a view may touch (offset of its last element + one element, rounded up to bytes for packed
/// types); 0 when empty. Assumes non-negative strides.
template <class V>
int64_t span_bytes(const V& v) {
  using T = std::remove_const_t<typename V::element_type>;
  if (v.numel() == 0) return 0;
  int64_t last = 0;
  for (int i = 0; i < V::rank; ++i) last += (v.shape[i] - 1) * v.stride[i];
  return storage_bytes(kind_of<T>, last + 1);
}

}  // namespace baracuda
