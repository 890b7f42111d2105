// PagedDecodePlan: every rejection of select (kinds, cache kind, head dim, page size, heads and GQA divisibility,
// batch, q_len, the grid, pages, block table width, window, scale, splits, scale layout, backend preference),
// can_implement and run (missing and superfluous operands, kinds, shapes, strides, alignment, null data,
// overlapping outputs, the workspace: too small, misaligned, overlapping; a stream of another device). Each
// rejected run writes nothing.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "baracuda/baracuda.hpp"
#include "baracuda/ops/paged_attention.hpp"
#include "support/expect_error.hpp"

namespace baracuda::test {
namespace {

constexpr ElementKind F16 = ElementKind::F16, Bf16 = ElementKind::Bf16, F32 = ElementKind::F32, S32 = ElementKind::S32,
                      Fp8 = ElementKind::Fp8E4M3, S8 = ElementKind::S8;
constexpr std::string_view P = "PagedDecodePlan";

void expect_code(const Status& s, ErrorCode code, const std::string& needle) {
  expect_error_naming(s, code, P, needle);
}
void expect_select(const PagedDecodeDescriptor& d, ErrorCode code, const std::string& needle) {
  expect_code(dynamic::PagedDecodePlan::select(Stream::host(), d).status(), code, needle);
}

// B = 2, q_len = 3, H = 4, H_kv = 2, d = 64, 6 pages of 16, 3 per sequence, f16, with lse.
PagedDecodeDescriptor base() {
  return PagedDecodeDescriptor{}.with_kinds(F16, F16).with_shape(2, 3, 4, 2, 64).with_pages(6, 16, 3).with_lse();
}

TEST(PagedDecodeReject, SelectKinds) {
  for (ElementKind k : {F32, ElementKind::F64, S8, Fp8})
    expect_select(base().with_kinds(k, k), ErrorCode::Unsupported, "q and o must be f16 or bf16");
  for (ElementKind c : {F32, Bf16, ElementKind::Fp8E5M2, ElementKind::U8})
    expect_select(base().with_kinds(F16, c), ErrorCode::Unsupported, "the caches must hold");
  PagedDecodeDescriptor bad = base();
  bad.cache_kind = static_cast<ElementKind>(200);
  expect_select(bad, ErrorCode::InvalidProblem, "");
  bad = base();
  bad.scale_layout = static_cast<KvScaleLayout>(7);
  expect_select(bad, ErrorCode::InvalidProblem, "KvScaleLayout");
  for (ElementKind e : {F16, Bf16})
    for (ElementKind c : {e, Fp8, S8})
      for (int64_t dim : {64, 96, 128, 256})
        for (const Stream& st : {Stream::host(), Stream::sim()})
          EXPECT_TRUE(dynamic::PagedDecodePlan::select(st, base().with_kinds(e, c).with_shape(2, 3, 4, 2, dim)));
}

TEST(PagedDecodeReject, SelectKernel) {
  PagedDecodeDescriptor bad = base();
  bad.kernel = static_cast<PagedDecodeKernel>(3);
  expect_select(bad, ErrorCode::InvalidProblem, "kernel must be Auto, CudaCores or TensorCores; got 3");
  // No tensor-core kernel at d = 256 (sim; cuda alike); the host device runs its reference whatever the kernel.
  const PagedDecodeDescriptor d256 = base().with_shape(2, 3, 4, 2, 256).with_kernel(PagedDecodeKernel::TensorCores);
  expect_code(dynamic::PagedDecodePlan::select(Stream::sim(), d256).status(), ErrorCode::Unsupported,
              "has no tensor-core kernel on the sim device");
  EXPECT_TRUE(dynamic::PagedDecodePlan::select(Stream::host(), d256));
  for (PagedDecodeKernel k : {PagedDecodeKernel::Auto, PagedDecodeKernel::CudaCores, PagedDecodeKernel::TensorCores}) {
    auto plan = dynamic::PagedDecodePlan::select(Stream::sim(), base().with_kernel(k));
    ASSERT_TRUE(plan) << plan.status().to_string();
    EXPECT_EQ(plan->sku().variant, k == PagedDecodeKernel::TensorCores ? "split_kv_tc" : "split_kv_simt");
  }
}

// Auto's kernel (paged_attention.hpp's **Kernels**): the tensor cores over an f16/bf16 cache at d = 128 from 16
// sequences on, else the CUDA cores; an explicit kernel is kept.
TEST(PagedDecodeReject, AutoKernel) {
  const auto variant = [](const PagedDecodeDescriptor& d) {
    return selected_variant<dynamic::PagedDecodePlan>(Stream::sim(), d);
  };
  const std::string simt = "split_kv_simt", tc = "split_kv_tc";
  const PagedDecodeDescriptor b16 = base().with_shape(16, 1, 32, 8, 128).with_pages(64, 16, 4);
  EXPECT_EQ(variant(b16), tc);
  EXPECT_EQ(variant(PagedDecodeDescriptor(b16).with_kinds(Bf16, Bf16)), tc);
  EXPECT_EQ(variant(PagedDecodeDescriptor(b16).with_shape(256, 4, 32, 8, 128)), tc);
  EXPECT_EQ(variant(PagedDecodeDescriptor(b16).with_shape(15, 1, 32, 8, 128)), simt);
  for (ElementKind cache : {Fp8, S8}) EXPECT_EQ(variant(PagedDecodeDescriptor(b16).with_kinds(F16, cache)), simt);
  for (int64_t dim : {64, 96, 256}) EXPECT_EQ(variant(PagedDecodeDescriptor(b16).with_shape(16, 1, 32, 8, dim)), simt);
  EXPECT_EQ(variant(PagedDecodeDescriptor(b16).with_kernel(PagedDecodeKernel::CudaCores)), simt);
  EXPECT_EQ(variant(base().with_kernel(PagedDecodeKernel::TensorCores)), tc);
}

TEST(PagedDecodeReject, SelectShapes) {
  for (int64_t dim : {32, 80, 112, 512, 65})
    expect_select(base().with_shape(2, 3, 4, 2, dim), ErrorCode::Unsupported, "has no kernel");
  expect_select(base().with_shape(2, 3, 4, 2, 0), ErrorCode::InvalidProblem, "head dimension must be >= 1");
  expect_select(base().with_shape(2, 3, 4, 3, 64), ErrorCode::InvalidProblem, "must divide the query heads");
  expect_select(base().with_shape(2, 3, 0, 1, 64), ErrorCode::InvalidProblem, "heads and kv_heads must be >= 1");
  expect_select(base().with_shape(2, 3, 4, 0, 64), ErrorCode::InvalidProblem, "heads and kv_heads must be >= 1");
  expect_select(base().with_shape(2, 3, 70000, 1, 64), ErrorCode::Unsupported, "at most 65535 heads");
  expect_select(base().with_shape(-1, 3, 4, 2, 64), ErrorCode::InvalidProblem, "batch must be >= 0");
  expect_select(base().with_shape(70000, 1, 4, 2, 64), ErrorCode::Unsupported, "at most 65535 sequences");
  expect_select(base().with_shape(2, 0, 4, 2, 64), ErrorCode::InvalidProblem, "q_len must be >= 1");
  expect_select(base().with_shape(2, 17, 4, 2, 64), ErrorCode::Unsupported, "at most 16 query tokens");
  expect_select(base().with_shape(1, 16, 65535, 65535, 64), ErrorCode::Unsupported, "q_len / 8) must be at most");
  // The tensor-core kernel's row groups are 16 rows: the same problem fits its grid.
  EXPECT_TRUE(dynamic::PagedDecodePlan::select(
      Stream::host(), base().with_shape(1, 16, 65535, 65535, 64).with_kernel(PagedDecodeKernel::TensorCores)));
  for (int64_t bs : {1, 12, 64})
    expect_select(base().with_pages(6, bs, 3), ErrorCode::Unsupported, "has no kernel (8, 16 and 32 do)");
  expect_select(base().with_pages(6, 0, 3), ErrorCode::InvalidProblem, "block_size must be >= 1");
  expect_select(base().with_pages(0, 16, 3), ErrorCode::InvalidProblem, "num_blocks");
  expect_select(base().with_pages(int64_t{1} << 31, 16, 3), ErrorCode::InvalidProblem, "num_blocks");
  expect_select(base().with_pages(6, 16, 0), ErrorCode::InvalidProblem, "max_blocks_per_seq");
  expect_select(base().with_pages(6, 16, (int64_t{1} << 26) + 1), ErrorCode::InvalidProblem, "max_blocks_per_seq");
  EXPECT_TRUE(dynamic::PagedDecodePlan::select(Stream::host(), base().with_pages(6, 16, int64_t{1} << 26)));
  EXPECT_TRUE(dynamic::PagedDecodePlan::select(Stream::host(), base().with_shape(0, 3, 4, 2, 64)));
  // A cache of more than 2^56 elements (each field within its own limit).
  expect_select(base().with_shape(1, 1, 65535, 65535, 256).with_pages(INT32_MAX, 32, 1), ErrorCode::InvalidProblem,
                "the caches' shape");
}

TEST(PagedDecodeReject, SelectWindowScaleSplitsBackend) {
  expect_select(base().with_window(-2), ErrorCode::InvalidProblem, "window_left must be >= -1");
  for (double s : {-1.0, std::nan(""), std::numeric_limits<double>::infinity(), 1e300, 1e-50})
    expect_select(base().with_scale(s), ErrorCode::InvalidProblem, "softmax scale");
  for (int64_t n : {-1, 257}) expect_select(base().with_splits(n), ErrorCode::InvalidProblem, "num_splits");
  EXPECT_TRUE(dynamic::PagedDecodePlan::select(Stream::sim(), base().with_splits(256)));
  expect_other_backend_unsupported<dynamic::PagedDecodePlan>(Stream::sim(), base(), BackendKind::Host, P);
  expect_other_backend_unsupported<dynamic::PagedDecodePlan>(Stream::host(), base(), BackendKind::Sim, P);
}

/// Host-memory operands of base() (optionally quantized), dense.
struct Operands {
  PagedDecodeDescriptor d;
  std::vector<uint16_t> qs = std::vector<uint16_t>(6 * 4 * 64, 0);
  std::vector<uint16_t> kc = std::vector<uint16_t>(6 * 16 * 2 * 64, 0), vc = kc;
  std::vector<int32_t> bt = {0, 1, 2, 3, 4, 5}, cl = {40, 3};
  std::vector<float> ks = {1, 1}, vs = {1, 1};
  std::vector<float> os = std::vector<float>(6 * 4 * 64 / 2, 0);  // f16 o in float storage (for expect_rejected)
  std::vector<float> ls = std::vector<float>(6 * 4, 0);
  explicit Operands(const PagedDecodeDescriptor& desc) : d(desc) {}
  dynamic::PagedDecodeArgs args() {
    dynamic::PagedDecodeArgs a;
    a.q = ConstDynTensor::dense(qs.data(), F16, d.q_shape());
    a.key_cache = ConstDynTensor::dense(kc.data(), d.cache_kind, d.cache_shape());
    a.value_cache = ConstDynTensor::dense(vc.data(), d.cache_kind, d.cache_shape());
    a.block_tables = ConstDynTensor::dense(bt.data(), S32, Shape{2, 3});
    a.context_lens = ConstDynTensor::dense(cl.data(), S32, Shape{2});
    if (d.quantized()) {
      a.k_scale = ConstDynTensor::dense(ks.data(), F32, d.scale_shape());
      a.v_scale = ConstDynTensor::dense(vs.data(), F32, d.scale_shape());
    }
    a.o = DynTensor::dense(os.data(), F16, d.q_shape());
    if (d.return_lse) a.lse = DynTensor::dense(ls.data(), F32, Shape{6, 4});
    return a;
  }
};

TEST(PagedDecodeReject, CanImplementAndRun) {
  Operands o(base());
  auto plan = dynamic::PagedDecodePlan::select(Stream::host(), o.d);
  ASSERT_TRUE(plan) << plan.status().to_string();
  ASSERT_TRUE(plan->can_implement(o.args()).is_ok()) << plan->can_implement(o.args()).to_string();
  const auto reject = [&](const dynamic::PagedDecodeArgs& a, ErrorCode code, const std::string& needle) {
    expect_code(plan->can_implement(a), code, needle);
    expect_rejected(*plan, a, code, P, {std::span<float>(o.os), std::span<float>(o.ls)});
  };
  // Missing operands.
  const char* names[] = {"q", "key_cache", "value_cache", "block_tables", "context_lens", "o", "lse"};
  for (int which = 0; which < 7; ++which) {
    auto a = o.args();
    if (which == 0) a.q = {};
    if (which == 1) a.key_cache = {};
    if (which == 2) a.value_cache = {};
    if (which == 3) a.block_tables = {};
    if (which == 4) a.context_lens = {};
    if (which == 5) a.o = {};
    if (which == 6) a.lse = {};
    reject(a, ErrorCode::InvalidProblem, ": " + std::string(names[which]) + " is missing");
  }
  // Superfluous: scales for an unquantized cache, lse without with_lse.
  {
    auto a = o.args();
    a.k_scale = ConstDynTensor::dense(o.ks.data(), F32, Shape{1});
    reject(a, ErrorCode::InvalidProblem, "k_scale must be empty");
    PagedDecodeDescriptor no_lse = o.d;
    no_lse.return_lse = false;
    auto p2 = dynamic::PagedDecodePlan::select(Stream::host(), no_lse);
    ASSERT_TRUE(p2);
    expect_code(p2->can_implement(o.args()), ErrorCode::InvalidProblem, "lse must be empty");
  }
  // Kinds.
  {
    auto a = o.args();
    a.q.kind = Bf16;
    reject(a, ErrorCode::InvalidProblem, ": q ");
    a = o.args();
    a.key_cache.kind = Bf16;
    reject(a, ErrorCode::InvalidProblem, ": key_cache ");
    a = o.args();
    a.value_cache.kind = Fp8;
    reject(a, ErrorCode::InvalidProblem, ": value_cache ");
    a = o.args();
    a.block_tables.kind = ElementKind::S64;
    reject(a, ErrorCode::InvalidProblem, ": block_tables ");
    a = o.args();
    a.context_lens.kind = ElementKind::U32;
    reject(a, ErrorCode::InvalidProblem, ": context_lens ");
    a = o.args();
    a.o.kind = Bf16;
    reject(a, ErrorCode::InvalidProblem, ": o ");
    a = o.args();
    a.lse.kind = S32;
    reject(a, ErrorCode::InvalidProblem, ": lse ");
  }
  // Shapes (the block table's width among them).
  {
    auto a = o.args();
    a.q = ConstDynTensor::dense(o.qs.data(), F16, Shape{6, 2, 64});
    reject(a, ErrorCode::InvalidProblem, ": q ");
    a = o.args();
    a.key_cache = ConstDynTensor::dense(o.kc.data(), F16, Shape{6, 16, 1, 128});
    reject(a, ErrorCode::InvalidProblem, ": key_cache ");
    a = o.args();
    a.value_cache = ConstDynTensor::dense(o.vc.data(), F16, Shape{5, 16, 2, 64});
    reject(a, ErrorCode::InvalidProblem, ": value_cache ");
    a = o.args();
    a.block_tables = ConstDynTensor::dense(o.bt.data(), S32, Shape{2, 2});
    reject(a, ErrorCode::InvalidProblem, ": block_tables ");
    a = o.args();
    a.block_tables = ConstDynTensor::dense(o.bt.data(), S32, Shape{3, 2});
    reject(a, ErrorCode::InvalidProblem, ": block_tables ");
    a = o.args();
    a.context_lens = ConstDynTensor::dense(o.cl.data(), S32, Shape{1});
    reject(a, ErrorCode::InvalidProblem, ": context_lens ");
    a = o.args();
    a.lse = DynTensor::dense(o.ls.data(), F32, Shape{4, 6});
    reject(a, ErrorCode::InvalidProblem, ": lse ");
  }
  // Strides: unit along d, non-negative for q and o, outputs whose elements are distinct.
  {
    auto a = o.args();
    a.q.stride[2] = 2, a.q.stride[1] = 128, a.q.stride[0] = 0;
    reject(a, ErrorCode::InvalidProblem, "q must have unit stride along d");
    a = o.args();
    a.key_cache.stride[3] = 2;
    reject(a, ErrorCode::InvalidProblem, "key_cache must have unit stride along d");
    a = o.args();
    a.q.stride[1] = -64, a.q.data = o.qs.data() + 3 * 64;
    reject(a, ErrorCode::InvalidProblem, "q's strides");
    a = o.args();
    a.o.stride[1] = 32;
    reject(a, ErrorCode::InvalidProblem, "o's elements overlap");
    a = o.args();
    a.lse.stride[0] = 1, a.lse.stride[1] = 1;
    reject(a, ErrorCode::InvalidProblem, "lse's elements overlap");
    a = o.args();
    a.o.stride[0] = 0;
    reject(a, ErrorCode::InvalidProblem, ": o ");
  }
  // Alignment and null data.
  {
    auto a = o.args();
    a.q.data = reinterpret_cast<const uint8_t*>(o.qs.data()) + 1;
    reject(a, ErrorCode::MisalignedOperand, ": q is not aligned");
    a = o.args();
    a.value_cache.data = reinterpret_cast<const uint8_t*>(o.vc.data()) + 1;
    reject(a, ErrorCode::MisalignedOperand, ": value_cache is not aligned");
    a = o.args();
    a.context_lens.data = reinterpret_cast<const uint8_t*>(o.cl.data()) + 2;
    reject(a, ErrorCode::MisalignedOperand, ": context_lens is not aligned");
    a = o.args();
    a.lse.data = reinterpret_cast<uint8_t*>(o.ls.data()) + 2;
    reject(a, ErrorCode::MisalignedOperand, ": lse is not aligned");
    a = o.args();
    a.key_cache.data = nullptr;
    reject(a, ErrorCode::InvalidProblem, ": key_cache ");
  }
  // Overlap: o and lse over each input and each other.
  {
    auto a = o.args();
    a.q = ConstDynTensor::dense(o.os.data(), F16, o.d.q_shape());
    reject(a, ErrorCode::InvalidProblem, "overlap");
    a = o.args();
    a.block_tables = ConstDynTensor::dense(o.ls.data(), S32, Shape{2, 3});
    reject(a, ErrorCode::InvalidProblem, "overlap");
    a = o.args();
    a.context_lens = ConstDynTensor::dense(o.os.data() + 8, S32, Shape{2});
    reject(a, ErrorCode::InvalidProblem, "overlap");
    a = o.args();
    a.lse = DynTensor::dense(o.os.data(), F32, Shape{6, 4});
    expect_code(plan->can_implement(a), ErrorCode::InvalidProblem, "overlap");
  }
  // A stream of another device.
  expect_code(plan->run(Stream::sim(), {}, o.args()), ErrorCode::InvalidProblem, "");
}

TEST(PagedDecodeReject, QuantizedScales) {
  Operands o(base().with_kinds(F16, Fp8).with_scale_layout(KvScaleLayout::PerHead));
  o.kc.assign(o.kc.size() / 2, 0), o.vc.assign(o.vc.size() / 2, 0);  // one byte per element (in u16 storage)
  auto plan = dynamic::PagedDecodePlan::select(Stream::host(), o.d);
  ASSERT_TRUE(plan);
  ASSERT_TRUE(plan->can_implement(o.args()).is_ok()) << plan->can_implement(o.args()).to_string();
  auto a = o.args();
  a.k_scale = {};
  expect_code(plan->can_implement(a), ErrorCode::InvalidProblem, ": k_scale is missing");
  a = o.args();
  a.v_scale = ConstDynTensor::dense(o.vs.data(), F32, Shape{1});  // per tensor where per head is described
  expect_code(plan->can_implement(a), ErrorCode::InvalidProblem, ": v_scale ");
  a = o.args();
  a.k_scale.kind = F16;
  expect_code(plan->can_implement(a), ErrorCode::InvalidProblem, ": k_scale ");
  a = o.args();
  a.key_cache.kind = S8;  // the cache's kind is the descriptor's
  expect_code(plan->can_implement(a), ErrorCode::InvalidProblem, ": key_cache ");
}

TEST(PagedDecodeReject, Workspace) {
  Operands o(base().with_splits(3));
  auto plan = dynamic::PagedDecodePlan::select(Stream::sim(), o.d);
  ASSERT_TRUE(plan);
  const size_t need = plan->workspace_size();
  ASSERT_GT(need, 0u);
  auto qb = Buffer::allocate(Stream::sim(), o.qs.size() * 2);
  auto kb = Buffer::allocate(Stream::sim(), o.kc.size() * 2);
  auto vb = Buffer::allocate(Stream::sim(), o.vc.size() * 2);
  auto tb = Buffer::allocate(Stream::sim(), 6 * 4);
  auto cb = Buffer::allocate(Stream::sim(), 2 * 4);
  auto ob = Buffer::allocate(Stream::sim(), o.qs.size() * 2);
  auto lb = Buffer::allocate(Stream::sim(), 6 * 4 * 4);
  auto wb = Buffer::allocate(Stream::sim(), need + 512);
  ASSERT_TRUE(qb && kb && vb && tb && cb && ob && lb && wb);
  ASSERT_TRUE(tb->copy_from_host(o.bt.data(), 24).is_ok());
  ASSERT_TRUE(cb->copy_from_host(o.cl.data(), 8).is_ok());
  ASSERT_TRUE(qb->copy_from_host(o.qs.data(), o.qs.size() * 2).is_ok());
  ASSERT_TRUE(kb->copy_from_host(o.kc.data(), o.kc.size() * 2).is_ok());
  ASSERT_TRUE(vb->copy_from_host(o.vc.data(), o.vc.size() * 2).is_ok());
  dynamic::PagedDecodeArgs a;
  a.q = ConstDynTensor::dense(qb->data(), F16, o.d.q_shape());
  a.key_cache = ConstDynTensor::dense(kb->data(), F16, o.d.cache_shape());
  a.value_cache = ConstDynTensor::dense(vb->data(), F16, o.d.cache_shape());
  a.block_tables = ConstDynTensor::dense(tb->data(), S32, Shape{2, 3});
  a.context_lens = ConstDynTensor::dense(cb->data(), S32, Shape{2});
  a.o = DynTensor::dense(ob->data(), F16, o.d.q_shape());
  a.lse = DynTensor::dense(lb->data(), F32, Shape{6, 4});
  auto* w = static_cast<uint8_t*>(wb->data());
  expect_code(plan->run(Stream::sim(), Workspace(w, need - 1), a), ErrorCode::WorkspaceTooSmall, "workspace too small");
  expect_code(plan->run(Stream::sim(), Workspace(), a), ErrorCode::WorkspaceTooSmall, "workspace too small");
  expect_code(plan->run(Stream::sim(), Workspace(w + 4, need), a), ErrorCode::MisalignedOperand, "aligned");
  expect_code(plan->run(Stream::sim(), Workspace(ob->data(), need), a), ErrorCode::InvalidProblem,
              "the workspace overlaps o");
  const Status ok = plan->run(Stream::sim(), Workspace(w, need), a);
  EXPECT_TRUE(ok.is_ok()) << ok.to_string();
}

// The typed plan: its types must be the descriptor's kinds; it forwards to the erased plan.
TEST(PagedDecodeReject, TypedPlan) {
  expect_code(PagedDecodePlan<__nv_bfloat16>::select(Stream::host(), base()).status(), ErrorCode::InvalidProblem,
              "q and o");
  expect_code(PagedDecodePlan<__half, int8_t>::select(Stream::host(), base()).status(), ErrorCode::InvalidProblem,
              "the caches");
  auto plan = PagedDecodePlan<__half, __nv_fp8_e4m3>::select(Stream::sim(), base().with_kinds(F16, Fp8).with_splits(2));
  ASSERT_TRUE(plan) << plan.status().to_string();
  EXPECT_EQ(plan->chosen_splits(), 2);
  EXPECT_GT(plan->workspace_size(), 0u);
  Operands o(base());
  auto typed = PagedDecodePlan<__half>::select(Stream::host(), o.d);
  ASSERT_TRUE(typed);
  PagedDecodeArgs<__half> a;
  const auto* q = reinterpret_cast<const __half*>(o.qs.data());
  const auto* kc = reinterpret_cast<const __half*>(o.kc.data());
  const auto* vc = reinterpret_cast<const __half*>(o.vc.data());
  a.q = TensorRef<__half, 3>::dense(q, {6, 4, 64});
  a.key_cache = TensorRef<__half, 4>::dense(kc, {6, 16, 2, 64});
  a.value_cache = TensorRef<__half, 4>::dense(vc, {6, 16, 2, 64});
  a.block_tables = TensorRef<int32_t, 2>::dense(o.bt.data(), {2, 3});
  a.context_lens = TensorRef<int32_t, 1>::dense(o.cl.data(), {2});
  a.o = TensorMut<__half, 3>::dense(reinterpret_cast<__half*>(o.os.data()), {6, 4, 64});
  a.lse = TensorMut<float, 2>::dense(o.ls.data(), {6, 4});
  EXPECT_TRUE(typed->can_implement(a).is_ok()) << typed->can_implement(a).to_string();
  EXPECT_TRUE(typed->run(Stream::host(), {}, a).is_ok());
}

}  // namespace
}  // namespace baracuda::test
