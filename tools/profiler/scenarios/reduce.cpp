// ReducePlan: a reduction over the last dimension of the problem's shape (per-row statistics: an LLM
// activation [tokens, hidden] on cuda), one scenario per op of the family's common uses. Inputs are small
// integers, so sums are exact on every device and the tolerance table only meets the rounding of the
// finishing division, root, log or f32 variance. GB/s counts x read once and y written once.
#include <baracuda/ops/reduce.hpp>
#include <string>

#include "common.hpp"
#include "scenarios.hpp"

namespace baracuda::profiler {
namespace {

constexpr ReduceOp kOps[] = {ReduceOp::Sum,    ReduceOp::Mean,      ReduceOp::Max, ReduceOp::Argmax,
                             ReduceOp::NormL2, ReduceOp::LogSumExp, ReduceOp::Var};

ReduceDescriptor descriptor(const Problem& p) {
  ReduceDescriptor d = ReduceDescriptor().with_op(kOps[p.variant]).with_element(p.dtype).with_shape(p.shape);
  if (p.shape.rank > 0) d.over(-1);
  return d;
}

Result<dynamic::ReducePlan> select_plan(const Stream& s, const Problem& p) {
  return dynamic::ReducePlan::select(s, descriptor(p));
}

Shape output_shape(const Problem& p) {
  Shape out = p.shape;
  if (out.rank > 0) --out.rank;
  return out;
}

OperandSpecs<1, 1> operands(const Problem& p) {
  return {{OperandSpec{p.dtype, p.shape, ValueRange{-4, 4, true}}}, {OperandSpec{p.out_dtype, output_shape(p), {}}}};
}

Traffic traffic(const Problem& p) {
  return Traffic{static_cast<double>(storage_bytes(p.dtype, p.shape.numel()) +
                                     storage_bytes(p.out_dtype, output_shape(p).numel())),
                 0};
}

std::vector<Shape> default_shapes(DeviceKind device) {
  if (device == DeviceKind::Cuda) return {Shape{4096, 4096}, Shape{8192, 8192}, Shape{64, 131072}};
  return {Shape{257, 259}, Shape{3, 1500}};
}

std::vector<Problem> kinds(uint32_t variant) {
  std::vector<Problem> r = same_kinds({ElementKind::F32, ElementKind::Bf16}, variant);
  if (kOps[variant] == ReduceOp::Argmax)
    for (Problem& p : r) p.out_dtype = ElementKind::S64;
  return r;
}

constexpr ScenarioFamily kReduce{
    "reduce",           select_with<select_plan>, prepare_with<select_plan, operands>, traffic, kinds, default_shapes,
    OutputKind::Chosen, Comparison::Tolerance};

}  // namespace

void add_reduce_scenarios(std::vector<Scenario>& out) {
  out.push_back(kReduce.op("sum", "sum over the last dimension (torch.sum(x, -1))", 0));
  out.push_back(kReduce.op("mean", "mean over the last dimension", 1));
  out.push_back(kReduce.op("amax", "max over the last dimension (torch.amax(x, -1))", 2));
  out.push_back(kReduce.op("argmax", "index of the first max over the last dimension", 3));
  out.push_back(kReduce.op("norm_l2", "L2 norm over the last dimension (torch.linalg.vector_norm)", 4));
  out.push_back(kReduce.op("logsumexp", "log-sum-exp over the last dimension", 5));
  out.push_back(kReduce.op("var", "variance (correction 1) over the last dimension", 6));
}

}  // namespace baracuda::profiler
