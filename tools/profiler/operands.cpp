#include "operands.hpp"

#include <algorithm>
#include <cmath>
#include <thread>

#include "elements.hpp"

namespace baracuda::profiler {
namespace {

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

int64_t HostTensor::offset(int64_t linear) const {
  int64_t off = origin;
  for (int d = shape.rank - 1; d >= 0; --d) {
    const int64_t extent = shape.dims[d];
    off += (linear % extent) * stride[d];
    linear /= extent;
  }
  return off;
}

Result<HostTensor> Operand::download() const {
  HostTensor h;
  h.kind = view.kind;
  h.shape = view.shape;
  h.stride = view.stride;
  h.origin = kGuardBytes * 8 / element_bits(view.kind);
  h.bytes.resize(buffer.size());
  Status s = buffer.copy_to_host(h.bytes.data(), h.bytes.size());
  if (!s) return s.error();
  return h;
}

Result<Operand> make_operand(const Stream& stream, ElementKind kind, const Shape& shape, bool strided,
                             const std::vector<int>& storage) {
  if (!storage.empty()) {
    std::vector<int> sorted = storage, identity(static_cast<size_t>(shape.rank));
    std::sort(sorted.begin(), sorted.end());
    for (int d = 0; d < shape.rank; ++d) identity[static_cast<size_t>(d)] = d;
    if (sorted != identity)
      return Error::internal("make_operand: the storage order is not a permutation of the dimensions");
  }
  Operand op;
  op.view.kind = kind;
  op.view.shape = shape;
  int64_t step = 1;
  for (int k = shape.rank - 1; k >= 0; --k) {  // from the innermost dimension in memory
    const int d = storage.empty() ? k : storage[static_cast<size_t>(k)];
    const int64_t unit = (strided && d == shape.rank - 1) ? 2 : 1;
    op.view.stride[d] = step * unit;
    step *= shape.dims[d] * unit;
  }
  const int64_t elements = shape.numel() == 0 ? 0 : step;
  auto buffer = Buffer::allocate(stream, static_cast<size_t>(storage_bytes(kind, elements) + 2 * kGuardBytes));
  if (!buffer) return buffer.error();
  op.buffer = std::move(buffer).value();
  op.view.data = static_cast<uint8_t*>(op.buffer.data()) + kGuardBytes;
  return op;
}

ValueRange input_range(ElementKind in, ElementKind out) {
  if (in == ElementKind::Bool) return {0, 1, true};
  ValueRange r{-100, 100, is_integral(in)};
  r.lo = std::max({r.lo, min_finite(in), min_finite(out)});
  r.hi = std::min({r.hi, max_finite(in), max_finite(out)});
  return r;
}

Status fill_random(Operand& operand, const ValueRange& range, uint64_t seed) {
  const ElementKind kind = operand.view.kind;
  const int64_t count = static_cast<int64_t>(operand.buffer.size()) * 8 / element_bits(kind);
  std::vector<uint8_t> host(operand.buffer.size());
  const uint64_t base = seed * 0x2545F4914F6CDD1Dull + static_cast<uint64_t>(kind);
  // Element i is a function of (base, i) alone (splitmix64's i-th output), so chunks fill in parallel.
  // Chunks start at even indices: two packed 4-bit elements share a byte.
  auto fill = [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      uint64_t state = base + static_cast<uint64_t>(i) * 0x9E3779B97F4A7C15ull;
      const double u = static_cast<double>(splitmix64(state) >> 11) * 0x1.0p-53;  // [0, 1)
      double v = range.lo + u * (range.hi - range.lo);
      if (range.integral) v = std::clamp(std::floor(v + 0.5), range.lo, range.hi);
      store_element(kind, host.data(), i, v);
    }
  };
  constexpr int64_t kChunk = int64_t{1} << 22;
  const int64_t threads = std::min<int64_t>({count / kChunk + 1, std::max(1u, std::thread::hardware_concurrency()), 8});
  if (threads <= 1) {
    fill(0, count);
  } else {
    std::vector<std::thread> pool;
    const int64_t per = (count / threads + 1) & ~int64_t{1};
    for (int64_t t = 0; t < threads; ++t)
      pool.emplace_back(fill, std::min(count, t * per), std::min(count, (t + 1) * per));
    for (std::thread& th : pool) th.join();
  }
  return operand.buffer.copy_from_host(host.data(), host.size());
}

Status fill_sentinel(Operand& operand, uint8_t byte) { return operand.buffer.fill_bytes(byte); }

}  // namespace baracuda::profiler
