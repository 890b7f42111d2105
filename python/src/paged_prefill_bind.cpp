// Bindings of chunked prefill attention over the paged KV cache (PagedPrefillPlan): PagedPrefillDescriptor and the
// erased plan.
#include <string_view>

#include "baracuda/ops/paged_prefill.hpp"
#include "common.hpp"

namespace baracuda::python {

// The same names as kv_cache_bind.cpp's and attention_bind.cpp's (one identical definition per translation unit that
// reads them).
BARACUDA_PY_NAMED_BY_TO_STRING(KvScaleLayout, 2, "kv scale layout");
BARACUDA_PY_NAMED_BY_TO_STRING(FlashAttentionTile, 3, "attention query tile");

void bind_paged_prefill(nb::module_& m) {
  using D = PagedPrefillDescriptor;
  nb::class_<D> d(m, "PagedPrefillDescriptor",
                  "Chunked prefill attention over the paged KV cache: packed q [total_q, H, d] (sequence b's chunk "
                  "rows cu_seqlens_q[b] .. cu_seqlens_q[b + 1] - 1, at most max_seqlen_q of them) against each "
                  "sequence's keys, gathered through block_tables [B, max_blocks_per_seq] from key_cache/value_cache "
                  "[num_blocks, block_size, H_kv, d] (cache_kind: the element kind, the default, or fp8e4m3 / s8 "
                  "dequantized with k_scale/v_scale per scale_layout), context_lens [B] (the chunk included; "
                  "clamped to the table; page ids outside the cache masked); bottom-right causal by default, optional "
                  "window_left; softmax_scale 0: 1/√d; tile auto, rows64 or rows128 (sim and cuda; paged_prefill.hpp's "
                  "rules).");
  d.def(
      "__init__",
      [](D* self, int64_t batch, int64_t total_q, int64_t max_seqlen_q, int64_t heads, int64_t kv_heads,
         int64_t head_dim, int64_t num_blocks, int64_t block_size, int64_t max_blocks_per_seq, std::string_view element,
         std::string_view cache_kind, std::string_view scale_layout, bool causal, int64_t window_left,
         double softmax_scale, bool return_lse, std::string_view tile) {
        const ElementKind e = parse_name<ElementKind>(element);
        D r;
        r.with_kinds(e, cache_kind.empty() ? e : parse_name<ElementKind>(cache_kind))
            .with_scale_layout(parse_name<KvScaleLayout>(scale_layout))
            .with_shape(batch, total_q, max_seqlen_q, heads, kv_heads, head_dim)
            .with_pages(num_blocks, block_size, max_blocks_per_seq)
            .with_causal(causal)
            .with_window(window_left)
            .with_scale(softmax_scale)
            .with_lse(return_lse)
            .with_tile(parse_name<FlashAttentionTile>(tile));
        new (self) D(r);
      },
      nb::arg("batch"), nb::arg("total_q"), nb::arg("max_seqlen_q"), nb::arg("heads"), nb::arg("kv_heads"),
      nb::arg("head_dim"), nb::arg("num_blocks"), nb::arg("block_size"), nb::arg("max_blocks_per_seq"),
      nb::arg("element") = "f16", nb::arg("cache_kind") = "", nb::arg("scale_layout") = "per_tensor",
      nb::arg("causal") = true, nb::arg("window_left") = -1, nb::arg("softmax_scale") = 0.0,
      nb::arg("return_lse") = false, nb::arg("tile") = "auto");
  d.def_rw("batch", &D::batch)
      .def_rw("total_q", &D::total_q)
      .def_rw("max_seqlen_q", &D::max_seqlen_q)
      .def_rw("heads", &D::heads)
      .def_rw("kv_heads", &D::kv_heads)
      .def_rw("head_dim", &D::head_dim)
      .def_rw("num_blocks", &D::num_blocks)
      .def_rw("block_size", &D::block_size)
      .def_rw("max_blocks_per_seq", &D::max_blocks_per_seq)
      .def_rw("causal", &D::causal)
      .def_rw("window_left", &D::window_left)
      .def_rw("softmax_scale", &D::softmax_scale)
      .def_rw("return_lse", &D::return_lse);
  enum_property(d, "element", &D::element, "q's and o's kind (f16 or bf16).");
  enum_property(d, "cache_kind", &D::cache_kind, "The caches' kind: element, fp8e4m3 or s8.");
  enum_property(d, "scale_layout", &D::scale_layout, "per_tensor ([1]) or per_head ([kv_heads]).");
  enum_property(d, "tile", &D::tile,
                "The query tile: auto (rows128 for long chunks at head dims up to 128, else rows64: "
                "paged_prefill.hpp), rows64 or rows128 (head dims up to 128); the same bits either way.");
  using A = dynamic::PagedPrefillArgs;
  bind_plan<dynamic::PagedPrefillPlan>(
      m, "PagedPrefillPlan",
      {input("q", &A::q), input("key_cache", &A::key_cache), input("value_cache", &A::value_cache),
       input("block_tables", &A::block_tables), input("context_lens", &A::context_lens),
       input("cu_seqlens_q", &A::cu_seqlens_q), input("k_scale", &A::k_scale), input("v_scale", &A::v_scale),
       output("o", &A::o), output("lse", &A::lse)},
      "Chunked prefill attention over the paged KV cache (FlashAttention-2 reading K/V through the block table): "
      "o [total_q, H, d] and, with return_lse, lse (f32 [H, total_q]); a query that sees no key gets o = 0 and "
      "lse = +inf. No workspace.");
}

}  // namespace baracuda::python
