// The fp8_gemm family's cuBLASLt backend: the mapping (pure, compiled in every build) and, with the cuda kernels, the
// cuBLASLt objects built at select and the one call of run. See cublaslt_fp8.hpp for the mapping.
#include "ops/fp8_gemm/cublaslt_fp8.hpp"

#include <cublasLt.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <mutex>
#include <string>
#include <utility>

#include "baracuda/core/stream.hpp"
#include "ops/gemm/cublaslt_common.hpp"

namespace baracuda::detail {

static_assert(static_cast<int32_t>(CublasLtScaleMode::Scalar32F) == CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F);
#if CUBLAS_VERSION >= 120900
static_assert(static_cast<int32_t>(CublasLtScaleMode::Vec128_32F) == CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F);
static_assert(static_cast<int32_t>(CublasLtScaleMode::Blk128x128_32F) == CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F);
/// Whether this toolkit's cuBLASLt has the 128-element scale modes (cuBLAS 12.9 on).
constexpr bool kToolkitHasBlock128 = true;
#else
constexpr bool kToolkitHasBlock128 = false;
#endif

std::string_view to_string(CublasLtScaleMode m) {
  switch (m) {
    case CublasLtScaleMode::Scalar32F:
      return "SCALAR_32F";
    case CublasLtScaleMode::Vec128_32F:
      return "VEC128_32F";
    case CublasLtScaleMode::Blk128x128_32F:
      return "BLK128x128_32F";
  }
  return "?";
}

std::string to_string(const CublasLtFp8Mapping& m) {
  auto kind = [](ElementKind k) { return std::string(to_string(k)); };
  std::string s = kind(m.a) + " x " + kind(m.b) + " -> " + kind(m.d) + " (C " + kind(m.c) +
                  ") transa=T transb=N m=" + std::to_string(m.m) + " n=" + std::to_string(m.n) +
                  " k=" + std::to_string(m.k) + " lda=" + std::to_string(m.lda) + " ldb=" + std::to_string(m.ldb) +
                  " ldd=" + std::to_string(m.ldd) + " epilogue=" + std::string(to_string(m.epilogue));
  if (m.has_bias) s += " bias=" + kind(m.bias);
  s += " scales=(" + std::string(to_string(m.a_scale_mode)) + ", " + std::string(to_string(m.b_scale_mode)) + ")";
  if (m.d_scale) s += " d_scale";
  if (m.amax) s += " amax";
  if (m.fast_accum) s += " fast_accum";
  return s;
}

namespace {

constexpr std::string_view kWho = "Fp8GemmPlan (cuBLASLt)";
constexpr int64_t kMaxExtent = std::numeric_limits<int32_t>::max();

Error unsupported(const std::string& why) { return Error::unsupported(std::string(kWho) + ": " + why); }
Error invalid(const std::string& why) { return Error::invalid(std::string(kWho) + ": " + why); }
std::string str(int64_t v) { return std::to_string(v); }
std::string kind(ElementKind k) { return std::string(to_string(k)); }
int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t round_up(int64_t v, int64_t to) { return ceil_div(v, to) * to; }

bool is_output_kind(ElementKind k) {
  return k == ElementKind::F16 || k == ElementKind::Bf16 || k == ElementKind::F32 || is_fp8(k);
}

/// The kinds, and the FP8 D's operands (d_scale exactly with an FP8 D, amax only there).
Status check_kinds(const Fp8GemmLaunch& l) {
  if (!is_fp8(l.a_kind) || !is_fp8(l.b_kind))
    return unsupported("A and B must be fp8e4m3 or fp8e5m2, got " + kind(l.a_kind) + " and " + kind(l.b_kind));
  if (l.a_kind == ElementKind::Fp8E5M2 && l.b_kind == ElementKind::Fp8E5M2)
    return unsupported("fp8e5m2 x fp8e5m2 has no cuBLASLt kernel (one operand must be fp8e4m3)");
  if (!is_output_kind(l.d_kind)) return unsupported("D of kind " + kind(l.d_kind) + " (f16, bf16, f32 or fp8 only)");
  const bool fp8_d = is_fp8(l.d_kind);
  if (fp8_d && l.d_scale == nullptr) return invalid("an FP8 D needs its d_scale");
  if (!fp8_d && l.d_scale != nullptr) return invalid("d_scale with D of kind " + kind(l.d_kind) + " (FP8 D only)");
  if (!fp8_d && l.amax != nullptr)
    return unsupported("amax with D of kind " + kind(l.d_kind) + ": cuBLASLt computes AMAX_D for FP8 outputs only");
  return {};
}

/// The epilogue and the bias kind of `l` into `r` (the bias kinds of cuBLASLt's FP8 table).
Status map_epilogue(const Fp8GemmLaunch& l, CublasLtFp8Mapping& r) {
  const bool bias = l.bias != nullptr;
  switch (l.activation) {
    case LinearActivation::None:
      r.epilogue = bias ? CublasLtEpilogue::Bias : CublasLtEpilogue::Default;
      break;
    case LinearActivation::Relu:
      r.epilogue = bias ? CublasLtEpilogue::ReluBias : CublasLtEpilogue::Relu;
      break;
    case LinearActivation::GeluTanh:
      r.epilogue = bias ? CublasLtEpilogue::GeluBias : CublasLtEpilogue::Gelu;
      break;
    case LinearActivation::Silu:
    case LinearActivation::GeluErf:
      return unsupported("the activation " + std::string(to_string(l.activation)) +
                         " has no cuBLASLt epilogue (it has relu and the tanh gelu)");
    default:
      return invalid("activation " + str(static_cast<int>(l.activation)) + " is not a LinearActivation");
  }
  r.has_bias = bias;
  // C is not read (β = 0), but its kind selects the FP8 kernel: D's, or for an FP8 D the bias's (f16 without one, as
  // PyTorch's _scaled_mm).
  r.c = is_fp8(l.d_kind) ? (bias ? l.bias_kind : ElementKind::F16) : l.d_kind;
  if (!bias) return {};
  r.bias = l.bias_kind;
  bool ok = false;
  std::string allowed;
  switch (l.d_kind) {
    case ElementKind::F16:
    case ElementKind::Bf16:
      ok = l.bias_kind == l.d_kind, allowed = kind(l.d_kind);
      break;
    case ElementKind::F32:
      ok = l.bias_kind == ElementKind::Bf16, allowed = "bf16";
      break;
    default:  // FP8 D
      ok = l.bias_kind == ElementKind::Bf16 || l.bias_kind == ElementKind::F16, allowed = "bf16 or f16";
      break;
  }
  if (ok) return {};
  return unsupported("a bias of kind " + kind(l.bias_kind) + " with D of kind " + kind(l.d_kind) +
                     ": cuBLASLt's FP8 matmul takes a " + allowed + " bias there");
}

/// Block128's scale modes and the scale layouts cuBLASLt reads (cublaslt_fp8.hpp lists them).
Status map_block128(const Fp8GemmLaunch& l, int sm, CublasLtFp8Mapping& r) {
  if (!kToolkitHasBlock128)
    return unsupported(
        "Block128 needs cuBLASLt's VEC128_32F and BLK128x128_32F scale modes (cuBLAS 12.9 on); this build's toolkit "
        "has cuBLAS " +
        str(CUBLAS_VERSION));
  if (sm < 90 || sm >= 100)
    return unsupported("Block128 on compute capability " + str(sm / 10) + "." + str(sm % 10) +
                       ": cuBLASLt's 128-element scale modes are implemented on sm_90 only");
  const int64_t kb = ceil_div(l.k, kFp8GemmBlock), nb = ceil_div(l.n, kFp8GemmBlock);
  if (l.m % 4 != 0)
    return unsupported("Block128 with M = " + str(l.m) +
                       ": cuBLASLt's 1x128 scales (VEC128_32F) need M a multiple of 4");
  if ((l.m > 1 && l.a_scale_row != 1) || (kb > 1 && l.a_scale_col != l.m))
    return unsupported("a_scale [" + str(l.m) + ", " + str(kb) + "] has strides (" + str(l.a_scale_row) + ", " +
                       str(l.a_scale_col) + "): cuBLASLt reads it M-major, strides (1, " + str(l.m) + ")");
  if (kb % 4 != 0)
    return unsupported("Block128 with ceil(K/128) = " + str(kb) +
                       ": cuBLASLt's 128x128 scales (BLK128x128_32F) are read in rows of ceil(K/128) rounded up to 4, "
                       "so it must be a multiple of 4");
  if ((kb > 1 && l.b_scale_col != 1) || (nb > 1 && l.b_scale_row != kb))
    return unsupported("b_scale [" + str(nb) + ", " + str(kb) + "] has strides (" + str(l.b_scale_row) + ", " +
                       str(l.b_scale_col) + "): cuBLASLt reads it K-major, strides (" + str(kb) + ", 1)");
  r.a_scale_mode = CublasLtScaleMode::Blk128x128_32F;  // cuBLASLt's A: the launch's B, the weights
  r.b_scale_mode = CublasLtScaleMode::Vec128_32F;      // cuBLASLt's B: the launch's A, the activations
  return {};
}

/// Nothing to compute: no output element (the amax, when present, is zeroed by run).
bool empty_problem(const Fp8GemmLaunch& l) { return l.m == 0 || l.n == 0; }

}  // namespace

Result<CublasLtFp8Mapping> cublaslt_fp8_mapping(const Fp8GemmLaunch& l, int sm) {
  if (l.m < 0 || l.n < 0 || l.k < 0)
    return invalid("negative extent (M, N, K) = (" + str(l.m) + ", " + str(l.n) + ", " + str(l.k) + ")");
  if (sm < 89)
    return unsupported("compute capability " + str(sm / 10) + "." + str(sm % 10) + " has no FP8 tensor cores (8.9 on)");
  BARACUDA_TRY(check_kinds(l));
  if (l.scaling != Fp8GemmScaling::Tensor && l.scaling != Fp8GemmScaling::Block128)
    return invalid("scaling " + str(static_cast<int>(l.scaling)) + " is not an Fp8GemmScaling");
  if (empty_problem(l)) return unsupported("an empty GEMM has no cuBLASLt call");
  if (l.k == 0) return unsupported("K = 0 (D = act(bias)) is not asked of cuBLASLt");
  if (l.m > kMaxExtent || l.n > kMaxExtent || l.k > kMaxExtent)
    return unsupported("(M, N, K) = (" + str(l.m) + ", " + str(l.n) + ", " + str(l.k) +
                       "): cuBLASLt takes extents up to INT32_MAX");
  if (l.n % 16 != 0 || l.k % 16 != 0)
    return unsupported("(N, K) = (" + str(l.n) + ", " + str(l.k) +
                       "): cuBLASLt's FP8 matmul needs both multiples of 16 (16-byte columns)");
  const int64_t lda = l.lda == 0 ? l.k : l.lda, ldb = l.ldb == 0 ? l.k : l.ldb, ldd = l.ldd == 0 ? l.n : l.ldd;
  if (lda < l.k || ldb < l.k || ldd < l.n)
    return invalid("leading dimensions (lda, ldb, ldd) = (" + str(lda) + ", " + str(ldb) + ", " + str(ldd) +
                   ") below (K, K, N) = (" + str(l.k) + ", " + str(l.k) + ", " + str(l.n) + ")");
  const int64_t d_bytes = element_bits(l.d_kind) / 8;
  CublasLtFp8Mapping r;
  r.a = l.b_kind;
  r.b = l.a_kind;
  r.d = l.d_kind;
  r.m = l.n;
  r.n = l.m;
  r.k = l.k;
  r.lda = ldb;  // cuBLASLt's A = the launch's B
  // With one row, A's and D's row strides address nothing: normalised (K; N rounded up to 16 bytes).
  r.ldb = l.m == 1 ? l.k : lda;
  r.ldd = l.m == 1 ? round_up(l.n, 16 / d_bytes) : ldd;
  if (r.lda % 16 != 0 || r.ldb % 16 != 0 || (r.ldd * d_bytes) % 16 != 0)
    return unsupported("leading dimensions (lda, ldb, ldd) = (" + str(lda) + ", " + str(ldb) + ", " + str(ldd) +
                       "): cuBLASLt's FP8 matmul needs 16-byte multiples");
  BARACUDA_TRY(map_epilogue(l, r));
  if (l.scaling == Fp8GemmScaling::Block128) BARACUDA_TRY(map_block128(l, sm, r));
  r.d_scale = is_fp8(l.d_kind);
  r.amax = l.amax != nullptr;
  r.fast_accum = l.fast_accum;
  return r;
}

CublasLtFp8Pointers cublaslt_fp8_pointers(const Fp8GemmLaunch& l, const CublasLtFp8Mapping& m) {
  CublasLtFp8Pointers p;
  p.a = l.b;  // cuBLASLt's A = the launch's B, with its scale
  p.b = l.a;
  p.a_scale = l.b_scale;
  p.b_scale = l.a_scale;
  p.d = l.d;
  p.c = l.d;  // β = 0: not read
  if (m.d_scale) p.d_scale = l.d_scale;
  if (m.amax) p.amax = l.amax;
  if (m.has_bias) p.bias = l.bias;
  return p;
}

CublasLtFp8Gemm::CublasLtFp8Gemm() = default;

bool CublasLtFp8Gemm::compiled_in() { return BARACUDA_HAVE_CUDA_KERNELS != 0; }

size_t CublasLtFp8Gemm::workspace_size() const { return workspace_; }

const CublasLtFp8Mapping& CublasLtFp8Gemm::mapping() const { return mapping_; }

Status CublasLtFp8Gemm::can_run(const Fp8GemmLaunch& l) const {
  if (!impl_) {
    if (empty_problem(l)) return {};
    return invalid("the backend was built for an empty problem, the launch is (M, N, K) = (" + str(l.m) + ", " +
                   str(l.n) + ", " + str(l.k) + ")");
  }
  auto map = cublaslt_fp8_mapping(l, 90);  // the arch was checked at create; 90 admits every mapping
  if (!map) return map.error();
  if (*map != mapping_)
    return invalid("the launch maps to [" + to_string(*map) + "], the backend was built for [" + to_string(mapping_) +
                   "]");
  if (l.a == nullptr || l.b == nullptr || l.d == nullptr || l.a_scale == nullptr || l.b_scale == nullptr)
    return invalid("A, B, D, a_scale and b_scale are required");
  const bool block = mapping_.a_scale_mode != CublasLtScaleMode::Scalar32F;
  const std::pair<const char*, const void*> operands[] = {{"A", l.a},
                                                          {"B", l.b},
                                                          {"D", l.d},
                                                          {"bias", l.bias},
                                                          {"a_scale", block ? l.a_scale : nullptr},
                                                          {"b_scale", block ? l.b_scale : nullptr}};
  for (const auto& [name, ptr] : operands)
    if (reinterpret_cast<uintptr_t>(ptr) % kRequiredAlignment != 0)
      return Error::misaligned(std::string(kWho) + ": " + name + " is not " + str(kRequiredAlignment) +
                               "-byte aligned (cuBLASLt's FP8 matmul was planned for " + str(kRequiredAlignment) +
                               "-byte aligned operands)");
  return {};
}

#if BARACUDA_HAVE_CUDA_KERNELS

namespace {

#define BARACUDA_LT_FP8_TRY(call, what)                                                          \
  do {                                                                                           \
    const cublasStatus_t lt_status_ = (call);                                                    \
    if (lt_status_ != CUBLAS_STATUS_SUCCESS)                                                     \
      return cublaslt_error(lt_status_, kWho, what, /*selecting=*/true, to_string(g->mapping_)); \
  } while (0)

cudaDataType_t data_type(ElementKind k) {
  switch (k) {
    case ElementKind::Fp8E4M3:
      return CUDA_R_8F_E4M3;
    case ElementKind::Fp8E5M2:
      return CUDA_R_8F_E5M2;
    case ElementKind::F16:
      return CUDA_R_16F;
    case ElementKind::Bf16:
      return CUDA_R_16BF;
    default:
      return CUDA_R_32F;
  }
}

/// A pointer of exactly kRequiredAlignment bytes' alignment: what the heuristic reads from the operand pointers of the
/// descriptor before run sets the real ones (it never dereferences them).
const void* placeholder() { return CublasLtFp8Gemm::present_marker(); }

}  // namespace

struct CublasLtFp8Gemm::Impl {
  cublasLtHandle_t handle = nullptr;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr, d = nullptr;
  cublasLtMatmulAlgo_t algo{};
  /// Serializes runs: each sets the scale, bias and amax pointers of the shared descriptor before its cublasLtMatmul
  /// (the call reads them when it enqueues its kernels).
  std::mutex pointers;

  ~Impl() {
    for (cublasLtMatrixLayout_t l : {d, c, b, a})
      if (l != nullptr) cublasLtMatrixLayoutDestroy(l);
    if (desc != nullptr) cublasLtMatmulDescDestroy(desc);
  }
};

CublasLtFp8Gemm::~CublasLtFp8Gemm() = default;

Result<std::shared_ptr<const CublasLtFp8Gemm>> CublasLtFp8Gemm::create(int device, int sm, const Fp8GemmLaunch& problem,
                                                                       size_t max_workspace) {
  if (empty_problem(problem) && problem.m >= 0 && problem.n >= 0 && problem.k >= 0) {
    BARACUDA_TRY(check_kinds(problem));
    return std::shared_ptr<const CublasLtFp8Gemm>(new CublasLtFp8Gemm());
  }
  auto mapped = cublaslt_fp8_mapping(problem, sm);
  if (!mapped) return mapped.error();
  if (mapped->a_scale_mode != CublasLtScaleMode::Scalar32F && cublasLtGetVersion() < 120900)
    return unsupported("Block128 needs cuBLASLt 12.9 or later, this process has " + str(cublasLtGetVersion()));
  auto info = cuda_device_info(device);
  if (!info) return info.error();
  if (const cudaError_t e = cudaSetDevice(device); e != cudaSuccess)
    return Error::device(std::string(kWho) + ": cudaSetDevice: " + cudaGetErrorString(e), e);
  auto handle = cublaslt_handle(device, kWho);
  if (!handle) return handle.error();

  std::shared_ptr<CublasLtFp8Gemm> g(new CublasLtFp8Gemm());
  g->mapping_ = *mapped;
  g->impl_ = std::make_unique<Impl>();
  const CublasLtFp8Mapping& map = g->mapping_;
  Impl& im = *g->impl_;
  im.handle = *handle;

  BARACUDA_LT_FP8_TRY(cublasLtMatmulDescCreate(&im.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
  const int32_t transa = CUBLAS_OP_T, transb = CUBLAS_OP_N;
  BARACUDA_LT_FP8_TRY(cublaslt_set(im.desc, CUBLASLT_MATMUL_DESC_TRANSA, transa), "TRANSA");
  BARACUDA_LT_FP8_TRY(cublaslt_set(im.desc, CUBLASLT_MATMUL_DESC_TRANSB, transb), "TRANSB");
  BARACUDA_LT_FP8_TRY(cublaslt_set(im.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, static_cast<uint32_t>(map.epilogue)),
                      "EPILOGUE");
  const int8_t fast_accum = map.fast_accum ? 1 : 0;
  BARACUDA_LT_FP8_TRY(cublaslt_set(im.desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, fast_accum), "FAST_ACCUM");
#if CUBLAS_VERSION >= 120900
  if (map.a_scale_mode != CublasLtScaleMode::Scalar32F) {
    const int32_t a_mode = static_cast<int32_t>(map.a_scale_mode), b_mode = static_cast<int32_t>(map.b_scale_mode);
    BARACUDA_LT_FP8_TRY(cublaslt_set(im.desc, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, a_mode), "A_SCALE_MODE");
    BARACUDA_LT_FP8_TRY(cublaslt_set(im.desc, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, b_mode), "B_SCALE_MODE");
  }
#endif
  // The pointers the heuristic reads (for their presence and alignment); run sets the real ones.
  BARACUDA_LT_FP8_TRY(cublaslt_set(im.desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, placeholder()), "A_SCALE_POINTER");
  BARACUDA_LT_FP8_TRY(cublaslt_set(im.desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, placeholder()), "B_SCALE_POINTER");
  if (map.d_scale)
    BARACUDA_LT_FP8_TRY(cublaslt_set(im.desc, CUBLASLT_MATMUL_DESC_D_SCALE_POINTER, placeholder()), "D_SCALE_POINTER");
  if (map.amax)
    BARACUDA_LT_FP8_TRY(cublaslt_set(im.desc, CUBLASLT_MATMUL_DESC_AMAX_D_POINTER, placeholder()), "AMAX_D_POINTER");
  if (map.has_bias) {
    BARACUDA_LT_FP8_TRY(cublaslt_set(im.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, placeholder()), "BIAS_POINTER");
    const int32_t bias_type = data_type(map.bias);
    BARACUDA_LT_FP8_TRY(cublaslt_set(im.desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, bias_type), "BIAS_DATA_TYPE");
  }

  struct Layout {
    cublasLtMatrixLayout_t* out;
    ElementKind kind;
    int64_t rows, cols, ld;
  };
  const Layout layouts[] = {{&im.a, map.a, map.k, map.m, map.lda},  // transa = T: stored k×m
                            {&im.b, map.b, map.k, map.n, map.ldb},  // transb = N: stored k×n
                            {&im.c, map.c, map.m, map.n, map.ldd},
                            {&im.d, map.d, map.m, map.n, map.ldd}};
  for (const Layout& x : layouts)
    BARACUDA_LT_FP8_TRY(cublasLtMatrixLayoutCreate(x.out, data_type(x.kind), static_cast<uint64_t>(x.rows),
                                                   static_cast<uint64_t>(x.cols), x.ld),
                        "cublasLtMatrixLayoutCreate");

  CublasLtAlgoRequest request;
  request.max_workspace = std::min<uint64_t>(max_workspace, cublaslt_workspace_cap(info->sm));
  request.alignment = kRequiredAlignment;
  auto choice = cublaslt_heuristic(im.handle, im.desc, im.a, im.b, im.c, im.d, request, kWho, to_string(map));
  if (!choice) return choice.error();
  im.algo = choice->algo;
  g->workspace_ = choice->workspace;
  return std::shared_ptr<const CublasLtFp8Gemm>(std::move(g));
}

Status CublasLtFp8Gemm::run(cudaStream_t stream, const Fp8GemmLaunch& l, void* workspace,
                            size_t workspace_bytes) const {
  BARACUDA_TRY(can_run(l));
  if (!impl_) {  // an empty D: only its amax (0)
    if (l.amax == nullptr) return {};
    if (const cudaError_t e = cudaMemsetAsync(l.amax, 0, sizeof(float), stream); e != cudaSuccess)
      return Error::device(std::string(kWho) + ": cudaMemsetAsync of the amax: " + cudaGetErrorString(e), e);
    return {};
  }
  if (workspace_bytes < workspace_)
    return Error::workspace_too_small(std::string(kWho) + ": the algorithm needs " + str(workspace_) +
                                          " bytes of workspace, got " + str(workspace_bytes),
                                      workspace_, workspace_bytes);
  if (workspace_ > 0 && (workspace == nullptr || reinterpret_cast<uintptr_t>(workspace) % kWorkspaceAlignment != 0))
    return Error::misaligned(std::string(kWho) + ": the workspace is not " + str(kWorkspaceAlignment) +
                             "-byte aligned");
  const float alpha = static_cast<float>(l.alpha), beta = 0.0f;
  const CublasLtFp8Pointers p = cublaslt_fp8_pointers(l, mapping_);
  Impl& im = *impl_;
  std::lock_guard<std::mutex> lock(im.pointers);
  const std::pair<cublasLtMatmulDescAttributes_t, const void*> pointers[] = {
      {CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, p.a_scale},
      {CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, p.b_scale},
      {CUBLASLT_MATMUL_DESC_D_SCALE_POINTER, p.d_scale},
      {CUBLASLT_MATMUL_DESC_AMAX_D_POINTER, p.amax},
      {CUBLASLT_MATMUL_DESC_BIAS_POINTER, p.bias}};
  for (const auto& [attr, ptr] : pointers) {
    if (ptr == nullptr) continue;  // absent in this mapping: never set on the descriptor
    if (const cublasStatus_t s = cublaslt_set(im.desc, attr, ptr); s != CUBLAS_STATUS_SUCCESS)
      return cublaslt_error(s, kWho, "cublasLtMatmulDescSetAttribute", false);
  }
  void* ws = workspace_ > 0 ? workspace : nullptr;
  const cublasStatus_t s = cublasLtMatmul(im.handle, im.desc, &alpha, p.a, im.a, p.b, im.b, &beta, p.c, im.c, p.d, im.d,
                                          &im.algo, ws, ws != nullptr ? workspace_bytes : 0, stream);
  if (s != CUBLAS_STATUS_SUCCESS) return cublaslt_error(s, kWho, "cublasLtMatmul", false, to_string(mapping_));
  return {};
}

#else  // no cuda kernels: no cuBLASLt either

struct CublasLtFp8Gemm::Impl {};

CublasLtFp8Gemm::~CublasLtFp8Gemm() = default;

Result<std::shared_ptr<const CublasLtFp8Gemm>> CublasLtFp8Gemm::create(int, int, const Fp8GemmLaunch&, size_t) {
  return unsupported("this library was built without CUDA kernels (BARACUDA_CUDA_KERNELS=OFF), so without cuBLASLt");
}

Status CublasLtFp8Gemm::run(cudaStream_t, const Fp8GemmLaunch& l, void*, size_t) const {
  (void)l;  // create fails in this build, so no backend exists to run
  return unsupported("this library was built without CUDA kernels (BARACUDA_CUDA_KERNELS=OFF), so without cuBLASLt");
}

#endif

}  // namespace baracuda::detail
