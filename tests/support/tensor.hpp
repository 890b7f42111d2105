// Test support: tensors on a test device (a Buffer and a strided view into it) and the layouts the
// sweeps run: empty, one element, 257×259, strided (non-contiguous in and out), broadcast input, reversed
// (negative stride) input, rank 8 permuted, in place.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "baracuda/core/buffer.hpp"
#include "baracuda/core/dyn_tensor.hpp"
#include "baracuda/core/status.hpp"

namespace baracuda::test {

/// Strides (elements) and the element offset of element [0, …, 0] inside its storage.
struct Strided {
  std::array<int64_t, kMaxRank> stride{};
  int64_t offset = 0;
};

/// The byte every test fills outputs (and the storage around views) with before a run, to see what a run
/// wrote: 0xA5 is no common value of any element kind.
inline constexpr uint8_t kSentinel = 0xA5;

/// `elements` elements of kind `k` (packed kinds: their bytes), every byte kSentinel.
inline std::vector<uint8_t> sentinel_storage(ElementKind k, int64_t elements) {
  return std::vector<uint8_t>(static_cast<size_t>(storage_bytes(k, elements)), kSentinel);
}

/// Row-major strides of a shape.
Strided dense_layout(const Shape& shape);
/// Elements a view of `shape` with layout `l` spans in storage (0 when empty).
int64_t storage_elements(const Shape& shape, const Strided& l);

/// A tensor on a device: `storage` elements in a Buffer, and `view` over them.
struct DeviceTensor {
  Buffer buffer;
  DynTensor view;
  int64_t storage = 0;  ///< elements (packed kinds: logical elements)
};

/// Allocates storage for `shape`/`l` (at least `min_storage` elements), uploads `init` (its storage bytes;
/// empty = leave the allocation's contents), and builds the view.
Result<DeviceTensor> make_device_tensor(const Stream& stream, ElementKind k, const Shape& shape, const Strided& l,
                                        const std::vector<uint8_t>& init, int64_t min_storage = 0);
/// The whole storage, downloaded.
std::vector<uint8_t> download(const DeviceTensor& t);

/// Element bytes of `shape` read from `storage` through layout `l`, in row-major order.
std::vector<uint8_t> gather(ElementKind k, const std::vector<uint8_t>& storage, const Shape& shape, const Strided& l);
/// Writes row-major element bytes into `storage` through layout `l`.
void scatter(ElementKind k, const std::vector<uint8_t>& logical, std::vector<uint8_t>* storage, const Shape& shape,
             const Strided& l);

/// One layout of a unary elementwise sweep.
struct LayoutCase {
  std::string name;
  Shape shape;
  Strided in;
  Strided out;
  bool in_place = false;  ///< out aliases in (same storage, same layout)
};

/// The sweep's layouts. `packed` restricts them to contiguous ones (plus an odd element count).
std::vector<LayoutCase> unary_layouts(bool packed = false);

}  // namespace baracuda::test
