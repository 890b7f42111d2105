// racecheck's shadow of global memory and the order of atomics (global_race.hpp).
#include "global_race.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace baracuda::simt::detail {

GlobalShadow& GlobalShadow::get() {
  static GlobalShadow* shadow = new GlobalShadow;  // never destroyed: workers may outlive static destruction
  return *shadow;
}

GlobalShadow::GlobalShadow() {
  // Reserved, not committed: a page of slots becomes memory when a granule maps to it.
  const std::size_t bytes = sizeof(GlobalSlot) << kSlotBits;
  void* m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED) {
    std::fprintf(stderr, "baracuda sim: cannot map racecheck's %zu-byte shadow of global memory\n", bytes);
    std::abort();
  }
  slots_ = static_cast<GlobalSlot*>(m);  // zero pages: every slot empty (launch 0)
}

BARACUDA_SIM_HOT GlobalSlot& GlobalShadow::lock(std::uintptr_t granule, std::uint64_t launch) {
  const std::size_t index = granule & ((std::size_t{1} << kSlotBits) - 1);
  std::atomic<bool>& stripe = stripes_[index >> kStripeShift];
  while (stripe.exchange(true, std::memory_order_acquire))
    while (stripe.load(std::memory_order_relaxed)) {
    }
  GlobalSlot& s = slots_[index];
  if (s.granule != granule || (s.write.launch != launch && s.read.launch != launch)) {
    s = GlobalSlot{};
    s.granule = granule;
  }
  return s;
}

BARACUDA_SIM_HOT void GlobalShadow::unlock(std::uintptr_t granule) {
  const std::size_t index = granule & ((std::size_t{1} << kSlotBits) - 1);
  stripes_[index >> kStripeShift].store(false, std::memory_order_release);
}

AtomicSync& AtomicSync::get() {
  static AtomicSync* sync = new AtomicSync;
  return *sync;
}

AtomicSync::Acquired AtomicSync::atomic(std::uint64_t launch, const void* p, std::uint64_t block,
                                        std::uint64_t seq) {
  std::lock_guard<std::mutex> lock(mu_);
  if (launch != launch_) {  // launches run one at a time: the previous one's history is over
    vars_.clear();
    launch_ = launch;
  }
  Var& v = vars_[reinterpret_cast<std::uintptr_t>(p)];
  const Acquired acquired{&v, v.version};  // what came before this atomic
  auto& mine = v.releases[block];
  ++v.version;
  mine.emplace_back(v.version, seq);
  return acquired;
}

std::uint64_t AtomicSync::released(const Acquired& a, std::uint64_t block) {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = a.var->releases.find(block);
  if (it == a.var->releases.end()) return 0;
  const auto& r = it->second;  // the last release at a version <= a.version
  const auto after = std::upper_bound(r.begin(), r.end(), std::make_pair(a.version, ~std::uint64_t{0}));
  return after == r.begin() ? 0 : std::prev(after)->second;
}

}  // namespace baracuda::simt::detail
