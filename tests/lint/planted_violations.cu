// Planted violations for tools/lint/kernel_lint.py: the test kernel_lint_planted (tests/lint/CMakeLists.txt) runs
// the lint on this file alone, which must report every line marked `expect-lint: <rule>` and no other line. It is
// parsed as a sim kernel unit, not compiled into anything.
#include "sim/compat.cuh"

#include "device/convert.cuh"
#include "device/shift.cuh"

BARACUDA_DEVICE_NAMESPACE_BEGIN
namespace planted {

constexpr int kShift = 3;
enum : int { kBits = 32 };

__device__ int takes_int(int v) { return v; }

// Seen in the instantiation raw_cast<short, float> below.
template <class I, class F>
__device__ I raw_cast(F v) {
  return static_cast<I>(v);  // expect-lint: float-to-int
}

// A template argument is a constant in every instantiation.
template <int N>
__device__ unsigned shift_by_argument(unsigned x) {
  return (x << N) | (x >> (N + 1));
}

// The conversion and the shift have dependent types here and concrete ones in Functor<int>::operator().
template <class T>
struct Functor {
  __device__ T operator()(float x, T s) const {
    T r = x;  // expect-lint: float-to-int
    return r << s;  // expect-lint: shift
  }
};

// Never instantiated: only its non-dependent code is seen.
template <class T>
__device__ int never_instantiated(float x) {
  return x;  // expect-lint: float-to-int
}

__global__ void planted_kernel(const float* in, const double* din, int* out, unsigned* bits, int n, unsigned s) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= n) return;
  const float x = in[i];
  int a = (int)x;                       // expect-lint: float-to-int
  a += static_cast<long long>(din[i]);  // expect-lint: float-to-int
  a += int(x * 2.0f);                   // expect-lint: float-to-int
  a *= 0.5f;                            // expect-lint: float-to-int
  a += takes_int(x);                    // expect-lint: float-to-int
  a += raw_cast<short>(x);
  a += Functor<int>{}(x, a);
  a += convert::float_to_int<int>(x);  // the approved helper
  a += __float2int_rz(x);              // a CUDA intrinsic: a call, not a conversion
  a += static_cast<int>(x);  // lint: float->int in range: a planted annotation
  // lint: float->int in range: a planted annotation on the line above
  a -= static_cast<int>(x);
  a += static_cast<int>(x);  // lint: shift < width: the other rule's annotation; expect-lint: float-to-int
  a += x != 0.0f;            // float -> bool is defined for every value
  out[i] = a;

  unsigned u = bits[i];
  u = u << s;         // expect-lint: shift
  u >>= s;            // expect-lint: shift
  u = u >> (s & 31);  // expect-lint: shift
  u = u << 4 | u >> kShift | u << (kBits - 1) | u >> sizeof(int) | u << (kShift * 2 + 1) | u >> 'a' % 8;
  u = shift_by_argument<5>(u);
  u = shift::left(u, s) | shift::right(u, s);  // the approved helpers
  u = u << s;  // lint: shift < width: a planted annotation
  // lint: shift < width: a planted annotation on the line above
  u = u >> s;
  bits[i] = u;
}

}  // namespace planted
BARACUDA_DEVICE_NAMESPACE_END
