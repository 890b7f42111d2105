// SoftmaxPlan and SoftmaxBackwardPlan over the last dimension (attention rows, vocabulary logits: 64 × 128k on
// cuda), softmax and log-softmax, the forward with an additive mask over the last dimension. GB/s counts each
// full tensor read or written once (x and y; dy, y and dx),
// though the plans read x (dy, y) twice: the figure against the copy bandwidth shows what the second read costs.
#include <baracuda/ops/softmax.hpp>
#include <cmath>
#include <string>

#include "common.hpp"
#include "scenarios.hpp"

namespace baracuda::profiler {
namespace {

SoftmaxDescriptor descriptor(const Problem& p) {
  return SoftmaxDescriptor()
      .with_op(p.variant % 2 == 0 ? SoftmaxOp::Softmax : SoftmaxOp::LogSoftmax)
      .with_element(p.dtype)
      .with_shape(p.shape.rank == 0 ? Shape{1} : p.shape);
}

/// The forward takes an additive mask over the last dimension (an attention mask's row), broadcast.
Shape mask_shape(const Problem& p) {
  const Shape s = descriptor(p).shape;
  return Shape{s.dims[s.rank - 1]};
}

Result<dynamic::SoftmaxPlan> select_forward(const Stream& s, const Problem& p) {
  return dynamic::SoftmaxPlan::select(s, descriptor(p).with_mask(mask_shape(p)));
}
Result<dynamic::SoftmaxBackwardPlan> select_backward(const Stream& s, const Problem& p) {
  return dynamic::SoftmaxBackwardPlan::select(s, descriptor(p));
}

/// The forward's x and mask, and y.
OperandSpecs<2, 1> forward_operands(const Problem& p) {
  const Shape s = descriptor(p).shape;
  return {{OperandSpec{p.dtype, s, ValueRange{-4, 4, false}},
           OperandSpec{p.dtype, mask_shape(p), ValueRange{-2, 0, false}}},
          {OperandSpec{p.dtype, s, {}}}};
}

/// dy in [−1, 1] and a y like the forward's: probabilities about 1/n (softmax), log-probabilities about
/// −log n (log-softmax). Uniform [0, 1] "probabilities" over a 128k row would make Σ dy·y a sum of hundreds
/// with cancellation, whose f32 rounding no tolerance of the table covers, and no forward produces.
OperandSpecs<2, 1> backward_operands(const Problem& p) {
  const Shape s = descriptor(p).shape;
  const double n = static_cast<double>(s.dims[s.rank - 1] > 0 ? s.dims[s.rank - 1] : 1);
  const ValueRange y =
      p.variant % 2 == 0 ? ValueRange{0, 2 / n, false} : ValueRange{-std::log(n) - 1, -std::log(n) + 1, false};
  return {{OperandSpec{p.dtype, s, ValueRange{-1, 1, false}}, OperandSpec{p.dtype, s, y}},
          {OperandSpec{p.dtype, s, {}}}};
}

Traffic forward_traffic(const Problem& p) { return Traffic{2.0 * storage_bytes(p.dtype, p.shape.numel()), 0}; }
Traffic backward_traffic(const Problem& p) { return Traffic{3.0 * storage_bytes(p.dtype, p.shape.numel()), 0}; }

std::vector<Shape> default_shapes(DeviceKind device) {
  if (device == DeviceKind::Cuda) return {Shape{4096, 4096}, Shape{8192, 8192}, Shape{64, 131072}};
  return {Shape{257, 259}, Shape{3, 1500}};
}

constexpr ScenarioFamily kForward{"softmax",
                                  select_with<select_forward>,
                                  prepare_with<select_forward, forward_operands>,
                                  forward_traffic,
                                  float_kinds,
                                  default_shapes,
                                  OutputKind::SameAsInput,
                                  Comparison::Tolerance};
constexpr ScenarioFamily kBackward{"softmax",
                                   select_with<select_backward>,
                                   prepare_with<select_backward, backward_operands>,
                                   backward_traffic,
                                   float_kinds,
                                   default_shapes,
                                   OutputKind::SameAsInput,
                                   Comparison::Tolerance};

}  // namespace

void add_softmax_scenarios(std::vector<Scenario>& out) {
  out.push_back(kForward.op("softmax", "softmax over the last dimension (torch.softmax(x, -1))", 0));
  out.push_back(kForward.op("log_softmax", "log-softmax over the last dimension", 1));
  out.push_back(kBackward.op("softmax_backward", "dx of softmax: y * (dy - sum(dy * y))", 2));
  out.push_back(kBackward.op("log_softmax_backward", "dx of log-softmax: dy - exp(y) * sum(dy)", 3));
}

}  // namespace baracuda::profiler
