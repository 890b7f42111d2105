// The GPTQ (AutoGPTQ qlinear_cuda_old / exllama) and AWQ GEMM (AutoAWQ WQLinear_GEMM) checkpoint formats:
// packing logical int4 weights into their tensors and back.
#include <string>

#include "ops/int4_weights/common.hpp"

namespace baracuda {

using namespace int4;

namespace {

constexpr ShapeRules kGptqShape{8, 8};  // qweight packs 8 rows of K, qzeros 8 columns of N
constexpr ShapeRules kAwqShape{1, 8};   // qweight and qzeros pack 8 columns of N

/// Packs [rows, N] nibbles along N, 8 per word: nibble i of word (r, c) is v[r, 8c + order[i]].
std::vector<int32_t> pack_along_n(std::span<const uint8_t> v, int64_t rows, int64_t n, const int* order) {
  std::vector<int32_t> out(static_cast<size_t>(rows * n / 8));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < n / 8; ++c) {
      uint32_t word = 0;
      for (int i = 0; i < 8; ++i) word |= static_cast<uint32_t>(v[r * n + 8 * c + order[i]]) << (4 * i);
      out[r * (n / 8) + c] = static_cast<int32_t>(word);
    }
  return out;
}

/// The inverse of pack_along_n.
std::vector<uint8_t> unpack_along_n(std::span<const int32_t> words, int64_t rows, int64_t n, const int* order) {
  std::vector<uint8_t> v(static_cast<size_t>(rows * n));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < n / 8; ++c) {
      const auto word = static_cast<uint32_t>(words[r * (n / 8) + c]);
      for (int i = 0; i < 8; ++i) v[r * n + 8 * c + order[i]] = static_cast<uint8_t>(nibble(word, i));
    }
  return v;
}

constexpr int kNatural[8] = {0, 1, 2, 3, 4, 5, 6, 7};

std::vector<int32_t> plain_g_idx(const Int4Shape& s) {
  std::vector<int32_t> g(static_cast<size_t>(s.k));
  for (int64_t k = 0; k < s.k; ++k) g[k] = static_cast<int32_t>(k / s.group_rows());
  return g;
}

}  // namespace

Result<GptqCheckpoint> gptq_pack(const Int4Weights& w) {
  const std::string P = "gptq_pack";
  BARACUDA_TRY(validate_int4_weights(w, P));
  BARACUDA_TRY(check_shape(P, w.shape, kGptqShape));
  const int64_t K = w.shape.k, N = w.shape.n, G = w.shape.num_groups();
  GptqCheckpoint c;
  c.shape = w.shape;
  // qweight [K/8, N]: nibble i of word (r, n) is q[8r + i, n].
  c.qweight.resize(static_cast<size_t>(K / 8 * N));
  for (int64_t r = 0; r < K / 8; ++r)
    for (int64_t n = 0; n < N; ++n) {
      uint32_t word = 0;
      for (int i = 0; i < 8; ++i) word |= static_cast<uint32_t>(w.q[(8 * r + i) * N + n]) << (4 * i);
      c.qweight[r * N + n] = static_cast<int32_t>(word);
    }
  // qzeros [G, N/8]: z − 1 along N, natural order.
  std::vector<uint8_t> zm1(static_cast<size_t>(G * N), 7);  // Symmetric: z = 8
  if (w.scheme == Int4Scheme::Asymmetric) {
    for (int64_t i = 0; i < G * N; ++i) {
      if (w.zeros[i] == 0)
        return Error::invalid(P + ": zeros[" + str(i) + "] = 0 cannot be stored: GPTQ keeps z - 1 in a nibble");
      zm1[i] = static_cast<uint8_t>(w.zeros[i] - 1);
    }
  }
  c.qzeros = pack_along_n(zm1, G, N, kNatural);
  c.scales = w.scales;
  c.g_idx = w.g_idx.empty() ? plain_g_idx(w.shape) : w.g_idx;
  return c;
}

Result<Int4Weights> gptq_unpack(const GptqCheckpointView& ckpt, const Int4Shape& shape, Int4Scheme scheme) {
  const std::string P = "gptq_unpack";
  BARACUDA_TRY(check_shape_and_scheme(P, shape, scheme, kGptqShape));
  const int64_t K = shape.k, N = shape.n, G = shape.num_groups();
  BARACUDA_TRY(check_size(P, "qweight", ckpt.qweight.size(), K / 8 * N, "[K/8, N]"));
  BARACUDA_TRY(check_size(P, "scales", ckpt.scales.size(), G * N, "[G, N]"));
  if (scheme == Int4Scheme::Asymmetric || !ckpt.qzeros.empty())
    BARACUDA_TRY(check_size(P, "qzeros", ckpt.qzeros.size(), G * N / 8, "[G, N/8]"));
  BARACUDA_TRY(check_g_idx(P, ckpt.g_idx, shape));
  Int4Weights w;
  w.shape = shape;
  w.scheme = scheme;
  w.q.resize(static_cast<size_t>(K * N));
  for (int64_t r = 0; r < K / 8; ++r)
    for (int64_t n = 0; n < N; ++n) {
      const auto word = static_cast<uint32_t>(ckpt.qweight[r * N + n]);
      for (int i = 0; i < 8; ++i) w.q[(8 * r + i) * N + n] = static_cast<uint8_t>(nibble(word, i));
    }
  if (scheme == Int4Scheme::Asymmetric) {
    w.zeros = unpack_along_n(ckpt.qzeros, G, N, kNatural);
    for (int64_t i = 0; i < G * N; ++i) {
      if (w.zeros[i] == 15)
        return Error::invalid(P + ": qzeros nibble " + str(i) + " is 15: z = 16 is not a 4-bit zero point");
      ++w.zeros[i];
    }
  }
  w.scales.assign(ckpt.scales.begin(), ckpt.scales.end());
  w.g_idx.assign(ckpt.g_idx.begin(), ckpt.g_idx.end());
  return w;
}

Result<AwqCheckpoint> awq_pack(const Int4Weights& w) {
  const std::string P = "awq_pack";
  BARACUDA_TRY(validate_int4_weights(w, P));
  BARACUDA_TRY(check_shape(P, w.shape, kAwqShape));
  if (!is_plain_grouping(w.g_idx, w.shape))
    return Error::invalid(P + ": g_idx is not k / group: AWQ has no act-order");
  const int64_t K = w.shape.k, N = w.shape.n, G = w.shape.num_groups();
  AwqCheckpoint c;
  c.shape = w.shape;
  c.qweight = pack_along_n(w.q, K, N, kInterleave);
  if (w.scheme == Int4Scheme::Asymmetric) {
    c.qzeros = pack_along_n(w.zeros, G, N, kInterleave);
  } else {
    c.qzeros = pack_along_n(std::vector<uint8_t>(static_cast<size_t>(G * N), 8), G, N, kInterleave);
  }
  c.scales = w.scales;
  return c;
}

Result<Int4Weights> awq_unpack(const AwqCheckpointView& ckpt, const Int4Shape& shape) {
  const std::string P = "awq_unpack";
  BARACUDA_TRY(check_shape(P, shape, kAwqShape));
  const int64_t K = shape.k, N = shape.n, G = shape.num_groups();
  BARACUDA_TRY(check_size(P, "qweight", ckpt.qweight.size(), K * N / 8, "[K, N/8]"));
  BARACUDA_TRY(check_size(P, "qzeros", ckpt.qzeros.size(), G * N / 8, "[G, N/8]"));
  BARACUDA_TRY(check_size(P, "scales", ckpt.scales.size(), G * N, "[G, N]"));
  Int4Weights w;
  w.shape = shape;
  w.scheme = Int4Scheme::Asymmetric;
  w.q = unpack_along_n(ckpt.qweight, K, N, kInterleave);
  w.zeros = unpack_along_n(ckpt.qzeros, G, N, kInterleave);
  w.scales.assign(ckpt.scales.begin(), ckpt.scales.end());
  return w;
}

}  // namespace baracuda
