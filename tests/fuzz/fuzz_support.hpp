// The plan fuzzers' machinery: fuzz bytes read as descriptor fields, shapes, kinds and layouts; operands
// built from pools of the shapes and kinds a plan expects (so that valid calls are common and invalid ones
// are one mutation away); and one check every plan is put through:
//   can_implement, then run (when every operand has real memory behind its view) with a workspace of the
//   size asked for or a fuzzed smaller one; run must fail whenever can_implement failed, must succeed when
//   can_implement succeeded and the workspace is large enough (unless a data check of the operands' values fails:
//   data_check_failure), and nothing may crash or trip a sanitizer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "baracuda/baracuda.hpp"

namespace baracuda::fuzz {

/// Reads the fuzz input front to back; past its end every read is 0.
class FuzzInput {
 public:
  FuzzInput(const uint8_t* data, size_t size) : p_(data), n_(size) {}
  uint8_t u8() { return i_ < n_ ? p_[i_++] : 0; }
  uint64_t u64() {
    uint64_t v = 0;
    for (int b = 0; b < 8; ++b) v |= static_cast<uint64_t>(u8()) << (8 * b);
    return v;
  }
  /// Uniform-ish in [0, n).
  size_t pick(size_t n) { return n == 0 ? 0 : (static_cast<size_t>(u8()) | (static_cast<size_t>(u8()) << 8)) % n; }
  /// True with probability about num/256.
  bool chance(int num) { return u8() < num; }
  bool flag() { return (u8() & 1) != 0; }
  /// A value of an enum with `count` values, sometimes one past its end (an invalid value).
  template <class E>
  E enum_of(size_t count) {
    return static_cast<E>(chance(8) ? count + u8() % 3 : pick(count));
  }
  ElementKind kind() { return enum_of<ElementKind>(kNumElementKinds); }
  /// An extent: mostly small, sometimes 0, negative or huge (the overflow cases).
  int64_t extent() {
    const uint8_t c = u8();
    if (c < 200) return c % 9;
    if (c < 230) return 1 + pick(300);
    if (c < 240) return -static_cast<int64_t>(1 + u8() % 3);
    static constexpr int64_t kHuge[] = {int64_t{1} << 31, int64_t{1} << 32, int64_t{1} << 33, int64_t{1} << 56,
                                        int64_t{1} << 62, std::numeric_limits<int64_t>::max()};
    return kHuge[pick(std::size(kHuge))];
  }
  /// A shape of rank 0..8 (sometimes 9: invalid).
  Shape shape() {
    Shape s;
    const int rank = chance(4) ? kMaxRank + 1 : static_cast<int>(pick(kMaxRank + 1));
    s.rank = rank;
    for (int d = 0; d < std::min(rank, kMaxRank); ++d) s.dims[d] = extent();
    return s;
  }
  double real() {
    static constexpr double kValues[] = {0.0, 1.0, -1.0, 0.5, 2.0, 1e-30, 1e30, 448.0, -0.0,
                                         std::numeric_limits<double>::infinity(),
                                         std::numeric_limits<double>::quiet_NaN()};
    if (chance(64)) {
      double d;
      const uint64_t b = u64();
      std::memcpy(&d, &b, sizeof d);
      return d;
    }
    return kValues[pick(std::size(kValues))];
  }
  int64_t integer() { return chance(200) ? static_cast<int64_t>(u8() % 300) - 20 : static_cast<int64_t>(u64()); }

 private:
  const uint8_t* p_;
  size_t n_;
  size_t i_ = 0;
};

/// The shapes and kinds a plan's operands are drawn from (the descriptor's, mostly).
struct Pools {
  std::vector<Shape> shapes;
  std::vector<ElementKind> kinds;
};

/// Operand memory per view at most (elements): larger views get no memory and the case stops at
/// can_implement.
inline constexpr int64_t kMaxOperandElements = int64_t{1} << 12;

struct Operands {
  std::vector<Buffer> memory;
  std::vector<DynTensor> t;
  bool runnable = true;
};

/// Elements from the base a view of `shape` with `stride` reaches (Σ (extent − 1)·|stride| + 1), or -1 above
/// kMaxOperandElements (or when it overflows).
inline int64_t reach(const Shape& shape, const std::array<int64_t, kMaxRank>& stride, int64_t* lowest) {
  *lowest = 0;
  int64_t hi = 0;
  for (int d = 0; d < shape.rank; ++d) {
    if (shape.dims[d] <= 0) return 0;
    if (shape.dims[d] > kMaxOperandElements || stride[d] > kMaxOperandElements || stride[d] < -kMaxOperandElements) return -1;
    const int64_t span = (shape.dims[d] - 1) * stride[d];
    (span < 0 ? *lowest : hi) += span;
    if (hi > kMaxOperandElements || *lowest < -kMaxOperandElements) return -1;
  }
  return hi - *lowest + 1;
}

/// `n` operands: each a kind and shape from the pools (or random), a layout (dense, padded, reversed,
/// stride 0, random), real memory when the view is small, and now and then missing, null or aliased.
inline Operands make_operands(FuzzInput& in, const Stream& stream, const Pools& pools, size_t n) {
  Operands ops;
  ops.t.resize(n);
  for (size_t i = 0; i < n; ++i) {
    DynTensor& t = ops.t[i];
    if (in.chance(6)) continue;  // missing: DynTensor{}
    t.kind = pools.kinds.empty() || in.chance(12) ? in.kind() : pools.kinds[in.pick(pools.kinds.size())];
    t.shape = pools.shapes.empty() || in.chance(12) ? in.shape() : pools.shapes[in.pick(pools.shapes.size())];
    if (!t.shape.valid() || static_cast<size_t>(t.kind) >= kNumElementKinds) {
      ops.runnable = false;  // rejected for sure; give it some memory-less data
      static uint8_t dummy[64];
      t.data = dummy;
      continue;
    }
    // Layout: row-major, with the innermost stride stretched, a dimension reversed or broadcast, or random.
    int64_t step = 1;
    for (int d = t.shape.rank - 1; d >= 0; --d) {
      t.stride[d] = step;
      step = step > kMaxOperandElements ? step : step * std::max<int64_t>(t.shape.dims[d], 1);
    }
    const uint8_t layout = in.u8() % 8;
    if (t.shape.rank > 0) {
      const int d = static_cast<int>(in.pick(static_cast<size_t>(t.shape.rank)));
      if (layout == 4) for (int e = 0; e < t.shape.rank; ++e) t.stride[e] *= 2;
      if (layout == 5) t.stride[d] = -t.stride[d];
      if (layout == 6) t.stride[d] = 0;
      if (layout == 7) t.stride[d] = static_cast<int64_t>(in.u8()) - 128;
    }
    if (in.chance(4) && i > 0 && ops.t[i - 1].data != nullptr) {  // in place: the previous operand's view
      t = ops.t[i - 1];
      continue;
    }
    int64_t lowest = 0;
    const int64_t elems = reach(t.shape, t.stride, &lowest);
    if (elems < 0 || in.chance(4)) {  // no memory behind the view: null, or a few bytes
      static uint8_t dummy[64];
      t.data = in.chance(128) ? nullptr : static_cast<void*>(dummy);
      if (elems != 0) ops.runnable = false;
      continue;
    }
    // Whole bytes per element (packed 4-bit kinds get one byte each: more than they need).
    const int64_t elem_bytes = std::max<int64_t>(element_bits(t.kind) / 8, 1);
    const int64_t bytes = (elems + 1) * elem_bytes + 16;
    auto b = Buffer::allocate(stream, static_cast<size_t>(bytes));
    if (!b) std::abort();  // small allocations on host/sim must succeed
    // Contents: a pseudo-random pattern from one fuzz byte (every bit pattern, NaNs included, appears).
    std::vector<uint8_t> fill(static_cast<size_t>(bytes));
    uint64_t state = 0x9E3779B97F4A7C15ull * (in.u8() + 1);
    for (auto& x : fill) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      x = static_cast<uint8_t>(state >> 56);
      if (t.kind == ElementKind::Bool) x &= 1;  // a bool holds 0 or 1 (any other byte is not a bool)
    }
    (void)b->copy_from_host(fill.data(), fill.size());
    // The base sits where the lowest element reached is the buffer's first (sometimes one byte further:
    // misaligned).
    t.data = static_cast<uint8_t*>(b->data()) + (-lowest * elem_bytes + (in.chance(6) ? 1 : 0));
    ops.memory.push_back(std::move(*b));
  }
  return ops;
}

/// Whether a failed run is one of the data checks of src/core/data_checks.hpp: on the host and sim devices a run reads
/// some operands' values (a zero point outside [qmin, qmax], perm not a permutation), which can_implement does not
/// (their messages are that header's: "... holds v at element i, outside [lo, hi] ..." and "... is not a permutation
/// of [0, K) ...").
inline bool data_check_failure(const Status& run) {
  if (run || run.error().code != ErrorCode::InvalidProblem) return false;
  const std::string& m = run.error().message;
  return (m.find(" holds ") != std::string::npos && m.find(" at element ") != std::string::npos &&
          m.find(", outside [") != std::string::npos) ||
         m.find(" is not a permutation of [0, ") != std::string::npos;
}

inline void fail(const char* what, const Status& can, const Status& run) {
  std::fprintf(stderr, "fuzz invariant broken: %s\n  can_implement: %s\n  run: %s\n", what, can.to_string().c_str(),
               run.to_string().c_str());
  std::abort();
}

/// The check every selected plan goes through (see the file comment). `can` and `run` call the plan with
/// the operands in its argument order.
inline void exercise(FuzzInput& in, const Stream& stream, size_t workspace_size, const Pools& pools, size_t n,
                     const std::function<Status(const std::vector<DynTensor>&)>& can,
                     const std::function<Status(const Workspace&, const std::vector<DynTensor>&)>& run) {
  Operands ops = make_operands(in, stream, pools, n);
  const Status c = can(ops.t);
  if (std::getenv("FUZZ_DEBUG"))
    for (const DynTensor& t : ops.t) {
      std::fprintf(stderr, "operand %s rank %d data %p:", std::string(to_string(t.kind)).c_str(), t.shape.rank, t.data);
      for (int d = 0; d < t.shape.rank; ++d) std::fprintf(stderr, " %ld/%ld", (long)t.shape.dims[d], (long)t.stride[d]);
      std::fprintf(stderr, "\n");
    }
  if (!ops.runnable || workspace_size > (size_t{1} << 24)) return;
  size_t ws_bytes = workspace_size;
  if (workspace_size > 0 && in.chance(16)) ws_bytes = in.pick(workspace_size);
  auto ws = Buffer::allocate(stream, ws_bytes);
  if (!ws) std::abort();
  const Status r = run(ws->as_workspace(), ops.t);
  if (!c && r) fail("run succeeded where can_implement failed", c, r);
  if (c && ws_bytes >= workspace_size && !r && !data_check_failure(r))
    fail("run failed where can_implement succeeded", c, r);
  if (r && !stream.synchronize()) fail("synchronize failed", c, r);
}

}  // namespace baracuda::fuzz
