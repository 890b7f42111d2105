// Test support: the cases of tests/data/w4a16_golden.json (written by tests/data/gen_w4a16_golden.py, whose
// docstring documents every tensor), read through support/golden.hpp and shaped for the int4 tests: the case's
// Int4Shape and scheme, and each tensor's 32-bit raw words.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "baracuda/ops/int4_weights.hpp"

namespace baracuda::test {

struct W4a16Tensor {
  std::string kind;  ///< i32 | u16 (f16 bits) | f32
  int64_t d0 = 0, d1 = 0;  ///< rows and columns (a 1-D tensor is 1 x K)
  std::vector<uint32_t> bits;  ///< raw bits, row-major

  /// The values of an i32 tensor.
  std::vector<int32_t> as_i32() const { return {bits.begin(), bits.end()}; }
  /// The values of a u16 tensor holding binary16 bits.
  std::vector<__half> as_f16() const {
    std::vector<__half> out(bits.size());
    for (size_t i = 0; i < out.size(); ++i) {
      __half_raw r;
      r.x = static_cast<uint16_t>(bits[i]);
      out[i] = __half(r);
    }
    return out;
  }
};

struct W4a16Case {
  std::string name;
  Int4Shape shape;
  bool sym = true;
  bool act_order = false;
  std::map<std::string, W4a16Tensor> t;

  bool has(const std::string& name) const { return t.count(name) != 0; }
  const W4a16Tensor& at(const std::string& name) const { return t.at(name); }
  Int4Scheme scheme() const { return sym ? Int4Scheme::Symmetric : Int4Scheme::Asymmetric; }
};

/// The cases of the golden file. On a missing, empty or malformed file `error` says so (starting "missing golden
/// data" when the file is absent or holds no case) and the result is empty.
std::vector<W4a16Case> load_w4a16_golden(std::string* error);

}  // namespace baracuda::test
