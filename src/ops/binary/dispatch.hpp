// Internal: the binary family's launch records, dispatch-table types and the tables' accessors.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>

#include "baracuda/core/dyn_tensor.hpp"
#include "baracuda/ops/binary.hpp"
#include "core/exec_context.hpp"
#include "device/dispatch_table.hpp"

namespace baracuda::detail {

/// What a forward or compare function receives: validated, non-empty views, with a and b already viewed
/// over the output shape (stride 0 where they broadcast). Inputs are read-only views, the output writable.
struct BinaryLaunch {
  ConstDynTensor a;
  ConstDynTensor b;
  DynTensor out;
};

/// Which gradients a backward launch writes.
enum class GradOutputs : uint8_t {
  Both,   ///< da and db
  OnlyA,  ///< da only: the launch's `da` and `db` are both the da view, and both slots receive dA
  OnlyB,  ///< db only: both views are db, and both slots receive dB
};

/// What a backward function receives: dy, and a and b viewed over the output shape; two output views
/// (see GradOutputs for the case of one wanted gradient).
struct BinaryBackwardLaunch {
  ConstDynTensor dy;
  ConstDynTensor a;
  ConstDynTensor b;
  DynTensor da;
  DynTensor db;
  GradOutputs outputs = GradOutputs::Both;
};

/// [op][kind]; nullptr = Unsupported.
using BinaryForwardTable = std::array<KindTable<BinaryFn>, kNumBinaryOps>;
using CompareTable = std::array<KindTable<CompareFn>, kNumCompareOps>;
using BinaryBackwardTable = std::array<KindTable<BinaryBackwardFn>, kNumBinaryOps>;

/// One device's three tables.
struct BinaryTables {
  BinaryForwardTable forward{};
  CompareTable compare{};
  BinaryBackwardTable backward{};
};

/// The union of partial tables (each kernel translation unit instantiates some element kinds).
inline BinaryTables merge_binary_tables(std::initializer_list<const BinaryTables*> parts) {
  BinaryTables t{};
  auto take = [](auto& dst, const auto& src) {
    for (size_t op = 0; op < dst.size(); ++op)
      for (size_t k = 0; k < kNumElementKinds; ++k)
        if (src[op][k] != nullptr) dst[op][k] = src[op][k];
  };
  for (const BinaryTables* p : parts) {
    take(t.forward, p->forward);
    take(t.compare, p->compare);
    take(t.backward, p->backward);
  }
  return t;
}

}  // namespace baracuda::detail

// reference: host.cpp; sim and cuda: the kernel unit device.cu, which merges the parts of device_16bit.cu and
// device_int.cu
BARACUDA_DECLARE_DEVICE_TABLE(detail::BinaryTables, binary_tables)
