/// \file
/// \brief Devices and streams: every plan runs on the device its `Stream` names.
///
/// | device | what runs                                                        |
/// |--------|------------------------------------------------------------------|
/// | cuda   | CUDA kernels / NVIDIA libraries on a GPU, ordered on a `cudaStream_t` |
/// | sim    | the same kernel sources on the CPU under the SIMT emulator (synchronous) |
/// | host   | the plain C++ reference implementation (synchronous)             |
#pragma once

#include <string>
#include <string_view>

#include <cuda_runtime_api.h>

#include "baracuda/core/status.hpp"

namespace baracuda {

enum class DeviceKind : uint8_t { Host, Sim, Cuda };
std::string_view to_string(DeviceKind d);
/// Parses "host", "sim" or "cuda".
bool parse_device_kind(std::string_view name, DeviceKind* out);

/// Whether CUDA can be used in this process, and if not, why (driver missing, no device, ...).
struct CudaAvailability {
  bool usable = false;
  int device_count = 0;
  std::string reason;  ///< empty when usable; otherwise the CUDA runtime's explanation
};
/// Queried once per process (thread-safe) and cached.
const CudaAvailability& cuda_availability();

/// Properties of one CUDA device that plans select on.
struct CudaDeviceInfo {
  int index = 0;
  int sm = 0;  ///< compute capability × 10 (e.g. 90 for H100)
  int multiprocessor_count = 0;
  size_t shared_memory_per_block_optin = 0;
  std::string name;
};
/// Cached per device; fails when CUDA is unusable or the index is out of range.
Result<CudaDeviceInfo> cuda_device_info(int device);

/// Names a device and, for `cuda`, a device index and a `cudaStream_t` (not owned). Cheap to copy.
class Stream {
 public:
  /// The host reference device.
  static Stream host() { return Stream(DeviceKind::Host, 0, nullptr, 0); }
  /// The SIMT emulator device.
  static Stream sim() { return Stream(DeviceKind::Sim, 0, nullptr, 0); }
  /// A CUDA stream on `device`; fails with `Unsupported` (and the reason) when CUDA is unusable.
  static Result<Stream> cuda(int device = 0, cudaStream_t stream = nullptr);
  /// `cuda` (device 0, the legacy default stream) when a GPU is usable, else `host`.
  static Stream default_stream();
  /// Builds a stream for a device kind; `cuda` uses device 0 and the default stream.
  static Result<Stream> for_device(DeviceKind kind);

  DeviceKind device() const { return device_; }
  int device_index() const { return index_; }
  cudaStream_t cuda_stream() const { return stream_; }
  /// Compute capability × 10 of the CUDA device; 0 for host and sim.
  int sm() const { return sm_; }
  /// Waits until all work queued on the stream has finished (no-op for host and sim).
  Status synchronize() const;

 private:
  Stream(DeviceKind d, int index, cudaStream_t s, int sm) : device_(d), index_(index), stream_(s), sm_(sm) {}
  DeviceKind device_;
  int index_;
  cudaStream_t stream_;
  int sm_;
};

}  // namespace baracuda
