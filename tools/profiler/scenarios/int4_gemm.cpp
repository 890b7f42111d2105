// The int4_gemm family: Int4MarlinGemmPlan (W4A16), c[M, N] = a[M, K] · dequant(W)[K, N] with a Marlin-packed
// symmetric int4 weight, group 128, f16 or bf16 activations.
//
// Shapes. `--shape MxNxK` as given; [M, N] (and [N], one token) are rounded to the plan's rules: N up to a
// multiple of 64, K = that N rounded up to a multiple of 128. Defaults: on cuda the decode and
// small-batch shapes, M ∈ {1, 4, 16, 32, 64, 128} × (N, K) ∈ {(4096, 4096), (11008, 4096), (8192, 8192)};
// on host/sim two small ones (the sim runs the tensor-core kernel thread by thread).
//
// Values. The weight words are random bits (every nibble pattern is a valid weight), the activations small
// integers (−2..2) and the scales 1, 2 or 3: every product and every partial sum is then an integer below
// 2^24, exact in f32 and in double, so the device's f32 tensor-core sums and the host reference's double sum
// are the same number and the outputs compare bit for bit (timing does not depend on the values).
//
// Traffic: the weight (K·N/2 bytes), its scales, a and c, each once; flops = 2·M·N·K. "GB/s" is thus the
// effective weight-streaming bandwidth at small M. On cuda each case also times cuBLAS fp16 GEMM of the same
// M×N×K (cublas_gemm.hpp): the speedup column is its time over the plan's.
#include <algorithm>
#include <utility>

#include <baracuda/ops/int4_gemm.hpp>

#include "../cublas_gemm.hpp"
#include "common.hpp"
#include "scenarios.hpp"

namespace baracuda::profiler {
namespace {

constexpr int64_t kGroup = 128;

struct Mnk {
  int64_t m = 0, n = 0, k = 0;
};

Mnk mnk(const Problem& p) {
  const Shape& s = p.shape;
  if (s.rank >= 3) return {s[0], s[1], s[2]};
  const int64_t m = s.rank == 2 ? s[0] : 1, n = s.rank == 0 ? 64 : s[s.rank - 1];
  const int64_t n64 = std::max<int64_t>(64, (n + 63) / 64 * 64);
  return {m, n64, (n64 + 127) / 128 * 128};
}

Int4GemmDescriptor descriptor(const Problem& p) {
  const Mnk d = mnk(p);
  return Int4GemmDescriptor{}.with_shape(d.m, d.n, d.k).with_group(kGroup).with_element(p.dtype);
}

/// Binds (a, b_q, scales, then c) to dynamic::Int4MarlinGemmArgs (no zeros, perm or bias).
struct BindInt4Gemm {
  static dynamic::Int4MarlinGemmArgs bind(const dynamic::Int4MarlinGemmPlan&, const DynTensor& a,
                                          const DynTensor& b, const DynTensor& s, const DynTensor& c) {
    return {a, b, s, {}, {}, {}, c};
  }
};
using PositionalInt4Plan = PositionalPlan<dynamic::Int4MarlinGemmPlan, BindInt4Gemm>;

Result<KernelSku> select_sku(const Stream& s, const Problem& p) {
  return sku_of(dynamic::Int4MarlinGemmPlan::select(s, descriptor(p)));
}

Result<std::unique_ptr<Instance>> prepare(const Stream& s, const Problem& p) {
  const Mnk d = mnk(p);
  auto plan = dynamic::Int4MarlinGemmPlan::select(s, descriptor(p));
  if (!plan) return plan.error();
  const int64_t groups = d.k / kGroup;
  return PlanInstance<PositionalInt4Plan, 3, 1>::make(
      s, PositionalInt4Plan{std::move(plan).value()}, p,
      {OperandSpec{p.dtype, Shape{d.m, d.k}, ValueRange{-2, 2, true}},
       OperandSpec{ElementKind::S32, Shape{d.k / 16, 2 * d.n}, ValueRange{-2147483648.0, 2147483647.0, true}},
       OperandSpec{p.dtype, Shape{groups, d.n}, ValueRange{1, 3, true}}},
      {OperandSpec{p.dtype, Shape{d.m, d.n}, {}}});
}

Traffic traffic(const Problem& p) {
  const Mnk d = mnk(p);
  const double w = static_cast<double>(d.k) * static_cast<double>(d.n) / 2;
  const double scales = static_cast<double>(storage_bytes(p.dtype, (d.k / kGroup) * d.n));
  const double ac = static_cast<double>(storage_bytes(p.dtype, d.m * d.k) + storage_bytes(p.dtype, d.m * d.n));
  return Traffic{w + scales + ac, 2.0 * static_cast<double>(d.m) * static_cast<double>(d.n) * static_cast<double>(d.k)};
}

std::vector<Shape> default_shapes(DeviceKind device) {
  if (device == DeviceKind::Cuda) {
    std::vector<Shape> r;
    for (int64_t m : {1, 4, 16, 32, 64, 128})
      for (auto [n, k] : {std::pair<int64_t, int64_t>{4096, 4096}, {11008, 4096}, {8192, 8192}})
        r.push_back(Shape{m, n, k});
    return r;
  }
  return {Shape{5, 128, 256}, Shape{33, 64, 128}};
}

std::vector<Problem> kinds(uint32_t) {
  return {{ElementKind::F16, ElementKind::F16, {}, false, 0}, {ElementKind::Bf16, ElementKind::Bf16, {}, false, 0}};
}

Result<double> cublas_baseline(const Stream& s, const Problem& p, int warmup, int repeat) {
  const Mnk d = mnk(p);
  return cublas_f16_gemm_seconds(s, d.m, d.n, d.k, warmup, repeat);
}

}  // namespace

void add_int4_gemm_scenarios(std::vector<Scenario>& out) {
  out.push_back(Scenario{
      .name = "int4_marlin_gemm",
      .family = "int4_gemm",
      .summary = "C[m, n] = sum_k A[m, k] * ((q[k, n] - 8) * s[k/128, n]), Marlin-packed int4 weight (W4A16)",
      .variant = 0,
      .output = OutputKind::SameAsInput,
      .comparison = Comparison::Exact,
      .default_kinds = kinds,
      .default_shapes = default_shapes,
      .select = select_sku,
      .prepare = prepare,
      .traffic = traffic,
      .baseline_name = "cuBLAS f16 GEMM",
      .baseline = cublas_baseline,
  });
}

}  // namespace baracuda::profiler
