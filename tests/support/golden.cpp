#include "support/golden.hpp"

#include <fstream>
#include <stdexcept>

#include "support/numeric.hpp"

namespace baracuda::test {
namespace {

using nlohmann::json;

constexpr std::string_view kFormat = "baracuda-golden/1";

/// "3f800000" -> its value; fails on anything but 1..digits hex digits.
uint64_t parse_hex(const std::string& s, size_t digits) {
  if (s.empty() || s.size() > digits) throw std::runtime_error("bad bit pattern \"" + s + "\"");
  size_t used = 0;
  const uint64_t v = std::stoull(s, &used, 16);
  if (used != s.size()) throw std::runtime_error("bad bit pattern \"" + s + "\"");
  return v;
}

GoldenTensor parse_tensor(const json& j) {
  GoldenTensor t;
  const std::string kind = j.at("kind").get<std::string>();
  if (!parse_element_kind(kind, &t.kind) || is_packed(t.kind))
    throw std::runtime_error("unknown or packed kind " + kind);
  t.shape = j.at("shape").get<std::vector<int64_t>>();
  int64_t n = 1;
  for (int64_t d : t.shape) n *= d;
  if (is_floating(t.kind)) {
    const size_t digits = 2 * static_cast<size_t>(element_bytes(t.kind));
    for (const json& b : j.at("bits")) t.bits.push_back(parse_hex(b.get<std::string>(), digits));
  } else {
    for (const json& v : j.at("values")) {
      if (!v.is_number_integer()) throw std::runtime_error("an integer kind's value is not an integer");
      t.bits.push_back(static_cast<uint64_t>(v.get<int64_t>()));
    }
  }
  if (t.numel() != n)
    throw std::runtime_error(std::to_string(t.numel()) + " values for a shape of " + std::to_string(n) + " elements");
  return t;
}

GoldenCase parse_case(const json& j) {
  GoldenCase c;
  c.name = j.at("name").get<std::string>();
  c.params = j.at("params");
  for (const auto& [name, t] : j.at("tensors").items()) {
    try {
      c.tensors.emplace(name, parse_tensor(t));
    } catch (const std::exception& e) {
      throw std::runtime_error("tensor " + name + ": " + e.what());
    }
  }
  return c;
}

}  // namespace

std::vector<uint8_t> GoldenTensor::bytes() const {
  const auto w = static_cast<size_t>(element_bytes(kind));
  std::vector<uint8_t> out(bits.size() * w);
  for (size_t i = 0; i < bits.size(); ++i) store_bits(kind, &out[i * w], bits[i]);
  return out;
}

const GoldenTensor& GoldenCase::tensor(std::string_view tensor_name) const {
  const auto it = tensors.find(tensor_name);
  if (it == tensors.end())
    throw std::out_of_range("golden case " + name + " has no tensor " + std::string(tensor_name));
  return it->second;
}

double GoldenCase::f64_of(const json& v) {
  const uint64_t bits = parse_hex(v.get<std::string>(), 16);
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

GoldenFile load_golden(std::string_view family) {
  GoldenFile f;
  f.path = std::string(BARACUDA_TEST_DATA_DIR) + "/" + std::string(family) + "_golden.json";
  std::ifstream in(f.path);
  if (!in) {
    f.error = "missing golden data: cannot open " + f.path;
    return f;
  }
  size_t at = 0;
  try {
    const json j = json::parse(in);
    if (j.at("format").get<std::string>() != kFormat)
      throw std::runtime_error("format is not " + std::string(kFormat));
    f.generator = j.at("generator").get<std::string>();
    f.notes = j.at("notes").get<std::vector<std::string>>();
    for (const json& c : j.at("cases")) {
      f.cases.push_back(parse_case(c));
      ++at;
    }
  } catch (const std::exception& e) {
    f.error = f.path + ", case " + std::to_string(at) + ": " + e.what();
    f.cases.clear();
    return f;
  }
  if (f.cases.empty()) f.error = "missing golden data: " + f.path + " holds no case";
  return f;
}

}  // namespace baracuda::test
