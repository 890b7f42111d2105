/// \file
/// \brief The rank- and dtype-erased tensor views the `dynamic::` plans take (which the typed `XxxPlan<T, N>`
/// templates wrap, and which the profiler and language bindings use): `DynTensor`, a writable view (an
/// operand a plan writes), and `ConstDynTensor`, a read-only one (an operand a plan reads). A `DynTensor`
/// converts to a `ConstDynTensor`, never the reverse, as `TensorMut` and `TensorRef` do.
#pragma once

#include <array>
#include <cstdint>
#include <type_traits>

#include "baracuda/core/element.hpp"
#include "baracuda/core/tensor.hpp"

namespace baracuda {

namespace detail {
/// Geometry shared by both views (no pointer): the queries every check and kernel launch asks of a view.
struct DynTensorLayout {
  ElementKind kind = ElementKind::F32;
  Shape shape;
  std::array<int64_t, kMaxRank> stride{};

  int rank() const { return shape.rank; }
  int64_t numel() const { return shape.numel(); }
  /// Dense row-major (dimensions of extent 1 may have any stride).
  bool is_contiguous() const;
  /// Some dimension of extent > 1 has stride 0.
  bool has_broadcast() const;
  /// Bytes from the data pointer to one past the last element, assuming non-negative strides (0 when
  /// empty).
  int64_t span_bytes() const;
  /// Dense row-major strides for `shape`.
  static std::array<int64_t, kMaxRank> dense_strides(const Shape& shape);
};
}  // namespace detail

/// Pointer, element kind, shape and element strides; `V` is `void` (writable) or `const void` (read-only).
/// Same rules as `TensorRef`/`TensorMut`. A default-constructed view is "missing": plans report a required
/// operand left so by name, and take it as "not given" where an operand is optional.
template <class V>
struct BasicDynTensor : detail::DynTensorLayout {
  static_assert(std::is_same_v<V, void> || std::is_same_v<V, const void>, "void or const void");
  V* data = nullptr;

  BasicDynTensor() = default;
  /// A writable view is also a read-only one.
  template <class W, class = std::enable_if_t<std::is_same_v<V, const void> && std::is_same_v<W, void>>>
  BasicDynTensor(const BasicDynTensor<W>& t) : detail::DynTensorLayout(t), data(t.data) {}  // NOLINT

  /// The view of a typed read-only tensor (a `ConstDynTensor` only).
  template <class T, size_t N, class W = V, class = std::enable_if_t<std::is_same_v<W, const void>>>
  static BasicDynTensor of(const TensorRef<T, N>& t) {
    return make(t.data, t.shape, t.stride);
  }
  /// The view of a typed writable tensor.
  template <class T, size_t N>
  static BasicDynTensor of(const TensorMut<T, N>& t) {
    return make(t.data, t.shape, t.stride);
  }
  /// A dense row-major tensor.
  static BasicDynTensor dense(V* data, ElementKind kind, const Shape& shape) {
    BasicDynTensor d;
    d.data = data;
    d.kind = kind;
    d.shape = shape;
    d.stride = dense_strides(shape);
    return d;
  }

 private:
  template <class P, size_t N>
  static BasicDynTensor make(P* p, const std::array<int64_t, N>& shape, const std::array<int64_t, N>& stride) {
    static_assert(N <= kMaxRank, "rank above kMaxRank");
    BasicDynTensor d;
    d.data = static_cast<V*>(p);
    d.kind = kind_of<std::remove_const_t<P>>;
    d.shape = Shape::of(shape);
    for (size_t i = 0; i < N; ++i) d.stride[i] = stride[i];
    return d;
  }
};

/// A writable erased view: an operand a plan writes.
using DynTensor = BasicDynTensor<void>;
/// A read-only erased view: an operand a plan reads. Made from a `DynTensor`, a `TensorRef` or a `TensorMut`.
using ConstDynTensor = BasicDynTensor<const void>;

}  // namespace baracuda
