// The channel_norm host reference in f64 against the formulas written out here (GroupNorm, InstanceNorm as
// F.instance_norm without running statistics, BatchNorm training with PyTorch's running-statistics update,
// BatchNorm inference), and every backward against central finite differences of L = Σ u ⊙ y.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <vector>

#include "ops/channel_norm_test_support.hpp"

namespace baracuda::test::channel_norm {
namespace {

const Shape kShape{2, 4, 5};  // N, C, S

Values values(const Shape& shape = kShape) {
  Values v;
  for (int64_t i = 0; i < shape.numel(); ++i)
    v.x.push_back(std::sin(0.9 * i) * 2 + 0.1 * i), v.dy.push_back(std::cos(1.7 * i));
  for (int64_t c = 0; c < shape.dims[1]; ++c) {
    v.w.push_back(1 + 0.1 * c), v.b.push_back(0.3 - 0.05 * c);
    v.rm.push_back(0.2 * c - 0.1), v.rv.push_back(0.5 + 0.25 * c);
  }
  return v;
}

double xv(const Values& v, int n, int c, int s) { return v.x[static_cast<size_t>(n * 20 + c * 5 + s)]; }
double yv(const Outputs& o, int n, int c, int s) { return o.y[static_cast<size_t>(n * 20 + c * 5 + s)]; }

/// Mean and biased variance of the elements f selects.
std::pair<double, double> moments(const std::function<void(const std::function<void(double)>&)>& each) {
  double sum = 0, sq = 0, m = 0;
  each([&](double x) { sum += x, m += 1; });
  const double mean = sum / m;
  each([&](double x) { sq += (x - mean) * (x - mean); });
  return {mean, sq / m};
}

TEST(ChannelNormHost, GroupNormAndInstanceNormFormulas) {
  const Values v = values();
  for (int64_t groups : {1, 2, 4}) {  // 4 = C: InstanceNorm
    const auto d = GroupNormDescriptor().with_element(K::F64).with_shape(kShape).with_groups(groups).with_eps(1e-5);
    const Outputs r = run_both(Stream::host(), d, v);
    const int per = static_cast<int>(4 / groups);
    for (int n = 0; n < 2; ++n)
      for (int g = 0; g < groups; ++g) {
        const auto [mean, var] = moments([&](const std::function<void(double)>& f) {
          for (int c = g * per; c < (g + 1) * per; ++c)
            for (int s = 0; s < 5; ++s) f(xv(v, n, c, s));
        });
        const double rstd = 1 / std::sqrt(var + 1e-5);
        EXPECT_NEAR(r.mean[static_cast<size_t>(n * groups + g)], mean, 1e-14);
        EXPECT_NEAR(r.rstd[static_cast<size_t>(n * groups + g)], rstd, 1e-13);
        for (int c = g * per; c < (g + 1) * per; ++c)
          for (int s = 0; s < 5; ++s)
            EXPECT_NEAR(yv(r, n, c, s), (xv(v, n, c, s) - mean) * rstd * v.w[c] + v.b[c], 1e-13);
      }
  }
}

TEST(ChannelNormHost, BatchNormFormulas) {
  const Values v = values();
  const double eps = 1e-5, momentum = 0.25;
  const auto d = BatchNormDescriptor().with_element(K::F64).with_shape(kShape).with_eps(eps).with_momentum(momentum);
  const Outputs train = run_both(Stream::host(), d, v);
  const Outputs eval = run_both(Stream::host(), BatchNormDescriptor(d).with_training(false), v);
  for (int c = 0; c < 4; ++c) {
    const auto [mean, var] = moments([&](const std::function<void(double)>& f) {
      for (int n = 0; n < 2; ++n)
        for (int s = 0; s < 5; ++s) f(xv(v, n, c, s));
    });
    const double rstd = 1 / std::sqrt(var + eps);
    EXPECT_NEAR(train.mean[c], mean, 1e-14);
    EXPECT_NEAR(train.rstd[c], rstd, 1e-13);
    // PyTorch: running = (1 − momentum)·running + momentum·stat, the variance unbiased (n / (n − 1)).
    EXPECT_NEAR(train.rm[c], (1 - momentum) * v.rm[c] + momentum * mean, 1e-14);
    EXPECT_NEAR(train.rv[c], (1 - momentum) * v.rv[c] + momentum * var * 10 / 9, 1e-14);
    EXPECT_EQ(eval.rm[c], v.rm[c]);  // inference leaves them
    EXPECT_EQ(eval.rv[c], v.rv[c]);
    const double eval_rstd = 1 / std::sqrt(v.rv[c] + eps);
    for (int n = 0; n < 2; ++n)
      for (int s = 0; s < 5; ++s) {
        EXPECT_NEAR(yv(train, n, c, s), (xv(v, n, c, s) - mean) * rstd * v.w[c] + v.b[c], 1e-13);
        EXPECT_NEAR(yv(eval, n, c, s), (xv(v, n, c, s) - v.rm[c]) * eval_rstd * v.w[c] + v.b[c], 1e-13);
      }
  }
}

/// Central differences of L = Σ dy ⊙ y(x, w, b) against the backward's dx, dweight, dbias.
template <class Desc>
void check_gradients(const Desc& d, const char* what) {
  const Values v = values(d.shape);
  const Outputs r = run_both(Stream::host(), d, v);
  const auto loss = [&](const Values& p) {
    const Outputs q = run_both(Stream::host(), d, p);
    double l = 0;
    for (size_t i = 0; i < q.y.size(); ++i) l += v.dy[i] * q.y[i];
    return l;
  };
  const auto check = [&](std::vector<double> Values::*field, const std::vector<double>& grad, const char* name) {
    ASSERT_EQ(grad.size(), (v.*field).size()) << what << " " << name;
    for (size_t i = 0; i < grad.size(); ++i) {
      Values hi = v, lo = v;
      (hi.*field)[i] += 1e-6, (lo.*field)[i] -= 1e-6;
      EXPECT_NEAR(grad[i], (loss(hi) - loss(lo)) / 2e-6, 1e-7) << what << " " << name << " " << i;
    }
  };
  check(&Values::x, r.dx, "dx");
  check(&Values::w, r.dw, "dweight");
  check(&Values::b, r.db, "dbias");
}

TEST(ChannelNormHost, BackwardIsTheGradient) {
  for (int64_t groups : {1, 2, 4})
    check_gradients(GroupNormDescriptor().with_element(K::F64).with_shape(kShape).with_groups(groups), "group_norm");
  check_gradients(GroupNormDescriptor().with_element(K::F64).with_shape(Shape{3, 2}).with_groups(1), "group_norm_2d");
  const auto bn = BatchNormDescriptor().with_element(K::F64).with_shape(kShape);
  check_gradients(bn, "batch_norm");
  check_gradients(BatchNormDescriptor(bn).with_running_stats(false), "batch_norm_no_running");
  check_gradients(BatchNormDescriptor(bn).with_training(false), "batch_norm_eval");
}

}  // namespace
}  // namespace baracuda::test::channel_norm
