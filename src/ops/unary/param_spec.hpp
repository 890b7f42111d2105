// Internal: the catalog's parameter strings ("beta=1!=0 threshold=20", see unary_ops.def), parsed at compile
// time into one rule per parameter, and the check that applies them to a descriptor.
#pragma once

#include <array>
#include <string_view>

#include "baracuda/ops/unary.hpp"

namespace baracuda::detail {

enum class ParamCompare : uint8_t { None, Ge, Le, Gt, Lt, Ne };

/// What one op says about one parameter.
struct ParamRule {
  bool applies = false;
  bool required = false;        ///< no default: select fails when it is unset
  double default_value = 0;     ///< when !required
  ParamCompare compare = ParamCompare::None;
  bool bound_is_param = false;  ///< the bound is another parameter's value
  UnaryParam bound_param = UnaryParam::NegativeSlope;
  double bound_value = 0;
};

/// An op's parameter string, parsed. `error` is empty when the string is well formed.
struct ParamSpec {
  std::array<ParamRule, kNumUnaryParams> rules{};
  std::string_view error;
};

namespace param_spec_parse {

constexpr bool is_name_char(char c) { return (c >= 'a' && c <= 'z') || c == '_'; }
constexpr bool is_digit(char c) { return c >= '0' && c <= '9'; }

constexpr bool param_of(std::string_view name, UnaryParam* out) {
  for (size_t i = 0; i < kNumUnaryParams; ++i)
    if (to_string(static_cast<UnaryParam>(i)) == name) {
      *out = static_cast<UnaryParam>(i);
      return true;
    }
  return false;
}

/// A decimal number "-12.5" at s[*pos]: the digits make an exact integer and a power of ten ≤ 10^22, so
/// the one division is correctly rounded (the value of the same literal in C++).
constexpr bool number(std::string_view s, size_t* pos, double* out) {
  size_t i = *pos;
  bool neg = false;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) neg = s[i++] == '-';
  double mant = 0;
  int digits = 0, frac = 0;
  bool in_frac = false;
  for (; i < s.size() && (is_digit(s[i]) || (s[i] == '.' && !in_frac)); ++i) {
    if (s[i] == '.') {
      in_frac = true;
      continue;
    }
    mant = mant * 10 + (s[i] - '0');
    ++digits;
    if (in_frac) ++frac;
  }
  if (digits == 0 || digits > 15 || frac > 22) return false;
  double scale = 1;
  for (int k = 0; k < frac; ++k) scale *= 10;
  *out = (neg ? -mant : mant) / scale;
  *pos = i;
  return true;
}

}  // namespace param_spec_parse

/// Parses a catalog parameter string: items separated by spaces, each `name`, `name=default`, optionally
/// followed by a rule `>=b`, `<=b`, `>b`, `<b` or `!=b` with b a number or another parameter's name.
constexpr ParamSpec parse_param_spec(std::string_view s) {
  using namespace param_spec_parse;
  ParamSpec spec;
  size_t i = 0;
  while (i < s.size()) {
    if (s[i] == ' ') {
      ++i;
      continue;
    }
    const size_t start = i;
    while (i < s.size() && is_name_char(s[i])) ++i;
    UnaryParam p{};
    if (!param_of(s.substr(start, i - start), &p)) return {{}, "unknown parameter name"};
    ParamRule& r = spec.rules[static_cast<size_t>(p)];
    if (r.applies) return {{}, "parameter listed twice"};
    r.applies = true;
    r.required = true;
    if (i < s.size() && s[i] == '=') {
      ++i;
      if (!number(s, &i, &r.default_value)) return {{}, "bad default value"};
      r.required = false;
    }
    if (i < s.size() && s[i] != ' ') {
      const std::string_view rest = s.substr(i);
      size_t len = 2;
      if (rest.starts_with(">=")) r.compare = ParamCompare::Ge;
      else if (rest.starts_with("<=")) r.compare = ParamCompare::Le;
      else if (rest.starts_with("!=")) r.compare = ParamCompare::Ne;
      else if (rest.starts_with(">")) r.compare = ParamCompare::Gt, len = 1;
      else if (rest.starts_with("<")) r.compare = ParamCompare::Lt, len = 1;
      else return {{}, "bad rule"};
      i += len;
      if (i < s.size() && is_name_char(s[i])) {
        const size_t b = i;
        while (i < s.size() && is_name_char(s[i])) ++i;
        if (!param_of(s.substr(b, i - b), &r.bound_param)) return {{}, "unknown parameter in a rule"};
        r.bound_is_param = true;
      } else if (!number(s, &i, &r.bound_value)) {
        return {{}, "bad bound"};
      }
    }
    if (i < s.size() && s[i] != ' ') return {{}, "junk after an item"};
  }
  for (const ParamRule& r : spec.rules)
    if (r.applies && r.bound_is_param && !spec.rules[static_cast<size_t>(r.bound_param)].applies)
      return {{}, "a rule names a parameter the op does not take"};
  return spec;
}

/// True when `v` satisfies `compare` against `bound`.
constexpr bool satisfies(ParamCompare compare, double v, double bound) {
  switch (compare) {
    case ParamCompare::None: return true;
    case ParamCompare::Ge: return v >= bound;
    case ParamCompare::Le: return v <= bound;
    case ParamCompare::Gt: return v > bound;
    case ParamCompare::Lt: return v < bound;
    case ParamCompare::Ne: return v != bound;
  }
  return false;
}

constexpr std::string_view to_string(ParamCompare c) {
  switch (c) {
    case ParamCompare::None: return "";
    case ParamCompare::Ge: return ">=";
    case ParamCompare::Le: return "<=";
    case ParamCompare::Gt: return ">";
    case ParamCompare::Lt: return "<";
    case ParamCompare::Ne: return "!=";
  }
  return "?";
}

/// Every op's parsed parameter string, in `UnaryKind` order.
inline constexpr std::array<ParamSpec, kNumUnaryKinds> kUnaryParamSpecs = {{
#define BARACUDA_UNARY_OP(name, Enum, params, saved, types, doc) \
  parse_param_spec(params),
#include "baracuda/ops/unary_ops.def"
#undef BARACUDA_UNARY_OP
}};

constexpr bool all_param_specs_parse() {
  for (const ParamSpec& s : kUnaryParamSpecs)
    if (!s.error.empty()) return false;
  return true;
}
static_assert(all_param_specs_parse(), "a parameter string of unary_ops.def does not parse");

}  // namespace baracuda::detail
