// LinearPlan and LinearBackwardPlan (include/baracuda/ops/linear.hpp): select (the descriptor's rules, then the
// GemmPlans of each pass), can_implement (each operand against the descriptor, its leading dimensions flattened
// to rows; aliasing across the passes; then each GemmPlan's own checks on the 2-D views it is given), run (the
// GemmPlans in order, each on its part of the workspace). No kernels of their own.
#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <utility>

#include "baracuda/ops/linear.hpp"
#include "core/plan_core.hpp"
#include "core/validate.hpp"

namespace baracuda {
namespace {

constexpr std::string_view kForward = "LinearPlan";
constexpr std::string_view kBackward = "LinearBackwardPlan";
constexpr size_t kAlign = 256;
constexpr MatrixLayout R = MatrixLayout::RowMajor, C = MatrixLayout::ColMajor;

std::string s(std::string_view v) { return std::string(v); }
std::string n2s(int64_t v) { return std::to_string(v); }
size_t align_up(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }
MatrixLayout flip(MatrixLayout l) { return l == R ? C : R; }

/// A leading dimension resolved: 0 means packed (max(1, the contiguous extent)).
int64_t resolve_ld(int64_t ld, MatrixLayout l, int64_t rows, int64_t cols) {
  return ld != 0 ? ld : std::max<int64_t>(1, l == R ? cols : rows);
}

/// The element strides (row, col) of a `rows × cols` matrix in `l` with leading dimension `ld` (resolved).
std::pair<int64_t, int64_t> strides_of(MatrixLayout l, int64_t ld) {
  return l == R ? std::pair{ld, int64_t{1}} : std::pair{int64_t{1}, ld};
}

Status check_ld(std::string_view plan, std::string_view name, int64_t ld, MatrixLayout l, int64_t rows, int64_t cols) {
  const int64_t packed = std::max<int64_t>(1, l == R ? cols : rows);
  if (ld != 0 && ld < packed)
    return Error::invalid(s(plan) + ": " + s(name) + " = " + n2s(ld) + " is below " + n2s(packed) + " (" +
                          (l == R ? "row-major: >= its columns" : "column-major: >= its rows") + "; 0 means packed)");
  return {};
}

Status check_layout(std::string_view plan, MatrixLayout l) {
  if (l != R && l != C) return Error::invalid(s(plan) + ": invalid MatrixLayout");
  return {};
}

/// The rules both plans share: kinds, extents, the read operands' layouts and leading dimensions.
Status check_common(std::string_view plan, const LinearDescriptor& d) {
  BARACUDA_TRY(detail::check_kinds(plan, {d.input, d.output}));
  const bool ok = ((d.input == ElementKind::F16 || d.input == ElementKind::Bf16) &&
                   (d.output == d.input || d.output == ElementKind::F32)) ||
                  ((d.input == ElementKind::F32 || d.input == ElementKind::F64) && d.output == d.input);
  if (!ok)
    return Error::unsupported(s(plan) + ": " + s(to_string(d.input)) + " -> " + s(to_string(d.output)) +
                              " is not supported (f16 -> f16 | f32, bf16 -> bf16 | f32, f32 -> f32, f64 -> f64)");
  if (d.rows < 0 || d.in_features < 0 || d.out_features < 0)
    return Error::invalid(s(plan) + ": rows, in_features and out_features must be >= 0; got " + n2s(d.rows) + ", " +
                          n2s(d.in_features) + ", " + n2s(d.out_features));
  for (const auto [a, b] :
       {std::pair{d.rows, d.in_features}, std::pair{d.rows, d.out_features}, std::pair{d.out_features, d.in_features}})
    if (a > 0 && b > kMaxElements / a)
      return Error::invalid(s(plan) +
                            ": rows x in_features, rows x out_features and out_features x in_features must "
                            "each be at most 2^56 elements");
  BARACUDA_TRY(check_layout(plan, d.layout_x));
  BARACUDA_TRY(check_layout(plan, d.layout_w));
  BARACUDA_TRY(check_ld(plan, "ld_x", d.ld_x, d.layout_x, d.rows, d.in_features));
  BARACUDA_TRY(check_ld(plan, "ld_w", d.ld_w, d.layout_w, d.out_features, d.in_features));
  return {};
}

/// A sub-plan's error, prefixed with the plan and the pass.
Error wrap(std::string_view plan, std::string_view pass, const Error& e) {
  Error r = e;
  r.message = s(plan) + ": the " + s(pass) + " GEMM: " + e.message;
  return r;
}

/// The binding of a composed plan: the first GemmPlan's SKU under the plan's own op name.
detail::PlanBinding binding_of(const Stream& stream, const dynamic::GemmPlan& first, std::string_view op) {
  KernelSku sku = first.sku();
  sku.op = op;
  return detail::PlanBinding{sku, stream.device(), stream.device_index(), true};
}

PrecisionGuarantee combined(std::initializer_list<const dynamic::GemmPlan*> plans) {
  PrecisionGuarantee r;
  bool first = true;
  for (const dynamic::GemmPlan* p : plans) {
    if (p == nullptr) continue;
    const PrecisionGuarantee g = p->precision_guarantee();
    if (first) r = g, first = false;
    r.bit_stable_on_same_hardware = r.bit_stable_on_same_hardware && g.bit_stable_on_same_hardware;
    r.deterministic = r.deterministic && g.deterministic;
  }
  return r;
}

/// A rows × features operand (x, y, dy, dx, the pre-activation) seen as the matrix a GemmPlan takes.
struct RowMatrix {
  std::string_view name;
  int64_t cols = 0;
  MatrixLayout layout = R;
  int64_t ld = 0;  ///< resolved
};

/// Checks `t` as `lead + [m.cols]` (or, with `lead` null, any leading dimensions whose product is `rows`,
/// which then become `*lead_out`), its flattened strides against the descriptor's, and returns its 2-D view.
Result<ConstDynTensor> as_matrix(std::string_view plan, const ConstDynTensor& t, ElementKind kind, int64_t rows,
                                 const RowMatrix& m, const Shape* lead, detail::Access access, Shape* lead_out) {
  Shape expected;
  if (lead != nullptr) {
    expected = *lead;  // the reference operand's leading dimensions: rank < kMaxRank (checked below)
    expected.dims[expected.rank++] = m.cols;
  } else {
    if (t.data == nullptr && t.shape.rank == 0 && rows > 0 && m.cols > 0)
      return Error::invalid(s(plan) + ": " + s(m.name) + " is missing (an empty view); the descriptor says " +
                            s(to_string(kind)) + " [..., " + n2s(m.cols) + "] over " + n2s(rows) + " rows");
    bool ok = t.shape.rank >= 1 && t.shape.rank <= kMaxRank && t.shape.dims[t.shape.rank - 1] == m.cols;
    int64_t prod = 1;
    for (int i = 0; ok && i + 1 < t.shape.rank; ++i)
      ok = t.shape.dims[i] >= 0 && !__builtin_mul_overflow(prod, t.shape.dims[i], &prod);
    if (!ok || prod != rows)
      return Error::invalid(s(plan) + ": " + s(m.name) + " has shape " + to_string(t.shape) +
                            ", the descriptor says [..., " + n2s(m.cols) + "] with leading dimensions of product " +
                            n2s(rows) + " (rows)");
    expected = t.shape;
  }
  BARACUDA_TRY(detail::check_tensor(plan, m.name, t, kind, expected, access));
  if (lead_out != nullptr) {
    *lead_out = expected;
    --lead_out->rank;
  }
  const auto [want_row, want_col] = strides_of(m.layout, m.ld);
  ConstDynTensor v;
  v.data = t.data, v.kind = kind, v.shape = Shape{rows, m.cols};
  v.stride[0] = want_row, v.stride[1] = want_col;
  if (t.numel() == 0) return v;
  // The leading dimensions flatten into one of stride `row` (extent-1 dimensions have any stride).
  const int last = expected.rank - 1;
  int64_t row = -1, next = 0;  // next: the stride the next outer leading dimension must have
  for (int i = last - 1; i >= 0; --i) {
    if (expected.dims[i] == 1) continue;
    if (row < 0)
      row = t.stride[i];
    else if (t.stride[i] != next)
      return Error::invalid(s(plan) + ": " + s(m.name) +
                            "'s leading dimensions do not flatten into rows of one "
                            "stride (dimension " +
                            std::to_string(i) + " has stride " + n2s(t.stride[i]) + ", " + n2s(next) +
                            " would be the next one's stride times its extent)");
    next = t.stride[i] * expected.dims[i];
  }
  const int64_t col = t.stride[last];
  const bool row_ok = rows <= 1 || row == want_row, col_ok = m.cols <= 1 || col == want_col;
  if (!row_ok || !col_ok)
    return Error::invalid(s(plan) + ": " + s(m.name) + "'s strides (rows " + n2s(row) + ", features " + n2s(col) +
                          ") are not the descriptor's (" + n2s(want_row) + ", " + n2s(want_col) + ": " +
                          (m.layout == R ? "row-major" : "column-major") + " with ld " + n2s(m.ld) + ")");
  return v;
}

/// W [N, K] (rank 2), or dW: exact strides of `l` with ld.
Result<ConstDynTensor> weight_matrix(std::string_view plan, std::string_view name, const ConstDynTensor& t,
                                     ElementKind kind, int64_t n, int64_t k, MatrixLayout l, int64_t ld,
                                     detail::Access access) {
  BARACUDA_TRY(detail::check_tensor(plan, name, t, kind, Shape{n, k}, access));
  const auto [want_row, want_col] = strides_of(l, ld);
  if (t.numel() > 0 && ((n > 1 && t.stride[0] != want_row) || (k > 1 && t.stride[1] != want_col)))
    return Error::invalid(s(plan) + ": " + s(name) + "'s strides (" + n2s(t.stride[0]) + ", " + n2s(t.stride[1]) +
                          ") are not the descriptor's (" + n2s(want_row) + ", " + n2s(want_col) + ": " +
                          (l == R ? "row-major" : "column-major") + " with ld " + n2s(ld) + ")");
  ConstDynTensor v = t;
  v.stride[0] = want_row, v.stride[1] = want_col;
  return v;
}

/// A vector operand [n], contiguous.
Status check_vector(std::string_view plan, std::string_view name, const ConstDynTensor& t, ElementKind kind, int64_t n,
                    detail::Access access) {
  BARACUDA_TRY(detail::check_tensor(plan, name, t, kind, Shape{n}, access));
  if (n > 1 && t.stride[0] != 1)
    return Error::invalid(s(plan) + ": " + s(name) + " must be contiguous (stride 1); its stride is " +
                          n2s(t.stride[0]));
  return {};
}

/// A writable view from a checked read-only one (the same memory, given to the plan as written).
DynTensor writable(const ConstDynTensor& t) {
  DynTensor d;
  static_cast<detail::DynTensorLayout&>(d) = t;
  d.data = const_cast<void*>(t.data);
  return d;
}

/// No output overlaps an input or an output after it.
Status check_overlaps(std::string_view plan, std::initializer_list<detail::NamedTensor> outputs,
                      std::initializer_list<detail::NamedTensor> inputs) {
  for (auto o = outputs.begin(); o != outputs.end(); ++o) {
    for (const auto& i : inputs) BARACUDA_TRY(detail::check_no_overlap(plan, o->name, o->tensor, i.name, i.tensor));
    for (auto p = o + 1; p != outputs.end(); ++p)
      BARACUDA_TRY(detail::check_no_overlap(plan, p->name, p->tensor, o->name, o->tensor));
  }
  return {};
}

/// The preference a GemmPlan is selected with when `left` bytes of the caller's `max_workspace_bytes` remain:
/// rounded down to 256, so that the GEMM's workspace rounded up stays within it.
PlanPreference within(PlanPreference pref, size_t left) {
  if (pref.max_workspace_bytes != SIZE_MAX) pref.max_workspace_bytes = left / kAlign * kAlign;
  return pref;
}

Workspace part(const Workspace& ws, size_t offset, size_t bytes) {
  if (bytes == 0) return Workspace{};
  return Workspace(static_cast<char*>(ws.data) + offset, bytes);
}

}  // namespace

namespace dynamic {

// ---------------------------------------------------------------------------------------------------------
// LinearPlan
// ---------------------------------------------------------------------------------------------------------

Result<LinearPlan> LinearPlan::select(const Stream& stream, const LinearDescriptor& d, PlanPreference pref) {
  BARACUDA_TRY(check_common(kForward, d));
  if (static_cast<size_t>(d.activation) >= kNumLinearActivations)
    return Error::invalid(s(kForward) + ": invalid LinearActivation");
  BARACUDA_TRY(check_ld(kForward, "ld_y", d.ld_y, R, d.rows, d.out_features));
  BARACUDA_TRY(check_ld(kForward, "ld_preactivation", d.ld_preactivation, R, d.rows, d.out_features));
  const GemmDescriptor g = GemmDescriptor{}
                               .with_shape(d.rows, d.out_features, d.in_features)
                               .with_kinds(d.input, d.output)
                               .with_layouts(d.layout_x, flip(d.layout_w))
                               .with_lda(resolve_ld(d.ld_x, d.layout_x, d.rows, d.in_features))
                               .with_ldb(resolve_ld(d.ld_w, d.layout_w, d.out_features, d.in_features))
                               .with_ldd(resolve_ld(d.ld_y, R, d.rows, d.out_features))
                               .with_ld_aux(resolve_ld(d.ld_preactivation, R, d.rows, d.out_features))
                               .with_bias(d.has_bias)
                               .with_activation(d.activation)
                               .with_aux(d.has_preactivation)
                               .with_tf32(d.allow_tf32);
  auto gemm = GemmPlan::select(stream, g, within(pref, pref.max_workspace_bytes));
  if (!gemm) return wrap(kForward, "forward", gemm.error());
  LinearPlan p;
  p.desc_ = d;
  p.binding_ = binding_of(stream, *gemm, "linear");
  p.workspace_bytes_ = align_up(gemm->workspace_size());
  p.gemm_ = std::move(gemm).value();
  return p;
}

namespace {

/// The forward's operands as the GemmPlan's.
Result<GemmArgs> forward_gemm_args(const LinearDescriptor& d, const LinearArgs& a) {
  using detail::Access;
  const RowMatrix mx{"x", d.in_features, d.layout_x, resolve_ld(d.ld_x, d.layout_x, d.rows, d.in_features)};
  const RowMatrix my{"y", d.out_features, R, resolve_ld(d.ld_y, R, d.rows, d.out_features)};
  const RowMatrix mp{"preactivation", d.out_features, R, resolve_ld(d.ld_preactivation, R, d.rows, d.out_features)};
  Shape lead;
  auto x = as_matrix(kForward, a.x, d.input, d.rows, mx, nullptr, Access::Read, &lead);
  if (!x) return x.error();
  auto w = weight_matrix(kForward, "w", a.w, d.input, d.out_features, d.in_features, d.layout_w,
                         resolve_ld(d.ld_w, d.layout_w, d.out_features, d.in_features), Access::Read);
  if (!w) return w.error();
  if (d.has_bias)
    BARACUDA_TRY(check_vector(kForward, "bias", a.bias, d.output, d.out_features, Access::Read));
  else
    BARACUDA_TRY(detail::check_absent(kForward, "bias", a.bias, "the descriptor has no bias (with_bias())"));
  auto y = as_matrix(kForward, a.y, d.output, d.rows, my, &lead, Access::Write, nullptr);
  if (!y) return y.error();
  GemmArgs g;
  g.a = *x;
  // op(B) = Wᵀ: W [N, K] with strides (r, c) is the [K, N] view with strides (c, r).
  g.b = *w;
  std::swap(g.b.shape.dims[0], g.b.shape.dims[1]);
  std::swap(g.b.stride[0], g.b.stride[1]);
  if (d.has_bias) g.bias = a.bias;
  g.d = writable(*y);
  if (d.has_preactivation) {
    auto p = as_matrix(kForward, a.preactivation, d.output, d.rows, mp, &lead, Access::Write, nullptr);
    if (!p) return p.error();
    g.aux = writable(*p);
  } else {
    BARACUDA_TRY(detail::check_absent(kForward, "preactivation", a.preactivation,
                                      "the descriptor has no pre-activation output (with_preactivation())"));
  }
  BARACUDA_TRY(check_overlaps(kForward, {{"y", a.y}, {"preactivation", a.preactivation}},
                              {{"x", a.x}, {"w", a.w}, {"bias", a.bias}}));
  return g;
}

}  // namespace

Status LinearPlan::can_implement(const Args& a) const {
  if (!gemm_) return Error::invalid(s(kForward) + ": can_implement on a plan that select did not produce");
  auto g = forward_gemm_args(desc_, a);
  if (!g) return g.error();
  const Status st = gemm_->can_implement(*g);
  if (!st) return wrap(kForward, "forward", st.error());
  return {};
}

PrecisionGuarantee LinearPlan::precision_guarantee() const { return combined({gemm_ ? &*gemm_ : nullptr}); }

Status LinearPlan::run(const Stream& stream, Workspace ws, const Args& a) const {
  const LinearDescriptor& d = desc_;
  const bool empty = d.rows == 0 || d.out_features == 0;
  const auto ctx = detail::begin_run(
      kForward, binding_, stream, [&] { return can_implement(a); },
      {ws,
       workspace_bytes_,
       kAlign,
       "the GEMM's workspace",
       {{"x", a.x}, {"w", a.w}, {"bias", a.bias}, {"y", a.y}, {"preactivation", a.preactivation}}},
      empty);
  if (!ctx) return ctx.status();
  auto g = forward_gemm_args(d, a);
  if (!g) return g.error();
  const Status st = gemm_->run(stream, part(ws, 0, gemm_->workspace_size()), *g);
  if (!st) return wrap(kForward, "forward", st.error());
  return {};
}

// ---------------------------------------------------------------------------------------------------------
// LinearBackwardPlan
// ---------------------------------------------------------------------------------------------------------

namespace {

/// The activation's backward over [M, N]: the UnaryKind of each LinearActivation (relu's backward reads y, and
/// relu(z) > 0 exactly where z > 0, so the pre-activation serves).
Result<UnaryBackwardPlan> select_activation_backward(const Stream& stream, const LinearDescriptor& d,
                                                     PlanPreference pref) {
  if (static_cast<size_t>(d.activation) >= kNumLinearActivations)
    return Error::invalid(s(kBackward) + ": invalid LinearActivation");
  if (d.input != d.output)
    return Error::unsupported(s(kBackward) +
                              ": the activation's backward needs input == output kinds (dz is of "
                              "the input kind, the saved pre-activation of the output kind); got " +
                              s(to_string(d.input)) + " -> " + s(to_string(d.output)));
  UnaryKind kind = UnaryKind::Relu;
  switch (d.activation) {
    case LinearActivation::Relu:
      kind = UnaryKind::Relu;
      break;
    case LinearActivation::Silu:
      kind = UnaryKind::Silu;
      break;
    case LinearActivation::GeluErf:
      kind = UnaryKind::Gelu;
      break;
    default:
      kind = UnaryKind::GeluTanh;
      break;
  }
  pref.prefer_backend.reset();  // a GEMM backend names no elementwise one; the stream's device decides
  auto p = UnaryBackwardPlan::select(
      stream, UnaryDescriptor{}.with_kind(kind).with_element(d.input).with_shape(Shape{d.rows, d.out_features}), pref);
  if (!p) return wrap(kBackward, "activation's", p.error());
  return p;
}

/// The activation backward's operands: dy and the pre-activation as [M, N] views, dz at `dz`.
UnaryBackwardArgs activation_args(const LinearDescriptor& d, const LinearBackwardArgs& a, const void* dz) {
  const int64_t m = d.rows, n = d.out_features;
  auto flat = [&](const ConstDynTensor& t, MatrixLayout l, int64_t ld) {
    ConstDynTensor v;
    v.data = t.data, v.kind = t.kind, v.shape = Shape{m, n};
    const auto [row, col] = strides_of(l, ld);
    v.stride[0] = row, v.stride[1] = col;
    return v;
  };
  UnaryBackwardArgs u;
  u.dy = flat(a.dy, d.layout_dy, resolve_ld(d.ld_dy, d.layout_dy, m, n));
  u.saved = flat(a.preactivation, R, resolve_ld(d.ld_preactivation, R, m, n));
  u.dx = DynTensor::dense(const_cast<void*>(dz), d.input, Shape{m, n});
  return u;
}

}  // namespace

Result<LinearBackwardPlan> LinearBackwardPlan::select(const Stream& stream, const LinearDescriptor& d,
                                                      PlanPreference pref) {
  BARACUDA_TRY(check_common(kBackward, d));
  BARACUDA_TRY(check_layout(kBackward, d.layout_dy));
  if (!d.grad_input && !d.grad_weight && !d.grad_bias)
    return Error::invalid(s(kBackward) + ": no gradient asked for (with_gradients(dx, dw, db))");
  BARACUDA_TRY(check_ld(kBackward, "ld_dy", d.ld_dy, d.layout_dy, d.rows, d.out_features));
  BARACUDA_TRY(check_ld(kBackward, "ld_dx", d.ld_dx, R, d.rows, d.in_features));
  BARACUDA_TRY(check_ld(kBackward, "ld_dw", d.ld_dw, R, d.out_features, d.in_features));
  LinearBackwardPlan p;
  p.desc_ = d;
  // With an activation the GEMMs read dz (dense, row-major, in the workspace) where they would read dy.
  const bool act = d.activation != LinearActivation::None;
  const MatrixLayout layout_dy = act ? R : d.layout_dy;
  const int64_t ld_dy =
      act ? std::max<int64_t>(1, d.out_features) : resolve_ld(d.ld_dy, d.layout_dy, d.rows, d.out_features);
  if (act) {
    auto ab = select_activation_backward(stream, d, pref);
    if (!ab) return ab.error();
    p.act_ = std::move(ab).value();
    p.act_workspace_ = align_up(static_cast<size_t>(d.rows * d.out_features) * (element_bits(d.input) / 8));
    if (pref.max_workspace_bytes < p.act_workspace_)
      return Error::unsupported(s(kBackward) + ": the activation's gradient needs " + std::to_string(p.act_workspace_) +
                                " bytes of workspace, above max_workspace_bytes");
  }
  const size_t cap = pref.max_workspace_bytes == SIZE_MAX ? SIZE_MAX : pref.max_workspace_bytes - p.act_workspace_;
  if (d.grad_input) {
    // dx [M, K] = dy [M, N] · W [N, K].
    const GemmDescriptor g = GemmDescriptor{}
                                 .with_shape(d.rows, d.in_features, d.out_features)
                                 .with_kinds(d.input, d.output)
                                 .with_layouts(layout_dy, d.layout_w)
                                 .with_lda(ld_dy)
                                 .with_ldb(resolve_ld(d.ld_w, d.layout_w, d.out_features, d.in_features))
                                 .with_ldd(resolve_ld(d.ld_dx, R, d.rows, d.in_features))
                                 .with_tf32(d.allow_tf32);
    auto gemm = GemmPlan::select(stream, g, within(pref, cap));
    if (!gemm) return wrap(kBackward, "dx", gemm.error());
    p.dx_ = std::move(gemm).value();
  }
  if (d.grad_weight || d.grad_bias) {
    // dW [N, K] = dyᵀ [N, M] · x [M, K], db = Σ_m dyᵀ[n, m] (bias_grad); db alone: the same GEMM with no columns.
    const int64_t cols = d.grad_weight ? d.in_features : 0;
    const GemmDescriptor g = GemmDescriptor{}
                                 .with_shape(d.out_features, cols, d.rows)
                                 .with_kinds(d.input, d.output)
                                 .with_layouts(flip(layout_dy), d.grad_weight ? d.layout_x : R)
                                 .with_lda(ld_dy)
                                 .with_ldb(d.grad_weight ? resolve_ld(d.ld_x, d.layout_x, d.rows, d.in_features) : 0)
                                 .with_ldd(d.grad_weight ? resolve_ld(d.ld_dw, R, d.out_features, d.in_features) : 0)
                                 .with_bias_grad(d.grad_bias)
                                 .with_tf32(d.allow_tf32);
    // The dx GEMM's workspace (rounded up) is taken from the caller's bound first.
    const size_t dx_bytes = p.dx_ ? align_up(p.dx_->workspace_size()) : 0;
    auto gemm = GemmPlan::select(stream, g, within(pref, cap - dx_bytes));
    if (!gemm) return wrap(kBackward, d.grad_weight ? "dW" : "db", gemm.error());
    p.dw_ = std::move(gemm).value();
  }
  p.binding_ = binding_of(stream, p.dx_ ? *p.dx_ : *p.dw_, "linear_backward");
  p.dx_workspace_ = p.dx_ ? align_up(p.dx_->workspace_size()) : 0;
  p.workspace_bytes_ = p.act_workspace_ + p.dx_workspace_ + (p.dw_ ? align_up(p.dw_->workspace_size()) : 0);
  return p;
}

namespace {

/// The backward's operands as its GemmPlans' (dx's, dW's).
struct BackwardGemmArgs {
  GemmArgs dx, dw;
};

/// dz's view in the workspace at `dz` (can_implement passes kDzPlaceholder: the GEMMs' checks need an
/// address, and none of an allocation's lies in the first page).
const void* const kDzPlaceholder = reinterpret_cast<const void*>(uintptr_t{kAlign});

Result<BackwardGemmArgs> backward_gemm_args(const LinearDescriptor& d, const LinearBackwardArgs& a,
                                            const void* dz = kDzPlaceholder) {
  using detail::Access;
  const int64_t m = d.rows, k = d.in_features, n = d.out_features;
  const RowMatrix mdy{"dy", n, d.layout_dy, resolve_ld(d.ld_dy, d.layout_dy, m, n)};
  const RowMatrix mx{"x", k, d.layout_x, resolve_ld(d.ld_x, d.layout_x, m, k)};
  const RowMatrix mdx{"dx", k, R, resolve_ld(d.ld_dx, R, m, k)};
  Shape lead;
  auto dy = as_matrix(kBackward, a.dy, d.input, m, mdy, nullptr, Access::Read, &lead);
  if (!dy) return dy.error();
  if (d.activation != LinearActivation::None) {
    const RowMatrix mz{"preactivation", n, R, resolve_ld(d.ld_preactivation, R, m, n)};
    auto z = as_matrix(kBackward, a.preactivation, d.output, m, mz, &lead, Access::Read, nullptr);
    if (!z) return z.error();
    *dy = ConstDynTensor::dense(dz, d.input, Shape{m, n});  // the GEMMs read dz
  } else {
    BARACUDA_TRY(detail::check_absent(kBackward, "preactivation", a.preactivation,
                                      "the descriptor has no activation, so dy is the pre-activation's gradient"));
  }
  BackwardGemmArgs r;
  if (d.grad_weight) {
    auto x = as_matrix(kBackward, a.x, d.input, m, mx, &lead, Access::Read, nullptr);
    if (!x) return x.error();
    r.dw.b = *x;
  } else {
    BARACUDA_TRY(detail::check_absent(kBackward, "x", a.x, "only dW reads x, and the descriptor has no grad_weight"));
  }
  if (d.grad_input) {
    auto w = weight_matrix(kBackward, "w", a.w, d.input, n, k, d.layout_w, resolve_ld(d.ld_w, d.layout_w, n, k),
                           Access::Read);
    if (!w) return w.error();
    r.dx.a = *dy;
    r.dx.b = *w;
    auto dx = as_matrix(kBackward, a.dx, d.output, m, mdx, &lead, Access::Write, nullptr);
    if (!dx) return dx.error();
    r.dx.d = writable(*dx);
  } else {
    BARACUDA_TRY(detail::check_absent(kBackward, "w", a.w, "only dx reads W, and the descriptor has no grad_input"));
    BARACUDA_TRY(detail::check_absent(kBackward, "dx", a.dx, "the descriptor has no grad_input"));
  }
  if (d.grad_weight) {
    auto dw = weight_matrix(kBackward, "dw", a.dw, d.output, n, k, R, resolve_ld(d.ld_dw, R, n, k), Access::Write);
    if (!dw) return dw.error();
    r.dw.d = writable(*dw);
  } else {
    BARACUDA_TRY(detail::check_absent(kBackward, "dw", a.dw, "the descriptor has no grad_weight"));
  }
  if (d.grad_bias) {
    BARACUDA_TRY(check_vector(kBackward, "db", a.db, d.output, n, Access::Write));
    r.dw.bias_grad = a.db;
  } else {
    BARACUDA_TRY(detail::check_absent(kBackward, "db", a.db, "the descriptor has no grad_bias"));
  }
  if (d.grad_weight || d.grad_bias) {
    // op(A) = dyᵀ: the [N, M] view with dy's strides swapped.
    r.dw.a = *dy;
    std::swap(r.dw.a.shape.dims[0], r.dw.a.shape.dims[1]);
    std::swap(r.dw.a.stride[0], r.dw.a.stride[1]);
    if (!d.grad_weight) {  // db alone: op(B) [M, 0] and D [N, 0], empty views the GEMM never touches
      r.dw.b = ConstDynTensor{};
      r.dw.b.kind = d.input, r.dw.b.shape = Shape{m, 0}, r.dw.b.stride = {1, 1};
      r.dw.d = DynTensor{};
      r.dw.d.kind = d.output, r.dw.d.shape = Shape{n, 0}, r.dw.d.stride = {1, 1};
    }
  }
  BARACUDA_TRY(check_overlaps(kBackward, {{"dx", a.dx}, {"dw", a.dw}, {"db", a.db}},
                              {{"dy", a.dy}, {"x", a.x}, {"w", a.w}, {"preactivation", a.preactivation}}));
  return r;
}

}  // namespace

Status LinearBackwardPlan::can_implement(const Args& a) const {
  if (!dx_ && !dw_) return Error::invalid(s(kBackward) + ": can_implement on a plan that select did not produce");
  auto g = backward_gemm_args(desc_, a);
  if (!g) return g.error();
  if (act_) {
    const Status st = act_->can_implement(activation_args(desc_, a, kDzPlaceholder));
    if (!st) return wrap(kBackward, "activation's", st.error());
  }
  if (dx_) {
    const Status st = dx_->can_implement(g->dx);
    if (!st) return wrap(kBackward, "dx", st.error());
  }
  if (dw_) {
    const Status st = dw_->can_implement(g->dw);
    if (!st) return wrap(kBackward, desc_.grad_weight ? "dW" : "db", st.error());
  }
  return {};
}

PrecisionGuarantee LinearBackwardPlan::precision_guarantee() const {
  PrecisionGuarantee g = combined({dx_ ? &*dx_ : nullptr, dw_ ? &*dw_ : nullptr});
  if (act_) {
    const PrecisionGuarantee u = act_->precision_guarantee();
    g.bit_stable_on_same_hardware = g.bit_stable_on_same_hardware && u.bit_stable_on_same_hardware;
    g.deterministic = g.deterministic && u.deterministic;
  }
  return g;
}

Status LinearBackwardPlan::run(const Stream& stream, Workspace ws, const Args& a) const {
  const LinearDescriptor& d = desc_;
  const int64_t m = d.rows, k = d.in_features, n = d.out_features;
  const bool empty = (!d.grad_input || m * k == 0) && (!d.grad_weight || n * k == 0) && (!d.grad_bias || n == 0);
  const auto ctx = detail::begin_run(
      kBackward, binding_, stream, [&] { return can_implement(a); },
      {ws,
       workspace_bytes_,
       kAlign,
       "the activation's gradient and the GEMMs' workspaces",
       {{"dy", a.dy},
        {"x", a.x},
        {"w", a.w},
        {"preactivation", a.preactivation},
        {"dx", a.dx},
        {"dw", a.dw},
        {"db", a.db}}},
      empty);
  if (!ctx) return ctx.status();
  auto g = backward_gemm_args(d, a, ws.data);
  if (!g) return g.error();
  if (act_) {
    const Status st = act_->run(stream, Workspace{}, activation_args(d, a, ws.data));
    if (!st) return wrap(kBackward, "activation's", st.error());
  }
  if (dx_) {
    const Status st = dx_->run(stream, part(ws, act_workspace_, dx_->workspace_size()), g->dx);
    if (!st) return wrap(kBackward, "dx", st.error());
  }
  if (dw_) {
    const Status st = dw_->run(stream, part(ws, act_workspace_ + dx_workspace_, dw_->workspace_size()), g->dw);
    if (!st) return wrap(kBackward, d.grad_weight ? "dW" : "db", st.error());
  }
  return {};
}

}  // namespace dynamic
}  // namespace baracuda
