// Bindings of the attention forward (FlashAttentionPlan) and backward (FlashAttentionBackwardPlan):
// FlashAttentionDescriptor, which both take, and the erased plans.
#include <string_view>

#include "baracuda/ops/attention.hpp"
#include "baracuda/ops/attention_backward.hpp"
#include "common.hpp"

namespace baracuda::python {

BARACUDA_PY_NAMED_BY_TO_STRING(FlashAttentionTile, 3, "attention query tile");

void bind_attention(nb::module_& m) {
  using D = FlashAttentionDescriptor;
  nb::class_<D> d(m, "FlashAttentionDescriptor",
                  "Attention forward: o = softmax(τ·q·kᵀ + mask)·v per batch and query head, with the optional "
                  "natural-log lse; q [T_q, H, d], k and v [T_k, H_kv, d]; padded batches (T = B·S) or packed ones "
                  "(varlen, cu_seqlens in device memory; seqlen_q/k then the longest lengths); bottom-right causal "
                  "and window masks; softmax_scale 0: 1/√d; tile auto, rows64 or rows128 (sim and cuda; attention.hpp's "
                  "rules).");
  d.def(
      "__init__",
      [](D* self, int64_t batch, int64_t seqlen_q, int64_t seqlen_k, int64_t heads, int64_t kv_heads, int64_t head_dim,
         std::string_view element, bool varlen, int64_t total_q, int64_t total_k, bool causal, int64_t window_left,
         int64_t window_right, double softmax_scale, bool return_lse, std::string_view tile) {
        D r;
        r.with_shape(batch, seqlen_q, seqlen_k, heads, kv_heads, head_dim)
            .with_element(parse_name<ElementKind>(element))
            .with_causal(causal)
            .with_window(window_left, window_right)
            .with_scale(softmax_scale)
            .with_lse(return_lse)
            .with_tile(parse_name<FlashAttentionTile>(tile));
        if (varlen) r.with_varlen(total_q, total_k, seqlen_q, seqlen_k);
        new (self) D(r);
      },
      nb::arg("batch"), nb::arg("seqlen_q"), nb::arg("seqlen_k"), nb::arg("heads"), nb::arg("kv_heads"),
      nb::arg("head_dim"), nb::arg("element") = "f16", nb::arg("varlen") = false, nb::arg("total_q") = 0,
      nb::arg("total_k") = 0, nb::arg("causal") = false, nb::arg("window_left") = -1, nb::arg("window_right") = -1,
      nb::arg("softmax_scale") = 0.0, nb::arg("return_lse") = false, nb::arg("tile") = "auto");
  d.def_rw("batch", &D::batch)
      .def_rw("seqlen_q", &D::seqlen_q)
      .def_rw("seqlen_k", &D::seqlen_k)
      .def_rw("heads", &D::heads)
      .def_rw("kv_heads", &D::kv_heads)
      .def_rw("head_dim", &D::head_dim)
      .def_rw("varlen", &D::varlen)
      .def_rw("total_q", &D::total_q)
      .def_rw("total_k", &D::total_k)
      .def_rw("causal", &D::causal)
      .def_rw("window_left", &D::window_left)
      .def_rw("window_right", &D::window_right)
      .def_rw("softmax_scale", &D::softmax_scale)
      .def_rw("return_lse", &D::return_lse);
  enum_property(d, "element", &D::element, "q's, k's, v's and o's kind (f16 or bf16).");
  enum_property(d, "tile", &D::tile,
                "The forward's query tile: auto (rows128 for long sequences at head dims up to 128, else rows64: "
                "attention.hpp), rows64 or rows128 (head dims up to 128); the same bits either way. The backward "
                "ignores it.");
  using A = dynamic::FlashAttentionArgs;
  bind_plan<dynamic::FlashAttentionPlan>(
      m, "FlashAttentionPlan",
      {input("q", &A::q), input("k", &A::k), input("v", &A::v), input("cu_seqlens_q", &A::cu_seqlens_q),
       input("cu_seqlens_k", &A::cu_seqlens_k), output("o", &A::o), output("lse", &A::lse)},
      "Attention forward (FlashAttention-2): o [T_q, H, d] and, with return_lse, lse (f32 [B, H, S_q], or [H, "
      "T_q] varlen); a query that sees no key gets o = 0 and lse = +inf.");
  using B = dynamic::FlashAttentionBackwardArgs;
  bind_plan<dynamic::FlashAttentionBackwardPlan>(
      m, "FlashAttentionBackwardPlan",
      {input("q", &B::q), input("k", &B::k), input("v", &B::v), input("o", &B::o), input("d_o", &B::d_o),
       input("lse", &B::lse), input("cu_seqlens_q", &B::cu_seqlens_q), input("cu_seqlens_k", &B::cu_seqlens_k),
       output("dq", &B::dq), output("dk", &B::dk), output("dv", &B::dv)},
      "Attention backward (FlashAttention-2, deterministic): dq [T_q, H, d], dk and dv [T_k, H_kv, d] from q, k, v, "
      "the forward's o and lse and d_o (attention_backward.hpp); head dims 64, 96 and 128; workspace: D in f32.");
}

}  // namespace baracuda::python
