// The affine family's host reference: std::fma (correctly rounded by definition) in f32 or f64, then one
// rounding to the element type by the cast family's reference formats — no CUDA conversion functions.
#include <cmath>
#include <cstring>
#include <type_traits>

#include "device/host_loop.hpp"
#include "ops/affine/dispatch.hpp"
#include "core/reference_formats.hpp"

namespace baracuda::reference {
namespace {

template <class T>
Status host_affine(const detail::ExecContext&, const detail::AffineLaunch& a) {
  const auto* in = static_cast<const T*>(a.in.data);
  auto* out = static_cast<T*>(a.out.data);
  // f16/bf16/f32: α and β rounded to f32 and one f32 fma; f64: fma in double.
  const float alpha32 = static_cast<float>(a.alpha);
  const float beta32 = static_cast<float>(a.beta);
  detail::for_each_strided<2>(a.out.shape, {a.out.stride.data(), a.in.stride.data()},
                              [&](const std::array<int64_t, 2>& off) {
                                const long double x = value_of(in[off[1]]);
                                long double y;
                                if constexpr (std::is_same_v<T, double>)
                                  y = std::fma(a.alpha, static_cast<double>(x), a.beta);
                                else
                                  y = std::fma(alpha32, static_cast<float>(x), beta32);
                                out[off[0]] = store<T>(y);
                              });
  return {};
}

}  // namespace

BARACUDA_DEFINE_KIND_TABLE(detail::AffineTable, affine_table, detail::AffineTypes, host_affine)

}  // namespace baracuda::reference
