#include "autograd/allocator.h"

#include <sys/mman.h>

#include <cstdlib>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

namespace heed {
namespace {

constexpr size_t kAlignment = 64;
constexpr size_t kHugePage = size_t{2} << 20;

// Size classes: multiples of 64 bytes up to 4 KiB, then eight classes per power of two
// (at most 12.5% slack), so that a step's varying sizes still find their blocks again.
size_t size_class(size_t nbytes) {
  if (nbytes == 0) nbytes = 1;
  if (nbytes <= 4096) return (nbytes + kAlignment - 1) / kAlignment * kAlignment;
  size_t power = size_t{1} << (63 - __builtin_clzll(nbytes));
  size_t step = power / 8;
  return (nbytes + step - 1) / step * step;
}

struct Cache {
  std::mutex mutex;
  std::unordered_map<size_t, std::vector<void*>> free_lists;
  AllocatorStats stats;
};

Cache& cache() {
  // Never destroyed: tensors with static lifetime may free their blocks after main returns.
  static Cache* instance = new Cache();
  return *instance;
}

void* os_allocate(size_t size) {
  size_t alignment = size >= kHugePage ? kHugePage : kAlignment;
  void* ptr = std::aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment);
  if (ptr == nullptr) throw std::bad_alloc();
  if (size >= kHugePage) madvise(ptr, size, MADV_HUGEPAGE);
  return ptr;
}

}  // namespace

void* allocate_block(size_t nbytes) {
  size_t size = size_class(nbytes);
  Cache& c = cache();
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    auto it = c.free_lists.find(size);
    if (it != c.free_lists.end() && !it->second.empty()) {
      void* ptr = it->second.back();
      it->second.pop_back();
      c.stats.cached_bytes -= size;
      c.stats.allocated_bytes += size;
      c.stats.cache_hits++;
      return ptr;
    }
    c.stats.allocated_bytes += size;
    c.stats.os_allocations++;
  }
  return os_allocate(size);
}

void free_block(void* ptr, size_t nbytes) {
  if (ptr == nullptr) return;
  size_t size = size_class(nbytes);
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.free_lists[size].push_back(ptr);
  c.stats.allocated_bytes -= size;
  c.stats.cached_bytes += size;
}

void empty_cache() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  for (auto& [size, blocks] : c.free_lists) {
    for (void* ptr : blocks) std::free(ptr);
  }
  c.free_lists.clear();
  c.stats.cached_bytes = 0;
}

AllocatorStats allocator_stats() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  return c.stats;
}

}  // namespace heed
