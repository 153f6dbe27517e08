#pragma once
// A caching allocator for tensor memory. Touching freshly mapped pages is expensive on
// these machines (~10 us a page), so blocks a step frees are kept and the next step reuses
// them instead of returning them to the OS. Requests of 1 MiB and more, nearly all of a
// step's memory, are carved from segments that split and merge (autograd/segment_pool.h);
// smaller ones go onto free lists by size class, and a request with no free block of its
// class takes one of a larger class, up to twice its size.
#include <cstddef>
#include <cstdint>

namespace heed {

struct AllocatorStats {
  size_t allocated_bytes = 0;  // handed out and not yet freed
  size_t cached_bytes = 0;     // held for reuse: free blocks and the free parts of segments
  uint64_t os_allocations = 0;
  uint64_t cache_hits = 0;
};

// Every block is at least 64-byte aligned (a cache line, and an AVX-512 vector).
void* allocate_block(size_t nbytes);
void free_block(void* ptr, size_t nbytes);  // nbytes: what allocate_block was asked for
// Returns to the OS every cached small block and every segment with nothing handed out (a
// segment's free parts stay while any of its blocks is in use).
void empty_cache();
AllocatorStats allocator_stats();

}  // namespace heed
