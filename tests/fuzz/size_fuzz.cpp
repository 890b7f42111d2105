// libFuzzer target: the size arithmetic of buffers and shapes on the host and sim devices. Allocations above
// the library's cap must be refused (never a short buffer), copies past a buffer's end must be refused
// (offset + bytes computed without wrapping), element counts must not wrap, and `allocate_for` must refuse
// counts whose byte size does not fit.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "baracuda/baracuda.hpp"
#include "fuzz_support.hpp"

namespace {

[[noreturn]] void broken(const char* what) {
  std::fprintf(stderr, "fuzz invariant broken: %s\n", what);
  std::abort();
}

/// A size: small (really allocated), or above the allocation cap, up to SIZE_MAX (must be refused; sizes
/// between are left out: they would really be tried, and fail only for want of memory).
size_t size_of(baracuda::fuzz::FuzzInput& in) {
  if (in.chance(180)) return in.pick(4096);
  const size_t above = baracuda::kMaxAllocationBytes + 1 + in.pick(1u << 16);
  return in.flag() ? above : SIZE_MAX - in.pick(1u << 16);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace baracuda;
  fuzz::FuzzInput in(data, size);
  const Stream stream = in.flag() ? Stream::sim() : Stream::host();

  const size_t bytes = size_of(in);
  auto b = Buffer::allocate(stream, bytes);
  if (bytes > kMaxAllocationBytes && b) broken("an allocation above the cap succeeded");
  if (bytes <= 4096 && !b) broken("a small allocation failed");
  if (b) {
    if (b->size() != bytes) broken("the buffer's size differs from the size asked for");
    const size_t offset = size_of(in), count = size_of(in);
    std::vector<uint8_t> host(count <= 8192 ? count : 0);
    const bool fits = offset <= bytes && count <= bytes - offset;
    if (count <= 8192) {
      const Status up = b->copy_from_host(host.data(), count, offset);
      if (!fits && up) broken("a copy past the buffer's end succeeded");
      if (fits && !up) broken("a copy inside the buffer failed");
      const Status down = b->copy_to_host(host.data(), count, offset);
      if (!fits && down) broken("a copy from past the buffer's end succeeded");
    } else if (b->copy_from_host(host.data(), count, offset)) {
      broken("a copy larger than the buffer succeeded");
    }
  }

  // A count: small, or negative or above 2^56 (must be refused; counts between would really be allocated).
  const int64_t numel =
      in.chance(128) ? static_cast<int64_t>(in.pick(5000)) : static_cast<int64_t>(in.u64() | (uint64_t{1} << 57));
  auto typed = Buffer::allocate_for<double>(stream, numel);
  if (typed && (numel < 0 || typed->size() != static_cast<size_t>(numel) * sizeof(double)))
    broken("allocate_for<double> returned a buffer of the wrong size");
  auto packed = Buffer::allocate_for<int4x2_t>(stream, numel);
  if (packed && (numel < 0 || packed->size() != static_cast<size_t>((numel + 1) / 2)))
    broken("allocate_for<s4> returned a buffer of the wrong size");

  const Shape s = in.shape();
  if (s.valid() && (s.numel() < 0 || s.numel() > baracuda::kMaxElements))
    broken("a valid shape counts outside [0, 2^56]");
  return 0;
}
