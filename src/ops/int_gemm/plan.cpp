// IntGemmPlan, QuantizedLinearPlan and SmoothQuantLinearPlan: select (the descriptor rules of
// include/baracuda/ops/int_gemm.hpp, the device's function), can_implement (the operands: kinds, shapes, the
// 16-byte cp.async alignment rules, no overlap), run (QuantizedLinear: the per-token quantization into the
// workspace, unless the caller gave x already quantized (x_q), then the fused GEMM + epilogue; the others: one
// call). Each takes its `dynamic::XxxArgs`.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "baracuda/ops/int_gemm.hpp"
#include "core/plan_core.hpp"
#include "core/validate.hpp"
#include "ops/quantize/convention.hpp"
#include "ops/quantize/kinds.hpp"
#include "ops/int_gemm/tables.hpp"
#include "ops/int_gemm/tuning.hpp"
#if BARACUDA_HAVE_CUDA_KERNELS
#include "ops/gemm/cublaslt.hpp"
#endif

namespace baracuda {
namespace {

constexpr std::string_view kIntGemm = "IntGemmPlan";
constexpr std::string_view kQLinear = "QuantizedLinearPlan";
constexpr std::string_view kSqLinear = "SmoothQuantLinearPlan";
constexpr size_t kAlign = 256;     // workspace sub-buffers start 256-byte aligned
constexpr int64_t kKAlign = 16;    // K and the A/B row strides: multiples of 16 elements (16 bytes)
constexpr uintptr_t kPtrAlign = 16;

std::string s(std::string_view v) { return std::string(v); }
std::string n2s(int64_t v) { return std::to_string(v); }
size_t round_up(size_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

/// The split-K parts' region of a plan's workspace, from `offset` (tuning.hpp's int_gemm_splits, the same for
/// every GPU; the host device needs none). Without a split, or when the parts would take the workspace past
/// the preference's `max_workspace_bytes`, none: the GEMM then runs unsplit (the same result).
detail::IntGemmSplitWorkspace split_workspace(const Stream& stream, int64_t m, int64_t n, int64_t k, bool colsums,
                                              size_t offset, size_t max_bytes) {
  detail::IntGemmSplitWorkspace w;
  if (stream.device() == DeviceKind::Host) return w;
  const int splits = detail::int_gemm_splits(detail::kIntGemmTilesSm90, m, n, k);
  if (splits == 1) return w;
  const auto parts = static_cast<size_t>(splits);
  const size_t colsum_offset = offset + round_up(parts * static_cast<size_t>(m) * static_cast<size_t>(n) * 4);
  const size_t end = colsum_offset + (colsums ? round_up(parts * static_cast<size_t>(n) * 4) : 0);
  if (end > max_bytes) return w;
  w.splits = splits, w.offset = offset, w.colsum_offset = colsum_offset, w.bytes = end;
  return w;
}

/// The launch record's views of the parts inside the workspace `ws` given to run.
detail::IntGemmSplit split_views(const detail::IntGemmSplitWorkspace& w, const Workspace& ws, int64_t m, int64_t n,
                                 bool colsums) {
  detail::IntGemmSplit v;
  if (w.splits == 1) return v;
  char* base = static_cast<char*>(ws.data);
  v.splits = w.splits;
  v.partial = DynTensor::dense(base + w.offset, ElementKind::S32, Shape{w.splits, m, n});
  if (colsums) v.partial_colsum = DynTensor::dense(base + w.colsum_offset, ElementKind::S32, Shape{w.splits, n});
  return v;
}

constexpr std::string_view kSplitContents = "the split-K parts' s32 sums, splits*M*N";

#if BARACUDA_HAVE_CUDA_KERNELS
/// IntGemm as the gemm family's launch record, for the cuBLASLt backend: c = a · bᵀ with op(A) = a [M, K]
/// (row-major) and op(B) = bᵀ [K, N] (column-major), the descriptor's row strides; `a`, `b`, `c` the operands
/// (present markers at select).
detail::GemmLaunch lt_launch(const IntGemmDescriptor& d, const void* a, const void* b, const void* c) {
  detail::GemmLaunch l;
  l.m = d.m, l.n = d.n, l.k = d.k, l.batch = 1;
  l.ab = ElementKind::S8, l.cd = ElementKind::S32;
  l.a = {a, 0, d.row_stride_a(), 1};
  l.b = {b, 0, 1, d.row_stride_b()};
  l.d = {c, 0, d.row_stride_c(), 1};
  return l;
}
detail::GemmLaunch cublaslt_problem(const IntGemmDescriptor& d) {
  const void* present = detail::CublasLtGemm::present_marker();
  return lt_launch(d, present, present, present);
}
detail::GemmLaunch lt_launch(const IntGemmDescriptor& d, const dynamic::IntGemmArgs& t) {
  return lt_launch(d, t.a.data, t.b.data, t.c.data);
}
#endif

/// The linear plans' cuBLASLt SKU (int_gemm.hpp's "cuBLASLt") with its sums and workspace placed from `offset`:
/// the cuda device (`device_pref` cleared of the request, for select_device), a symmetric x, an output the
/// epilogue table serves; `Unsupported` where it cannot serve.
Result<detail::LinearOnCublasLt> linear_on_cublaslt(std::string_view plan, const Stream& stream,
                                                     const detail::IntGemmTables& table, int64_t m, int64_t n,
                                                     int64_t k, ElementKind output, size_t offset, size_t max_bytes) {
  const detail::LinearFn epilogue = table.linear_epilogue[detail::kind_index(output)];
  if (epilogue == nullptr)
    return Error::unsupported(s(plan) + ": the cuBLASLt backend's epilogue does not serve " + s(to_string(output)) +
                              " outputs (f16, bf16 and f32 only)");
#if BARACUDA_HAVE_CUDA_KERNELS
  auto gemm = detail::CublasLtGemm::create(stream.device_index(),
                                           cublaslt_problem(IntGemmDescriptor{}.with_shape(m, n, k)), max_bytes);
  if (!gemm) return Error{gemm.error().code, s(plan) + ": the cuBLASLt backend: " + gemm.error().message};
  detail::LinearOnCublasLt r;
  r.gemm = std::move(gemm).value();
  r.epilogue = epilogue;
  r.sums_offset = round_up(offset);
  r.lt_offset = r.sums_offset + round_up(static_cast<size_t>(m) * static_cast<size_t>(n) * 4);
  r.end = r.lt_offset + r.gemm->workspace_size();
  if (r.end > max_bytes)
    return Error::unsupported(s(plan) + ": the cuBLASLt backend needs more workspace than max_workspace_bytes");
  return r;
#else
  (void)stream, (void)m, (void)n, (void)k, (void)offset, (void)max_bytes;
  return Error::unsupported(s(plan) + ": the cuBLASLt backend is not in a build without CUDA kernels");
#endif
}

/// The first check of a linear plan's select with a cuBLASLt preference, before select_device.
Status linear_cublaslt_rules(std::string_view plan, const Stream& stream, bool symmetric) {
  if (!symmetric)
    return Error::unsupported(s(plan) + ": the cuBLASLt backend takes a symmetric x only (the zero-point "
                              "correction needs the weight's column sums)");
  if (stream.device() != DeviceKind::Cuda)
    return Error::unsupported(s(plan) + ": the cuBLASLt backend serves the cuda device only");
  return {};
}

/// can_implement's extra rules for a plan on cuBLASLt: packed rows (the layouts built at select) for `a` (when
/// given: the plan's own quantized x is packed) and the weight, and cuBLASLt's pointer alignment.
Status check_on_cublaslt(std::string_view plan, const detail::LinearOnCublasLt& lt, int64_t m, int64_t n, int64_t k,
                         std::string_view a_name, const ConstDynTensor* a, const ConstDynTensor& w) {
#if BARACUDA_HAVE_CUDA_KERNELS
  const auto packed = [&](std::string_view name, const ConstDynTensor& x, int64_t rows) -> Status {
    if (rows <= 1 || x.stride[0] == k) return {};
    return Error::invalid(s(plan) + ": the cuBLASLt backend was built for packed operands: " + s(name) +
                          "'s row stride must be K = " + n2s(k) + ", got " + n2s(x.stride[0]));
  };
  if (a != nullptr) BARACUDA_TRY(packed(a_name, *a, m));
  BARACUDA_TRY(packed("weight", w, n));
  const void* marker = detail::CublasLtGemm::present_marker();
  return lt.gemm->can_run(lt_launch(IntGemmDescriptor{}.with_shape(m, n, k), a != nullptr ? a->data : marker,
                                    w.data, marker));
#else
  (void)plan, (void)lt, (void)m, (void)n, (void)k, (void)a_name, (void)a, (void)w;
  return {};
#endif
}

/// The run of a plan on cuBLASLt: the s32 sums of l.a · l.wᵀ into the workspace, then the epilogue over them.
Status run_on_cublaslt(const detail::ExecContext& ctx, const detail::LinearOnCublasLt& lt, const Workspace& ws,
                       detail::LinearLaunch l) {
#if BARACUDA_HAVE_CUDA_KERNELS
  char* base = static_cast<char*>(ws.data);
  const DynTensor sums = DynTensor::dense(base + lt.sums_offset, ElementKind::S32, Shape{1, l.m, l.n});
  BARACUDA_TRY(lt.gemm->run(ctx.stream, lt_launch(IntGemmDescriptor{}.with_shape(l.m, l.n, l.k), l.a.data, l.w.data,
                                                  sums.data),
                            base + lt.lt_offset, ws.size - lt.lt_offset));
  l.split.splits = 1, l.split.partial = sums, l.split.partial_colsum = {};
  return lt.epilogue(ctx, l);
#else
  (void)ctx, (void)lt, (void)ws, (void)l;
  return Error::internal("a linear plan on cuBLASLt in a build without CUDA kernels");
#endif
}

/// Whether an optional operand was given: anything but the empty (default) view.
bool given(const ConstDynTensor& t) { return t.data != nullptr || t.shape.rank != 0; }

bool is_int8_kind(ElementKind k) { return k == ElementKind::S8 || k == ElementKind::U8; }
ElementKind opmath_of(ElementKind out) { return out == ElementKind::F64 ? ElementKind::F64 : ElementKind::F32; }

const detail::IntGemmTables* tables_for(DeviceKind d) {
  return detail::table_for_device(d, reference::int_gemm_tables(), device_sim::int_gemm_tables(),
                                  BARACUDA_CUDA_TABLE(int_gemm_tables));
}

/// The empty-slot message: on sim/cuda the tensor-core kernel serves f16/bf16/f32 outputs only (the f64
/// epilogue is the host reference's).
Error no_function(std::string_view plan, const Stream& stream, const std::string& what) {
  if (stream.device() != DeviceKind::Host)
    return Error::unsupported(s(plan) + ": the int8 tensor-core kernel of the " + s(to_string(stream.device())) +
                              " device does not serve " + what +
                              " (f64 outputs run on the host device, the reference)");
  return Error::unsupported(s(plan) + ": " + what + " is not supported");
}
/// The SKU variant (a static string: KernelSku holds a string_view): the host reference, the mma.sync kernel
/// or the wgmma one (on a 9.0 GPU past decode, tuning.hpp's choose_wgmma; for rows a tensor map can describe,
/// 16-byte aligned: others run the mma.sync tiles); QuantizedLinear adds its quantization of x (0: none, 1:
/// per-token symmetric, 2: asymmetric).
std::string_view variant_of(const Stream& stream, const detail::IntGemmTables& t, int64_t m, int64_t n, int64_t k,
                            bool s32_out, int quant = 0) {
  static constexpr std::string_view kNames[4][3] = {
      {"reference", "reference_per_token_sym", "reference_per_token_asym"},
      {"tc_m16n8k32", "tc_m16n8k32_per_token_sym", "tc_m16n8k32_per_token_asym"},
      {"wgmma_m64n128k32_tma", "wgmma_m64n128k32_tma_per_token_sym", "wgmma_m64n128k32_tma_per_token_asym"},
      {"wgmma_m64n256k32_tma", "wgmma_m64n256k32_tma_per_token_sym", "wgmma_m64n256k32_tma_per_token_asym"}};
  int kernel = stream.device() == DeviceKind::Host ? 0 : 1;
  if (t.wgmma && stream.device() == DeviceKind::Cuda) {
    if (auto ctx = detail::make_exec_context(stream)) {
      const auto w = detail::wgmma_for_device(ctx->sm, ctx->multiprocessor_count, m, n, k, s32_out);
      if (w != detail::IntGemmWgmmaKind::None) kernel = w == detail::IntGemmWgmmaKind::Wide ? 3 : 2;
    }
  }
  return kNames[kernel][quant];
}

/// IntGemmDescriptor's leading dimensions (int_gemm.hpp): 0 or ≥ K and a multiple of 16 for a and b, 0 or ≥ N
/// for c.
Status check_leading_dims(const IntGemmDescriptor& d) {
  const auto k_ld = [&](std::string_view name, int64_t ld) -> Status {
    if (ld == 0 || (ld >= d.k && ld % kKAlign == 0)) return {};
    return Error::invalid(s(kIntGemm) + ": " + s(name) + " must be 0 (packed) or a multiple of 16 that is >= K = " +
                          n2s(d.k) + "; got " + n2s(ld));
  };
  BARACUDA_TRY(k_ld("lda", d.lda));
  BARACUDA_TRY(k_ld("ldb", d.ldb));
  if (d.ldc != 0 && d.ldc < d.n)
    return Error::invalid(s(kIntGemm) + ": ldc must be 0 (packed) or >= N = " + n2s(d.n) + "; got " + n2s(d.ldc));
  return {};
}

Status check_mnk(std::string_view plan, int64_t m, int64_t n, int64_t k) {
  if (m < 0 || n < 0 || k < 0)
    return Error::invalid(s(plan) + ": M, N and K must be >= 0; got M = " + n2s(m) + ", N = " + n2s(n) +
                          ", K = " + n2s(k));
  // The tensor-core kernels launch ceil(M / BM) row blocks on grid.y (at most 65535; BM ≥ 64 whenever M is
  // large) and keep M, N and K in 32-bit integers; the same limits on every device, so that a plan made on
  // one runs on the others.
  constexpr int64_t kMaxM = int64_t{65535} * 64, kMaxN = int64_t{0x7fffffff};
  if (m > kMaxM || n > kMaxN)
    return Error::invalid(s(plan) + ": M must be at most " + n2s(kMaxM) + " (65535 blocks of 64 rows) and N at most " +
                          n2s(kMaxN) + "; got M = " + n2s(m) + ", N = " + n2s(n) + " (split the batch)");
  if (k % kKAlign != 0)
    return Error::invalid(s(plan) + ": K must be a multiple of 16 (16-byte cp.async rows of int8); got K = " + n2s(k) +
                          " (pad K with zeros in both operands)");
  return {};
}

Status check_max_k(std::string_view plan, int64_t k, int64_t max_k, const std::string& why) {
  if (k > max_k)
    return Error::invalid(s(plan) + ": K = " + n2s(k) + " exceeds " + n2s(max_k) + ", the largest K whose " + why +
                          " sums cannot overflow the s32 accumulator");
  return {};
}

/// A K-contiguous int8 GEMM operand `[rows, K]`: kind and shape (check_tensor), then the cp.async rules.
Status check_k_operand(std::string_view plan, std::string_view name, const ConstDynTensor& t, ElementKind kind,
                       int64_t rows, int64_t k) {
  BARACUDA_TRY(detail::check_tensor(plan, name, t, kind, Shape{rows, k}, detail::Access::Read));
  if (t.numel() == 0) return {};
  if (t.stride[1] != 1)
    return Error::misaligned(s(plan) + ": " + s(name) + " must be contiguous along K (stride 1); its stride is " +
                             n2s(t.stride[1]));
  if (rows > 1 && (t.stride[0] < k || t.stride[0] % kKAlign != 0))
    return Error::misaligned(s(plan) + ": " + s(name) + "'s row stride must be a multiple of 16 elements and >= K = " +
                             n2s(k) + "; got " + n2s(t.stride[0]));
  if (reinterpret_cast<uintptr_t>(t.data) % kPtrAlign != 0)
    return Error::misaligned(s(plan) + ": " + s(name) + " must be 16-byte aligned (cp.async)");
  return {};
}

/// An `[M, N]` output: kind, shape, unit stride along N, row stride >= N.
Status check_output(std::string_view plan, std::string_view name, const ConstDynTensor& t, ElementKind kind, int64_t m,
                    int64_t n) {
  BARACUDA_TRY(detail::check_tensor(plan, name, t, kind, Shape{m, n}, detail::Access::Write));
  if (t.numel() == 0) return {};
  if (n > 1 && t.stride[1] != 1)
    return Error::misaligned(s(plan) + ": " + s(name) + " must be contiguous along N (stride 1); its stride is " +
                             n2s(t.stride[1]));
  if (m > 1 && t.stride[0] < n)
    return Error::invalid(s(plan) + ": " + s(name) + "'s row stride " + n2s(t.stride[0]) +
                          " is below N = " + n2s(n) + " (rows would overlap)");
  return {};
}

/// A `[N]` or `[1]` vector parameter of `kind`, any stride.
Status check_weight_scale(std::string_view plan, const ConstDynTensor& t, ElementKind kind, WeightScaleGranularity g,
                          int64_t n) {
  const int64_t len = g == WeightScaleGranularity::PerChannel ? n : 1;
  return detail::check_tensor(plan, g == WeightScaleGranularity::PerChannel ? "weight_scale (per channel: [N])"
                                                                             : "weight_scale (per tensor: [1])",
                              t, kind, Shape{len}, detail::Access::Read);
}

Status check_bias(std::string_view plan, const ConstDynTensor& t, bool has_bias, ElementKind kind, int64_t n) {
  if (!has_bias) {
    if (t.data != nullptr || t.shape.rank != 0)
      return Error::invalid(s(plan) + ": the descriptor has no bias; leave 'bias' empty (or use with_bias())");
    return {};
  }
  return detail::check_tensor(plan, "bias", t, kind, Shape{n}, detail::Access::Read);
}

/// Both linear plans' guarantee: integer products and sums are exact; the epilogue runs in the output's
/// opmath type and rounds once.
PrecisionGuarantee linear_guarantee(ElementKind output) {
  return {detail::opmath_precision(output), MathPrecision::Exact, true, true};
}

/// The launch record's parts both linear plans share (the problem, the weight side, the epilogue, the split-K
/// views in `ws`); the caller fills the activation side.
template <class Descriptor, class Args>
detail::LinearLaunch linear_launch(const Descriptor& d, const Args& t, const detail::IntGemmSplitWorkspace& split,
                                   const Workspace& ws, bool zero_points) {
  detail::LinearLaunch l;
  l.m = d.m, l.n = d.n, l.k = d.k;
  l.w = t.weight, l.w_scale = t.weight_scale, l.bias = t.bias, l.y = t.y, l.activation = d.activation;
  l.split = split_views(split, ws, d.m, d.n, zero_points);
  return l;
}

/// The operands both linear plans share, after their x (x or x_q) was checked: the weight `[N, K]`, its
/// scale, the optional bias, the output `[M, N]`, and no overlap of the output with any input.
template <class Descriptor>
Status check_linear_operands(std::string_view plan, const Descriptor& d, std::string_view x_name,
                             const ConstDynTensor& x, const ConstDynTensor& weight, const ConstDynTensor& weight_scale,
                             const ConstDynTensor& bias, const DynTensor& y) {
  BARACUDA_TRY(check_k_operand(plan, "weight", weight, d.weight_element, d.n, d.k));
  BARACUDA_TRY(check_weight_scale(plan, weight_scale, opmath_of(d.output), d.weight_scale_granularity, d.n));
  BARACUDA_TRY(check_bias(plan, bias, d.has_bias, d.output, d.n));
  BARACUDA_TRY(check_output(plan, "y", y, d.output, d.m, d.n));
  BARACUDA_TRY(detail::check_no_overlap(plan, "y", y, x_name, x));
  BARACUDA_TRY(detail::check_no_overlap(plan, "y", y, "weight", weight));
  BARACUDA_TRY(detail::check_no_overlap(plan, "y", y, "weight_scale", weight_scale));
  return detail::check_no_overlap(plan, "y", y, "bias", bias);
}

// The words of the catalog's epilogue column (baracuda/ops/linear_activations.def), and the column by
// LinearActivation: the SKU's EpilogueKind with a bias.
namespace epilogue_column {
constexpr std::optional<EpilogueKind> Bias = EpilogueKind::Bias, BiasRelu = EpilogueKind::BiasRelu,
                                      BiasSilu = EpilogueKind::BiasSilu, BiasGelu = EpilogueKind::BiasGelu,
                                      Unnamed = std::nullopt;
}  // namespace epilogue_column
constexpr std::optional<EpilogueKind> kBiasEpilogues[] = {
#define BARACUDA_LINEAR_ACTIVATION(name, Enum, epilogue, doc) epilogue_column::epilogue,
#include "baracuda/ops/linear_activations.def"
#undef BARACUDA_LINEAR_ACTIVATION
};

std::optional<EpilogueKind> epilogue_kind(bool bias, LinearActivation a) {
  if (!bias) return a == LinearActivation::None ? std::optional(EpilogueKind::Identity) : std::nullopt;
  const auto i = static_cast<size_t>(a);  // select checked it; no table read past the catalog regardless
  return i < std::size(kBiasEpilogues) ? kBiasEpilogues[i] : std::nullopt;
}

Status check_activation(std::string_view plan, LinearActivation a) {
  if (static_cast<size_t>(a) >= kNumLinearActivations) return Error::invalid(s(plan) + ": invalid LinearActivation");
  return {};
}
Status check_scale_granularity(std::string_view plan, WeightScaleGranularity g) {
  if (g != WeightScaleGranularity::PerChannel && g != WeightScaleGranularity::PerTensor)
    return Error::invalid(s(plan) + ": invalid WeightScaleGranularity");
  return {};
}

}  // namespace

int64_t int_gemm_max_k(ElementKind a_kind, ElementKind b_kind, int64_t a_max_abs) {
  auto max_abs = [](ElementKind k) -> int64_t {
    return k == ElementKind::S8 ? 128 : k == ElementKind::U8 ? 255 : 0;
  };
  const int64_t a = a_max_abs > 0 ? a_max_abs : max_abs(a_kind), b = max_abs(b_kind);
  if (max_abs(a_kind) == 0 || b == 0) return 0;
  return int64_t{std::numeric_limits<int32_t>::max()} / (a * b);
}

std::string_view to_string(LinearActivation a) {
  constexpr std::string_view kNames[] = {
#define BARACUDA_LINEAR_ACTIVATION(name, Enum, epilogue, doc) #name,
#include "baracuda/ops/linear_activations.def"
#undef BARACUDA_LINEAR_ACTIVATION
  };
  return static_cast<size_t>(a) < std::size(kNames) ? kNames[static_cast<size_t>(a)] : "?";
}

namespace dynamic {

// ---------------------------------------------------------------------------------------------- IntGemm

Result<IntGemmPlan> IntGemmPlan::select(const Stream& stream, const IntGemmDescriptor& desc, PlanPreference pref) {
  if (!is_int8_kind(desc.a) || !is_int8_kind(desc.b))
    return Error::unsupported(s(kIntGemm) + ": a and b must be s8 or u8; got " + s(to_string(desc.a)) + " and " +
                              s(to_string(desc.b)));
  if (desc.c != ElementKind::S32)
    return Error::unsupported(s(kIntGemm) + ": c must be s32; got " + s(to_string(desc.c)));
  BARACUDA_TRY(check_mnk(kIntGemm, desc.m, desc.n, desc.k));
  BARACUDA_TRY(check_max_k(kIntGemm, desc.k, int_gemm_max_k(desc.a, desc.b),
                           s(to_string(desc.a)) + " x " + s(to_string(desc.b))));
  BARACUDA_TRY(check_leading_dims(desc));
  // cuBLASLt: asked for, or by default on a compute capability 9.0 GPU, where it was measured faster
  // (int_gemm.hpp); the bespoke kernels where it cannot serve, unless it was asked for.
  const bool asked = pref.prefer_backend == BackendKind::CublasLt;
  if (asked && stream.device() != DeviceKind::Cuda)
    return Error::unsupported(s(kIntGemm) + ": the cuBLASLt backend serves the cuda device only");
  const bool s8 = desc.a == ElementKind::S8 && desc.b == ElementKind::S8;
  if (asked && !s8)
    return Error::unsupported(s(kIntGemm) + ": the cuBLASLt backend takes s8 x s8 only, got " + s(to_string(desc.a)) +
                              " x " + s(to_string(desc.b)));
  detail::LibraryFirst lib = detail::library_first(stream, pref, BackendKind::CublasLt);
  lib.try_library = lib.try_library && s8 && (asked || stream.sm() == 90);
  auto dev = detail::select_device(kIntGemm, stream, lib.device_pref, tables_for);
  if (!dev) return dev.error();
#if BARACUDA_HAVE_CUDA_KERNELS
  if (lib.try_library) {
    auto backend =
        detail::CublasLtGemm::create(stream.device_index(), cublaslt_problem(desc), pref.max_workspace_bytes);
    if (backend) {
      detail::DeviceSelection<detail::IntGemmTables> sel = *dev;
      sel.backend = BackendKind::CublasLt;
      IntGemmPlan p(desc,
                    sel.bind(OpCategory::Gemm, "int_gemm", desc.a, desc.b, MathPrecision::Int8, "cublaslt_imma",
                             LayoutKind::Rcr, EpilogueKind::Identity),
                    nullptr);
      p.lt_ = std::move(backend).value();
      return p;
    }
    if (auto e = detail::library_failure(kIntGemm, pref, backend.error())) return *e;
  }
#endif
  const detail::IntGemmFn fn = dev->table->int_gemm[detail::kind_index(desc.a)][detail::kind_index(desc.b)];
  if (fn == nullptr)
    return no_function(kIntGemm, stream, s(to_string(desc.a)) + " x " + s(to_string(desc.b)) + " -> s32");
  IntGemmPlan p(desc,
                dev->bind(OpCategory::Gemm, "int_gemm", desc.a, desc.b, MathPrecision::Int8,
                          variant_of(stream, *dev->table, desc.m, desc.n, desc.k, true), LayoutKind::Rcr,
                          EpilogueKind::Identity),
                fn);
  p.split_ = split_workspace(stream, desc.m, desc.n, desc.k, false, 0, pref.max_workspace_bytes);
  return p;
}

Status IntGemmPlan::can_implement(const Args& t) const {
  BARACUDA_TRY(check_k_operand(kIntGemm, "a", t.a, desc_.a, desc_.m, desc_.k));
  BARACUDA_TRY(check_k_operand(kIntGemm, "b", t.b, desc_.b, desc_.n, desc_.k));
  BARACUDA_TRY(check_output(kIntGemm, "c", t.c, ElementKind::S32, desc_.m, desc_.n));
  // The row strides the descriptor gives (every backend: cuBLASLt's layouts were built from them at select).
  const auto row_stride = [](std::string_view name, const ConstDynTensor& x, int64_t rows, int64_t ld) -> Status {
    if (rows <= 1 || x.numel() == 0 || x.stride[0] == ld) return {};
    return Error::invalid(s(kIntGemm) + ": " + s(name) + "'s row stride must be the descriptor's " + n2s(ld) +
                          ", got " + n2s(x.stride[0]));
  };
  BARACUDA_TRY(row_stride("a", t.a, desc_.m, desc_.row_stride_a()));
  BARACUDA_TRY(row_stride("b", t.b, desc_.n, desc_.row_stride_b()));
  BARACUDA_TRY(row_stride("c", t.c, desc_.m, desc_.row_stride_c()));
  BARACUDA_TRY(detail::check_no_overlap(kIntGemm, "c", t.c, "a", t.a));
  BARACUDA_TRY(detail::check_no_overlap(kIntGemm, "c", t.c, "b", t.b));
#if BARACUDA_HAVE_CUDA_KERNELS
  if (lt_) return lt_->can_run(lt_launch(desc_, t));  // the 16-byte pointer alignment
#endif
  return {};
}

size_t IntGemmPlan::workspace_size() const {
#if BARACUDA_HAVE_CUDA_KERNELS
  if (lt_) return lt_->workspace_size();
#endif
  return split_.bytes;
}

PrecisionGuarantee IntGemmPlan::precision_guarantee() const {
  return {MathPrecision::Int8, MathPrecision::Exact, true, true};
}

Status IntGemmPlan::run(const Stream& stream, Workspace ws, const Args& t) const {
  const auto ctx = detail::begin_run(
      kIntGemm, binding_, stream, [&] { return can_implement(t); },
      {ws, workspace_size(), kAlign, lt_ ? "the cuBLASLt algorithm's workspace" : kSplitContents,
       {{"a", t.a}, {"b", t.b}, {"c", t.c}}},
      desc_.m == 0 || desc_.n == 0);
  if (!ctx) return ctx.status();
#if BARACUDA_HAVE_CUDA_KERNELS
  if (lt_) return lt_->run((*ctx).stream, lt_launch(desc_, t), ws.data, ws.size);
#endif
  return fn_(*ctx, detail::IntGemmLaunch{desc_.m, desc_.n, desc_.k, t.a, t.b, t.c,
                                         split_views(split_, ws, desc_.m, desc_.n, false)});
}

// -------------------------------------------------------------------------------------- QuantizedLinear

Result<QuantizedLinearPlan> QuantizedLinearPlan::select(const Stream& stream, const QuantizedLinearDescriptor& desc,
                                                        PlanPreference pref) {
  const std::string_view P = kQLinear;
  if (!detail::is_quant_float_kind(desc.element))
    return Error::unsupported(s(P) + ": x must be f16, bf16, f32 or f64; got " + s(to_string(desc.element)));
  if (desc.element == ElementKind::F64 ? desc.output != ElementKind::F64
                                       : !(detail::is_quant_float_kind(desc.output) && desc.output != ElementKind::F64))
    return Error::unsupported(s(P) + ": output " + s(to_string(desc.output)) + " with x " +
                              s(to_string(desc.element)) +
                              ": f16/bf16/f32 x gives f16, bf16 or f32 (f32 epilogue); f64 x gives f64 only");
  if (desc.weight_element != ElementKind::S8)
    return Error::unsupported(s(P) + ": the weight must be s8 (symmetric); got " + s(to_string(desc.weight_element)));
  if (static_cast<size_t>(desc.mode) >= kNumDynamicRangeModes)
    return Error::invalid(s(P) + ": invalid DynamicRangeMode");
  // The convention of x's quantization (DynamicRangeQuantizePlan's rules, checked here too so that
  // empty problems, which run no quantization, answer the same).
  BARACUDA_TRY(detail::check_convention(P, desc.convention, desc.element, /*fp8=*/false));
  const bool asym = desc.mode == DynamicRangeMode::Asymmetric;
  if (!(desc.x_quantized == ElementKind::S8 || (asym && desc.x_quantized == ElementKind::U8)))
    return Error::unsupported(s(P) + ": x_quantized (the kind x is quantized to) must be s8 (symmetric or "
                              "asymmetric) or u8 (asymmetric only); got " + s(to_string(desc.x_quantized)) +
                              (asym ? "" : " in symmetric mode"));
  BARACUDA_TRY(check_activation(P, desc.activation));
  BARACUDA_TRY(check_scale_granularity(P, desc.weight_scale_granularity));
  BARACUDA_TRY(check_mnk(P, desc.m, desc.n, desc.k));
  BARACUDA_TRY(check_max_k(P, desc.k, int_gemm_max_k(desc.x_quantized, ElementKind::S8, asym ? 255 : 0),
                           asym ? "zero-point-corrected" : "s8 x s8"));
  const bool lt = pref.prefer_backend == BackendKind::CublasLt;
  if (lt) {
    BARACUDA_TRY(linear_cublaslt_rules(P, stream, !asym));
    pref.prefer_backend.reset();
  }
  auto dev = detail::select_device(P, stream, pref, tables_for);
  if (!dev) return dev.error();
  const detail::LinearFn fn =
      dev->table->linear[detail::kind_index(desc.x_quantized)][detail::kind_index(desc.output)];
  if (fn == nullptr)
    return no_function(P, stream, s(to_string(desc.x_quantized)) + " x s8 -> " + s(to_string(desc.output)));

  detail::DeviceSelection<detail::IntGemmTables> sel = *dev;
  if (lt) sel.backend = BackendKind::CublasLt;
  QuantizedLinearPlan p(
      desc,
      sel.bind(OpCategory::Gemm, "quantized_linear", desc.element, desc.output, MathPrecision::Int8,
               lt ? "cublaslt_imma" : variant_of(stream, *dev->table, desc.m, desc.n, desc.k, false, asym ? 2 : 1),
               LayoutKind::Rcr, epilogue_kind(desc.has_bias, desc.activation)),
      fn);
  if (desc.m > 0 && desc.k > 0) {
    auto q = DynamicRangeQuantizePlan::select(stream, DynamicRangeQuantizeDescriptor{}
                                                          .with_element(desc.element)
                                                          .with_quantized(desc.x_quantized)
                                                          .with_shape(Shape{desc.m, desc.k})
                                                          .with_granularity(QuantGranularity::per_token())
                                                          .with_mode(desc.mode)
                                                          .with_convention(desc.convention),
                                              pref);
    if (!q) return Error{q.error().code, s(P) + ": the per-token quantization: " + q.error().message};
    p.quantize_ = std::move(q).value();
  }
  const size_t opmath_bytes = desc.element == ElementKind::F64 ? 8 : 4;
  const auto m = static_cast<size_t>(desc.m), k = static_cast<size_t>(desc.k);
  p.q_offset_ = 0;
  p.scale_offset_ = round_up(m * k);
  p.zp_offset_ = p.scale_offset_ + round_up(m * opmath_bytes);
  p.quantize_ws_offset_ = p.zp_offset_ + round_up(m * 4);
  p.workspace_bytes_ = desc.m > 0 && desc.k > 0 ? p.quantize_ws_offset_ + round_up(p.quantize_.workspace_size()) : 0;
  if (lt) {
    auto on = linear_on_cublaslt(P, stream, *dev->table, desc.m, desc.n, desc.k, desc.output, p.workspace_bytes_,
                                 pref.max_workspace_bytes);
    if (!on) return on.error();
    p.lt_ = std::move(on).value();
    p.workspace_bytes_ = p.lt_.end;
    return p;
  }
  p.split_ = split_workspace(stream, desc.m, desc.n, desc.k, asym, p.workspace_bytes_, pref.max_workspace_bytes);
  p.workspace_bytes_ = std::max(p.workspace_bytes_, p.split_.bytes);
  if (p.workspace_bytes_ > pref.max_workspace_bytes)
    return Error::unsupported(s(P) + ": needs " + n2s(static_cast<int64_t>(p.workspace_bytes_)) +
                              " bytes of workspace, above the preference's max_workspace_bytes");
  return p;
}

DynTensor QuantizedLinearPlan::quantized_x(Workspace ws) const {
  return DynTensor::dense(static_cast<char*>(ws.data) + q_offset_, desc_.x_quantized, Shape{desc_.m, desc_.k});
}
DynTensor QuantizedLinearPlan::x_scale(Workspace ws) const {
  return DynTensor::dense(static_cast<char*>(ws.data) + scale_offset_, opmath_of(desc_.output), Shape{desc_.m});
}
DynTensor QuantizedLinearPlan::x_zero_point(Workspace ws) const {
  return DynTensor::dense(static_cast<char*>(ws.data) + zp_offset_, ElementKind::S32, Shape{desc_.m});
}

Status QuantizedLinearPlan::can_implement(const Args& t) const {
  const std::string_view P = kQLinear;
  const bool has_x = given(t.x), has_x_q = given(t.x_q);
  if (has_x == has_x_q)
    return Error::invalid(s(P) + (has_x ? ": give either x (float, quantized by the plan) or x_q (already quantized "
                                          "per token), not both"
                                        : ": x is missing, and so is x_q: give x (float, quantized by the plan) "
                                          "or x_q (already quantized per token)"));
  if (has_x) {
    constexpr std::string_view kWithXq = "it is read with x_q only (x is quantized by the plan)";
    BARACUDA_TRY(detail::check_absent(P, "x_scale", t.x_scale, kWithXq));
    BARACUDA_TRY(detail::check_absent(P, "x_zero_point", t.x_zero_point, kWithXq));
    BARACUDA_TRY(detail::check_tensor(P, "x", t.x, desc_.element, Shape{desc_.m, desc_.k}, detail::Access::Read));
    BARACUDA_TRY(check_linear_operands(P, desc_, "x", t.x, t.weight, t.weight_scale, t.bias, t.y));
    if (lt_.gemm) return check_on_cublaslt(P, lt_, desc_.m, desc_.n, desc_.k, "x", nullptr, t.weight);
    return {};
  }
  // x quantized by the caller: SmoothQuantLinear's x_q rule, and its per-token scales and zero points.
  const bool asym = desc_.mode == DynamicRangeMode::Asymmetric;
  const ElementKind scale_kind = opmath_of(desc_.output);
  if (!given(t.x_scale))
    return Error::invalid(s(P) + ": x_scale ([M] " + s(to_string(scale_kind)) +
                          ", x_q's per-token scales) is required with x_q");
  if (asym && !given(t.x_zero_point))
    return Error::invalid(
        s(P) + ": x_zero_point ([M] s32, x_q's per-token zero points) is required with x_q in asymmetric mode");
  if (!asym) BARACUDA_TRY(detail::check_absent(P, "x_zero_point", t.x_zero_point, "symmetric mode has no zero point"));
  BARACUDA_TRY(check_k_operand(P, "x_q", t.x_q, desc_.x_quantized, desc_.m, desc_.k));
  BARACUDA_TRY(detail::check_tensor(P, "x_scale", t.x_scale, scale_kind, Shape{desc_.m}, detail::Access::Read));
  if (asym)
    BARACUDA_TRY(detail::check_tensor(P, "x_zero_point", t.x_zero_point, ElementKind::S32, Shape{desc_.m},
                                      detail::Access::Read));
  BARACUDA_TRY(detail::check_no_overlap(P, "y", t.y, "x_scale", t.x_scale));
  BARACUDA_TRY(detail::check_no_overlap(P, "y", t.y, "x_zero_point", t.x_zero_point));
  BARACUDA_TRY(check_linear_operands(P, desc_, "x_q", t.x_q, t.weight, t.weight_scale, t.bias, t.y));
  if (lt_.gemm) return check_on_cublaslt(P, lt_, desc_.m, desc_.n, desc_.k, "x_q", &t.x_q, t.weight);
  return {};
}

PrecisionGuarantee QuantizedLinearPlan::precision_guarantee() const { return linear_guarantee(desc_.output); }

Status QuantizedLinearPlan::run(const Stream& stream, Workspace ws, const Args& t) const {
  const std::string_view P = kQLinear;
  const auto ctx = detail::begin_run(P, binding_, stream, [&] { return can_implement(t); },
                                     {ws, workspace_bytes_, kAlign,
                                      "the quantized x, its scales and zero points, the quantization "
                                      "pass's scratch; on the devices, the split-K parts",
                                      {{"x", t.x}, {"weight", t.weight}, {"weight_scale", t.weight_scale},
                                       {"bias", t.bias}, {"y", t.y}, {"x_q", t.x_q}, {"x_scale", t.x_scale},
                                       {"x_zero_point", t.x_zero_point}}},
                                     desc_.m == 0 || desc_.n == 0);
  if (!ctx) return ctx.status();
  detail::LinearLaunch l = linear_launch(desc_, t, split_, ws, desc_.mode == DynamicRangeMode::Asymmetric);
  if (desc_.k > 0 && given(t.x_q)) {  // quantized by the caller: what the branch below would have written
    l.a = t.x_q, l.a_scale = t.x_scale;
    if (desc_.mode == DynamicRangeMode::Asymmetric) l.a_zero_point = t.x_zero_point;
  } else if (desc_.k > 0) {
    const DynTensor q = quantized_x(ws), q_scale = x_scale(ws), q_zero_point = x_zero_point(ws);
    const Workspace qws(static_cast<char*>(ws.data) + quantize_ws_offset_, workspace_bytes_ - quantize_ws_offset_);
    BARACUDA_TRY(quantize_.run(stream, qws, DynamicRangeQuantizeArgs{t.x, q, q_scale, q_zero_point}));
    l.a = q, l.a_scale = q_scale;
    if (desc_.mode == DynamicRangeMode::Asymmetric) l.a_zero_point = q_zero_point;
  } else {
    l.a = ConstDynTensor::dense(nullptr, desc_.x_quantized, Shape{desc_.m, 0});
    l.a_scale_scalar = 1.0;  // an empty segment's scale (dynamic_range_quantize.hpp)
  }
  if (lt_.gemm) return run_on_cublaslt(*ctx, lt_, ws, l);
  return fn_(*ctx, l);
}

// ----------------------------------------------------------------------------------- SmoothQuantLinear

Result<SmoothQuantLinearPlan> SmoothQuantLinearPlan::select(const Stream& stream,
                                                            const SmoothQuantLinearDescriptor& desc,
                                                            PlanPreference pref) {
  const std::string_view P = kSqLinear;
  if (desc.x_quantized != ElementKind::S8)
    return Error::unsupported(s(P) + ": x_q (x_quantized) must be s8; got " + s(to_string(desc.x_quantized)));
  if (desc.weight_element != ElementKind::S8)
    return Error::unsupported(s(P) + ": the weight must be s8; got " + s(to_string(desc.weight_element)));
  if (!detail::is_quant_float_kind(desc.output))
    return Error::unsupported(s(P) + ": the output must be f16, bf16, f32 or f64; got " + s(to_string(desc.output)));
  if (!std::isfinite(desc.x_scale))
    return Error::invalid(s(P) + ": x_scale must be finite; got " + std::to_string(desc.x_scale));
  BARACUDA_TRY(check_activation(P, desc.activation));
  BARACUDA_TRY(check_scale_granularity(P, desc.weight_scale_granularity));
  BARACUDA_TRY(check_mnk(P, desc.m, desc.n, desc.k));
  BARACUDA_TRY(check_max_k(P, desc.k, int_gemm_max_k(ElementKind::S8, ElementKind::S8), "s8 x s8"));
  const bool lt = pref.prefer_backend == BackendKind::CublasLt;
  if (lt) {
    BARACUDA_TRY(linear_cublaslt_rules(P, stream, true));
    pref.prefer_backend.reset();
  }
  auto dev = detail::select_device(P, stream, pref, tables_for);
  if (!dev) return dev.error();
  const detail::LinearFn fn = dev->table->linear[detail::kind_index(ElementKind::S8)][detail::kind_index(desc.output)];
  if (fn == nullptr) return no_function(P, stream, "s8 x s8 -> " + s(to_string(desc.output)));
  detail::DeviceSelection<detail::IntGemmTables> sel = *dev;
  if (lt) sel.backend = BackendKind::CublasLt;
  SmoothQuantLinearPlan p(desc, sel.bind(OpCategory::Gemm, "smooth_quant_linear", ElementKind::S8, desc.output,
                                         MathPrecision::Int8,
                                         lt ? "cublaslt_imma" : variant_of(stream, *dev->table, desc.m, desc.n, desc.k,
                                                                           false),
                                         LayoutKind::Rcr, epilogue_kind(desc.has_bias, desc.activation)),
                          fn);
  if (lt) {
    auto on = linear_on_cublaslt(P, stream, *dev->table, desc.m, desc.n, desc.k, desc.output, 0,
                                 pref.max_workspace_bytes);
    if (!on) return on.error();
    p.lt_ = std::move(on).value();
    p.workspace_bytes_ = p.lt_.end;
    return p;
  }
  p.split_ = split_workspace(stream, desc.m, desc.n, desc.k, false, 0, pref.max_workspace_bytes);
  p.workspace_bytes_ = p.split_.bytes;
  return p;
}

Status SmoothQuantLinearPlan::can_implement(const Args& t) const {
  const std::string_view P = kSqLinear;
  BARACUDA_TRY(check_k_operand(P, "x_q", t.x_q, desc_.x_quantized, desc_.m, desc_.k));
  BARACUDA_TRY(check_linear_operands(P, desc_, "x_q", t.x_q, t.weight, t.weight_scale, t.bias, t.y));
  if (lt_.gemm) return check_on_cublaslt(P, lt_, desc_.m, desc_.n, desc_.k, "x_q", &t.x_q, t.weight);
  return {};
}

PrecisionGuarantee SmoothQuantLinearPlan::precision_guarantee() const { return linear_guarantee(desc_.output); }

Status SmoothQuantLinearPlan::run(const Stream& stream, Workspace ws, const Args& t) const {
  const std::string_view P = kSqLinear;
  const auto ctx = detail::begin_run(P, binding_, stream, [&] { return can_implement(t); },
                                     {ws, workspace_bytes_, kAlign,
                                      lt_.gemm ? "the s32 sums and the cuBLASLt algorithm's workspace" : kSplitContents,
                                      {{"x_q", t.x_q}, {"weight", t.weight}, {"weight_scale", t.weight_scale},
                                       {"bias", t.bias}, {"y", t.y}}},
                                     desc_.m == 0 || desc_.n == 0);
  if (!ctx) return ctx.status();
  detail::LinearLaunch l = linear_launch(desc_, t, split_, ws, false);
  l.a = t.x_q, l.a_scale_scalar = static_cast<double>(desc_.x_scale);
  if (lt_.gemm) return run_on_cublaslt(*ctx, lt_, ws, l);
  return fn_(*ctx, l);
}

}  // namespace dynamic
}  // namespace baracuda
