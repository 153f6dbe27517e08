#include "autograd/allocator.h"

#include <cstdlib>
#include <map>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

#include "autograd/segment_pool.h"
#include "base/error.h"

namespace heed {
namespace {

constexpr size_t kAlignment = 64;
// Requests of this size and more go to the segment pool, which splits and merges blocks; the
// smaller ones, a small share of a step's memory, to free lists by size class.
constexpr size_t kLargeRequest = size_t{1} << 20;

// Size classes for small requests: multiples of 64 bytes up to 4 KiB, then eight classes per
// power of two (at most 12.5% slack), so that a step's varying sizes find their blocks again.
size_t size_class(size_t nbytes) {
  if (nbytes == 0) nbytes = 1;
  if (nbytes <= 4096) return (nbytes + kAlignment - 1) / kAlignment * kAlignment;
  size_t power = size_t{1} << (63 - __builtin_clzll(nbytes));
  size_t step = power / 8;
  return (nbytes + step - 1) / step * step;
}

// A small request whose class has no free block takes the smallest free block of a larger
// class up to this many times its size. Batches grouped by length come in many sequence
// lengths; with exact classes alone, the cache kept a step's worth of blocks for every length
// it had seen (10 GB of RSS fine-tuning a 5M-parameter BERT on 512-token mail).
constexpr size_t kMaxReuseRatio = 2;

struct Cache {
  std::mutex mutex;
  std::map<size_t, std::vector<void*>> free_lists;  // class size -> blocks, never empty
  std::unordered_map<void*, size_t> block_sizes;    // each block handed out -> its class size
  SegmentPool large;
  AllocatorStats stats;  // the small blocks' bytes; requests of both kinds counted
};

// The smallest cached block of at least `size` and at most kMaxReuseRatio times it, taken off
// its free list; null if there is none. Holds the lock.
void* take_cached(Cache& c, size_t size, size_t& block_size) {
  auto it = c.free_lists.lower_bound(size);
  if (it == c.free_lists.end() || it->first > size * kMaxReuseRatio) return nullptr;
  void* ptr = it->second.back();
  block_size = it->first;
  it->second.pop_back();
  if (it->second.empty()) c.free_lists.erase(it);
  return ptr;
}

Cache& cache() {
  // Never destroyed: tensors with static lifetime may free their blocks after main returns.
  static Cache* instance = new Cache();
  return *instance;
}

void* os_allocate(size_t size) {
  void* ptr = std::aligned_alloc(kAlignment, size);
  if (ptr == nullptr) throw std::bad_alloc();
  return ptr;
}

void* allocate_large(Cache& c, size_t nbytes) {
  std::lock_guard<std::mutex> lock(c.mutex);
  bool new_segment = false;
  void* ptr = c.large.allocate(nbytes, &new_segment);
  (new_segment ? c.stats.os_allocations : c.stats.cache_hits)++;
  return ptr;
}

}  // namespace

void* allocate_block(size_t nbytes) {
  Cache& c = cache();
  if (nbytes >= kLargeRequest) return allocate_large(c, nbytes);
  const size_t size = size_class(nbytes);
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    size_t block_size = 0;
    if (void* ptr = take_cached(c, size, block_size)) {
      c.block_sizes.emplace(ptr, block_size);
      c.stats.cached_bytes -= block_size;
      c.stats.allocated_bytes += block_size;
      c.stats.cache_hits++;
      return ptr;
    }
  }
  void* ptr = os_allocate(size);
  std::lock_guard<std::mutex> lock(c.mutex);
  c.block_sizes.emplace(ptr, size);
  c.stats.allocated_bytes += size;
  c.stats.os_allocations++;
  return ptr;
}

void free_block(void* ptr, size_t nbytes) {
  if (ptr == nullptr) return;
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  if (nbytes >= kLargeRequest) {
    HEED_CHECK(c.large.block_size(ptr) >= nbytes,
               "free_block: no block of {} bytes was allocated at {}", nbytes, ptr);
    c.large.free(ptr);
    return;
  }
  auto it = c.block_sizes.find(ptr);
  HEED_CHECK(it != c.block_sizes.end() && it->second >= size_class(nbytes),
             "free_block: no block of {} bytes was allocated at {}", nbytes, ptr);
  const size_t size = it->second;
  c.block_sizes.erase(it);
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
  c.large.release_free_segments();
}

AllocatorStats allocator_stats() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  AllocatorStats stats = c.stats;
  stats.allocated_bytes += c.large.segment_bytes() - c.large.free_bytes();
  stats.cached_bytes += c.large.free_bytes();
  return stats;
}

}  // namespace heed
