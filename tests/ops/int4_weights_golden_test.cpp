// The int4_weights family against independent golden data: tests/data/w4a16_golden.json, made by
// tests/data/gen_w4a16_golden.py (numpy, written from the GPTQ / AWQ / vLLM sources; its docstring states the
// quantizer convention and every layout fact). Per case, byte for byte:
// - quantize_int4 on w_f16 (with gptq_g_idx for act-order cases) gives q, scales_f16 and zeros;
// - dequantize_int4 of that gives w_deq_f32;
// - gptq_pack / awq_pack give the GPTQ / AWQ checkpoint tensors the case carries;
// - gptq_to_marlin (with the act-order perm) and awq_to_marlin, each from the golden checkpoint tensors, give
//   marlin_qweight, marlin_scales, marlin_zp and marlin_perm;
// - int4_from_marlin of the golden Marlin tensors, dequantized, gives w_deq_f32 again (original row order).
// A missing or truncated golden file fails the test ("missing golden data"); it never passes vacuously.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "baracuda/baracuda.hpp"
#include "support/w4a16_golden.hpp"

namespace baracuda::test {
namespace {

const std::vector<W4a16Case>& golden(std::string* error) {
  static std::string err;
  static const std::vector<W4a16Case> cases = load_w4a16_golden(&err);
  *error = err;
  return cases;
}

// ------------------------------------------------------------------------------------------ conversions

std::vector<int32_t> as_i32(const W4a16Tensor& g) { return g.as_i32(); }
std::vector<__half> as_f16(const W4a16Tensor& g) { return g.as_f16(); }

std::vector<float> f16_to_f32(const W4a16Tensor& g) {
  std::vector<float> out;
  for (const __half& h : as_f16(g)) out.push_back(__half2float(h));
  return out;
}

std::vector<uint32_t> bits_of(std::span<const __half> v) {
  std::vector<uint32_t> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    out[i] = static_cast<__half_raw>(v[i]).x;
  }
  return out;
}
std::vector<uint32_t> bits_of(std::span<const float> v) {
  std::vector<uint32_t> out(v.size());
  std::memcpy(out.data(), v.data(), v.size() * 4);
  return out;
}
template <class T>
std::vector<uint32_t> bits_of_int(const std::vector<T>& v) {
  std::vector<uint32_t> out;
  for (T x : v) out.push_back(static_cast<uint32_t>(x));
  return out;
}

/// Compares our bits with the golden tensor's; reports the count and the first few differences.
void expect_bits(const W4a16Case& c, const std::string& name, const std::vector<uint32_t>& ours,
                 const std::string& via) {
  SCOPED_TRACE(c.name + ": " + name + " via " + via);
  ASSERT_TRUE(c.has(name)) << "the golden case has no " << name;
  const W4a16Tensor& g = c.at(name);
  ASSERT_EQ(ours.size(), g.bits.size());
  int64_t bad = 0;
  std::ostringstream first;
  for (size_t i = 0; i < ours.size(); ++i)
    if (ours[i] != g.bits[i]) {
      if (bad < 5)
        first << "\n  [" << i / g.d1 << ", " << i % g.d1 << "]: ours 0x" << std::hex << ours[i] << ", golden 0x"
              << g.bits[i] << std::dec;
      ++bad;
    }
  EXPECT_EQ(bad, 0) << bad << " of " << ours.size() << " differ; first:" << first.str();
}

/// A checkpoint format's packed tensors as a case holds them: <format>_qweight, _qzeros (s32) and _scales (f16).
struct PackedTensors {
  std::vector<int32_t> qweight, qzeros;
  std::vector<__half> scales;
};
PackedTensors packed_tensors(const W4a16Case& c, const std::string& format) {
  return {as_i32(c.at(format + "_qweight")), as_i32(c.at(format + "_qzeros")), as_f16(c.at(format + "_scales"))};
}

/// The qweight, qzeros and scales of checkpoint `ckpt` (from `via`) are the case's <format>_ tensors.
template <class Checkpoint>
void expect_packed_tensors(const W4a16Case& c, const std::string& format, const Checkpoint& ckpt,
                           const std::string& via) {
  expect_bits(c, format + "_qweight", bits_of_int(ckpt.qweight), via);
  expect_bits(c, format + "_qzeros", bits_of_int(ckpt.qzeros), via);
  expect_bits(c, format + "_scales", bits_of(ckpt.scales), via);
}

/// The Marlin qweight and scales `via` made are the case's.
void expect_marlin_tensors(const W4a16Case& c, const MarlinInt4Weights& m, const std::string& via) {
  expect_bits(c, "marlin_qweight", bits_of_int(m.qweight), via);
  expect_bits(c, "marlin_scales", bits_of(m.scales), via);
}

// ------------------------------------------------------------------------------------------ tests

/// The golden cases; a missing or faulty file fails the test.
class Int4WeightsGolden : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    cases_ = &golden(&error);
    ASSERT_TRUE(error.empty()) << error;
  }
  /// The cases that hold tensor `name`; a file without any fails the test (missing golden data).
  std::vector<std::reference_wrapper<const W4a16Case>> cases_with(const std::string& name) const {
    std::vector<std::reference_wrapper<const W4a16Case>> v;
    for (const W4a16Case& c : *cases_)
      if (c.has(name)) v.push_back(c);
    EXPECT_FALSE(v.empty()) << "missing golden data: no case holds " << name;
    return v;
  }
  const std::vector<W4a16Case>* cases_ = nullptr;
};

TEST_F(Int4WeightsGolden, FilePresentAndCoversEveryFormat) {
  bool sym = false, asym = false, act = false, per_channel = false, grouped = false, gptq = false, awq = false;
  for (const W4a16Case& c : *cases_) {
    sym |= c.sym;
    asym |= !c.sym;
    act |= c.act_order;
    per_channel |= !c.shape.marlin_grouped();
    grouped |= c.shape.marlin_grouped();
    gptq |= c.has("gptq_qweight");
    awq |= c.has("awq_qweight");
    for (const char* name : {"w_f16", "q", "scales_f16", "zeros", "marlin_qweight", "marlin_scales", "w_deq_f32"})
      EXPECT_TRUE(c.has(name)) << c.name << " lacks " << name;
    if (!c.sym) {
      EXPECT_TRUE(c.has("marlin_zp")) << c.name;
    }
    if (c.act_order) {
      EXPECT_TRUE(c.has("marlin_perm") && c.has("gptq_g_idx")) << c.name;
    }
  }
  EXPECT_TRUE(sym && asym && act && per_channel && grouped && gptq && awq)
      << "missing golden data: the file does not cover symmetric, asymmetric, act-order, per-channel, grouped, "
         "GPTQ and AWQ cases";
}

TEST_F(Int4WeightsGolden, QuantizerAndDequantize) {
  for (const W4a16Case& c : *cases_) {
    const std::vector<float> w = f16_to_f32(c.at("w_f16"));
    std::vector<int32_t> g_idx;
    if (c.act_order) g_idx = as_i32(c.at("gptq_g_idx"));
    auto r = quantize_int4(w, c.shape, c.scheme(), g_idx);
    ASSERT_TRUE(r.is_ok()) << c.name << ": " << r.error().to_string();
    const Int4Weights& qw = r.value();
    expect_bits(c, "q", bits_of_int(qw.q), "quantize_int4");
    expect_bits(c, "scales_f16", bits_of(qw.scales), "quantize_int4");
    if (c.sym) {
      EXPECT_TRUE(qw.zeros.empty());
      for (uint32_t z : c.at("zeros").bits) EXPECT_EQ(z, 8u) << c.name << ": symmetric golden zeros are 8";
    } else {
      expect_bits(c, "zeros", bits_of_int(qw.zeros), "quantize_int4");
    }
    auto d = dequantize_int4(qw);
    ASSERT_TRUE(d.is_ok()) << d.error().to_string();
    expect_bits(c, "w_deq_f32", bits_of(std::span<const float>(d.value())), "dequantize_int4(quantize_int4)");
  }
}

TEST_F(Int4WeightsGolden, CheckpointPackers) {
  int gptq_cases = 0, awq_cases = 0;
  for (const W4a16Case& c : *cases_) {
    // Logical weights straight from the golden q / scales / zeros (not through our quantizer).
    Int4Weights w;
    w.shape = c.shape;
    w.scheme = c.scheme();
    for (uint32_t v : c.at("q").bits) w.q.push_back(static_cast<uint8_t>(v));
    w.scales = as_f16(c.at("scales_f16"));
    if (!c.sym)
      for (uint32_t v : c.at("zeros").bits) w.zeros.push_back(static_cast<uint8_t>(v));
    if (c.act_order) w.g_idx = as_i32(c.at("gptq_g_idx"));
    if (c.has("gptq_qweight")) {
      ++gptq_cases;
      auto g = gptq_pack(w);
      ASSERT_TRUE(g.is_ok()) << c.name << ": " << g.error().to_string();
      expect_packed_tensors(c, "gptq", *g, "gptq_pack");
      expect_bits(c, "gptq_g_idx", bits_of_int(g->g_idx), "gptq_pack");
    }
    if (c.has("awq_qweight")) {
      ++awq_cases;
      auto a = awq_pack(w);
      ASSERT_TRUE(a.is_ok()) << c.name << ": " << a.error().to_string();
      expect_packed_tensors(c, "awq", *a, "awq_pack");
    }
  }
  EXPECT_GT(gptq_cases, 0) << "missing golden data: no GPTQ tensors";
  EXPECT_GT(awq_cases, 0) << "missing golden data: no AWQ tensors";
}

TEST_F(Int4WeightsGolden, GptqToMarlin) {
  for (const W4a16Case& c : cases_with("gptq_qweight")) {
    const PackedTensors p = packed_tensors(c, "gptq");
    const auto g_idx = as_i32(c.at("gptq_g_idx"));
    auto m = gptq_to_marlin({p.qweight, p.qzeros, p.scales, g_idx}, c.shape, c.scheme(), c.act_order);
    ASSERT_TRUE(m.is_ok()) << c.name << ": " << m.error().to_string();
    expect_marlin_tensors(c, *m, "gptq_to_marlin");
    if (c.act_order) {
      expect_bits(c, "marlin_perm", bits_of_int(m->perm), "gptq_to_marlin");
    } else {
      EXPECT_TRUE(m->perm.empty()) << c.name;
    }
    if (c.has("marlin_zp")) expect_bits(c, "marlin_zp", bits_of_int(m->zeros), "gptq_to_marlin");
  }
}

TEST_F(Int4WeightsGolden, AwqToMarlin) {
  for (const W4a16Case& c : cases_with("awq_qweight")) {
    const PackedTensors p = packed_tensors(c, "awq");
    auto m = awq_to_marlin({p.qweight, p.qzeros, p.scales}, c.shape);
    ASSERT_TRUE(m.is_ok()) << c.name << ": " << m.error().to_string();
    expect_marlin_tensors(c, *m, "awq_to_marlin");
    if (c.has("marlin_zp")) {
      expect_bits(c, "marlin_zp", bits_of_int(m->zeros), "awq_to_marlin");
    } else {  // a symmetric weight in AWQ's format: every zero point is 8
      auto z = marlin_unpack_zeros(m->zeros, c.shape);
      ASSERT_TRUE(z.is_ok()) << z.error().to_string();
      for (uint8_t v : z.value()) EXPECT_EQ(v, 8) << c.name;
    }
  }
}

TEST_F(Int4WeightsGolden, MarlinTensorsDequantizeToReference) {
  for (const W4a16Case& c : *cases_) {
    const auto qweight = as_i32(c.at("marlin_qweight"));
    const auto scales = as_f16(c.at("marlin_scales"));
    std::vector<int32_t> zeros, perm, sorted_g_idx;
    if (c.has("marlin_zp")) zeros = as_i32(c.at("marlin_zp"));
    if (c.act_order) {
      perm = as_i32(c.at("marlin_perm"));
      const auto g_idx = as_i32(c.at("gptq_g_idx"));
      for (int32_t p : perm) sorted_g_idx.push_back(g_idx.at(p));
    }
    auto w = int4_from_marlin({qweight, scales, zeros, perm, sorted_g_idx}, c.shape, c.scheme());
    ASSERT_TRUE(w.is_ok()) << c.name << ": " << w.error().to_string();
    expect_bits(c, "q", bits_of_int(w->q), "int4_from_marlin");
    auto d = dequantize_int4(w.value());
    ASSERT_TRUE(d.is_ok()) << d.error().to_string();
    expect_bits(c, "w_deq_f32", bits_of(std::span<const float>(d.value())), "int4_from_marlin + dequantize_int4");
  }
}

}  // namespace
}  // namespace baracuda::test
