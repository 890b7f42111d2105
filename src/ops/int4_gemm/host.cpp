// The int4_gemm family's host reference — the oracle the Marlin tensor-core kernel is compared with. Written
// for clarity: every weight element is decoded straight from the Marlin tensors through the index maps of
// include/baracuda/ops/int4_weights.hpp (written out again here, independently of the packers), dequantized
// as round_T((q − z)·s) (one rounding to the activation kind, as tables.hpp specifies), and the products are
// accumulated in double (each f16/bf16 product is exact in double; the sum is as good as double gives), the
// bias added in double, and the result rounded once to T (core/reference_formats.hpp).
//
// The devices accumulate in f32 (the tensor cores' order), so they match this reference within the f32
// summation error plus one rounding of T, not bit for bit (int4_gemm.hpp; the tests derive the tolerance).
#include <cstdint>
#include <string>
#include <vector>

#include "core/reference_formats.hpp"
#include "device/host_loop.hpp"
#include "ops/int4_gemm/tables.hpp"

namespace baracuda::reference {
namespace {

using detail::at2;
using detail::Int4GemmLaunch;
using detail::PermuteColumnsLaunch;

/// Position p of the 8 nibbles of a Marlin word holds fragment element kInterleave[p]; this is the inverse.
constexpr int nibble_of_element(int e) { return (e % 2 == 0) ? e / 2 : 4 + e / 2; }

/// The 4-bit value of logical (Marlin-row) element (k, n) of the packed `[K/16, 2N]` weight:
/// word (k/16, 128·(n/64) + 4t + j) with lane t = 4·(c % 8) + (r % 8)/2 and sub-tile j = (n % 64)/16, where
/// r = k % 16, c = n % 16; its fragment element is e = (r % 2) + 2·(r / 8) + 4·(c / 8) (rows {0, 1, 8, 9}
/// + 2·(t % 4), columns t/4 + 8·(e/4) of the mma.m16n8k16 B fragment).
int weight_nibble(const ConstDynTensor& b, int64_t k, int64_t n) {
  const int64_t r = k % 16, nl = n % 64, c = nl % 16;
  const int64_t t = 4 * (c % 8) + (r % 8) / 2, j = nl / 16;
  const int e = static_cast<int>((r % 2) + 2 * (r / 8) + 4 * (c / 8));
  const auto word = static_cast<uint32_t>(at2<int32_t>(b, k / 16, 128 * (n / 64) + 4 * t + j));
  return static_cast<int>((word >> (4 * nibble_of_element(e))) & 0xF);
}

/// The stored column of logical column n in Marlin's scale order: within each run of 64 the 8×8 transpose
/// `i/8 + 8(i%8)` (grouped; its own inverse), within each run of 32 the per-channel map
/// `out[8a + b] = in[2a + {0, 1, 8, 9, 16, 17, 24, 25}[b]]` (so in column c sits at a = (c % 8)/2,
/// b = 2(c / 8) + c % 2).
int64_t scale_column(int64_t n, bool grouped) {
  if (grouped) {
    const int64_t c = n % 64;
    return n - c + 8 * (c % 8) + c / 8;
  }
  const int64_t c = n % 32;
  return n - c + 8 * ((c % 8) / 2) + 2 * (c / 8) + c % 2;
}

/// The zero point of logical column n in group row g of the packed `[G, N/8]` zero points: the column goes
/// through the 64-entry permutation (p = 8(c % 8) + c/8 within its run of 64), then position i of the run
/// of 8 at word 8·(n/64) + p/8 holds element kInterleave[i] = p % 8.
int zero_nibble(const ConstDynTensor& z, int64_t g, int64_t n) {
  const int64_t c = n % 64, p = 8 * (c % 8) + c / 8;
  const auto word = static_cast<uint32_t>(at2<int32_t>(z, g, 8 * (n / 64) + p / 8));
  return static_cast<int>((word >> (4 * nibble_of_element(static_cast<int>(p % 8)))) & 0xF);
}

template <class T>
Status gemm(const detail::ExecContext&, const Int4GemmLaunch& l) {
  // The dequantized weight W[K, N] (Marlin row order), each element round_T((q − z)·s), held as exact doubles.
  std::vector<double> w(static_cast<size_t>(l.k * l.n));
  const bool asym = l.zeros.data != nullptr;
  for (int64_t k = 0; k < l.k; ++k) {
    const int64_t g = k / l.group_rows;
    for (int64_t n = 0; n < l.n; ++n) {
      const int q = weight_nibble(l.b, k, n);
      const int z = asym ? zero_nibble(l.zeros, g, n) : 8;
      const long double s = value_of(at2<T>(l.scales, g, scale_column(n, l.grouped)));
      w[k * l.n + n] = static_cast<double>(value_of(store<T>(static_cast<long double>(q - z) * s)));
    }
  }
  const bool has_bias = l.bias.data != nullptr;
  for (int64_t m = 0; m < l.m; ++m)
    for (int64_t n = 0; n < l.n; ++n) {
      double acc = 0;
      for (int64_t k = 0; k < l.k; ++k) acc += static_cast<double>(value_of(at2<T>(l.a, m, k))) * w[k * l.n + n];
      if (has_bias) acc += static_cast<double>(value_of(static_cast<const T*>(l.bias.data)[n * l.bias.stride[0]]));
      static_cast<T*>(l.c.data)[m * l.c.stride[0] + n * l.c.stride[1]] = store<T>(static_cast<long double>(acc));
    }
  return {};
}

template <class T>
Status permute_columns(const detail::ExecContext&, const PermuteColumnsLaunch& l) {
  const auto* perm = static_cast<const int32_t*>(l.perm.data);  // a permutation: the plan checked it
  for (int64_t m = 0; m < l.m; ++m)
    for (int64_t j = 0; j < l.k; ++j)
      static_cast<T*>(l.out.data)[m * l.out.stride[0] + j * l.out.stride[1]] =
          at2<T>(l.a, m, perm[j * l.perm.stride[0]]);
  return {};
}

}  // namespace

BARACUDA_DEFINE_TABLE(detail::Int4GemmTables, int4_gemm_tables,
    detail::make_int4_gemm_tables([]<class T>(std::type_identity<T>) { return &gemm<T>; },
                                  []<class T>(std::type_identity<T>) { return &permute_columns<T>; }))

}  // namespace baracuda::reference
