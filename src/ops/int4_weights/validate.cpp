// The shape, size, g_idx and value rules shared by every int4_weights function.
#include <string>

#include "ops/int4_weights/common.hpp"

namespace baracuda {
namespace int4 {

namespace {
std::string who_s(std::string_view who) { return std::string(who) + ": "; }
}  // namespace

std::string groups_text() {
  std::string r;
  for (int64_t g : kInt4Groups) r += (r.empty() ? "" : ", ") + str(g);
  return r;
}

Status check_k_n(std::string_view who, int64_t k, int64_t n, ShapeRules rules) {
  if (k < 0 || n < 0) return Error::invalid(who_s(who) + "K = " + str(k) + " and N = " + str(n) + " must be >= 0");
  if (k % rules.k_multiple != 0)
    return Error::invalid(who_s(who) + "K = " + str(k) + " is not a multiple of " + str(rules.k_multiple));
  if (n % rules.n_multiple != 0)
    return Error::invalid(who_s(who) + "N = " + str(n) + " is not a multiple of " + str(rules.n_multiple));
  return {};
}

Status check_shape(std::string_view who, const Int4Shape& s, ShapeRules rules) {
  if (!is_int4_group(s.group))
    return Error::invalid(who_s(who) + "group = " + str(s.group) + " is not one of " + groups_text());
  BARACUDA_TRY(check_k_n(who, s.k, s.n, rules));
  if (s.group > 0 && s.k % s.group != 0)
    return Error::invalid(who_s(who) + "K = " + str(s.k) + " is not a multiple of group = " + str(s.group));
  return {};
}

Status check_shape_and_scheme(std::string_view who, const Int4Shape& s, Int4Scheme scheme, ShapeRules rules) {
  BARACUDA_TRY(check_shape(who, s, rules));
  if (!is_int4_scheme(scheme)) return Error::invalid(who_s(who) + "unknown Int4Scheme");
  return {};
}

Status check_size(std::string_view who, std::string_view what, size_t got, int64_t expected, std::string_view dims) {
  if (static_cast<int64_t>(got) != expected)
    return Error::invalid(who_s(who) + std::string(what) + " has " + std::to_string(got) + " elements, expected " +
                          str(expected) + " (" + std::string(dims) + ")");
  return {};
}

Status check_g_idx(std::string_view who, std::span<const int32_t> g_idx, const Int4Shape& s) {
  if (g_idx.empty()) return {};
  BARACUDA_TRY(check_size(who, "g_idx", g_idx.size(), s.k, "[K]"));
  const int64_t groups = s.num_groups();
  for (size_t i = 0; i < g_idx.size(); ++i)
    if (g_idx[i] < 0 || g_idx[i] >= groups)
      return Error::invalid(who_s(who) + "g_idx[" + std::to_string(i) + "] = " + str(g_idx[i]) +
                            " is outside [0, G = " + str(groups) + ")");
  return {};
}

bool is_plain_grouping(std::span<const int32_t> g_idx, const Int4Shape& s) {
  if (g_idx.empty()) return true;
  const int64_t rows = s.group_rows();
  for (size_t k = 0; k < g_idx.size(); ++k)
    if (g_idx[k] != static_cast<int64_t>(k) / rows) return false;
  return true;
}

Status check_nibbles(std::string_view who, std::string_view what, std::span<const uint8_t> v) {
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i] > 15)
      return Error::invalid(who_s(who) + std::string(what) + "[" + std::to_string(i) + "] = " +
                            std::to_string(v[i]) + " is not a 4-bit value (0..15)");
  return {};
}

}  // namespace int4

Status validate_int4_weights(const Int4Weights& w, std::string_view who) {
  using namespace int4;
  const Int4Shape& s = w.shape;
  BARACUDA_TRY(check_shape(who, s));
  if (!is_int4_scheme(w.scheme))
    return Error::invalid(std::string(who) + ": unknown Int4Scheme");
  const int64_t g = s.num_groups();
  BARACUDA_TRY(check_size(who, "q", w.q.size(), s.k * s.n, "[K, N]"));
  BARACUDA_TRY(check_size(who, "scales", w.scales.size(), g * s.n, "[G, N]"));
  if (w.scheme == Int4Scheme::Asymmetric) {
    BARACUDA_TRY(check_size(who, "zeros", w.zeros.size(), g * s.n, "[G, N], Asymmetric"));
  } else {
    BARACUDA_TRY(check_size(who, "zeros", w.zeros.size(), 0, "none for Symmetric"));
  }
  BARACUDA_TRY(check_nibbles(who, "q", w.q));
  BARACUDA_TRY(check_nibbles(who, "zeros", w.zeros));
  BARACUDA_TRY(check_g_idx(who, w.g_idx, s));
  return {};
}

std::string_view to_string(Int4Scheme s) {
  constexpr std::string_view kNames[] = {
#define BARACUDA_INT4_SCHEME(name, Enum, zero_points, doc) #name,
#include "baracuda/ops/int4_formats.def"
#undef BARACUDA_INT4_SCHEME
  };
  return is_int4_scheme(s) ? kNames[static_cast<size_t>(s)] : "?";
}

}  // namespace baracuda
