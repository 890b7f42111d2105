// The fill family's host reference: writes the value's bits element by element in index order.
#include <cstring>

#include "device/host_loop.hpp"
#include "ops/fill/dispatch.hpp"

namespace baracuda::reference {
namespace {

template <class T>
Status host_fill(const detail::ExecContext&, const detail::FillLaunch& a) {
  if constexpr (is_packed(kind_of<T>)) {
    // Contiguous packed pairs: element 2i in the low nibble of byte i, element 2i+1 in the high nibble.
    auto* bytes = static_cast<uint8_t*>(a.out.data);
    const int64_t n = a.out.numel();
    const uint8_t nibble = static_cast<uint8_t>(a.bits & 0x0F);
    for (int64_t i = 0; i < (n + 1) / 2; ++i) {
      const bool has_high = 2 * i + 1 < n;
      bytes[i] = static_cast<uint8_t>(nibble | (has_high ? nibble << 4 : 0));
    }
  } else {
    auto* base = static_cast<unsigned char*>(a.out.data);
    detail::for_each_strided<1>(a.out.shape, {a.out.stride.data()}, [&](const std::array<int64_t, 1>& off) {
      std::memcpy(base + off[0] * static_cast<int64_t>(sizeof(T)), &a.bits, sizeof(T));  // little-endian
    });
  }
  return {};
}

}  // namespace

BARACUDA_DEFINE_KIND_TABLE(detail::FillTable, fill_table, detail::FillTypes, host_fill)

}  // namespace baracuda::reference
