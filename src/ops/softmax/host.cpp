// The softmax family's host reference: each slice along `dim` gathered, its z = x/T + mask, max and
// Σ exp(z − max) (or Σ dy·y, Σ dy) in long double, each output rounded once. Independent of the device
// code (kernels.cuh), which merges partial (max, sum) pairs instead.
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "device/convert.cuh"
#include "ops/softmax/dispatch.hpp"

namespace baracuda::reference {
namespace {

using LD = long double;

template <class T>
LD ld(const ConstDynTensor& t, int64_t off) {
  return static_cast<LD>(convert::to_opmath(static_cast<const T*>(t.data)[off]));
}

/// Calls f(offsets of the slice's elements in in, aux, out) for every slice along `dim`.
template <class F>
void for_each_slice(const detail::SoftmaxLaunch& a, F&& f) {
  const Shape& s = a.in.shape;
  int64_t slices = 1;
  for (int d = 0; d < s.rank; ++d)
    if (d != a.dim) slices *= s.dims[d];
  const int64_t n = s.dims[a.dim];
  std::vector<int64_t> in(static_cast<size_t>(n)), aux(static_cast<size_t>(n)), out(static_cast<size_t>(n));
  for (int64_t slice = 0; slice < slices; ++slice) {
    int64_t rest = slice, bi = 0, ba = 0, bo = 0;
    for (int d = s.rank - 1; d >= 0; --d) {
      if (d == a.dim) continue;
      const int64_t i = rest % s.dims[d];
      rest /= s.dims[d];
      bi += i * a.in.stride[d], ba += i * a.aux.stride[d], bo += i * a.out.stride[d];
    }
    for (int64_t j = 0; j < n; ++j) {
      in[static_cast<size_t>(j)] = bi + j * a.in.stride[a.dim];
      aux[static_cast<size_t>(j)] = ba + j * a.aux.stride[a.dim];
      out[static_cast<size_t>(j)] = bo + j * a.out.stride[a.dim];
    }
    f(in, aux, out);
  }
}

template <class T>
Status host_forward(const detail::ExecContext&, const detail::SoftmaxLaunch& a) {
  const LD inv_t = static_cast<LD>(a.inv_temperature);
  const bool has_mask = a.aux.data != nullptr;
  T* y = static_cast<T*>(a.out.data);
  for_each_slice(a,
                 [&](const std::vector<int64_t>& in, const std::vector<int64_t>& aux, const std::vector<int64_t>& out) {
                   std::vector<LD> z(in.size());
                   LD m = -std::numeric_limits<LD>::infinity();
                   bool nan = false;
                   for (size_t j = 0; j < in.size(); ++j) {
                     z[j] = ld<T>(a.in, in[j]) * inv_t + (has_mask ? ld<T>(a.aux, aux[j]) : 0);
                     nan = nan || std::isnan(z[j]);
                     m = std::fmax(m, z[j]);
                   }
                   if (nan) m = std::numeric_limits<LD>::quiet_NaN();
                   LD sum = 0;
                   for (LD v : z) sum += std::exp(v - m);  // all −inf: NaN terms, as PyTorch's result
                   for (size_t j = 0; j < in.size(); ++j) {
                     const LD r = a.op == SoftmaxOp::LogSoftmax ? (z[j] - m) - std::log(sum) : std::exp(z[j] - m) / sum;
                     y[out[j]] = convert::cast<T>(static_cast<double>(r), false);
                   }
                 });
  return {};
}

template <class T>
Status host_backward(const detail::ExecContext&, const detail::SoftmaxLaunch& a) {
  const LD inv_t = static_cast<LD>(a.inv_temperature);
  const bool log = a.op == SoftmaxOp::LogSoftmax;
  T* dx = static_cast<T*>(a.out.data);
  for_each_slice(a,
                 [&](const std::vector<int64_t>& in, const std::vector<int64_t>& aux, const std::vector<int64_t>& out) {
                   LD sum = 0;
                   for (size_t j = 0; j < in.size(); ++j)
                     sum += log ? ld<T>(a.in, in[j]) : ld<T>(a.in, in[j]) * ld<T>(a.aux, aux[j]);
                   for (size_t j = 0; j < in.size(); ++j) {
                     const LD g = ld<T>(a.in, in[j]), y = ld<T>(a.aux, aux[j]);
                     const LD r = (log ? g - std::exp(y) * sum : y * (g - sum)) * inv_t;
                     dx[out[j]] = convert::cast<T>(static_cast<double>(r), false);
                   }
                 });
  return {};
}

}  // namespace

BARACUDA_DEFINE_KIND_TABLE(detail::SoftmaxTable, softmax_forward_table, detail::SoftmaxTypes, host_forward)
BARACUDA_DEFINE_KIND_TABLE(detail::SoftmaxTable, softmax_backward_table, detail::SoftmaxTypes, host_backward)

}  // namespace baracuda::reference
