// KvCacheAppendPlan's rejections: every rule of select (kinds of key, cache and slots, the scale layout, the
// shapes, block_size and num_blocks, the limits) and of can_implement and run (each operand's kind, shape,
// presence, data, alignment and unit last stride; scales required iff quantized, of the scale layout's shape
// and f32; caches whose elements share memory; a cache over an input; key and value caches sharing memory
// except the combined layout's interleaved pages; a plan select did not produce; another device), each
// naming the plan and the rule, and run writing nothing when it rejects.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "baracuda/core/stream.hpp"
#include "baracuda/ops/kv_cache.hpp"
#include "support/expect_error.hpp"

namespace baracuda::test {
namespace {

using K = ElementKind;

Status status(const KvCacheAppendDescriptor& d) {
  return dynamic::KvCacheAppendPlan::select(Stream::host(), d).status();
}

TEST(KvCacheAppendRejects, Descriptor) {
  const KvCacheAppendDescriptor ok =
      KvCacheAppendDescriptor().with_kinds(K::F16, K::F16).with_tokens(4, 2, 8).with_pages(3, 4);
  ASSERT_TRUE(status(ok));
  for (K c : {K::Fp8E4M3, K::S8}) EXPECT_TRUE(status(KvCacheAppendDescriptor(ok).with_kinds(K::Bf16, c, K::S32)));
  const auto bad = [&](const KvCacheAppendDescriptor& d, ErrorCode code = ErrorCode::InvalidProblem) {
    expect_error(status(d), code, "KvCacheAppendPlan");
  };
  bad(KvCacheAppendDescriptor(ok).with_kinds(K::F64, K::F64), ErrorCode::Unsupported);
  bad(KvCacheAppendDescriptor(ok).with_kinds(K::S32, K::S32), ErrorCode::Unsupported);
  bad(KvCacheAppendDescriptor(ok).with_kinds(K::F64, K::Fp8E4M3), ErrorCode::Unsupported);
  bad(KvCacheAppendDescriptor(ok).with_kinds(K::F16, K::Bf16));  // neither a copy nor quantized
  bad(KvCacheAppendDescriptor(ok).with_kinds(K::F16, K::F32));
  bad(KvCacheAppendDescriptor(ok).with_kinds(K::F16, K::Fp8E5M2));  // not a KV cache kind
  bad(KvCacheAppendDescriptor(ok).with_kinds(K::F16, K::U8));
  bad(KvCacheAppendDescriptor(ok).with_kinds(static_cast<K>(200), K::F16));
  bad(KvCacheAppendDescriptor(ok).with_kinds(K::F16, static_cast<K>(200)));
  for (K s : {K::U32, K::S8, K::F32, K::U8}) bad(KvCacheAppendDescriptor(ok).with_kinds(K::F16, K::F16, s));
  bad(KvCacheAppendDescriptor(ok).with_scale_layout(static_cast<KvScaleLayout>(2)));
  bad(KvCacheAppendDescriptor(ok).with_tokens(-1, 2, 8));
  bad(KvCacheAppendDescriptor(ok).with_tokens(int64_t{1} << 31, 2, 8));
  bad(KvCacheAppendDescriptor(ok).with_tokens(4, 0, 8));
  bad(KvCacheAppendDescriptor(ok).with_tokens(4, 2, 0));
  bad(KvCacheAppendDescriptor(ok).with_tokens(4, 2, -8));
  bad(KvCacheAppendDescriptor(ok).with_tokens(1, int64_t{1} << 15, int64_t{1} << 15));  // 2·H·D = 2^31
  EXPECT_TRUE(status(KvCacheAppendDescriptor(ok).with_tokens(1, 1, (int64_t{1} << 30) - 1).with_pages(1, 1)));
  bad(KvCacheAppendDescriptor(ok).with_pages(0, 4));
  bad(KvCacheAppendDescriptor(ok).with_pages(3, 0));
  bad(KvCacheAppendDescriptor(ok).with_pages(3, -16));
  bad(KvCacheAppendDescriptor(ok).with_pages(-3, 16));
  bad(KvCacheAppendDescriptor(ok).with_pages(int64_t{1} << 40, int64_t{1} << 40));  // slots past 2^62
  bad(KvCacheAppendDescriptor(ok).with_pages(int64_t{1} << 30, int64_t{1} << 24));  // caches > 2^56 elements
  bad(KvCacheAppendDescriptor(ok).with_tokens(int64_t{1} << 30, 1 << 12, 1 << 15).with_pages(1, 1));
  // Another backend than the device's.
  expect_error(
      dynamic::KvCacheAppendPlan::select(Stream::host(), ok, PlanPreference().with_backend(BackendKind::Sim)).status(),
      ErrorCode::Unsupported, "KvCacheAppendPlan");
}

/// Host operands of T = 4 tokens, H = 2 heads, D = 8, 3 pages of 4 slots: key, value, slots, scales and
/// one cache buffer holding both caches (K pages then V pages), f32 data, s8 caches.
struct Operands {
  std::vector<float> key = std::vector<float>(64, 1.0f), value = std::vector<float>(64, 2.0f);
  std::vector<int64_t> slots{0, 5, -1, 11};
  std::vector<float> k_scale{0.5f, 0.25f}, v_scale{0.5f, 0.25f};
  std::vector<int8_t> cache = std::vector<int8_t>(2 * 3 * 4 * 2 * 8 + 64, 7);
  ConstDynTensor key_v() { return ConstDynTensor::dense(key.data(), K::F32, Shape{4, 2, 8}); }
  ConstDynTensor value_v() { return ConstDynTensor::dense(value.data(), K::F32, Shape{4, 2, 8}); }
  ConstDynTensor slots_v() { return ConstDynTensor::dense(slots.data(), K::S64, Shape{4}); }
  ConstDynTensor ks_v() { return ConstDynTensor::dense(k_scale.data(), K::F32, Shape{2}); }
  ConstDynTensor vs_v() { return ConstDynTensor::dense(v_scale.data(), K::F32, Shape{2}); }
  DynTensor kc_v() { return DynTensor::dense(cache.data(), K::S8, Shape{3, 4, 2, 8}); }
  DynTensor vc_v() { return DynTensor::dense(cache.data() + 192, K::S8, Shape{3, 4, 2, 8}); }
  /// Page p of a combined [3, 2, 4, 2, 8] buffer: side 0 is K, 1 is V.
  DynTensor combined(int side, int64_t shift = 0) {
    DynTensor t = DynTensor::dense(cache.data() + side * 64 + shift, K::S8, Shape{3, 4, 2, 8});
    t.stride[0] = 128;
    return t;
  }
};

TEST(KvCacheAppendRejects, Operands) {
  Operands o;
  const KvCacheAppendDescriptor d = KvCacheAppendDescriptor()
                                        .with_kinds(K::F32, K::S8)
                                        .with_scale_layout(KvScaleLayout::PerHead)
                                        .with_tokens(4, 2, 8)
                                        .with_pages(3, 4);
  auto plan = dynamic::KvCacheAppendPlan::select(Stream::host(), d);
  ASSERT_TRUE(plan);
  const dynamic::KvCacheAppendArgs good{o.key_v(), o.value_v(), o.slots_v(), o.ks_v(), o.vs_v(), o.kc_v(), o.vc_v()};
  EXPECT_TRUE(plan->can_implement(good));
  EXPECT_TRUE(plan->run(Stream::host(), {}, good));
  EXPECT_EQ(o.cache[0], 2);             // key 1 / 0.5, slot 0 head 0
  EXPECT_EQ(o.cache[192 + 5 * 16], 4);  // value 2 / 0.5, slot 5 head 0
  EXPECT_EQ(o.cache[11 * 16 + 8], 4);   // key 1 / 0.25, slot 11 head 1
  const auto reject = [&](dynamic::KvCacheAppendArgs a, const char* what, ErrorCode code = ErrorCode::InvalidProblem) {
    expect_error(plan->can_implement(a), code, "KvCacheAppendPlan");
    expect_error(plan->can_implement(a), code, what);
    std::fill(o.cache.begin(), o.cache.end(), int8_t{7});
    expect_error(plan->run(Stream::host(), {}, a), code, what);
    for (int8_t b : o.cache) ASSERT_EQ(b, 7) << "run wrote despite the rejection (" << what << ")";
  };
  dynamic::KvCacheAppendArgs a = good;
  a.key = ConstDynTensor::dense(o.key.data(), K::F16, Shape{4, 2, 8});
  reject(a, "key");
  a = good, a.key = ConstDynTensor::dense(o.key.data(), K::F32, Shape{4, 8, 2});
  reject(a, "key");
  a = good, a.key = {};
  reject(a, "key is missing");
  a = good, a.key.data = nullptr;
  reject(a, "key");
  a = good, a.key = ConstDynTensor::dense(reinterpret_cast<const char*>(o.key.data()) + 2, K::F32, Shape{4, 2, 8});
  reject(a, "key", ErrorCode::MisalignedOperand);
  a = good, a.key.stride = {8, 32, 2};  // a last stride of 2
  reject(a, "key's last stride");
  a = good, a.value = ConstDynTensor::dense(o.value.data(), K::F32, Shape{4, 2, 4});
  reject(a, "value");
  a = good, a.value = {};
  reject(a, "value");
  a = good, a.value.stride[2] = -1;
  reject(a, "value's last stride");
  a = good, a.slot_mapping = ConstDynTensor::dense(o.slots.data(), K::S32, Shape{4});
  reject(a, "slot_mapping");
  a = good, a.slot_mapping = ConstDynTensor::dense(o.slots.data(), K::S64, Shape{3});
  reject(a, "slot_mapping");
  a = good, a.slot_mapping = ConstDynTensor::dense(o.slots.data(), K::S64, Shape{4, 1});
  reject(a, "slot_mapping");
  a = good, a.slot_mapping = {};
  reject(a, "slot_mapping");
  // Scales: required, f32, [num_kv_heads] here.
  a = good, a.k_scale = {};
  reject(a, "k_scale");
  a = good, a.v_scale = {};
  reject(a, "v_scale");
  a = good, a.k_scale = ConstDynTensor::dense(o.k_scale.data(), K::F32, Shape{1});
  reject(a, "k_scale");
  a = good, a.v_scale = ConstDynTensor::dense(o.v_scale.data(), K::S32, Shape{2});
  reject(a, "v_scale");
  a = good, a.k_scale = ConstDynTensor::dense(o.k_scale.data(), K::F32, Shape{1, 2});
  reject(a, "k_scale");
  // Caches: kind, shape, presence, last stride, stride 0, elements sharing memory.
  a = good, a.key_cache = DynTensor::dense(o.cache.data(), K::U8, Shape{3, 4, 2, 8});
  reject(a, "key_cache");
  a = good, a.key_cache = DynTensor::dense(o.cache.data(), K::S8, Shape{4, 3, 2, 8});
  reject(a, "key_cache");
  a = good, a.value_cache = {};
  reject(a, "value_cache is missing");
  a = good, a.value_cache.data = nullptr;
  reject(a, "value_cache");
  a = good, a.key_cache.stride = {64, 16, 1, 2};  // heads interleaved by element: a last stride of 2
  reject(a, "key_cache's last stride");
  a = good, a.value_cache.stride[0] = 0;
  reject(a, "value_cache");
  a = good, a.key_cache.stride = {64, 8, 8, 1};  // slot o's head 1 is slot o+1's head 0
  reject(a, "key_cache's strides make two of its elements share memory");
  a = good, a.value_cache.stride = {32, 16, 8, 1};  // page p's second half is page p+1's first
  reject(a, "value_cache's strides");
  // A cache over an input.
  a = good, a.key_cache = DynTensor::dense(reinterpret_cast<int8_t*>(o.value.data()), K::S8, Shape{3, 4, 2, 8});
  reject(a, "key_cache overlaps value");
  a = good, a.value_cache = DynTensor::dense(reinterpret_cast<int8_t*>(o.key.data()) + 3, K::S8, Shape{3, 4, 2, 8});
  reject(a, "value_cache overlaps key");
  a = good, a.key_cache = DynTensor::dense(reinterpret_cast<int8_t*>(o.slots.data()), K::S8, Shape{3, 4, 2, 8});
  reject(a, "key_cache overlaps slot_mapping");
  std::vector<float> scales_and_more(64, 1.0f);
  a = good, a.v_scale = ConstDynTensor::dense(scales_and_more.data() + 40, K::F32, Shape{2});
  a.value_cache = DynTensor::dense(reinterpret_cast<int8_t*>(scales_and_more.data()), K::S8, Shape{3, 4, 2, 8});
  reject(a, "value_cache overlaps v_scale");
  // Key and value caches: apart, or the combined layout's interleaved pages; any shared element is rejected.
  a = good, a.key_cache = o.combined(0), a.value_cache = o.combined(1);
  EXPECT_TRUE(plan->can_implement(a));
  EXPECT_TRUE(plan->run(Stream::host(), {}, a));
  EXPECT_EQ(o.cache[128 + 64 + 16], 4);  // value of slot 5 (page 1, offset 1), head 0
  a.value_cache = o.combined(1, -1);     // V's pages start one element inside K's
  reject(a, "key_cache and value_cache share memory");
  a = good, a.key_cache = o.combined(0, 1), a.value_cache = o.combined(1);  // K's last element in V's page
  reject(a, "share memory");
  // Pages in reverse order (a negative page stride), K and V interleaved: accepted; V shifted onto K: not.
  a = good, a.key_cache = o.combined(0, 256), a.value_cache = o.combined(1, 256);
  a.key_cache.stride[0] = a.value_cache.stride[0] = -128;
  EXPECT_TRUE(plan->can_implement(a));
  EXPECT_TRUE(plan->run(Stream::host(), {}, a));
  a.value_cache.data = static_cast<int8_t*>(a.value_cache.data) - 1;
  reject(a, "share memory");
  a = good, a.value_cache = a.key_cache;  // the same tensor
  reject(a, "share memory");
  a = good, a.value_cache = DynTensor::dense(o.cache.data() + 191, K::S8, Shape{3, 4, 2, 8});  // one element
  reject(a, "share memory");
  a = good, a.value_cache = DynTensor::dense(o.cache.data() + 192, K::S8, Shape{3, 4, 2, 8});  // adjacent: fine
  EXPECT_TRUE(plan->can_implement(a));
  // run: a plan select did not produce; another device's stream.
  expect_error(dynamic::KvCacheAppendPlan{}.run(Stream::host(), {}, good), ErrorCode::InvalidProblem,
               "select did not produce");
  expect_error(plan->run(Stream::sim(), {}, good), ErrorCode::InvalidProblem, "KvCacheAppendPlan");
}

/// Scales are absent iff the cache holds key's kind; per tensor they are [1].
TEST(KvCacheAppendRejects, ScalesPresentIffQuantized) {
  Operands o;
  std::vector<float> kc(2 * 96 + 64);
  auto copy = dynamic::KvCacheAppendPlan::select(
      Stream::host(), KvCacheAppendDescriptor().with_kinds(K::F32, K::F32).with_tokens(4, 2, 8).with_pages(3, 4));
  ASSERT_TRUE(copy);
  dynamic::KvCacheAppendArgs a{o.key_v(),
                               o.value_v(),
                               o.slots_v(),
                               {},
                               {},
                               DynTensor::dense(kc.data(), K::F32, Shape{3, 4, 2, 8}),
                               DynTensor::dense(kc.data() + 192, K::F32, Shape{3, 4, 2, 8})};
  EXPECT_TRUE(copy->can_implement(a));
  a.k_scale = o.ks_v();
  expect_error(copy->can_implement(a), ErrorCode::InvalidProblem, "k_scale must be empty");
  a.k_scale = {}, a.v_scale = ConstDynTensor::dense(o.v_scale.data(), K::F32, Shape{1});
  expect_error(copy->can_implement(a), ErrorCode::InvalidProblem, "v_scale must be empty");
  auto fp8 = dynamic::KvCacheAppendPlan::select(
      Stream::host(), KvCacheAppendDescriptor().with_kinds(K::F32, K::Fp8E4M3).with_tokens(4, 2, 8).with_pages(3, 4));
  ASSERT_TRUE(fp8);
  dynamic::KvCacheAppendArgs q{o.key_v(),
                               o.value_v(),
                               o.slots_v(),
                               ConstDynTensor::dense(o.k_scale.data(), K::F32, Shape{1}),
                               ConstDynTensor::dense(o.v_scale.data(), K::F32, Shape{1}),
                               DynTensor::dense(o.cache.data(), K::Fp8E4M3, Shape{3, 4, 2, 8}),
                               DynTensor::dense(o.cache.data() + 192, K::Fp8E4M3, Shape{3, 4, 2, 8})};
  EXPECT_TRUE(fp8->can_implement(q));
  q.v_scale = o.vs_v();  // [2]: the per-head shape
  expect_error(fp8->can_implement(q), ErrorCode::InvalidProblem, "v_scale");
  q.v_scale = ConstDynTensor::dense(o.v_scale.data(), K::F32, Shape{1}), q.key_cache.kind = K::S8;
  expect_error(fp8->can_implement(q), ErrorCode::InvalidProblem, "key_cache");
}

}  // namespace
}  // namespace baracuda::test
