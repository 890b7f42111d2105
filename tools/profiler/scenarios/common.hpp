// Helpers the scenario files share: an Instance for plans with one input and one output, and the
// shapes of the default suite.
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "../scenario.hpp"

namespace baracuda::profiler {

/// The shapes most elementwise families run by default: small and odd on host/sim (tails, unaligned rows),
/// LLM activation sizes on cuda (decode [16, 4096], prefill [4096, 4096], MLP [8192, 14336]).
std::vector<Shape> elementwise_shapes(DeviceKind device);

/// A seed that depends only on the problem's kinds, so every device sees the same inputs.
uint64_t problem_seed(const Problem& p);

/// An Instance for a `dynamic::` plan with `can_implement(in, out)` and `run(stream, ws, in, out)`.
template <class Plan>
class InOutInstance final : public Instance {
 public:
  static Result<std::unique_ptr<Instance>> make(const Stream& stream, Plan plan, const Problem& p) {
    auto in = make_operand(stream, p.dtype, p.shape, p.strided);
    if (!in) return in.error();
    auto out = make_operand(stream, p.out_dtype, p.shape, p.strided);
    if (!out) return out.error();
    auto ws = Buffer::allocate(stream, plan.workspace_size());
    if (!ws) return ws.error();
    BARACUDA_TRY(fill_random(*in, input_range(p.dtype, p.out_dtype), problem_seed(p)));
    BARACUDA_TRY(fill_sentinel(*out));
    return std::unique_ptr<Instance>(
        new InOutInstance(std::move(plan), std::move(in).value(), std::move(out).value(), std::move(ws).value()));
  }
  KernelSku sku() const override { return plan_.sku(); }
  Status check() const override { return plan_.can_implement(in_.view, out_.view); }
  Status run(const Stream& stream) override { return plan_.run(stream, ws_.as_workspace(), in_.view, out_.view); }
  Result<HostTensor> output() const override { return out_.download(); }

 private:
  InOutInstance(Plan plan, Operand in, Operand out, Buffer ws)
      : plan_(std::move(plan)), in_(std::move(in)), out_(std::move(out)), ws_(std::move(ws)) {}
  Plan plan_;
  Operand in_, out_;
  Buffer ws_;
};

}  // namespace baracuda::profiler
