// Operands of a profiled op: device allocations with the view the op sees, deterministic contents, and
// downloads for verification.
#pragma once

#include <cstdint>
#include <vector>

#include <baracuda/baracuda.hpp>

namespace baracuda::profiler {

/// Bytes every operand's allocation keeps before and after its view: a guard that outputs start with as
/// their sentinel, so the conformance suite sees a write outside the view.
inline constexpr int64_t kGuardBytes = 64;

/// A tensor downloaded to host memory: the bytes of its whole allocation (guards included) and the view's
/// layout.
struct HostTensor {
  ElementKind kind = ElementKind::F32;
  Shape shape;
  std::array<int64_t, kMaxRank> stride{};
  int64_t origin = 0;  ///< the storage element index of the view's first element in `bytes` (after the guard)
  std::vector<uint8_t> bytes;

  int64_t numel() const { return shape.numel(); }
  /// The storage element index of logical element `linear` (row-major order over the shape).
  int64_t offset(int64_t linear) const;
};

/// A device allocation and the view of it an op is given.
struct Operand {
  Buffer buffer;
  DynTensor view;

  Result<HostTensor> download() const;
};

/// Allocates an operand on `stream`, with `kGuardBytes` before and after the view. Dense: row-major.
/// Strided: the innermost dimension has stride 2 and the outer ones are row-major over that padded extent,
/// so every other element is a gap the op must not touch (packed 4-bit kinds get the same view, which plans
/// reject). `storage`, when not empty, lists the view's dimensions from the outermost in memory to the innermost
/// (a permutation of 0 .. rank − 1; empty: 0, 1, ..., row-major): {0, 2, 1, 3} stores a [pages, 16, H_kv, d]
/// cache head-major, as [pages, H_kv, 16, d]. Strided still pads the view's last dimension.
Result<Operand> make_operand(const Stream& stream, ElementKind kind, const Shape& shape, bool strided,
                             const std::vector<int>& storage = {});

/// The values inputs are drawn from: [lo, hi], integers only when `integral`.
struct ValueRange {
  double lo = -1;
  double hi = 1;
  bool integral = false;
};
/// A range that suits an input of kind `in` feeding an output of kind `out`: finite, inside both kinds'
/// ranges (so float → integer casts stay in range), non-negative when either kind is unsigned.
ValueRange input_range(ElementKind in, ElementKind out);

/// Fills the whole allocation (gaps included) with pseudo-random values from `range`, a pure function of
/// (kind, size, range, seed): every device gets the same bytes.
Status fill_random(Operand& operand, const ValueRange& range, uint64_t seed);
/// Sets every byte of the allocation to `byte` (a sentinel for outputs).
Status fill_sentinel(Operand& operand, uint8_t byte = 0xA5);

}  // namespace baracuda::profiler
