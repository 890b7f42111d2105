#include "baracuda/core/buffer.hpp"

#include <cuda_runtime_api.h>

#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <utility>

namespace baracuda {
namespace {
constexpr size_t kHostAlignment = 256;  // as cudaMalloc, so vector paths see the same alignment everywhere

Status cuda_error(const char* what, cudaError_t e) {
  return Error::device(std::string("Buffer: ") + what + ": " + cudaGetErrorString(e), e);
}
}  // namespace

Buffer::~Buffer() { release(); }

Buffer::Buffer(Buffer&& o) noexcept
    : ptr_(std::exchange(o.ptr_, nullptr)), size_(std::exchange(o.size_, 0)), stream_(o.stream_) {}

Buffer& Buffer::operator=(Buffer&& o) noexcept {
  if (this != &o) {
    release();
    ptr_ = std::exchange(o.ptr_, nullptr);
    size_ = std::exchange(o.size_, 0);
    stream_ = o.stream_;
  }
  return *this;
}

void Buffer::release() {
  if (!ptr_) return;
  if (stream_.device() == DeviceKind::Cuda) {
    cudaSetDevice(stream_.device_index());
    // If the asynchronous free fails the block is leaked: a synchronous fallback could free memory that
    // queued work still uses.
    (void)cudaFreeAsync(ptr_, stream_.cuda_stream());
  } else {
    ::operator delete(ptr_, std::align_val_t(kHostAlignment));
  }
  ptr_ = nullptr;
  size_ = 0;
}

Result<Buffer> Buffer::allocate(const Stream& stream, size_t bytes) {
  Buffer b;
  b.stream_ = stream;
  if (bytes == 0) return b;
  if (bytes > kMaxAllocationBytes)
    return Error::invalid("Buffer: " + std::to_string(bytes) + " bytes is more than any allocation may be (" +
                          std::to_string(kMaxAllocationBytes) + ")");
  if (stream.device() == DeviceKind::Cuda) {
    cudaError_t e = cudaSetDevice(stream.device_index());
    if (e == cudaSuccess) e = cudaMallocAsync(&b.ptr_, bytes, stream.cuda_stream());
    if (e != cudaSuccess) return cuda_error("cudaMallocAsync", e).error();
  } else {
    b.ptr_ = ::operator new(bytes, std::align_val_t(kHostAlignment), std::nothrow);
    if (!b.ptr_) return Error::device("Buffer: host allocation of " + std::to_string(bytes) + " bytes failed", 2);
  }
  b.size_ = bytes;
  return b;
}

Status Buffer::copy_from_host(const void* src, size_t bytes, size_t offset) {
  if (offset > size_ || bytes > size_ - offset)
    return Error::buffer_too_small("Buffer::copy_from_host: range exceeds the buffer", offset + bytes, size_);
  if (bytes == 0) return {};
  if (stream_.device() != DeviceKind::Cuda) {
    std::memcpy(static_cast<char*>(ptr_) + offset, src, bytes);
    return {};
  }
  cudaError_t e = cudaMemcpyAsync(static_cast<char*>(ptr_) + offset, src, bytes, cudaMemcpyHostToDevice,
                                  stream_.cuda_stream());
  if (e == cudaSuccess) e = cudaStreamSynchronize(stream_.cuda_stream());
  return e == cudaSuccess ? Status() : cuda_error("copy_from_host", e);
}

Status Buffer::copy_to_host(void* dst, size_t bytes, size_t offset) const {
  if (offset > size_ || bytes > size_ - offset)
    return Error::buffer_too_small("Buffer::copy_to_host: range exceeds the buffer", offset + bytes, size_);
  if (bytes == 0) return {};
  if (stream_.device() != DeviceKind::Cuda) {
    std::memcpy(dst, static_cast<const char*>(ptr_) + offset, bytes);
    return {};
  }
  cudaError_t e = cudaMemcpyAsync(dst, static_cast<const char*>(ptr_) + offset, bytes, cudaMemcpyDeviceToHost,
                                  stream_.cuda_stream());
  if (e == cudaSuccess) e = cudaStreamSynchronize(stream_.cuda_stream());
  return e == cudaSuccess ? Status() : cuda_error("copy_to_host", e);
}

Status Buffer::fill_bytes(uint8_t value) {
  if (size_ == 0) return {};
  if (stream_.device() != DeviceKind::Cuda) {
    std::memset(ptr_, value, size_);
    return {};
  }
  cudaError_t e = cudaMemsetAsync(ptr_, value, size_, stream_.cuda_stream());
  if (e == cudaSuccess) e = cudaStreamSynchronize(stream_.cuda_stream());
  return e == cudaSuccess ? Status() : cuda_error("fill_bytes", e);
}

}  // namespace baracuda
