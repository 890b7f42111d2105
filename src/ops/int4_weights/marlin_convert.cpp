// Logical int4 weights ↔ Marlin (with GPTQ act-order's row sort), and the GPTQ → Marlin and AWQ → Marlin
// converters built on them.
#include <algorithm>
#include <numeric>
#include <string>

#include "ops/int4_weights/common.hpp"

namespace baracuda {

using namespace int4;

Result<std::vector<int32_t>> marlin_act_order_perm(std::span<const int32_t> g_idx, const Int4Shape& shape) {
  const std::string P = "marlin_act_order_perm";
  BARACUDA_TRY(check_shape(P, shape));
  BARACUDA_TRY(check_size(P, "g_idx", g_idx.size(), shape.k, "[K]"));
  BARACUDA_TRY(check_g_idx(P, g_idx, shape));
  // The Marlin GEMM gives sorted row i the scales of group i / group_rows: every group must hold exactly
  // group_rows rows (GPTQ's desc_act groups do).
  std::vector<int64_t> rows(static_cast<size_t>(shape.num_groups()), 0);
  for (int32_t g : g_idx) ++rows[g];
  for (size_t g = 0; g < rows.size(); ++g)
    if (rows[g] != shape.group_rows())
      return Error::invalid(P + ": group " + str(static_cast<int64_t>(g)) + " has " + str(rows[g]) +
                            " rows in g_idx; act-order needs exactly group_rows = " + str(shape.group_rows()) +
                            " per group");
  std::vector<int32_t> perm(static_cast<size_t>(shape.k));
  std::iota(perm.begin(), perm.end(), 0);
  std::stable_sort(perm.begin(), perm.end(), [&](int32_t a, int32_t b) { return g_idx[a] < g_idx[b]; });
  return perm;
}

Result<MarlinInt4Weights> marlin_from_int4(const Int4Weights& w, bool act_order) {
  const std::string P = "marlin_from_int4";
  BARACUDA_TRY(validate_int4_weights(w, P));
  BARACUDA_TRY(check_shape(P, w.shape, kMarlinShape));
  const int64_t K = w.shape.k, N = w.shape.n;
  MarlinInt4Weights m;
  m.shape = w.shape;
  m.scheme = w.scheme;
  std::span<const uint8_t> q = w.q;
  std::vector<uint8_t> sorted;
  if (act_order && w.shape.num_groups() > 1) {
    // vLLM's marlin_sort_g_idx: perm = argsort(g_idx) (stable here), rows gathered by perm.
    std::vector<int32_t> g = w.g_idx;
    if (g.empty())
      for (int64_t k = 0; k < K; ++k) g.push_back(static_cast<int32_t>(k / w.shape.group_rows()));
    auto perm = marlin_act_order_perm(g, w.shape);
    if (!perm) return perm.error();
    m.perm = std::move(perm.value());
    m.g_idx.resize(static_cast<size_t>(K));
    sorted.resize(w.q.size());
    for (int64_t i = 0; i < K; ++i) {
      m.g_idx[i] = g[m.perm[i]];
      std::copy_n(w.q.begin() + m.perm[i] * N, N, sorted.begin() + i * N);
    }
    q = sorted;
  } else if (!is_plain_grouping(w.g_idx, w.shape)) {
    return Error::invalid(P + ": g_idx is not k / group; convert with act_order = true");
  }
  auto qw = marlin_pack(q, K, N);
  if (!qw) return qw.error();
  m.qweight = std::move(qw.value());
  auto s = marlin_permute_scales(w.scales, w.shape);
  if (!s) return s.error();
  m.scales = std::move(s.value());
  if (w.scheme == Int4Scheme::Asymmetric) {
    auto z = marlin_pack_zeros(w.zeros, w.shape);
    if (!z) return z.error();
    m.zeros = std::move(z.value());
  }
  return m;
}

Result<Int4Weights> int4_from_marlin(const MarlinInt4View& m, const Int4Shape& shape, Int4Scheme scheme) {
  const std::string P = "int4_from_marlin";
  BARACUDA_TRY(check_shape_and_scheme(P, shape, scheme, kMarlinShape));
  const int64_t K = shape.k, N = shape.n, G = shape.num_groups();
  BARACUDA_TRY(check_size(P, "qweight", m.qweight.size(), K * N / 8, "[K/16, 2N]"));
  BARACUDA_TRY(check_size(P, "scales", m.scales.size(), G * N, "[G, N]"));
  BARACUDA_TRY(check_size(P, "zeros", m.zeros.size(), scheme == Int4Scheme::Asymmetric ? G * N / 8 : 0,
                          scheme == Int4Scheme::Asymmetric ? "[G, N/8]" : "none for Symmetric"));
  if (!m.perm.empty() || !m.g_idx.empty()) {
    BARACUDA_TRY(check_size(P, "perm", m.perm.size(), K, "[K] with act-order"));
    BARACUDA_TRY(check_size(P, "g_idx", m.g_idx.size(), K, "[K] with act-order"));
    BARACUDA_TRY(check_g_idx(P, m.g_idx, shape));
    std::vector<bool> seen(static_cast<size_t>(K), false);
    for (int64_t i = 0; i < K; ++i) {
      if (m.perm[i] < 0 || m.perm[i] >= K || seen[m.perm[i]])
        return Error::invalid(P + ": perm is not a permutation of [0, K): perm[" + str(i) + "] = " + str(m.perm[i]));
      seen[m.perm[i]] = true;
    }
  }
  auto q = marlin_unpack(m.qweight, K, N);
  if (!q) return q.error();
  auto s = marlin_unpermute_scales(m.scales, shape);
  if (!s) return s.error();
  Int4Weights w;
  w.shape = shape;
  w.scheme = scheme;
  w.scales = std::move(s.value());
  if (scheme == Int4Scheme::Asymmetric) {
    auto z = marlin_unpack_zeros(m.zeros, shape);
    if (!z) return z.error();
    w.zeros = std::move(z.value());
  }
  if (m.perm.empty()) {
    w.q = std::move(q.value());
  } else {
    w.q.resize(static_cast<size_t>(K * N));
    w.g_idx.resize(static_cast<size_t>(K));
    for (int64_t i = 0; i < K; ++i) {
      std::copy_n(q.value().begin() + i * N, N, w.q.begin() + m.perm[i] * N);
      w.g_idx[m.perm[i]] = m.g_idx[i];
    }
  }
  return w;
}

Result<MarlinInt4Weights> gptq_to_marlin(const GptqCheckpointView& ckpt, const Int4Shape& shape,
                                         Int4Scheme scheme, bool act_order) {
  const std::string P = "gptq_to_marlin";
  BARACUDA_TRY(check_shape(P, shape, kMarlinShape));
  auto w = gptq_unpack(ckpt, shape, scheme);
  if (!w) return w.error();
  return marlin_from_int4(w.value(), act_order);
}

Result<MarlinInt4Weights> awq_to_marlin(const AwqCheckpointView& ckpt, const Int4Shape& shape) {
  const std::string P = "awq_to_marlin";
  BARACUDA_TRY(check_shape(P, shape, kMarlinShape));
  auto w = awq_unpack(ckpt, shape);
  if (!w) return w.error();
  return marlin_from_int4(w.value(), false);
}

}  // namespace baracuda
