/// \file
/// \brief `Workspace`: a caller-owned byte span a plan may use as scratch. Plans never allocate.
#pragma once

#include <cstddef>

namespace baracuda {

/// Scratch memory on the stream's device, owned by the caller; may be empty. A plan needs at least
/// `plan.workspace_size()` bytes, 256-byte aligned, and must not be given memory another operation uses
/// concurrently. Contents on entry are unspecified unless the plan documents otherwise.
struct Workspace {
  void* data = nullptr;
  size_t size = 0;

  Workspace() = default;
  Workspace(void* p, size_t bytes) : data(p), size(bytes) {}
  static Workspace none() { return {}; }
};

}  // namespace baracuda
