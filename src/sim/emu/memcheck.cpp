// initcheck and racecheck (memcheck.hpp), and the load/store hooks that feed them.
#include "memcheck.hpp"

#include <link.h>

#include <algorithm>
#include <cstdio>

#include "scheduler.hpp"

// The sanitizer runtime's symbolizer, when one is linked (AddressSanitizer / UBSan builds).
extern "C" void __sanitizer_symbolize_pc(void* pc, const char* fmt, char* out, std::size_t size)
    __attribute__((weak));
// AddressSanitizer's fake stack frames (detect_stack_use_after_return): locals, not global memory.
extern "C" void* __asan_get_current_fake_stack() __attribute__((weak));
extern "C" void* __asan_addr_is_in_fake_stack(void* fake_stack, void* addr, void** beg, void** end)
    __attribute__((weak));


namespace baracuda::simt::detail {

namespace {
constexpr const char* kUnorderedInBlock = "with no __syncthreads or __syncwarp of both threads between";
}  // namespace

std::string describe_code(const void* pc, bool function) {
  if (pc == nullptr) return "?";
  char buf[512] = {};
  // A return address points after the call: symbolize the byte before it.
  void* at = static_cast<char*>(const_cast<void*>(pc)) - (function ? 0 : 1);
  if (&__sanitizer_symbolize_pc != nullptr) {
    __sanitizer_symbolize_pc(at, function ? "%f" : "%f %L", buf, sizeof buf);
    if (buf[0] != '\0') return buf;
  }
  std::snprintf(buf, sizeof buf, "code address %p", pc);
  return buf;
}

namespace {
// The calling thread's instance of every loaded module's thread-local storage.
int collect_tls(dl_phdr_info* info, std::size_t, void* out) {
  auto* ranges = static_cast<std::vector<std::pair<std::uintptr_t, std::uintptr_t>>*>(out);
  for (int i = 0; i < info->dlpi_phnum; ++i)
    if (info->dlpi_phdr[i].p_type == PT_TLS && info->dlpi_tls_data != nullptr) {
      const auto lo = reinterpret_cast<std::uintptr_t>(info->dlpi_tls_data);
      ranges->emplace_back(lo, lo + info->dlpi_phdr[i].p_memsz);
    }
  return 0;
}
}  // namespace

void MemCheck::begin_block(const LaunchJob& job, Worker& w, BlockExec& exec, unsigned nthreads,
                           std::uint64_t serial, std::uint64_t linear_block) {
  job_ = &job;
  worker_ = &w;
  exec_ = &exec;
  serial_ = serial;
  reported_ = 0;
  init_ = (job.checks & kInitCheck) != 0;
  race_ = (job.checks & kRaceCheck) != 0;
  if (dynamic_.size() < job.smem) dynamic_.resize(job.smem);
  if (static_.size() < w.static_shared.size()) static_.resize(w.static_shared.size());
  if (race_) {
    if (clocks_.size() < nthreads) clocks_.resize(nthreads), clocks_serial_.resize(nthreads, 0);
    acquired_.assign(nthreads, 0);
    seq_ = 0;
    block_ = linear_block;
    acquired_sync_.clear();
    if (!tls_known_) {  // on the worker thread: its own instance
      dl_iterate_phdr(collect_tls, &tls_);
      tls_known_ = true;
    }
  }
}

BARACUDA_SIM_HOT std::array<std::uint32_t, 32>& MemCheck::clocks(std::uint32_t t) {
  if (clocks_serial_[t] != serial_) {
    clocks_serial_[t] = serial_;
    clocks_[t] = {};
    clocks_[t][t % 32] = 1;
  }
  return clocks_[t];
}

void MemCheck::acquire() {
  if (!race_) return;
  const ThreadRec& th = *t_cur.thread;
  acquired_[th.warp * 32u + th.lane] = seq_;
}

void MemCheck::syncwarp(int warp, unsigned mask) {
  if (!race_) return;
  const unsigned base = static_cast<unsigned>(warp) * 32u;
  std::array<std::uint32_t, 32> join{};
  for (unsigned m = mask; m != 0; m &= m - 1) {
    const auto& c = clocks(base + static_cast<unsigned>(__builtin_ctz(m)));
    for (int l = 0; l < 32; ++l) join[l] = join[l] > c[l] ? join[l] : c[l];
  }
  for (unsigned m = mask; m != 0; m &= m - 1) {
    const unsigned l = static_cast<unsigned>(__builtin_ctz(m));
    auto& c = clocks(base + l);
    c = join;
    ++c[l];  // the lane's later accesses come after this __syncwarp
  }
}

BARACUDA_SIM_HOT bool MemCheck::find(const void* p, std::size_t bytes, Region* out) {
  const auto q = reinterpret_cast<std::uintptr_t>(p);
  auto inside = [&](const unsigned char* base, std::size_t size) {
    const auto b = reinterpret_cast<std::uintptr_t>(base);
    return q >= b && q - b < size && bytes <= size - (q - b);
  };
  if (t_cur.dynamic_smem != nullptr && inside(t_cur.dynamic_smem, job_->smem)) {
    *out = Region{t_cur.dynamic_smem, job_->smem, &dynamic_, -1};
    return true;
  }
  const auto& regions = worker_->static_shared;
  if (bounded_ != regions.size()) {  // a variable was registered since: widen the bounds
    for (; bounded_ < regions.size(); ++bounded_) {
      const auto b = reinterpret_cast<std::uintptr_t>(regions[bounded_].first);
      static_lo_ = bounded_ == 0 || b < static_lo_ ? b : static_lo_;
      static_hi_ = b + regions[bounded_].second > static_hi_ ? b + regions[bounded_].second : static_hi_;
    }
  }
  if (q < static_lo_ || q >= static_hi_) return false;  // global memory, a stack: most accesses
  for (std::size_t k = 0; k < regions.size(); ++k) {
    const std::size_t i = (last_static_ + k) % regions.size();
    if (!inside(regions[i].first, regions[i].second)) continue;
    if (static_.size() <= i) static_.resize(regions.size());
    if (static_[i].size() < regions[i].second) static_[i].resize(regions[i].second);
    last_static_ = i;
    *out = Region{regions[i].first, regions[i].second, &static_[i], static_cast<int>(i)};
    return true;
  }
  return false;
}

BARACUDA_SIM_HOT MemCheck::Event MemCheck::current(const void* pc) {
  const ThreadRec& th = *t_cur.thread;
  const std::uint32_t tid = th.warp * 32u + th.lane;
  return Event{serial_, th.bar_passed, race_ ? clocks(tid)[th.lane] : 0u, tid, 0, pc};
}

BARACUDA_SIM_HOT bool MemCheck::ordered_in_block(std::uint32_t tid, std::uint32_t bar, std::uint32_t clock,
                                                  std::uint64_t seq, const ThreadRec& now) {
  const std::uint32_t me = now.warp * 32u + now.lane;
  if (tid == me || bar < now.bar_passed || seq <= acquired_[me]) return true;
  return tid / 32u == now.warp && clocks(me)[tid % 32u] >= clock;
}

BARACUDA_SIM_HOT bool MemCheck::ordered(const Event& earlier, const ThreadRec& now) {
  return earlier.serial != serial_ || ordered_in_block(earlier.tid, earlier.bar, earlier.clock, earlier.seq, now);
}

BARACUDA_SIM_HOT void MemCheck::access(const void* p, std::size_t bytes, bool store, const void* pc, bool init_check,
                                       int copy) {
  Region r;
  if (!find(p, bytes, &r)) {
    if (race_) access_global(p, bytes, store, pc);
    return;
  }
  const std::size_t offset = static_cast<std::size_t>(static_cast<const unsigned char*>(p) - r.base);
  const ThreadRec& th = *t_cur.thread;
  Event now = current(pc);
  now.seq = ++seq_;
  for (std::size_t i = 0; i < bytes; ++i) {
    Shadow& s = (*r.shadow)[offset + i];
    const bool counted = s.inflight_serial == serial_;         // s.inflight counts this block's copies
    if (copy < 0 && counted && s.inflight != 0) --s.inflight;  // a copy lands: its bytes are no longer in flight
    if (counted && s.inflight != 0) in_flight(r, offset, bytes, store, s, pc);
    if (copy > 0 && race_) {  // a copy is issued: in flight until it lands
      s.inflight = counted ? s.inflight + 1 : 1;
      s.inflight_serial = serial_;
      s.inflight_tid = now.tid;
      s.inflight_pc = pc;
    }
    if (store) {
      s.written = serial_;
      if (race_) {
        if (!ordered(s.write, th)) hazard("WAW", r, offset, bytes, s.write, "wrote", pc);
        if (!ordered(s.read, th)) hazard("WAR", r, offset, bytes, s.read, "read", pc);
        s.write = now;
        s.read = Event{};
      }
      continue;
    }
    if (init_ && init_check && s.written != serial_) uninitialized(r, offset, bytes, pc);
    if (race_) {
      if (!ordered(s.write, th)) hazard("RAW", r, offset, bytes, s.write, "wrote", pc);
      s.read = now;
    }
  }
}

BARACUDA_SIM_HOT void MemCheck::note_written(const void* p, std::size_t bytes) {
  Region r;
  if (!find(p, bytes, &r)) return;
  const std::size_t offset = static_cast<std::size_t>(static_cast<const unsigned char*>(p) - r.base);
  for (std::size_t i = 0; i < bytes; ++i) (*r.shadow)[offset + i].written = serial_;
}

// ---- global memory (racecheck) -------------------------------------------------------------------------

BARACUDA_SIM_HOT bool MemCheck::is_global(const void* p) {
  const auto q = reinterpret_cast<std::uintptr_t>(p);
  const Fiber* f = t_cur.thread->fiber;
  if (f != nullptr && q - reinterpret_cast<std::uintptr_t>(f->stack_lo) < f->stack_size)
    return false;  // a local of the running thread
  for (const auto& [lo, hi] : tls_)
    if (q >= lo && q < hi) return false;  // e.g. the emulator's t_cur, a static shared variable's guard
  if (&__asan_get_current_fake_stack != nullptr)
    if (void* fake = __asan_get_current_fake_stack(); fake != nullptr)
      return __asan_addr_is_in_fake_stack(fake, const_cast<void*>(p), nullptr, nullptr) == nullptr;
  return true;
}

BARACUDA_SIM_HOT bool MemCheck::ordered_global(const GlobalEvent& earlier, const ThreadRec& now) {
  if (earlier.launch != job_->generation) return true;
  if (earlier.block == block_) return ordered_in_block(earlier.tid, earlier.bar, earlier.clock, earlier.seq, now);
  for (const auto& a : acquired_sync_)
    if (AtomicSync::get().released(a, earlier.block) >= earlier.seq) return true;
  return false;
}

BARACUDA_SIM_HOT void MemCheck::access_global(const void* p, std::size_t bytes, bool store, const void* pc) {
  if (bytes == 0 || !is_global(p)) return;
  const ThreadRec& th = *t_cur.thread;
  const std::uint32_t tid = th.warp * 32u + th.lane;
  const GlobalEvent now{job_->generation, block_, ++seq_, pc, tid, th.bar_passed, clocks(tid)[th.lane]};
  const auto first = reinterpret_cast<std::uintptr_t>(p), last = first + bytes - 1;
  GlobalShadow& shadow = GlobalShadow::get();
  for (std::uintptr_t g = first >> GlobalShadow::kGranuleShift; g <= last >> GlobalShadow::kGranuleShift; ++g) {
    const std::uintptr_t base = g << GlobalShadow::kGranuleShift;
    const unsigned lo = static_cast<unsigned>(std::max(first, base) - base);
    const unsigned hi = static_cast<unsigned>(std::min(last, base + 7) - base);
    const auto mask = static_cast<std::uint8_t>((0xffu >> (7 - hi)) & (0xffu << lo));
    const char* kind = nullptr;  // a hazard, reported once the slot is unlocked
    GlobalEvent other;
    GlobalSlot& s = shadow.lock(g, now.launch);
    if ((s.write_bytes & mask) != 0 && !ordered_global(s.write, th)) kind = store ? "WAW" : "RAW", other = s.write;
    if (store && kind == nullptr && (s.read_bytes & mask) != 0 && !ordered_global(s.read, th))
      kind = "WAR", other = s.read;
    if (store) {
      s.write = now;
      s.write_bytes = mask;  // the bytes of an older write outside `mask` are forgotten (never a false report)
      s.read_bytes &= static_cast<std::uint8_t>(~mask);
    } else {
      s.read = now;
      s.read_bytes = mask;
    }
    shadow.unlock(g);
    if (kind != nullptr) global_hazard(kind, p, bytes, other, kind[2] == 'R' ? "read" : "wrote", pc);
  }
}

void MemCheck::atomic(const void* p) {
  if (!race_) return;
  Region r;
  if (find(p, 1, &r) || !is_global(p)) return;  // atomics on shared memory order nothing (file comment)
  const ThreadRec& th = *t_cur.thread;
  AtomicSync& sync = AtomicSync::get();
  const AtomicSync::Acquired a = sync.atomic(job_->generation, p, block_, seq_);
  std::uint64_t& mine = acquired_[th.warp * 32u + th.lane];
  mine = std::max(mine, sync.released(a, block_));  // the block's own earlier releases on p
  for (auto& e : acquired_sync_)
    if (e.var == a.var) {
      e.version = a.version;  // versions only grow: the latest acquire covers the earlier ones
      return;
    }
  acquired_sync_.push_back(a);
}

std::string MemCheck::thread_in(std::uint64_t block, std::uint32_t tid) const {
  if (block == block_) return thread(tid);
  const dim3 g = job_->grid, b = job_->block;
  char buf[160];
  std::snprintf(buf, sizeof buf, "block (%u,%u,%u) thread (%u,%u,%u) (linear %u, warp %u lane %u)",
                static_cast<unsigned>(block % g.x), static_cast<unsigned>(block / g.x % g.y),
                static_cast<unsigned>(block / g.x / g.y), tid % b.x, tid / b.x % b.y, tid / b.x / b.y, tid, tid / 32,
                tid % 32);
  return buf;
}

void MemCheck::global_hazard(const char* kind, const void* p, std::size_t bytes, const GlobalEvent& other,
                             const char* other_did, const void* pc) {
  const char* key = claim_hazard(kind, /*global=*/true);
  if (key == nullptr) return;
  char at[48];
  std::snprintf(at, sizeof at, "global memory at %p", p);
  report_hazard(key, kind, at, bytes, pc, thread_in(other.block, other.tid), other_did, other.pc,
                other.block == block_ ? kUnorderedInBlock
                                      : "in another block of the launch, with no atomic operation on global memory "
                                        "between (blocks are not ordered)");
}

std::string MemCheck::where(const Region& r, std::size_t offset) const {
  char buf[96];
  if (r.index < 0)
    std::snprintf(buf, sizeof buf, "dynamic shared memory + %zu", offset);
  else
    std::snprintf(buf, sizeof buf, "static shared variable #%d (%zu bytes) + %zu", r.index, r.bytes, offset);
  return buf;
}

std::string MemCheck::thread(std::uint32_t tid) const { return exec_->thread_label(tid); }

void MemCheck::hazard(const char* kind, const Region& r, std::size_t offset, std::size_t bytes, const Event& other,
                      const char* other_did, const void* pc) {
  if (const char* key = claim_hazard(kind, /*global=*/false))
    report_hazard(key, kind, where(r, offset), bytes, pc, thread(other.tid), other_did, other.pc, kUnorderedInBlock);
}

const char* MemCheck::claim_hazard(const char* kind, bool global) {
  static constexpr const char* kKeys[2][3] = {{"RAW", "WAR", "WAW"}, {"global RAW", "global WAR", "global WAW"}};
  const unsigned k = kind[0] == 'R' ? 0u : kind[2] == 'R' ? 1u : 2u;  // RAW, WAR, WAW
  const unsigned bit = (global ? 16u : 1u) << k;
  if ((reported_ & bit) != 0) return nullptr;
  reported_ |= bit;
  return kKeys[global ? 1 : 0][k];
}

void MemCheck::report_hazard(const char* key, const char* kind, const std::string& location, std::size_t bytes,
                             const void* pc, const std::string& other, const char* other_did, const void* other_pc,
                             const char* unordered) {
  const ThreadRec& th = *t_cur.thread;
  exec_->memcheck_report(key, std::string("racecheck: ") + kind + " hazard on " + location + ": " +
                                  thread(th.warp * 32u + th.lane) + " " + (kind[0] == 'R' ? "reads " : "writes ") +
                                  std::to_string(bytes) + " bytes (" + describe_code(pc) + "); " + other + " " +
                                  other_did + " it (" + describe_code(other_pc) + ") " + unordered);
}

void MemCheck::in_flight(const Region& r, std::size_t offset, std::size_t bytes, bool store, const Shadow& s,
                         const void* pc) {
  if ((reported_ & 128u) != 0) return;
  reported_ |= 128u;
  const ThreadRec& th = *t_cur.thread;
  exec_->memcheck_report("in flight", "racecheck: cp.async in flight: " + thread(th.warp * 32u + th.lane) +
                                          (store ? " writes " : " reads ") + std::to_string(bytes) + " bytes of " +
                                          where(r, offset) + " (" + describe_code(pc) + ") that a cp.async of " +
                                          thread(s.inflight_tid) + " (" + describe_code(s.inflight_pc) +
                                          ") is still writing: no cp.async.wait_group of that thread retired it");
}

void MemCheck::uninitialized(const Region& r, std::size_t offset, std::size_t bytes, const void* pc) {
  if ((reported_ & 8u) != 0) return;
  reported_ |= 8u;
  const ThreadRec& th = *t_cur.thread;
  exec_->memcheck_report("init", "initcheck: " + thread(th.warp * 32u + th.lane) + " reads " +
                                     std::to_string(bytes) + " bytes of " + where(r, offset) +
                                     " that no thread of the block has written (" + describe_code(pc) + ")");
}

}  // namespace baracuda::simt::detail

// ---------------------------------------------------------------------------------------------------------
// The hooks of clang's load/store instrumentation (-fsanitize-coverage=trace-loads,trace-stores): called
// before every load and store of the instrumented code, in and out of kernels.
// ---------------------------------------------------------------------------------------------------------

#define BARACUDA_SIM_ACCESS_HOOK(kind, bytes, store)                                                 \
  extern "C" BARACUDA_SIM_HOT void __sanitizer_cov_##kind##bytes(void* p) {                                           \
    using ::baracuda::simt::detail::t_cur;                                                            \
    if (t_cur.memcheck != nullptr) t_cur.memcheck->access(p, bytes, store, __builtin_return_address(0)); \
  }
BARACUDA_SIM_ACCESS_HOOK(load, 1, false)
BARACUDA_SIM_ACCESS_HOOK(load, 2, false)
BARACUDA_SIM_ACCESS_HOOK(load, 4, false)
BARACUDA_SIM_ACCESS_HOOK(load, 8, false)
BARACUDA_SIM_ACCESS_HOOK(load, 16, false)
BARACUDA_SIM_ACCESS_HOOK(store, 1, true)
BARACUDA_SIM_ACCESS_HOOK(store, 2, true)
BARACUDA_SIM_ACCESS_HOOK(store, 4, true)
BARACUDA_SIM_ACCESS_HOOK(store, 8, true)
BARACUDA_SIM_ACCESS_HOOK(store, 16, true)
#undef BARACUDA_SIM_ACCESS_HOOK
