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
  auto epilogue = cublaslt_epilogue(kWho, l.activation, bias, /*aux=*/false);
  if (!epilogue) return epilogue.error();
  r.epilogue = *epilogue;
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
  // β = 0: C is never read. cuBLASLt takes C == D for an in-place product, which needs C's layout to be D's; with an
  // FP8 D, C's kind is another (the bias's), and C = D fails in cublasLtMatmul (INVALID_VALUE, seen on an H100 at
  // every shape from 1x4096x4096 up). There C is given the weights' pointer, as PyTorch's _scaled_mm gives its A.
  p.c = m.c == m.d ? static_cast<const void*>(l.d) : l.b;
  if (m.d_scale) p.d_scale = l.d_scale;
  if (m.amax) p.amax = l.amax;
  if (m.has_bias) p.bias = l.bias;
  return p;
}

Status CublasLtFp8Gemm::can_run(const Fp8GemmLaunch& l) const {
  if (!objects_) {
    if (empty_problem(l)) return {};
    return invalid("the backend was built for an empty problem, the launch is (M, N, K) = (" + str(l.m) + ", " +
                   str(l.n) + ", " + str(l.k) + ")");
  }
  auto map = cublaslt_fp8_mapping(l, 90);  // the arch was checked at create; 90 admits every mapping
  if (!map) return map.error();
  BARACUDA_TRY(check_same_mapping(kWho, *map, mapping_));
  if (l.a == nullptr || l.b == nullptr || l.d == nullptr || l.a_scale == nullptr || l.b_scale == nullptr)
    return invalid("A, B, D, a_scale and b_scale are required");
  const bool block = mapping_.a_scale_mode != CublasLtScaleMode::Scalar32F;
  return check_alignment(kWho,
                         {{"A", l.a},
                          {"B", l.b},
                          {"D", l.d},
                          {"bias", l.bias},
                          {"a_scale", block ? l.a_scale : nullptr},
                          {"b_scale", block ? l.b_scale : nullptr}},
                         "cuBLASLt's FP8 matmul was planned");
}

#if BARACUDA_HAVE_CUDA_KERNELS

namespace {

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

}  // namespace

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
  auto dev = cublaslt_device(device, kWho);
  if (!dev) return dev.error();

  std::shared_ptr<CublasLtFp8Gemm> g(new CublasLtFp8Gemm());
  g->mapping_ = *mapped;
  g->objects_ = std::make_unique<CublasLtMatmulObjects>();
  const CublasLtFp8Mapping& map = g->mapping_;
  CublasLtMatmulObjects& lt = *g->objects_;
  lt.handle = dev->handle;
  const CublasLtSelecting sel{kWho, to_string(map)};

  BARACUDA_TRY(
      sel.check(cublasLtMatmulDescCreate(&lt.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate"));
  const int32_t transa = CUBLAS_OP_T, transb = CUBLAS_OP_N;
  BARACUDA_TRY(sel.check(cublaslt_set(lt.desc, CUBLASLT_MATMUL_DESC_TRANSA, transa), "TRANSA"));
  BARACUDA_TRY(sel.check(cublaslt_set(lt.desc, CUBLASLT_MATMUL_DESC_TRANSB, transb), "TRANSB"));
  BARACUDA_TRY(
      sel.check(cublaslt_set(lt.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, static_cast<uint32_t>(map.epilogue)), "EPILOGUE"));
  const int8_t fast_accum = map.fast_accum ? 1 : 0;
  BARACUDA_TRY(sel.check(cublaslt_set(lt.desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, fast_accum), "FAST_ACCUM"));
#if CUBLAS_VERSION >= 120900
  if (map.a_scale_mode != CublasLtScaleMode::Scalar32F) {
    const int32_t a_mode = static_cast<int32_t>(map.a_scale_mode), b_mode = static_cast<int32_t>(map.b_scale_mode);
    BARACUDA_TRY(sel.check(cublaslt_set(lt.desc, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, a_mode), "A_SCALE_MODE"));
    BARACUDA_TRY(sel.check(cublaslt_set(lt.desc, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, b_mode), "B_SCALE_MODE"));
  }
#endif
  // The pointers the heuristic reads (for their presence and alignment); run sets the real ones.
  const void* const marker = present_marker();  // 16-byte aligned
  BARACUDA_TRY(sel.check(cublaslt_set(lt.desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, marker), "A_SCALE_POINTER"));
  BARACUDA_TRY(sel.check(cublaslt_set(lt.desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, marker), "B_SCALE_POINTER"));
  if (map.d_scale)
    BARACUDA_TRY(sel.check(cublaslt_set(lt.desc, CUBLASLT_MATMUL_DESC_D_SCALE_POINTER, marker), "D_SCALE_POINTER"));
  if (map.amax)
    BARACUDA_TRY(sel.check(cublaslt_set(lt.desc, CUBLASLT_MATMUL_DESC_AMAX_D_POINTER, marker), "AMAX_D_POINTER"));
  if (map.has_bias) {
    BARACUDA_TRY(sel.check(cublaslt_set(lt.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, marker), "BIAS_POINTER"));
    const int32_t bias_type = data_type(map.bias);
    BARACUDA_TRY(sel.check(cublaslt_set(lt.desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, bias_type), "BIAS_DATA_TYPE"));
  }

  const CublasLtLayout c{data_type(map.c), map.m, map.n, map.ldd};
  BARACUDA_TRY(lt.create_layouts({data_type(map.a), map.k, map.m, map.lda},  // transa = T: stored k×m
                                 {data_type(map.b), map.k, map.n, map.ldb},  // transb = N: stored k×n
                                 &c, {data_type(map.d), map.m, map.n, map.ldd}, sel));

  CublasLtAlgoRequest request;
  request.max_workspace = std::min<uint64_t>(max_workspace, cublaslt_workspace_cap(dev->sm));
  request.alignment = kRequiredAlignment;
  auto workspace = lt.choose_algorithm(request, sel);
  if (!workspace) return workspace.error();
  g->workspace_ = *workspace;
  return std::shared_ptr<const CublasLtFp8Gemm>(std::move(g));
}

Status CublasLtFp8Gemm::run(cudaStream_t stream, const Fp8GemmLaunch& l, void* workspace,
                            size_t workspace_bytes) const {
  BARACUDA_TRY(can_run(l));
  if (!objects_) {  // an empty D: only its amax (0)
    if (l.amax == nullptr) return {};
    if (const cudaError_t e = cudaMemsetAsync(l.amax, 0, sizeof(float), stream); e != cudaSuccess)
      return Error::device(std::string(kWho) + ": cudaMemsetAsync of the amax: " + cudaGetErrorString(e), e);
    return {};
  }
  BARACUDA_TRY(check_workspace(kWho, workspace, workspace_bytes));
  const float alpha = static_cast<float>(l.alpha), beta = 0.0f;
  const CublasLtFp8Pointers p = cublaslt_fp8_pointers(l, mapping_);
  CublasLtMatmulObjects& lt = *objects_;
  // Every run sets the scale, bias and amax pointers on the shared descriptor: under the lock.
  std::lock_guard<std::mutex> lock(lt.pointers);
  const std::pair<cublasLtMatmulDescAttributes_t, const void*> pointers[] = {
      {CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, p.a_scale},
      {CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, p.b_scale},
      {CUBLASLT_MATMUL_DESC_D_SCALE_POINTER, p.d_scale},
      {CUBLASLT_MATMUL_DESC_AMAX_D_POINTER, p.amax},
      {CUBLASLT_MATMUL_DESC_BIAS_POINTER, p.bias}};
  for (const auto& [attr, ptr] : pointers) {
    if (ptr == nullptr) continue;  // absent in this mapping: never set on the descriptor
    if (const cublasStatus_t s = cublaslt_set(lt.desc, attr, ptr); s != CUBLAS_STATUS_SUCCESS)
      return cublaslt_error(s, kWho, "cublasLtMatmulDescSetAttribute", false);
  }
  const cublasStatus_t s = lt.matmul(&alpha, p.a, p.b, &beta, p.c, p.d, workspace, workspace_bytes, stream);
  if (s != CUBLAS_STATUS_SUCCESS) return cublaslt_error(s, kWho, "cublasLtMatmul", false, to_string(mapping_));
  return {};
}

#else  // no cuda kernels: no cuBLASLt either

Result<std::shared_ptr<const CublasLtFp8Gemm>> CublasLtFp8Gemm::create(int, int, const Fp8GemmLaunch&, size_t) {
  return not_built(kWho);
}

Status CublasLtFp8Gemm::run(cudaStream_t, const Fp8GemmLaunch& l, void*, size_t) const {
  (void)l;  // create fails in this build, so no backend exists to run
  return not_built(kWho);
}

#endif

}  // namespace baracuda::detail
