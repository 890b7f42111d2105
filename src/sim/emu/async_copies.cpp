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
    if (m != nullptr) m->copy_landed(c.dst, static_cast<std::size_t>(c.cp_size), c.pc);
    const int k = c.src_bytes < 0 ? 0 : (c.src_bytes > c.cp_size ? c.cp_size : c.src_bytes);
    if (k > 0) std::memcpy(c.dst, c.src, static_cast<std::size_t>(k));
    if (k < c.cp_size) std::memset(static_cast<unsigned char*>(c.dst) + k, 0, static_cast<std::size_t>(c.cp_size - k));
  }
  q.copies.erase(q.copies.begin(), q.copies.begin() + static_cast<std::ptrdiff_t>(end));
  q.ends.erase(q.ends.begin(), q.ends.begin() + static_cast<std::ptrdiff_t>(groups));
  for (auto& e : q.ends) e -= end;
  return end;
}

}  // namespace baracuda::simt::detail
