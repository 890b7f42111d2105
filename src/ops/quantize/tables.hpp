// Internal: the quantize family's dispatch tables (one per device: host reference, sim, cuda) and the
// type lists they are built from — the family's catalog of supported kinds.
#pragma once

#include "baracuda/core/element.hpp"
#include "device/dispatch_table.hpp"
#include "ops/quantize/dispatch.hpp"

namespace baracuda::detail {

/// Float data kinds (x, y, dx, dy); scales and learnable zero points are their opmath type.
using QuantizeFloatTypes = FloatTypes;
/// Quantized storage kinds (packed 4-bit: two per byte).
using QuantizedTypes = type_list<int8_t, uint8_t, int4x2_t, uint4x2_t>;

/// Functions by [float kind] or [float kind][quantized kind]; nullptr = unsupported.
struct QuantizeTables {
  KindPairTable<QuantizeFn> quantize{};
  KindPairTable<QuantizeFn> dequantize{};
  KindTable<QuantizeFn> quantize_backward{};
  KindTable<QuantizeFn> dequantize_backward{};
  KindTable<QuantizeFn> fake_quantize{};
  KindTable<QuantizeFn> fake_quantize_backward{};
  KindTable<QuantizeFn> learnable{};
  KindTable<QuantizeFn> learnable_backward_dx{};     ///< dx of the learnable backward
  KindTable<QuantizeFn> learnable_backward_grads{};  ///< dscale and dzp of the learnable backward
};

}  // namespace baracuda::detail

// reference: host.cpp; sim and cuda: the kernel unit device_pairs.cu (with device_float.cu's entries)
BARACUDA_DECLARE_DEVICE_TABLE(detail::QuantizeTables, quantize_tables)
