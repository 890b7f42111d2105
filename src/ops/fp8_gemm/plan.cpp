// Fp8GemmPlan: select (the descriptor rules of include/baracuda/ops/fp8_gemm.hpp, the device and its compute
// capability, the backend), can_implement (the operands against the descriptor: kinds, shapes, strides, the optional
// operands, alignment, aliasing), run (one call of the backend with the launch record of launch.hpp).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

#include "baracuda/ops/fp8_gemm.hpp"
#include "core/plan_core.hpp"
#include "core/validate.hpp"
#include "ops/fp8_gemm/launch.hpp"
#include "ops/fp8_gemm/tables.hpp"
#if BARACUDA_HAVE_CUDA_KERNELS
#include "ops/fp8_gemm/cublaslt_fp8.hpp"
#endif

namespace baracuda {
namespace {

constexpr std::string_view P = "Fp8GemmPlan";
constexpr int64_t kMaxExtent = (int64_t{1} << 31) - 256;  // the bespoke kernel's 32-bit indices, past the edges

std::string s(std::string_view v) { return std::string(v); }
std::string n2s(int64_t v) { return std::to_string(v); }

bool is_output(ElementKind k) {
  return k == ElementKind::F16 || k == ElementKind::Bf16 || k == ElementKind::F32 || is_fp8(k);
}
bool is_bias(ElementKind k) { return k == ElementKind::F16 || k == ElementKind::Bf16 || k == ElementKind::F32; }

/// a·b ≤ kMaxElements, without overflow.
bool fits(int64_t a, int64_t b) { return a == 0 || b <= kMaxElements / a; }

/// The resolved leading dimensions (0: packed).
int64_t lda_of(const Fp8GemmDescriptor& g) { return g.lda != 0 ? g.lda : g.k; }
int64_t ldb_of(const Fp8GemmDescriptor& g) { return g.ldb != 0 ? g.ldb : g.k; }
int64_t ldd_of(const Fp8GemmDescriptor& g) { return g.ldd != 0 ? g.ldd : std::max<int64_t>(1, g.n); }
int64_t blocks(int64_t x) { return (x + kFp8GemmBlock - 1) / kFp8GemmBlock; }

Status check_descriptor(const Fp8GemmDescriptor& g) {
  BARACUDA_TRY(detail::check_kinds(P, {g.a_kind, g.b_kind, g.output, g.bias_kind}));
  if (!is_fp8(g.a_kind) || !is_fp8(g.b_kind))
    return Error::unsupported(s(P) + ": A and B must be fp8e4m3 or fp8e5m2; got " + s(to_string(g.a_kind)) + " and " +
                              s(to_string(g.b_kind)));
  if (g.a_kind == ElementKind::Fp8E5M2 && g.b_kind == ElementKind::Fp8E5M2)
    return Error::unsupported(s(P) +
                              ": fp8e5m2 x fp8e5m2 is not supported (at "
                              "least one operand must be fp8e4m3)");
  if (!is_output(g.output))
    return Error::unsupported(s(P) + ": the output must be f16, bf16, f32, fp8e4m3 or fp8e5m2; got " +
                              s(to_string(g.output)));
  if (g.has_bias && !is_bias(g.bias_kind))
    return Error::unsupported(s(P) + ": the bias must be f16, bf16 or f32; got " + s(to_string(g.bias_kind)));
  if (g.scaling != Fp8GemmScaling::Tensor && g.scaling != Fp8GemmScaling::Block128)
    return Error::invalid(s(P) + ": invalid Fp8GemmScaling");
  if (static_cast<size_t>(g.activation) >= kNumLinearActivations)
    return Error::invalid(s(P) + ": invalid LinearActivation");
  if (g.has_amax && !is_fp8(g.output))
    return Error::unsupported(s(P) + ": an amax output needs an fp8 D (as cuBLASLt); the output is " +
                              s(to_string(g.output)));
  if (g.m < 0 || g.n < 0 || g.k < 0)
    return Error::invalid(s(P) + ": M, N and K must be >= 0; got M = " + n2s(g.m) + ", N = " + n2s(g.n) +
                          ", K = " + n2s(g.k));
  if (g.m > kMaxExtent || g.n > kMaxExtent || g.k > kMaxExtent)
    return Error::invalid(s(P) + ": M, N and K must each be at most 2^31 - 256");
  if (g.k % 16 != 0) return Error::invalid(s(P) + ": K must be a multiple of 16 (16-byte rows); got " + n2s(g.k));
  if (!std::isfinite(g.alpha)) return Error::invalid(s(P) + ": alpha must be finite");
  if (g.a_scale_m_major && g.scaling != Fp8GemmScaling::Block128)
    return Error::invalid(s(P) + ": a_scale_m_major applies to Block128 scaling only");
  const auto ld = [&](std::string_view name, int64_t v, int64_t min, bool mult16) -> Status {
    if (v == 0) return {};
    if (v < std::max<int64_t>(1, min))
      return Error::invalid(s(P) + ": " + s(name) + " = " + n2s(v) + " is below " + n2s(std::max<int64_t>(1, min)) +
                            " (0 means packed)");
    if (mult16 && v % 16 != 0)
      return Error::invalid(s(P) + ": " + s(name) + " = " + n2s(v) + " is not a multiple of 16 (16-byte rows)");
    return {};
  };
  BARACUDA_TRY(ld("lda", g.lda, g.k, true));
  BARACUDA_TRY(ld("ldb", g.ldb, g.k, true));
  BARACUDA_TRY(ld("ldd", g.ldd, g.n, false));
  if (!fits(g.m, lda_of(g)) || !fits(g.n, ldb_of(g)) || !fits(g.m, ldd_of(g)))
    return Error::invalid(s(P) + ": a matrix's storage (rows x ld) exceeds 2^56 elements");
  return {};
}

/// The SKU's epilogue where EpilogueKind names it (a bias with any activation but GELU-tanh; none without one).
std::optional<EpilogueKind> epilogue_kind(const Fp8GemmDescriptor& g) {
  if (!g.has_bias) return g.activation == LinearActivation::None ? std::optional(EpilogueKind::Identity) : std::nullopt;
  switch (g.activation) {
    case LinearActivation::None: return EpilogueKind::Bias;
    case LinearActivation::Relu: return EpilogueKind::BiasRelu;
    case LinearActivation::Silu: return EpilogueKind::BiasSilu;
    case LinearActivation::GeluErf: return EpilogueKind::BiasGelu;
    case LinearActivation::GeluTanh: break;
  }
  return std::nullopt;
}

/// Block128's scale strides (row, col) as the descriptor lays them out; 0 along a dimension of extent 1.
struct ScaleStrides {
  int64_t a_row = 0, a_col = 0, b_row = 0, b_col = 0;
};
ScaleStrides scale_strides(const Fp8GemmDescriptor& g) {
  const int64_t kb = blocks(g.k), m = g.m, nb = blocks(g.n);
  ScaleStrides r;
  r.a_row = m > 1 ? (g.a_scale_m_major ? 1 : kb) : 0;
  r.a_col = kb > 1 ? (g.a_scale_m_major ? m : 1) : 0;
  r.b_row = nb > 1 ? kb : 0;
  r.b_col = kb > 1 ? 1 : 0;
  return r;
}

/// The launch record of a descriptor without pointers (strides only; the scales' strides come from run's views).
detail::Fp8GemmLaunch launch_of(const Fp8GemmDescriptor& g) {
  detail::Fp8GemmLaunch l;
  l.m = g.m, l.n = g.n, l.k = g.k;
  l.a_kind = g.a_kind, l.b_kind = g.b_kind, l.d_kind = g.output, l.bias_kind = g.bias_kind;
  l.scaling = g.scaling;
  l.lda = lda_of(g), l.ldb = ldb_of(g), l.ldd = ldd_of(g);
  l.alpha = g.alpha, l.activation = g.activation, l.fast_accum = g.fast_accum;
  if (g.scaling == Fp8GemmScaling::Block128) {
    const ScaleStrides st = scale_strides(g);
    l.a_scale_row = st.a_row, l.a_scale_col = st.a_col, l.b_scale_row = st.b_row, l.b_scale_col = st.b_col;
  }
  return l;
}

/// launch_of with the operands of `t` (checked by can_implement).
detail::Fp8GemmLaunch launch_for(const Fp8GemmDescriptor& g, const dynamic::Fp8GemmArgs& t) {
  detail::Fp8GemmLaunch l = launch_of(g);
  l.a = t.a.data, l.b = t.b.data;
  l.a_scale = static_cast<const float*>(t.a_scale.data);
  l.b_scale = static_cast<const float*>(t.b_scale.data);
  if (g.has_bias) l.bias = t.bias.data;
  if (is_fp8(g.output)) l.d_scale = static_cast<const float*>(t.d_scale.data);
  l.d = t.d.data;
  if (g.has_amax) l.amax = static_cast<float*>(t.amax.data);
  return l;
}

#if BARACUDA_HAVE_CUDA_KERNELS
/// The select-time problem of the cuBLASLt backend: launch_of, the operands present marked by a non-null pointer that
/// is never dereferenced (cublaslt_fp8.hpp's rule).
detail::Fp8GemmLaunch cublaslt_problem(const Fp8GemmDescriptor& g) {
  const void* const kPresent = detail::CublasLtFp8Gemm::present_marker();
  detail::Fp8GemmLaunch l = launch_of(g);
  l.a = l.b = kPresent;
  l.d = const_cast<void*>(kPresent);
  l.a_scale = l.b_scale = static_cast<const float*>(kPresent);
  if (g.has_bias) l.bias = kPresent;
  if (is_fp8(g.output)) l.d_scale = static_cast<const float*>(kPresent);
  if (g.has_amax) l.amax = static_cast<float*>(const_cast<void*>(kPresent));
  return l;
}
#endif

const detail::Fp8GemmTables* tables_for(DeviceKind d) {
  return detail::table_for_device(d, reference::fp8_gemm_tables(), device_sim::fp8_gemm_tables(),
                                  BARACUDA_CUDA_TABLE(fp8_gemm_tables));
}

/// A matrix operand `[rows, cols]` of `kind` with row stride `ld` and unit column stride (the descriptor's).
Status check_matrix(std::string_view name, const ConstDynTensor& t, ElementKind kind, int64_t rows, int64_t cols,
                    int64_t ld, detail::Access access) {
  BARACUDA_TRY(detail::check_tensor(P, name, t, kind, Shape{rows, cols}, access));
  if (rows * cols == 0) return {};
  if ((cols > 1 && t.stride[1] != 1) || (rows > 1 && t.stride[0] != ld))
    return Error::invalid(s(P) + ": " + s(name) + "'s strides (" + n2s(t.stride[0]) + ", " + n2s(t.stride[1]) +
                          ") are not the descriptor's (" + n2s(ld) + ", 1) (row-major, its leading dimension)");
  return {};
}

/// A one-element f32 scalar operand ([1] or [1, 1]).
Status check_scalar(std::string_view name, const ConstDynTensor& t, detail::Access access) {
  if (t.shape.rank == 2) return detail::check_tensor(P, name, t, ElementKind::F32, Shape{1, 1}, access);
  return detail::check_tensor(P, name, t, ElementKind::F32, Shape{1}, access);
}

/// Block128's scales: f32 [rows, cols] with the descriptor's strides (where the extent is above 1).
Status check_scales(std::string_view name, const ConstDynTensor& t, int64_t rows, int64_t cols, int64_t row,
                    int64_t col, std::string_view layout) {
  BARACUDA_TRY(detail::check_tensor(P, name, t, ElementKind::F32, Shape{rows, cols}, detail::Access::Read));
  if (rows * cols == 0) return {};
  if ((rows > 1 && t.stride[0] != row) || (cols > 1 && t.stride[1] != col))
    return Error::invalid(s(P) + ": " + s(name) + "'s strides (" + n2s(t.stride[0]) + ", " + n2s(t.stride[1]) +
                          ") are not the descriptor's (" + n2s(row) + ", " + n2s(col) + ") (packed " + s(layout) + ")");
  return {};
}

/// A pointer 16-byte aligned (the cp.async rows and cuBLASLt's rule).
Status check_aligned16(std::string_view name, const ConstDynTensor& t) {
  if (reinterpret_cast<uintptr_t>(t.data) % 16 == 0) return {};
  return Error::misaligned(s(P) + ": " + s(name) + " must be 16-byte aligned (16-byte rows of fp8)");
}

}  // namespace

std::string_view to_string(Fp8GemmScaling v) {
  switch (v) {
    case Fp8GemmScaling::Tensor: return "tensor";
    case Fp8GemmScaling::Block128: return "block128";
  }
  return "?";
}

namespace detail {
Status fp8_gemm_arch_check(int sm) {
  if (sm >= 89) return {};
  return Error::unsupported(s(P) +
                            ": FP8 tensor cores need compute capability 8.9 or "
                            "above; this device is " +
                            n2s(sm / 10) + "." + n2s(sm % 10));
}
}  // namespace detail

namespace dynamic {

Result<Fp8GemmPlan> Fp8GemmPlan::select(const Stream& stream, const Fp8GemmDescriptor& desc, PlanPreference pref) {
  BARACUDA_TRY(check_descriptor(desc));
  // cuda: cuBLASLt unless the preference names another backend; the bespoke kernel where it cannot serve.
  const detail::LibraryFirst lib = detail::library_first(stream, pref, BackendKind::CublasLt);
  auto dev = detail::select_device(P, stream, lib.device_pref, tables_for);
  if (!dev) return dev.error();
  if (stream.device() == DeviceKind::Cuda) BARACUDA_TRY(detail::fp8_gemm_arch_check(dev->sm));
  const auto bind = [&](const detail::DeviceSelection<detail::Fp8GemmTables>& sel, MathPrecision precision,
                        std::string_view variant) {
    return sel.bind(OpCategory::Gemm, "fp8_gemm", desc.a_kind, desc.output, precision, variant, LayoutKind::Rcr,
                    epilogue_kind(desc));
  };
#if BARACUDA_HAVE_CUDA_KERNELS
  if (lib.try_library) {
    auto lt = detail::CublasLtFp8Gemm::create(stream.device_index(), dev->sm, cublaslt_problem(desc),
                                              pref.max_workspace_bytes);
    if (lt) {
      detail::DeviceSelection<detail::Fp8GemmTables> sel = *dev;
      sel.backend = BackendKind::CublasLt;
      Fp8GemmPlan p(desc, bind(sel, MathPrecision::F32, "cublaslt"), nullptr);
      p.lt_ = std::move(lt).value();
      p.workspace_bytes_ = p.lt_->workspace_size();
      return p;
    }
    if (auto e = detail::library_failure(P, pref, lt.error())) return *e;
  }
#endif
  const auto a = detail::kind_index(desc.a_kind), d = detail::kind_index(desc.output);
  const detail::Fp8GemmFn fn = dev->table->gemm[a][d];
  if (fn == nullptr)
    return Error::unsupported(s(P) + ": " + s(to_string(desc.a_kind)) + " -> " + s(to_string(desc.output)) +
                              " has no kernel on the " + s(to_string(stream.device())) + " device");
  const MathPrecision precision = stream.device() == DeviceKind::Host ? MathPrecision::F64 : MathPrecision::F32;
  return Fp8GemmPlan(desc, bind(*dev, precision, dev->table->variant[a][d]), fn);
}

Status Fp8GemmPlan::can_implement(const Args& t) const {
  const Fp8GemmDescriptor& g = desc_;
  using detail::Access;
  BARACUDA_TRY(check_matrix("a", t.a, g.a_kind, g.m, g.k, lda_of(g), Access::Read));
  BARACUDA_TRY(check_matrix("b", t.b, g.b_kind, g.n, g.k, ldb_of(g), Access::Read));
  if (g.scaling == Fp8GemmScaling::Tensor) {
    BARACUDA_TRY(check_scalar("a_scale", t.a_scale, Access::Read));
    BARACUDA_TRY(check_scalar("b_scale", t.b_scale, Access::Read));
  } else {
    const ScaleStrides st = scale_strides(g);
    BARACUDA_TRY(check_scales("a_scale", t.a_scale, g.m, blocks(g.k), st.a_row, st.a_col,
                              g.a_scale_m_major ? "M-major (a_scale_m_major)" : "row-major"));
    BARACUDA_TRY(check_scales("b_scale", t.b_scale, blocks(g.n), blocks(g.k), st.b_row, st.b_col, "row-major"));
  }
  if (g.has_bias) {
    BARACUDA_TRY(detail::check_tensor(P, "bias", t.bias, g.bias_kind, Shape{g.n}, Access::Read));
    if (g.n > 1 && t.bias.stride[0] != 1)
      return Error::invalid(s(P) + ": bias must be contiguous (stride 1); its stride is " + n2s(t.bias.stride[0]));
  } else {
    BARACUDA_TRY(detail::check_absent(P, "bias", t.bias, "the descriptor has no bias (with_bias())"));
  }
  if (is_fp8(g.output))
    BARACUDA_TRY(check_scalar("d_scale", t.d_scale, Access::Read));
  else
    BARACUDA_TRY(detail::check_absent(P, "d_scale", t.d_scale, "only an fp8 output is scaled"));
  BARACUDA_TRY(check_matrix("d", t.d, g.output, g.m, g.n, ldd_of(g), Access::Write));
  if (g.has_amax)
    BARACUDA_TRY(detail::check_tensor(P, "amax", t.amax, ElementKind::F32, Shape{1}, Access::Write));
  else
    BARACUDA_TRY(detail::check_absent(P, "amax", t.amax, "the descriptor has no amax (with_amax())"));
  if (g.m * g.k > 0) BARACUDA_TRY(check_aligned16("a", t.a));
  if (g.n * g.k > 0) BARACUDA_TRY(check_aligned16("b", t.b));
  const std::pair<std::string_view, ConstDynTensor> inputs[] = {
      {"a", t.a}, {"b", t.b}, {"a_scale", t.a_scale}, {"b_scale", t.b_scale}, {"bias", t.bias}, {"d_scale", t.d_scale}};
  for (const auto& [name, x] : inputs) {
    BARACUDA_TRY(detail::check_no_overlap(P, "d", t.d, name, x));
    BARACUDA_TRY(detail::check_no_overlap(P, "amax", t.amax, name, x));
  }
  BARACUDA_TRY(detail::check_no_overlap(P, "amax", t.amax, "d", t.d));
#if BARACUDA_HAVE_CUDA_KERNELS
  if (lt_) return lt_->can_run(launch_for(g, t));  // its alignment and scale layouts
#endif
  return {};
}

PrecisionGuarantee Fp8GemmPlan::precision_guarantee() const {
  const MathPrecision p = binding_.sku.precision;
  // cuBLASLt documents no summation order: no promise.
  const bool ordered = binding_.sku.backend != BackendKind::CublasLt;
  return {p, p, ordered, ordered};
}

Status Fp8GemmPlan::run(const Stream& stream, Workspace ws, const Args& t) const {
  const Fp8GemmDescriptor& g = desc_;
  // An empty D still writes the amax (0); the backends handle M or N = 0.
  const bool empty = (g.m == 0 || g.n == 0) && !g.has_amax;
  const auto ctx = detail::begin_run(
      P, binding_, stream, [&] { return can_implement(t); },
      {ws,
       workspace_bytes_,
       256,
       "the library backend's workspace",
       {{"a", t.a},
        {"b", t.b},
        {"a_scale", t.a_scale},
        {"b_scale", t.b_scale},
        {"bias", t.bias},
        {"d_scale", t.d_scale},
        {"d", t.d},
        {"amax", t.amax}}},
      empty);
  if (!ctx) return ctx.status();
  const detail::Fp8GemmLaunch l = launch_for(g, t);
#if BARACUDA_HAVE_CUDA_KERNELS
  if (lt_) return lt_->run((*ctx).stream, l, ws.data, ws.size);
#endif
  return fn_(*ctx, l);
}

}  // namespace dynamic
}  // namespace baracuda
