// GatedActivationPlan / GatedActivationBackwardPlan sweep, generated from the catalog:
// - GatedSweep: every (kind, dtype) of the catalog × layout × device × geometry (split extent 2, 257×2·259 —
//   17×2·19 on the emulator —, split on the last / first / middle dimension of a rank-3 tensor, rank 8,
//   strided, reversed and broadcast inputs, padded outputs, empty, in-place backward): forward and backward
//   against the host reference run on dense copies (host: bit-exact; sim/cuda: the catalog's tolerance),
//   nothing outside the output views written, and sim/cuda run twice bit-identically (determinism).
#include <gtest/gtest.h>

#include "gated_activation_test_support.hpp"

namespace baracuda::test {
namespace {

// ---------------------------------------------------------------------------------------------------
// The sweep, generated from the catalog
// ---------------------------------------------------------------------------------------------------

struct Geometry {
  std::string name;
  Shape in;
  int split_dim = -1;  // as the descriptor gets it (may be negative)
  Strided x, y, dy, dx;
  bool in_place = false;   // the backward writes dx over x (dx's layout is x's)
  bool emulator = true;    // small enough for the sim device
};

Shape halved(Shape s, int split_dim) {
  s.dims[split_dim < 0 ? split_dim + s.rank : split_dim] /= 2;
  return s;
}

std::vector<Geometry> geometries() {
  std::vector<Geometry> v;
  auto dense = [&](std::string name, Shape in, int sd) {
    Geometry g;
    g.name = std::move(name);
    g.in = in;
    g.split_dim = sd;
    const Shape out = halved(in, sd);
    g.x = g.dx = dense_layout(in);
    g.y = g.dy = dense_layout(out);
    return g;
  };
  v.push_back(dense("n2", Shape{2}, 0));                // split extent 2: one pair
  v.push_back(dense("3x2", Shape{3, 2}, -1));           // split extent 2 = 2·1 in a rank-2 tensor
  {
    Geometry g = dense("257x518", Shape{257, 518}, -1);  // odd rows, half 259
    g.emulator = false;
    v.push_back(g);
  }
  v.push_back(dense("17x38", Shape{17, 38}, 1));         // the same on the emulator: half 19
  v.push_back(dense("last_3x5x8", Shape{3, 5, 8}, 2));
  v.push_back(dense("first_6x5x7", Shape{6, 5, 7}, 0));  // dense halves: the engine's vectorized path
  v.push_back(dense("middle_3x10x7", Shape{3, 10, 7}, -2));
  {  // rank 8 with extent-1 dimensions; x's last two dimensions transposed
    Geometry g = dense("rank8", Shape{2, 1, 3, 1, 2, 4, 5, 3}, 5);
    g.x.stride[6] = 1;
    g.x.stride[7] = 5;
    v.push_back(g);
  }
  {  // every operand strided: x column-major and padded, y with padded rows, dy column-major, dx every 2nd
    Geometry g = dense("strided", Shape{5, 6, 4}, 1);
    g.x.stride = {1, 7, 42};
    g.y.stride = {20, 6, 1};
    g.dy.stride = {1, 5, 15};
    g.dx.stride = {48, 8, 2};
    v.push_back(g);
  }
  {  // x and dy walk their rows backwards (negative strides)
    Geometry g = dense("reversed", Shape{4, 6}, -1);
    g.x.stride = {6, -1};
    g.x.offset = 5;
    g.dy.stride = {3, -1};
    g.dy.offset = 2;
    v.push_back(g);
  }
  {  // x and dy broadcast along the first dimension
    Geometry g = dense("broadcast", Shape{4, 6}, 1);
    g.x.stride = {0, 1};
    g.dy.stride = {0, 1};
    v.push_back(g);
  }
  {
    Geometry g = dense("inplace_last", Shape{6, 10}, -1);
    g.in_place = true;
    v.push_back(g);
  }
  {  // dense halves of 64 elements: the in-place backward on the vectorized path
    Geometry g = dense("inplace_first", Shape{8, 16}, 0);
    g.in_place = true;
    v.push_back(g);
  }
  {
    Geometry g = dense("inplace_strided", Shape{5, 6, 4}, 1);
    g.x.stride = {40, 6, 1};
    g.in_place = true;
    v.push_back(g);
  }
  v.push_back(dense("empty", Shape{0, 4}, 1));
  v.push_back(dense("empty_split", Shape{3, 0}, 1));
  return v;
}

struct SweepCase {
  GatedActivationKind kind;
  ElementKind element;
  GateLayout layout;
  DeviceKind device;
  Geometry geometry;
};

std::vector<SweepCase> sweep_cases() {
  std::vector<SweepCase> v;
  for (const KindInfo& k : catalog())
    for (ElementKind e : k.elements)
      for (GateLayout l : kLayouts)
        for (DeviceKind d : kTestDevices)
          for (const Geometry& g : geometries())
            if (g.emulator || d != DeviceKind::Sim) v.push_back({k.kind, e, l, d, g});
  return v;
}

void PrintTo(const SweepCase& c, std::ostream* os) {
  *os << to_string(c.kind) << "/" << to_string(c.element) << "/" << to_string(c.layout) << "/" << c.geometry.name
      << "/" << to_string(c.device);
}

class GatedSweep : public ::testing::TestWithParam<SweepCase> {};

TEST_P(GatedSweep, ForwardAndBackward) {
  const SweepCase& c = GetParam();
  const Geometry& g = c.geometry;
  const KindInfo& info = info_of(c.kind);
  BARACUDA_TEST_STREAM(stream, c.device);
  const GatedActivationDescriptor desc = GatedActivationDescriptor()
                                             .with_kind(c.kind)
                                             .with_element(c.element)
                                             .with_layout(c.layout)
                                             .with_input_shape(g.in)
                                             .with_split_dim(g.split_dim);
  auto fwd = dynamic::GatedActivationPlan::select(stream, desc);
  BARACUDA_SKIP_IF_NO_CUDA_KERNELS(fwd, c.device);
  ASSERT_TRUE(fwd) << fwd.error().to_string();
  auto bwd = dynamic::GatedActivationBackwardPlan::select(stream, desc);
  ASSERT_TRUE(bwd) << bwd.error().to_string();
  EXPECT_EQ(fwd->sku().backend, backend_of(c.device));
  EXPECT_EQ(fwd->sku().op, info.name);
  EXPECT_EQ(bwd->sku().op, info.name + "_backward");

  const ElementKind k = c.element;
  const Shape out = desc.output_shape();
  const std::string id = info.name + std::string(to_string(k)) + g.name + std::string(to_string(c.layout));
  std::vector<double> unused;
  // [-8, 8] covers both sides of SwiGluClamped's default limit 7.
  const std::vector<uint8_t> x_storage =
      random_floats(k, storage_elements(g.in, g.x), -8.0, 8.0, seed_of(id), &unused);
  const std::vector<uint8_t> dy_storage =
      random_floats(k, storage_elements(out, g.dy), -2.0, 2.0, seed_of(id + "dy"), &unused);
  const std::vector<uint8_t> x_logical = gather(k, x_storage, g.in, g.x);
  const std::vector<uint8_t> dy_logical = gather(k, dy_storage, out, g.dy);
  const std::vector<uint8_t> y_want = host_forward(desc, x_logical);
  const std::vector<uint8_t> dx_want = host_backward(desc, dy_logical, x_logical);

  auto forward = [&]() -> std::vector<uint8_t> {
    auto x = make_device_tensor(stream, k, g.in, g.x, x_storage);
    auto y = make_device_tensor(stream, k, out, g.y, sentinel_storage(k, storage_elements(out, g.y)));
    EXPECT_TRUE(x && y);
    if (!x || !y) return {};
    const Status s = fwd->run(stream, {}, {x->view, y->view});
    EXPECT_TRUE(s) << s.to_string();
    return download(*y);
  };
  auto backward = [&]() -> std::vector<uint8_t> {
    auto x = make_device_tensor(stream, k, g.in, g.x, x_storage);
    auto dy = make_device_tensor(stream, k, out, g.dy, dy_storage);
    EXPECT_TRUE(x && dy);
    if (!x || !dy) return {};
    if (g.in_place) {
      const Status s = bwd->run(stream, {}, {dy->view, x->view, x->view});
      EXPECT_TRUE(s) << s.to_string();
      return download(*x);
    }
    auto dx = make_device_tensor(stream, k, g.in, g.dx, sentinel_storage(k, storage_elements(g.in, g.dx)));
    EXPECT_TRUE(dx);
    if (!dx) return {};
    const Status s = bwd->run(stream, {}, {dy->view, x->view, dx->view});
    EXPECT_TRUE(s) << s.to_string();
    return download(*dx);
  };

  // Forward.
  const std::vector<uint8_t> y_storage = forward();
  if (HasFailure()) return;
  const std::vector<uint8_t> y_got = gather(k, y_storage, out, g.y);
  EXPECT_TRUE(matches(c.device, k, y_got, y_want, resolve(info.fwd, k))) << "forward";
  {
    std::vector<uint8_t> untouched = sentinel_storage(k, storage_elements(out, g.y));
    scatter(k, y_got, &untouched, out, g.y);
    EXPECT_EQ(y_storage, untouched) << "the forward wrote outside y's view";
  }

  // Backward (into x itself for the in-place geometries).
  const std::vector<uint8_t> dx_storage = backward();
  if (HasFailure()) return;
  const Strided& dx_layout = g.in_place ? g.x : g.dx;
  const std::vector<uint8_t> dx_got = gather(k, dx_storage, g.in, dx_layout);
  EXPECT_TRUE(matches(c.device, k, dx_got, dx_want, resolve(info.bwd, k))) << "backward";
  {
    std::vector<uint8_t> untouched =
        g.in_place ? x_storage : sentinel_storage(k, storage_elements(g.in, g.dx));
    scatter(k, dx_got, &untouched, g.in, dx_layout);
    EXPECT_EQ(dx_storage, untouched) << "the backward wrote outside dx's view";
  }

  if (c.device != DeviceKind::Host) {
    EXPECT_EQ(forward(), y_storage) << "two forward runs gave different bits";
    EXPECT_EQ(backward(), dx_storage) << "two backward runs gave different bits";
  }
}

INSTANTIATE_TEST_SUITE_P(Catalog, GatedSweep, ::testing::ValuesIn(sweep_cases()),
                         [](const ::testing::TestParamInfo<SweepCase>& info) {
                           const SweepCase& c = info.param;
                           return std::string(to_string(c.kind)) + "_" + std::string(to_string(c.element)) + "_" +
                                  std::string(to_string(c.layout)) + "_" + c.geometry.name + "_" +
                                  std::string(to_string(c.device));
                         });

}  // namespace
}  // namespace baracuda::test
