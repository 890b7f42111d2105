#include "support/w4a16_golden.hpp"

#include "support/golden.hpp"

namespace baracuda::test {

std::vector<W4a16Case> load_w4a16_golden(std::string* error) {
  std::vector<W4a16Case> cases = load_golden_as<W4a16Case>("w4a16", error, [&](const GoldenCase& g) {
    W4a16Case c;
    c.name = g.name;
    c.shape.k = g.param<int64_t>("K");
    c.shape.n = g.param<int64_t>("N");
    c.shape.group = g.param<int64_t>("group");
    c.sym = g.param<bool>("sym");
    c.act_order = g.param<bool>("act_order");
    for (const auto& [name, t] : g.tensors) {
      if ((t.kind != ElementKind::F16 && t.kind != ElementKind::S32 && t.kind != ElementKind::F32) ||
          t.shape.empty() || t.shape.size() > 2) {
        *error = g.name + ": " + name + " is not an s32, f16 or f32 vector or matrix";
        break;
      }
      W4a16Tensor w;
      w.kind = t.kind == ElementKind::F16 ? "u16" : t.kind == ElementKind::S32 ? "i32" : "f32";
      w.d0 = t.shape.size() == 2 ? t.shape[0] : 1;
      w.d1 = t.shape.back();
      for (uint64_t b : t.bits) w.bits.push_back(static_cast<uint32_t>(b));
      c.t[name] = std::move(w);
    }
    return c;
  });
  if (!error->empty()) cases.clear();
  return cases;
}

}  // namespace baracuda::test
