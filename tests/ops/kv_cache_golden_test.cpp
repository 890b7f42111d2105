// KvCacheAppendPlan against NumPy / ml_dtypes (tests/data/kv_cache_golden.json, made by
// tests/data/gen_kv_cache_golden.py): vLLM's reshape_and_cache_flash formula — float32(x) / float32(scale),
// then E4M3 with SATFINITE (or half-to-even s8, clamped, NaN → 0), or the bits copied — over pages written out
// of order, a padded slot and one past the caches. On the host and sim, with the caches as two tensors and as
// views of one combined buffer, every cache element (the unwritten ones still the sentinel) equals the
// generator's, bit for bit.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "baracuda/ops/kv_cache.hpp"
#include "ops/kv_cache_test_support.hpp"
#include "support/golden.hpp"

namespace baracuda::test {
namespace {

using namespace kv;

std::vector<double> values_of(const GoldenTensor& t) {
  const std::vector<uint8_t> b = t.bytes();
  const auto eb = static_cast<size_t>(element_bytes(t.kind));
  std::vector<double> v(b.size() / eb);
  for (size_t i = 0; i < v.size(); ++i) v[i] = decode_value(t.kind, &b[i * eb]);
  return v;
}

std::vector<float> floats_of(const GoldenCase& c, const char* name) {
  return c.has(name) ? c.tensor(name).as<float>() : std::vector<float>{};
}

TEST(KvCacheGolden, MatchesVllmsFormula) {
  const GoldenFile file = load_golden("kv_cache");
  ASSERT_TRUE(file.error.empty()) << file.error;
  ASSERT_EQ(file.cases.size(), 15u);
  for (const GoldenCase& c : file.cases)
    for (DeviceKind dev : {DeviceKind::Host, DeviceKind::Sim})
      for (Layout layout : {Layout::Dense, Layout::Combined}) {
        SCOPED_TRACE(c.name + " " + std::string(to_string(dev)) + " " + to_string(layout));
        const GoldenTensor& key = c.tensor("key");
        const GoldenTensor& kc = c.tensor("key_cache");
        Problem p;
        p.d = KvCacheAppendDescriptor()
                  .with_kinds(key.kind, kc.kind, K::S64)
                  .with_scale_layout(c.param<std::string>("scales") == "per_head" ? KvScaleLayout::PerHead
                                                                                  : KvScaleLayout::PerTensor)
                  .with_tokens(key.shape[0], key.shape[1], key.shape[2])
                  .with_pages(kc.shape[0], c.param<int64_t>("block_size"));
        ASSERT_EQ(kc.shape[1], p.d.block_size);
        p.key = values_of(key), p.value = values_of(c.tensor("value"));
        p.slots = c.tensor("slot_mapping").ints();
        p.k_scale = floats_of(c, "k_scale"), p.v_scale = floats_of(c, "v_scale");
        const Outcome o = run_append(dev == DeviceKind::Host ? Stream::host() : Stream::sim(), p, layout);
        ASSERT_TRUE(o.ok);
        const int64_t cb = element_bytes(kc.kind), H = p.d.num_kv_heads, D = p.d.head_dim;
        for (int side = 0; side < 2; ++side) {
          const std::vector<uint8_t> want = c.tensor(side == 0 ? "key_cache" : "value_cache").bytes();
          const View& v = side == 0 ? o.kc : o.vc;
          int bad = 0;
          for (int64_t n = 0; n < p.d.num_blocks; ++n)
            for (int64_t b = 0; b < p.d.block_size; ++b)
              for (int64_t h = 0; h < H; ++h)
                for (int64_t e = 0; e < D && bad < 5; ++e) {
                  const size_t i = static_cast<size_t>((((n * p.d.block_size + b) * H + h) * D + e) * cb);
                  if (std::memcmp(&want[i], &o.cache[static_cast<size_t>(v.at(n, b, h, e) * cb)],
                                  static_cast<size_t>(cb)) != 0)
                    ++bad, ADD_FAILURE() << (side == 0 ? "key" : "value") << "_cache[" << n << ", " << b << ", " << h
                                         << ", " << e << "] is "
                                         << describe(kc.kind, &o.cache[static_cast<size_t>(v.at(n, b, h, e) * cb)])
                                         << ", golden " << describe(kc.kind, &want[i]);
                }
        }
      }
}

}  // namespace
}  // namespace baracuda::test
