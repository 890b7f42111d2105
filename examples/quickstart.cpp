// y = 2·x + 1 on the default device: the GPU when one is usable, else the host reference.
#include <baracuda/baracuda.hpp>

#include <array>
#include <cstdio>
#include <vector>

int main() {
  using namespace baracuda;
  const Stream stream = Stream::default_stream();
  const std::array<int64_t, 2> shape = {4, 8};
  std::vector<float> x_host(32);
  for (size_t i = 0; i < x_host.size(); ++i) x_host[i] = static_cast<float>(i);

  // Memory on the stream's device, and views of it.
  auto x = Buffer::from_host<float>(stream, x_host);
  auto y = Buffer::allocate_for<float>(stream, 32);
  if (!x || !y) return 1;
  const AffineArgs<float, 2> args{TensorRef<float, 2>::dense(x->as<float>(), shape),
                                  TensorMut<float, 2>::dense(y->as<float>(), shape)};

  // 1. select: validates the problem and picks the kernel, once.
  auto plan = AffinePlan<float, 2>::select(
      stream, AffineDescriptor().with_element(ElementKind::F32).with_shape(Shape{4, 8}).with_alpha(2).with_beta(1));
  if (!plan) return std::fprintf(stderr, "%s\n", plan.error().to_string().c_str()), 1;
  // 2. can_implement: checks these operands (shapes, strides, alignment).
  if (Status s = plan->can_implement(args); !s) return std::fprintf(stderr, "%s\n", s.to_string().c_str()), 1;
  // 3. workspace_size: scratch memory the caller provides (none for this plan).
  auto workspace = Buffer::allocate(stream, plan->workspace_size());
  if (!workspace) return 1;
  // 4. run: launches (asynchronously on cuda; the copy below waits for it).
  if (Status s = plan->run(stream, workspace->as_workspace(), args); !s)
    return std::fprintf(stderr, "%s\n", s.to_string().c_str()), 1;

  auto y_host = y->to_host<float>();
  if (!y_host) return 1;
  std::printf("%s: y[31] = %g\n", to_string(plan->sku()).c_str(), (*y_host)[31]);  // 2·31 + 1 = 63
  return (*y_host)[31] == 63.0f ? 0 : 1;
}
