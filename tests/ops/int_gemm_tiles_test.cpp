// The int8 GEMM's tile set (src/ops/int_gemm/tuning.hpp): the rule that picks a tile, and every tile of the
// sm_90 set run directly on the sim device (int_gemm_tiles_kernels.cu) against the host reference, at
// shapes where each tile has ragged M/N/K edges and a K long enough for its pipeline to wrap around its
// stages. The plans' own tests (int_gemm_test) go through the rule, which on sim's one multiprocessor picks
// decode or large; this is where the medium tile runs in CI. The wgmma kernel (wgmma_kernels.cuh), which a
// compute capability 9.0 GPU runs past decode, runs here at each candidate tile and through every entry of
// the wgmma table the plans dispatch to (device_wgmma.cu), at one or two blocks per case to keep the
// emulation of 256- and 384-thread blocks cheap.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "baracuda/baracuda.hpp"
#include "int_gemm_tiles_kernels.hpp"
#include "support/random.hpp"
#include "support/sim_context.hpp"

namespace baracuda::test {
namespace {

using detail::IntGemmTileKind;
constexpr detail::IntGemmTileSet kSet = detail::kIntGemmTilesSm90;

TEST(IntGemmTiles, RuleOnAnH100) {
  constexpr int kSms = 132;
  // Decode for a handful of tokens, whatever N.
  EXPECT_EQ(detail::choose(kSet, 1, 4096, kSms), IntGemmTileKind::Decode);
  EXPECT_EQ(detail::choose(kSet, 16, 11008, kSms), IntGemmTileKind::Decode);
  // Large when it gives at least half a block per SM, medium when only medium does, else decode.
  EXPECT_EQ(detail::choose(kSet, 64, 11008, kSms), IntGemmTileKind::Large);   // 86 large blocks
  EXPECT_EQ(detail::choose(kSet, 128, 4096, kSms), IntGemmTileKind::Medium);  // 32 large, 128 medium
  EXPECT_EQ(detail::choose(kSet, 64, 4096, kSms), IntGemmTileKind::Decode);   // 32 large, 64 medium
  EXPECT_EQ(detail::choose(kSet, 2048, 4096, kSms), IntGemmTileKind::Large);
  // The emulator's single multiprocessor: large for anything past decode.
  EXPECT_EQ(detail::choose(kSet, 17, 1, 1), IntGemmTileKind::Large);
}

struct TileCase {
  IntGemmTileKind tile;
  int64_t m, n, k;
};
/// What selects the kernel of a case: its tile.
IntGemmTileKind selector(const TileCase& c) { return c.tile; }

const TileCase kCases[] = {
    {IntGemmTileKind::Decode, 1, 40, 1040},  {IntGemmTileKind::Decode, 16, 65, 272},
    {IntGemmTileKind::Decode, 9, 33, 16},    {IntGemmTileKind::Medium, 33, 70, 400},
    {IntGemmTileKind::Medium, 64, 129, 48},  {IntGemmTileKind::Medium, 65, 64, 16},
    {IntGemmTileKind::Large, 130, 40, 400},  {IntGemmTileKind::Large, 17, 129, 528},
};

std::string name(const TileCase& c) {
  const char* t = c.tile == IntGemmTileKind::Decode ? "decode" : c.tile == IntGemmTileKind::Medium ? "medium" : "large";
  return std::string(t) + " " + std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k);
}

DynTensor mat(void* p, ElementKind k, int64_t rows, int64_t cols) { return DynTensor::dense(p, k, Shape{rows, cols}); }
DynTensor vec(void* p, ElementKind k, int64_t n) { return DynTensor::dense(p, k, Shape{n}); }

/// IntGemm (`ka` × `kb` → s32, s8 × s8 unless given) of an m×n×k problem with random operands (seeds from
/// `seed`) through `run(sim, launch)` — one tile or candidate on sim — bit for bit against the host reference.
template <class Run>
void expect_int_gemm_exact(int64_t m, int64_t n, int64_t k, uint64_t seed, Run&& run, ElementKind ka = ElementKind::S8,
                           ElementKind kb = ElementKind::S8) {
  const detail::ExecContext sim = sim_context();
  const detail::ExecContext host = *detail::make_exec_context(Stream::host());
  const detail::IntGemmFn reference = reference::int_gemm_tables().int_gemm[detail::kind_index(ka)][detail::kind_index(kb)];
  ASSERT_NE(reference, nullptr);
  std::vector<uint8_t> a = random_bits(ka, m * k, seed + 1 + m);
  std::vector<uint8_t> b = random_bits(kb, n * k, seed + 2 + n);
  std::vector<int32_t> want(m * n, 0x5a5a5a5a), got(m * n, 0x5a5a5a5a);
  detail::IntGemmLaunch l{m, n, k, mat(a.data(), ka, m, k), mat(b.data(), kb, n, k),
                          mat(want.data(), ElementKind::S32, m, n)};
  ASSERT_TRUE(reference(host, l).is_ok());
  l.c = mat(got.data(), ElementKind::S32, m, n);
  const Status s = run(sim, l);
  ASSERT_TRUE(s.is_ok()) << s.error().to_string();
  EXPECT_EQ(got, want);
}

/// The linear epilogue (bias, per-token and per-channel scales; symmetric or asymmetric; an s8 activation and
/// a bf16 output unless given) of an m×n×k problem through `run(sim, launch)`, bit for bit against the host
/// reference (int_gemm.hpp's promise without an activation).
template <class Run>
void expect_linear_exact(int64_t m, int64_t n, int64_t k, bool asym, uint64_t seed, Run&& run,
                         ElementKind ka = ElementKind::S8, ElementKind out = ElementKind::Bf16) {
  SCOPED_TRACE(asym ? "asymmetric" : "symmetric");
  const detail::ExecContext sim = sim_context();
  const detail::ExecContext host = *detail::make_exec_context(Stream::host());
  const detail::LinearFn reference = reference::int_gemm_tables().linear[detail::kind_index(ka)][detail::kind_index(out)];
  ASSERT_NE(reference, nullptr);
  std::vector<uint8_t> a = random_bits(ka, m * k, seed + 3 + m);
  std::vector<uint8_t> w = random_bits(ElementKind::S8, n * k, seed + 4 + n);
  std::vector<double> unused;
  std::vector<uint8_t> a_scale = random_floats(ElementKind::F32, m, 1e-3, 1e-2, seed + 5, &unused);
  std::vector<uint8_t> w_scale = random_floats(ElementKind::F32, n, 1e-3, 4e-3, seed + 6, &unused);
  std::vector<uint8_t> bias = random_floats(out, n, -2, 2, seed + 7, &unused);
  std::vector<int32_t> zp(m);
  for (int64_t i = 0; i < m; ++i) zp[i] = static_cast<int32_t>((i * 37) % 41) - 20;
  std::vector<uint8_t> want(m * n * element_bits(out) / 8, 0xA5), got = want;
  detail::LinearLaunch l;
  l.m = m, l.n = n, l.k = k;
  l.a = mat(a.data(), ka, m, k);
  l.w = mat(w.data(), ElementKind::S8, n, k);
  l.a_scale = vec(a_scale.data(), ElementKind::F32, m);
  if (asym) l.a_zero_point = vec(zp.data(), ElementKind::S32, m);
  l.w_scale = vec(w_scale.data(), ElementKind::F32, n);
  l.bias = vec(bias.data(), out, n);
  l.y = mat(want.data(), out, m, n);
  ASSERT_TRUE(reference(host, l).is_ok());
  l.y = mat(got.data(), out, m, n);
  const Status s = run(sim, l);
  ASSERT_TRUE(s.is_ok()) << s.error().to_string();
  EXPECT_EQ(got, want);
}

/// The GEMM exact on sim for every case of `cases` (each named by name(c)) through
/// `run(selector(c), sim, launch)`.
template <class Cases, class Run>
void expect_every_case_exact(const Cases& cases, uint64_t seed, Run run) {
  for (const auto& c : cases) {
    SCOPED_TRACE(name(c));
    expect_int_gemm_exact(c.m, c.n, c.k, seed,
                          [&](const auto& sim, const auto& l) { return run(selector(c), sim, l); });
  }
}

/// The linear epilogue, symmetric and asymmetric, exact on sim for every case of `cases` likewise.
template <class Cases, class Run>
void expect_every_case_linear_exact(const Cases& cases, uint64_t seed, Run run) {
  for (const auto& c : cases)
    for (bool asym : {false, true}) {
      SCOPED_TRACE(name(c));
      expect_linear_exact(c.m, c.n, c.k, asym, seed,
                          [&](const auto& sim, const auto& l) { return run(selector(c), sim, l); });
    }
}

TEST(IntGemmTiles, EveryTileExactOnSim) { expect_every_case_exact(kCases, 0, int_gemm_with_tile); }

// The linear epilogue at every tile.
TEST(IntGemmTiles, EveryTileLinearEpilogueOnSim) { expect_every_case_linear_exact(kCases, 0, linear_bf16_with_tile); }


// The wgmma kernel (sm_90a; wgmma_kernels.cuh) at each candidate tile, exact against the host reference on
// sim: ragged M/N/K, one or two blocks in M or N, K long enough for the pipeline to wrap around its stages
// (K = 688: 6 slices, the last one partial) for the first candidate, and K = 0.
struct WgmmaCase {
  int candidate;
  int64_t m, n, k;
};
// The TMA candidates (3..5) get the same kinds of shapes, with K = 688 and 1040 running 6 and 9 slices
// through 4 and 6 stages, so that each barrier passes through both parities. The K = 0 cases (no slice at
// all, C = 0) run the paths that zero the accumulators after the loop; they cannot show their absence on
// sim, where the never-written accumulators happen to read as zero.
constexpr WgmmaCase kWgmmaCases[] = {{0, 130, 70, 688}, {1, 17, 129, 16},   {2, 65, 257, 400}, {0, 5, 9, 0},
                                 {3, 130, 70, 688}, {4, 17, 129, 1040}, {5, 65, 257, 400}, {3, 5, 9, 0}};
static_assert([] {
  for (int c = 0; c < static_cast<int>(std::size(detail::kIntGemmWgmmaCandidates)); ++c) {
    bool covered = false;
    for (const WgmmaCase& w : kWgmmaCases) covered = covered || w.candidate == c;
    if (!covered) return false;
  }
  return true;
}(), "a case for every candidate");

/// What selects the kernel of a case: its candidate.
int selector(const WgmmaCase& c) { return c.candidate; }

std::string name(const WgmmaCase& c) {
  const auto& t = detail::kIntGemmWgmmaCandidates[c.candidate];
  return "wgmma 128x" + std::to_string(t.bn) + "x128 s" + std::to_string(t.stages) + (t.tma ? " tma " : " ") + std::to_string(c.m) + "x" +
         std::to_string(c.n) + "x" + std::to_string(c.k);
}

TEST(IntGemmTiles, WgmmaCandidatesExactOnSim) { expect_every_case_exact(kWgmmaCases, 10, int_gemm_wgmma); }

TEST(IntGemmTiles, WgmmaCandidatesLinearEpilogueOnSim) {
  expect_every_case_linear_exact(kWgmmaCases, 10, linear_bf16_wgmma);
}

// What a 9.0 GPU runs past decode (tuning.hpp's choose_wgmma, measured in docs/perf/2026-11-26-h100).
TEST(IntGemmTiles, WgmmaRuleOnAnH100) {
  using detail::IntGemmWgmmaKind;
  constexpr int kSms = 132;
  EXPECT_EQ(detail::choose_wgmma(kSet, 16, 4096, 4096, kSms, true), IntGemmWgmmaKind::None);  // decode's
  EXPECT_EQ(detail::choose_wgmma(kSet, 17, 4096, 4096, kSms, true), IntGemmWgmmaKind::Narrow);
  EXPECT_EQ(detail::choose_wgmma(kSet, 512, 4096, 4096, kSms, true), IntGemmWgmmaKind::Narrow);  // 64 wide blocks
  EXPECT_EQ(detail::choose_wgmma(kSet, 512, 11008, 4096, kSms, true), IntGemmWgmmaKind::Wide);   // 172 wide blocks
  // The linear epilogue: narrow when blocks × K ≥ SMs × 2048, else the mma.sync tiles.
  EXPECT_EQ(detail::choose_wgmma(kSet, 8192, 11008, 4096, kSms, false), IntGemmWgmmaKind::Narrow);
  EXPECT_EQ(detail::choose_wgmma(kSet, 128, 4096, 11008, kSms, false), IntGemmWgmmaKind::Narrow);  // 32 × 11008
  EXPECT_EQ(detail::choose_wgmma(kSet, 128, 4096, 4096, kSms, false), IntGemmWgmmaKind::None);     // 32 × 4096
  EXPECT_EQ(detail::choose_wgmma(kSet, 64, 11008, 4096, kSms, false), IntGemmWgmmaKind::Narrow);   // 86 × 4096
}

// Every entry of the wgmma table (device_wgmma.cu) that a 9.0 GPU's plans dispatch to, on sim: IntGemm at
// both tiles for each operand pair, the linear epilogue for each activation and output kind, symmetric and
// asymmetric, at a ragged shape of one or two blocks.
TEST(IntGemmTiles, WgmmaTableExactOnSim) {
  const detail::IntGemmWgmmaTables& t = ::baracuda::device_sim::int_gemm_wgmma_tables();
  int entries = 0;
  for (ElementKind ka : {ElementKind::S8, ElementKind::U8})
    for (ElementKind kb : {ElementKind::S8, ElementKind::U8})
      for (const auto* table : {&t.int_gemm_narrow, &t.int_gemm_wide}) {
        const detail::IntGemmFn fn = (*table)[detail::kind_index(ka)][detail::kind_index(kb)];
        ASSERT_NE(fn, nullptr);
        SCOPED_TRACE(std::string(to_string(ka)) + " x " + std::string(to_string(kb)) +
                     (table == &t.int_gemm_wide ? " wide" : " narrow"));
        expect_int_gemm_exact(130, 70, 160, 20, fn, ka, kb);
        ++entries;
      }
  for (ElementKind ka : {ElementKind::S8, ElementKind::U8})
    for (ElementKind out : {ElementKind::F16, ElementKind::Bf16, ElementKind::F32, ElementKind::F64}) {
      const detail::LinearFn fn = t.linear[detail::kind_index(ka)][detail::kind_index(out)];
      if (out == ElementKind::F64) {
        EXPECT_EQ(fn, nullptr) << "the f64 epilogue is the host reference's alone";
        continue;
      }
      ASSERT_NE(fn, nullptr);
      SCOPED_TRACE(std::string(to_string(ka)) + " -> " + std::string(to_string(out)));
      for (bool asym : {false, true}) expect_linear_exact(17, 129, 144, asym, 30, fn, ka, out);
      ++entries;
    }
  EXPECT_EQ(entries, 8 + 6);
}

}  // namespace
}  // namespace baracuda::test
