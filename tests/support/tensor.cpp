#include "tensor.hpp"

#include <cstring>

#include "numeric.hpp"

namespace baracuda::test {

Strided dense_layout(const Shape& shape) {
  Strided l;
  int64_t s = 1;
  for (int d = shape.rank - 1; d >= 0; --d) {
    l.stride[d] = s;
    s *= shape.dims[d];
  }
  return l;
}

int64_t storage_elements(const Shape& shape, const Strided& l) {
  if (shape.numel() == 0) return 0;
  int64_t hi = l.offset;
  for (int d = 0; d < shape.rank; ++d)
    if (l.stride[d] > 0) hi += (shape.dims[d] - 1) * l.stride[d];
  return hi + 1;
}

Result<DeviceTensor> make_device_tensor(const Stream& stream, ElementKind k, const Shape& shape, const Strided& l,
                                        const std::vector<uint8_t>& init, int64_t min_storage) {
  DeviceTensor t;
  t.storage = std::max(storage_elements(shape, l), min_storage);
  auto b = Buffer::allocate(stream, static_cast<size_t>(storage_bytes(k, t.storage)));
  if (!b) return b.error();
  t.buffer = std::move(*b);
  if (!init.empty()) {
    if (init.size() != t.buffer.size()) return Error::internal("make_device_tensor: init has the wrong size");
    BARACUDA_TRY(t.buffer.copy_from_host(init.data(), init.size()));
  }
  // An empty storage has no memory: null stays null (an offset from a null pointer is undefined).
  t.view.data = t.buffer.data() == nullptr ? nullptr
                                           : static_cast<uint8_t*>(t.buffer.data()) + l.offset * element_bytes(k);
  t.view.kind = k;
  t.view.shape = shape;
  t.view.stride = l.stride;
  return t;
}

std::vector<uint8_t> download(const DeviceTensor& t) {
  std::vector<uint8_t> v(t.buffer.size());
  if (!v.empty()) (void)t.buffer.copy_to_host(v.data(), v.size());
  return v;
}

namespace {
template <class F>
void for_each_index(const Shape& shape, const Strided& l, F&& f) {
  const int64_t n = shape.numel();
  for (int64_t i = 0; i < n; ++i) {
    int64_t rem = i, off = l.offset;
    for (int d = shape.rank - 1; d >= 0; --d) {
      off += (rem % shape.dims[d]) * l.stride[d];
      rem /= shape.dims[d];
    }
    f(i, off);
  }
}
}  // namespace

std::vector<uint8_t> gather(ElementKind k, const std::vector<uint8_t>& storage, const Shape& shape, const Strided& l) {
  const int w = element_bytes(k);
  std::vector<uint8_t> out(static_cast<size_t>(shape.numel() * w));
  for_each_index(shape, l, [&](int64_t i, int64_t off) { std::memcpy(&out[i * w], &storage[off * w], w); });
  return out;
}

void scatter(ElementKind k, const std::vector<uint8_t>& logical, std::vector<uint8_t>* storage, const Shape& shape,
             const Strided& l) {
  const int w = element_bytes(k);
  for_each_index(shape, l, [&](int64_t i, int64_t off) { std::memcpy(&(*storage)[off * w], &logical[i * w], w); });
}

std::vector<LayoutCase> unary_layouts(bool packed) {
  std::vector<LayoutCase> v;
  auto dense = [&](std::string name, Shape s) {
    LayoutCase c{std::move(name), s, dense_layout(s), dense_layout(s), false};
    v.push_back(c);
  };
  dense("empty", Shape{0});
  dense("one", Shape{1});
  dense("257x259", Shape{257, 259});
  if (packed) {
    dense("odd33x7", Shape{33, 7});
    return v;
  }
  {  // Non-contiguous in and out: the input walks columns with a step of 2, the output has padded rows.
    LayoutCase c{"strided", Shape{37, 41}, {}, {}, false};
    c.in.stride = {2, 74};
    c.out.stride = {48, 1};
    v.push_back(c);
  }
  {  // The input broadcasts its first dimension.
    LayoutCase c{"broadcast", Shape{33, 65}, {}, dense_layout(Shape{33, 65}), false};
    c.in.stride = {0, 1};
    v.push_back(c);
  }
  {  // The input walks each row backwards (negative stride).
    LayoutCase c{"reversed", Shape{3, 300}, {}, dense_layout(Shape{3, 300}), false};
    c.in.stride = {300, -1};
    c.in.offset = 299;
    v.push_back(c);
  }
  {  // Rank 8 with extent-1 dimensions and the input's last two dimensions transposed.
    const Shape s{2, 1, 3, 1, 2, 3, 5, 7};
    LayoutCase c{"rank8", s, dense_layout(s), dense_layout(s), false};
    c.in.stride[6] = 1;
    c.in.stride[7] = 5;
    v.push_back(c);
  }
  {
    LayoutCase c{"inplace", Shape{67, 33}, dense_layout(Shape{67, 33}), dense_layout(Shape{67, 33}), true};
    v.push_back(c);
  }
  return v;
}

}  // namespace baracuda::test
