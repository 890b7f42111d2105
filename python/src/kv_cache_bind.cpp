// Bindings of the kv_cache family: KvCacheAppendDescriptor (kinds, tokens, heads, head dim, pages, the scale
// layout) and KvCacheAppendPlan.
#include <string_view>

#include "baracuda/ops/kv_cache.hpp"
#include "common.hpp"

namespace baracuda::python {

BARACUDA_PY_NAMED_BY_TO_STRING(KvScaleLayout, 2, "kv scale layout");

void bind_kv_cache(nb::module_& m) {
  nb::class_<KvCacheAppendDescriptor> d(m, "KvCacheAppendDescriptor",
                                        "New tokens' key and value [tokens, kv_heads, head_dim] written at their "
                                        "slots (slot_mapping [tokens]; negative or past the caches: skipped) into "
                                        "paged caches [num_blocks, block_size, kv_heads, head_dim] of key's kind "
                                        "(a copy) or fp8e4m3 / s8 (x / scale, scale_layout per_tensor or "
                                        "per_head) (kv_cache.hpp).");
  d.def(
      "__init__",
      [](KvCacheAppendDescriptor* self, std::string_view element, std::string_view cache_kind, int64_t num_tokens,
         int64_t num_kv_heads, int64_t head_dim, int64_t num_blocks, int64_t block_size, std::string_view slot_kind,
         std::string_view scale_layout) {
        KvCacheAppendDescriptor r;
        r.with_kinds(parse_name<ElementKind>(element), parse_name<ElementKind>(cache_kind),
                     parse_name<ElementKind>(slot_kind))
            .with_scale_layout(parse_name<KvScaleLayout>(scale_layout))
            .with_tokens(num_tokens, num_kv_heads, head_dim)
            .with_pages(num_blocks, block_size);
        new (self) KvCacheAppendDescriptor(r);
      },
      nb::arg("element"), nb::arg("cache_kind"), nb::arg("num_tokens"), nb::arg("num_kv_heads"), nb::arg("head_dim"),
      nb::arg("num_blocks"), nb::arg("block_size"), nb::arg("slot_kind") = "s64",
      nb::arg("scale_layout") = "per_tensor");
  enum_property(d, "element", &KvCacheAppendDescriptor::element, "key's and value's kind.");
  enum_property(d, "cache_kind", &KvCacheAppendDescriptor::cache_kind, "The caches' kind.");
  enum_property(d, "slot_kind", &KvCacheAppendDescriptor::slot_kind, "slot_mapping's kind (s32 or s64).");
  enum_property(d, "scale_layout", &KvCacheAppendDescriptor::scale_layout, "per_tensor ([1]) or per_head.");
  d.def_rw("num_tokens", &KvCacheAppendDescriptor::num_tokens)
      .def_rw("num_kv_heads", &KvCacheAppendDescriptor::num_kv_heads)
      .def_rw("head_dim", &KvCacheAppendDescriptor::head_dim)
      .def_rw("num_blocks", &KvCacheAppendDescriptor::num_blocks)
      .def_rw("block_size", &KvCacheAppendDescriptor::block_size);
  using A = dynamic::KvCacheAppendArgs;
  bind_plan<dynamic::KvCacheAppendPlan>(
      m, "KvCacheAppendPlan",
      {input("key", &A::key), input("value", &A::value), input("slot_mapping", &A::slot_mapping),
       input("k_scale", &A::k_scale), input("v_scale", &A::v_scale), output("key_cache", &A::key_cache),
       output("value_cache", &A::value_cache)},
      "key_cache[slot // block_size, slot % block_size] = key (or key / k_scale quantized), value likewise, for "
      "every token whose slot is in [0, num_blocks * block_size).");
}

}  // namespace baracuda::python
