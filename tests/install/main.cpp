// Fills a 3x5 f32 tensor with 2.5 on the host device through an installed (or added) baracuda.
#include <baracuda/baracuda.hpp>

#include <cstdio>

int main() {
  using namespace baracuda;
  const Stream stream = Stream::host();
  auto out = Buffer::allocate_for<float>(stream, 15);
  if (!out) return 1;
  auto plan = FillPlan<float, 2>::select(
      stream, FillDescriptor().with_element(ElementKind::F32).with_shape(Shape{3, 5}).with_value(2.5));
  if (!plan) {
    std::fprintf(stderr, "select: %s\n", plan.error().to_string().c_str());
    return 1;
  }
  const FillArgs<float, 2> args{TensorMut<float, 2>::dense(out->as<float>(), {3, 5})};
  if (Status s = plan->can_implement(args); !s) return 1;
  if (Status s = plan->run(stream, Workspace::none(), args); !s) {
    std::fprintf(stderr, "run: %s\n", s.to_string().c_str());
    return 1;
  }
  auto values = out->to_host<float>();
  if (!values) return 1;
  for (float v : *values)
    if (v != 2.5f) return 1;
  std::printf("consumer: %s filled 15 elements with 2.5\n", to_string(plan->sku()).c_str());
  return 0;
}
