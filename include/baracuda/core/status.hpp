/// \file
/// \brief `Error`, `Status` and `Result<T>`: value-or-error results; no exceptions cross the API.
///
/// Every rejection names the plan and the rule it broke, e.g.
/// `CastPlan: InvalidProblem: output shape [4, 3] differs from the descriptor's [4, 4]`.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace baracuda {

/// What kind of failure an `Error` reports.
enum class ErrorCode : uint8_t {
  Unsupported,        ///< a valid request this build/device/plan cannot serve (dtype, backend, arch)
  InvalidProblem,     ///< the request itself is wrong (shape mismatch, bad parameter, rank)
  MisalignedOperand,  ///< a pointer or stride violates a documented alignment rule
  WorkspaceTooSmall,  ///< `needed` / `got` bytes of workspace
  BufferTooSmall,     ///< `needed` / `got` bytes of a buffer
  DeviceError,        ///< the device failed (CUDA error code in `device_code`), or the emulator did
  Internal,           ///< a bug in baracuda
};

constexpr std::string_view to_string(ErrorCode c) {
  switch (c) {
    case ErrorCode::Unsupported: return "Unsupported";
    case ErrorCode::InvalidProblem: return "InvalidProblem";
    case ErrorCode::MisalignedOperand: return "MisalignedOperand";
    case ErrorCode::WorkspaceTooSmall: return "WorkspaceTooSmall";
    case ErrorCode::BufferTooSmall: return "BufferTooSmall";
    case ErrorCode::DeviceError: return "DeviceError";
    case ErrorCode::Internal: return "Internal";
  }
  return "?";
}

/// A failure: a code, a message naming the plan and the violated rule, and size details where the code
/// has them (`needed`/`got` in bytes for the *TooSmall codes, `device_code` for `DeviceError`).
struct Error {
  ErrorCode code = ErrorCode::Internal;
  std::string message;
  uint64_t needed = 0;
  uint64_t got = 0;
  int device_code = 0;

  /// "Code: message" — what a user should read.
  std::string to_string() const;

  static Error unsupported(std::string msg) { return {ErrorCode::Unsupported, std::move(msg)}; }
  static Error invalid(std::string msg) { return {ErrorCode::InvalidProblem, std::move(msg)}; }
  static Error misaligned(std::string msg) { return {ErrorCode::MisalignedOperand, std::move(msg)}; }
  static Error workspace_too_small(std::string msg, uint64_t needed, uint64_t got) {
    return {ErrorCode::WorkspaceTooSmall, std::move(msg), needed, got};
  }
  static Error buffer_too_small(std::string msg, uint64_t needed, uint64_t got) {
    return {ErrorCode::BufferTooSmall, std::move(msg), needed, got};
  }
  static Error device(std::string msg, int code) {
    return {ErrorCode::DeviceError, std::move(msg), 0, 0, code};
  }
  static Error internal(std::string msg) { return {ErrorCode::Internal, std::move(msg)}; }
};

/// Success, or an `Error`. Cheap when OK (one empty optional-like variant).
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error e) : error_(std::move(e)), failed_(true) {}  // NOLINT: implicit by design

  static Status ok() { return {}; }
  bool is_ok() const { return !failed_; }
  explicit operator bool() const { return !failed_; }
  const Error& error() const { return error_; }
  ErrorCode code() const { return error_.code; }
  /// "OK" or the error's `to_string()`.
  std::string to_string() const { return failed_ ? error_.to_string() : std::string("OK"); }

 private:
  Error error_;
  bool failed_ = false;
};

/// A value of type T, or an `Error`.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}  // NOLINT
  Result(Error e) : v_(std::in_place_index<1>, std::move(e)) {}      // NOLINT
  Result(Status s) : v_(std::in_place_index<1>, s.error()) {}        // NOLINT: only from a failed status

  bool is_ok() const { return v_.index() == 0; }
  explicit operator bool() const { return is_ok(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  const Error& error() const { return std::get<1>(v_); }
  /// The error as a `Status` (OK when a value is held).
  Status status() const { return is_ok() ? Status() : Status(error()); }

 private:
  std::variant<T, Error> v_;
};

}  // namespace baracuda

/// Returns the failed `Status` of `expr` from the enclosing function.
#define BARACUDA_TRY(expr)                          \
  do {                                              \
    ::baracuda::Status baracuda_try_s_ = (expr);    \
    if (!baracuda_try_s_.is_ok()) return baracuda_try_s_; \
  } while (0)
