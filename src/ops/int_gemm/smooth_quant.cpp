// SmoothQuant's offline smoothing (Xiao et al. 2023; mit-han-lab/smoothquant smooth.py), in double.
#include <algorithm>
#include <cmath>
#include <string>

#include "baracuda/ops/int_gemm.hpp"

namespace baracuda {

Result<std::vector<double>> smooth_quant_factors(std::span<const double> max_abs_x, std::span<const double> max_abs_w,
                                                double alpha) {
  const std::string P = "smooth_quant_factors";
  if (max_abs_x.size() != max_abs_w.size())
    return Error::invalid(P + ": max_abs_x has " + std::to_string(max_abs_x.size()) + " channels, max_abs_w " +
                          std::to_string(max_abs_w.size()));
  if (!(alpha >= 0.0 && alpha <= 1.0)) return Error::invalid(P + ": alpha must lie in [0, 1]");
  std::vector<double> s(max_abs_x.size());
  for (size_t j = 0; j < s.size(); ++j) {
    const double x = max_abs_x[j], w = max_abs_w[j];
    if (!std::isfinite(x) || !std::isfinite(w) || x < 0 || w < 0)
      return Error::invalid(P + ": channel " + std::to_string(j) + ": the maxima must be finite and >= 0");
    // smooth.py: weight maxima clamp(min=1e-5); the factors clamp(min=1e-5).
    s[j] = std::max(std::pow(x, alpha) / std::pow(std::max(w, 1e-5), 1.0 - alpha), 1e-5);
  }
  return s;
}

namespace {
Status scale_columns(std::string_view what, std::span<float> m, std::span<const double> s, bool divide) {
  if (s.empty()) {
    if (!m.empty()) return Error::invalid(std::string(what) + ": no factors for a non-empty matrix");
    return {};
  }
  if (m.size() % s.size() != 0)
    return Error::invalid(std::string(what) + ": the matrix has " + std::to_string(m.size()) +
                          " elements, not a multiple of K = " + std::to_string(s.size()));
  for (double v : s)
    if (!(std::isfinite(v) && v > 0)) return Error::invalid(std::string(what) + ": factors must be finite and > 0");
  const size_t k = s.size();
  for (size_t i = 0; i < m.size(); ++i) {
    const double v = divide ? static_cast<double>(m[i]) / s[i % k] : static_cast<double>(m[i]) * s[i % k];
    m[i] = static_cast<float>(v);
  }
  return {};
}
}  // namespace

Status smooth_quant_scale_weight(std::span<float> w, std::span<const double> s) {
  return scale_columns("smooth_quant_scale_weight", w, s, false);
}
Status smooth_quant_scale_activation(std::span<float> x, std::span<const double> s) {
  return scale_columns("smooth_quant_scale_activation", x, s, true);
}

}  // namespace baracuda
