// Bindings of paged decode attention (PagedDecodePlan): PagedDecodeDescriptor and the erased plan.
#include <string_view>

#include "baracuda/ops/paged_attention.hpp"
#include "common.hpp"

namespace baracuda::python {

// The same names as kv_cache_bind.cpp's (one identical definition per translation unit that reads them).
BARACUDA_PY_NAMED_BY_TO_STRING(KvScaleLayout, 2, "kv scale layout");
BARACUDA_PY_NAMED_BY_TO_STRING(PagedDecodeKernel, 3, "paged decode kernel");

void bind_paged_decode(nb::module_& m) {
  using D = PagedDecodeDescriptor;
  nb::class_<D> d(m, "PagedDecodeDescriptor",
                  "Decode attention over the paged KV cache: q [B*q_len, H, d] against each sequence's keys, "
                  "gathered through block_tables [B, max_blocks_per_seq] from key_cache/value_cache [num_blocks, "
                  "block_size, H_kv, d] (element, fp8e4m3 or s8 dequantized with k_scale/v_scale), "
                  "context_lens [B] (clamped to the table; page ids outside the cache masked), bottom-right causal "
                  "among the q_len new tokens, optional window_left; num_splits 0: the plan chooses "
                  "(paged_attention.hpp's rules); kernel auto, cuda_cores or tensor_cores (sim and cuda).");
  d.def(
      "__init__",
      [](D* self, int64_t batch, int64_t q_len, int64_t heads, int64_t kv_heads, int64_t head_dim, int64_t num_blocks,
         int64_t block_size, int64_t max_blocks_per_seq, std::string_view element, std::string_view cache_kind,
         std::string_view scale_layout, double softmax_scale, bool return_lse, int64_t window_left,
         int64_t num_splits, std::string_view kernel) {
        D r;
        r.with_kinds(parse_name<ElementKind>(element), parse_name<ElementKind>(cache_kind))
            .with_shape(batch, q_len, heads, kv_heads, head_dim)
            .with_pages(num_blocks, block_size, max_blocks_per_seq)
            .with_scale_layout(parse_name<KvScaleLayout>(scale_layout))
            .with_scale(softmax_scale)
            .with_lse(return_lse)
            .with_window(window_left)
            .with_splits(num_splits)
            .with_kernel(parse_name<PagedDecodeKernel>(kernel));
        new (self) D(r);
      },
      nb::arg("batch"), nb::arg("q_len"), nb::arg("heads"), nb::arg("kv_heads"), nb::arg("head_dim"),
      nb::arg("num_blocks"), nb::arg("block_size"), nb::arg("max_blocks_per_seq"), nb::arg("element") = "f16",
      nb::arg("cache_kind") = "f16", nb::arg("scale_layout") = "per_tensor", nb::arg("softmax_scale") = 0.0,
      nb::arg("return_lse") = false, nb::arg("window_left") = -1, nb::arg("num_splits") = 0,
      nb::arg("kernel") = "auto");
  d.def_rw("batch", &D::batch)
      .def_rw("q_len", &D::q_len)
      .def_rw("heads", &D::heads)
      .def_rw("kv_heads", &D::kv_heads)
      .def_rw("head_dim", &D::head_dim)
      .def_rw("num_blocks", &D::num_blocks)
      .def_rw("block_size", &D::block_size)
      .def_rw("max_blocks_per_seq", &D::max_blocks_per_seq)
      .def_rw("softmax_scale", &D::softmax_scale)
      .def_rw("return_lse", &D::return_lse)
      .def_rw("window_left", &D::window_left)
      .def_rw("num_splits", &D::num_splits);
  enum_property(d, "element", &D::element, "q's and o's kind (f16 or bf16).");
  enum_property(d, "cache_kind", &D::cache_kind, "The caches' kind: element, fp8e4m3 or s8.");
  enum_property(d, "scale_layout", &D::scale_layout, "per_tensor ([1]) or per_head ([kv_heads]).");
  enum_property(d, "kernel", &D::kernel,
                "auto (tensor_cores from 16 sequences over a 16-bit cache at head dim 128, else cuda_cores: "
                "paged_attention.hpp), cuda_cores or tensor_cores (head dims up to 128).");
  using A = dynamic::PagedDecodeArgs;
  bind_plan<dynamic::PagedDecodePlan>(
      m, "PagedDecodePlan",
      {input("q", &A::q), input("key_cache", &A::key_cache), input("value_cache", &A::value_cache),
       input("block_tables", &A::block_tables), input("context_lens", &A::context_lens), input("k_scale", &A::k_scale),
       input("v_scale", &A::v_scale), output("o", &A::o), output("lse", &A::lse)},
      "Paged decode attention (split-KV): o [B*q_len, H, d] and, with return_lse, lse (f32 [B*q_len, H]); a "
      "query that sees no key gets o = 0 and lse = +inf. Takes workspace_size bytes of workspace.")
      .def_prop_ro("chosen_splits", &dynamic::PagedDecodePlan::chosen_splits,
                   "The number of KV splits the kernels use (1 on the host device).");
}

}  // namespace baracuda::python
