// The broadcast helper, the binary plans' API (SKUs, hashes, names, typed wrappers) and the docs tables.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "binary_test_support.hpp"
#include "support/doc_table.hpp"

namespace baracuda::test {
namespace {

// ---------------------------------------------------------------------------------------------------
// The broadcast helper and the plan API
// ---------------------------------------------------------------------------------------------------

TEST(BroadcastShapes, NumPyRules) {
  EXPECT_EQ(*broadcast_shapes(Shape{3, 1, 5}, Shape{4, 1}), (Shape{3, 4, 5}));
  EXPECT_EQ(*broadcast_shapes(Shape{257, 1}, Shape{1, 259}), (Shape{257, 259}));
  EXPECT_EQ(*broadcast_shapes(Shape{}, Shape{2, 3}), (Shape{2, 3}));
  EXPECT_EQ(*broadcast_shapes(Shape{1}, Shape{0}), (Shape{0}));
  EXPECT_EQ(*broadcast_shapes(Shape{2, 1}, Shape{2, 0}), (Shape{2, 0}));
  EXPECT_EQ(*broadcast_shapes(Shape{7}, Shape{7}), (Shape{7}));
  EXPECT_FALSE(broadcast_shapes(Shape{2, 3}, Shape{3, 2}));
  EXPECT_FALSE(broadcast_shapes(Shape{0}, Shape{2}));
  EXPECT_FALSE(broadcast_shapes(Shape{1, 1, 1, 1, 1, 1, 1, 1, 1}, Shape{1}));
  EXPECT_FALSE(broadcast_shapes(Shape{-1}, Shape{1}));
}

TEST(BinaryPlanApi, NamesSkuPrecisionAndHash) {
  for (size_t i = 0; i < kNumBinaryOps; ++i) {
    BinaryOp op{};
    ASSERT_TRUE(parse_binary_op(to_string(static_cast<BinaryOp>(i)), &op));
    EXPECT_EQ(op, static_cast<BinaryOp>(i));
  }
  for (size_t i = 0; i < kNumCompareOps; ++i) {
    CompareOp op{};
    ASSERT_TRUE(parse_compare_op(to_string(static_cast<CompareOp>(i)), &op));
    EXPECT_EQ(op, static_cast<CompareOp>(i));
  }
  BinaryOp unused{};
  EXPECT_FALSE(parse_binary_op("nope", &unused));
  EXPECT_EQ(kNumBinaryOps, 12u);
  EXPECT_EQ(kNumCompareOps, 6u);

  auto p = dynamic::BinaryPlan::select(Stream::host(), f32_desc(BinaryOp::Remainder));
  ASSERT_TRUE(p);
  EXPECT_EQ(to_string(p->sku()), "remainder/f32/host/f32/elementwise");
  EXPECT_EQ(p->sku().category, OpCategory::BinaryElementwise);
  EXPECT_EQ(p->precision_guarantee().math_precision, MathPrecision::F32);
  auto i = dynamic::BinaryPlan::select(Stream::sim(), f32_desc().with_element(ElementKind::S64));
  ASSERT_TRUE(i);
  EXPECT_EQ(i->precision_guarantee().math_precision, MathPrecision::Exact);
  auto c = dynamic::ComparePlan::select(Stream::sim(), CompareDescriptor().with_op(CompareOp::Ge).with_element(ElementKind::Bf16).with_shape(Shape{2}));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->sku().aux_element, ElementKind::Bool);
  EXPECT_EQ(c->sku().op, "ge");
  auto g = dynamic::BinaryBackwardPlan::select(Stream::sim(), f32_desc(BinaryOp::Hypot).with_element(ElementKind::F64));
  ASSERT_TRUE(g);
  EXPECT_EQ(g->sku().op, "hypot_backward");
  EXPECT_EQ(g->precision_guarantee().math_precision, MathPrecision::F64);
  EXPECT_TRUE(g->precision_guarantee().deterministic);
  EXPECT_EQ(g->output_shape(), (Shape{4, 3}));
  EXPECT_GT(g->workspace_size(), 0u);  // b [3] broadcasts: room for db at the output shape before it is summed
  EXPECT_EQ(dynamic::BinaryBackwardPlan::select(Stream::sim(), f32_desc().with_shapes(Shape{4, 3}, Shape{4, 3}))
                ->workspace_size(),
            0u);

  EXPECT_NE(f32_desc().hash(), f32_desc(BinaryOp::Sub).hash());
  EXPECT_NE(f32_desc().hash(), f32_desc().with_shapes(Shape{3}, Shape{4, 3}).hash());
  EXPECT_EQ(f32_desc().hash(), f32_desc().hash());
  EXPECT_NE(CompareDescriptor().with_op(CompareOp::Lt).hash(), CompareDescriptor().with_op(CompareOp::Gt).hash());
}

TEST(BinaryPlanApi, TypedWrappers) {
  // out[i][j] = a[i][0] - b[0][j] on sim, in place into nothing: a [3, 1], b [1, 4].
  alignas(16) float a[3] = {10, 20, 30};
  alignas(16) float b[4] = {1, 2, 3, 4};
  alignas(16) float out[12] = {};
  auto p = BinaryPlan<float, 2>::select(
      Stream::sim(),
      BinaryDescriptor().with_op(BinaryOp::Sub).with_element(ElementKind::F32).with_shapes(Shape{3, 1}, Shape{1, 4}));
  ASSERT_TRUE(p) << p.error().to_string();
  EXPECT_EQ(p->output_shape(), (Shape{3, 4}));
  const BinaryArgs<float, 2> args{TensorRef<float, 2>::dense(a, {3, 1}), TensorRef<float, 2>::dense(b, {1, 4}),
                                  TensorMut<float, 2>::dense(out, {3, 4})};
  ASSERT_TRUE(p->run(Stream::sim(), {}, args));
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) EXPECT_EQ(out[i * 4 + j], a[i] - b[j]);

  alignas(16) int32_t x[4] = {1, 5, -3, 7};
  alignas(16) int32_t y[1] = {4};
  bool flags[4] = {};
  auto c = ComparePlan<int32_t, 1>::select(
      Stream::host(),
      CompareDescriptor().with_op(CompareOp::Gt).with_element(ElementKind::S32).with_shapes(Shape{4}, Shape{1}));
  ASSERT_TRUE(c) << c.error().to_string();
  ASSERT_TRUE(c->run(Stream::host(), {},
                     CompareArgs<int32_t, 1>{TensorRef<int32_t, 1>::dense(x, {4}), TensorRef<int32_t, 1>::dense(y, {1}),
                                             TensorMut<bool, 1>::dense(flags, {4})}));
  EXPECT_EQ(std::vector<bool>(flags, flags + 4), (std::vector<bool>{false, true, false, true}));

  // Only db of mul, in place over dy: db = dy * a.
  alignas(16) double dy[3] = {1, 2, 3};
  alignas(16) double av[3] = {4, 5, 6};
  alignas(16) double bv[3] = {7, 8, 9};
  auto g = BinaryBackwardPlan<double, 1>::select(
      Stream::sim(), BinaryDescriptor().with_op(BinaryOp::Mul).with_element(ElementKind::F64).with_shape(Shape{3}));
  ASSERT_TRUE(g) << g.error().to_string();
  const BinaryBackwardArgs<double, 1> gargs{TensorRef<double, 1>::dense(dy, {3}), TensorRef<double, 1>::dense(av, {3}),
                                            TensorRef<double, 1>::dense(bv, {3}), {},
                                            TensorMut<double, 1>::dense(dy, {3})};
  ASSERT_TRUE(g->can_implement(gargs));
  ASSERT_TRUE(g->run(Stream::sim(), {}, gargs));
  EXPECT_EQ(std::vector<double>(dy, dy + 3), (std::vector<double>{4, 10, 18}));
}

// ---------------------------------------------------------------------------------------------------
// The docs tables are the catalog's
// ---------------------------------------------------------------------------------------------------

std::vector<ElementKind> floating(std::vector<ElementKind> kinds) {
  std::erase_if(kinds, [](ElementKind k) { return !is_floating(k); });
  return kinds;
}

std::string catalog_tables() {
  std::string t =
      "| op | `BinaryOp` | out[i] | kinds | backward | sim/cuda vs host |\n|---|---|---|---|---|---|\n";
#define BARACUDA_BINARY_OP(Enum, name, types, has_bwd, doc)                                                       \
  t += "| `" #name "` | `" #Enum "` | " + std::string(doc) + " | " + kinds_text(kinds_of_list(types{})) + " | " + \
       std::string(has_bwd ? kinds_text(floating(kinds_of_list(types{}))) : "no") + " | " +                     \
       std::string(binary_test_info(BinaryOp::Enum).agreement == BinaryAgreement::Bitwise ? "bit for bit"        \
                                                                                          : "within tolerance") + \
       " |\n";
#include "baracuda/ops/binary_ops.def"
#undef BARACUDA_BINARY_OP
  t += "\n| comparison | `CompareOp` | out[i] (Bool) | kinds |\n|---|---|---|---|\n";
#define BARACUDA_COMPARE_OP(Enum, name, types, doc) \
  t += "| `" #name "` | `" #Enum "` | " + std::string(doc) + " | " + kinds_text(kinds_of_list(types{})) + " |\n";
#include "baracuda/ops/binary_ops.def"
#undef BARACUDA_COMPARE_OP
  return t;
}

TEST(BinaryDocs, TablesAreTheCatalog) {
  expect_doc_table("binary.md", "binary_ops.def and tests/ops/binary_test_catalog.hpp", "binary_test", catalog_tables());
}

}  // namespace
}  // namespace baracuda::test
