// Bindings of the rope family: RopeDescriptor (style, kinds, head shape,
// rot_dim, the inverse rotation, cos/sin from a cache or from theta with a
// scaling) and RopePlan with its computed frequencies and attention factor.
#include <string_view>
#include <vector>

#include "baracuda/ops/rope.hpp"
#include "common.hpp"

namespace baracuda::python {

BARACUDA_PY_NAMED_BY_TO_STRING(RopeStyle, 2, "rope style");
BARACUDA_PY_NAMED_BY_TO_STRING(CosSinSource, 2, "cos/sin source");
BARACUDA_PY_NAMED_BY_TO_STRING(RopeScaling, 5, "rope scaling");

void bind_rope(nb::module_ &m) {
  nb::class_<RopeDescriptor> d(m, "RopeDescriptor",
                               "Rotary embedding of q [tokens, heads, "
                               "head_dim] and k [tokens, kv_heads, head_dim] "
                               "(kv_heads 0: no k) at positions [tokens]: "
                               "style neox or gptj, the first rot_dim dims "
                               "(0: all), cos/sin from a cache [max_position, "
                               "rot_dim] (source 'cache') or computed "
                               "from theta with a scaling (none, linear, "
                               "ntk_aware, llama3, yarn); inverse: the "
                               "backward (rope.hpp).");
  d.def(
      "__init__",
      [](RopeDescriptor *self, std::string_view style, std::string_view element,
         int64_t num_tokens, int64_t num_heads, int64_t head_dim,
         int64_t num_kv_heads, std::string_view position_kind, int64_t rot_dim,
         bool inverse, std::string_view source, std::string_view cache_kind,
         int64_t max_position, double theta, std::string_view scaling,
         double factor, double low_freq_factor, double high_freq_factor,
         int64_t original_max_position, double beta_fast, double beta_slow,
         double mscale, double mscale_all_dim, double attention_factor,
         bool truncate) {
        RopeDescriptor r;
        r.style = parse_name<RopeStyle>(style);
        r.element = parse_name<ElementKind>(element);
        r.position_kind = parse_name<ElementKind>(position_kind);
        r.with_shape(num_tokens, num_heads, num_kv_heads, head_dim)
            .with_rot_dim(rot_dim)
            .with_inverse(inverse);
        r.source = parse_name<CosSinSource>(source);
        r.cache_kind = parse_name<ElementKind>(cache_kind);
        r.max_position = max_position;
        r.theta = theta;
        r.scaling = parse_name<RopeScaling>(scaling);
        r.factor = factor, r.low_freq_factor = low_freq_factor,
        r.high_freq_factor = high_freq_factor;
        r.original_max_position = original_max_position;
        r.beta_fast = beta_fast, r.beta_slow = beta_slow;
        r.mscale = mscale, r.mscale_all_dim = mscale_all_dim,
        r.attention_factor = attention_factor;
        r.truncate = truncate;
        new (self) RopeDescriptor(r);
      },
      nb::arg("style"), nb::arg("element"), nb::arg("num_tokens"),
      nb::arg("num_heads"), nb::arg("head_dim"), nb::arg("num_kv_heads") = 0,
      nb::arg("position_kind") = "s64", nb::arg("rot_dim") = 0,
      nb::arg("inverse") = false, nb::arg("source") = "computed",
      nb::arg("cache_kind") = "f32", nb::arg("max_position") = 0,
      nb::arg("theta") = 10000.0, nb::arg("scaling") = "none",
      nb::arg("factor") = 1.0, nb::arg("low_freq_factor") = 1.0,
      nb::arg("high_freq_factor") = 4.0,
      nb::arg("original_max_position") = 8192, nb::arg("beta_fast") = 32.0,
      nb::arg("beta_slow") = 1.0, nb::arg("mscale") = 0.0,
      nb::arg("mscale_all_dim") = 0.0, nb::arg("attention_factor") = 0.0,
      nb::arg("truncate") = true);
  enum_property(d, "style", &RopeDescriptor::style,
                "neox (rotate_half) or gptj (interleaved pairs).");
  enum_property(d, "element", &RopeDescriptor::element, "q's and k's kind.");
  enum_property(d, "position_kind", &RopeDescriptor::position_kind,
                "The positions' kind (s32 or s64).");
  enum_property(d, "source", &RopeDescriptor::source, "computed or cache.");
  enum_property(d, "scaling", &RopeDescriptor::scaling,
                "The frequencies' scaling of computed cos/sin.");
  d.def_rw("num_tokens", &RopeDescriptor::num_tokens)
      .def_rw("num_heads", &RopeDescriptor::num_heads)
      .def_rw("num_kv_heads", &RopeDescriptor::num_kv_heads)
      .def_rw("head_dim", &RopeDescriptor::head_dim)
      .def_rw("rot_dim", &RopeDescriptor::rot_dim)
      .def_rw("inverse", &RopeDescriptor::inverse)
      .def_rw("max_position", &RopeDescriptor::max_position)
      .def_rw("theta", &RopeDescriptor::theta)
      .def_rw("factor", &RopeDescriptor::factor);
  using A = dynamic::RopeArgs;
  bind_plan<dynamic::RopePlan>(m, "RopePlan",
                               {input("positions", &A::positions),
                                input("cos_sin_cache", &A::cos_sin_cache),
                                input("q", &A::q), input("k", &A::k),
                                output("q_out", &A::q_out),
                                output("k_out", &A::k_out)},
                               "q_out, k_out = q, k rotated pairwise by "
                               "position · inv_freq (or the cache's cos/sin); "
                               "q_out may be q and k_out k (in place).")
      .def_prop_ro(
          "inv_freq",
          [](const dynamic::RopePlan &p) {
            const auto f = p.inv_freq();
            return std::vector<float>(f.begin(), f.end());
          },
          "The computed frequencies (rot_dim / 2, f32; empty with a cache).")
      .def_prop_ro(
          "attention_factor", &dynamic::RopePlan::attention_factor,
          "The factor cos and sin are multiplied by (YaRN's; else 1).");
}

} // namespace baracuda::python
