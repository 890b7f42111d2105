// RopePlan's rejections: every rule of select (style, source and scaling out of
// range; kinds; shapes; rot_dim; the scalings' parameters; the cache's kind and
// rows) and of can_implement and run (each operand's kind, shape, presence,
// data and alignment; overlaps other than in place and the disjoint rows of a
// fused qkv buffer; a plan select did not produce; another device), each naming
// the plan and the rule.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "baracuda/core/buffer.hpp"
#include "baracuda/core/stream.hpp"
#include "baracuda/ops/rope.hpp"
#include "support/expect_error.hpp"

namespace baracuda::test {
namespace {

using K = ElementKind;

Status status(const RopeDescriptor &d) {
  return dynamic::RopePlan::select(Stream::host(), d).status();
}

TEST(RopeRejects, Descriptor) {
  const RopeDescriptor ok =
      RopeDescriptor().with_element(K::F32).with_shape(4, 2, 1, 8);
  ASSERT_TRUE(status(ok));
  const auto bad = [&](RopeDescriptor d,
                       ErrorCode code = ErrorCode::InvalidProblem) {
    expect_error(status(d), code, "RopePlan");
  };
  bad(RopeDescriptor(ok).with_style(static_cast<RopeStyle>(2)));
  RopeDescriptor src = ok;
  src.source = static_cast<CosSinSource>(7);
  bad(src);
  bad(RopeDescriptor(ok).with_theta(10000, static_cast<RopeScaling>(5), 2));
  bad(RopeDescriptor(ok).with_element(K::F64), ErrorCode::Unsupported);
  bad(RopeDescriptor(ok).with_element(K::S32), ErrorCode::Unsupported);
  bad(RopeDescriptor(ok).with_element(static_cast<K>(200)));
  for (K pk : {K::F32, K::U8, K::S8, K::U32})
    bad(RopeDescriptor(ok).with_position_kind(pk));
  bad(RopeDescriptor(ok).with_shape(-1, 2, 1, 8));
  bad(RopeDescriptor(ok).with_shape(int64_t{1} << 31, 2, 1, 8));
  bad(RopeDescriptor(ok).with_shape(4, 0, 1, 8));
  bad(RopeDescriptor(ok).with_shape(4, 2, -1, 8));
  bad(RopeDescriptor(ok).with_shape(4, 2, 1, 0));
  bad(RopeDescriptor(ok).with_shape(1, int64_t{1} << 30, int64_t{1} << 30,
                                    2)); // (H + Hkv)·D ≥ 2^31
  bad(RopeDescriptor(ok).with_shape(int64_t{1} << 30, int64_t{1} << 15, 0,
                                    int64_t{1} << 15)); // > 2^56 elements
  bad(RopeDescriptor(ok).with_cache(
      K::F32, int64_t{1} << 55)); // a cache of more than 2^56 elements
  bad(RopeDescriptor(ok).with_shape(4, 2, 1, 7)); // rot_dim = head_dim odd
  bad(RopeDescriptor(ok).with_rot_dim(5));
  bad(RopeDescriptor(ok).with_rot_dim(10)); // > head_dim
  bad(RopeDescriptor(ok).with_rot_dim(-2));
  bad(RopeDescriptor(ok)
          .with_shape(1, 1, 0, 20000)
          .with_cache(K::F32, 4));                   // rot_dim > kRopeMaxRotDim
  bad(RopeDescriptor(ok).with_shape(1, 1, 0, 1024)); // computed: rot_dim > 512
  EXPECT_TRUE(
      status(RopeDescriptor(ok).with_shape(1, 1, 0, 1024).with_rot_dim(512)));
  for (double t :
       {1.0, 0.5, -3.0, std::numeric_limits<double>::infinity(), std::nan("")})
    bad(RopeDescriptor(ok).with_theta(t));
  for (RopeScaling s : {RopeScaling::Linear, RopeScaling::NtkAware,
                        RopeScaling::Llama3, RopeScaling::Yarn})
    for (double f : {0.0, -1.0, std::nan("")})
      bad(RopeDescriptor(ok).with_theta(10000, s, f));
  bad(RopeDescriptor(ok)
          .with_shape(4, 2, 1, 2)
          .with_theta(10000, RopeScaling::NtkAware, 2)); // d/(d − 2)
  bad(RopeDescriptor(ok).with_llama3(8, 1, 4, 0));
  bad(RopeDescriptor(ok).with_llama3(8, 4, 4, 8192)); // high must exceed low
  bad(RopeDescriptor(ok).with_llama3(8, 0, 4, 8192));
  bad(RopeDescriptor(ok).with_yarn(4, 0));
  bad(RopeDescriptor(ok).with_yarn(4, 4096, 0, 1));
  bad(RopeDescriptor(ok).with_yarn(4, 4096, 32, std::nan("")));
  bad(RopeDescriptor(ok).with_yarn(4, 4096).with_mscale(-1, 1));
  bad(RopeDescriptor(ok).with_yarn(4, 4096).with_attention_factor(
      std::numeric_limits<double>::infinity()));
  // Cache: its kind, its rows, and no scaling.
  bad(RopeDescriptor(ok).with_cache(K::F16,
                                    10)); // neither f32 nor the activation kind
  bad(RopeDescriptor(ok).with_cache(K::F32, 0));
  RopeDescriptor scaled = RopeDescriptor(ok).with_cache(K::F32, 10);
  scaled.scaling = RopeScaling::Linear;
  bad(scaled);
  EXPECT_TRUE(
      status(RopeDescriptor(ok).with_element(K::Bf16).with_cache(K::Bf16, 10)));
  expect_other_backend_unsupported<dynamic::RopePlan>(
      Stream::host(), ok, BackendKind::Sim, "RopePlan");
}

/// Host operands of a [4, 2, 8] q, [4, 1, 8] k problem, f32, with s64 positions
/// and an f32 cache of 10 rows.
struct Operands {
  std::vector<int64_t> pos = std::vector<int64_t>(4, 1);
  std::vector<float> cache = std::vector<float>(80, 0.5f);
  std::vector<float> q = std::vector<float>(64, 1.0f),
                     k = std::vector<float>(32, 1.0f);
  std::vector<float> qo = std::vector<float>(64), ko = std::vector<float>(32);
  std::vector<float> qkv =
      std::vector<float>(4 * 4 * 8, 1.0f); // [4, 2 + 2·1, 8]
  DynTensor pos_v() { return DynTensor::dense(pos.data(), K::S64, Shape{4}); }
  DynTensor cache_v() {
    return DynTensor::dense(cache.data(), K::F32, Shape{10, 8});
  }
  DynTensor q_v() { return DynTensor::dense(q.data(), K::F32, Shape{4, 2, 8}); }
  DynTensor k_v() { return DynTensor::dense(k.data(), K::F32, Shape{4, 1, 8}); }
  DynTensor qo_v() {
    return DynTensor::dense(qo.data(), K::F32, Shape{4, 2, 8});
  }
  DynTensor ko_v() {
    return DynTensor::dense(ko.data(), K::F32, Shape{4, 1, 8});
  }
  /// A [4, heads, 8] view into the fused buffer at head `first`.
  DynTensor fused(int64_t first, int64_t heads) {
    DynTensor t =
        DynTensor::dense(qkv.data() + first * 8, K::F32, Shape{4, heads, 8});
    t.stride[0] = 32;
    return t;
  }
};

TEST(RopeRejects, Operands) {
  Operands o;
  const RopeDescriptor d = RopeDescriptor()
                               .with_element(K::F32)
                               .with_shape(4, 2, 1, 8)
                               .with_cache(K::F32, 10);
  auto plan = dynamic::RopePlan::select(Stream::host(), d);
  ASSERT_TRUE(plan);
  const dynamic::RopeArgs good{o.pos_v(), o.cache_v(), o.q_v(),
                               o.k_v(),   o.qo_v(),    o.ko_v()};
  EXPECT_TRUE(plan->can_implement(good));
  EXPECT_TRUE(plan->run(Stream::host(), {}, good));
  const auto reject = [&](dynamic::RopeArgs a, const char *name,
                          ErrorCode code = ErrorCode::InvalidProblem) {
    expect_error(plan->can_implement(a), code, "RopePlan");
    expect_error(plan->can_implement(a), code, name);
    std::fill(o.qo.begin(), o.qo.end(), 7.0f);
    expect_error(plan->run(Stream::host(), {}, a), code, name);
    for (float f : o.qo)
      EXPECT_EQ(f, 7.0f) << "run wrote despite the rejection";
  };
  dynamic::RopeArgs a = good;
  a.positions = DynTensor::dense(o.pos.data(), K::S32,
                                 Shape{4}); // the descriptor says s64
  reject(a, "positions");
  a = good, a.positions = DynTensor::dense(o.pos.data(), K::S64, Shape{3});
  reject(a, "positions");
  a = good, a.positions = {};
  reject(a, "positions");
  a = good, a.cos_sin_cache = {};
  reject(a, "cos_sin_cache");
  a = good,
  a.cos_sin_cache = DynTensor::dense(o.cache.data(), K::F32, Shape{8, 10});
  reject(a, "cos_sin_cache");
  a = good,
  a.cos_sin_cache = DynTensor::dense(o.cache.data(), K::Bf16, Shape{10, 8});
  reject(a, "cos_sin_cache");
  a = good, a.q = DynTensor::dense(o.q.data(), K::F32, Shape{4, 8, 2});
  reject(a, "q");
  a = good, a.q = DynTensor::dense(o.q.data(), K::F16, Shape{4, 2, 8});
  reject(a, "q");
  a = good, a.q = DynTensor::dense(reinterpret_cast<char *>(o.q.data()) + 1,
                                   K::F32, Shape{4, 2, 8});
  reject(a, "q", ErrorCode::MisalignedOperand);
  a = good, a.k = {};
  reject(a, "k");
  a = good, a.k = DynTensor::dense(o.k.data(), K::F32, Shape{4, 2, 8});
  reject(a, "k");
  a = good, a.q_out = DynTensor::dense(o.qo.data(), K::F32,
                                       Shape{4, 2, 16}); // out != in shape
  reject(a, "q_out");
  a = good, a.q_out.stride[1] = 0;
  reject(a, "q_out");
  a = good, a.q_out.data = nullptr;
  reject(a, "q_out");
  a = good, a.k_out = {};
  reject(a, "k_out");
  a = good, a.k_out = DynTensor::dense(o.ko.data(), K::F32, Shape{4, 1, 4});
  reject(a, "k_out");
  // Overlaps: q_out over q shifted, over k, over k_out, over the positions;
  // k_out over q.
  a = good, a.q_out = DynTensor::dense(o.q.data() + 1, K::F32, Shape{4, 2, 8});
  reject(a, "other than exactly");
  a = good, a.q_out = DynTensor::dense(o.k.data(), K::F32, Shape{4, 2, 8});
  a.q_out.stride = {8, 1, 1}; // within k's 32 elements
  reject(a, "q_out overlaps k");
  a = good, a.k_out = DynTensor::dense(o.qo.data() + 8, K::F32, Shape{4, 1, 8});
  reject(a, "q_out overlaps k_out");
  a = good, a.k_out = DynTensor::dense(o.q.data(), K::F32, Shape{4, 1, 8});
  reject(a, "k_out overlaps q");
  a = good, a.q_out = DynTensor::dense(reinterpret_cast<float *>(o.pos.data()),
                                       K::F32, Shape{4, 2, 1});
  a.q_out.shape = Shape{4, 2, 8};
  reject(a, "overlaps positions");
  a = good, a.k_out = DynTensor::dense(o.cache.data(), K::F32, Shape{4, 1, 8});
  reject(a, "overlaps cos_sin_cache");
  // In place is exact aliasing; the fused qkv buffer's q and k rows interleave
  // without overlapping.
  a = good, a.q_out = o.q_v(), a.k_out = o.k_v();
  EXPECT_TRUE(plan->can_implement(a));
  a = good, a.q = a.q_out = o.fused(0, 2), a.k = a.k_out = o.fused(2, 1);
  EXPECT_TRUE(plan->can_implement(a));
  EXPECT_TRUE(plan->run(Stream::host(), {}, a));
  a.k = a.k_out = o.fused(1, 1); // k's head 0 is q's head 1
  expect_error(plan->can_implement(a), ErrorCode::InvalidProblem,
               "q_out overlaps k");
  a = good, a.q = a.q_out = o.fused(0, 2),
  a.k_out = o.fused(2, 1); // k_out over the fused buffer's k: fine
  EXPECT_TRUE(plan->can_implement(a));
  a.k_out = o.fused(1, 1);
  expect_error(plan->can_implement(a), ErrorCode::InvalidProblem,
               "k_out overlaps q");
  // Without kv heads, k and k_out must be empty; without a cache, so must it.
  auto q_only = dynamic::RopePlan::select(
      Stream::host(),
      RopeDescriptor().with_element(K::F32).with_shape(4, 2, 0, 8));
  ASSERT_TRUE(q_only);
  EXPECT_TRUE(
      q_only->can_implement({o.pos_v(), {}, o.q_v(), {}, o.qo_v(), {}}));
  expect_error(
      q_only->can_implement({o.pos_v(), {}, o.q_v(), o.k_v(), o.qo_v(), {}}),
      ErrorCode::InvalidProblem, "k");
  expect_error(
      q_only->can_implement({o.pos_v(), {}, o.q_v(), {}, o.qo_v(), o.ko_v()}),
      ErrorCode::InvalidProblem, "k_out");
  expect_error(q_only->can_implement(
                   {o.pos_v(), o.cache_v(), o.q_v(), {}, o.qo_v(), {}}),
               ErrorCode::InvalidProblem, "cos_sin_cache");
  // run: a plan select did not produce; another device's stream.
  expect_error(dynamic::RopePlan{}.run(Stream::host(), {}, good),
               ErrorCode::InvalidProblem, "select did not produce");
  expect_error(plan->run(Stream::sim(), {}, good), ErrorCode::InvalidProblem,
               "RopePlan");
}

TEST(RopeRejects, EmptyProblemTouchesNothing) {
  auto plan = dynamic::RopePlan::select(
      Stream::host(),
      RopeDescriptor().with_element(K::F32).with_shape(0, 2, 1, 8));
  ASSERT_TRUE(plan);
  std::vector<int64_t> pos(1);
  std::vector<float> q(1), k(1);
  EXPECT_TRUE(plan->run(Stream::host(), {},
                        {DynTensor::dense(pos.data(), K::S64, Shape{0}),
                         {},
                         DynTensor::dense(q.data(), K::F32, Shape{0, 2, 8}),
                         DynTensor::dense(k.data(), K::F32, Shape{0, 1, 8}),
                         DynTensor::dense(q.data(), K::F32, Shape{0, 2, 8}),
                         DynTensor::dense(k.data(), K::F32, Shape{0, 1, 8})}));
}

} // namespace
} // namespace baracuda::test
