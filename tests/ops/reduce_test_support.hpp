// The reduce tests' shared pieces: an input (random values of the kind, in a dense or transposed layout),
// a run of a ReducePlan on any device (with its workspace, over a sentinel-filled output), and the error
// bound of each output against the host reference, derived from how the devices accumulate.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "baracuda/baracuda.hpp"
#include "support/numeric.hpp"
#include "support/random.hpp"
#include "support/tensor.hpp"

namespace baracuda::test {

struct ReduceInput {
  ElementKind kind;
  Shape shape;
  Strided layout;
  std::vector<uint8_t> storage;  ///< the layout's storage bytes
  std::vector<double> values;    ///< row-major logical values
};

/// Random values of `kind` (floats uniform in [−2, 2), in [0.9, 1.1) for Prod; integers and bool from the
/// small exact pool), dense or (rank 2) a transposed view of column-major storage.
inline ReduceInput reduce_input(ReduceOp op, ElementKind kind, const Shape& shape, bool transposed, uint64_t seed) {
  ReduceInput in{kind, shape, dense_layout(shape), {}, {}};
  const int64_t n = shape.numel();
  std::vector<uint8_t> logical =
      is_floating(kind) ? (op == ReduceOp::Prod ? random_floats(kind, n, 0.9, 1.1, seed, &in.values)
                                                : random_floats(kind, n, -2, 2, seed, &in.values))
                        : exact_small_values(kind, n, seed, &in.values);
  if (transposed && shape.rank == 2) {
    in.layout.stride[0] = 1;
    in.layout.stride[1] = shape.dims[0];
  }
  in.storage = sentinel_storage(kind, storage_elements(shape, in.layout));
  scatter(kind, logical, &in.storage, shape, in.layout);
  return in;
}

struct ReduceOutput {
  std::vector<double> values;  ///< row-major
  std::vector<uint64_t> bits;
};

/// Runs `plan` on `stream` over `in`, y dense; fails the test (and returns nothing) where a step fails.
inline ReduceOutput run_reduce(const Stream& stream, const dynamic::ReducePlan& plan, const ReduceInput& in) {
  ReduceOutput out;
  const ElementKind yk = plan.output_kind();
  const Shape ys = plan.output_shape();
  auto x = make_device_tensor(stream, in.kind, in.shape, in.layout, in.storage);
  auto y = make_device_tensor(stream, yk, ys, dense_layout(ys), sentinel_storage(yk, ys.numel()));
  EXPECT_TRUE(x && y);
  if (!x || !y) return out;
  auto ws = Buffer::allocate(stream, std::max<size_t>(plan.workspace_size(), 1));
  EXPECT_TRUE(ws);
  if (!ws) return out;
  const Status s = plan.run(stream, Workspace(ws->data(), plan.workspace_size()), {x->view, y->view});
  EXPECT_TRUE(s) << s.to_string();
  const std::vector<uint8_t> bytes = download(*y);
  const int64_t eb = element_bytes(yk);
  for (int64_t i = 0; i < ys.numel(); ++i) {
    out.values.push_back(decode_value(yk, &bytes[static_cast<size_t>(i * eb)]));
    out.bits.push_back(load_bits(yk, &bytes[static_cast<size_t>(i * eb)]));
  }
  return out;
}

/// Half an ulp of a float kind, relative.
inline double half_ulp(ElementKind k) {
  switch (k) {
    case ElementKind::F16: return std::ldexp(1.0, -11);
    case ElementKind::Bf16: return std::ldexp(1.0, -8);
    case ElementKind::F64: return std::ldexp(1.0, -53);
    default: return std::ldexp(1.0, -24);
  }
}

/// Per output: how far a device result may be from the host's. 0 (exact) for integer, bool, extremum and
/// index results; otherwise one ulp of the output kind (the host rounds a long double, the devices an f32 or
/// f64 accumulator, so the two may round to neighbours) plus the accumulator's worst-case error over the
/// segment's n elements (n · eps · the magnitude the op sums).
inline std::vector<double> reduce_error_bounds(const ReduceDescriptor& d, const dynamic::ReducePlan& host,
                                               const ReduceInput& in, const ReduceOutput& want) {
  const int64_t outputs = host.output_shape().numel();
  std::vector<double> bound(static_cast<size_t>(outputs), 0.0);
  const bool exact = !is_floating(d.element) || d.op == ReduceOp::Max || d.op == ReduceOp::Min ||
                     d.op == ReduceOp::Argmax || d.op == ReduceOp::Argmin || d.op == ReduceOp::NormLinf ||
                     d.op == ReduceOp::Any || d.op == ReduceOp::All;
  if (exact || outputs == 0) return bound;
  // Per segment: n, Σ|x|, Σx² (segments row-major over the kept dimensions).
  const uint32_t mask = host.reduced_mask();
  std::vector<double> n(bound.size(), 0), abs_sum(bound.size(), 0), sq_sum(bound.size(), 0);
  const Shape& s = in.shape;
  for (int64_t i = 0; i < s.numel(); ++i) {
    int64_t rest = i, seg = 0, scale = 1;
    for (int dim = s.rank - 1; dim >= 0; --dim) {
      const int64_t idx = rest % s.dims[dim];
      rest /= s.dims[dim];
      if (!((mask >> dim) & 1u)) {
        seg += idx * scale;
        scale *= s.dims[dim];
      }
    }
    const double v = in.values[static_cast<size_t>(i)];
    n[static_cast<size_t>(seg)] += 1;
    abs_sum[static_cast<size_t>(seg)] += std::fabs(v);
    sq_sum[static_cast<size_t>(seg)] += v * v;
  }
  const double eps = d.element == ElementKind::F64 ? std::ldexp(1.0, -53) : std::ldexp(1.0, -24);
  const double ulp = 2 * half_ulp(d.element);
  for (size_t o = 0; o < bound.size(); ++o) {
    const double w = std::fabs(want.values[o]), k = n[o] * eps * 2;
    double acc = 0;
    switch (d.op) {
      case ReduceOp::Sum:
      case ReduceOp::NormL1: acc = k * abs_sum[o]; break;
      case ReduceOp::Mean: acc = k * abs_sum[o] / std::max(n[o], 1.0); break;
      case ReduceOp::NormL2: acc = w > 0 ? k * sq_sum[o] / (2 * w) : k; break;
      case ReduceOp::NormP:
      case ReduceOp::Prod: acc = 2 * k * w; break;
      case ReduceOp::Var: acc = 2 * k * sq_sum[o] / std::max(n[o] - d.correction, 1.0); break;
      case ReduceOp::Std: acc = w > 0 ? k * sq_sum[o] / std::max(n[o] - d.correction, 1.0) / w : k; break;
      case ReduceOp::LogSumExp: acc = 2 * k; break;
      default: break;
    }
    bound[o] = ulp * w + acc + 1e-300;
  }
  return bound;
}

}  // namespace baracuda::test
