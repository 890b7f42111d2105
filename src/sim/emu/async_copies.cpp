// cp.async's copies in flight (async_copies.hpp).
#include "async_copies.hpp"

#include <cstring>

#include "memcheck.hpp"

namespace baracuda::simt::detail {

void AsyncCopies::begin_block(unsigned nthreads) {
  if (queues_.size() < nthreads) queues_.resize(nthreads);
  for (unsigned t = 0; t < nthreads; ++t) queues_[t].copies.clear(), queues_[t].ends.clear();
}

void AsyncCopies::issue(unsigned tid, void* dst, const void* src, int cp_size, int src_bytes, const void* pc) {
  queues_[tid].copies.push_back(Copy{dst, src, cp_size, src_bytes, pc});
}

void AsyncCopies::commit(unsigned tid) {
  Queue& q = queues_[tid];
  q.ends.push_back(q.copies.size());
}

std::size_t AsyncCopies::land(unsigned tid, int n, MemCheck* m) {
  Queue& q = queues_[tid];
  std::size_t end = q.copies.size(), groups = q.ends.size();  // n < 0: all of them
  if (n >= 0) {
    if (q.ends.size() <= static_cast<std::size_t>(n)) return 0;
    groups = q.ends.size() - static_cast<std::size_t>(n);
    end = q.ends[groups - 1];
  }
  for (std::size_t i = 0; i < end; ++i) {
    const Copy& c = q.copies[i];
    if (m != nullptr) m->access(c.dst, static_cast<std::size_t>(c.cp_size), /*store=*/true, c.pc, true, /*copy=*/-1);
    perform(c.dst, c.src, c.cp_size, c.src_bytes);
  }
  q.copies.erase(q.copies.begin(), q.copies.begin() + static_cast<std::ptrdiff_t>(end));
  q.ends.erase(q.ends.begin(), q.ends.begin() + static_cast<std::ptrdiff_t>(groups));
  for (auto& e : q.ends) e -= end;
  return end;
}

void AsyncCopies::perform(void* dst, const void* src, int cp_size, int src_bytes) {
  const int n = source_bytes(cp_size, src_bytes);
  if (n > 0) std::memcpy(dst, src, static_cast<std::size_t>(n));
  if (n < cp_size) std::memset(static_cast<unsigned char*>(dst) + n, 0, static_cast<std::size_t>(cp_size - n));
}

}  // namespace baracuda::simt::detail
