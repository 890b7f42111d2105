// The gemm family's cuBLASLt backend: the mapping (pure, compiled in every build) and, with the cuda kernels,
// the cuBLASLt objects built at select and the one call of run. See cublaslt.hpp for the mapping.
#include "ops/gemm/cublaslt.hpp"

#include <cublasLt.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <mutex>
#include <string>
#include <utility>

namespace baracuda::detail {

static_assert(static_cast<uint32_t>(CublasLtEpilogue::Default) == CUBLASLT_EPILOGUE_DEFAULT);
static_assert(static_cast<uint32_t>(CublasLtEpilogue::Relu) == CUBLASLT_EPILOGUE_RELU);
static_assert(static_cast<uint32_t>(CublasLtEpilogue::Bias) == CUBLASLT_EPILOGUE_BIAS);
static_assert(static_cast<uint32_t>(CublasLtEpilogue::ReluBias) == CUBLASLT_EPILOGUE_RELU_BIAS);
static_assert(static_cast<uint32_t>(CublasLtEpilogue::Gelu) == CUBLASLT_EPILOGUE_GELU);
static_assert(static_cast<uint32_t>(CublasLtEpilogue::GeluBias) == CUBLASLT_EPILOGUE_GELU_BIAS);
static_assert(static_cast<uint32_t>(CublasLtEpilogue::GeluAux) == CUBLASLT_EPILOGUE_GELU_AUX);
static_assert(static_cast<uint32_t>(CublasLtEpilogue::GeluAuxBias) == CUBLASLT_EPILOGUE_GELU_AUX_BIAS);
static_assert(static_cast<uint32_t>(CublasLtEpilogue::BgradA) == CUBLASLT_EPILOGUE_BGRADA);
static_assert(static_cast<uint32_t>(CublasLtEpilogue::BgradB) == CUBLASLT_EPILOGUE_BGRADB);

std::string_view to_string(CublasLtEpilogue e) {
  switch (e) {
    case CublasLtEpilogue::Default:
      return "DEFAULT";
    case CublasLtEpilogue::Relu:
      return "RELU";
    case CublasLtEpilogue::Bias:
      return "BIAS";
    case CublasLtEpilogue::ReluBias:
      return "RELU_BIAS";
    case CublasLtEpilogue::Gelu:
      return "GELU";
    case CublasLtEpilogue::GeluBias:
      return "GELU_BIAS";
    case CublasLtEpilogue::GeluAux:
      return "GELU_AUX";
    case CublasLtEpilogue::GeluAuxBias:
      return "GELU_AUX_BIAS";
    case CublasLtEpilogue::BgradA:
      return "BGRADA";
    case CublasLtEpilogue::BgradB:
      return "BGRADB";
  }
  return "?";
}

Result<CublasLtEpilogue> cublaslt_epilogue(std::string_view who, LinearActivation activation, bool bias, bool aux) {
  switch (activation) {
    case LinearActivation::None:
      return bias ? CublasLtEpilogue::Bias : CublasLtEpilogue::Default;
    case LinearActivation::Relu:
      return bias ? CublasLtEpilogue::ReluBias : CublasLtEpilogue::Relu;
    case LinearActivation::GeluTanh:
      if (aux) return bias ? CublasLtEpilogue::GeluAuxBias : CublasLtEpilogue::GeluAux;
      return bias ? CublasLtEpilogue::GeluBias : CublasLtEpilogue::Gelu;
    case LinearActivation::Silu:
    case LinearActivation::GeluErf:
      return Error::unsupported(std::string(who) + ": the activation " + std::string(to_string(activation)) +
                                " has no cuBLASLt epilogue (it has relu and the tanh gelu)");
    default:
      return Error::invalid(std::string(who) + ": activation " + std::to_string(static_cast<int>(activation)) +
                            " is not a LinearActivation");
  }
}

std::string to_string(const CublasLtMapping& m) {
  auto op = [](const CublasLtMatrix& x) { return x.transpose ? "T" : "N"; };
  std::string s = std::string(to_string(m.ab)) + "->" + std::string(to_string(m.cd)) + (m.tf32 ? " tf32" : "") +
                  " transa=" + op(m.a) + " transb=" + op(m.b) + " m=" + std::to_string(m.m) +
                  " n=" + std::to_string(m.n) + " k=" + std::to_string(m.k) + " lda=" + std::to_string(m.a.ld) +
                  " ldb=" + std::to_string(m.b.ld) + " ldc=" + std::to_string(m.c.ld) +
                  " ldd=" + std::to_string(m.d.ld) + " batch=" + std::to_string(m.batch_count);
  if (m.batch_count > 1)
    s += " strides=(" + std::to_string(m.a.batch_stride) + ", " + std::to_string(m.b.batch_stride) + ", " +
         std::to_string(m.c.batch_stride) + ", " + std::to_string(m.d.batch_stride) + ")";
  s += std::string(m.has_c ? " with C" : "") + " epilogue=" + std::string(to_string(m.epilogue));
  if (m.aux_ld != 0) s += " aux_ld=" + std::to_string(m.aux_ld);
  return s;
}

namespace {

constexpr std::string_view kWho = "GemmPlan (cuBLASLt)";
constexpr int64_t kMaxExtent = std::numeric_limits<int32_t>::max();

Error unsupported(const std::string& why) { return Error::unsupported(std::string(kWho) + ": " + why); }
Error invalid(const std::string& why) { return Error::invalid(std::string(kWho) + ": " + why); }
std::string str(int64_t v) { return std::to_string(v); }
int64_t round_up(int64_t v, int64_t to) { return (v + to - 1) / to * to; }

/// The ld of a stored matrix of one column: it addresses nothing, so any value ≥ rows is valid; the rows rounded
/// up to 16 bytes, so that it does not exclude the algorithms that need 16-byte aligned columns.
int64_t unused_ld(int64_t rows, ElementKind kind) { return round_up(rows, 16 / (element_bits(kind) / 8)); }

/// STRIDED_BATCH_OFFSET of an operand: 0 for one batch; the operand's batch stride otherwise (0 broadcasts).
Result<int64_t> batch_offset(const std::string& name, const GemmOperand& x, int64_t batch, bool output) {
  if (batch == 1) return int64_t{0};
  if (x.batch < 0) return unsupported(name + "'s batch stride " + str(x.batch) + " is negative");
  if (output && x.batch == 0) return invalid(name + "'s batch stride is 0 with " + str(batch) + " batches");
  return x.batch;
}

/// cuBLASLt's operand Xᵀ for the launch's input X [rows, cols] (op(A) or op(B); see the file comment).
Result<CublasLtMatrix> input_layout(const std::string& name, const GemmOperand& x, int64_t rows, int64_t cols,
                                    ElementKind kind, int64_t batch) {
  bool row_major = true;  // X's columns are contiguous: Xᵀ is stored as it is
  if (rows > 1 && cols > 1) {
    if (x.col == 1 && x.row != 1) {
      row_major = true;
    } else if (x.row == 1 && x.col != 1) {
      row_major = false;
    } else {
      return unsupported(name + " [" + str(rows) + ", " + str(cols) + "] has strides (" + str(x.row) + ", " +
                         str(x.col) + "): cuBLASLt needs exactly one of them to be 1");
    }
  } else if (cols == 1 && rows > 1) {
    row_major = x.row != 1;  // a contiguous column is X stored column-major; otherwise Xᵀ is one strided row
  } else if (rows == 1 && cols > 1) {
    row_major = x.col == 1;
  }
  CublasLtMatrix m;
  if (row_major) {
    m = {false, cols, rows, rows == 1 ? unused_ld(cols, kind) : x.row, 0};
  } else {
    m = {true, rows, cols, cols == 1 ? unused_ld(rows, kind) : x.col, 0};
  }
  if (m.ld < m.rows)
    return unsupported(name + "'s " + (row_major ? "row" : "column") + " stride " + str(m.ld) +
                       " is its leading dimension, below the " + str(m.rows) +
                       " rows cuBLASLt needs (a broadcast or overlapping " + (row_major ? "row" : "column") + ")");
  auto offset = batch_offset(name, x, batch, false);
  if (!offset) return offset.error();
  m.batch_stride = *offset;
  return m;
}

/// The layout of C, D or aux [M, N] (column stride 1): the column-major N×M matrix, never transposed.
Result<CublasLtMatrix> output_layout(const std::string& name, const GemmOperand& x, int64_t m, int64_t n,
                                     ElementKind kind, int64_t batch, bool written) {
  if (x.col != 1 && n > 1) return invalid(name + "'s column stride is " + str(x.col) + ", not 1");
  CublasLtMatrix r{false, n, m, m == 1 ? unused_ld(n, kind) : x.row, 0};
  if (r.ld < n)
    return unsupported(name + "'s row stride " + str(r.ld) + " is its leading dimension, below the " + str(n) +
                       " rows cuBLASLt needs");
  auto offset = batch_offset(name, x, batch, written);
  if (!offset) return offset.error();
  r.batch_stride = *offset;
  return r;
}

Status check_kinds(const GemmLaunch& l) {
  bool ok = false;
  switch (l.ab) {
    case ElementKind::F16:
    case ElementKind::Bf16:
      ok = l.cd == l.ab || l.cd == ElementKind::F32;
      break;
    case ElementKind::F32:
      ok = l.cd == ElementKind::F32;
      break;
    case ElementKind::F64:
      ok = l.cd == ElementKind::F64;
      break;
    case ElementKind::S8:
      ok = l.cd == ElementKind::S32;
      break;
    default:
      break;
  }
  if (ok) return {};
  return unsupported("A and B of kind " + std::string(to_string(l.ab)) + " with C and D of kind " +
                     std::string(to_string(l.cd)) +
                     " (cuBLASLt serves f16 and bf16 to themselves or f32, f32 to "
                     "f32, f64 to f64, s8 to s32)");
}

/// The integer GEMM (s8 × s8 → s32, IMMA) as cuBLASLt documents it for column-major layouts: the TN form only
/// (its A transposed, its B not: both operands K-contiguous, as IntGemmPlan's are), m' and k' and every leading
/// dimension multiples of 4, and no epilogue, C, or α other than 1 (IntGemmPlan's exact sum).
Status check_integer(const GemmLaunch& l, const CublasLtMapping& r) {
  if (!r.a.transpose || r.b.transpose)
    return unsupported("s8 x s8 -> s32 takes the TN form only (op(A) row-major, op(B) column-major: both "
                       "K-contiguous)");
  if (r.m % 4 != 0 || r.k % 4 != 0)
    return unsupported("s8 x s8 -> s32 needs N and K multiples of 4, got N = " + str(r.m) + ", K = " + str(r.k));
  if (r.a.ld % 4 != 0 || r.b.ld % 4 != 0 || r.d.ld % 4 != 0)
    return unsupported("s8 x s8 -> s32 needs leading dimensions that are multiples of 4, got (" + str(r.a.ld) +
                       ", " + str(r.b.ld) + ", " + str(r.d.ld) + ")");
  if (r.has_c || r.epilogue != CublasLtEpilogue::Default || l.alpha != 1.0)
    return unsupported("s8 x s8 -> s32 is the plain sum: no C, epilogue or alpha other than 1");
  return {};
}

/// Nothing to compute: no output element (a bias_grad of M elements is one even when N = 0: cuBLASLt cannot
/// compute it then, and the mapping is Unsupported).
bool empty_problem(const GemmLaunch& l) {
  return l.m == 0 || l.batch == 0 || (l.n == 0 && l.bias_grad.data == nullptr);
}

/// The epilogue, the bias length and the aux layout of `l` into `r`.
Status map_epilogue(const GemmLaunch& l, CublasLtMapping& r) {
  const bool bias = l.bias.data != nullptr, aux = l.aux.data != nullptr, bgrad = l.bias_grad.data != nullptr;
  if (bgrad) {
    if (l.batch > 1)
      return unsupported("bias_grad with " + str(l.batch) + " batches: cuBLASLt's BGRADB sums one batch only");
    if (bias || aux || l.activation != LinearActivation::None)
      return unsupported("bias_grad with a bias, aux or an activation: cuBLASLt's BGRADB epilogue has none of them");
    if (l.bias_grad.col != 1 && l.m > 1)
      return unsupported("bias_grad has stride " + str(l.bias_grad.col) + ": cuBLASLt writes a packed vector");
    r.epilogue = CublasLtEpilogue::BgradB;  // Σ_k of cuBLASLt's B = op(A)ᵀ: one value per column of D' = row of D
    r.bias_length = l.m;
    return {};
  }
  if (bias && l.bias.col != 1 && l.n > 1)
    return unsupported("bias has stride " + str(l.bias.col) + ": cuBLASLt reads a packed vector");
  r.bias_length = bias ? l.n : 0;  // one value per row of D' = column of D
  auto epilogue = cublaslt_epilogue(kWho, l.activation, bias, aux);
  if (!epilogue) return epilogue.error();
  r.epilogue = *epilogue;
  if (!aux) return {};
  if (l.activation != LinearActivation::GeluTanh)
    return unsupported("aux with the activation " + std::string(to_string(l.activation)) +
                       ": cuBLASLt writes the pre-activation only with gelu_tanh (its relu aux is a bit mask)");
  auto layout = output_layout("aux", l.aux, l.m, l.n, l.cd, l.batch, true);
  if (!layout) return layout.error();
  r.aux_ld = l.m == 1 ? round_up(l.n, 8) : layout->ld;
  if (r.aux_ld % 8 != 0)
    return unsupported("aux's row stride " + str(r.aux_ld) + " is not a multiple of 8 (cuBLASLt's EPILOGUE_AUX_LD)");
  r.aux_batch_stride = layout->batch_stride;
  if (r.aux_batch_stride % 8 != 0)
    return unsupported("aux's batch stride " + str(r.aux_batch_stride) +
                       " is not a multiple of 8 (cuBLASLt's EPILOGUE_AUX_BATCH_STRIDE)");
  return {};
}

}  // namespace

Result<CublasLtMapping> cublaslt_mapping(const GemmLaunch& l) {
  if (l.m < 0 || l.n < 0 || l.k < 0 || l.batch < 0)
    return invalid("negative extent (M, N, K, batch) = (" + str(l.m) + ", " + str(l.n) + ", " + str(l.k) + ", " +
                   str(l.batch) + ")");
  BARACUDA_TRY(check_kinds(l));
  if (l.m == 0 || l.n == 0 || l.batch == 0)
    return unsupported("an empty GEMM has no cuBLASLt call (with a bias_grad to write when N = 0)");
  if (l.k == 0) return unsupported("K = 0 (D = β·C + bias) is not asked of cuBLASLt");
  if (l.m > kMaxExtent || l.n > kMaxExtent || l.k > kMaxExtent || l.batch > kMaxExtent)
    return unsupported("(M, N, K, batch) = (" + str(l.m) + ", " + str(l.n) + ", " + str(l.k) + ", " + str(l.batch) +
                       "): cuBLASLt takes extents up to INT32_MAX");
  CublasLtMapping r;
  r.ab = l.ab;
  r.cd = l.cd;
  r.tf32 = l.ab == ElementKind::F32 && l.tf32;
  r.m = l.n;
  r.n = l.m;
  r.k = l.k;
  r.batch_count = static_cast<int32_t>(l.batch);
  auto a = input_layout("op(B)", l.b, l.k, l.n, l.ab, l.batch);  // cuBLASLt's A = op(B)ᵀ
  if (!a) return a.error();
  auto b = input_layout("op(A)", l.a, l.m, l.k, l.ab, l.batch);  // cuBLASLt's B = op(A)ᵀ
  if (!b) return b.error();
  auto d = output_layout("D", l.d, l.m, l.n, l.cd, l.batch, true);
  if (!d) return d.error();
  r.a = *a;
  r.b = *b;
  r.d = *d;
  r.has_c = l.c.data != nullptr;
  if (r.has_c) {
    auto c = output_layout("C", l.c, l.m, l.n, l.cd, l.batch, false);
    if (!c) return c.error();
    r.c = *c;
  } else {
    r.c = r.d;
  }
  BARACUDA_TRY(map_epilogue(l, r));
  if (l.ab == ElementKind::S8) BARACUDA_TRY(check_integer(l, r));
  return r;
}

CublasLtPointers cublaslt_pointers(const GemmLaunch& l, const CublasLtMapping& m) {
  CublasLtPointers p;
  p.a = l.b.data;  // cuBLASLt's A = op(B)ᵀ
  p.b = l.a.data;  // cuBLASLt's B = op(A)ᵀ
  p.c = m.has_c ? l.c.data : l.d.data;
  p.d = const_cast<void*>(l.d.data);
  if (m.bias_length > 0) p.bias = m.epilogue == CublasLtEpilogue::BgradB ? l.bias_grad.data : l.bias.data;
  if (m.aux_ld > 0) p.aux = const_cast<void*>(l.aux.data);
  return p;
}

Status CublasLtGemm::can_run(const GemmLaunch& l) const {
  if (!objects_) {
    if (empty_problem(l)) return {};
    return invalid("the backend was built for an empty problem, the launch is (M, N, K, batch) = (" + str(l.m) + ", " +
                   str(l.n) + ", " + str(l.k) + ", " + str(l.batch) + ")");
  }
  auto map = cublaslt_mapping(l);
  if (!map) return map.error();
  BARACUDA_TRY(check_same_mapping(kWho, *map, mapping_));
  if (l.c.data == nullptr && l.beta != 0.0) return invalid("β = " + std::to_string(l.beta) + " without C");
  if (l.a.data == nullptr || l.b.data == nullptr || l.d.data == nullptr) return invalid("A, B and D are required");
  return check_alignment(kWho,
                         {{"A", l.a.data},
                          {"B", l.b.data},
                          {"C", l.c.data},
                          {"D", l.d.data},
                          {"aux", l.aux.data},
                          {"bias", l.bias.data},
                          {"bias_grad", l.bias_grad.data}},
                         "the algorithm was chosen");
}

#if BARACUDA_HAVE_CUDA_KERNELS

namespace {

cudaDataType_t data_type(ElementKind k) {
  switch (k) {
    case ElementKind::F16:
      return CUDA_R_16F;
    case ElementKind::Bf16:
      return CUDA_R_16BF;
    case ElementKind::F64:
      return CUDA_R_64F;
    case ElementKind::S8:
      return CUDA_R_8I;
    case ElementKind::S32:
      return CUDA_R_32I;
    default:
      return CUDA_R_32F;
  }
}

/// The shared attribute setters (cublaslt_common.hpp) under a short name.
template <class Object, class Attribute, class T>
cublasStatus_t set(Object object, Attribute attr, const T& v) {
  return cublaslt_set(object, attr, v);
}

}  // namespace

Result<std::shared_ptr<const CublasLtGemm>> CublasLtGemm::create(int device, const GemmLaunch& problem,
                                                                 size_t max_workspace) {
  if (empty_problem(problem) && problem.m >= 0 && problem.n >= 0 && problem.k >= 0 && problem.batch >= 0) {
    BARACUDA_TRY(check_kinds(problem));
    return std::shared_ptr<const CublasLtGemm>(new CublasLtGemm());
  }
  auto mapped = cublaslt_mapping(problem);
  if (!mapped) return mapped.error();
  const CublasLtMapping& map = *mapped;
  auto dev = cublaslt_device(device, kWho);
  if (!dev) return dev.error();

  std::shared_ptr<CublasLtGemm> g(new CublasLtGemm());
  g->mapping_ = map;
  g->objects_ = std::make_unique<CublasLtMatmulObjects>();
  CublasLtMatmulObjects& lt = *g->objects_;
  lt.handle = dev->handle;
  const CublasLtSelecting sel{kWho, to_string(map)};

  const bool f64 = map.ab == ElementKind::F64, s8 = map.ab == ElementKind::S8;
  const cublasComputeType_t compute =
      f64 ? CUBLAS_COMPUTE_64F
          : (s8 ? CUBLAS_COMPUTE_32I : (map.tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F));
  const cudaDataType_t scale = f64 ? CUDA_R_64F : (s8 ? CUDA_R_32I : CUDA_R_32F);
  BARACUDA_TRY(sel.check(cublasLtMatmulDescCreate(&lt.desc, compute, scale), "cublasLtMatmulDescCreate"));
  const int32_t transa = map.a.transpose ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int32_t transb = map.b.transpose ? CUBLAS_OP_T : CUBLAS_OP_N;
  BARACUDA_TRY(sel.check(set(lt.desc, CUBLASLT_MATMUL_DESC_TRANSA, transa), "TRANSA"));
  BARACUDA_TRY(sel.check(set(lt.desc, CUBLASLT_MATMUL_DESC_TRANSB, transb), "TRANSB"));
  BARACUDA_TRY(sel.check(set(lt.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, static_cast<uint32_t>(map.epilogue)), "EPILOGUE"));
  // The bias and aux pointers the heuristic reads (for their presence and alignment); run sets the real ones.
  const void* const marker = present_marker();  // 16-byte aligned
  if (map.bias_length > 0) {  // the bias (or its gradient) has D's kind: cuBLASLt's default BIAS_DATA_TYPE
    BARACUDA_TRY(sel.check(set(lt.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, marker), "BIAS_POINTER"));
    if (map.batch_count > 1)  // one bias for every batch
      BARACUDA_TRY(sel.check(set(lt.desc, CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, int64_t{0}), "BIAS_BATCH_STRIDE"));
  }
  if (map.aux_ld > 0) {  // the GELU input has D's kind: cuBLASLt's default EPILOGUE_AUX_DATA_TYPE
    BARACUDA_TRY(sel.check(set(lt.desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, marker), "EPILOGUE_AUX_POINTER"));
    BARACUDA_TRY(sel.check(set(lt.desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, map.aux_ld), "EPILOGUE_AUX_LD"));
    if (map.batch_count > 1)
      BARACUDA_TRY(sel.check(set(lt.desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE, map.aux_batch_stride),
                             "EPILOGUE_AUX_BATCH_STRIDE"));
  }

  auto layout = [&](const CublasLtMatrix& x, ElementKind kind) {
    return CublasLtLayout{data_type(kind), x.rows, x.cols, x.ld, map.batch_count, x.batch_stride};
  };
  // Without C, or with C laid out as D (C may then be D itself: in place), D's layout serves as C's.
  const CublasLtLayout c = layout(map.c, map.cd);
  BARACUDA_TRY(lt.create_layouts(layout(map.a, map.ab), layout(map.b, map.ab),
                                 map.has_c && map.c != map.d ? &c : nullptr, layout(map.d, map.cd), sel));

  CublasLtAlgoRequest request;
  request.max_workspace = std::min<uint64_t>(max_workspace, cublaslt_workspace_cap(dev->sm));
  request.alignment = kRequiredAlignment;
  if (map.cd == ElementKind::F16 || map.cd == ElementKind::Bf16) {
    // Split-K parts are added in f32 (or not split): INPLACE and OUTPUT_TYPE add them in D's 16-bit kind.
    request.reduction_schemes = CUBLASLT_REDUCTION_SCHEME_NONE | CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
  }
  auto workspace = lt.choose_algorithm(request, sel);
  if (!workspace) return workspace.error();
  g->workspace_ = *workspace;
  return std::shared_ptr<const CublasLtGemm>(std::move(g));
}

Status CublasLtGemm::run(cudaStream_t stream, const GemmLaunch& l, void* workspace, size_t workspace_bytes) const {
  BARACUDA_TRY(can_run(l));
  if (!objects_) return {};
  BARACUDA_TRY(check_workspace(kWho, workspace, workspace_bytes));
  const bool f64 = mapping_.ab == ElementKind::F64, s8 = mapping_.ab == ElementKind::S8;
  const float alpha32 = static_cast<float>(l.alpha), beta32 = static_cast<float>(l.beta);
  const int32_t alpha_s32 = 1, beta_s32 = 0;  // the integer GEMM's (the mapping admits nothing else)
  const void* alpha = f64 ? static_cast<const void*>(&l.alpha) : s8 ? static_cast<const void*>(&alpha_s32) : &alpha32;
  const void* beta = f64 ? static_cast<const void*>(&l.beta) : s8 ? static_cast<const void*>(&beta_s32) : &beta32;
  const CublasLtPointers p = cublaslt_pointers(l, mapping_);
  CublasLtMatmulObjects& lt = *objects_;
  // Only a run with a bias or aux sets pointers on the shared descriptor: it alone takes the lock.
  std::unique_lock<std::mutex> lock(lt.pointers, std::defer_lock);
  if (mapping_.bias_length > 0 || mapping_.aux_ld > 0) {
    lock.lock();
    cublasStatus_t s = CUBLAS_STATUS_SUCCESS;
    if (mapping_.bias_length > 0) s = set(lt.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, p.bias);
    if (s == CUBLAS_STATUS_SUCCESS && mapping_.aux_ld > 0)
      s = set(lt.desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, p.aux);
    if (s != CUBLAS_STATUS_SUCCESS) return cublaslt_error(s, kWho, "cublasLtMatmulDescSetAttribute", false);
  }
  const cublasStatus_t s = lt.matmul(alpha, p.a, p.b, beta, p.c, p.d, workspace, workspace_bytes, stream);
  if (s != CUBLAS_STATUS_SUCCESS) return cublaslt_error(s, kWho, "cublasLtMatmul", false, to_string(mapping_));
  return {};
}

#else  // no cuda kernels: no cuBLASLt either

Result<std::shared_ptr<const CublasLtGemm>> CublasLtGemm::create(int, const GemmLaunch&, size_t) {
  return not_built(kWho);
}

Status CublasLtGemm::run(cudaStream_t, const GemmLaunch& l, void*, size_t) const {
  (void)l;  // create fails in this build, so no backend exists to run
  return not_built(kWho);
}

#endif

}  // namespace baracuda::detail
