// Marlin's layouts: the 16×64 weight tiles in mma fragment order with the nibble interleave, the scale
// permutations (grouped / per channel), the zero-point packing, and their exact inverses. The index maps are
// written once (for_each_weight_nibble, for_each_zero_nibble) and walked in both directions.
#include <string>

#include "ops/int4_weights/common.hpp"

namespace baracuda {

using namespace int4;

namespace {

/// Calls f(word, nibble, row, col) for every nibble of the packed [K/16, 2N] weight: word
/// `kt·2N + nb·128 + 4t + j` (k-tile kt, 64-column block nb, lane t, 16-column sub-tile j) holds in nibble p
/// the element e = kInterleave[p] of lane t's eight B-fragment values for the n8 blocks j·16 and j·16 + 8:
/// row 16kt + 2(t % 4) + kFragRow[e % 4], column 64nb + 16j + t/4 + 8(e / 4).
template <class F>
void for_each_weight_nibble(int64_t k, int64_t n, F&& f) {
  const int64_t row_words = 2 * n;
  for (int64_t kt = 0; kt < k / 16; ++kt)
    for (int64_t nb = 0; nb < n / 64; ++nb)
      for (int t = 0; t < 32; ++t)
        for (int j = 0; j < 4; ++j) {
          const int64_t word = kt * row_words + nb * 128 + 4 * t + j;
          for (int p = 0; p < 8; ++p) {
            const int e = kInterleave[p];
            const int64_t row = 16 * kt + 2 * (t % 4) + kFragRow[e % 4];
            const int64_t col = 64 * nb + 16 * j + t / 4 + 8 * (e / 4);
            f(word, p, row, col);
          }
        }
}

/// Calls f(word, nibble, g, col) for every nibble of the packed [G, N/8] zero points: position i of the
/// run of 8 at word w is element kInterleave[i] of the run after the 64-entry scale permutation, i.e.
/// column 64·c + scale_perm_grouped(p) with c the 64-column run and p = (8w mod 64) + kInterleave[i].
template <class F>
void for_each_zero_nibble(int64_t groups, int64_t n, F&& f) {
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t w = 0; w < n / 8; ++w)
      for (int i = 0; i < 8; ++i) {
        const int64_t run = (8 * w) / 64;
        const int p = static_cast<int>((8 * w) % 64) + kInterleave[i];
        f(g * (n / 8) + w, i, g, 64 * run + scale_perm_grouped(p));
      }
}

/// Packs `v`, a [rows, n] row-major array of nibbles named `what` (its size checked against `dims`), into the
/// words of `for_each_nibble(rows, n, f)` (kWeightNibbles or kZeroNibbles).
template <class ForEachNibble>
Result<std::vector<int32_t>> pack_words(std::string_view who, std::string_view what, std::span<const uint8_t> v,
                                        int64_t rows, int64_t n, std::string_view dims, ForEachNibble for_each_nibble) {
  BARACUDA_TRY(check_size(who, what, v.size(), rows * n, dims));
  BARACUDA_TRY(check_nibbles(who, what, v));
  std::vector<uint32_t> words(static_cast<size_t>(rows * n / 8), 0u);
  for_each_nibble(rows, n, [&](int64_t word, int p, int64_t row, int64_t col) {
    words[word] |= static_cast<uint32_t>(v[row * n + col]) << (4 * p);
  });
  return std::vector<int32_t>(words.begin(), words.end());
}

/// Unpacks `packed` (its size checked against `dims`) into a [rows, n] row-major array of nibbles.
template <class ForEachNibble>
Result<std::vector<uint8_t>> unpack_words(std::string_view who, std::span<const int32_t> packed, int64_t rows,
                                          int64_t n, std::string_view dims, ForEachNibble for_each_nibble) {
  BARACUDA_TRY(check_size(who, "packed", packed.size(), rows * n / 8, dims));
  std::vector<uint8_t> v(static_cast<size_t>(rows * n));
  for_each_nibble(rows, n, [&](int64_t word, int p, int64_t row, int64_t col) {
    v[row * n + col] = static_cast<uint8_t>(nibble(static_cast<uint32_t>(packed[word]), p));
  });
  return v;
}

/// The two index maps as arguments of pack_words / unpack_words.
constexpr auto kWeightNibbles = [](int64_t k, int64_t n, auto&& f) { for_each_weight_nibble(k, n, f); };
constexpr auto kZeroNibbles = [](int64_t groups, int64_t n, auto&& f) { for_each_zero_nibble(groups, n, f); };

/// Applies (forward) or undoes (!forward) the scale permutation of `shape` on every run of each row.
std::vector<__half> permute_scales(std::span<const __half> s, const Int4Shape& shape, bool forward) {
  const bool grouped = shape.marlin_grouped();
  const int run = grouped ? 64 : 32;
  std::vector<__half> out(s.size());
  for (size_t base = 0; base < s.size(); base += run)
    for (int i = 0; i < run; ++i) {
      const int src = grouped ? scale_perm_grouped(i) : scale_perm_single(i);
      if (forward) {
        out[base + i] = s[base + src];
      } else {
        out[base + src] = s[base + i];
      }
    }
  return out;
}

}  // namespace

Result<std::vector<int32_t>> marlin_pack(std::span<const uint8_t> q, int64_t k, int64_t n) {
  const std::string P = "marlin_pack";
  BARACUDA_TRY(check_k_n(P, k, n, kMarlinShape));
  return pack_words(P, "q", q, k, n, "[K, N]", kWeightNibbles);
}

Result<std::vector<uint8_t>> marlin_unpack(std::span<const int32_t> packed, int64_t k, int64_t n) {
  const std::string P = "marlin_unpack";
  BARACUDA_TRY(check_k_n(P, k, n, kMarlinShape));
  return unpack_words(P, packed, k, n, "[K/16, 2N]", kWeightNibbles);
}

Result<std::vector<__half>> marlin_permute_scales(std::span<const __half> scales, const Int4Shape& shape) {
  const std::string P = "marlin_permute_scales";
  BARACUDA_TRY(check_shape(P, shape, kMarlinShape));
  BARACUDA_TRY(check_size(P, "scales", scales.size(), shape.num_groups() * shape.n, "[G, N]"));
  return permute_scales(scales, shape, true);
}

Result<std::vector<__half>> marlin_unpermute_scales(std::span<const __half> scales, const Int4Shape& shape) {
  const std::string P = "marlin_unpermute_scales";
  BARACUDA_TRY(check_shape(P, shape, kMarlinShape));
  BARACUDA_TRY(check_size(P, "scales", scales.size(), shape.num_groups() * shape.n, "[G, N]"));
  return permute_scales(scales, shape, false);
}

Result<std::vector<int32_t>> marlin_pack_zeros(std::span<const uint8_t> zeros, const Int4Shape& shape) {
  const std::string P = "marlin_pack_zeros";
  BARACUDA_TRY(check_shape(P, shape, kMarlinShape));
  return pack_words(P, "zeros", zeros, shape.num_groups(), shape.n, "[G, N]", kZeroNibbles);
}

Result<std::vector<uint8_t>> marlin_unpack_zeros(std::span<const int32_t> packed, const Int4Shape& shape) {
  const std::string P = "marlin_unpack_zeros";
  BARACUDA_TRY(check_shape(P, shape, kMarlinShape));
  return unpack_words(P, packed, shape.num_groups(), shape.n, "[G, N/8]", kZeroNibbles);
}

}  // namespace baracuda
