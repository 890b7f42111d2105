// Internal helpers of the int4_weights family: the layout constants of Marlin, GPTQ and AWQ, nibble access,
// and the shared validation of shapes, sizes and g_idx (validate.cpp).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "baracuda/ops/int4_weights.hpp"

namespace baracuda::int4 {

/// The nibble interleave of Marlin words and of AWQ's packing: nibble p holds element kInterleave[p] of a
/// run of 8 (FasterTransformer's interleaved_numeric_conversion order).
inline constexpr int kInterleave[8] = {0, 2, 4, 6, 1, 3, 5, 7};

/// mma.m16n8k16 B fragment: the k-row offsets (added to 2·(lane % 4)) of a lane's four values per n8 block.
inline constexpr int kFragRow[4] = {0, 1, 8, 9};

/// Marlin's grouped scale permutation (64 entries): position i takes column i/8 + 8·(i%8) of its run.
constexpr int scale_perm_grouped(int i) { return i / 8 + 8 * (i % 8); }

/// Marlin's per-channel ("single") scale permutation (32 entries): position 8a + b takes 2a + off[b].
constexpr int scale_perm_single(int i) {
  constexpr int off[8] = {0, 1, 8, 9, 16, 17, 24, 25};
  return 2 * (i / 8) + off[i % 8];
}

inline uint32_t nibble(uint32_t word, int i) { return (word >> (4 * i)) & 0xFu; }

/// What a function needs of a shape beyond the common rules (non-negative, group ∈ {−1, 32, 64, 128},
/// K % group == 0).
struct ShapeRules {
  int64_t k_multiple = 1;
  int64_t n_multiple = 1;
};
inline constexpr ShapeRules kAnyShape{1, 1};
inline constexpr ShapeRules kMarlinShape{16, 64};

Status check_shape(std::string_view who, const Int4Shape& s, ShapeRules rules = kAnyShape);
/// check_shape, then `scheme` is an Int4Scheme: "<who>: unknown Int4Scheme" otherwise.
Status check_shape_and_scheme(std::string_view who, const Int4Shape& s, Int4Scheme scheme, ShapeRules rules);
Status check_k_n(std::string_view who, int64_t k, int64_t n, ShapeRules rules);
/// `got == expected` elements, else "<who>: <what> has <got> elements, expected <expected> (<dims>)".
Status check_size(std::string_view who, std::string_view what, size_t got, int64_t expected, std::string_view dims);
/// g_idx: empty, or K values in [0, G).
Status check_g_idx(std::string_view who, std::span<const int32_t> g_idx, const Int4Shape& s);
/// Whether g_idx is empty or equal to k / group_rows() for every k.
bool is_plain_grouping(std::span<const int32_t> g_idx, const Int4Shape& s);
/// Every value ≤ 15 (the first offender is named).
Status check_nibbles(std::string_view who, std::string_view what, std::span<const uint8_t> v);

inline std::string str(int64_t v) { return std::to_string(v); }

/// "-1, 32, 64, 128": the catalog's group sizes, for messages.
std::string groups_text();

}  // namespace baracuda::int4
