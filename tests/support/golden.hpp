// Test support: the one reader of tests/data/<family>_golden.json, the golden-data format of docs/testing.md
// (written by tests/data/golden_json.py for every generator script). Values come back bit for bit: floating
// tensors are stored as hex bit patterns, integers as JSON numbers.
#pragma once

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "baracuda/core/element.hpp"

namespace baracuda::test {

struct GoldenTensor {
  ElementKind kind = ElementKind::F32;
  std::vector<int64_t> shape;
  /// Each element's bit pattern (floating kinds) or value (integer kinds, as two's complement), row-major.
  std::vector<uint64_t> bits;

  int64_t numel() const { return static_cast<int64_t>(bits.size()); }
  /// Host storage of the elements in `kind` (element_bytes(kind) each, little-endian).
  std::vector<uint8_t> bytes() const;
  /// The values of an integer tensor.
  std::vector<int64_t> ints() const { return {bits.begin(), bits.end()}; }
  /// The elements reinterpreted as T, which has the kind's width (e.g. float for f32, __half for f16).
  template <class T>
  std::vector<T> as() const {
    std::vector<T> out(bits.size());
    for (size_t i = 0; i < bits.size(); ++i) std::memcpy(&out[i], &bits[i], sizeof(T));
    return out;
  }
};

struct GoldenCase {
  std::string name;
  nlohmann::json params;
  std::map<std::string, GoldenTensor, std::less<>> tensors;

  bool has(std::string_view tensor_name) const { return tensors.find(tensor_name) != tensors.end(); }
  bool has_param(std::string_view param_name) const { return params.contains(param_name); }
  /// The tensor named so; throws std::out_of_range (a test failure naming it) when the case has none.
  const GoldenTensor& tensor(std::string_view tensor_name) const;
  /// A parameter: floating ones (double) are decoded from their hex bits, the rest read as JSON.
  template <class T>
  T param(std::string_view param_name) const {
    const nlohmann::json& v = params.at(param_name);
    if constexpr (std::is_floating_point_v<T>) return static_cast<T>(f64_of(v));
    else return v.get<T>();
  }

 private:
  static double f64_of(const nlohmann::json& v);
};

struct GoldenFile {
  std::string path;
  std::string generator;
  std::vector<std::string> notes;
  std::vector<GoldenCase> cases;
  /// Empty when the file was read; else why not ("missing golden data: ..." when absent or empty).
  std::string error;
};

/// Reads tests/data/<family>_golden.json and checks it: the format tag, each tensor's kind, its values
/// against its shape and the kind's width. On any fault `error` says what and where, and `cases` is empty.
GoldenFile load_golden(std::string_view family);

/// The cases of tests/data/<family>_golden.json, each made into a T by `convert` (GoldenCase → T). A faulty
/// file gives none: its error goes to `error`, or, when that is null, is a test failure.
template <class T, class Convert>
std::vector<T> load_golden_as(std::string_view family, std::string* error, Convert convert) {
  const GoldenFile file = load_golden(family);
  if (error != nullptr) *error = file.error;
  else EXPECT_TRUE(file.error.empty()) << file.error;
  std::vector<T> out;
  for (const GoldenCase& c : file.cases) out.push_back(convert(c));
  return out;
}

}  // namespace baracuda::test
