#include "compare.hpp"

#include <cmath>
#include <sstream>

#include "numeric.hpp"

namespace baracuda::test {
namespace {
constexpr int kMaxReported = 8;
}

::testing::AssertionResult same_elements(ElementKind k, const std::vector<uint8_t>& actual,
                                         const std::vector<uint8_t>& expected, int64_t n) {
  const int w = element_bytes(k);
  if (static_cast<int64_t>(actual.size()) < n * w || static_cast<int64_t>(expected.size()) < n * w)
    return ::testing::AssertionFailure() << "buffers hold fewer than " << n << " elements";
  std::ostringstream os;
  int64_t bad = 0;
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t* a = actual.data() + i * w;
    const uint8_t* e = expected.data() + i * w;
    if (load_bits(k, a) == load_bits(k, e) || (is_nan(k, a) && is_nan(k, e))) continue;
    if (bad++ < kMaxReported) os << "\n  [" << i << "] got " << describe(k, a) << ", expected " << describe(k, e);
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " of " << n << " " << to_string(k) << " elements differ:" << os.str();
}

::testing::AssertionResult close_elements(ElementKind k, const std::vector<uint8_t>& actual,
                                          const std::vector<double>& expected, const Tolerance& tol) {
  const int w = element_bytes(k);
  const auto n = static_cast<int64_t>(expected.size());
  if (static_cast<int64_t>(actual.size()) < n * w)
    return ::testing::AssertionFailure() << "the output holds fewer than " << n << " elements";
  std::ostringstream os;
  int64_t bad = 0;
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t* a = actual.data() + i * w;
    const double got = decode_value(k, a);
    const double want = expected[static_cast<size_t>(i)];
    bool ok;
    if (std::isnan(want) || std::isnan(got))
      ok = std::isnan(want) && std::isnan(got);
    else if (tol.exact || std::isinf(want) || std::isinf(got))
      ok = got == want && std::signbit(got) == std::signbit(want);
    else
      ok = std::fabs(got - want) <= tol.atol + tol.rtol * std::fabs(want);
    if (ok) continue;
    if (bad++ < kMaxReported) os << "\n  [" << i << "] got " << describe(k, a) << ", expected " << want;
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " of " << n << " " << to_string(k) << " elements differ"
                                       << (tol.exact ? " (exact)" : "") << ":" << os.str();
}

}  // namespace baracuda::test
