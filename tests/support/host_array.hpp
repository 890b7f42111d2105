// Test support: a 256-byte aligned host array, for tensors the host device reads through plain pointers and
// the kernels' alignment rules (16-byte loads) must see satisfied.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <vector>

namespace baracuda::test {

template <class T>
struct Arr {
  std::unique_ptr<T[], void (*)(void*)> p{nullptr, std::free};
  size_t n = 0;
  explicit Arr(size_t count, T fill = T{}) : n(count) {
    p.reset(static_cast<T*>(std::aligned_alloc(256, ((std::max<size_t>(count, 1) * sizeof(T) + 255) / 256) * 256)));
    for (size_t i = 0; i < n; ++i) p[i] = fill;
  }
  /// A copy of `v`, converted element by element.
  template <class V>
  static Arr from(const std::vector<V>& v) {
    Arr a(v.size());
    std::copy(v.begin(), v.end(), a.data());
    return a;
  }
  T* data() const { return p.get(); }
  T& operator[](size_t i) { return p[i]; }
  const T& operator[](size_t i) const { return p[i]; }
};

}  // namespace baracuda::test
