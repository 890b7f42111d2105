/// \file
/// \brief `Scalar`: a typed constant (float, integer or bool) as descriptors carry it, like `c10::Scalar`.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

namespace baracuda {

/// A constant given to a plan (a fill value, a clamp bound). Integers keep all 64 bits; floats are held
/// as double. Converting it to an element type follows the rules of `CastPlan`, and plans reject values
/// the target type cannot represent (as PyTorch's `fill_` does).
class Scalar {
 public:
  enum class Kind : uint8_t { Float, Int, Bool };

  Scalar() : Scalar(0.0) {}
  template <class T>
    requires std::is_floating_point_v<T>
  Scalar(T v) : kind_(Kind::Float), f_(static_cast<double>(v)) {}  // NOLINT
  template <class T>
    requires(std::is_integral_v<T> && !std::is_same_v<T, bool>)
  Scalar(T v) : kind_(Kind::Int), i_(static_cast<int64_t>(v)) {}  // NOLINT
  Scalar(bool v) : kind_(Kind::Bool), i_(v ? 1 : 0) {}               // NOLINT

  Kind kind() const { return kind_; }
  bool is_float() const { return kind_ == Kind::Float; }
  /// The value as a double (integers above 2^53 round).
  double to_double() const { return kind_ == Kind::Float ? f_ : static_cast<double>(i_); }
  /// The integer value (valid for Int and Bool).
  int64_t to_int() const { return i_; }
  std::string to_string() const;

  friend bool operator==(const Scalar& a, const Scalar& b) {
    if (a.kind_ != b.kind_) return false;
    return a.kind_ == Kind::Float ? (a.f_ == b.f_ || (a.f_ != a.f_ && b.f_ != b.f_)) : a.i_ == b.i_;
  }
  size_t hash() const;

 private:
  Kind kind_;
  double f_ = 0.0;
  int64_t i_ = 0;
};

}  // namespace baracuda
