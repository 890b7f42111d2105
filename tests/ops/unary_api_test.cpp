// UnaryPlan's API: names, catalog info, parameter strings, SKUs, precision, hashing, the typed wrappers, and
// docs/ops/unary.md's op table (generated from the catalog).
#include <gtest/gtest.h>

#include "unary_test_support.hpp"
#include "support/doc_table.hpp"

namespace baracuda::test {
namespace {

// ---------------------------------------------------------------------------------------------------
// API
// ---------------------------------------------------------------------------------------------------

TEST(UnaryApi, NamesAndCatalogInfo) {
  EXPECT_EQ(kNumUnaryKinds, catalog().size());
  for (const CatalogOp& op : catalog()) {
    UnaryKind k{};
    ASSERT_TRUE(parse_unary_kind(op.name, &k));
    EXPECT_EQ(k, op.kind);
    EXPECT_EQ(to_string(op.kind), op.name);
    EXPECT_EQ(unary_op_info(op.kind).saved, op.saved);
    EXPECT_LT(op.domain.lo, op.domain.hi);
  }
  UnaryKind k{};
  EXPECT_FALSE(parse_unary_kind("cube", &k));
  EXPECT_EQ(to_string(static_cast<UnaryKind>(250)), "?");
  EXPECT_EQ(unary_op_info(UnaryKind::Softplus).params, "beta=1!=0 threshold=20");
  EXPECT_EQ(unary_op_info(UnaryKind::Tanh).saved, UnarySaved::Output);
  EXPECT_EQ(unary_op_info(UnaryKind::Floor).saved, UnarySaved::None);
}

TEST(UnaryApi, ParameterStringsParse) {
  const detail::ParamSpec sp = detail::parse_param_spec("beta=1!=0 threshold=20");
  EXPECT_TRUE(sp.error.empty());
  const detail::ParamRule& beta = sp.rules[static_cast<size_t>(UnaryParam::Beta)];
  EXPECT_TRUE(beta.applies && !beta.required && beta.default_value == 1 && beta.compare == detail::ParamCompare::Ne);
  EXPECT_EQ(sp.rules[static_cast<size_t>(UnaryParam::Threshold)].default_value, 20);
  EXPECT_EQ(detail::parse_param_spec("eps=-1<=0.5").rules[static_cast<size_t>(UnaryParam::Eps)].bound_value, 0.5);
  EXPECT_EQ(detail::parse_param_spec("negative_slope=0.01").rules[0].default_value, 0.01);
  EXPECT_FALSE(detail::parse_param_spec("gamma=1").error.empty());
  EXPECT_FALSE(detail::parse_param_spec("beta=x").error.empty());
  EXPECT_FALSE(detail::parse_param_spec("beta beta").error.empty());
  EXPECT_FALSE(detail::parse_param_spec("max_val=1>=min_val").error.empty());  // names a parameter not taken
  EXPECT_FALSE(detail::parse_param_spec("beta=1~0").error.empty());
}

TEST(UnaryApi, SkuPrecisionAndHash) {
  auto f = dynamic::UnaryPlan::select(Stream::host(), f32_desc(UnaryKind::GeluTanh));
  ASSERT_TRUE(f);
  EXPECT_EQ(to_string(f->sku()), "gelu_tanh/f32/host/f32/elementwise");
  EXPECT_EQ(f->workspace_size(), 0u);
  auto b = dynamic::UnaryBackwardPlan::select(Stream::sim(), f32_desc(UnaryKind::Exp).with_element(ElementKind::F64));
  ASSERT_TRUE(b);
  EXPECT_EQ(to_string(b->sku()), "exp_backward/f64/sim/f64/elementwise");
  EXPECT_EQ(b->precision_guarantee().math_precision, MathPrecision::F64);
  EXPECT_TRUE(b->precision_guarantee().deterministic);
  auto h = dynamic::UnaryPlan::select(Stream::sim(), f32_desc().with_element(ElementKind::Bf16));
  ASSERT_TRUE(h);
  EXPECT_EQ(h->precision_guarantee().math_precision, MathPrecision::F32);
  const UnaryDescriptor a = f32_desc(UnaryKind::Softplus);
  EXPECT_EQ(a.hash(), f32_desc(UnaryKind::Softplus).hash());
  EXPECT_NE(a.hash(), UnaryDescriptor(a).with_beta(2).hash());
  EXPECT_NE(a.hash(), UnaryDescriptor(a).with_beta(1).hash());  // set explicitly vs default
  EXPECT_FALSE(a == UnaryDescriptor(a).with_beta(1));
  EXPECT_NE(a.hash(), f32_desc(UnaryKind::Softsign).hash());
}

TEST(UnaryApi, TypedWrappersInPlace) {
  alignas(16) double buf[6] = {-2, -1, 0, 1, 2, 3};
  const UnaryDescriptor d =
      UnaryDescriptor().with_kind(UnaryKind::LeakyRelu).with_element(ElementKind::F64).with_shape(Shape{6}).with_negative_slope(0.5);
  auto p = UnaryPlan<double, 1>::select(Stream::sim(), d);
  ASSERT_TRUE(p) << p.error().to_string();
  auto view = TensorMut<double, 1>::dense(buf, {6});
  ASSERT_TRUE(p->run(Stream::sim(), {}, UnaryArgs<double, 1>{view, view}));
  const double want[6] = {-1, -0.5, 0, 1, 2, 3};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(buf[i], want[i]);

  alignas(16) double dy[6] = {1, 1, 1, 1, 1, 1};
  auto bp = UnaryBackwardPlan<double, 1>::select(Stream::sim(), d);
  ASSERT_TRUE(bp) << bp.error().to_string();
  EXPECT_EQ(bp->saved_operand(), UnarySaved::Input);
  auto dyv = TensorMut<double, 1>::dense(dy, {6});
  ASSERT_TRUE(bp->run(Stream::sim(), {}, UnaryBackwardArgs<double, 1>{dyv, view, dyv}));  // dx over dy
  const double dwant[6] = {0.5, 0.5, 0.5, 1, 1, 1};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(dy[i], dwant[i]);
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

/// docs/ops/unary.md's op table, generated from the catalog.
std::string catalog_table() {
  std::string t = "| op | parameters | backward reads | exact | domain | computes |\n|---|---|---|---|---|---|\n";
  for (const CatalogOp& op : catalog()) {
    const UnaryOpInfo& info = unary_op_info(op.kind);
    std::string exact;
    if (op.fwd_tol == &unary_tolerances::exact) exact = "fwd";
    if (op.bwd_tol == &unary_tolerances::exact) exact += exact.empty() ? "bwd" : ", bwd";
    std::string doc;
    for (char ch : info.doc) doc += ch == '|' ? std::string("\\|") : std::string(1, ch);
    t += "| `" + op.name + "` | " + (info.params.empty() ? "" : "`" + std::string(info.params) + "`") + " | " +
         std::string(to_string(op.saved)) + " | " + exact + " | [" + number(op.domain.lo) + ", " +
         number(op.domain.hi) + "] | " + doc + " |\n";
  }
  return t;
}

TEST(UnaryApi, DocTableMatchesCatalog) {
  expect_doc_table("unary.md", "unary_ops.def and tests/ops/unary_test_catalog.hpp", "unary_test", catalog_table());
}

}  // namespace
}  // namespace baracuda::test
