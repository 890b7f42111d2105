/// \file
/// \brief `Buffer`: an RAII allocation on a stream's device, with copies to and from host memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "baracuda/core/element.hpp"
#include "baracuda/core/status.hpp"
#include "baracuda/core/stream.hpp"
#include "baracuda/core/tensor.hpp"
#include "baracuda/core/workspace.hpp"

namespace baracuda {

/// Owns `size()` bytes on the device of the stream it was allocated on: `cudaMallocAsync` on `cuda`
/// (freed with `cudaFreeAsync` on the same stream), 256-byte-aligned host memory on `sim` and `host`.
/// Copies are ordered on that stream and the host-side helpers block until they complete. A `cuda` buffer's
/// stream must outlive it: destroying a caller's `cudaStream_t` before the buffers allocated on it leaves their
/// `cudaFreeAsync` a destroyed stream (undefined behaviour in the CUDA runtime).
/// The largest allocation `Buffer::allocate` attempts: PTRDIFF_MAX rounded down to the host alignment.
inline constexpr size_t kMaxAllocationBytes = (static_cast<size_t>(PTRDIFF_MAX) / 256) * 256;

class Buffer {
 public:
  Buffer() = default;
  ~Buffer();
  Buffer(Buffer&& o) noexcept;
  Buffer& operator=(Buffer&& o) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  /// Allocates `bytes` (0 is allowed and allocates nothing). More than `kMaxAllocationBytes` is
  /// `InvalidProblem` (no device or host could hold it, and the host's aligned allocation would wrap).
  static Result<Buffer> allocate(const Stream& stream, size_t bytes);
  /// Allocates storage for `numel` elements of T (packed 4-bit types: ceil(numel / 2) bytes); a negative
  /// count, or one above `kMaxElements` (tensor.hpp), is `InvalidProblem`.
  template <class T>
  static Result<Buffer> allocate_for(const Stream& stream, int64_t numel) {
    if (numel < 0) return Error::invalid("Buffer: negative element count");
    if (numel > kMaxElements)
      return Error::invalid("Buffer: " + std::to_string(numel) + " elements is more than a tensor may hold (2^56)");
    return allocate(stream, static_cast<size_t>(storage_bytes(kind_of<T>, numel)));
  }
  /// Allocates and uploads a copy of `host`.
  template <class T>
  static Result<Buffer> from_host(const Stream& stream, std::span<const T> host) {
    auto b = allocate(stream, host.size_bytes());
    if (!b) return b;
    Status s = b->copy_from_host(host.data(), host.size_bytes());
    if (!s) return s.error();
    return b;
  }

  void* data() const { return ptr_; }
  size_t size() const { return size_; }
  template <class T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  const Stream& stream() const { return stream_; }
  /// The whole buffer as a workspace.
  Workspace as_workspace() const { return Workspace(ptr_, size_); }

  /// Copies `bytes` from host memory into the buffer at `offset`; blocks until done.
  Status copy_from_host(const void* src, size_t bytes, size_t offset = 0);
  /// Copies `bytes` at `offset` into host memory; blocks until done.
  Status copy_to_host(void* dst, size_t bytes, size_t offset = 0) const;
  /// Sets every byte to `value` (stream-ordered; blocks until done).
  Status fill_bytes(uint8_t value);
  /// Downloads the whole buffer as a vector of T (size() / sizeof(T) elements).
  template <class T>
  Result<std::vector<T>> to_host() const {
    std::vector<T> v(size_ / sizeof(T));
    Status s = copy_to_host(v.data(), v.size() * sizeof(T));
    if (!s) return s.error();
    return v;
  }

 private:
  void release();
  void* ptr_ = nullptr;
  size_t size_ = 0;
  Stream stream_ = Stream::host();
};

}  // namespace baracuda
