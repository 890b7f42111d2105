/// \file
/// \brief Device copies of a self-test launch's host buffers, for the kernel files of tests/ptx/ (compiled once
/// per device): under sim the host pointers themselves; under nvcc device memory, copied in at registration
/// (inputs) and out by finish() (outputs), which also waits for the launch and reports its error.
#pragma once

#include <cstddef>
#include <vector>

#include "sim/compat.cuh"
#include "sim/launch_error.hpp"

namespace ptxtest {
namespace BARACUDA_DEVICE_ABI {
namespace {

using ::baracuda::launch::LaunchError;

LaunchError fail(const char* what) { return {true, 1, what}; }

class Buffers {
 public:
  Buffers() = default;
  Buffers(const Buffers&) = delete;
  Buffers& operator=(const Buffers&) = delete;
  ~Buffers() {
#if !BARACUDA_SIM
    for (auto& b : bufs_) cudaFree(b.dev);
#endif
  }
  template <class T>
  T* in(const T* host, std::size_t n) {
    return static_cast<T*>(add(const_cast<T*>(host), n * sizeof(T), false));
  }
  template <class T>
  T* out(T* host, std::size_t n) {
    return static_cast<T*>(add(host, n * sizeof(T), true));
  }
  bool ok() const { return ok_; }
  /// Waits for the launch, copies the outputs back, and returns the first error.
  LaunchError finish() {
    if (!ok_) return fail("device allocation or copy failed");
    LaunchError e = ::baracuda::launch::take_last_error();
    if (e.failed) return e;
#if !BARACUDA_SIM
    if (cudaError_t s = cudaDeviceSynchronize(); s != cudaSuccess) return {true, static_cast<int>(s), cudaGetErrorString(s)};
    for (auto& b : bufs_)
      if (b.copy_out && cudaMemcpy(b.host, b.dev, b.bytes, cudaMemcpyDeviceToHost) != cudaSuccess)
        return fail("cudaMemcpy to the host failed");
#endif
    return {};
  }

 private:
  struct Buf {
    void* host;
    void* dev;
    std::size_t bytes;
    bool copy_out;
  };
  void* add(void* host, std::size_t bytes, bool copy_out) {
#if BARACUDA_SIM
    (void)bytes, (void)copy_out;
    return host;
#else
    void* dev = nullptr;
    if (cudaMalloc(&dev, bytes) != cudaSuccess) {
      ok_ = false;
      return nullptr;
    }
    bufs_.push_back({host, dev, bytes, copy_out});
    if (cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice) != cudaSuccess) ok_ = false;
    return dev;
#endif
  }
  std::vector<Buf> bufs_;
  bool ok_ = true;
};

}  // namespace
}  // namespace BARACUDA_DEVICE_ABI
}  // namespace ptxtest
