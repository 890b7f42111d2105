/// \file
/// \brief `DynTensor`: a rank- and dtype-erased tensor view, the argument type of the `dynamic::` plans
/// (which the typed `XxxPlan<T, N>` templates wrap, and which the profiler and language bindings use).
#pragma once

#include <array>
#include <cstdint>

#include "baracuda/core/element.hpp"
#include "baracuda/core/tensor.hpp"

namespace baracuda {

/// Pointer, element kind, shape and element strides. Same rules as `TensorRef`/`TensorMut`.
struct DynTensor {
  void* data = nullptr;
  ElementKind kind = ElementKind::F32;
  Shape shape;
  std::array<int64_t, kMaxRank> stride{};

  template <class T, size_t N>
  static DynTensor of(const TensorRef<T, N>& t) {
    return make(const_cast<T*>(t.data), t.shape, t.stride);
  }
  template <class T, size_t N>
  static DynTensor of(const TensorMut<T, N>& t) {
    return make(t.data, t.shape, t.stride);
  }
  /// A dense row-major tensor.
  static DynTensor dense(void* data, ElementKind kind, const Shape& shape);

  int rank() const { return shape.rank; }
  int64_t numel() const { return shape.numel(); }
  /// Dense row-major (dimensions of extent 1 may have any stride).
  bool is_contiguous() const;
  /// Some dimension of extent > 1 has stride 0.
  bool has_broadcast() const;
  /// Bytes from `data` to one past the last element, assuming non-negative strides (0 when empty).
  int64_t span_bytes() const;

 private:
  template <class T, size_t N>
  static DynTensor make(T* p, const std::array<int64_t, N>& shape, const std::array<int64_t, N>& stride) {
    static_assert(N <= kMaxRank, "rank above kMaxRank");
    DynTensor d;
    d.data = static_cast<void*>(p);
    d.kind = kind_of<T>;
    d.shape = Shape::of(shape);
    for (size_t i = 0; i < N; ++i) d.stride[i] = stride[i];
    return d;
  }
};

}  // namespace baracuda
