// GemmPlan: select (the descriptor rules of include/baracuda/ops/gemm.hpp, the device's function), can_implement
// (the operands against the descriptor: kinds, shapes, exact strides, optional operands, aliasing), run (one
// call of the backend with the launch record of src/ops/gemm/launch.hpp).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "baracuda/ops/gemm.hpp"
#include "core/plan_core.hpp"
#include "core/validate.hpp"
#include "ops/gemm/launch.hpp"
#include "ops/gemm/tables.hpp"
#if BARACUDA_HAVE_CUDA_KERNELS
#include "ops/gemm/cublaslt.hpp"
#endif

namespace baracuda {
namespace {

constexpr std::string_view P = "GemmPlan";
constexpr int64_t kMaxBatch = 65535;
constexpr int64_t kTile = 64;  // the SIMT kernel's tile: the tile count is kept below 2^31 on every device

std::string s(std::string_view v) { return std::string(v); }
std::string n2s(int64_t v) { return std::to_string(v); }

bool valid_combination(ElementKind in, ElementKind out) {
  switch (in) {
    case ElementKind::F16:
    case ElementKind::Bf16:
      return out == in || out == ElementKind::F32;
    case ElementKind::F32:
    case ElementKind::F64:
      return out == in;
    default:
      return false;
  }
}

/// A matrix operand's element strides, resolved from the descriptor.
struct MatStrides {
  int64_t row = 0, col = 0, batch = 0;
};

/// `rows × cols` stored in `layout` with leading dimension `ld` (0: packed) and batch stride `bs`.
MatStrides resolve(int64_t rows, int64_t cols, MatrixLayout layout, int64_t ld, int64_t bs) {
  const bool row_major = layout == MatrixLayout::RowMajor;
  if (ld == 0) ld = std::max<int64_t>(1, row_major ? cols : rows);
  MatStrides r;
  r.row = row_major ? ld : 1;
  r.col = row_major ? 1 : ld;
  r.batch = bs == kPackedBatchStride ? (row_major ? rows : cols) * ld : bs;
  return r;
}

struct Resolved {
  MatStrides a, b, c, d, aux;
};
Resolved resolve_all(const GemmDescriptor& g) {
  constexpr MatrixLayout R = MatrixLayout::RowMajor;
  return {resolve(g.m, g.k, g.layout_a, g.lda, g.batch_stride_a),
          resolve(g.k, g.n, g.layout_b, g.ldb, g.batch_stride_b), resolve(g.m, g.n, R, g.ldc, g.batch_stride_c),
          resolve(g.m, g.n, R, g.ldd, g.batch_stride_d), resolve(g.m, g.n, R, g.ld_aux, g.batch_stride_aux)};
}

/// A leading dimension: 0 (packed) or at least the packed one.
Status check_ld(std::string_view name, int64_t ld, int64_t packed, std::string_view layout) {
  if (ld != 0 && ld < std::max<int64_t>(1, packed))
    return Error::invalid(s(P) + ": " + s(name) + " = " + n2s(ld) + " is below " + n2s(std::max<int64_t>(1, packed)) +
                          " (" + s(layout) + "; 0 means packed)");
  return {};
}

/// A batch stride: kPackedBatchStride or >= 0; an output's (when batch > 1) also at least one matrix.
Status check_batch_stride(std::string_view name, int64_t bs, bool output, int64_t batch, int64_t matrix) {
  if (bs != kPackedBatchStride && bs < 0)
    return Error::invalid(s(P) + ": " + s(name) + " = " + n2s(bs) + " is negative (kPackedBatchStride means packed)");
  if (output && batch > 1 && bs != kPackedBatchStride && bs < matrix)
    return Error::invalid(s(P) + ": " + s(name) + " = " + n2s(bs) + " is below " + n2s(matrix) +
                          " (rows x ld): the batches of an output would overlap");
  return {};
}

/// a·b ≤ kMaxElements, without overflow.
bool fits(int64_t a, int64_t b) { return a == 0 || b <= kMaxElements / a; }

Status check_descriptor(const GemmDescriptor& g) {
  BARACUDA_TRY(detail::check_kinds(P, {g.input, g.output}));
  if (!valid_combination(g.input, g.output))
    return Error::unsupported(s(P) + ": " + s(to_string(g.input)) + " -> " + s(to_string(g.output)) +
                              " is not supported (f16 -> f16 | f32, bf16 -> bf16 | f32, f32 -> f32, f64 -> f64)");
  for (MatrixLayout l : {g.layout_a, g.layout_b})
    if (l != MatrixLayout::RowMajor && l != MatrixLayout::ColMajor)
      return Error::invalid(s(P) + ": invalid MatrixLayout");
  if (static_cast<size_t>(g.activation) >= kNumLinearActivations)
    return Error::invalid(s(P) + ": invalid LinearActivation");
  if (g.m < 0 || g.n < 0 || g.k < 0)
    return Error::invalid(s(P) + ": M, N and K must be >= 0; got M = " + n2s(g.m) + ", N = " + n2s(g.n) +
                          ", K = " + n2s(g.k));
  if (g.m > kMaxElements || g.n > kMaxElements || g.k > kMaxElements)
    return Error::invalid(s(P) + ": M, N and K must each be at most 2^56");
  if (g.batch < 0 || g.batch > kMaxBatch)
    return Error::invalid(s(P) + ": batch must be in [0, 65535]; got " + n2s(g.batch));
  if (!fits(g.m, g.k) || !fits(g.k, g.n) || !fits(g.m, g.n))
    return Error::invalid(s(P) + ": M*K, K*N and M*N must each be at most 2^56 elements");
  const int64_t tiles_m = (g.m + kTile - 1) / kTile, tiles_n = (g.n + kTile - 1) / kTile;
  if (tiles_n > 0 && tiles_m > std::numeric_limits<int32_t>::max() / tiles_n)
    return Error::invalid(s(P) + ": M*N is too large (more than 2^31 - 1 tiles of 64 x 64)");
  if (!std::isfinite(g.alpha) || !std::isfinite(g.beta))
    return Error::invalid(s(P) + ": alpha and beta must be finite");
  if (g.allow_tf32 && g.input != ElementKind::F32)
    return Error::invalid(s(P) + ": allow_tf32 applies to f32 inputs only; the input is " + s(to_string(g.input)));
  if (g.bias_grad && g.batch != 1)
    return Error::unsupported(s(P) + ": bias_grad needs batch == 1; got batch = " + n2s(g.batch));
  const bool ra = g.layout_a == MatrixLayout::RowMajor, rb = g.layout_b == MatrixLayout::RowMajor;
  BARACUDA_TRY(check_ld("lda", g.lda, ra ? g.k : g.m, ra ? "row-major op(A): >= K" : "column-major op(A): >= M"));
  BARACUDA_TRY(check_ld("ldb", g.ldb, rb ? g.n : g.k, rb ? "row-major op(B): >= N" : "column-major op(B): >= K"));
  BARACUDA_TRY(check_ld("ldc", g.ldc, g.n, "row-major C: >= N"));
  BARACUDA_TRY(check_ld("ldd", g.ldd, g.n, "row-major D: >= N"));
  BARACUDA_TRY(check_ld("ld_aux", g.ld_aux, g.n, "row-major aux: >= N"));
  // Each matrix's storage (rows of storage × ld) within the view limit, so that no stride arithmetic overflows.
  const auto storage = [&](std::string_view name, int64_t rows, int64_t cols, MatrixLayout l, int64_t ld) -> Status {
    const bool rm = l == MatrixLayout::RowMajor;
    if (fits(rm ? rows : cols, ld == 0 ? std::max<int64_t>(1, rm ? cols : rows) : ld)) return {};
    return Error::invalid(s(P) + ": " + s(name) + " = " + n2s(ld) + " makes the matrix's storage (rows x ld) exceed " +
                          "2^56 elements");
  };
  constexpr MatrixLayout kRow = MatrixLayout::RowMajor;
  BARACUDA_TRY(storage("lda", g.m, g.k, g.layout_a, g.lda));
  BARACUDA_TRY(storage("ldb", g.k, g.n, g.layout_b, g.ldb));
  BARACUDA_TRY(storage("ldc", g.m, g.n, kRow, g.ldc));
  BARACUDA_TRY(storage("ldd", g.m, g.n, kRow, g.ldd));
  BARACUDA_TRY(storage("ld_aux", g.m, g.n, kRow, g.ld_aux));
  const Resolved r = resolve_all(g);
  BARACUDA_TRY(check_batch_stride("batch_stride_a", g.batch_stride_a, false, g.batch, 0));
  BARACUDA_TRY(check_batch_stride("batch_stride_b", g.batch_stride_b, false, g.batch, 0));
  BARACUDA_TRY(check_batch_stride("batch_stride_c", g.batch_stride_c, false, g.batch, 0));
  BARACUDA_TRY(check_batch_stride("batch_stride_d", g.batch_stride_d, true, g.batch, g.m * r.d.row));
  BARACUDA_TRY(check_batch_stride("batch_stride_aux", g.batch_stride_aux, true, g.batch, g.m * r.aux.row));
  return {};
}

/// The SKU's layout: the letters of op(A), op(B) and D (row-major).
LayoutKind layout_kind(const GemmDescriptor& g) {
  const bool ra = g.layout_a == MatrixLayout::RowMajor, rb = g.layout_b == MatrixLayout::RowMajor;
  return ra ? (rb ? LayoutKind::Rrr : LayoutKind::Rcr) : (rb ? LayoutKind::Crr : LayoutKind::Ccr);
}

/// The SKU's epilogue where EpilogueKind names it (no aux or bias_grad; a bias for any activation but none).
std::optional<EpilogueKind> epilogue_kind(const GemmDescriptor& g) {
  if (g.has_aux || g.bias_grad) return std::nullopt;
  if (!g.has_bias) return g.activation == LinearActivation::None ? std::optional(EpilogueKind::Identity) : std::nullopt;
  switch (g.activation) {
    case LinearActivation::None:
      return EpilogueKind::Bias;
    case LinearActivation::Relu:
      return EpilogueKind::BiasRelu;
    case LinearActivation::Silu:
      return EpilogueKind::BiasSilu;
    case LinearActivation::GeluErf:
      return EpilogueKind::BiasGelu;
    case LinearActivation::GeluTanh:
      break;
  }
  return std::nullopt;
}

std::string strides_text(const MatStrides& st, int rank) {
  return rank == 2 ? "(" + n2s(st.row) + ", " + n2s(st.col) + ")"
                   : "(" + n2s(st.batch) + ", " + n2s(st.row) + ", " + n2s(st.col) + ")";
}

/// The launch record of a descriptor without pointers (a library backend's select-time problem): every
/// operand's strides, the optional ones (c when β ≠ 0, bias, aux, bias_grad) only when present, so that an
/// absent one is all zeros; run then sets the pointers.
detail::GemmLaunch launch_of(const GemmDescriptor& g) {
  const Resolved r = resolve_all(g);
  auto op = [](const MatStrides& st) { return detail::GemmOperand{nullptr, st.batch, st.row, st.col}; };
  detail::GemmLaunch l;
  l.m = g.m, l.n = g.n, l.k = g.k, l.batch = g.batch;
  l.ab = g.input, l.cd = g.output, l.tf32 = g.allow_tf32;
  l.a = op(r.a), l.b = op(r.b), l.d = op(r.d);
  if (g.beta != 0.0) l.c = op(r.c);
  if (g.has_aux) l.aux = op(r.aux);
  if (g.has_bias) l.bias = detail::GemmOperand{nullptr, 0, 0, 1};
  if (g.bias_grad) l.bias_grad = detail::GemmOperand{nullptr, 0, 0, 1};
  l.alpha = g.alpha, l.beta = g.beta, l.activation = g.activation;
  return l;
}

/// launch_of with the pointers of `t` (checked by can_implement).
detail::GemmLaunch launch_for(const GemmDescriptor& g, const dynamic::GemmArgs& t) {
  detail::GemmLaunch l = launch_of(g);
  l.a.data = t.a.data, l.b.data = t.b.data, l.d.data = t.d.data;
  if (g.beta != 0.0) l.c.data = t.c.data;
  if (g.has_bias) l.bias.data = t.bias.data;
  if (g.has_aux) l.aux.data = t.aux.data;
  if (g.bias_grad) l.bias_grad.data = t.bias_grad.data;
  return l;
}

#if BARACUDA_HAVE_CUDA_KERNELS
/// The select-time problem of the cuBLASLt backend: launch_of, each optional operand present marked by a
/// non-null pointer that is never dereferenced (cublaslt.hpp's rule).
detail::GemmLaunch cublaslt_problem(const GemmDescriptor& g) {
  const void* const kPresent = detail::CublasLtGemm::present_marker();
  detail::GemmLaunch l = launch_of(g);
  if (g.beta != 0.0) l.c.data = kPresent;
  if (g.has_bias) l.bias.data = kPresent;
  if (g.has_aux) l.aux.data = kPresent;
  if (g.bias_grad) l.bias_grad.data = kPresent;
  return l;
}
#endif

const detail::GemmTables* tables_for(DeviceKind d) {
  return detail::table_for_device(d, reference::gemm_tables(), device_sim::gemm_tables(),
                                  BARACUDA_CUDA_TABLE(gemm_tables));
}

}  // namespace

std::string_view to_string(MatrixLayout l) {
  switch (l) {
    case MatrixLayout::RowMajor:
      return "row_major";
    case MatrixLayout::ColMajor:
      return "col_major";
  }
  return "?";
}

namespace dynamic {
namespace {

/// A matrix operand `[rows, cols]` (rank 2, batch == 1) or `[batch, rows, cols]`: check_tensor, then its
/// strides equal the descriptor's for every dimension of extent > 1.
Status check_matrix(const GemmDescriptor& g, std::string_view name, const ConstDynTensor& t, ElementKind kind,
                    int64_t rows, int64_t cols, const MatStrides& st, detail::Access access, std::string_view layout) {
  const int rank = g.batch == 1 ? 2 : 3;
  const Shape shape = rank == 2 ? Shape{rows, cols} : Shape{g.batch, rows, cols};
  BARACUDA_TRY(detail::check_tensor(P, name, t, kind, shape, access));
  if (shape.numel() == 0) return {};  // an empty view addresses nothing: any strides
  const int64_t want[3] = {st.batch, st.row, st.col};
  for (int d = 0; d < rank; ++d) {
    if (shape.dims[d] <= 1 || t.stride[d] == want[d + 3 - rank]) continue;
    const std::string got = rank == 2
                                ? "(" + n2s(t.stride[0]) + ", " + n2s(t.stride[1]) + ")"
                                : "(" + n2s(t.stride[0]) + ", " + n2s(t.stride[1]) + ", " + n2s(t.stride[2]) + ")";
    return Error::invalid(s(P) + ": " + s(name) + "'s strides " + got + " are not the descriptor's " +
                          strides_text(st, rank) + " (" + s(layout) + ", its leading dimension and batch stride)");
  }
  return {};
}

/// A vector operand `[len]` of the output kind, contiguous.
Status check_vector(std::string_view name, const ConstDynTensor& t, ElementKind kind, int64_t len,
                    detail::Access access) {
  BARACUDA_TRY(detail::check_tensor(P, name, t, kind, Shape{len}, access));
  if (len > 1 && t.stride[0] != 1)
    return Error::invalid(s(P) + ": " + s(name) + " must be contiguous (stride 1); its stride is " + n2s(t.stride[0]));
  return {};
}

/// c, d and aux: the same kind, shape and resolved strides, and the same data pointer.
bool exact_alias(const ConstDynTensor& x, const ConstDynTensor& y, const MatStrides& sx, const MatStrides& sy) {
  return x.data != nullptr && x.data == y.data && sx.row == sy.row && sx.batch == sy.batch;
}

}  // namespace

Result<GemmPlan> GemmPlan::select(const Stream& stream, const GemmDescriptor& desc, PlanPreference pref) {
  BARACUDA_TRY(check_descriptor(desc));
  // cuda: cuBLASLt unless the preference names another backend; the bespoke kernels where it cannot serve.
  const detail::LibraryFirst lib = detail::library_first(stream, pref, BackendKind::CublasLt);
  auto dev = detail::select_device(P, stream, lib.device_pref, tables_for);
  if (!dev) return dev.error();
  const auto in = detail::kind_index(desc.input), out = detail::kind_index(desc.output);
  const MathPrecision opmath = detail::opmath_precision(desc.input);
#if BARACUDA_HAVE_CUDA_KERNELS
  if (lib.try_library) {
    auto lt = detail::CublasLtGemm::create(stream.device_index(), cublaslt_problem(desc), pref.max_workspace_bytes);
    if (lt) {
      detail::DeviceSelection<detail::GemmTables> sel = *dev;
      sel.backend = BackendKind::CublasLt;
      GemmPlan p(
          desc,
          sel.bind(OpCategory::Gemm, "gemm", desc.input, desc.output, desc.allow_tf32 ? MathPrecision::Tf32 : opmath,
                   "cublaslt", layout_kind(desc), epilogue_kind(desc)),
          nullptr);
      p.lt_ = std::move(lt).value();
      p.workspace_bytes_ = p.lt_->workspace_size();
      return p;
    }
    if (auto e = detail::library_failure(P, pref, lt.error())) return *e;
  }
#endif
  detail::GemmFn fn = dev->table->gemm[in][out];
  std::string_view variant = dev->table->variant[in][out];
  if (fn == nullptr)
    return Error::unsupported(s(P) + ": " + s(to_string(desc.input)) + " -> " + s(to_string(desc.output)) +
                              " has no kernel on the " + s(to_string(stream.device())) + " device");
  if (variant == "tc_m16n8k16" && !detail::gemm_tc_takes(desc.m, desc.n, desc.k))
    fn = dev->table->simt[in][out], variant = "simt";
  const MathPrecision precision = stream.device() == DeviceKind::Host ? MathPrecision::F64 : opmath;
  return GemmPlan(desc,
                  dev->bind(OpCategory::Gemm, "gemm", desc.input, desc.output, precision, variant, layout_kind(desc),
                            epilogue_kind(desc)),
                  fn);
}

Status GemmPlan::can_implement(const Args& t) const {
  const GemmDescriptor& g = desc_;
  const Resolved r = resolve_all(g);
  const ElementKind in = g.input, out = g.output;
  using detail::Access;
  const std::string la = g.layout_a == MatrixLayout::RowMajor ? "row-major op(A)" : "column-major op(A)";
  const std::string lb = g.layout_b == MatrixLayout::RowMajor ? "row-major op(B)" : "column-major op(B)";
  BARACUDA_TRY(check_matrix(g, "a", t.a, in, g.m, g.k, r.a, Access::Read, la));
  BARACUDA_TRY(check_matrix(g, "b", t.b, in, g.k, g.n, r.b, Access::Read, lb));
  if (g.beta != 0.0)
    BARACUDA_TRY(check_matrix(g, "c", t.c, out, g.m, g.n, r.c, Access::Read, "row-major C"));
  else
    BARACUDA_TRY(detail::check_absent(P, "c", t.c, "beta is 0, so C is not read"));
  if (g.has_bias)
    BARACUDA_TRY(check_vector("bias", t.bias, out, g.n, Access::Read));
  else
    BARACUDA_TRY(detail::check_absent(P, "bias", t.bias, "the descriptor has no bias (with_bias())"));
  BARACUDA_TRY(check_matrix(g, "d", t.d, out, g.m, g.n, r.d, Access::Write, "row-major D"));
  if (g.has_aux)
    BARACUDA_TRY(check_matrix(g, "aux", t.aux, out, g.m, g.n, r.aux, Access::Write, "row-major aux"));
  else
    BARACUDA_TRY(detail::check_absent(P, "aux", t.aux, "the descriptor has no aux output (with_aux())"));
  if (g.bias_grad)
    BARACUDA_TRY(check_vector("bias_grad", t.bias_grad, out, g.m, Access::Write));
  else
    BARACUDA_TRY(
        detail::check_absent(P, "bias_grad", t.bias_grad, "the descriptor has no bias_grad (with_bias_grad())"));
  // Aliasing: no output overlaps an input or another output, but d may be c exactly.
  BARACUDA_TRY(detail::check_no_overlap(P, "d", t.d, "a", t.a));
  BARACUDA_TRY(detail::check_no_overlap(P, "d", t.d, "b", t.b));
  if (!exact_alias(t.c, t.d, r.c, r.d)) {
    const Status st = detail::check_no_overlap(P, "d", t.d, "c", t.c);
    if (!st)
      return Error::invalid(st.error().message + " (d may be c only exactly: the same pointer, ld and batch stride)");
  }
  BARACUDA_TRY(detail::check_no_overlap(P, "d", t.d, "bias", t.bias));
  const std::pair<std::string_view, ConstDynTensor> inputs[] = {{"a", t.a}, {"b", t.b}, {"c", t.c}, {"bias", t.bias}};
  for (const auto& [name, x] : inputs) {
    BARACUDA_TRY(detail::check_no_overlap(P, "aux", t.aux, name, x));
    BARACUDA_TRY(detail::check_no_overlap(P, "bias_grad", t.bias_grad, name, x));
  }
  BARACUDA_TRY(detail::check_no_overlap(P, "aux", t.aux, "d", t.d));
  BARACUDA_TRY(detail::check_no_overlap(P, "bias_grad", t.bias_grad, "d", t.d));
  BARACUDA_TRY(detail::check_no_overlap(P, "bias_grad", t.bias_grad, "aux", t.aux));
#if BARACUDA_HAVE_CUDA_KERNELS
  if (lt_) return lt_->can_run(launch_for(g, t));  // its 16-byte pointer alignment
#endif
  return {};
}

PrecisionGuarantee GemmPlan::precision_guarantee() const {
  const MathPrecision p = binding_.sku.precision;
  // cuBLASLt documents no summation order for its algorithms (split-K reductions among them): no promise.
  const bool ordered = binding_.sku.backend != BackendKind::CublasLt;
  return {p, p == MathPrecision::Tf32 ? MathPrecision::F32 : p, ordered, ordered};
}

Status GemmPlan::run(const Stream& stream, Workspace ws, const Args& t) const {
  const GemmDescriptor& g = desc_;
  const bool empty = g.m == 0 || g.batch == 0 || (g.n == 0 && !g.bias_grad);
  const auto ctx = detail::begin_run(
      P, binding_, stream, [&] { return can_implement(t); },
      {ws,
       workspace_bytes_,
       256,
       "the library backend's workspace",
       {{"a", t.a}, {"b", t.b}, {"c", t.c}, {"bias", t.bias}, {"d", t.d}, {"aux", t.aux}, {"bias_grad", t.bias_grad}}},
      empty);
  if (!ctx) return ctx.status();
  const detail::GemmLaunch l = launch_for(g, t);
#if BARACUDA_HAVE_CUDA_KERNELS
  if (lt_) return lt_->run((*ctx).stream, l, ws.data, ws.size);
#endif
  return fn_(*ctx, l);
}

}  // namespace dynamic
}  // namespace baracuda
