#pragma once
// Large blocks carved from segments of memory taken from the OS. A request takes the smallest
// free block that fits (best fit) and leaves the rest of that block free; a freed block
// merges with its free neighbours in the segment. Memory a step frees then serves the next
// step's requests whatever their sizes and order, so the memory held stays near the step's
// peak of live bytes. (With free lists per size class it held a block per class the step's
// peak needed, and a request served from a larger class kept the whole block: 18% over the
// live peak on BERT-small's bf16 step, 11% now.) Not thread-safe: the allocator holds its lock.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <set>
#include <unordered_map>

namespace heed {

class SegmentPool {
 public:
  // Block sizes, and so block addresses, are multiples of this (a page).
  static constexpr size_t kGranularity = 4096;
  // Segments are multiples of a huge page, aligned to one and advised MADV_HUGEPAGE, which
  // faults in far faster on these machines.
  static constexpr size_t kSegmentAlignment = size_t{2} << 20;

  SegmentPool() = default;
  SegmentPool(const SegmentPool&) = delete;
  SegmentPool& operator=(const SegmentPool&) = delete;
  ~SegmentPool();  // returns every segment to the OS

  // A block of at least `nbytes`; `*new_segment` says whether the pool took memory from the OS.
  void* allocate(size_t nbytes, bool* new_segment);
  // The size of the block handed out at `ptr`, or 0 when `ptr` is not one of this pool's.
  size_t block_size(const void* ptr) const;
  // Returns the block at `ptr` (which must be one of this pool's) and its size.
  size_t free(void* ptr);
  // Returns the segments with nothing handed out to the OS.
  void release_free_segments();

  size_t free_bytes() const { return free_bytes_; }
  size_t segment_bytes() const { return segment_bytes_; }
  uint64_t segments_taken() const { return segments_taken_; }

 private:
  struct Block {
    char* address;
    size_t size;
    bool free;
    Block* previous;  // neighbours in address order within the segment, or null at its ends
    Block* next;
  };
  struct BySizeThenAddress {
    bool operator()(const Block* a, const Block* b) const {
      // std::less orders any two pointers (`<` on blocks of different segments is unspecified).
      return a->size != b->size ? a->size < b->size
                                : std::less<const char*>()(a->address, b->address);
    }
  };

  Block* new_segment(size_t size);
  void insert_free(Block* block);
  void erase_free(Block* block);
  // Extends `block` over its next neighbour; neither is in the free set.
  void join_next(Block* block);

  std::set<Block*, BySizeThenAddress> free_blocks_;
  std::unordered_map<const void*, Block*> used_blocks_;
  size_t free_bytes_ = 0;
  size_t segment_bytes_ = 0;
  uint64_t segments_taken_ = 0;
};

}  // namespace heed
