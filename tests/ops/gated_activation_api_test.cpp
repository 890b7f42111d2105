// GatedActivationPlan's API (SKUs, names, hash, negative split_dim, the typed wrappers) and the docs table.
#include <gtest/gtest.h>

#include "gated_activation_test_support.hpp"
#include "support/doc_table.hpp"

namespace baracuda::test {
namespace {

// ---------------------------------------------------------------------------------------------------
// The API around the plans
// ---------------------------------------------------------------------------------------------------

TEST(GatedPlanApi, SkuNamesPrecisionAndHash) {
  auto f = dynamic::GatedActivationPlan::select(Stream::host(), f32_desc());
  ASSERT_TRUE(f);
  EXPECT_EQ(to_string(f->sku()), "swiglu/f32/host/f32/elementwise");
  EXPECT_EQ(f->sku().category, OpCategory::GatedActivation);
  auto b = dynamic::GatedActivationBackwardPlan::select(Stream::sim(), f32_desc().with_element(ElementKind::F64));
  ASSERT_TRUE(b);
  EXPECT_EQ(to_string(b->sku()), "swiglu_backward/f64/sim/f64/elementwise");
  EXPECT_EQ(b->precision_guarantee().math_precision, MathPrecision::F64);
  EXPECT_TRUE(b->precision_guarantee().deterministic);
  EXPECT_EQ(f->workspace_size(), 0u);
  EXPECT_EQ(b->workspace_size(), 0u);
  for (const KindInfo& k : catalog()) EXPECT_EQ(to_string(k.kind), k.name);
  EXPECT_EQ(to_string(static_cast<GatedActivationKind>(99)), "?");
  EXPECT_EQ(to_string(GateLayout::Interleaved), "interleaved");
  EXPECT_EQ(catalog().size(), kNumGatedActivationKinds);
  const GatedActivationDescriptor d = f32_desc();
  EXPECT_EQ(d.hash(), f32_desc().hash());
  EXPECT_NE(d.hash(), GatedActivationDescriptor(d).with_layout(GateLayout::FirstHalf).hash());
  EXPECT_NE(d.hash(), GatedActivationDescriptor(d).with_limit(6.0).hash());
  EXPECT_TRUE(GatedActivationDescriptor(d).with_split_dim(1).output_shape() == (Shape{4, 3}));
  EXPECT_TRUE(GatedActivationDescriptor(d).with_split_dim(-2).output_shape() == (Shape{2, 6}));
}

TEST(GatedPlanApi, NegativeSplitDimIsTheSameAxis) {
  const Shape in{4, 6, 2};
  std::vector<double> unused;
  const std::vector<uint8_t> x = random_floats(ElementKind::F32, in.numel(), -3, 3, 11, &unused);
  for (auto [neg, pos] : {std::pair{-1, 2}, std::pair{-2, 1}, std::pair{-3, 0}}) {
    const GatedActivationDescriptor a = f32_desc(in).with_split_dim(neg);
    const GatedActivationDescriptor b = f32_desc(in).with_split_dim(pos);
    EXPECT_EQ(host_forward(a, x), host_forward(b, x));
  }
}

TEST(GatedPlanApi, TypedWrappersAndInPlaceBackward) {
  // Llama order (gate first), sim device: y = silu(g)·l, then dx over x.
  alignas(16) float x[8] = {1, -2, 0.5f, 3, 2, 4, -1, 0.25f};  // [1, 8]: g = x[0:4], l = x[4:8]
  alignas(16) float y[4] = {};
  alignas(16) float dy[4] = {1, 1, 1, 1};
  const GatedActivationDescriptor d =
      f32_desc(Shape{1, 8}).with_layout(GateLayout::FirstHalf);
  auto f = GatedActivationPlan<float, 2>::select(Stream::sim(), d);
  ASSERT_TRUE(f) << f.error().to_string();
  ASSERT_TRUE(f->run(Stream::sim(), {}, {TensorRef<float, 2>::dense(x, {1, 8}), TensorMut<float, 2>::dense(y, {1, 4})}));
  for (int i = 0; i < 4; ++i) {
    const double g = x[i], l = x[4 + i];
    EXPECT_NEAR(y[i], g / (1 + std::exp(-g)) * l, 1e-6 * (1 + std::fabs(y[i])));
  }
  float saved[8];
  std::memcpy(saved, x, sizeof x);
  auto b = GatedActivationBackwardPlan<float, 2>::select(Stream::sim(), d);
  ASSERT_TRUE(b) << b.error().to_string();
  auto xv = TensorMut<float, 2>::dense(x, {1, 8});
  ASSERT_TRUE(b->can_implement({TensorRef<float, 2>::dense(dy, {1, 4}), xv, xv}));
  ASSERT_TRUE(b->run(Stream::sim(), {}, {TensorRef<float, 2>::dense(dy, {1, 4}), xv, xv}));
  for (int i = 0; i < 4; ++i) {
    const double g = saved[i], l = saved[4 + i], s = 1 / (1 + std::exp(-g));
    EXPECT_NEAR(x[i], l * s * (1 + g * (1 - s)), 1e-6 * (1 + std::fabs(x[i])));  // dg
    EXPECT_NEAR(x[4 + i], g * s, 1e-6 * (1 + std::fabs(x[4 + i])));              // dl
  }
}

// ---------------------------------------------------------------------------------------------------
// The docs table is the catalog's
// ---------------------------------------------------------------------------------------------------

std::string catalog_table() {
  std::string t = "| kind | `GatedActivationKind` | y = act(g) · lin(l) | gradients | dtypes |\n|---|---|---|---|---|\n";
  for (const KindInfo& k : catalog()) {
    std::string types;
    for (ElementKind e : k.elements) types += (types.empty() ? "" : ", ") + std::string(to_string(e));
    std::string kind_name;
#define BARACUDA_GATED_OP(Kind, name, Gate, types_, act_doc, grad_doc) \
  if (k.kind == GatedActivationKind::Kind) kind_name = #Kind;
#include "ops/gated_activation/gated_activation.def"
#undef BARACUDA_GATED_OP
    t += "| `" + k.name + "` | `" + kind_name + "` | " + k.act_doc + " | " + k.grad_doc + " | " + types + " |\n";
  }
  return t;
}

TEST(GatedDocs, TableIsTheCatalog) {
  expect_doc_table("gated_activation.md", "gated_activation.def", "gated_activation_test", catalog_table());
}

}  // namespace
}  // namespace baracuda::test
