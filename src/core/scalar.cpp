#include "baracuda/core/scalar.hpp"

#include <cstdio>
#include <functional>

#include "baracuda/core/hash.hpp"

namespace baracuda {

std::string Scalar::to_string() const {
  if (kind_ == Kind::Bool) return i_ ? "true" : "false";
  if (kind_ == Kind::Int) return std::to_string(i_);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", f_);
  return buf;
}

size_t Scalar::hash() const {
  size_t h = std::hash<int>{}(static_cast<int>(kind_));
  if (kind_ == Kind::Float)
    detail::hash_combine(h, f_ != f_ ? 0.0 : f_);  // every NaN hashes alike (they compare equal)
  else
    detail::hash_combine(h, i_);
  return h;
}

}  // namespace baracuda
